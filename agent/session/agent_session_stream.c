/* Agent session: the stream of the run in progress — trainer records and sampler samples into
 * the spool, the energy of each epoch from the samples (epoch records wait for the sample that
 * closes their interval), residency after each epoch, and at the end the measure record, the
 * returned weights of a federated round (run.weights, §5.7.2) and the final message
 * (docs/protocol.md §5.3.1, §5.4; docs/telemetry.md). */
#include "agent_session_internal.h"

#include "jf_msg_blob.h"
#include "jf_msg_run.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (r->records && json_array_size(r->records) > 0 && !r->dropped) {
        agent_session_mark_progress(self, r->records);
        s_spool_msg(self, false, s_build_items, &r->records);
        json_decref(r->records); // NULL when the message took it
        r->records = json_array();
    }
}

static void s_flush_samples(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (r->samples && json_array_size(r->samples) > 0 && !r->dropped) {
        agent_session_mark_samples(self, r->samples);
        s_spool_msg(self, false, s_build_items, &r->samples);
        json_decref(r->samples);
        r->samples = json_array();
    }
}

static void s_add_record(agent_session_t *self, json_t *rec)
{
    agent_run_t *r = &self->run;
    if (json_array_size(r->records) == 0) {
        r->records_since_us = jf_clock_mono_us();
    }
    (void) json_array_append_new(r->records, rec);
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    if (json_array_size(r->records) >= AGENT_RECORDS_BATCH || !kind ||
        strcmp(kind, "minibatch") != 0) {
        s_flush_records(self); // epoch, start and measure records leave at once
    }
}

// Epoch records whose energy is final (or given up on) go out, in order.
static void s_release_epochs(agent_session_t *self, int64_t now_us, bool force)
{
    agent_run_t *r = &self->run;
    agent_measure_energy_t how = AGENT_MEASURE_MEASURED;
    for (json_t *rec; r->measure && (rec = agent_measure_pop_epoch(r->measure, now_us, force,
                                                                   &how)) != NULL;) {
        long long epoch = (long long) json_integer_value(json_object_get(rec, "epoch"));
        if (how == AGENT_MEASURE_NOT_CLOSED) {
            jf_log_warn("run: %s: no sample after epoch %lld ended in time; its energy is left "
                        "out",
                        r->spec.run_id, epoch);
        } else if (how == AGENT_MEASURE_ABSENT) {
            jf_log_info("run: %s: epoch %lld goes without energy: the RAPL counters give none "
                        "over it (the measure record says why)",
                        r->spec.run_id, epoch);
        }
        s_add_record(self, rec);
    }
}

int agent_session_on_record(json_t *rec, void *arg)
{
    agent_session_t *self = arg;
    agent_run_t *r = &self->run;
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    if (!kind || strcmp(kind, "epoch") != 0 || !r->measure) {
        s_add_record(self, rec);
        return 0;
    }
    // The epoch ended about now: its interval is [now - e2e, now] on this monotonic clock.
    int64_t now_us = jf_clock_mono_us();
    int epoch = (int) json_integer_value(json_object_get(rec, "epoch"));
    jf_err_t err = {0};
    if (agent_measure_add_epoch(r->measure, rec, now_us, &err) != 0) {
        jf_log_warn("run: %s: %s; the record goes without energy", r->spec.run_id, err.msg);
    }
    // Where the platform models the dataset, its residency comes with the trainer's lines.
    if (agent_platform_has_dataset_files(self->platform) &&
        agent_worker_residency(self->worker, r->spec.run_id, r->attempt, epoch, r->dataset_dir) ==
            0) {
        r->residency_pending++;
    }
    s_release_epochs(self, now_us, false);
    return 0;
}

void agent_session_on_residency(agent_session_t *self, const agent_worker_reply_t *reply)
{
    agent_run_t *r = &self->run;
    bool ours = (r->phase == AGENT_RUN_RUNNING || r->phase == AGENT_RUN_FINISHING) &&
                r->attempt == reply->attempt && strcmp(r->spec.run_id, reply->run) == 0;
    if (!ours) {
        return; // a run that has ended meanwhile
    }
    r->residency_pending--;
    if (reply->has_residency) {
        agent_measure_set_residency(r->measure, reply->epoch, &reply->residency);
    } else {
        jf_log_info("run: %s: after epoch %d: %s", r->spec.run_id, reply->epoch, reply->detail);
    }
}

// A sample belongs to the current run while every stop but its own has been answered: samples
// of an earlier run that ended without waiting for its stop are dropped.
static bool s_sample_is_ours(const agent_session_t *self)
{
    const agent_run_t *r = &self->run;
    return r->active && r->sampling && self->sampler_stops == (r->stop_sent ? 1 : 0);
}

static void s_on_sample(agent_session_t *self, json_t *sample)
{
    agent_run_t *r = &self->run;
    if (!s_sample_is_ours(self)) {
        json_decref(sample);
        return;
    }
    r->samples_seen++;
    jf_err_t err = {0};
    uint64_t n = 0;
    if (agent_measure_add_sample(r->measure, sample, &err) != 0 &&
        jf_log_ratelimit_allow(&self->rl_sample, &n)) {
        jf_log_warn("run: %s: a sample cannot count for energy: %s; it is kept as telemetry (%llu "
                    "more suppressed)",
                    r->spec.run_id, err.msg, (unsigned long long) n);
    }
    if (json_array_size(r->samples) == 0) {
        r->samples_since_us = jf_clock_mono_us();
    }
    if (r->reattached && r->first_t_after_us == 0) {
        r->first_t_after_us = json_integer_value(json_object_get(sample, "t_us"));
    }
    (void) json_array_append_new(r->samples, sample);
    s_release_epochs(self, jf_clock_mono_us(), false);
}

void agent_session_on_sampler(agent_session_t *self)
{
    agent_sampler_event_t ev;
    int rc = 0;
    for (int i = 0; i < 256 && (rc = agent_sampler_recv(self->sampler, &ev)) != -EAGAIN; i++) {
        uint64_t n = 0;
        if (rc != 0) {
            continue; // not a sampler message: cannot happen on an actor's own pipe
        }
        if (ev.kind == AGENT_SAMPLER_SAMPLE) {
            s_on_sample(self, ev.sample);
        } else if (ev.kind == AGENT_SAMPLER_STOPPED) {
            agent_run_t *r = &self->run;
            self->sampler_stops -= self->sampler_stops > 0;
            if (r->active && r->stop_sent && self->sampler_stops == 0) {
                r->sampler_stopped = true;
                r->sampling_stats = ev.stats;
            }
        } else if (ev.kind == AGENT_SAMPLER_WARNING &&
                   jf_log_ratelimit_allow(&self->rl_sample, &n)) {
            jf_log_warn("%s (%llu more suppressed)", ev.text, (unsigned long long) n);
        }
    }
}

void agent_session_stream_tick(agent_session_t *self, int64_t now_us)
{
    agent_run_t *r = &self->run;
    s_release_epochs(self, now_us, false);
    if (json_array_size(r->records) > 0 && now_us - r->records_since_us >= AGENT_RECORDS_FLUSH_US) {
        s_flush_records(self);
    }
    if (json_array_size(r->samples) > 0 && now_us - r->samples_since_us >= AGENT_TELEMETRY_FLUSH_US) {
        s_flush_samples(self);
    }
}

bool agent_session_stream_settled(const agent_session_t *self, int64_t now_us)
{
    const agent_run_t *r = &self->run;
    bool sampler_done = !r->sampling || r->sampler_stopped;
    return (sampler_done && r->residency_pending <= 0) || now_us >= r->finish_by_us;
}

static json_t *s_build_final(agent_session_t *self, const jf_msg_run_ref_t *ref, void *arg)
{
    const agent_runner_outcome_t *o = arg;
    return o->done ? jf_msg_run_done_new(self->next_id++, ref, o->epochs)
                   : jf_msg_run_failed_new(self->next_id++, ref, o->reason, o->detail);
}

static void s_add_measure(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    const agent_worker_reply_t *p = r->prepared;
    agent_measure_facts_t f = {.power_mode = r->power_mode,
                               .medium = r->spec.storage,
                               .mount = p && p->has_mount ? &p->mount : NULL,
                               .storage_checked = p && p->storage_checked,
                               .drop = p ? p->drop : JF_MEASURE_DROP_NONE,
                               .sampling = r->sampler_stopped ? &r->sampling_stats : NULL};
    json_t *rec = r->measure && r->power_mode ? agent_measure_record(r->measure, &f) : NULL;
    if (!rec) {
        jf_log_error("run: %s: cannot build the measure record; the run goes without it",
                     r->spec.run_id);
        return;
    }
    agent_session_mark_measure(self, rec);
    s_add_record(self, rec);
}

static json_t *s_build_weights(agent_session_t *self, const jf_msg_run_ref_t *ref, void *arg)
{
    return jf_msg_run_weights_new(self->next_id++, ref, arg);
}

// The trainer's final weights as run.weights chunks before the final message (docs/protocol.md
// §5.7.2); a run that should return weights and has none fails.
static void s_add_weights(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (!r->outcome.done || !r->spec.return_weights) {
        return;
    }
    unsigned char *data = NULL;
    size_t len = 0;
    char sha[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    jf_err_t err = {0};
    if (agent_session_weights_read(self, (void **) &data, &len, sha, &err) != 0) {
        r->outcome.done = false;
        r->outcome.reason = JF_FAIL_CRASHED;
        (void) snprintf(r->outcome.detail, sizeof r->outcome.detail,
                        "the trainer wrote no weights: %.200s", err.msg);
        return;
    }
    for (size_t off = 0; off < len; off += JF_BLOB_CHUNK_MAX_BYTES) {
        size_t n = len - off < JF_BLOB_CHUNK_MAX_BYTES ? len - off : JF_BLOB_CHUNK_MAX_BYTES;
        jf_msg_blob_part_t part = {.blob = sha,
                                   .size_bytes = (int64_t) len,
                                   .offset = (int64_t) off,
                                   .data = data + off,
                                   .len = n};
        s_spool_msg(self, false, s_build_weights, &part);
    }
    jf_log_info("run: %s: %zu bytes of weights (%.16s...) in the stream", r->spec.run_id, len,
                sha);
    free(data);
}

void agent_session_stream_finish(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (r->residency_pending > 0 || (r->sampling && !r->sampler_stopped)) {
        jf_log_warn("run: %s: %s; the measure record says what is missing", r->spec.run_id,
                    r->sampler_stopped ? "residency after the last epoch did not come in time"
                                       : "the sampler did not answer in time");
    }
    s_release_epochs(self, jf_clock_mono_us(), true);
    if (!r->dropped) {
        s_add_measure(self);
        s_flush_records(self);
        s_flush_samples(self);
        s_add_weights(self);
        s_spool_msg(self, true, s_build_final, &r->outcome);
    }
}
