/* Custom power-mode points in sweep files (jf_sweep_power.h, docs/sweeps.md "Custom power
 * modes"): parsing with file:line:col errors, and the check against a board type's custom-mode
 * space (jetson-platforms.md §6, as jf_board_clocks.h holds it). */
#include "jf_sweep_power.h"

#include "jf_board_clocks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const s_entry_keys[] = {"custom"};
static const char *const s_custom_keys[] = {"cores", "cpu_freq", "gpu_freq", "emc_freq", "base"};

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

// An optional frequency key: its value in Hz, or 0 when absent.
static int s_freq(const jf_yaml_node_t *map, const char *key, const jf_yaml_node_t **ret_node,
                  int64_t *ret_hz, jf_err_t *err)
{
    *ret_node = jf_yaml_node_get(map, key);
    *ret_hz = 0;
    return *ret_node ? jf_yaml_node_to_freq_hz(*ret_node, 1000, JF_RUN_CLOCK_MAX_HZ, ret_hz, err)
                     : 0;
}

int jf_sweep_custom_parse(const jf_yaml_node_t *entry, jf_sweep_custom_t *ret, jf_err_t *err)
{
    jf_sweep_custom_t c = {.node = entry};
    const jf_yaml_node_t *map = NULL;
    int rc = jf_yaml_check_keys(entry, s_entry_keys, S_COUNT(s_entry_keys), "a power_modes entry",
                                err);
    rc = rc ? rc : jf_yaml_node_require(entry, "custom", "a power_modes entry", &map, err);
    rc = rc ? rc : jf_yaml_node_expect(map, JF_YAML_MAPPING, err);
    rc = rc ? rc : jf_yaml_check_keys(map, s_custom_keys, S_COUNT(s_custom_keys), "custom", err);
    rc = rc ? rc : jf_yaml_node_require(map, "cores", "custom", &c.cores_node, err);
    rc = rc ? rc : jf_yaml_node_to_int(c.cores_node, 1, JF_RUN_CORES_MAX, &c.point.n_cores, err);
    rc = rc ? rc : jf_yaml_node_require(map, "cpu_freq", "custom", &c.cpu_node, err);
    rc = rc ? rc
            : jf_yaml_node_to_freq_hz(c.cpu_node, 1000, JF_RUN_CLOCK_MAX_HZ, &c.point.cpu_hz,
                                      err);
    if (rc == 0 && c.point.cpu_hz % 1000 != 0) {
        return jf_yaml_error(err, -EINVAL, c.cpu_node,
                             "cpu_freq must be whole kHz (cpufreq's unit), got %lld Hz",
                             (long long) c.point.cpu_hz);
    }
    rc = rc ? rc : s_freq(map, "gpu_freq", &c.gpu_node, &c.point.gpu_hz, err);
    rc = rc ? rc : s_freq(map, "emc_freq", &c.emc_node, &c.point.emc_hz, err);
    c.base_node = rc ? NULL : jf_yaml_node_get(map, "base");
    if (c.base_node) {
        rc = jf_yaml_node_to_str(c.base_node, c.base, sizeof c.base, err);
    }
    if (rc == 0) {
        *ret = c;
    }
    return rc;
}

const jf_power_mode_t *jf_sweep_custom_base(const jf_sweep_custom_t *c,
                                            const jf_board_spec_t *board)
{
    if (c->base[0]) {
        return jf_board_spec_mode(board, c->base);
    }
    const jf_board_family_t *f = jf_board_family(board->simulates);
    for (size_t i = 0; f && i < board->n_modes; i++) {
        if (board->modes[i].id == f->default_mode_id) {
            return &board->modes[i];
        }
    }
    return NULL;
}

static int s_check_step(const jf_yaml_node_t *node, const char *what, int64_t hz,
                        const int64_t *steps, size_t n, const jf_board_spec_t *board,
                        jf_err_t *err)
{
    if (hz == 0 || jf_board_clocks_has_step(steps, n, hz)) {
        return 0;
    }
    return jf_yaml_error(err, -EINVAL, node,
                         "%s %lld Hz is not a step of board '%s' (%s): its steps run from %lld "
                         "to %lld Hz (jetson-platforms.md §6)",
                         what, (long long) hz, board->name, jf_board_type_name(board->simulates),
                         (long long) steps[0], (long long) steps[n - 1]);
}

int jf_sweep_custom_check(const jf_sweep_custom_t *c, const jf_board_spec_t *board,
                          jf_err_t *err)
{
    const char *type = jf_board_type_name(board->simulates);
    const jf_board_clocks_t *t = jf_board_clocks(board->simulates);
    if (!t) {
        return jf_yaml_error(err, -EINVAL, c->node,
                             "board '%s' (%s) has no custom power modes: they need a Jetson",
                             board->name, type);
    }
    if (c->point.n_cores > t->n_cpus) {
        return jf_yaml_error(err, -EINVAL, c->cores_node,
                             "cores %d: board '%s' (%s) has %d cores", c->point.n_cores,
                             board->name, type, t->n_cpus);
    }
    int rc = s_check_step(c->cpu_node, "cpu_freq", c->point.cpu_hz, t->cpu_steps_hz,
                          t->n_cpu_steps, board, err);
    rc = rc ? rc
            : s_check_step(c->gpu_node, "gpu_freq", c->point.gpu_hz, t->gpu_steps_hz,
                           t->n_gpu_steps, board, err);
    rc = rc ? rc
            : s_check_step(c->emc_node, "emc_freq", c->point.emc_hz, t->emc_steps_hz,
                           t->n_emc_steps, board, err);
    if (rc == 0 && !jf_sweep_custom_base(c, board)) {
        return jf_yaml_error(err, -EINVAL, c->base_node ? c->base_node : c->node,
                             "board '%s' (%s) has no power mode '%s' to apply the custom point "
                             "on",
                             board->name, type, c->base[0] ? c->base : "(its default)");
    }
    return rc;
}

bool jf_sweep_custom_same(const jf_sweep_custom_t *a, const jf_sweep_custom_t *b)
{
    const jf_run_custom_t *p = &a->point, *q = &b->point;
    return p->n_cores == q->n_cores && p->cpu_hz == q->cpu_hz && p->gpu_hz == q->gpu_hz &&
           p->emc_hz == q->emc_hz && strcmp(a->base, b->base) == 0;
}
