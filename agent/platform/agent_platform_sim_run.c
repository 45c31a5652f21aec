/* The sim board's runs (the run interface of agent_platform.h): the simulated trainer's command
 * (docs/simulator.md "The simulated trainer"), its modelled time base and energy, a preparation
 * without worker (no disk, no helper: the page cache is the model's, docs/simulator.md "The page
 * cache between runs"), the power record of the point written into the tree, and what the
 * trainer's lines report beyond the wire records: the rail powers the sampler then reads from
 * the tree, and the modelled page cache. Not for the tree itself (agent_sim_tree.c). */
#include "agent_platform_internal.h"

#include "jf_board_clocks.h"
#include "jf_msg_run.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define S_POWER_NOTE                                                                               \
    "simulated: the operating point written into the fake sysfs tree, no hardware switched; "      \
    "page cache modelled (cold after drop_caches, else as the board's earlier runs left it)"
#define S_PREPARED_DETAIL                                                                          \
    "simulated board: storage check and power-mode helper skipped; page cache modelled"

// The board, mode and medium from the platform and the spec, a custom point over the mode
// (--sim-point), and the page cache the board kept from its last runs. jetfleet-train-sim
// implies --simulate, so it takes no --data, --threads or --device.
static int s_trainer(const agent_platform_t *self, const agent_platform_run_t *run,
                     agent_platform_trainer_t *t, jf_err_t *err)
{
    const agent_platform_sim_t *sim = &self->sim;
    const jf_run_spec_t *s = run->spec;
    const jf_run_custom_t *c = &s->custom;
    double resident = agent_sim_cache_resident(&self->sim_cache, s->dataset);
    int rc = agent_platform_trainer_add(t, err, "%s", sim->train_bin);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-params");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%s", sim->params);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-board-type");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%s", jf_board_type_name(sim->type));
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-board");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%s", sim->board);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-seed");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%llu", (unsigned long long) sim->seed);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-mode");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%d", s->power_mode_id);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-medium");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%s", s->storage);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-speed");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%.17g", sim->speed);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-scale");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%.17g", sim->scale);
    rc = rc ? rc : agent_platform_trainer_add(t, err, "--sim-cache-resident");
    rc = rc ? rc : agent_platform_trainer_add(t, err, "%.17g", resident);
    if (rc == 0 && (s->init_weights[0] || s->return_weights)) {
        // A federated round's run trains the model for real on the dataset (docs/simulator.md);
        // its time and energy stay modelled.
        rc = agent_platform_trainer_add(t, err, "--data");
        rc = rc ? rc : agent_platform_trainer_add(t, err, "%s", run->dataset_dir);
    }
    if (rc == 0 && c->n_cores != 0) {
        rc = agent_platform_trainer_add(t, err, "--sim-point");
        rc = rc ? rc
                : agent_platform_trainer_add(t, err, "%d,%lld,%lld,%lld", c->n_cores,
                                             (long long) c->cpu_hz, (long long) c->gpu_hz,
                                             (long long) c->emc_hz);
    }
    // An idle baseline (docs/baseline.md): the idle model needs DVFS and the sampler's rate.
    if (rc == 0 && s->idle_s > 0) {
        rc = agent_platform_trainer_add(t, err, "--sim-telemetry-hz");
        rc = rc ? rc
                : agent_platform_trainer_add(t, err, "%d", s->telemetry_off ? 0 : s->telemetry_hz);
    }
    if (rc == 0 && s->idle_s > 0 && s->dvfs_off) {
        rc = agent_platform_trainer_add(t, err, "--sim-dvfs-off");
    }
    return rc;
}

// The trainer reports modelled time, speed x the monotonic clock, and the rails it writes are
// modelled: the record says so.
static void s_timing(const agent_platform_t *self, agent_platform_timing_t *ret)
{
    ret->own_clock = true;
    ret->speed = self->sim.speed;
    (void) snprintf(ret->time_base, sizeof ret->time_base, "simulated, speed %g", self->sim.speed);
    ret->energy_source = JF_MEASURE_SOURCE_SIMULATED;
}

// Answers as the worker would, at once: drop_caches empties the modelled page cache.
static bool s_prepare_run(agent_platform_t *self, const jf_run_spec_t *spec,
                          agent_platform_prepared_t *ret)
{
    ret->drop = spec->drop_caches ? JF_MEASURE_DROP_SIMULATED : JF_MEASURE_DROP_NONE;
    self->sim_idle_run = spec->idle_s > 0;
    self->sim_idle_dvfs_off = spec->dvfs_off;
    if (spec->drop_caches) {
        agent_sim_cache_drop(&self->sim_cache);
    }
    (void) snprintf(ret->detail, sizeof ret->detail, "%s", S_PREPARED_DETAIL);
    return true;
}

// The operating point in the keys of a Jetson's record (agent_power_state_json): the cores
// online, one cluster pinned at the CPU clock, the GPU pinned, the EMC at its rate. The model
// runs at fixed clocks, so min == max throughout.
static int s_add_point(json_t *o, const sim_op_t *op)
{
    json_t *cpus = json_array();
    for (int i = 0; cpus && i < op->n_cores; i++) {
        if (json_array_append_new(cpus, json_integer(i)) != 0) {
            json_decref(cpus);
            return -ENOMEM;
        }
    }
    json_t *clusters = json_pack("[{s:i, s:I, s:I}]", "first_core", 0, "min_hz",
                                 (json_int_t) op->cpu_hz, "max_hz", (json_int_t) op->cpu_hz);
    int bad = json_object_set_new(o, "online_cpus", cpus);
    bad |= json_object_set_new(o, "cpu_clusters", clusters);
    bad |= json_object_set_new(o, "gpu_min_hz", json_integer(op->gpu_hz));
    bad |= json_object_set_new(o, "gpu_max_hz", json_integer(op->gpu_hz));
    bad |= json_object_set_new(o, "emc_cap_hz", json_integer(op->emc_hz));
    return bad ? -ENOMEM : 0;
}

static json_t *s_power_record(const agent_platform_t *self, const jf_run_spec_t *s)
{
    bool custom = s->custom.n_cores != 0;
    // As a Jetson's record: a custom point has no nvpmodel id.
    json_t *o = json_pack("{s:s, s:b, s:s}", "mode_name", custom ? "custom" : s->power_mode,
                          "dvfs_off", s->dvfs_off, "note", S_POWER_NOTE);
    int rc = o ? 0 : -ENOMEM;
    if (rc == 0 && !custom) {
        rc = json_object_set_new(o, "mode_id", json_integer(s->power_mode_id)) ? -ENOMEM : 0;
    }
    rc = rc ? rc : s_add_point(o, &self->sim_op);
    if (rc != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

// The steps of one family table at or below cap into out; returns how many. The caps are MHz
// read as text into doubles (1907.2 MHz), so a step equal to one is kept within a part in 10^9.
static size_t s_clip(const int64_t *steps, size_t n, double cap_hz, int64_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k < AGENT_POWER_STEPS_MAX; i++) {
        if ((double) steps[i] <= cap_hz * (1.0 + 1e-9)) {
            out[k++] = steps[i];
        }
    }
    return k;
}

// The simulated board's custom-mode space: its family's table (jf_board_clocks) up to the
// board's own core count and clock caps in the model's parameters (cpu_cores, cpu_max_mhz,
// gpu_max_mhz, emc_max_mhz), as a real board's sysfs lists only its own steps. The Xavier NX so
// loses the 2133 MHz EMC step its family table borrows from the AGX Xavier.
static int s_clock_tables(const agent_platform_t *self, agent_power_tables_t *t, jf_err_t *err)
{
    const jf_board_clocks_t *f = jf_board_clocks(self->board_type);
    const sim_params_t *p = self->sim_model ? sim_model_params(self->sim_model) : NULL;
    if (!f || !p) {
        return jf_err_set(err, -ENOTSUP, "sim: no clock table for %s",
                          jf_board_type_name(self->board_type));
    }
    const sim_board_params_t *b = &p->boards[self->board_type];
    *t = (agent_power_tables_t){.n_cpus = b->cpu_cores < f->n_cpus ? b->cpu_cores : f->n_cpus};
    t->n_cpu_steps = s_clip(f->cpu_steps_hz, f->n_cpu_steps, b->cpu_max_hz, t->cpu_steps_hz);
    t->n_gpu_steps = s_clip(f->gpu_steps_hz, f->n_gpu_steps, b->gpu_max_hz, t->gpu_steps_hz);
    t->n_emc_steps = s_clip(f->emc_steps_hz, f->n_emc_steps, b->emc_max_hz, t->emc_steps_hz);
    return t->n_cpus > 0 && t->n_cpu_steps > 0
               ? 0
               : jf_err_set(err, -ENOTSUP, "sim: %s's parameters leave no custom-mode space",
                            jf_board_type_name(self->board_type));
}

// The rails of the line's key (an object {rail: mW}; anything else is left alone) into the
// tree's power monitor, where the sampler and the energy code read them as on a real board.
static int s_line_power(agent_platform_t *self, const json_t *line, const char *key, jf_err_t *err)
{
    const json_t *p = json_object_get(line, key);
    return json_is_object(p) ? agent_platform_sim_set_power(self, p, err) : 0;
}

// The line's load (an object {"gpu_pct", "cpu_busy_cores"}; anything else is left alone) into
// the tree's load counters, switched at the same moment as the rails.
static int s_line_load(agent_platform_t *self, const json_t *line, const char *key, jf_err_t *err)
{
    const json_t *l = json_object_get(line, key);
    if (!json_is_object(l)) {
        return 0;
    }
    int64_t model_us = agent_platform_sim_model_us(self, jf_clock_mono_us());
    return agent_sim_tree_set_load(self->sim_tree, l, model_us, err);
}

// The modelled residency share of a dataset of size_bytes, as a measured residency.
static void s_residency(agent_platform_line_t *ret, int epoch, double share, int64_t size_bytes)
{
    double f = share >= 0.0 && share <= 1.0 ? share : 0.0;
    int i = ret->n_residency++;
    ret->residency_epoch[i] = epoch;
    ret->residency[i] = (agent_residency_t){
        .total_bytes = size_bytes, .resident_bytes = (int64_t) ((double) size_bytes * f + 0.5)};
}

// The epoch line's modelled page cache ("sim_cache", train_records.h) into the board's cache
// state for the next runs and, as residency, into the measure record (a sim board has no files
// to measure).
static int s_line_cache(agent_platform_t *self, const char *dataset, const json_t *line,
                        agent_platform_line_t *ret, jf_err_t *err)
{
    const json_t *c = json_object_get(line, "sim_cache");
    const json_t *epoch_j = json_object_get(line, "epoch");
    if (!json_is_object(c) || !json_is_integer(epoch_j)) {
        return 0;
    }
    json_int_t epoch = json_integer_value(epoch_j);
    const json_t *before = json_object_get(c, "resident_before");
    const json_t *after = json_object_get(c, "resident_after");
    const json_t *room = json_object_get(c, "cache_bytes");
    const json_t *size = json_object_get(c, "dataset_bytes");
    if (!json_is_number(after) || !json_is_integer(room) || !json_is_integer(size)) {
        return jf_err_set(err, -EPROTO,
                          "epoch %lld's sim_cache lacks resident_after, cache_bytes or "
                          "dataset_bytes; the board's page cache keeps its state",
                          (long long) epoch);
    }
    agent_sim_cache_update(&self->sim_cache, dataset, json_number_value(after),
                           json_integer_value(room), json_integer_value(size));
    if (epoch >= 0 && epoch < JF_EPOCHS_MAX) {
        if (epoch == 0 && json_is_number(before)) {
            s_residency(ret, -1, json_number_value(before), json_integer_value(size));
        }
        s_residency(ret, (int) epoch, json_number_value(after), json_integer_value(size));
    }
    return 0;
}

// The start line's sim_power_mw and sim_load are the first epoch's; each epoch line's
// sim_next_power_mw and sim_next_load the next one's, and its sim_cache the page cache it left.
static int s_trainer_line(agent_platform_t *self, const char *dataset, const json_t *line,
                          agent_platform_line_t *ret, jf_err_t *err)
{
    const char *kind = json_string_value(json_object_get(line, "kind"));
    if (kind && strcmp(kind, "start") == 0) {
        int prc = s_line_power(self, line, "sim_power_mw", err);
        return prc ? prc : s_line_load(self, line, "sim_load", err);
    }
    if (!kind || strcmp(kind, "epoch") != 0) {
        return 0;
    }
    int rc = s_line_power(self, line, "sim_next_power_mw", err);
    rc = rc ? rc : s_line_load(self, line, "sim_next_load", err);
    jf_err_t cache_err = {0};
    int crc = s_line_cache(self, dataset, line, ret, &cache_err);
    if (rc == 0 && crc != 0) {
        rc = jf_err_set(err, crc, "%s", cache_err.msg);
    }
    return rc;
}

// The thermal zones follow modelled time between power changes: the sampler reads them in its
// own thread, so the loop has them rewritten once per tick (docs/simulator.md, "Thermal").
static int s_tick(agent_platform_t *self, int64_t now_us, jf_err_t *err)
{
    int rc = agent_sim_tree_advance(self->sim_tree, agent_platform_sim_model_us(self, now_us), err);
    if (rc != 0) {
        (void) jf_err_prefix(err, "sim");
    }
    return rc;
}

static int s_run_end(agent_platform_t *self, jf_err_t *err)
{
    // The simulated board is idle again: rails and load.
    self->sim_idle_run = false;
    int rc = agent_platform_sim_set_power(self, NULL, err);
    int64_t model_us = agent_platform_sim_model_us(self, jf_clock_mono_us());
    return rc ? rc : agent_sim_tree_set_load(self->sim_tree, NULL, model_us, err);
}

const agent_platform_run_ops_t agent_platform_sim_run_ops = {
    .trainer = s_trainer,
    .timing = s_timing,
    .prepare_run = s_prepare_run,
    .power_record = s_power_record,
    .clock_tables = s_clock_tables,
    .trainer_line = s_trainer_line,
    .tick = s_tick,
    .run_end = s_run_end,
    .dataset_files = false,
};
