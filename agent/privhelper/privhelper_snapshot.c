/* The state the helper saves and writes back, read from the root and planned back onto it
 * (jetson-platforms.md §5.1: what jetson_clocks stores), and the checks the planners share. */
#include "privhelper_internal.h"

#include "agent_nvpmodel.h"

#include <errno.h>
#include <string.h>

#define SYS PRIVHELPER_SYSFS_PREFIX

bool privhelper_snapshot_is_online(const privhelper_t *self, int cpu)
{
    char rel[PRIVHELPER_PATH_MAX];
    int64_t v = 0;
    if (privhelper_paths_cpu(rel, SYS, cpu, PRIVHELPER_CPU_ONLINE_FILE) != 0) {
        return false;
    }
    if (!privhelper_root_is_file(self->root, rel)) {
        return cpu == 0; // many kernels give cpu0 no online file: it cannot go offline
    }
    return privhelper_root_read_i64(self->root, rel, &v, NULL) == 0 && v == 1;
}

// 0 if cpu is the first core of its cpufreq policy (related_cpus), online or not.
static int s_check_first_core(const privhelper_t *self, int cpu, jf_err_t *err)
{
    char rel[PRIVHELPER_PATH_MAX];
    int64_t cpus[PRIVHELPER_TABLE_MAX];
    size_t n = 0;
    int rc = privhelper_paths_cpu(rel, SYS, cpu, PRIVHELPER_CPU_RELATED);
    rc = rc != 0 ? rc
                 : privhelper_root_read_list(self->root, rel, cpus, PRIVHELPER_TABLE_MAX, &n, err);
    if (rc == -ENOENT) {
        return jf_err_set(err, -EINVAL, "cpu%d has no cpufreq policy on this board", cpu);
    }
    if (rc != 0) {
        return rc;
    }
    if (n == 0 || cpus[0] != cpu) {
        return jf_err_set(err, -EINVAL, "cpu%d is not the first core of its cluster", cpu);
    }
    return 0;
}

int privhelper_snapshot_check_policy(const privhelper_t *self, int cpu, jf_err_t *err)
{
    int rc = s_check_first_core(self, cpu, err);
    if (rc != 0) {
        return rc;
    }
    if (!privhelper_snapshot_is_online(self, cpu)) {
        return jf_err_set(err, -EINVAL, "cpu%d is offline", cpu);
    }
    return 0;
}

int privhelper_snapshot_check_step(const privhelper_t *self, const char *rel, int64_t value,
                                   const char *unit, jf_err_t *err)
{
    int64_t steps[PRIVHELPER_TABLE_MAX];
    size_t n = 0;
    int rc = privhelper_root_read_list(self->root, rel, steps, PRIVHELPER_TABLE_MAX, &n, err);
    if (rc != 0) {
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        if (steps[i] == value) {
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "%lld %s is not in /%s", (long long) value, unit, rel);
}

static int s_read(const privhelper_t *self, const char *rel, int64_t *ret, jf_err_t *err)
{
    return privhelper_root_read_i64(self->root, rel, ret, err);
}

static int s_capture_policy(const privhelper_t *self, int cpu, privhelper_state_t *st,
                            jf_err_t *err)
{
    if (privhelper_snapshot_check_policy(self, cpu, NULL) != 0) {
        return 0; // not the first core of a policy: its cluster is saved through that core
    }
    char min_rel[PRIVHELPER_PATH_MAX], max_rel[PRIVHELPER_PATH_MAX];
    privhelper_policy_t p = {.cpu = cpu};
    int rc = privhelper_paths_cpu(min_rel, SYS, cpu, PRIVHELPER_CPU_MIN_KHZ);
    rc = rc != 0 ? rc : privhelper_paths_cpu(max_rel, SYS, cpu, PRIVHELPER_CPU_MAX_KHZ);
    rc = rc != 0 ? rc : s_read(self, min_rel, &p.min_khz, err);
    rc = rc != 0 ? rc : s_read(self, max_rel, &p.max_khz, err);
    if (rc == 0) {
        st->policies[st->n_policies++] = p;
    }
    return rc;
}

static int s_capture_idle(const privhelper_t *self, int cpu, privhelper_state_t *st, jf_err_t *err)
{
    for (int k = 0; k < PRIVHELPER_IDLE_STATES_MAX; k++) {
        char rel[PRIVHELPER_PATH_MAX];
        int64_t v = 0;
        if (privhelper_paths_cpu_idle(rel, SYS, cpu, k) != 0 ||
            !privhelper_root_is_file(self->root, rel)) {
            continue;
        }
        int rc = s_read(self, rel, &v, err);
        if (rc != 0) {
            return rc;
        }
        st->idle[st->n_idle++] = (privhelper_idle_t){cpu, k, v != 0};
    }
    return 0;
}

static int s_capture_cpus(const privhelper_t *self, privhelper_state_t *st, jf_err_t *err)
{
    for (int cpu = 0; cpu < PRIVHELPER_CPUS_MAX; cpu++) {
        char rel[PRIVHELPER_PATH_MAX];
        int64_t v = 0;
        int rc = privhelper_paths_cpu(rel, SYS, cpu, PRIVHELPER_CPU_ONLINE_FILE);
        bool has = rc == 0 && privhelper_root_is_file(self->root, rel);
        rc = has ? s_read(self, rel, &v, err) : rc;
        if (rc != 0) {
            return rc;
        }
        if (has && cpu > 0) {
            st->online_known |= UINT64_C(1) << cpu;
            st->online |= (uint64_t) (v == 1) << cpu;
        }
        if (has ? v != 1 : cpu != 0) {
            continue; // offline or absent: nothing of it can be read or needs saving
        }
        rc = s_capture_policy(self, cpu, st, err);
        rc = rc != 0 ? rc : s_capture_idle(self, cpu, st, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int s_capture_devices(const privhelper_t *self, privhelper_state_t *st, jf_err_t *err)
{
    char a[PRIVHELPER_PATH_MAX], b[PRIVHELPER_PATH_MAX];
    int rc = 0;
    if (self->gpu_dir[0]) {
        st->has_gpu = true;
        rc = privhelper_paths_devfreq(a, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MIN_HZ);
        rc = rc != 0 ? rc
                     : privhelper_paths_devfreq(b, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MAX_HZ);
        rc = rc != 0 ? rc : s_read(self, a, &st->gpu_min_hz, err);
        rc = rc != 0 ? rc : s_read(self, b, &st->gpu_max_hz, err);
    }
    int64_t v = 0;
    if (rc == 0 && privhelper_paths_sys(a, SYS, PRIVHELPER_GPU_RAILGATE_PATH) == 0 &&
        privhelper_root_is_file(self->root, a)) {
        st->has_railgate = true;
        rc = s_read(self, a, &v, err);
        st->railgate = v != 0;
    }
    if (rc == 0 && self->emc_cap[0]) {
        st->has_emc_cap = true;
        rc = s_read(self, self->emc_cap, &st->emc_cap_hz, err);
    }
    if (rc == 0 && self->soc && privhelper_paths_sys(a, SYS, self->soc->emc_lock) == 0 &&
        privhelper_paths_sys(b, SYS, self->soc->emc_rate) == 0 &&
        privhelper_root_is_file(self->root, a) && privhelper_root_is_file(self->root, b)) {
        st->has_emc_lock = true;
        rc = s_read(self, a, &v, err);
        st->emc_locked = v != 0;
        rc = rc != 0 ? rc : s_read(self, b, &st->emc_rate_hz, err);
    }
    return rc;
}

// The mode nvpmodel's status file names (§4.1). No file: no mode was ever set (the conf's
// default is in force), and restore leaves nvpmodel alone. A file that names no mode is an error:
// the state could not be put back whole.
static int s_capture_pmode(const privhelper_t *self, privhelper_state_t *st, jf_err_t *err)
{
    char text[AGENT_NVPMODEL_STATUS_MAX];
    size_t len = 0;
    int rc = privhelper_root_read(self->root, PRIVHELPER_STATUS_PATH, text, sizeof text, &len, err);
    if (rc == -ENOENT) {
        return 0;
    }
    rc = rc != 0 ? rc : agent_nvpmodel_parse_status(text, len, &st->pmode, err);
    if (rc != 0) {
        (void) jf_err_prefix(err, "cannot tell the nvpmodel mode in force from /%s",
                             PRIVHELPER_STATUS_PATH);
        return rc;
    }
    st->has_pmode = true;
    return 0;
}

int privhelper_snapshot_capture(const privhelper_t *self, privhelper_state_t *ret_st, jf_err_t *err)
{
    memset(ret_st, 0, sizeof *ret_st);
    int rc = s_capture_pmode(self, ret_st, err);
    rc = rc != 0 ? rc : s_capture_cpus(self, ret_st, err);
    return rc != 0 ? rc : s_capture_devices(self, ret_st, err);
}

// A saved policy's limits, each a step of its table, as cpu-freq checks a request. The core need
// not be online now: the restore brings it online before it writes the limits.
static int s_check_policy(const privhelper_t *self, const privhelper_policy_t *p, jf_err_t *err)
{
    char table[PRIVHELPER_PATH_MAX];
    int rc = s_check_first_core(self, p->cpu, err);
    rc = rc != 0 ? rc : privhelper_paths_cpu(table, SYS, p->cpu, PRIVHELPER_CPU_TABLE_KHZ);
    rc = rc != 0 ? rc : privhelper_snapshot_check_step(self, table, p->min_khz, "kHz", err);
    return rc != 0 ? rc : privhelper_snapshot_check_step(self, table, p->max_khz, "kHz", err);
}

// An EMC rate of a saved state: one of the SoC's steps, as emc-freq checks a request.
static int s_check_emc(const privhelper_t *self, int64_t hz, const char *what, jf_err_t *err)
{
    if (!self->soc) {
        return jf_err_set(err, -EINVAL, "%s %lld Hz: unknown SoC in /%s, so no EMC table", what,
                          (long long) hz, PRIVHELPER_COMPATIBLE_PATH);
    }
    if (!privhelper_paths_is_emc_step(self->soc, hz)) {
        return jf_err_set(err, -EINVAL, "%s %lld Hz is not an EMC rate of %s", what, (long long) hz,
                          self->soc->compatible);
    }
    return 0;
}

int privhelper_snapshot_check(const privhelper_t *self, const privhelper_state_t *st, jf_err_t *err)
{
    char table[PRIVHELPER_PATH_MAX];
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < st->n_policies; i++) {
        rc = s_check_policy(self, &st->policies[i], err);
    }
    if (rc == 0 && st->has_gpu) {
        rc = self->gpu_dir[0] ? 0 : jf_err_set(err, -EINVAL, "the board has no GPU node now");
        rc = rc != 0
                 ? rc
                 : privhelper_paths_devfreq(table, "", self->gpu_dir, PRIVHELPER_DEVFREQ_TABLE_HZ);
        rc = rc != 0 ? rc : privhelper_snapshot_check_step(self, table, st->gpu_min_hz, "Hz", err);
        rc = rc != 0 ? rc : privhelper_snapshot_check_step(self, table, st->gpu_max_hz, "Hz", err);
    }
    // An EMC cap of 0 is nvpmodel's "no cap".
    if (rc == 0 && st->has_emc_cap && st->emc_cap_hz != 0) {
        rc = s_check_emc(self, st->emc_cap_hz, "EMC cap", err);
    }
    if (rc == 0 && st->has_emc_lock) {
        rc = s_check_emc(self, st->emc_rate_hz, "EMC rate", err);
    }
    return rc;
}

// A WRITE of a saved value, to a file that must exist now.
static int s_put(const privhelper_t *self, privhelper_plan_t *plan, const char *rel, int64_t v,
                 jf_err_t *err)
{
    if (!privhelper_root_is_file(self->root, rel)) {
        return jf_err_set(err, -EINVAL, "the saved state names /%s, which is not a file here", rel);
    }
    return privhelper_plan_write(plan, rel, v, err);
}

static int s_range(const privhelper_t *self, privhelper_plan_t *plan, const char *min_rel,
                   const char *max_rel, int64_t min, int64_t max, jf_err_t *err)
{
    if (!privhelper_root_is_file(self->root, min_rel) ||
        !privhelper_root_is_file(self->root, max_rel)) {
        return jf_err_set(err, -EINVAL, "the saved state names /%s, which is not a file here",
                          max_rel);
    }
    return privhelper_plan_range(plan, min_rel, max_rel, min, max, err);
}

// Cores that must come back online first, so their policies exist when their limits are set;
// then the ones to take down.
static int s_plan_online(const privhelper_t *self, const privhelper_state_t *st,
                         privhelper_plan_t *plan, jf_err_t *err)
{
    for (int pass = 1; pass >= 0; pass--) {
        for (int cpu = 1; cpu < PRIVHELPER_CPUS_MAX; cpu++) {
            char rel[PRIVHELPER_PATH_MAX];
            bool known = (st->online_known >> cpu) & 1;
            if (!known || (int) ((st->online >> cpu) & 1) != pass) {
                continue;
            }
            int rc = privhelper_paths_cpu(rel, SYS, cpu, PRIVHELPER_CPU_ONLINE_FILE);
            rc = rc != 0 ? rc : s_put(self, plan, rel, pass, err);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

static int s_plan_cpus(const privhelper_t *self, const privhelper_state_t *st,
                       privhelper_plan_t *plan, jf_err_t *err)
{
    int rc = s_plan_online(self, st, plan, err);
    for (size_t i = 0; rc == 0 && i < st->n_policies; i++) {
        const privhelper_policy_t *p = &st->policies[i];
        char min_rel[PRIVHELPER_PATH_MAX], max_rel[PRIVHELPER_PATH_MAX];
        rc = privhelper_paths_policy(min_rel, SYS, p->cpu, PRIVHELPER_CPU_MIN_KHZ);
        rc = rc != 0 ? rc : privhelper_paths_policy(max_rel, SYS, p->cpu, PRIVHELPER_CPU_MAX_KHZ);
        rc = rc != 0 ? rc : s_range(self, plan, min_rel, max_rel, p->min_khz, p->max_khz, err);
    }
    for (size_t i = 0; rc == 0 && i < st->n_idle; i++) {
        char rel[PRIVHELPER_PATH_MAX];
        rc = privhelper_paths_cpu_idle(rel, SYS, st->idle[i].cpu, st->idle[i].state);
        rc = rc != 0 ? rc : s_put(self, plan, rel, st->idle[i].disable, err);
    }
    return rc;
}

static int s_plan_emc(const privhelper_t *self, const privhelper_state_t *st,
                      privhelper_plan_t *plan, jf_err_t *err)
{
    char rel[PRIVHELPER_PATH_MAX], rate_rel[PRIVHELPER_PATH_MAX];
    int rc = 0;
    if (st->has_emc_cap) {
        rc = self->emc_cap[0] ? s_put(self, plan, self->emc_cap, st->emc_cap_hz, err)
                              : jf_err_set(err, -EINVAL,
                                           "the saved state has an EMC cap, the "
                                           "board has no cap file");
    }
    if (rc != 0 || !st->has_emc_lock) {
        return rc;
    }
    if (!self->soc || privhelper_paths_sys(rel, SYS, self->soc->emc_lock) != 0 ||
        privhelper_paths_sys(rate_rel, SYS, self->soc->emc_rate) != 0) {
        return jf_err_set(err, -EINVAL, "the saved state has an EMC lock, the SoC is unknown");
    }
    if (!st->emc_locked) {
        // Like jetson_clocks --restore, which writes back every value it stored: the rate,
        // then the lock flag.
        rc = s_put(self, plan, rate_rel, st->emc_rate_hz, err);
        return rc != 0 ? rc : s_put(self, plan, rel, 0, err);
    }
    bool locked = false;
    rc = privhelper_snapshot_emc_lock(self, plan, st->emc_rate_hz, &locked, err);
    return rc != 0 || locked ? rc : jf_err_set(err, -EINVAL, "the EMC lock files are gone");
}

int privhelper_snapshot_plan(const privhelper_t *self, const privhelper_state_t *st,
                             privhelper_plan_t *plan, jf_err_t *err)
{
    char a[PRIVHELPER_PATH_MAX], b[PRIVHELPER_PATH_MAX];
    int rc = s_plan_cpus(self, st, plan, err);
    if (rc == 0 && st->has_gpu) {
        rc = self->gpu_dir[0] ? 0 : jf_err_set(err, -EINVAL, "the board has no GPU node now");
        rc = rc != 0 ? rc
                     : privhelper_paths_devfreq(a, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MIN_HZ);
        rc = rc != 0 ? rc
                     : privhelper_paths_devfreq(b, "", self->gpu_dir, PRIVHELPER_DEVFREQ_MAX_HZ);
        rc = rc != 0 ? rc : s_range(self, plan, a, b, st->gpu_min_hz, st->gpu_max_hz, err);
    }
    if (rc == 0 && st->has_railgate) {
        rc = privhelper_paths_sys(a, SYS, PRIVHELPER_GPU_RAILGATE_PATH);
        rc = rc != 0 ? rc : s_put(self, plan, a, st->railgate, err);
    }
    return rc != 0 ? rc : s_plan_emc(self, st, plan, err);
}

int privhelper_snapshot_emc_lock(const privhelper_t *self, privhelper_plan_t *plan, int64_t rate_hz,
                                 bool *ret_locked, jf_err_t *err)
{
    char rate_rel[PRIVHELPER_PATH_MAX], lock_rel[PRIVHELPER_PATH_MAX];
    *ret_locked = false;
    if (!self->soc || privhelper_paths_sys(rate_rel, SYS, self->soc->emc_rate) != 0 ||
        privhelper_paths_sys(lock_rel, SYS, self->soc->emc_lock) != 0 ||
        !privhelper_root_is_file(self->root, rate_rel) ||
        !privhelper_root_is_file(self->root, lock_rel)) {
        return 0; // debugfs is not mounted (or not ours to see): the cap alone must do
    }
    // jetson_clocks' order (§5.1): T210 sets the rate, then locks; T186 and later lock first.
    bool rate_first = self->soc->rate_before_lock;
    int rc = privhelper_plan_write(plan, rate_first ? rate_rel : lock_rel, rate_first ? rate_hz : 1,
                                   err);
    rc = rc != 0 ? rc
                 : privhelper_plan_write(plan, rate_first ? lock_rel : rate_rel,
                                         rate_first ? 1 : rate_hz, err);
    *ret_locked = rc == 0;
    return rc;
}
