/* One planner per verb of the request language (docs/privileges.md §3). Each checks its values
 * against what it reads below the root, then adds steps; none of them writes. */
#include "privhelper_internal.h"

#include "agent_nvpmodel.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYS       PRIVHELPER_SYSFS_PREFIX
#define S_IDS_MAX 160 // the list of mode ids in a message

typedef int (*s_planner_fn)(privhelper_t *self, const privhelper_request_t *req,
                            privhelper_plan_t *plan, jf_err_t *err);

static int s_need_store(const privhelper_t *self, jf_err_t *err)
{
    return self->store ? 0 : jf_err_set(err, self->store_err.code, "%s", self->store_err.msg);
}

static int s_conf_error(const agent_nvpmodel_t *conf, int id, jf_err_t *err)
{
    char ids[S_IDS_MAX] = "";
    size_t used = 0;
    for (size_t i = 0; i < agent_nvpmodel_n_modes(conf) && used < sizeof ids; i++) {
        int n = snprintf(ids + used, sizeof ids - used, "%s%d", i ? " " : "",
                         agent_nvpmodel_mode_at(conf, i)->id);
        used += n > 0 ? (size_t) n : 0;
    }
    return jf_err_set(err, -EINVAL, "mode %d is not in /%s (modes: %s)", id, PRIVHELPER_CONF_PATH,
                      ids);
}

// Adds `nvpmodel -m id` after checking that id is a mode of the board's conf.
static int s_plan_mode(privhelper_t *self, int id, privhelper_plan_t *plan, jf_err_t *err)
{
    size_t len = 0;
    char *text = malloc(AGENT_NVPMODEL_FILE_MAX + 1);
    int rc = text ? privhelper_root_read(self->root, PRIVHELPER_CONF_PATH, text,
                                         AGENT_NVPMODEL_FILE_MAX + 1, &len, err)
                  : jf_err_set(err, -ENOMEM, "out of memory");
    agent_nvpmodel_t *conf =
        rc == 0 ? agent_nvpmodel_parse(text, len, "/" PRIVHELPER_CONF_PATH, err) : NULL;
    free(text);
    if (!conf) {
        return rc != 0 ? rc : -EINVAL;
    }
    rc = agent_nvpmodel_mode(conf, id)
             ? privhelper_plan_step(plan, PRIVHELPER_STEP_NVPMODEL, id, err)
             : s_conf_error(conf, id, err);
    agent_nvpmodel_destroy(&conf);
    return rc;
}

static int s_plan_nvpmodel(privhelper_t *self, const privhelper_request_t *req,
                           privhelper_plan_t *plan, jf_err_t *err)
{
    return s_plan_mode(self, (int) req->args[0], plan, err);
}

static int s_plan_cpu_online(privhelper_t *self, const privhelper_request_t *req,
                             privhelper_plan_t *plan, jf_err_t *err)
{
    int cpu = (int) req->args[0];
    char rel[PRIVHELPER_PATH_MAX];
    int64_t now = 0;
    int rc = privhelper_paths_cpu(rel, SYS, cpu, PRIVHELPER_CPU_ONLINE_FILE);
    rc = rc != 0 ? rc : privhelper_root_read_i64(self->root, rel, &now, err);
    if (rc == -ENOENT) {
        return jf_err_set(err, -EINVAL, "cpu%d does not exist on this board (no /%s)", cpu, rel);
    }
    return rc != 0 ? rc : privhelper_plan_write(plan, rel, req->args[1], err);
}

static int s_plan_cpu_freq(privhelper_t *self, const privhelper_request_t *req,
                           privhelper_plan_t *plan, jf_err_t *err)
{
    int cpu = (int) req->args[0];
    int64_t khz = req->args[1];
    char min_rel[PRIVHELPER_PATH_MAX], max_rel[PRIVHELPER_PATH_MAX], table[PRIVHELPER_PATH_MAX];
    int rc = privhelper_snapshot_check_policy(self, cpu, err);
    rc = rc != 0 ? rc : privhelper_paths_policy(min_rel, SYS, cpu, PRIVHELPER_CPU_MIN_KHZ);
    rc = rc != 0 ? rc : privhelper_paths_policy(max_rel, SYS, cpu, PRIVHELPER_CPU_MAX_KHZ);
    rc = rc != 0 ? rc : privhelper_paths_cpu(table, SYS, cpu, PRIVHELPER_CPU_TABLE_KHZ);
    rc = rc != 0 ? rc : privhelper_snapshot_check_step(self, table, khz, "kHz", err);
    return rc != 0 ? rc : privhelper_plan_range(plan, min_rel, max_rel, khz, khz, err);
}

static int s_plan_gpu_freq(privhelper_t *self, const privhelper_request_t *req,
                           privhelper_plan_t *plan, jf_err_t *err)
{
    int64_t hz = req->args[0];
    char min_rel[PRIVHELPER_PATH_MAX], max_rel[PRIVHELPER_PATH_MAX], table[PRIVHELPER_PATH_MAX];
    if (!self->gpu_dir[0]) {
        return jf_err_set(err, -ENOENT, "no GPU devfreq node below the root");
    }
    int rc = privhelper_paths_devfreq(min_rel, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MIN_HZ);
    rc = rc != 0 ? rc
                 : privhelper_paths_devfreq(max_rel, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MAX_HZ);
    rc = rc != 0 ? rc
                 : privhelper_paths_devfreq(table, "", self->gpu_dir, PRIVHELPER_DEVFREQ_TABLE_HZ);
    rc = rc != 0 ? rc : privhelper_snapshot_check_step(self, table, hz, "Hz", err);
    return rc != 0 ? rc : privhelper_plan_range(plan, min_rel, max_rel, hz, hz, err);
}

static int s_plan_emc_freq(privhelper_t *self, const privhelper_request_t *req,
                           privhelper_plan_t *plan, jf_err_t *err)
{
    int64_t hz = req->args[0];
    if (!self->soc) {
        return jf_err_set(err, -EINVAL, "emc-freq: unknown SoC in /%s, so no EMC table",
                          PRIVHELPER_COMPATIBLE_PATH);
    }
    if (!privhelper_paths_is_emc_step(self->soc, hz)) {
        return jf_err_set(err, -EINVAL, "%lld Hz is not an EMC rate of %s", (long long) hz,
                          self->soc->compatible);
    }
    bool locked = false;
    int rc = self->emc_cap[0] ? privhelper_plan_write(plan, self->emc_cap, hz, err) : 0;
    rc = rc != 0 ? rc : privhelper_snapshot_emc_lock(self, plan, hz, &locked, err);
    if (rc == 0 && !self->emc_cap[0] && !locked) {
        return jf_err_set(err, -ENOENT, "no EMC cap or lock file below the root");
    }
    (void) snprintf(plan->note, sizeof plan->note, "emc=%s", locked ? "locked" : "capped");
    return rc;
}

static int s_store(privhelper_plan_t *plan, const privhelper_state_t *st, int slot, jf_err_t *err)
{
    int rc = privhelper_state_format(st, plan->state, sizeof plan->state, &plan->state_len, err);
    return rc != 0 ? rc : privhelper_plan_step(plan, PRIVHELPER_STEP_STORE, slot, err);
}

// The rate dvfs off locks the EMC at: the nvpmodel cap when there is one below the clock's
// maximum, else that maximum (jetson_clocks, §5.1).
static int64_t s_emc_pin_hz(const privhelper_t *self, const privhelper_state_t *st)
{
    char rel[PRIVHELPER_PATH_MAX];
    int64_t max = 0;
    if (self->soc && privhelper_paths_sys(rel, SYS, self->soc->emc_max_rate) == 0 &&
        privhelper_root_read_i64(self->root, rel, &max, NULL) != 0) {
        max = 0; // unreadable: fall back to the cap or the current rate
    }
    if (st->has_emc_cap && st->emc_cap_hz > 0 && (max == 0 || st->emc_cap_hz < max)) {
        return st->emc_cap_hz;
    }
    return max > 0 ? max : st->emc_rate_hz;
}

// Every online policy and the GPU at min = max = their current max, rail-gating and cpuidle
// off, the EMC locked: what jetson_clocks does (§5.1), within the caps of the mode in force.
static int s_pin(privhelper_t *self, const privhelper_state_t *st, privhelper_plan_t *plan,
                 jf_err_t *err)
{
    char a[PRIVHELPER_PATH_MAX], b[PRIVHELPER_PATH_MAX];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < st->n_policies; i++) {
        const privhelper_policy_t *p = &st->policies[i];
        rc = privhelper_paths_policy(a, SYS, p->cpu, PRIVHELPER_CPU_MIN_KHZ);
        rc = rc != 0 ? rc : privhelper_paths_policy(b, SYS, p->cpu, PRIVHELPER_CPU_MAX_KHZ);
        rc = rc != 0 ? rc : privhelper_plan_range(plan, a, b, p->max_khz, p->max_khz, err);
    }
    if (rc == 0 && st->has_gpu) {
        rc = privhelper_paths_devfreq(a, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MIN_HZ);
        rc = rc != 0 ? rc
                     : privhelper_paths_devfreq(b, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MAX_HZ);
        rc = rc != 0 ? rc : privhelper_plan_range(plan, a, b, st->gpu_max_hz, st->gpu_max_hz, err);
    }
    if (rc == 0 && st->has_railgate) {
        rc = privhelper_paths_sys(a, SYS, PRIVHELPER_GPU_RAILGATE_PATH);
        rc = rc != 0 ? rc : privhelper_plan_write(plan, a, 0, err);
    }
    for (size_t i = 0; rc == 0 && i < st->n_idle; i++) {
        rc = privhelper_paths_cpu_idle(a, SYS, st->idle[i].cpu, st->idle[i].state);
        rc = rc != 0 ? rc : privhelper_plan_write(plan, a, 1, err);
    }
    bool locked = false;
    rc = rc != 0 ? rc
                 : privhelper_snapshot_emc_lock(self, plan, s_emc_pin_hz(self, st), &locked, err);
    (void) snprintf(plan->note, sizeof plan->note, "emc=%s", locked ? "locked" : "unlocked");
    return rc;
}

// Slot 0 is saved once: a second dvfs off pins again but keeps the state from before the first.
static int s_plan_dvfs_off(privhelper_t *self, const privhelper_request_t *req,
                           privhelper_plan_t *plan, jf_err_t *err)
{
    (void) req;
    privhelper_state_t *st = malloc(sizeof *st);
    int rc = st ? s_need_store(self, err) : jf_err_set(err, -ENOMEM, "out of memory");
    rc = rc != 0 ? rc : privhelper_snapshot_capture(self, st, err);
    if (rc == 0 && !privhelper_store_has(self->store, 0)) {
        rc = s_store(plan, st, 0, err);
    }
    rc = rc != 0 ? rc : s_pin(self, st, plan, err);
    free(st);
    return rc;
}

static int s_plan_restore_slot(privhelper_t *self, int slot, privhelper_plan_t *plan, jf_err_t *err)
{
    int rc = s_need_store(self, err);
    if (rc == 0 && !privhelper_store_has(self->store, slot)) {
        return slot == 0 ? jf_err_set(err, -EINVAL, "DVFS is not off (no state 0 stored)")
                         : jf_err_set(err, -EINVAL, "no state %d stored", slot);
    }
    char *text = malloc(PRIVHELPER_STATE_TEXT_MAX);
    privhelper_state_t *st = malloc(sizeof *st);
    size_t len = 0;
    if (rc == 0 && (!text || !st)) {
        rc = jf_err_set(err, -ENOMEM, "out of memory");
    }
    rc = rc != 0
             ? rc
             : privhelper_store_read(self->store, slot, text, PRIVHELPER_STATE_TEXT_MAX, &len, err);
    rc = rc != 0 ? rc : privhelper_state_parse(text, len, st, err);
    // The slot file is root's, but its values are checked as a request's: an edited slot must not
    // write what no request could.
    if (rc == 0 && privhelper_snapshot_check(self, st, err) != 0) {
        rc = jf_err_prefix(err, "state %d", slot);
    }
    // The mode first: nvpmodel -m rewrites cores and limits, which the saved values then refine.
    if (rc == 0 && st->has_pmode) {
        rc = s_plan_mode(self, st->pmode, plan, err);
        if (rc != 0) {
            (void) jf_err_prefix(err, "state %d's nvpmodel mode", slot);
        }
    }
    rc = rc != 0 ? rc : privhelper_snapshot_plan(self, st, plan, err);
    rc = rc != 0 ? rc : privhelper_plan_step(plan, PRIVHELPER_STEP_FORGET, slot, err);
    free(text);
    free(st);
    return rc;
}

static int s_plan_dvfs_restore(privhelper_t *self, const privhelper_request_t *req,
                               privhelper_plan_t *plan, jf_err_t *err)
{
    (void) req;
    return s_plan_restore_slot(self, 0, plan, err);
}

static int s_plan_restore(privhelper_t *self, const privhelper_request_t *req,
                          privhelper_plan_t *plan, jf_err_t *err)
{
    return s_plan_restore_slot(self, (int) req->args[0], plan, err);
}

static int s_plan_clocks_store(privhelper_t *self, const privhelper_request_t *req,
                               privhelper_plan_t *plan, jf_err_t *err)
{
    (void) req;
    int slot = 0;
    privhelper_state_t *st = malloc(sizeof *st);
    int rc = st ? s_need_store(self, err) : jf_err_set(err, -ENOMEM, "out of memory");
    rc = rc != 0 ? rc : privhelper_store_free_slot(self->store, &slot, err);
    rc = rc != 0 ? rc : privhelper_snapshot_capture(self, st, err);
    rc = rc != 0 ? rc : s_store(plan, st, slot, err);
    plan->reply_slot = rc == 0 ? slot : 0;
    free(st);
    return rc;
}

// §9: sync first, because dirty pages are not dropped; 3 drops the page cache and the slab.
static int s_plan_drop_caches(privhelper_t *self, const privhelper_request_t *req,
                              privhelper_plan_t *plan, jf_err_t *err)
{
    (void) req;
    if (!privhelper_root_is_file(self->root, PRIVHELPER_DROP_CACHES_PATH)) {
        return jf_err_set(err, -ENOENT, "/%s is missing", PRIVHELPER_DROP_CACHES_PATH);
    }
    int rc = privhelper_plan_step(plan, PRIVHELPER_STEP_SYNC, 0, err);
    return rc != 0 ? rc : privhelper_plan_write(plan, PRIVHELPER_DROP_CACHES_PATH, 3, err);
}

static const s_planner_fn s_planners[PRIVHELPER_VERB_COUNT] = {
    [PRIVHELPER_NVPMODEL] = s_plan_nvpmodel,
    [PRIVHELPER_CPU_ONLINE] = s_plan_cpu_online,
    [PRIVHELPER_CPU_FREQ] = s_plan_cpu_freq,
    [PRIVHELPER_GPU_FREQ] = s_plan_gpu_freq,
    [PRIVHELPER_EMC_FREQ] = s_plan_emc_freq,
    [PRIVHELPER_DVFS_OFF] = s_plan_dvfs_off,
    [PRIVHELPER_DVFS_RESTORE] = s_plan_dvfs_restore,
    [PRIVHELPER_CLOCKS_STORE] = s_plan_clocks_store,
    [PRIVHELPER_RESTORE] = s_plan_restore,
    [PRIVHELPER_DROP_CACHES] = s_plan_drop_caches,
};

int privhelper_verbs_plan(privhelper_t *self, const privhelper_request_t *req,
                          privhelper_plan_t *plan, jf_err_t *err)
{
    privhelper_plan_init(plan);
    if ((unsigned) req->verb >= PRIVHELPER_VERB_COUNT) {
        return jf_err_set(err, -EINVAL, "not a request verb");
    }
    return s_planners[req->verb](self, req, plan, err);
}
