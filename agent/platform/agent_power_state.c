/* The power state in force, read from sysfs without privileges (jetson-platforms.md §7: cpufreq
 * and devfreq files are world-readable), the checks that a mode, a custom mode or a restored
 * state holds, and the JSON record. Frequencies are converted to Hz here, at the boundary. */
#include "agent_power_internal.h"

#include "jf_board_clocks.h"
#include "privhelper_request.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define S_KHZ INT64_C(1000)

int agent_power_read_table(const agent_power_t *self, int cpu, int64_t *hz, size_t max,
                           size_t *ret_n, jf_err_t *err)
{
    char rel[PRIVHELPER_PATH_MAX];
    int64_t unit = cpu >= 0 ? S_KHZ : 1; // cpufreq is in kHz, devfreq in Hz (§2.0)
    int rc = cpu >= 0 ? privhelper_paths_cpu(rel, "", cpu, PRIVHELPER_CPU_TABLE_KHZ)
             : self->gpu_dir[0]
                 ? privhelper_paths_devfreq(rel, "", self->gpu_dir, PRIVHELPER_DEVFREQ_TABLE_HZ)
                 : jf_err_set(err, -ENOENT, "power: the board has no GPU devfreq node");
    rc = rc != 0 ? rc : privhelper_root_read_list(self->sysfs, rel, hz, max, ret_n, err);
    for (size_t i = 0; rc == 0 && i < *ret_n; i++) {
        hz[i] *= unit;
    }
    return rc;
}

bool agent_power_in_table(const int64_t *table, size_t n, int64_t hz)
{
    for (size_t i = 0; i < n; i++) {
        if (table[i] == hz) {
            return true;
        }
    }
    return false;
}

int agent_power_read_tables(const agent_power_t *self, agent_power_tables_t *ret_tables,
                            jf_err_t *err)
{
    agent_power_tables_t t = {0};
    agent_power_state_t st;
    int rc = agent_power_read_state(self, &st, err);
    rc = rc ? rc
            : agent_power_read_table(self, 0, t.cpu_steps_hz, AGENT_POWER_STEPS_MAX,
                                     &t.n_cpu_steps, err);
    if (rc == 0 && self->gpu_dir[0]) {
        rc = agent_power_read_table(self, -1, t.gpu_steps_hz, AGENT_POWER_STEPS_MAX,
                                    &t.n_gpu_steps, err);
    }
    if (rc == 0) {
        t.n_cpus = st.n_cpus;
        *ret_tables = t;
    }
    return rc;
}

static int s_check_step(const char *what, int64_t hz, const int64_t *steps, size_t n,
                        const char *table, jf_err_t *err)
{
    if (hz == 0 || agent_power_in_table(steps, n, hz)) {
        return 0;
    }
    if (n == 0) {
        return jf_err_set(err, -EINVAL, "custom %s %lld Hz: this board has no %s", what,
                          (long long) hz, table);
    }
    return jf_err_set(err, -EINVAL, "custom %s %lld Hz is not a step of this board's %s (%lld .. "
                      "%lld Hz)", what, (long long) hz, table, (long long) steps[0],
                      (long long) steps[n - 1]);
}

int agent_power_tables_check(const agent_power_tables_t *t, jf_board_type_t type,
                             const agent_power_custom_t *c, jf_err_t *err)
{
    const jf_board_clocks_t *family = jf_board_clocks(type);
    if (c->n_cores < 1 || c->n_cores > t->n_cpus) {
        return jf_err_set(err, -EINVAL, "custom point asks for %d cores; this board has %d",
                          c->n_cores, t->n_cpus);
    }
    if (c->cpu_hz <= 0) {
        return jf_err_set(err, -EINVAL, "custom point has no CPU clock");
    }
    int rc = s_check_step("cpu_hz", c->cpu_hz, t->cpu_steps_hz, t->n_cpu_steps,
                          "CPU table (scaling_available_frequencies)", err);
    rc = rc ? rc
            : s_check_step("gpu_hz", c->gpu_hz, t->gpu_steps_hz, t->n_gpu_steps,
                           "GPU table (devfreq available_frequencies)", err);
    if (rc == 0 && t->n_emc_steps > 0) {
        rc = s_check_step("emc_hz", c->emc_hz, t->emc_steps_hz, t->n_emc_steps,
                          "EMC steps (its family's, up to its cap)", err);
    } else if (rc == 0) {
        rc = s_check_step("emc_hz", c->emc_hz, family ? family->emc_steps_hz : NULL,
                          family ? family->n_emc_steps : 0, "EMC steps (jetson-platforms.md §6)",
                          err);
    }
    return rc;
}

static int s_read_khz(const agent_power_t *self, int cpu, privhelper_cpu_file_t f, int64_t *ret,
                      jf_err_t *err)
{
    char rel[PRIVHELPER_PATH_MAX];
    int64_t khz = 0;
    int rc = privhelper_paths_cpu(rel, "", cpu, f);
    rc = rc != 0 ? rc : privhelper_root_read_i64(self->sysfs, rel, &khz, err);
    *ret = khz * S_KHZ;
    return rc;
}

// Adds cpu's policy to st if cpu is its first core.
static int s_read_cluster(const agent_power_t *self, int cpu, agent_power_state_t *st,
                          jf_err_t *err)
{
    char rel[PRIVHELPER_PATH_MAX];
    int64_t cpus[AGENT_POWER_TABLE_MAX];
    size_t n = 0;
    int rc = privhelper_paths_cpu(rel, "", cpu, PRIVHELPER_CPU_RELATED);
    if (rc != 0 || !privhelper_root_is_file(self->sysfs, rel)) {
        return 0; // no cpufreq on this core
    }
    rc = privhelper_root_read_list(self->sysfs, rel, cpus, AGENT_POWER_TABLE_MAX, &n, err);
    if (rc != 0 || n == 0 || cpus[0] != cpu || st->n_clusters == AGENT_POWER_CLUSTERS_MAX) {
        return rc;
    }
    agent_power_cluster_t *c = &st->clusters[st->n_clusters];
    c->first_core = cpu;
    rc = s_read_khz(self, cpu, PRIVHELPER_CPU_MIN_KHZ, &c->min_hz, err);
    rc = rc != 0 ? rc : s_read_khz(self, cpu, PRIVHELPER_CPU_MAX_KHZ, &c->max_hz, err);
    st->n_clusters += rc == 0;
    return rc;
}

static int s_read_cpus(const agent_power_t *self, agent_power_state_t *st, jf_err_t *err)
{
    for (int cpu = 0; cpu < PRIVHELPER_CPUS_MAX; cpu++) {
        char rel[PRIVHELPER_PATH_MAX];
        int64_t online = 1; // cpu0 without an online file cannot go offline
        int rc = privhelper_paths_cpu(rel, "", cpu, PRIVHELPER_CPU_ONLINE_FILE);
        bool has = rc == 0 && privhelper_root_is_file(self->sysfs, rel);
        if (!has && cpu != 0) {
            continue;
        }
        rc = has ? privhelper_root_read_i64(self->sysfs, rel, &online, err) : 0;
        if (rc != 0) {
            return rc;
        }
        st->n_cpus++;
        if (online == 1) {
            st->online_mask |= UINT64_C(1) << cpu;
            rc = s_read_cluster(self, cpu, st, err);
        }
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int s_read_devices(const agent_power_t *self, agent_power_state_t *st, jf_err_t *err)
{
    char a[PRIVHELPER_PATH_MAX], b[PRIVHELPER_PATH_MAX];
    int rc = 0;
    if (self->gpu_dir[0]) {
        rc = privhelper_paths_devfreq(a, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MIN_HZ);
        rc = rc != 0 ? rc
                     : privhelper_paths_devfreq(b, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MAX_HZ);
        rc = rc != 0 ? rc : privhelper_root_read_i64(self->sysfs, a, &st->gpu_min_hz, err);
        rc = rc != 0 ? rc : privhelper_root_read_i64(self->sysfs, b, &st->gpu_max_hz, err);
        st->has_gpu = rc == 0;
    }
    // The cap is root-only on some boards (§7): then it is absent, never guessed.
    if (rc == 0 && self->emc_cap[0]) {
        st->has_emc_cap =
            privhelper_root_read_i64(self->sysfs, self->emc_cap, &st->emc_cap_hz, NULL) == 0;
    }
    return rc;
}

int agent_power_read_state(const agent_power_t *self, agent_power_state_t *ret_state, jf_err_t *err)
{
    agent_power_state_t st = {.mode_id = self->mode_id};
    (void) snprintf(st.mode_name, sizeof st.mode_name, "%s", self->mode_name);
    int rc = s_read_cpus(self, &st, err);
    rc = rc != 0 ? rc : s_read_devices(self, &st, err);
    if (rc != 0) {
        return rc;
    }
    st.dvfs_off = st.n_clusters > 0 && (!st.has_gpu || st.gpu_min_hz == st.gpu_max_hz);
    for (size_t i = 0; i < st.n_clusters; i++) {
        st.dvfs_off &= st.clusters[i].min_hz == st.clusters[i].max_hz;
    }
    *ret_state = st;
    return 0;
}

// Whether a conf limit holds in a value read back. The kernel clamps a limit into the table
// (-1, INT_MAX, reads as the top or above it; 0 as the bottom or below it) and rounds a value
// between two steps to one of them; which one is not documented (§4.4, §8 #21), so both pass.
static bool s_limit_holds(int64_t conf_hz, const int64_t *table, size_t n, int64_t got)
{
    if (conf_hz == AGENT_NVPMODEL_UNSET) {
        return true;
    }
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = table[i] < lo ? table[i] : lo;
        hi = table[i] > hi ? table[i] : hi;
    }
    if (n == 0) {
        return conf_hz == AGENT_NVPMODEL_NO_LIMIT || got == conf_hz;
    }
    if (conf_hz == AGENT_NVPMODEL_NO_LIMIT || conf_hz >= hi) {
        return got >= hi;
    }
    if (conf_hz <= lo) {
        return got <= lo;
    }
    int64_t below = lo, above = hi;
    for (size_t i = 0; i < n; i++) {
        below = table[i] <= conf_hz && table[i] > below ? table[i] : below;
        above = table[i] >= conf_hz && table[i] < above ? table[i] : above;
    }
    return got == conf_hz || got == below || got == above;
}

static int s_verify_clock(const agent_power_t *self, const agent_nvpmodel_mode_t *mode, int cpu,
                          int64_t min_hz, int64_t max_hz, jf_err_t *err)
{
    agent_nvpmodel_clock_kind_t kind =
        cpu >= 0 ? AGENT_NVPMODEL_CLOCK_CPU : AGENT_NVPMODEL_CLOCK_GPU;
    const agent_nvpmodel_clock_t *c = agent_nvpmodel_mode_clock(mode, kind, cpu);
    int64_t table[AGENT_POWER_TABLE_MAX];
    size_t n = 0;
    if (!c) {
        return 0;
    }
    int rc = agent_power_read_table(self, cpu, table, AGENT_POWER_TABLE_MAX, &n, err);
    if (rc != 0) {
        return rc;
    }
    if (!s_limit_holds(c->min_hz, table, n, min_hz) ||
        !s_limit_holds(c->max_hz, table, n, max_hz)) {
        char what[16] = "the GPU";
        if (cpu >= 0) {
            (void) snprintf(what, sizeof what, "cpu%d", cpu);
        }
        return jf_err_set(err, -EIO,
                          "power: mode %d (%s): %s is at %" PRId64 "-%" PRId64
                          " Hz, the conf sets %" PRId64 "..%" PRId64 " Hz (-1: no limit)",
                          mode->id, mode->name, what, min_hz, max_hz, c->min_hz, c->max_hz);
    }
    return 0;
}

int agent_power_verify_mode(const agent_power_t *self, const agent_nvpmodel_mode_t *mode,
                            const agent_power_state_t *st, jf_err_t *err)
{
    for (int cpu = 0; cpu < st->n_cpus; cpu++) {
        uint64_t bit = UINT64_C(1) << cpu;
        if ((mode->listed_mask & bit) && (mode->online_mask & bit) != (st->online_mask & bit)) {
            return jf_err_set(err, -EIO, "power: mode %d (%s): cpu%d is %s, the conf sets it %s",
                              mode->id, mode->name, cpu,
                              st->online_mask & bit ? "online" : "offline",
                              mode->online_mask & bit ? "online" : "offline");
        }
    }
    for (size_t i = 0; i < st->n_clusters; i++) {
        const agent_power_cluster_t *c = &st->clusters[i];
        int rc = s_verify_clock(self, mode, c->first_core, c->min_hz, c->max_hz, err);
        if (rc != 0) {
            return rc;
        }
    }
    return st->has_gpu ? s_verify_clock(self, mode, -1, st->gpu_min_hz, st->gpu_max_hz, err) : 0;
}

int agent_power_verify_custom(const agent_power_custom_t *custom, const agent_power_state_t *st,
                              jf_err_t *err)
{
    uint64_t want = (UINT64_C(1) << custom->n_cores) - 1;
    if (st->online_mask != want) {
        return jf_err_set(err, -EIO,
                          "power: custom mode: online cores are 0x%" PRIx64 ", expected 0x%" PRIx64,
                          st->online_mask, want);
    }
    for (size_t i = 0; i < st->n_clusters; i++) {
        const agent_power_cluster_t *c = &st->clusters[i];
        if (c->min_hz != custom->cpu_hz || c->max_hz != custom->cpu_hz) {
            return jf_err_set(err, -EIO,
                              "power: custom mode: cpu%d is at %" PRId64 "-%" PRId64
                              " Hz, expected %" PRId64 " Hz",
                              c->first_core, c->min_hz, c->max_hz, custom->cpu_hz);
        }
    }
    bool gpu_ok = custom->gpu_hz == 0 || (st->has_gpu && st->gpu_min_hz == custom->gpu_hz &&
                                          st->gpu_max_hz == custom->gpu_hz);
    return gpu_ok ? 0
                  : jf_err_set(err, -EIO,
                               "power: custom mode: the GPU is at %" PRId64 "-%" PRId64
                               " Hz, expected %" PRId64 " Hz",
                               st->gpu_min_hz, st->gpu_max_hz, custom->gpu_hz);
}

int agent_power_verify_same(const agent_power_state_t *want, const agent_power_state_t *got,
                            jf_err_t *err)
{
    if (want->online_mask != got->online_mask || want->n_clusters != got->n_clusters) {
        return jf_err_set(err, -EIO,
                          "power: restored cores are 0x%" PRIx64 " (%zu clusters), "
                          "expected 0x%" PRIx64 " (%zu)",
                          got->online_mask, got->n_clusters, want->online_mask, want->n_clusters);
    }
    for (size_t i = 0; i < want->n_clusters; i++) {
        const agent_power_cluster_t *w = &want->clusters[i], *g = &got->clusters[i];
        if (w->first_core != g->first_core || w->min_hz != g->min_hz || w->max_hz != g->max_hz) {
            return jf_err_set(err, -EIO,
                              "power: restored cpu%d is at %" PRId64 "-%" PRId64
                              " Hz, expected %" PRId64 "-%" PRId64 " Hz",
                              g->first_core, g->min_hz, g->max_hz, w->min_hz, w->max_hz);
        }
    }
    if (want->has_gpu &&
        (want->gpu_min_hz != got->gpu_min_hz || want->gpu_max_hz != got->gpu_max_hz)) {
        return jf_err_set(err, -EIO,
                          "power: the restored GPU is at %" PRId64 "-%" PRId64
                          " Hz, expected %" PRId64 "-%" PRId64 " Hz",
                          got->gpu_min_hz, got->gpu_max_hz, want->gpu_min_hz, want->gpu_max_hz);
    }
    return 0;
}

static json_t *s_clusters_json(const agent_power_state_t *st)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < st->n_clusters; i++) {
        const agent_power_cluster_t *c = &st->clusters[i];
        if (json_array_append_new(a, json_pack("{s:i, s:I, s:I}", "first_core", c->first_core,
                                               "min_hz", (json_int_t) c->min_hz, "max_hz",
                                               (json_int_t) c->max_hz)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *s_online_json(const agent_power_state_t *st)
{
    json_t *a = json_array();
    for (int cpu = 0; a && cpu < PRIVHELPER_CPUS_MAX; cpu++) {
        if ((st->online_mask >> cpu) & 1 && json_array_append_new(a, json_integer(cpu)) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *agent_power_state_json(const agent_power_state_t *state)
{
    json_t *o = json_pack("{s:o, s:o, s:b}", "online_cpus", s_online_json(state), "cpu_clusters",
                          s_clusters_json(state), "dvfs_off", state->dvfs_off);
    int bad = !o;
    if (o && state->mode_id >= 0) {
        bad |= json_object_set_new(o, "mode_id", json_integer(state->mode_id));
    }
    if (o && state->mode_name[0]) {
        bad |= json_object_set_new(o, "mode_name", json_string(state->mode_name));
    }
    if (o && state->has_gpu) {
        bad |= json_object_set_new(o, "gpu_min_hz", json_integer(state->gpu_min_hz));
        bad |= json_object_set_new(o, "gpu_max_hz", json_integer(state->gpu_max_hz));
    }
    if (o && state->has_emc_cap) {
        bad |= json_object_set_new(o, "emc_cap_hz", json_integer(state->emc_cap_hz));
    }
    if (o && state->note[0]) {
        bad |= json_object_set_new(o, "note", json_string(state->note));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
