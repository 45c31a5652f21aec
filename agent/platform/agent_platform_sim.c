/* Sim platform (issue #5): a simulated Jetson. Writes the family's sysfs/proc/etc tree into a
 * private directory (agent_sim_tree.h) from the performance model's parameters, then detects and
 * samples it with the jetson platform's own code (agent_platform_jetson_new over the tree), so
 * that a sim board exercises the same readers as a real one. Modes are "set" by writing the
 * mode's clocks and online cores into the tree; nothing real changes. Its runs go through the
 * run interface (agent_platform_sim_run.c): the simulated trainer's rail powers are written into
 * the tree during runs and its thermal zones advanced each loop tick, in modelled time:
 * monotonic time since the tree was made times --sim-speed. */
#include "agent_platform_internal.h"

#include "jf_board_clocks.h"
#include "sim_idle.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

// The idle model's rails (sim_idle.h) at op, without sampling, written into the tree: an idle
// baseline run's board draws them from the moment its mode is set, so that the sampler's first
// sample, before the trainer starts, already reads them (docs/baseline.md).
static int s_write_idle(agent_platform_t *self, const sim_op_t *op, jf_err_t *err)
{
    sim_idle_in_t in = {
        .board_type = self->board_type, .op = *op, .dvfs_off = self->sim_idle_dvfs_off};
    sim_model_board_factors(self->sim_model, self->board_type, self->sim.seed, self->sim.board,
                            &in.factors);
    sim_epoch_out_t out = {0};
    int rc = sim_idle_rails(self->sim_model, &in, &out, err);
    json_t *mw = rc ? NULL : json_object();
    bool bad = rc == 0 && !mw;
    for (size_t i = 0; mw && i < out.n_rails; i++) {
        bad |= json_object_set_new(mw, out.rails[i].name, json_integer(out.rails[i].power_mw)) != 0;
    }
    rc = rc    ? rc
         : bad ? jf_err_set(err, -ENOMEM, "sim: out of memory for the idle rails")
               : agent_platform_sim_set_power(self, mw, err);
    json_decref(mw);
    return rc;
}

static int s_set_op(agent_platform_t *self, const sim_op_t *op, jf_err_t *err)
{
    int rc = agent_sim_tree_set_op(self->sim_tree, op, err);
    if (rc == 0) {
        self->sim_op = *op;
    }
    return rc == 0 && self->sim_idle_run ? s_write_idle(self, op, err) : rc;
}

static int s_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err)
{
    sim_op_t op = {0};
    int rc = sim_model_mode_op(self->sim_model, self->board_type, mode_id, &op, err);
    return rc ? rc : s_set_op(self, &op, err);
}

// The mode's operating point with the custom point's cores and clocks over it (a clock it leaves
// alone keeps the mode's), checked against the family's custom-mode space. DVFS off changes
// nothing in the model: it already runs every mode at the mode's maximum clocks, which is what
// DVFS off pins (docs/simulator.md).
static int s_set_point(agent_platform_t *self, int mode_id, const jf_run_custom_t *custom,
                       bool dvfs_off, jf_err_t *err)
{
    (void) dvfs_off;
    sim_op_t op = {0};
    int rc = sim_model_mode_op(self->sim_model, self->board_type, mode_id, &op, err);
    const jf_board_clocks_t *t = jf_board_clocks(self->board_type);
    if (rc != 0 || !custom || custom->n_cores == 0) {
        return rc ? rc : s_set_op(self, &op, err);
    }
    if (!t || custom->n_cores > t->n_cpus ||
        !jf_board_clocks_has_step(t->cpu_steps_hz, t->n_cpu_steps, custom->cpu_hz) ||
        (custom->gpu_hz && !jf_board_clocks_has_step(t->gpu_steps_hz, t->n_gpu_steps,
                                                     custom->gpu_hz)) ||
        (custom->emc_hz && !jf_board_clocks_has_step(t->emc_steps_hz, t->n_emc_steps,
                                                     custom->emc_hz))) {
        return jf_err_set(err, -EINVAL, "sim: the custom point is outside %s's custom-mode space",
                          jf_board_type_name(self->board_type));
    }
    op.n_cores = custom->n_cores;
    op.cpu_hz = custom->cpu_hz;
    op.gpu_hz = custom->gpu_hz ? custom->gpu_hz : op.gpu_hz;
    op.emc_hz = custom->emc_hz ? custom->emc_hz : op.emc_hz;
    return s_set_op(self, &op, err);
}

static void s_add_software(const agent_platform_t *self, json_t *sw)
{
    const agent_detect_t *d = &self->detect;
    (void) json_object_set_new(sw, "model", json_string(d->model));
    if (d->jetpack[0]) {
        (void) json_object_set_new(sw, "jetpack", json_string(d->jetpack));
    }
    (void) json_object_set_new(sw, "simulator", json_string("jetfleet sim model "
                                                            "(docs/simulator.md)"));
}

static const agent_platform_ops_t s_ops = {
    .name = "sim",
    .run = &agent_platform_sim_run_ops,
    .set_mode = s_set_mode,
    .set_point = s_set_point,
    .add_software = s_add_software,
    .power_new = NULL, // no privileged helper: set_mode writes the tree
};

static void s_describe(agent_platform_t *self)
{
    char was[AGENT_PLATFORM_DESCRIBE_MAX + 1];
    (void) snprintf(was, sizeof was, "%s", self->describe);
    (void) snprintf(self->describe, sizeof self->describe,
                    "sim: simulated %s, board factors of '%s' with seed %llu, speed %g, scale %g, "
                    "parameters %.300s, fake tree %.300s (temperatures from the stated thermal "
                    "model, not calibrated; CPU and GPU load from the model's utilisation); read as %.1500s",
                    jf_board_type_name(self->board_type), self->sim.board,
                    (unsigned long long) self->sim.seed, self->sim.speed, self->sim.scale,
                    self->sim.params,
                    agent_sim_tree_sysfs_root(self->sim_tree), was);
}

// The model and the tree, or NULL with err.
static agent_sim_tree_t *s_tree_new(const agent_platform_opts_t *opts, const char *board,
                                    sim_model_t **ret_model, jf_err_t *err)
{
    *ret_model = sim_model_load(opts->sim_params, err);
    if (!*ret_model) {
        return NULL;
    }
    agent_sim_tree_opts_t to = {.type = opts->sim_type, .model = *ret_model};
    sim_model_board_factors(*ret_model, opts->sim_type, opts->sim_seed, board, &to.factors);
    agent_sim_tree_t *tree = agent_sim_tree_new(&to, err);
    if (!tree) {
        sim_model_destroy(ret_model);
    }
    return tree;
}

agent_platform_t *agent_platform_sim_new(const agent_platform_opts_t *opts, jf_err_t *err)
{
    const char *board = opts->sim_board ? opts->sim_board : AGENT_PLATFORM_SIM_BOARD_DEFAULT;
    sim_model_t *model = NULL;
    agent_sim_tree_t *tree = s_tree_new(opts, board, &model, err);
    if (!tree) {
        (void) jf_err_prefix(err, "--platform sim:%s", jf_board_type_name(opts->sim_type));
        return NULL;
    }
    agent_platform_opts_t jo = {.kind = AGENT_PLATFORM_JETSON,
                                .sysfs_root = agent_sim_tree_sysfs_root(tree),
                                .proc_root = agent_sim_tree_proc_root(tree),
                                .etc_root = agent_sim_tree_etc_root(tree)};
    agent_platform_t *self = agent_platform_jetson_new(&jo, err);
    if (!self || self->board_type != opts->sim_type) {
        if (self) {
            jf_err_set(err, -EINVAL, "sim: the fake %s tree was detected as %s",
                       jf_board_type_name(opts->sim_type), jf_board_type_name(self->board_type));
        }
        agent_platform_destroy(&self);
        agent_sim_tree_destroy(&tree);
        sim_model_destroy(&model);
        return NULL;
    }
    self->ops = &s_ops;
    self->is_sim = true;
    self->sim_model = model;
    self->sim_tree = tree;
    self->sim_start_us = jf_clock_mono_us(); // the tree's modelled time 0, give or take its start
    // The tree starts in the family's first mode (agent_sim_tree_new); it has an operating point.
    (void) sim_model_mode_op(model, opts->sim_type, jf_board_family(opts->sim_type)->modes[0].id,
                             &self->sim_op, NULL);
    self->sim = (agent_platform_sim_t){.type = opts->sim_type, .seed = opts->sim_seed,
                                       .speed = opts->sim_speed, .scale = opts->sim_scale};
    (void) snprintf(self->sim.params, sizeof self->sim.params, "%s", opts->sim_params);
    (void) snprintf(self->sim.train_bin, sizeof self->sim.train_bin, "%s",
                    opts->sim_train_bin ? opts->sim_train_bin : "");
    (void) snprintf(self->sim.board, sizeof self->sim.board, "%s", board);
    s_describe(self);
    return self;
}

int64_t agent_platform_sim_model_us(const agent_platform_t *self, int64_t now_us)
{
    return (int64_t) ((double) (now_us - self->sim_start_us) * self->sim.speed);
}

const agent_platform_sim_t *agent_platform_sim(const agent_platform_t *self)
{
    return self->is_sim ? &self->sim : NULL;
}

int agent_platform_sim_set_power(agent_platform_t *self, const json_t *power_mw, jf_err_t *err)
{
    if (!self->is_sim) {
        return jf_err_set(err, -ENOTSUP, "%s platform: no simulated power monitor",
                          self->ops->name);
    }
    return agent_sim_tree_set_power(self->sim_tree, power_mw,
                                    agent_platform_sim_model_us(self, jf_clock_mono_us()), err);
}
