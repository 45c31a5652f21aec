/* Agent session: the one run in progress — validation of run.assign, its preparation by the
 * worker (storage check, power mode, cache drop), the sampler and the training child, cancel and
 * drop, and the end: the final sample and residency, then the final message and the restore of
 * the power state (docs/protocol.md §5.2, §5.5). The stream itself is agent_session_stream.c. */
#include "agent_session_internal.h"

#include "jf_msg_run.h"
#include "jf_parse.h"
#include "jf_units.h"
#include "jf_workload.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const jf_hello_storage_t *s_storage(const agent_session_t *self, const char *medium)
{
    for (size_t i = 0; i < self->n_storage; i++) {
        if (strcmp(self->storage[i].medium, medium) == 0) {
            return &self->storage[i];
        }
    }
    return NULL;
}

// The configured mount of a medium this board offers ("" when not configured).
static const char *s_mount(const agent_session_t *self, const char *medium)
{
    const jf_hello_storage_t *st = s_storage(self, medium);
    return st ? self->storage_mount[st - self->storage] : "";
}

static bool s_has_mode(const agent_session_t *self, const jf_run_spec_t *s)
{
    size_t n = 0;
    const jf_power_mode_t *modes = agent_platform_modes(self->platform, &n);
    for (size_t i = 0; i < n; i++) {
        if (modes[i].id == s->power_mode_id && strcmp(modes[i].name, s->power_mode) == 0) {
            return true;
        }
    }
    return false;
}

// Checks a run against what this board has. Returns the reject reason, or -1 if it can run;
// dataset_dir gets <dataset_root>/<dataset> (names from closed vocabularies, never paths). The
// checks that need blocking calls (the dataset's mount, the power mode) are the worker's.
static int s_check_run(const agent_session_t *self, const jf_run_spec_t *s, char *dataset_dir,
                       size_t size, char *why, size_t why_size)
{
    const jf_hello_storage_t *st = s_storage(self, s->storage);
    struct stat sb;
    if (strcmp(s->board, self->name) != 0) {
        (void) snprintf(why, why_size, "run is for board '%s', this is '%s'", s->board, self->name);
        return JF_FAIL_INVALID;
    }
    jf_err_t pair = {0};
    if (jf_workload_check_pair(s->model, s->dataset, &pair) < 0) {
        (void) snprintf(why, why_size, "%s", pair.msg);
        return JF_FAIL_INVALID;
    }
    if (!s_has_mode(self, s)) {
        (void) snprintf(why, why_size, "this board has no power mode %d (%s)", s->power_mode_id,
                        s->power_mode);
        return JF_FAIL_INFEASIBLE;
    }
    if (!st) {
        (void) snprintf(why, why_size, "this board has no storage medium '%s'", s->storage);
        return JF_FAIL_INFEASIBLE;
    }
    int n = snprintf(dataset_dir, size, "%s/%s", st->dataset_root, s->dataset);
    if (n < 0 || (size_t) n >= size) {
        (void) snprintf(why, why_size, "dataset path '%.200s/%s' is too long", st->dataset_root,
                        s->dataset);
        return JF_FAIL_INFEASIBLE;
    }
    // Where the platform models the dataset there is no directory to check.
    bool files = agent_platform_has_dataset_files(self->platform);
    if (files && (stat(dataset_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        (void) snprintf(why, why_size, "dataset directory '%.200s' is missing", dataset_dir);
        return JF_FAIL_INFEASIBLE;
    }
    if (self->power_error[0]) {
        (void) snprintf(why, why_size, "%s", self->power_error);
        return JF_FAIL_INFEASIBLE;
    }
    if (jf_run_runtime_is_container(s->runtime) && self->container.n_words == 0) {
        (void) snprintf(why, why_size, "the run asks for a container and this agent has no "
                                       "container engine configured (--container)");
        return JF_FAIL_INFEASIBLE;
    }
    return agent_session_check_power(self, s, why, why_size);
}

static void s_reject(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                     jf_fail_reason_t reason, const char *why)
{
    jf_log_notice("run: rejecting %s attempt %lld: %s: %s", s->run_id, (long long) attempt,
                  jf_fail_reason_name(reason), why);
    (void) agent_session_send(
        self, jf_msg_run_reject_new(self->next_id++, s->run_id, attempt, reason, why));
}

static void s_accept(agent_session_t *self, const char *run, int64_t attempt)
{
    (void) agent_session_send(self,
                              jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, self->next_id++, run, attempt));
}

// The power state in force for the measure record: read back by the worker on a Jetson; on a
// platform without a power handle what the platform says it is.
static json_t *s_power_mode(const agent_session_t *self, const agent_worker_reply_t *p)
{
    if (p->has_power) {
        return json_loads(p->power_json, 0, NULL);
    }
    return agent_platform_power_record(self->platform, &self->run.spec);
}

// A line of the trainer's output, for what the platform's trainer reports beyond the wire
// records; the residency it yields goes into the measure record.
static void s_on_trainer_line(const json_t *line, void *arg)
{
    agent_session_t *self = arg;
    agent_run_t *r = &self->run;
    agent_platform_line_t out = {0};
    jf_err_t err = {0};
    const char *kind = json_string_value(json_object_get(line, "kind"));
    if (r->measure && kind && strcmp(kind, "start") == 0) {
        // Before the platform acts on it: a sim board's modelled load begins with this line.
        agent_measure_trainer_started(r->measure, jf_clock_mono_us());
    }
    if (agent_platform_trainer_line(self->platform, r->spec.dataset, line, &out, &err) != 0) {
        jf_log_warn("run: %s", err.msg);
    }
    for (int i = 0; r->measure && i < out.n_residency; i++) {
        agent_measure_set_residency(r->measure, out.residency_epoch[i], &out.residency[i]);
    }
}

// The measurements, in the time base the platform's runs keep.
static agent_measure_t *s_measure_new(const agent_session_t *self, int64_t now_us, int *ret_wall_hz,
                                      jf_err_t *err)
{
    const jf_run_spec_t *s = &self->run.spec;
    agent_measure_opts_t mo = {.rate_hz = s->telemetry_hz,
                               .input_rail = self->input_rail[0] ? self->input_rail : NULL,
                               .epochs = s->epochs,
                               .start_us = now_us};
    agent_platform_timing(self->platform, &mo.timing);
    *ret_wall_hz = agent_measure_wall_rate_hz(&mo);
    return agent_measure_new(&mo, err);
}

// Test builds only (JF_AGENT_TEST_HOOKS): JF_TEST_AGENT_CRASH=<point> kills the agent with SIGKILL
// at that point of a run's start, so that a test can crash it where nothing else could
// (tests/integration/reattach_test.c). Points: "trainer-spawned" (the trainer is spawned, its
// spool row not yet stored).
#if JF_AGENT_TEST_HOOKS
static void s_test_crash_point(const char *point)
{
    const char *want = getenv(AGENT_TEST_CRASH_ENV);
    if (want && strcmp(want, point) == 0) {
        jf_log_warn("run: %s=%s: the agent kills itself here (test only)", AGENT_TEST_CRASH_ENV,
                    point);
        (void) raise(SIGKILL);
    }
}
#else
static void s_test_crash_point(const char *point)
{
    (void) point;
}
#endif

// A federated round's trainer options (docs/rounds.md "Execution"): the local minibatches and
// the weight files, which the agent names (the initial ones fetched by agent_session_blob.c).
typedef struct s_round_args {
    const char *args[8];   // borrowed from the strings below
    size_t n;
    char minibatches[24];
    char shard[32];
    char in[PATH_MAX];
    char out[PATH_MAX];
} s_round_args_t;

static int s_round_args(const agent_session_t *self, s_round_args_t *a, jf_err_t *err)
{
    const jf_run_spec_t *s = &self->run.spec;
    bool files = s->init_weights[0] || s->return_weights;
    if (files && agent_session_weights_paths(self, s->run_id, self->run.attempt, a->in, a->out,
                                             sizeof a->in) != 0) {
        return jf_err_set(err, -ENOENT, "weight files need a state directory (--state-dir)");
    }
    if (s->minibatches > 0) {
        (void) snprintf(a->minibatches, sizeof a->minibatches, "%d", s->minibatches);
        a->args[a->n++] = "--minibatches";
        a->args[a->n++] = a->minibatches;
    }
    if (s->shards > 0) {
        (void) snprintf(a->shard, sizeof a->shard, "%d/%d", s->shard, s->shards);
        a->args[a->n++] = "--shard";
        a->args[a->n++] = a->shard;
    }
    if (s->init_weights[0]) {
        a->args[a->n++] = "--init-weights";
        a->args[a->n++] = a->in;
    }
    if (s->return_weights) {
        (void) unlink(a->out); // a file left by an earlier attempt is not this run's result
        a->args[a->n++] = "--out-weights";
        a->args[a->n++] = a->out;
    }
    return 0;
}

// The trainer: the platform's program and arguments, the run's own added by the runner. With a
// spool file it writes into a file there and outlives an agent crash; it is held at its start
// gate until the spool names it, so that an agent that dies in between leaves no trainer that
// nobody tracks (the held child exits when the gate closes; docs/protocol.md §4.4.1).
static agent_runner_t *s_runner_start(agent_session_t *self, jf_err_t *err)
{
    agent_run_t *r = &self->run;
    agent_platform_trainer_t trainer;
    agent_platform_run_t run = {.spec = &r->spec, .dataset_dir = r->dataset_dir,
                                .train_bin = self->train_bin};
    if (agent_platform_trainer(self->platform, &run, &trainer, err) != 0) {
        return NULL;
    }
    // A container run: the engine's command around the trainer's (docs/containers.md).
    agent_platform_trainer_t *boxed = NULL;
    if (jf_run_runtime_is_container(r->spec.runtime)) {
        boxed = malloc(sizeof *boxed);
        agent_container_name(self->name, r->spec.run_id, r->attempt, r->container);
        int brc = boxed ? agent_container_wrap(&self->container, r->container, r->dataset_dir,
                                               &trainer, boxed, err)
                        : jf_err_set(err, -ENOMEM, "out of memory");
        if (brc != 0) {
            free(boxed);
            return NULL;
        }
        jf_log_notice("run: %s: the trainer runs in a container: '%.200s %s ... %.200s'",
                      r->spec.run_id, boxed->program, boxed->args[0],
                      self->container.words[self->container.n_words - 1]);
    }
    int prc = agent_session_trainer_path(self, r->spec.run_id, r->attempt, r->out_path,
                                         sizeof r->out_path);
    if (prc != 0) {
        r->out_path[0] = '\0';
    }
    s_round_args_t ra = {0};
    if (s_round_args(self, &ra, err) != 0) {
        free(boxed);
        return NULL;
    }
    agent_runner_opts_t o = {.trainer = boxed ? boxed : &trainer,
                             .spec = &r->spec,
                             .line_fn = s_on_trainer_line,
                             .line_arg = self,
                             .out_path = r->out_path[0] ? r->out_path : NULL,
                             .hold = r->out_path[0] != '\0',
                             .extra_args = ra.args,
                             .n_extra = ra.n};
    r->mark = AGENT_RUNNER_MARK_NONE;
    agent_runner_t *runner = agent_runner_start(&o, err);
    free(boxed);
    if (!runner || !o.hold) {
        return runner;
    }
    r->runner = runner;
    s_test_crash_point("trainer-spawned");
    int rc = agent_session_trainer_record(self, r->out_path, err);
    rc = rc ? rc : agent_runner_release(runner);
    if (rc != 0) {
        r->runner = NULL;
        agent_runner_destroy(&runner); // closes the gate: the held child exits unrun
    }
    return runner;
}

// The clock state the worker stored before the run, as the read mark keeps it for an agent
// restarted during the run (docs/protocol.md §4.4.1); NULL when none was stored.
static json_t *s_clocks_record(const agent_worker_reply_t *p)
{
    json_t *stored = p->stored_json[0] ? json_loads(p->stored_json, 0, NULL) : NULL;
    return stored ? json_pack("{s:o, s:b}", "stored", stored, "dvfs_off", p->dvfs_off) : NULL;
}

// Waits, at most AGENT_FIRST_SAMPLE_WAIT_MS, for the run's first sample before the trainer is
// spawned: the sampler's thread takes it at once, but on a loaded machine the trainer could
// otherwise begin its first epoch before it, and the run would go without its GPU load before
// epoch 0 (agent_gpubefore.h). Samples meanwhile are handled as the loop handles them; a sampler
// that cannot read (its warning says why) costs the wait once per run.
static void s_await_first_sample(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    int64_t until_us = jf_clock_mono_us() + AGENT_FIRST_SAMPLE_WAIT_MS * JF_US_PER_MS;
    for (int64_t now_us = jf_clock_mono_us(); r->samples_seen == 0 && now_us < until_us;
         now_us = jf_clock_mono_us()) {
        zmq_pollitem_t item = {agent_sampler_handle(self->sampler), 0, ZMQ_POLLIN, 0};
        long left_ms = (long) ((until_us - now_us + JF_US_PER_MS - 1) / JF_US_PER_MS);
        if (zmq_poll(&item, 1, left_ms) < 0 && errno != EINTR) {
            return;
        }
        if (item.revents & ZMQ_POLLIN) {
            agent_session_on_sampler(self);
        }
    }
}

// Starts what the run needs once prepared: the mode (platforms without a power handle), the
// stream, the measurements, the sampler (its first sample awaited), then the trainer.
static int s_start(agent_session_t *self, jf_err_t *err)
{
    agent_run_t *r = &self->run;
    const jf_run_spec_t *s = &r->spec;
    int64_t now_us = jf_clock_mono_us();
    int rc = 0;
    if (!self->has_power) {
        rc = jf_run_spec_has_power_extras(s)
                 ? agent_platform_set_point(self->platform, s->power_mode_id, &s->custom,
                                            s->dvfs_off, err)
                 : agent_platform_set_mode(self->platform, s->power_mode_id, err);
    }
    rc = rc ? rc : agent_spool_open(self->spool, s->run_id, r->attempt, err);
    if (rc != 0) {
        return rc;
    }
    int wall_hz = 0;
    r->measure = s_measure_new(self, now_us, &wall_hz, err);
    r->power_mode = s_power_mode(self, r->prepared);
    r->clocks = s_clocks_record(r->prepared);
    const char *disk = r->prepared->has_mount ? r->prepared->mount.disk : "";
    r->sampling =
        r->measure && r->power_mode &&
        agent_sampler_start(self->sampler, s->telemetry_off ? AGENT_SAMPLER_ENDS_ONLY : wall_hz,
                            disk) == 0;
    r->records = json_array();
    r->samples = json_array();
    if (r->sampling) {
        s_await_first_sample(self);
    }
    r->runner = r->sampling ? s_runner_start(self, err) : NULL;
    if (!r->runner) {
        agent_spool_drop(self->spool, s->run_id, r->attempt);
        return r->sampling ? -EIO : jf_err_set(err, -ENOMEM, "cannot start the measurements");
    }
    if (r->prepared->has_residency) {
        agent_measure_set_residency(r->measure, -1, &r->prepared->residency);
    }
    r->phase = AGENT_RUN_RUNNING;
    return 0;
}

// Queues the restore of the power state the worker stored for this run (a no-op without one).
static void s_restore(agent_session_t *self)
{
    if (self->has_power && agent_worker_restore(self->worker) != 0) {
        jf_log_error("run: cannot ask the worker to restore the power state");
    }
}

static void s_log_started(const jf_run_spec_t *s, int64_t attempt, const agent_worker_reply_t *p)
{
    char power[JF_RUN_POWER_LABEL_MAX + 1];
    jf_run_spec_power_label(s, power, sizeof power);
    jf_log_notice("run: started %s attempt %lld (%s on %s, %s, workers %d, batch %d, mode %s, "
                  "telemetry %d Hz%s%s)",
                  s->run_id, (long long) attempt, s->model, s->dataset, s->storage, s->workers,
                  s->batch_size, power, s->telemetry_hz,
                  p->drop == JF_MEASURE_DROP_NONE ? "" : ", cache dropped by ",
                  p->drop == JF_MEASURE_DROP_NONE ? "" : jf_measure_drop_name(p->drop));
    if (p->detail[0]) {
        jf_log_info("run: %s: %s", s->run_id, p->detail);
    }
}

// The worker's answer for the run being prepared: start it, or refuse it.
static void s_on_prepared(agent_session_t *self, const agent_worker_reply_t *reply)
{
    agent_run_t *r = &self->run;
    bool ours = r->phase == AGENT_RUN_PREPARING && r->attempt == reply->attempt &&
                strcmp(r->spec.run_id, reply->run) == 0;
    if (!ours) {
        if (reply->power_changed) {
            s_restore(self); // cannot happen: one preparation at a time; be safe anyway
        }
        return;
    }
    r->prepared = malloc(sizeof *r->prepared);
    jf_err_t err = {0};
    jf_fail_reason_t reason = reply->reason;
    char why[AGENT_WORKER_TEXT_MAX + 64] = {0};
    (void) snprintf(why, sizeof why, "%s", reply->detail);
    if (reply->ok && r->cancelled) {
        reason = JF_FAIL_CANCELLED;
        (void) snprintf(why, sizeof why, "cancelled while the run was being prepared");
    } else if (reply->ok && r->prepared) {
        *r->prepared = *reply;
        if (s_start(self, &err) == 0) {
            s_log_started(&r->spec, r->attempt, reply);
            s_accept(self, r->spec.run_id, r->attempt);
            return;
        }
        reason = JF_FAIL_CRASHED;
        (void) snprintf(why, sizeof why, "cannot start the trainer: %s", err.msg);
    } else if (reply->ok) {
        reason = JF_FAIL_CRASHED;
        (void) snprintf(why, sizeof why, "out of memory");
    }
    s_reject(self, &r->spec, r->attempt, reason, why);
    if (reply->ok) {
        s_restore(self); // a refused reply was restored by the worker already
    }
    agent_session_run_fini(self);
}

static void s_on_adopted(const agent_worker_reply_t *reply)
{
    if (reply->ok) {
        jf_log_notice("power: the clock state the previous agent process stored before the "
                      "re-attached run is taken over; it is restored when the run ends");
    } else {
        jf_log_warn("power: cannot take over the clock state the previous agent process stored "
                    "before the re-attached run: %s; it is not restored after the run",
                    reply->detail);
    }
}

void agent_session_on_worker(agent_session_t *self)
{
    agent_worker_reply_t *reply = malloc(sizeof *reply);
    int rc = 0;
    for (int i = 0; reply && i < 64 && (rc = agent_worker_recv(self->worker, reply)) != -EAGAIN;
         i++) {
        if (rc != 0) {
            continue; // not a worker reply: cannot happen on an actor's own pipe
        }
        if (reply->kind == AGENT_WORKER_PREPARED) {
            s_on_prepared(self, reply);
        } else if (reply->kind == AGENT_WORKER_RESIDENCY) {
            agent_session_on_residency(self, reply);
        } else if (reply->kind == AGENT_WORKER_ADOPTED) {
            s_on_adopted(reply);
        } else if (!reply->ok) {
            jf_log_error("power: restoring the board's clock state failed: %s; it stays stored "
                         "and is tried again after the next run and at exit",
                         reply->detail);
        } else if (reply->power_changed) {
            jf_log_notice("power: the board's clock state from before the run is restored");
        }
    }
    free(reply);
}

// A run the platform prepared itself (no disk, no helper: agent_platform_prepare_run), answered
// as the worker would, at once.
static void s_prepared_by_platform(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                                   const char *dataset_dir, const agent_platform_prepared_t *p)
{
    agent_run_t *r = &self->run;
    agent_worker_reply_t *reply = calloc(1, sizeof *reply);
    if (!reply) {
        s_reject(self, s, attempt, JF_FAIL_CRASHED, "out of memory");
        return;
    }
    *r = (agent_run_t){.active = true, .phase = AGENT_RUN_PREPARING, .spec = *s,
                       .attempt = attempt};
    (void) snprintf(r->dataset_dir, sizeof r->dataset_dir, "%s", dataset_dir);
    reply->kind = AGENT_WORKER_PREPARED;
    memcpy(reply->run, s->run_id, sizeof reply->run);
    reply->attempt = attempt;
    reply->ok = true;
    reply->drop = p->drop;
    (void) snprintf(reply->detail, sizeof reply->detail, "%s", p->detail);
    s_on_prepared(self, reply);
    free(reply);
}

// Hands a checked run to the worker; the answer to the coordinator comes with its reply.
static void s_prepare(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                      const char *dataset_dir)
{
    agent_run_t *r = &self->run;
    agent_platform_prepared_t prepared = {0};
    if (agent_platform_prepare_run(self->platform, s, &prepared)) {
        s_prepared_by_platform(self, s, attempt, dataset_dir, &prepared);
        return;
    }
    agent_worker_prepare_t *job = calloc(1, sizeof *job);
    if (!job) {
        s_reject(self, s, attempt, JF_FAIL_CRASHED, "out of memory");
        return;
    }
    memcpy(job->run, s->run_id, sizeof job->run);
    job->attempt = attempt;
    (void) snprintf(job->dataset_dir, sizeof job->dataset_dir, "%s", dataset_dir);
    (void) snprintf(job->medium, sizeof job->medium, "%s", s->storage);
    (void) snprintf(job->mount, sizeof job->mount, "%s", s_mount(self, s->storage));
    job->power_mode_id = s->power_mode_id;
    job->custom = s->custom;
    job->dvfs_off = s->dvfs_off;
    job->drop_caches = s->drop_caches;
    if (agent_worker_prepare(self->worker, job) != 0) {
        s_reject(self, s, attempt, JF_FAIL_CRASHED, "cannot reach the agent's worker thread");
    } else {
        *r = (agent_run_t){.active = true, .phase = AGENT_RUN_PREPARING, .spec = *s,
                           .attempt = attempt};
        memcpy(r->dataset_dir, job->dataset_dir, sizeof r->dataset_dir);
        jf_log_info("run: preparing %s attempt %lld (storage, power mode %s%s)", s->run_id,
                    (long long) attempt, s->power_mode, s->drop_caches ? ", cache drop" : "");
    }
    free(job);
}

void agent_session_run_prepare(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                               const char *dataset_dir)
{
    s_prepare(self, s, attempt, dataset_dir);
}

void agent_session_run_reject(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                              jf_fail_reason_t reason, const char *why)
{
    s_reject(self, s, attempt, reason, why);
}

void agent_session_on_assign(agent_session_t *self, const jf_msg_t *msg)
{
    if (!msg->assign) {
        return; // jf_msg_decode fills it for every run.assign; nothing else comes here
    }
    const jf_run_spec_t *s = &msg->assign->spec;
    int64_t attempt = msg->assign->attempt;
    agent_run_t *r = &self->run;
    bool same = r->active && r->attempt == attempt && strcmp(r->spec.run_id, s->run_id) == 0;
    if ((same && r->phase == AGENT_RUN_PREPARING) ||
        agent_session_fetch_is(self, s->run_id, attempt)) {
        return; // a resent run.assign: the answer comes when the preparation ends
    }
    if (same || agent_spool_has(self->spool, s->run_id, attempt)) {
        s_accept(self, s->run_id, attempt); // a resent run.assign: never a second child
        return;
    }
    char dataset_dir[PATH_MAX] = {0}, why[300] = {0};
    bool busy = r->active || self->fetch.active;
    int reason = busy ? JF_FAIL_BUSY
                      : s_check_run(self, s, dataset_dir, sizeof dataset_dir, why, sizeof why);
    if (busy) {
        (void) snprintf(why, sizeof why, "busy with run %s",
                        r->active ? r->spec.run_id : self->fetch.spec.run_id);
    } else if (reason < 0 && agent_spool_is_full(self->spool)) {
        // Results of earlier runs wait for the coordinator: take no new data until they go.
        reason = JF_FAIL_BUSY;
        (void) snprintf(why, sizeof why, "spool full: %zu bytes of unacknowledged results held "
                        "(--spool-max-bytes)", agent_spool_bytes(self->spool));
    }
    if (reason >= 0) {
        s_reject(self, s, attempt, (jf_fail_reason_t) reason, why);
        return;
    }
    if (s->init_weights[0]) {
        agent_session_fetch_begin(self, s, attempt, dataset_dir); // then s_prepare
        return;
    }
    s_prepare(self, s, attempt, dataset_dir);
}

// Test builds only (JF_AGENT_TEST_HOOKS): JF_TEST_AGENT_DROP_CANCELS=<n> ignores the first n
// run.cancel messages of a run being trained, as if the network had lost them, so that a test
// sees the coordinator send it again (tests/integration/train_failure_test.c).
#if JF_AGENT_TEST_HOOKS
static bool s_test_drop_cancel(agent_run_t *r)
{
    const char *text = getenv(AGENT_TEST_DROP_CANCELS_ENV);
    int64_t n = 0;
    if (!text || jf_parse_i64(text, 0, INT32_MAX, &n, NULL) != 0 || r->cancels_seen++ >= n) {
        return false;
    }
    jf_log_warn("run: %s=%s: run.cancel %d of %s ignored (test only)", AGENT_TEST_DROP_CANCELS_ENV,
                text, r->cancels_seen, r->spec.run_id);
    return true;
}
#else
static bool s_test_drop_cancel(agent_run_t *r)
{
    (void) r;
    return false;
}
#endif

void agent_session_on_cancel(agent_session_t *self, const jf_msg_t *msg)
{
    jf_msg_run_ref_t ref;
    if (jf_msg_run_ref_parse(msg->body, &ref, NULL) != 0) {
        return;
    }
    agent_run_t *r = &self->run;
    if (agent_session_fetch_is(self, ref.run, ref.attempt)) {
        jf_log_notice("run: cancelling %s attempt %lld", ref.run, (long long) ref.attempt);
        agent_session_fetch_cancel(self);
        return;
    }
    if (!r->active || r->attempt != ref.attempt || strcmp(r->spec.run_id, ref.run) != 0 ||
        (r->runner && s_test_drop_cancel(r))) {
        return;
    }
    jf_log_notice("run: cancelling %s attempt %lld", ref.run, (long long) ref.attempt);
    if (r->phase == AGENT_RUN_PREPARING) {
        r->cancelled = true;
    } else if (r->runner) {
        agent_runner_stop(r->runner, JF_FAIL_CANCELLED);
    }
}

static void s_log_end(const agent_run_t *r)
{
    const agent_runner_outcome_t *o = &r->outcome;
    jf_log_notice("run: %s attempt %lld %s%s%s", r->spec.run_id, (long long) r->attempt,
                  o->done ? "done" : "failed: ", o->done ? "" : jf_fail_reason_name(o->reason),
                  r->dropped ? " (dropped on the coordinator's word)" : "");
    if (!o->done) {
        jf_log_notice("run: %s: %s", r->spec.run_id, o->detail);
    }
    if (r->reattached && r->runner) {
        jf_log_notice("run: %s: re-attached run: %lld records read again were in the spool "
                      "already and skipped",
                      r->spec.run_id, (long long) agent_runner_skipped(r->runner));
    }
}

// The trainer has ended: stop the sampler (its final sample closes the last epoch) and wait
// for it and for the residency after the last epoch.
static void s_begin_finish(agent_session_t *self, const agent_runner_outcome_t *o, int64_t now_us)
{
    agent_run_t *r = &self->run;
    r->outcome = *o;
    r->phase = AGENT_RUN_FINISHING;
    r->finish_by_us = now_us + AGENT_FINISH_WAIT_US;
    if (r->sampling && agent_sampler_stop(self->sampler) == 0) {
        r->stop_sent = true;
        self->sampler_stops++;
    }
}

// A trainer that ended without a record while no agent watched it, stopped by the clean stop of
// the previous agent process: the attempt's detail says that (its reason stays crashed: the
// closed vocabulary of docs/protocol.md §5.6 has none for it).
static void s_explain_stop(const agent_run_t *r, agent_runner_outcome_t *o)
{
    if (r->reattached && r->stopped_by_agent && !o->done &&
        strcmp(o->detail, AGENT_RUNNER_ATTACHED_DIED) == 0) {
        (void) snprintf(o->detail, sizeof o->detail, "%s", AGENT_RUNNER_STOPPED_WITH_AGENT);
    }
}

// What the platform models in time follows the loop's ticks (agent_platform_tick).
static void s_platform_tick(agent_session_t *self, int64_t now_us)
{
    jf_err_t err = {0};
    uint64_t n = 0;
    if (agent_platform_tick(self->platform, now_us, &err) != 0 &&
        jf_log_ratelimit_allow(&self->rl_platform, &n)) {
        jf_log_warn("platform: %s; what it models stays as written, retrying next tick (%llu "
                    "more suppressed)",
                    err.msg, (unsigned long long) n);
    }
}

void agent_session_run_tick(agent_session_t *self, int64_t now_us)
{
    agent_run_t *r = &self->run;
    s_platform_tick(self, now_us);
    if (r->phase == AGENT_RUN_RUNNING) {
        agent_runner_read(r->runner, agent_session_on_record, self);
        agent_runner_tick(r->runner, now_us);
        agent_runner_outcome_t o;
        if (agent_runner_finished(r->runner, &o)) {
            s_explain_stop(r, &o);
            s_begin_finish(self, &o, now_us);
        }
    }
    if (r->phase == AGENT_RUN_RUNNING || r->phase == AGENT_RUN_FINISHING) {
        agent_session_stream_tick(self, now_us);
    }
    if (r->phase == AGENT_RUN_FINISHING && agent_session_stream_settled(self, now_us)) {
        agent_session_stream_finish(self);
        s_log_end(r);
        s_restore(self);
        agent_session_run_fini(self);
    }
}

void agent_session_drop_run(agent_session_t *self, const char *run, int64_t attempt)
{
    agent_run_t *r = &self->run;
    if (r->active && r->attempt == attempt && strcmp(r->spec.run_id, run) == 0) {
        r->dropped = true;
        if (r->runner) {
            agent_runner_stop(r->runner, JF_FAIL_CANCELLED);
        }
    }
    agent_spool_drop(self->spool, run, attempt);
}

// A federated round's weight files (docs/rounds.md "Execution").
static void s_remove_weight_files(const agent_session_t *self)
{
    const agent_run_t *r = &self->run;
    char in[PATH_MAX], out[PATH_MAX];
    bool files = r->active && (r->spec.init_weights[0] || r->spec.return_weights);
    if (files && agent_session_weights_paths(self, r->spec.run_id, r->attempt, in, out,
                                             sizeof in) == 0) {
        (void) unlink(in); // absent when the run took none: nothing to report
        (void) unlink(out);
    }
}

// The trainer's output file, and a round's weight files, stay while the spool names its trainer
// and its stream lacks its final message: records in it may not be spooled yet (read but
// buffered, or not read at all), and the next agent start reads them from the mark
// (docs/protocol.md §4.4.1). Otherwise they go: the stream holds what the run returns.
static void s_output_fini(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (r->out_path[0] && r->trainer_recorded &&
        agent_spool_is_open(self->spool, r->spec.run_id, r->attempt)) {
        jf_log_notice("run: %s attempt %lld is not over: the trainer's output '%s' and its spool "
                      "row stay; the next agent start delivers what the spool lacks from them",
                      r->spec.run_id, (long long) r->attempt, r->out_path);
        return;
    }
    if (r->out_path[0] && unlink(r->out_path) != 0 && errno != ENOENT) {
        jf_log_warn("run: cannot remove the trainer's output '%s': %s; it stays", r->out_path,
                    strerror(errno));
    }
    s_remove_weight_files(self);
}

void agent_session_run_fini(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    jf_err_t err = {0};
    if (r->active && agent_platform_run_end(self->platform, &err) != 0) {
        jf_log_warn("run: %s", err.msg);
    }
    if (r->sampling && !r->stop_sent && agent_sampler_stop(self->sampler) == 0) {
        self->sampler_stops++; // its answer is dropped when it comes
    }
    agent_runner_destroy(&r->runner);
    // The engine process is gone now; its container may not be (an engine killed by SIGKILL
    // leaves it running): remove it (docs/containers.md "Ending a container run").
    if (r->container[0] && agent_container_remove(&self->container, r->container, &err) != 0) {
        jf_log_warn("run: %s", err.msg);
    }
    s_output_fini(self);
    agent_measure_destroy(&r->measure);
    json_decref(r->records);
    json_decref(r->samples);
    json_decref(r->power_mode);
    json_decref(r->clocks);
    free(r->prepared);
    *r = (agent_run_t){0};
}

// The measurements of a re-attached run, continued from the carry its earlier agent stored
// with the read mark (time base, energy so far, latest sample; NULL: an older agent's mark,
// they count from now), and sampling from now. A trainer that has ended already leaves nothing
// to sample: its output is read, that is all.
static int s_resume_measure(agent_session_t *self, const json_t *carry, jf_err_t *err)
{
    agent_run_t *r = &self->run;
    int wall_hz = 0;
    r->measure = s_measure_new(self, jf_clock_mono_us(), &wall_hz, err);
    jf_err_t cerr = {0};
    if (r->measure && carry && agent_measure_resume(r->measure, carry, &cerr) != 0) {
        jf_log_warn("run: %s: %s; its energy counts from the re-attach on", r->spec.run_id,
                    cerr.msg);
    } else if (r->measure && !carry) {
        jf_log_warn("run: %s: the spool has no measure carry (an older agent's mark); its energy "
                    "counts from the re-attach on",
                    r->spec.run_id);
    }
    bool ended = agent_runner_has_ended(r->runner);
    r->sampling =
        !ended && r->measure && r->power_mode &&
        agent_sampler_start(self->sampler,
                            r->spec.telemetry_off ? AGENT_SAMPLER_ENDS_ONLY : wall_hz, "") == 0;
    r->records = json_array();
    r->samples = json_array();
    bool ok = r->measure && (ended || r->sampling) && r->records && r->samples;
    return ok ? 0 : jf_err_set(err, -ENOMEM, "cannot start the measurements");
}

// The clock state the previous agent process stored before the run: the worker takes it over,
// so that the restore after the run writes it back (the helper keeps its slot on disk), and the
// mark keeps it for a further restart.
static void s_adopt_clocks(agent_session_t *self, const json_t *clocks)
{
    agent_run_t *r = &self->run;
    const json_t *stored = json_object_get(clocks, "stored");
    char *text = stored && self->has_power ? json_dumps(stored, JSON_COMPACT) : NULL;
    if (text && agent_worker_adopt(self->worker, text,
                                   json_is_true(json_object_get(clocks, "dvfs_off"))) == 0) {
        r->clocks = json_incref((json_t *) clocks);
    } else if (stored) {
        jf_log_warn("run: %s: the clock state stored before the run cannot be handed to the "
                    "worker; it is not restored after the run",
                    r->spec.run_id);
    }
    free(text);
}

// The run the previous agent process was running, from its trainer row: the mode set again
// where the platform holds it (a sim board's tree; a Jetson's clocks stayed as the run set
// them), the measurements continued from the carry in the mark and sampling from now, and the
// trainer's output read on from the mark.
static int s_resume(agent_session_t *self, int64_t attempt, const agent_spool_db_trainer_t *t,
                    jf_err_t *err)
{
    agent_run_t *r = &self->run;
    json_t *spec = json_loads(t->spec, 0, NULL);
    jf_run_spec_t s = {0};
    agent_runner_mark_t mark;
    json_t *extra = NULL;
    int rc = spec ? jf_run_spec_from_json(spec, &s, err) : jf_err_set(err, -EIO, "bad run spec");
    json_decref(spec);
    rc = rc ? rc : agent_session_mark_parse(t->mark, &mark, &extra, err);
    if (rc != 0) {
        return rc;
    }
    *r = (agent_run_t){.active = true,
                       .phase = AGENT_RUN_RUNNING,
                       .spec = s,
                       .attempt = attempt,
                       .mark = mark,
                       .reattached = true,
                       .trainer_recorded = true,
                       .samples_before = mark.samples,
                       .last_t_before_us = mark.last_t_us,
                       .stopped_by_agent = json_is_true(json_object_get(extra, "stopped"))};
    char why[300];
    (void) s_check_run(self, &s, r->dataset_dir, sizeof r->dataset_dir, why, sizeof why);
    (void) snprintf(r->out_path, sizeof r->out_path, "%s", t->out_path);
    if (jf_run_runtime_is_container(s.runtime)) { // the name its earlier agent gave it
        agent_container_name(self->name, s.run_id, attempt, r->container);
    }
    agent_runner_attach_t a = {.pid = t->pid, .start_ticks = t->start_ticks,
                               .out_path = t->out_path, .mark = mark, .timeout_us = s.timeout_us,
                               .line_fn = s_on_trainer_line, .line_arg = self};
    if (!self->has_power && agent_platform_set_mode(self->platform, s.power_mode_id, err) != 0) {
        jf_log_warn("run: %s: %s; its telemetry follows the board's current mode", s.run_id,
                    err->msg);
    }
    r->runner = agent_runner_attach(&a, err);
    r->power_mode = t->power ? json_loads(t->power, 0, NULL)
                             : agent_platform_power_record(self->platform, &s);
    rc = r->runner ? s_resume_measure(self, json_object_get(extra, "measure"), err) : -EIO;
    if (rc == 0) {
        s_adopt_clocks(self, json_object_get(extra, "clocks"));
    }
    json_decref(extra);
    jf_err_t rerr = {0};
    if (rc == 0 && agent_session_trainer_replay(t->out_path, mark.offset, s_on_trainer_line, self,
                                                &rerr) != 0) {
        jf_log_warn("run: %s: %s; what the platform models from its lines resumes with the next "
                    "epoch line",
                    s.run_id, rerr.msg);
    }
    if (rc != 0) {
        int64_t ticks = 0;
        if (!r->runner && agent_runner_proc_start_ticks(t->pid, &ticks) == 0 &&
            ticks == t->start_ticks) {
            (void) kill(-(pid_t) t->pid, SIGKILL); // reported crashed: it must not run on
        }
        r->out_path[0] = '\0'; // the file stays for a look
        agent_session_run_fini(self); // kills an attached trainer
        return -EIO;
    }
    return 0;
}

int agent_session_run_reattach(agent_session_t *self)
{
    jf_hello_run_t inv[JF_HELLO_RUNS_MAX];
    size_t n = agent_spool_inventory(self->spool, inv, JF_HELLO_RUNS_MAX);
    for (size_t i = 0; i < n && !self->run.active; i++) {
        agent_spool_db_trainer_t t = {0};
        jf_err_t err = {0};
        if (inv[i].finished ||
            agent_spool_trainer(self->spool, inv[i].run, inv[i].attempt, &t, &err) != 0) {
            continue; // finished, or a stream without a trainer row: an orphan
        }
        if (s_resume(self, inv[i].attempt, &t, &err) != 0) {
            jf_log_warn("run: cannot re-attach to the trainer of %s attempt %lld: %s; it is "
                        "reported crashed",
                        inv[i].run, (long long) inv[i].attempt, err.msg);
        } else {
            agent_spool_keep(self->spool, inv[i].run, inv[i].attempt);
            int64_t left_us = agent_runner_deadline_us(self->run.runner) - jf_clock_mono_us();
            jf_log_notice("run: re-attached to %s attempt %lld: trainer pid %lld %s, reading its "
                          "output from byte %lld; its timeout (from its start) falls in %lld ms",
                          inv[i].run, (long long) inv[i].attempt, (long long) t.pid,
                          agent_runner_has_ended(self->run.runner) ? "has ended" : "still runs",
                          (long long) self->run.mark.offset, (long long) (left_us / 1000));
        }
        agent_spool_db_trainer_fini(&t);
    }
    return self->run.active ? 1 : 0;
}
