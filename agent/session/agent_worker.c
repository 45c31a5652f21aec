/* Run worker actor: storage check, power mode, cache drop, residency and restore, off the loop.
 * Pipe messages, loop -> actor: "PREPARE" + agent_worker_prepare_t, "RESIDENCY" + a residency
 * job, "RESTORE", "$TERM"; actor -> loop: "REPLY" + agent_worker_reply_t. Jobs run in order, so
 * a restore queued after a run is done before the next run is prepared. */
#include "agent_worker.h"

#include "jf_units.h"

#include <czmq.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_CMD_PREPARE   "PREPARE"
#define S_CMD_RESIDENCY "RESIDENCY"
#define S_CMD_RESTORE   "RESTORE"
#define S_CMD_ADOPT     "ADOPT"
#define S_EV_REPLY      "REPLY"
#define S_LOCAL_MEDIUM  "local" // a host's own disk: wherever the dataset is, it is right

typedef struct s_residency_job {
    char run[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    int epoch;
    char dir[PATH_MAX];
} s_residency_job_t;

typedef struct s_adopt_job {
    char stored_json[AGENT_WORKER_POWER_JSON_MAX + 1]; // agent_power_stored_json text
    bool dvfs_off;
} s_adopt_job_t;

// The actor's state: made by agent_worker_new, then touched only by the actor's thread.
typedef struct s_state {
    agent_power_t *power;                         // owned; NULL: the platform has none
    char *argv[AGENT_WORKER_HELPER_ARGS_MAX + 1]; // owned copies; argv[0] NULL: no helper
    char proc_root[PATH_MAX];
    char sysfs_root[PATH_MAX];
    bool dvfs_off;                                // DVFS was turned off for the run in progress
} s_state_t;

struct agent_worker {
    zactor_t *actor; // owned
};

static void s_note(agent_worker_reply_t *r, const char *what, const char *msg)
{
    size_t len = strlen(r->detail);
    (void) snprintf(r->detail + len, sizeof r->detail - len, "%s%s: %s", len ? "; " : "", what,
                    msg);
}

static void s_refuse(agent_worker_reply_t *r, jf_fail_reason_t reason, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void s_refuse(agent_worker_reply_t *r, jf_fail_reason_t reason, const char *fmt, ...)
{
    r->ok = false;
    r->reason = reason;
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(r->detail, sizeof r->detail, fmt, ap);
    va_end(ap);
}

// ---------------------------------------------------------------------------------------------
// Preparing a run

// The dataset must be on the medium's configured mount; `local` (a host's own disk) and a medium
// without a configured mount (--storage) are located but not checked.
static int s_storage(const s_state_t *st, const agent_worker_prepare_t *job,
                     agent_worker_reply_t *r)
{
    agent_storage_roots_t roots = {.proc_root = st->proc_root, .sysfs_root = st->sysfs_root};
    jf_err_t err = {0};
    bool check = job->mount[0] && strcmp(job->medium, S_LOCAL_MEDIUM) != 0;
    if (check) {
        agent_storage_medium_t m = {.name = job->medium, .mount = job->mount};
        if (agent_storage_check(&roots, job->dataset_dir, &m, &r->mount, &err) != 0) {
            s_refuse(r, JF_FAIL_INFEASIBLE, "storage: %s", err.msg);
            return -EXDEV;
        }
        r->has_mount = r->storage_checked = true;
        return 0;
    }
    r->has_mount = agent_storage_locate(&roots, job->dataset_dir, &r->mount, &err) == 0;
    if (!r->has_mount) {
        s_note(r, "storage: the dataset's mount is unknown", err.msg);
    }
    return 0;
}

static int s_power_json(agent_worker_reply_t *r, const agent_power_state_t *ps)
{
    json_t *j = agent_power_state_json(ps);
    char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!text || strlen(text) > AGENT_WORKER_POWER_JSON_MAX) {
        free(text);
        s_refuse(r, JF_FAIL_CRASHED, "power: %s", "cannot record the power state");
        return -ENOMEM;
    }
    (void) snprintf(r->power_json, sizeof r->power_json, "%s", text);
    r->has_power = true;
    free(text);
    return 0;
}

// After the mode: the custom point, then DVFS off (which pins at the caps the point set), each
// read back; *ps becomes the state in force at the end.
static int s_power_extras(s_state_t *st, const agent_worker_prepare_t *job,
                          agent_worker_reply_t *r, agent_power_state_t *ps)
{
    jf_err_t err = {0};
    const jf_run_custom_t *c = &job->custom;
    agent_power_custom_t point = {
        .n_cores = c->n_cores, .cpu_hz = c->cpu_hz, .gpu_hz = c->gpu_hz, .emc_hz = c->emc_hz};
    if (c->n_cores != 0 && agent_power_set_custom(st->power, &point, ps, &err) != 0) {
        s_refuse(r, JF_FAIL_INFEASIBLE, "cannot set the custom power mode: %s", err.msg);
        return -EIO;
    }
    if (job->dvfs_off) {
        st->dvfs_off = true; // from the request on: a failure part-way still needs the restore
        if (agent_power_dvfs_off(st->power, ps, &err) != 0) {
            s_refuse(r, JF_FAIL_INFEASIBLE, "cannot turn DVFS off: %s", err.msg);
            return -EIO;
        }
    }
    return s_power_json(r, ps);
}

// With a helper: store the state in force, set the mode, read it back. Without one: the mode
// must already be in force (read back), since nothing may be changed.
static int s_power(s_state_t *st, const agent_worker_prepare_t *job, agent_worker_reply_t *r)
{
    agent_power_state_t ps;
    jf_err_t err = {0};
    if (!st->power) {
        return 0;
    }
    bool extras = job->custom.n_cores != 0 || job->dvfs_off;
    if (!agent_power_has_helper(st->power) && extras) {
        s_refuse(r, JF_FAIL_INFEASIBLE,
                 "no privileged helper configured (jetfleet-agent --privhelper), so a custom "
                 "power mode or DVFS off cannot be set");
        return -EPERM;
    }
    if (!agent_power_has_helper(st->power)) {
        if (agent_power_mode_in_force(st->power, job->power_mode_id, &ps, &err) != 0) {
            s_refuse(r, JF_FAIL_INFEASIBLE,
                     "no privileged helper configured (jetfleet-agent --privhelper), so the "
                     "power mode cannot be set, and it is not in force: %s",
                     err.msg);
            return -EPERM;
        }
        (void) snprintf(ps.note, sizeof ps.note, "%s",
                        "already in force; nothing changed (no privileged helper)");
        return s_power_json(r, &ps);
    }
    // A state still stored (a restore that failed) is the board's earlier state: keep it.
    if (!agent_power_has_stored(st->power) && agent_power_store(st->power, &err) != 0) {
        s_refuse(r, JF_FAIL_INFEASIBLE, "cannot store the clock state: %s", err.msg);
        return -EIO;
    }
    r->power_changed = true;
    if (agent_power_set_mode(st->power, job->power_mode_id, &ps, &err) != 0) {
        s_refuse(r, JF_FAIL_INFEASIBLE, "cannot set the power mode: %s", err.msg);
        return -EIO;
    }
    return s_power_extras(st, job, r, &ps);
}

static int s_drop(const s_state_t *st, const agent_worker_prepare_t *job, agent_worker_reply_t *r)
{
    jf_err_t err = {0};
    agent_residency_t ev;
    if (!job->drop_caches) {
        r->drop = JF_MEASURE_DROP_NONE;
        return 0;
    }
    if (st->argv[0]) {
        r->drop = JF_MEASURE_DROP_HELPER;
        if (agent_storage_drop_caches_argv((const char *const *) st->argv,
                                           AGENT_STORAGE_DROP_TIMEOUT_US, &err) == 0) {
            return 0;
        }
    } else {
        // Unprivileged: evict the dataset's own pages, which is the cold start a run needs.
        r->drop = JF_MEASURE_DROP_FADVISE;
        if (agent_residency_evict(job->dataset_dir, AGENT_WORKER_FILES_MAX, &ev, &err) == 0) {
            return 0;
        }
    }
    s_refuse(r, JF_FAIL_INFEASIBLE, "cannot drop the page cache: %s", err.msg);
    return -EIO;
}

static void s_measure(const char *dir, agent_worker_reply_t *r)
{
    jf_err_t err = {0};
    r->has_residency =
        agent_residency_measure(dir, AGENT_WORKER_FILES_MAX, &r->residency, &err) == 0;
    if (!r->has_residency) {
        s_note(r, "residency not measured", err.msg);
    }
}

static void s_restore(s_state_t *st, agent_worker_reply_t *r)
{
    jf_err_t err = {0};
    r->ok = true;
    // DVFS first: the helper keeps the state from before dvfs off until dvfs restore, and a
    // stale one would be what the next run's dvfs off comes back to. The stored state below is
    // written back whatever this gives.
    if (st->power && st->dvfs_off && agent_power_dvfs_restore(st->power, &err) != 0) {
        r->ok = false;
        s_note(r, "dvfs restore", err.msg);
    }
    st->dvfs_off = false;
    r->power_changed = st->power && agent_power_has_stored(st->power);
    if (r->power_changed && agent_power_restore(st->power, NULL, &err) != 0) {
        r->ok = false;
        s_note(r, "restore", err.msg);
    }
}

// The stored state's record for an agent restarted during the run (agent_worker_adopt).
static void s_stored_record(const s_state_t *st, agent_worker_reply_t *r)
{
    json_t *o = r->power_changed && st->power ? agent_power_stored_json(st->power) : NULL;
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    if (text && strlen(text) < sizeof r->stored_json) {
        memcpy(r->stored_json, text, strlen(text) + 1);
    } else if (r->power_changed) {
        s_note(r, "power", "the stored clock state cannot be recorded for a restarted agent");
    }
    free(text);
    json_decref(o);
}

static void s_prepare(s_state_t *st, const agent_worker_prepare_t *job, agent_worker_reply_t *r)
{
    *r = (agent_worker_reply_t){.kind = AGENT_WORKER_PREPARED, .attempt = job->attempt};
    memcpy(r->run, job->run, sizeof r->run);
    if (s_storage(st, job, r) != 0) {
        return;
    }
    if (s_power(st, job, r) != 0 || s_drop(st, job, r) != 0) {
        agent_worker_reply_t undo = {0};
        s_restore(st, &undo); // the run does not happen: the board goes back as it was
        if (!undo.ok) {
            s_note(r, "and restoring the clock state failed", undo.detail);
        }
        return;
    }
    r->ok = true;
    r->dvfs_off = st->dvfs_off;
    s_stored_record(st, r);
    s_measure(job->dataset_dir, r);
}

// A state stored before another agent process's run, taken over for the restore after it.
static void s_adopt(s_state_t *st, const s_adopt_job_t *job, agent_worker_reply_t *r)
{
    *r = (agent_worker_reply_t){.kind = AGENT_WORKER_ADOPTED};
    jf_err_t err = {0};
    json_error_t jerr;
    json_t *o = json_loads(job->stored_json, 0, &jerr);
    int rc = !st->power ? jf_err_set(&err, -ENOENT, "this board has no power handle")
             : !o       ? jf_err_set(&err, -EINVAL, "power: stored record: %s", jerr.text)
                        : agent_power_adopt(st->power, o, &err);
    json_decref(o);
    r->ok = rc == 0;
    if (rc == 0) {
        st->dvfs_off = st->dvfs_off || job->dvfs_off;
    } else {
        (void) snprintf(r->detail, sizeof r->detail, "%s", err.msg);
    }
}

// ---------------------------------------------------------------------------------------------
// The actor

static void s_reply(zsock_t *pipe, const agent_worker_reply_t *r)
{
    (void) zsock_send(pipe, "sb", S_EV_REPLY, r, sizeof *r);
}

// Runs one job; returns false on $TERM.
static bool s_on_command(s_state_t *st, zsock_t *pipe, agent_worker_reply_t *r)
{
    zmsg_t *msg = zmsg_recv(pipe);
    char *cmd = msg ? zmsg_popstr(msg) : NULL;
    zframe_t *f = msg ? zmsg_pop(msg) : NULL;
    size_t size = f ? zframe_size(f) : 0;
    bool go_on = cmd && strcmp(cmd, "$TERM") != 0;
    if (go_on && strcmp(cmd, S_CMD_PREPARE) == 0 && size == sizeof(agent_worker_prepare_t)) {
        agent_worker_prepare_t job;
        memcpy(&job, zframe_data(f), sizeof job); // frame data carries no alignment promise
        s_prepare(st, &job, r);
        s_reply(pipe, r);
    } else if (go_on && strcmp(cmd, S_CMD_RESIDENCY) == 0 && size == sizeof(s_residency_job_t)) {
        s_residency_job_t job;
        memcpy(&job, zframe_data(f), sizeof job);
        *r = (agent_worker_reply_t){
            .kind = AGENT_WORKER_RESIDENCY, .attempt = job.attempt, .epoch = job.epoch};
        memcpy(r->run, job.run, sizeof r->run);
        s_measure(job.dir, r);
        r->ok = r->has_residency;
        s_reply(pipe, r);
    } else if (go_on && strcmp(cmd, S_CMD_ADOPT) == 0 && size == sizeof(s_adopt_job_t)) {
        s_adopt_job_t *job = malloc(sizeof *job);
        if (job) {
            memcpy(job, zframe_data(f), sizeof *job);
            job->stored_json[sizeof job->stored_json - 1] = '\0';
            s_adopt(st, job, r);
            s_reply(pipe, r);
        }
        free(job);
    } else if (go_on && strcmp(cmd, S_CMD_RESTORE) == 0) {
        *r = (agent_worker_reply_t){.kind = AGENT_WORKER_RESTORED};
        s_restore(st, r);
        s_reply(pipe, r);
    }
    zframe_destroy(&f);
    zstr_free(&cmd);
    zmsg_destroy(&msg);
    return go_on;
}

static void s_state_free(s_state_t *st)
{
    agent_power_destroy(&st->power);
    for (size_t i = 0; i < AGENT_WORKER_HELPER_ARGS_MAX && st->argv[i]; i++) {
        free(st->argv[i]);
    }
    free(st);
}

static void s_actor(zsock_t *pipe, void *args)
{
    s_state_t *st = args;
    agent_worker_reply_t *r = malloc(sizeof *r); // about 10 kB: not on a thread's stack
    (void) zsock_signal(pipe, 0);
    while (r && s_on_command(st, pipe, r)) {
    }
    if (r) {
        // The agent is going away: never leave the board in a run's mode (docs/privileges.md).
        s_restore(st, r);
    }
    free(r);
    s_state_free(st);
}

static int s_copy_argv(s_state_t *st, const char *const *argv, jf_err_t *err)
{
    for (size_t n = 0; argv && argv[n]; n++) {
        if (n == AGENT_WORKER_HELPER_ARGS_MAX) {
            return jf_err_set(err, -EINVAL, "worker: more than %d helper words",
                              AGENT_WORKER_HELPER_ARGS_MAX);
        }
        if (!(st->argv[n] = strdup(argv[n]))) {
            return jf_err_set(err, -ENOMEM, "worker: out of memory");
        }
    }
    if (st->argv[0] && st->argv[0][0] != '/') {
        return jf_err_set(err, -EINVAL, "worker: the helper command needs an absolute path");
    }
    return 0;
}

agent_worker_t *agent_worker_new(const agent_worker_opts_t *opts, jf_err_t *err)
{
    agent_worker_t *self = calloc(1, sizeof *self);
    s_state_t *st = calloc(1, sizeof *st);
    if (!self || !st) {
        jf_err_set(err, -ENOMEM, "worker: out of memory");
        goto fail;
    }
    if (s_copy_argv(st, opts->helper_argv, err) != 0) {
        goto fail;
    }
    (void) snprintf(st->proc_root, sizeof st->proc_root, "%s", opts->proc_root);
    (void) snprintf(st->sysfs_root, sizeof st->sysfs_root, "%s", opts->sysfs_root);
    st->power = opts->power_p ? *opts->power_p : NULL;
    self->actor = zactor_new(s_actor, st); // the actor owns st from here on
    if (!self->actor) {
        st->power = NULL; // still the caller's
        jf_err_set(err, -ENOMEM, "worker: cannot start its thread");
        goto fail;
    }
    if (opts->power_p) {
        *opts->power_p = NULL;
    }
    return self;
fail:
    if (st) {
        s_state_free(st);
    }
    free(self);
    return NULL;
}

void agent_worker_destroy(agent_worker_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    zactor_destroy(&(*self_p)->actor);
    free(*self_p);
    *self_p = NULL;
}

void *agent_worker_handle(agent_worker_t *self)
{
    return zsock_resolve(zactor_sock(self->actor));
}

int agent_worker_prepare(agent_worker_t *self, const agent_worker_prepare_t *job)
{
    return zsock_send(zactor_sock(self->actor), "sb", S_CMD_PREPARE, job, sizeof *job) == 0 ? 0
                                                                                            : -EIO;
}

int agent_worker_residency(agent_worker_t *self, const char *run, int64_t attempt, int epoch,
                           const char *dir)
{
    s_residency_job_t job = {.attempt = attempt, .epoch = epoch};
    (void) snprintf(job.run, sizeof job.run, "%s", run);
    (void) snprintf(job.dir, sizeof job.dir, "%s", dir);
    return zsock_send(zactor_sock(self->actor), "sb", S_CMD_RESIDENCY, &job, sizeof job) == 0
               ? 0
               : -EIO;
}

int agent_worker_adopt(agent_worker_t *self, const char *stored_json, bool dvfs_off)
{
    s_adopt_job_t job = {.dvfs_off = dvfs_off};
    if (strlen(stored_json) >= sizeof job.stored_json) {
        return -EIO;
    }
    memcpy(job.stored_json, stored_json, strlen(stored_json) + 1);
    return zsock_send(zactor_sock(self->actor), "sb", S_CMD_ADOPT, &job, sizeof job) == 0 ? 0
                                                                                          : -EIO;
}

int agent_worker_restore(agent_worker_t *self)
{
    return zstr_send(zactor_sock(self->actor), S_CMD_RESTORE) == 0 ? 0 : -EIO;
}

int agent_worker_recv(agent_worker_t *self, agent_worker_reply_t *ret_reply)
{
    zsock_t *sock = zactor_sock(self->actor);
    if (!(zsock_events(sock) & ZMQ_POLLIN)) {
        return -EAGAIN;
    }
    zmsg_t *msg = zmsg_recv(sock);
    char *kind = msg ? zmsg_popstr(msg) : NULL;
    zframe_t *f = msg ? zmsg_pop(msg) : NULL;
    int rc = -EPROTO;
    if (kind && strcmp(kind, S_EV_REPLY) == 0 && f && zframe_size(f) == sizeof *ret_reply) {
        memcpy(ret_reply, zframe_data(f), sizeof *ret_reply);
        rc = 0;
    }
    zframe_destroy(&f);
    zstr_free(&kind);
    zmsg_destroy(&msg);
    return rc;
}

int agent_worker_restore_wait(agent_worker_t *self, int64_t timeout_us,
                              agent_worker_reply_t *ret_reply)
{
    int64_t deadline_us = jf_clock_mono_us() + timeout_us;
    if (agent_worker_restore(self) != 0) {
        return -EIO;
    }
    zmq_pollitem_t item = {agent_worker_handle(self), 0, ZMQ_POLLIN, 0};
    for (int64_t left_us = timeout_us; left_us > 0; left_us = deadline_us - jf_clock_mono_us()) {
        // Shutting down: waiting here is the point (the loop has ended).
        if (zmq_poll(&item, 1, (long) (left_us / JF_US_PER_MS) + 1) <= 0) {
            continue;
        }
        int rc = agent_worker_recv(self, ret_reply);
        if (rc == 0 && ret_reply->kind == AGENT_WORKER_RESTORED) {
            return 0;
        }
    }
    return -ETIMEDOUT;
}
