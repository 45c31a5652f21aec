/* Power modes through jetfleet-privhelper: each change is one request line, formatted by the
 * helper's own table, sent on a unix socket pair (so the helper can check who asks) to a process
 * started with an explicit argv (sudo -n and the helper on a board); then sysfs is read back. */
#include "agent_power_internal.h"

#include "jf_parse.h"
#include "privhelper_request.h"
#include "privhelper_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const s_helper_env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};

static int s_copy_argv(agent_power_t *self, const char *const *argv, jf_err_t *err)
{
    size_t n = 0;
    for (; argv && argv[n]; n++) {
        if (n == AGENT_POWER_HELPER_ARGS_MAX) {
            return jf_err_set(err, -EINVAL, "power: more than %d helper arguments",
                              AGENT_POWER_HELPER_ARGS_MAX);
        }
        self->argv[n] = strdup(argv[n]);
        if (!self->argv[n]) {
            return jf_err_set(err, -ENOMEM, "power: out of memory");
        }
    }
    if (argv && (n == 0 || self->argv[0][0] != '/')) {
        return jf_err_set(err, -EINVAL, "power: the helper command needs an absolute path");
    }
    return 0; // no argv at all: a read-only object
}

agent_power_t *agent_power_new(const agent_power_opts_t *opts, jf_err_t *err)
{
    agent_power_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "power: out of memory");
        return NULL;
    }
    self->mode_id = -1;
    self->timeout_us =
        opts->helper_timeout_us > 0 ? opts->helper_timeout_us : AGENT_POWER_HELPER_TIMEOUT_US;
    (void) snprintf(self->conf_path, sizeof self->conf_path, "%s", opts->conf_path);
    (void) snprintf(self->status_path, sizeof self->status_path, "%s",
                    opts->status_path ? opts->status_path : "");
    self->stored_pmode = -1;
    if (s_copy_argv(self, opts->helper_argv, err) != 0) {
        goto fail_destroy;
    }
    self->conf = agent_nvpmodel_load(opts->conf_path, err);
    self->sysfs = self->conf ? privhelper_root_open(opts->sysfs_root, err) : NULL;
    if (!self->sysfs) {
        goto fail_destroy;
    }
    // A board without one reads as absent in every state (STYLE.md §7), not as an error.
    (void) privhelper_paths_find_gpu_dir(self->sysfs, "", self->gpu_dir);
    (void) privhelper_paths_find_emc_cap(self->sysfs, "", self->emc_cap);
    return self;

fail_destroy:
    agent_power_destroy(&self);
    return NULL;
}

void agent_power_destroy(agent_power_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_power_t *self = *self_p;
    for (size_t i = 0; i < AGENT_POWER_HELPER_ARGS_MAX && self->argv[i]; i++) {
        free(self->argv[i]);
    }
    agent_nvpmodel_destroy(&self->conf);
    privhelper_root_destroy(&self->sysfs);
    free(self);
    *self_p = NULL;
}

const agent_nvpmodel_t *agent_power_conf(const agent_power_t *self)
{
    return self->conf;
}

static void s_first_line(char *dst, size_t size, const char *text)
{
    (void) snprintf(dst, size, "%.*s", (int) strcspn(text, "\r\n"), text);
}

// The helper's exit status as our error: 2 = rejected (nothing written), 1 = failed part-way.
static int s_outcome(const privhelper_spawn_result_t *r, const char *line, char *reply, size_t size,
                     jf_err_t *err)
{
    if (r->timed_out) {
        return jf_err_set(err, -ETIMEDOUT, "power: the helper did not answer '%s' in time", line);
    }
    if (r->exit_code == 0 && strncmp(r->out, "ok", 2) == 0) {
        s_first_line(reply, size, r->out);
        return 0;
    }
    char said[JF_ERR_MSG_MAX];
    s_first_line(said, sizeof said, r->err[0] ? r->err : r->out);
    return jf_err_set(err, r->exit_code == 2 ? -EINVAL : -EIO, "power: '%s': %s", line,
                      said[0] ? said : "the helper died without a word");
}

// Runs the helper with one request; *reply gets its "ok ..." line.
static int s_helper(const agent_power_t *self, const privhelper_request_t *req, char *reply,
                    size_t size, jf_err_t *err)
{
    char line[PRIVHELPER_LINE_MAX + 1];
    if (!self->argv[0]) {
        return jf_err_set(err, -ENOENT,
                          "power: no privileged helper configured (jetfleet-agent --privhelper)");
    }
    int rc = privhelper_request_format(req, line, sizeof line - 1, err);
    if (rc != 0) {
        return rc;
    }
    size_t n = strlen(line);
    line[n] = '\n';
    line[n + 1] = '\0';
    privhelper_spawn_opts_t o = {.argv = (const char *const *) self->argv,
                                 .envp = s_helper_env,
                                 .input = line,
                                 .input_len = n + 1,
                                 .input_socket = true,
                                 .timeout_us = self->timeout_us};
    privhelper_spawn_result_t *r = malloc(sizeof *r);
    rc = r ? privhelper_spawn_run(&o, r, err) : jf_err_set(err, -ENOMEM, "power: out of memory");
    line[n] = '\0';
    rc = rc != 0 ? rc : s_outcome(r, line, reply, size, err);
    free(r);
    return rc;
}

// The words after "ok " into note (size bytes), cut if longer.
static void s_note(char *note, size_t size, const char *reply)
{
    const char *words = strncmp(reply, "ok ", 3) == 0 ? reply + 3 : "";
    size_t n = strnlen(words, size - 1);
    memcpy(note, words, n);
    note[n] = '\0';
}

static void s_set_mode_name(agent_power_t *self, int id, const char *name)
{
    self->mode_id = id;
    (void) snprintf(self->mode_name, sizeof self->mode_name, "%s", name);
}

int agent_power_set_mode(agent_power_t *self, int mode_id, agent_power_state_t *ret_state,
                         jf_err_t *err)
{
    const agent_nvpmodel_mode_t *mode = agent_nvpmodel_mode(self->conf, mode_id);
    if (!mode) {
        return jf_err_set(err, -EINVAL, "power: mode %d is not in %s", mode_id, self->conf_path);
    }
    privhelper_request_t req = {.verb = PRIVHELPER_NVPMODEL, .n_args = 1, .args = {mode_id}};
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX] = "";
    jf_err_t helper_err = {0};
    int rc = s_helper(self, &req, reply, sizeof reply, &helper_err);
    if (rc != 0 && rc != -EIO) {
        // Refused, timed out, or no helper ran at all: only a failure while applying (-EIO, a
        // non-zero nvpmodel exit) may still have left the mode in force.
        return jf_err_set(err, rc, "%s", helper_err.msg);
    }
    agent_power_state_t st;
    int vrc = agent_power_read_state(self, &st, err);
    vrc = vrc != 0 ? vrc : agent_power_verify_mode(self, mode, &st, err);
    if (vrc != 0) {
        return rc != 0 ? jf_err_set(err, rc, "%s", helper_err.msg) : vrc;
    }
    s_set_mode_name(self, mode->id, mode->name);
    st.mode_id = mode->id;
    (void) snprintf(st.mode_name, sizeof st.mode_name, "%s", mode->name);
    if (rc != 0) {
        // nvpmodel exits 255 after some core-disabling modes that did apply (§4.3).
        (void) snprintf(st.note, sizeof st.note, "mode in force although %.160s", helper_err.msg);
    } else {
        s_note(st.note, sizeof st.note, reply);
    }
    if (ret_state) {
        *ret_state = st;
    }
    return 0;
}

bool agent_power_has_helper(const agent_power_t *self)
{
    return self->argv[0] != NULL;
}

// Modes can differ only in their EMC cap (MODE_15W_6CORE and MODE_20W_6CORE on Xavier NX), so a
// mode is in force only if the cap holds too, where the cap file is readable.
static int s_verify_emc_cap(const agent_nvpmodel_mode_t *mode, const agent_power_state_t *st,
                            jf_err_t *err)
{
    const agent_nvpmodel_clock_t *c = agent_nvpmodel_mode_clock(mode, AGENT_NVPMODEL_CLOCK_EMC, -1);
    if (!c || !st->has_emc_cap || c->max_hz == AGENT_NVPMODEL_UNSET) {
        return 0;
    }
    int64_t want = c->max_hz == AGENT_NVPMODEL_NO_LIMIT ? 0 : c->max_hz;
    if (st->emc_cap_hz != want) {
        return jf_err_set(err, -EIO,
                          "power: mode %d (%s): the EMC cap is %lld Hz, the conf sets %lld Hz "
                          "(0: no cap)",
                          mode->id, mode->name, (long long) st->emc_cap_hz, (long long) want);
    }
    return 0;
}

int agent_power_mode_in_force(agent_power_t *self, int mode_id, agent_power_state_t *ret_state,
                              jf_err_t *err)
{
    const agent_nvpmodel_mode_t *mode = agent_nvpmodel_mode(self->conf, mode_id);
    if (!mode) {
        return jf_err_set(err, -EINVAL, "power: mode %d is not in %s", mode_id, self->conf_path);
    }
    agent_power_state_t st;
    int rc = agent_power_read_state(self, &st, err);
    if (rc == 0 && st.n_clusters == 0) {
        // Without a readable cpufreq limit every mode would "hold": that proves nothing.
        rc = jf_err_set(err, -ENODATA,
                        "power: no cpufreq limits are readable, so mode %d (%s) cannot be "
                        "verified",
                        mode->id, mode->name);
    }
    rc = rc != 0 ? rc : agent_power_verify_mode(self, mode, &st, err);
    rc = rc != 0 ? rc : s_verify_emc_cap(mode, &st, err);
    if (rc != 0) {
        return rc;
    }
    s_set_mode_name(self, mode->id, mode->name);
    st.mode_id = mode->id;
    (void) snprintf(st.mode_name, sizeof st.mode_name, "%s", mode->name);
    if (ret_state) {
        *ret_state = st;
    }
    return 0;
}

// cpu_hz must be a step of every online cluster's table, gpu_hz of the GPU's.
static int s_check_custom(const agent_power_t *self, const agent_power_custom_t *c,
                          const agent_power_state_t *st, jf_err_t *err)
{
    int64_t table[AGENT_POWER_TABLE_MAX];
    size_t n = 0;
    if (c->n_cores < 1 || c->n_cores > st->n_cpus || c->cpu_hz <= 0 || c->cpu_hz % 1000 != 0 ||
        c->gpu_hz < 0 || c->emc_hz < 0) {
        return jf_err_set(err, -EINVAL,
                          "power: custom mode needs 1..%d cores, a CPU rate in whole "
                          "kHz and non-negative GPU/EMC rates",
                          st->n_cpus);
    }
    for (size_t i = 0; i < st->n_clusters; i++) {
        int cpu = st->clusters[i].first_core;
        int rc = agent_power_read_table(self, cpu, table, AGENT_POWER_TABLE_MAX, &n, err);
        if (rc != 0 || !agent_power_in_table(table, n, c->cpu_hz)) {
            return rc != 0 ? rc
                           : jf_err_set(err, -EINVAL, "power: %lld Hz is not a step of cpu%d",
                                        (long long) c->cpu_hz, cpu);
        }
    }
    if (c->gpu_hz == 0) {
        return 0;
    }
    int rc = agent_power_read_table(self, -1, table, AGENT_POWER_TABLE_MAX, &n, err);
    if (rc == 0 && !agent_power_in_table(table, n, c->gpu_hz)) {
        rc = jf_err_set(err, -EINVAL, "power: %lld Hz is not a GPU step", (long long) c->gpu_hz);
    }
    return rc;
}

// Cores to bring up first, so that no cluster is left without a core, then the ones to take down.
static int s_set_cores(const agent_power_t *self, int n_cores, const agent_power_state_t *st,
                       jf_err_t *err)
{
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX];
    for (int up = 1; up >= 0; up--) {
        for (int cpu = 1; cpu < st->n_cpus; cpu++) {
            bool want = cpu < n_cores, now = (st->online_mask >> cpu) & 1;
            if (want == now || (int) want != up) {
                continue;
            }
            privhelper_request_t req = {
                .verb = PRIVHELPER_CPU_ONLINE, .n_args = 2, .args = {cpu, up}};
            int rc = s_helper(self, &req, reply, sizeof reply, err);
            if (rc != 0) {
                return rc;
            }
        }
    }
    return 0;
}

static int s_set_clocks(const agent_power_t *self, const agent_power_custom_t *c,
                        const agent_power_state_t *st, char *reply, size_t size, jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < st->n_clusters; i++) {
        privhelper_request_t req = {.verb = PRIVHELPER_CPU_FREQ,
                                    .n_args = 2,
                                    .args = {st->clusters[i].first_core, c->cpu_hz / 1000}};
        rc = s_helper(self, &req, reply, size, err);
    }
    if (rc == 0 && c->gpu_hz > 0) {
        privhelper_request_t req = {.verb = PRIVHELPER_GPU_FREQ, .n_args = 1, .args = {c->gpu_hz}};
        rc = s_helper(self, &req, reply, size, err);
    }
    if (rc == 0 && c->emc_hz > 0) {
        privhelper_request_t req = {.verb = PRIVHELPER_EMC_FREQ, .n_args = 1, .args = {c->emc_hz}};
        rc = s_helper(self, &req, reply, size, err);
    }
    return rc;
}

int agent_power_set_custom(agent_power_t *self, const agent_power_custom_t *custom,
                           agent_power_state_t *ret_state, jf_err_t *err)
{
    agent_power_state_t st;
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX] = "";
    int rc = agent_power_read_state(self, &st, err);
    rc = rc != 0 ? rc : s_check_custom(self, custom, &st, err);
    rc = rc != 0 ? rc : s_set_cores(self, custom->n_cores, &st, err);
    // The clusters that are online now, with the tables of the cores just brought up.
    rc = rc != 0 ? rc : agent_power_read_state(self, &st, err);
    rc = rc != 0 ? rc : s_check_custom(self, custom, &st, err);
    rc = rc != 0 ? rc : s_set_clocks(self, custom, &st, reply, sizeof reply, err);
    if (rc == 0) {
        s_set_mode_name(self, -1, "custom");
    }
    rc = rc != 0 ? rc : agent_power_read_state(self, &st, err);
    rc = rc != 0 ? rc : agent_power_verify_custom(custom, &st, err);
    if (rc == 0 && custom->emc_hz > 0) {
        s_note(st.note, sizeof st.note, reply);
    }
    if (rc == 0 && ret_state) {
        *ret_state = st;
    }
    return rc;
}

int agent_power_dvfs_off(agent_power_t *self, agent_power_state_t *ret_state, jf_err_t *err)
{
    privhelper_request_t req = {.verb = PRIVHELPER_DVFS_OFF};
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX] = "";
    agent_power_state_t st;
    int rc = s_helper(self, &req, reply, sizeof reply, err);
    rc = rc != 0 ? rc : agent_power_read_state(self, &st, err);
    if (rc == 0 && !st.dvfs_off) {
        rc = jf_err_set(err, -EIO,
                        "power: after dvfs off, a cluster or the GPU still has min < max");
    }
    if (rc == 0 && ret_state) {
        s_note(st.note, sizeof st.note, reply);
        *ret_state = st;
    }
    return rc;
}

int agent_power_dvfs_restore(agent_power_t *self, jf_err_t *err)
{
    privhelper_request_t req = {.verb = PRIVHELPER_DVFS_RESTORE};
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX];
    return s_helper(self, &req, reply, sizeof reply, err);
}

// The mode nvpmodel's status file names, into *ret_id. 0, -ENOENT when no status path was
// given or the file is missing, -errno when unreadable, -EINVAL when it names no mode.
static int s_read_status(const agent_power_t *self, int *ret_id, jf_err_t *err)
{
    char text[AGENT_NVPMODEL_STATUS_MAX];
    if (!self->status_path[0]) {
        return jf_err_set(err, -ENOENT, "power: no nvpmodel status file configured");
    }
    int fd = open(self->status_path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text) : -1;
    int e = errno;
    if (fd >= 0) {
        (void) close(fd); // read-only
    }
    if (n < 0) {
        return jf_err_set(err, -e, "power: cannot read %.300s: %s", self->status_path,
                          strerror(e));
    }
    int rc = agent_nvpmodel_parse_status(text, (size_t) n, ret_id, err);
    if (rc != 0) {
        (void) jf_err_prefix(err, "power: %.300s", self->status_path);
    }
    return rc;
}

int agent_power_store(agent_power_t *self, jf_err_t *err)
{
    if (self->stored_slot != 0) {
        return jf_err_set(err, -EBUSY, "power: state %d is stored already; restore it first",
                          self->stored_slot);
    }
    privhelper_request_t req = {.verb = PRIVHELPER_CLOCKS_STORE};
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX] = "";
    int rc = agent_power_read_state(self, &self->stored, err);
    rc = rc != 0 ? rc : s_helper(self, &req, reply, sizeof reply, err);
    const char *slot = strstr(reply, "state=");
    int64_t n = 0;
    if (rc == 0 && (!slot || jf_parse_i64(slot + 6, 1, PRIVHELPER_STATES_MAX, &n, NULL) != 0)) {
        rc = jf_err_set(err, -EIO, "power: clocks-store replied '%.64s', not 'ok state=N'", reply);
    }
    self->stored_slot = rc == 0 ? (int) n : 0;
    // The helper saved the same mode from the same file (it refuses a status naming none); what
    // the agent reads is only for checking the restore, so an unreadable file skips that check.
    if (rc == 0 && s_read_status(self, &self->stored_pmode, NULL) != 0) {
        self->stored_pmode = -1;
    }
    return rc;
}

bool agent_power_has_stored(const agent_power_t *self)
{
    return self->stored_slot != 0;
}

// After a restore: nvpmodel's status names the mode stored with the clocks again.
static int s_verify_status(agent_power_t *self, jf_err_t *err)
{
    int now = -1;
    int rc = s_read_status(self, &now, err);
    if (rc == 0 && now != self->stored_pmode) {
        rc = jf_err_set(err, -EIO,
                        "power: after restore, %.300s names nvpmodel mode %d, not the stored %d",
                        self->status_path, now, self->stored_pmode);
    }
    const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode(self->conf, self->stored_pmode);
    if (rc == 0 && m) {
        s_set_mode_name(self, m->id, m->name); // the helper re-ran nvpmodel -m for it
    }
    return rc;
}

int agent_power_restore(agent_power_t *self, agent_power_state_t *ret_state, jf_err_t *err)
{
    if (self->stored_slot == 0) {
        return jf_err_set(err, -ENOENT, "power: no stored state to restore");
    }
    privhelper_request_t req = {
        .verb = PRIVHELPER_RESTORE, .n_args = 1, .args = {self->stored_slot}};
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX];
    agent_power_state_t st;
    int rc = s_helper(self, &req, reply, sizeof reply, err);
    if (rc == -EINVAL && self->stored_adopted) {
        // Refused: the slot an earlier agent process stored is gone (that process restored it
        // at its exit) or was never this board's. Retrying cannot help: forget it.
        self->stored_slot = 0;
        self->stored_adopted = false;
        return jf_err_prefix(err, "power: the state an earlier agent process stored is not "
                                  "there any more; forgotten");
    }
    if (rc != 0) {
        return rc; // the helper keeps the slot when a restore fails part-way: try again later
    }
    self->stored_slot = 0;
    self->stored_adopted = false;
    s_set_mode_name(self, self->stored.mode_id, self->stored.mode_name);
    rc = agent_power_read_state(self, &st, err);
    rc = rc != 0 ? rc : agent_power_verify_same(&self->stored, &st, err);
    rc = rc != 0 || self->stored_pmode < 0 ? rc : s_verify_status(self, err);
    self->stored_pmode = -1;
    if (rc == 0 && ret_state) {
        st.mode_id = self->mode_id;
        (void) snprintf(st.mode_name, sizeof st.mode_name, "%s", self->mode_name);
        *ret_state = st;
    }
    return rc;
}

int agent_power_drop_caches(agent_power_t *self, jf_err_t *err)
{
    privhelper_request_t req = {.verb = PRIVHELPER_DROP_CACHES};
    char reply[PRIVHELPER_SPAWN_OUTPUT_MAX];
    return s_helper(self, &req, reply, sizeof reply, err);
}
