/* Agent session: the one run in progress — validation of run.assign, the training child, records
 * and telemetry into the spool, and the final run.done / run.failed (docs/protocol.md §5). */
#include "agent_session_internal.h"

#include "jf_msg_run.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct {
    const char *model;
    const char *dataset;
} s_model_data[] = {
    {"lenet5", "mnist"}, {"resnet18", "cifar10"}, {"vgg11", "cifar10"},
    {"mobilenetv3", "gld23k"},
};

static const jf_hello_storage_t *s_storage(const agent_session_t *self, const char *medium)
{
    for (size_t i = 0; i < self->n_storage; i++) {
        if (strcmp(self->storage[i].medium, medium) == 0) {
            return &self->storage[i];
        }
    }
    return NULL;
}

static bool s_model_fits_data(const jf_run_spec_t *s)
{
    for (size_t i = 0; i < sizeof s_model_data / sizeof s_model_data[0]; i++) {
        if (strcmp(s->model, s_model_data[i].model) == 0) {
            return strcmp(s->dataset, s_model_data[i].dataset) == 0;
        }
    }
    return false;
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
// dataset_dir gets <dataset_root>/<dataset> (names from closed vocabularies, never paths).
static int s_check_run(const agent_session_t *self, const jf_run_spec_t *s, char *dataset_dir,
                       size_t size, char *why, size_t why_size)
{
    const jf_hello_storage_t *st = s_storage(self, s->storage);
    struct stat sb;
    if (strcmp(s->board, self->name) != 0) {
        (void) snprintf(why, why_size, "run is for board '%s', this is '%s'", s->board, self->name);
        return JF_FAIL_INVALID;
    }
    if (!s_model_fits_data(s)) {
        (void) snprintf(why, why_size, "model %s does not train on %s", s->model, s->dataset);
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
    (void) snprintf(dataset_dir, size, "%s/%s", st->dataset_root, s->dataset);
    if (stat(dataset_dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
        (void) snprintf(why, why_size, "dataset directory '%.200s' is missing", dataset_dir);
        return JF_FAIL_INFEASIBLE;
    }
    if (s->drop_caches) {
        // Needs the privileged helper of the platform layer (issue #4); refuse rather than lie.
        (void) snprintf(why, why_size, "drop_caches is not supported on this platform yet");
        return JF_FAIL_INFEASIBLE;
    }
    return -1;
}

static void s_reject(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                     jf_fail_reason_t reason, const char *why)
{
    jf_log_notice("run: rejecting %s attempt %lld: %s: %s", s->run_id, (long long) attempt,
                  jf_fail_reason_name(reason), why);
    (void) agent_session_send(
        self, jf_msg_run_reject_new(self->next_id++, s->run_id, attempt, reason, why));
}

static int s_start(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                   const char *dataset_dir, jf_err_t *err)
{
    agent_run_t *r = &self->run;
    int rc = agent_platform_set_mode(self->platform, s->power_mode_id, err);
    rc = rc ? rc : agent_spool_open(self->spool, s->run_id, attempt, err);
    if (rc != 0) {
        return rc;
    }
    agent_runner_opts_t o = {.train_bin = self->train_bin, .dataset_dir = dataset_dir, .spec = s};
    agent_runner_t *runner = agent_runner_start(&o, err);
    if (!runner) {
        agent_spool_drop(self->spool, s->run_id, attempt);
        return -EIO;
    }
    *r = (agent_run_t){.active = true, .spec = *s, .attempt = attempt, .runner = runner,
                       .records = json_array(), .samples = json_array()};
    return 0;
}

void agent_session_on_assign(agent_session_t *self, const jf_msg_t *msg)
{
    jf_run_spec_t s;
    int64_t attempt = 0;
    if (jf_msg_run_assign_parse(msg->body, &s, &attempt, NULL) != 0) {
        return; // validated by the decoder
    }
    agent_run_t *r = &self->run;
    bool same = r->active && r->attempt == attempt && strcmp(r->spec.run_id, s.run_id) == 0;
    if (same || agent_spool_has(self->spool, s.run_id, attempt)) {
        // A resent run.assign: accept again, never start a second child.
        (void) agent_session_send(
            self, jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, self->next_id++, s.run_id, attempt));
        return;
    }
    char dataset_dir[4200] = {0}, why[300] = {0};
    int reason = r->active ? JF_FAIL_BUSY : s_check_run(self, &s, dataset_dir, sizeof dataset_dir,
                                                          why, sizeof why);
    if (r->active) {
        (void) snprintf(why, sizeof why, "busy with run %s", r->spec.run_id);
    }
    jf_err_t err = {0};
    if (reason < 0 && s_start(self, &s, attempt, dataset_dir, &err) != 0) {
        reason = JF_FAIL_CRASHED;
        (void) snprintf(why, sizeof why, "cannot start the trainer: %s", err.msg);
    }
    if (reason >= 0) {
        s_reject(self, &s, attempt, (jf_fail_reason_t) reason, why);
        return;
    }
    jf_log_notice("run: started %s attempt %lld (%s on %s, %s, workers %d, batch %d)", s.run_id,
                  (long long) attempt, s.model, s.dataset, s.storage, s.workers, s.batch_size);
    (void) agent_session_send(
        self, jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, self->next_id++, s.run_id, attempt));
}

void agent_session_on_cancel(agent_session_t *self, const jf_msg_t *msg)
{
    jf_msg_run_ref_t ref;
    if (jf_msg_run_ref_parse(msg->body, &ref, NULL) != 0) {
        return;
    }
    agent_run_t *r = &self->run;
    if (r->active && r->attempt == ref.attempt && strcmp(r->spec.run_id, ref.run) == 0) {
        jf_log_notice("run: cancelling %s attempt %lld", ref.run, (long long) ref.attempt);
        agent_runner_stop(r->runner, JF_FAIL_CANCELLED);
    }
}

// Puts one stream message (built for the next seq) into the spool.
typedef json_t *(*s_build_fn)(agent_session_t *self, const jf_msg_run_ref_t *ref, void *arg);

static void s_spool_msg(agent_session_t *self, bool final, s_build_fn build, void *arg)
{
    agent_run_t *r = &self->run;
    jf_msg_run_ref_t ref = {.attempt = r->attempt,
                            .seq = agent_spool_next_seq(self->spool, r->spec.run_id, r->attempt)};
    memcpy(ref.run, r->spec.run_id, sizeof ref.run);
    json_t *msg = ref.seq > 0 ? build(self, &ref, arg) : NULL;
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    jf_err_t err = {0};
    if (!text || agent_spool_append(self->spool, ref.run, ref.attempt, ref.seq, text, len, final,
                                    &err) != 0) {
        // Losing measurements silently is not an option: say so loudly.
        jf_log_error("run: %s: cannot keep a message of seq %lld: %s", ref.run,
                     (long long) ref.seq, text ? err.msg : "out of memory");
        free(text);
    }
}

static json_t *s_build_items(agent_session_t *self, const jf_msg_run_ref_t *ref, void *arg)
{
    json_t **items_p = arg;
    json_t *msg = *items_p == self->run.records ? jf_msg_run_progress_new(self->next_id, ref, items_p)
                                                : jf_msg_telemetry_new(self->next_id, ref, items_p);
    self->next_id++;
    return msg;
}

static void s_flush_records(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (r->records && json_array_size(r->records) > 0) {
        s_spool_msg(self, false, s_build_items, &r->records);
        json_decref(r->records); // NULL when the message took it
        r->records = json_array();
    }
}

static void s_flush_samples(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (r->samples && json_array_size(r->samples) > 0) {
        s_spool_msg(self, false, s_build_items, &r->samples);
        json_decref(r->samples);
        r->samples = json_array();
    }
}

static int s_on_record(json_t *rec, void *arg)
{
    agent_session_t *self = arg;
    agent_run_t *r = &self->run;
    if (json_array_size(r->records) == 0) {
        r->records_since_us = jf_clock_mono_us();
    }
    (void) json_array_append_new(r->records, rec);
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    if (json_array_size(r->records) >= AGENT_RECORDS_BATCH || strcmp(kind, "minibatch") != 0) {
        s_flush_records(self); // epoch and start records leave at once
    }
    return 0;
}

static void s_sample(agent_session_t *self, int64_t now_us)
{
    agent_run_t *r = &self->run;
    json_t *sample = json_pack("{s:I}", "t_us", (json_int_t) jf_clock_wall_us());
    jf_err_t err = {0};
    if (sample && agent_platform_sample(self->platform, sample, &err) == 0) {
        if (json_array_size(r->samples) == 0) {
            r->samples_since_us = now_us;
        }
        (void) json_array_append_new(r->samples, sample);
    } else {
        json_decref(sample);
        jf_log_warn("run: telemetry sample failed: %s; skipping it", err.msg);
    }
    r->next_sample_us = now_us + JF_US_PER_S / r->spec.telemetry_hz;
}

static json_t *s_build_final(agent_session_t *self, const jf_msg_run_ref_t *ref, void *arg)
{
    const agent_runner_outcome_t *o = arg;
    return o->done ? jf_msg_run_done_new(self->next_id++, ref, o->epochs)
                   : jf_msg_run_failed_new(self->next_id++, ref, o->reason, o->detail);
}

static void s_finish(agent_session_t *self, const agent_runner_outcome_t *o)
{
    agent_run_t *r = &self->run;
    if (!r->dropped) {
        s_flush_records(self);
        s_flush_samples(self);
        s_spool_msg(self, true, s_build_final, (void *) o);
    }
    jf_log_notice("run: %s attempt %lld %s%s%s", r->spec.run_id, (long long) r->attempt,
                  o->done ? "done" : "failed: ", o->done ? "" : jf_fail_reason_name(o->reason),
                  r->dropped ? " (dropped on the coordinator's word)" : "");
    if (!o->done) {
        jf_log_notice("run: %s: %s", r->spec.run_id, o->detail);
    }
    agent_session_run_fini(self);
}

void agent_session_run_tick(agent_session_t *self, int64_t now_us)
{
    agent_run_t *r = &self->run;
    if (!r->active) {
        return;
    }
    agent_runner_read(r->runner, s_on_record, self);
    if (now_us >= r->next_sample_us) {
        s_sample(self, now_us);
    }
    if (json_array_size(r->records) > 0 && now_us - r->records_since_us >= AGENT_RECORDS_FLUSH_US) {
        s_flush_records(self);
    }
    if (json_array_size(r->samples) > 0 && now_us - r->samples_since_us >= AGENT_TELEMETRY_FLUSH_US) {
        s_flush_samples(self);
    }
    agent_runner_tick(r->runner, now_us);
    agent_runner_outcome_t o;
    if (agent_runner_finished(r->runner, &o)) {
        s_finish(self, &o);
    }
}

void agent_session_drop_run(agent_session_t *self, const char *run, int64_t attempt)
{
    agent_run_t *r = &self->run;
    if (r->active && r->attempt == attempt && strcmp(r->spec.run_id, run) == 0) {
        r->dropped = true;
        agent_runner_stop(r->runner, JF_FAIL_CANCELLED);
    }
    agent_spool_drop(self->spool, run, attempt);
}

void agent_session_run_fini(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    agent_runner_destroy(&r->runner);
    json_decref(r->records);
    json_decref(r->samples);
    *r = (agent_run_t){0};
}
