/* Agent session: what a restarted agent needs to re-attach to the trainer of the run in
 * progress (docs/protocol.md §4.4): the trainer's row in the spool (pid, start time, output
 * file, run spec, power state) and its read mark, which moves with every progress message in
 * the same spool transaction, so that no record is lost or given twice across a restart; the
 * mark also carries the run's measure, the clock state stored before the run and a clean-stop
 * flag (§4.4.1). */
#include "agent_session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_session_trainer_path(const agent_session_t *self, const char *run, int64_t attempt,
                               char *buf, size_t size)
{
    const char *dir = agent_spool_state_dir(self->spool);
    if (!dir) {
        return -ENOENT;
    }
    int n = snprintf(buf, size, "%s/" AGENT_TRAINER_OUT_FMT, dir, run, (long long) attempt);
    return n > 0 && (size_t) n < size ? 0 : -ENAMETOOLONG;
}

// The mark with what a restarted agent continues from: the run's measure carry
// (agent_measure_carry; absent before the measure exists), its clock record (absent without a
// stored clock state) and whether a clean agent stop stopped the trainer (absent if not).
static char *s_mark_text(const agent_run_t *r)
{
    const agent_runner_mark_t *m = &r->mark;
    json_t *carry = r->measure ? agent_measure_carry(r->measure) : NULL;
    json_t *o =
        r->measure && !carry
            ? NULL
            : json_pack("{s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o*, s:O*, s:o*}", "offset",
                        (json_int_t) m->offset, "start", m->start, "epoch", (json_int_t) m->epoch,
                        "epochs", (json_int_t) m->epochs, "mb_epoch", (json_int_t) m->mb_epoch,
                        "mb_index", (json_int_t) m->mb_index, "samples", (json_int_t) m->samples,
                        "last_t_us", (json_int_t) m->last_t_us, "measure", carry, "clocks",
                        r->clocks, "stopped", r->stopped_by_agent ? json_true() : NULL);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

int agent_session_mark_parse(const char *text, agent_runner_mark_t *ret_mark, json_t **ret_extra,
                             jf_err_t *err)
{
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr);
    json_int_t v[8] = {0};
    int start = 0;
    json_t *carry = NULL, *clocks = NULL;
    int stopped = 0;
    int rc = o ? json_unpack_ex(o, &jerr, JSON_STRICT,
                                "{s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s?o, s?o, s?b}", "offset",
                                &v[0], "start", &start, "epoch", &v[1], "epochs", &v[2], "mb_epoch",
                                &v[3], "mb_index", &v[4], "samples", &v[5], "last_t_us", &v[6],
                                "measure", &carry, "clocks", &clocks, "stopped", &stopped)
               : -1;
    json_t *extra = rc == 0 && ret_extra ? json_pack("{s:O*, s:O*, s:b}", "measure", carry,
                                                     "clocks", clocks, "stopped", stopped)
                                         : NULL;
    json_decref(o);
    if (rc != 0 || v[0] < 0 || v[2] < 0 || v[5] < 0 || (ret_extra && !extra)) {
        json_decref(extra);
        return jf_err_set(err, -EIO, "trainer read mark '%.100s': %s", text, jerr.text);
    }
    if (ret_extra) {
        *ret_extra = extra;
    }
    *ret_mark = (agent_runner_mark_t){.offset = v[0],
                                      .start = start,
                                      .epoch = v[1],
                                      .epochs = v[2],
                                      .mb_epoch = v[3],
                                      .mb_index = v[4],
                                      .samples = v[5],
                                      .last_t_us = v[6]};
    return 0;
}

int agent_session_trainer_record(agent_session_t *self, const char *out_path, jf_err_t *err)
{
    agent_run_t *r = &self->run;
    agent_spool_db_trainer_t t = {.out_path = (char *) out_path};
    agent_runner_identity(r->runner, &t.pid, &t.start_ticks);
    json_t *spec = jf_run_spec_to_json(&r->spec);
    t.spec = spec ? json_dumps(spec, JSON_COMPACT) : NULL;
    json_decref(spec);
    t.power = r->power_mode ? json_dumps(r->power_mode, JSON_COMPACT) : NULL;
    t.mark = s_mark_text(r);
    int rc = 0;
    if (t.start_ticks <= 0) {
        // Held at its gate, the child cannot have ended: /proc did not say when it started.
        rc = jf_err_set(err, -EIO, "cannot read the start time of trainer pid %lld from /proc",
                        (long long) t.pid);
    } else if (!t.spec || !t.mark) {
        rc = jf_err_set(err, -ENOMEM, "out of memory");
    } else {
        rc = agent_spool_set_trainer(self->spool, r->spec.run_id, r->attempt, &t, err);
    }
    r->trainer_recorded = rc == 0;
    if (rc != 0) {
        jf_err_prefix(err, "cannot record its trainer in the spool");
    }
    free(t.spec);
    free(t.power);
    free(t.mark);
    return rc;
}

// Moves the mark over the records of one progress message.
static void s_mark_over(agent_runner_mark_t *m, const json_t *records)
{
    size_t i = 0;
    json_t *rec = NULL;
    json_array_foreach(records, i, rec)
    {
        const char *kind = json_string_value(json_object_get(rec, "kind"));
        json_int_t epoch = json_integer_value(json_object_get(rec, "epoch"));
        if (kind && strcmp(kind, "start") == 0) {
            m->start = true;
        } else if (kind && strcmp(kind, "epoch") == 0) {
            m->epoch = epoch;
            m->epochs++;
        } else if (kind && strcmp(kind, "minibatch") == 0) {
            m->mb_epoch = epoch;
            m->mb_index = json_integer_value(json_object_get(rec, "index"));
        }
    }
}

// The mark goes with the stream's next message.
static void s_store_mark(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    char *text = s_mark_text(r);
    if (!text || agent_spool_set_mark(self->spool, r->spec.run_id, r->attempt, text) != 0) {
        jf_log_warn("run: %s: out of memory for the trainer's read mark; a re-attach would read "
                    "from an older one and skip what the spool has by record",
                    r->spec.run_id);
    }
    free(text);
}

void agent_session_mark_samples(agent_session_t *self, const json_t *samples)
{
    agent_run_t *r = &self->run;
    size_t n = json_array_size(samples);
    if (!r->runner || !r->trainer_recorded || n == 0) {
        return;
    }
    r->mark.samples += (int64_t) n;
    r->mark.last_t_us = json_integer_value(json_object_get(json_array_get(samples, n - 1), "t_us"));
    s_store_mark(self);
}

void agent_session_mark_progress(agent_session_t *self, const json_t *records)
{
    agent_run_t *r = &self->run;
    if (!r->runner || !r->trainer_recorded) {
        return;
    }
    s_mark_over(&r->mark, records);
    // Every line up to the runner's offset gave records that are in this message or earlier
    // ones, unless an epoch record still waits for its energy: then the offset stays, and the
    // kinds' last records keep what is re-read from being given twice.
    if (!r->measure || agent_measure_held(r->measure) == 0) {
        r->mark.offset = agent_runner_offset(r->runner);
    }
    s_store_mark(self);
}

void agent_session_mark_measure(const agent_session_t *self, json_t *measure)
{
    const agent_run_t *r = &self->run;
    json_t *tel = json_object_get(measure, "telemetry");
    if (!r->reattached || !json_is_object(tel)) {
        return;
    }
    json_int_t samples = json_integer_value(json_object_get(tel, "samples"));
    (void) json_object_set_new(tel, "samples", json_integer(samples + r->samples_before));
    // The time no agent sampled is the longest gap, unless a longer one came before or after.
    int64_t gap_us = r->first_t_after_us > 0 && r->last_t_before_us > 0
                         ? r->first_t_after_us - r->last_t_before_us
                         : 0;
    if (gap_us > json_integer_value(json_object_get(tel, "max_gap_us"))) {
        (void) json_object_set_new(tel, "max_gap_us", json_integer(gap_us));
    }
}

int agent_session_trainer_replay(const char *path, int64_t offset, agent_runner_line_fn fn,
                                 void *arg, jf_err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        return jf_err_set(err, -errno, "cannot read the trainer's output '%.200s': %s", path,
                          strerror(errno));
    }
    char *line = NULL;
    size_t cap = 0;
    int64_t at = 0;
    ssize_t n = 0;
    // Only whole lines before the mark: the runner reads the rest (and hands them to fn too).
    while (at < offset && (n = getline(&line, &cap, f)) > 0 && at + n <= offset) {
        at += n;
        json_t *o = json_loads(line, 0, NULL);
        if (json_is_object(o)) {
            fn(o, arg);
        }
        json_decref(o);
    }
    free(line);
    (void) fclose(f); // read only: nothing to lose
    return 0;
}

void agent_session_trainer_stopping(agent_session_t *self)
{
    agent_run_t *r = &self->run;
    if (!r->active || !r->runner || !r->trainer_recorded || agent_runner_has_ended(r->runner) ||
        !agent_spool_is_open(self->spool, r->spec.run_id, r->attempt)) {
        return;
    }
    r->stopped_by_agent = true;
    jf_err_t err = {0};
    // The row as it is, its mark with the flag: what the spool has is what the mark says. A row
    // that cannot be rewritten stays as it was, so the output file stays for the next start.
    if (agent_session_trainer_record(self, r->out_path, &err) != 0) {
        r->trainer_recorded = true;
        jf_log_warn("run: %s: %s; the next start reports the attempt as a trainer that ended "
                    "while no agent watched it",
                    r->spec.run_id, err.msg);
    }
}
