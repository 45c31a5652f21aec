/* Agent session: weight blobs of federated rounds (docs/protocol.md §5.7). Before a run with
 * init_weights is prepared its blob is fetched, one chunk per blob.get, checked against its
 * sha256 and written to the state directory for the trainer's --init-weights; a blob that cannot
 * be fetched refuses the run. The trainer's --out-weights file is read back at the run's end
 * (agent_session_stream.c sends it as run.weights). */
#include "agent_session_internal.h"

#include "jf_blob.h"
#include "jf_fs.h"
#include "jf_msg_blob.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int agent_session_weights_paths(const agent_session_t *self, const char *run, int64_t attempt,
                                char *in, char *out, size_t size)
{
    const char *dir = agent_spool_state_dir(self->spool);
    if (!dir) {
        return -ENOENT;
    }
    int a = snprintf(in, size, "%s/" AGENT_WEIGHTS_IN_FMT, dir, run, (long long) attempt);
    int b = snprintf(out, size, "%s/" AGENT_WEIGHTS_OUT_FMT, dir, run, (long long) attempt);
    return a > 0 && (size_t) a < size && b > 0 && (size_t) b < size ? 0 : -ENAMETOOLONG;
}

static void s_ask(agent_session_t *self, int64_t now_us)
{
    agent_blob_fetch_t *f = &self->fetch;
    f->req_id = self->next_id++;
    f->sent_us = now_us;
    f->tries++;
    (void) agent_session_send(self,
                              jf_msg_blob_get_new(f->req_id, f->spec.init_weights, f->filled));
}

void agent_session_fetch_fini(agent_session_t *self)
{
    free(self->fetch.buf);
    self->fetch = (agent_blob_fetch_t){0};
}

// The fetch is over: prepare the run, or refuse it saying why.
static void s_end(agent_session_t *self, const char *why)
{
    agent_blob_fetch_t *f = &self->fetch;
    jf_run_spec_t spec = f->spec;
    int64_t attempt = f->attempt;
    char dataset_dir[PATH_MAX];
    memcpy(dataset_dir, f->dataset_dir, sizeof dataset_dir);
    bool cancelled = f->cancelled;
    agent_session_fetch_fini(self);
    if (cancelled) {
        agent_session_run_reject(self, &spec, attempt, JF_FAIL_CANCELLED,
                                 "cancelled while its initial weights were fetched");
    } else if (why) {
        agent_session_run_reject(self, &spec, attempt, JF_FAIL_INFEASIBLE, why);
    } else {
        agent_session_run_prepare(self, &spec, attempt, dataset_dir);
    }
}

void agent_session_fetch_begin(agent_session_t *self, const jf_run_spec_t *s, int64_t attempt,
                               const char *dataset_dir)
{
    char in[PATH_MAX], out[PATH_MAX];
    if (agent_session_weights_paths(self, s->run_id, attempt, in, out, sizeof in) != 0) {
        agent_session_run_reject(self, s, attempt, JF_FAIL_INFEASIBLE,
                                 "weight files need a state directory (--state-dir)");
        return;
    }
    agent_blob_fetch_t *f = &self->fetch;
    *f = (agent_blob_fetch_t){.active = true, .spec = *s, .attempt = attempt};
    (void) snprintf(f->dataset_dir, sizeof f->dataset_dir, "%s", dataset_dir);
    jf_log_info("run: fetching the initial weights %.16s... of %s attempt %lld", s->init_weights,
                s->run_id, (long long) attempt);
    s_ask(self, jf_clock_mono_us());
}

bool agent_session_fetch_is(const agent_session_t *self, const char *run, int64_t attempt)
{
    const agent_blob_fetch_t *f = &self->fetch;
    return f->active && f->attempt == attempt && strcmp(f->spec.run_id, run) == 0;
}

void agent_session_fetch_cancel(agent_session_t *self)
{
    self->fetch.cancelled = true;
}

// Checks the complete blob and writes it for the trainer; NULL, or why not into why.
static const char *s_complete(agent_session_t *self, char *why, size_t size)
{
    agent_blob_fetch_t *f = &self->fetch;
    char sha[JF_BLOB_SHA256_HEX_LEN + 1] = {0};
    char in[PATH_MAX], out[PATH_MAX];
    jf_err_t err = {0};
    if (jf_blob_sha256(f->buf, (size_t) f->size, sha, &err) != 0 ||
        strcmp(sha, f->spec.init_weights) != 0) {
        (void) snprintf(why, size, "initial weights %.16s...: the bytes received hash to %.16s...",
                        f->spec.init_weights, err.msg[0] ? err.msg : sha);
        return why;
    }
    if (agent_session_weights_paths(self, f->spec.run_id, f->attempt, in, out, sizeof in) != 0 ||
        jf_fs_write_atomic(in, f->buf, (size_t) f->size, &err) != 0) {
        (void) snprintf(why, size, "initial weights: %s", err.msg[0] ? err.msg : "no path");
        return why;
    }
    jf_log_info("run: initial weights of %s in (%lld bytes)", f->spec.run_id, (long long) f->size);
    return NULL;
}

// Takes a checked chunk into the blob; why is set when it does not continue it.
static const char *s_take(agent_blob_fetch_t *f, const jf_msg_blob_chunk_t *c, char *why,
                          size_t size)
{
    if (!f->buf) {
        f->buf = malloc((size_t) c->size_bytes);
        f->size = c->size_bytes;
        if (!f->buf) {
            (void) snprintf(why, size, "out of memory for %lld bytes of weights",
                            (long long) c->size_bytes);
            return why;
        }
    }
    if (c->size_bytes != f->size || c->offset != f->filled) {
        (void) snprintf(why, size,
                        "initial weights: chunk at %lld of a %lld-byte blob does not continue "
                        "the %lld-byte blob at %lld",
                        (long long) c->offset, (long long) c->size_bytes, (long long) f->size,
                        (long long) f->filled);
        return why;
    }
    memcpy(f->buf + f->filled, c->data, c->len);
    f->filled += (int64_t) c->len;
    f->tries = 0;
    return NULL;
}

void agent_session_on_blob_data(agent_session_t *self, const jf_msg_t *msg)
{
    agent_blob_fetch_t *f = &self->fetch;
    const jf_msg_blob_chunk_t *c = msg->chunk;
    if (!f->active || !c || c->re != f->req_id || strcmp(c->blob, f->spec.init_weights) != 0) {
        jf_log_debug("run: a blob.data that answers nothing outstanding, ignored");
        return;
    }
    char why[JF_ERR_MSG_MAX + 64] = {0};
    const char *bad = s_take(f, c, why, sizeof why);
    if (!bad && f->filled == f->size) {
        bad = s_complete(self, why, sizeof why);
        s_end(self, bad);
        return;
    }
    if (bad) {
        s_end(self, bad);
        return;
    }
    s_ask(self, jf_clock_mono_us());
}

bool agent_session_fetch_on_error(agent_session_t *self, int64_t re, const char *code,
                                  const char *detail)
{
    agent_blob_fetch_t *f = &self->fetch;
    if (!f->active || re != f->req_id) {
        return false;
    }
    char why[JF_MSG_TEXT_MAX + 128] = {0};
    (void) snprintf(why, sizeof why, "initial weights %.16s... cannot be fetched: %s: %s",
                    f->spec.init_weights, code, detail);
    if (strcmp(code, JF_MSG_E_NOT_REGISTERED) == 0) {
        return false; // the session is being restored: the retry timer asks again
    }
    s_end(self, why);
    return true;
}

void agent_session_fetch_tick(agent_session_t *self, int64_t now_us)
{
    agent_blob_fetch_t *f = &self->fetch;
    if (!f->active || now_us - f->sent_us < AGENT_BLOB_RETRY_US) {
        return;
    }
    if (f->tries >= AGENT_BLOB_TRIES) {
        char why[128];
        (void) snprintf(why, sizeof why,
                        "initial weights %.16s...: no answer to %d requests %lld s apart",
                        f->spec.init_weights, AGENT_BLOB_TRIES,
                        (long long) (AGENT_BLOB_RETRY_US / JF_US_PER_S));
        s_end(self, why);
        return;
    }
    jf_log_warn("run: no answer to blob.get for %.16s... at %lld; asking again",
                f->spec.init_weights, (long long) f->filled);
    s_ask(self, now_us);
}

int agent_session_weights_read(const agent_session_t *self, void **ret_data, size_t *ret_len,
                               char *ret_sha, jf_err_t *err)
{
    const agent_run_t *r = &self->run;
    char in[PATH_MAX], out[PATH_MAX];
    void *data = NULL;
    size_t len = 0;
    if (agent_session_weights_paths(self, r->spec.run_id, r->attempt, in, out, sizeof in) != 0) {
        return jf_err_set(err, -ENOENT, "no state directory for the weight files");
    }
    int rc = jf_fs_read_all(out, JF_BLOB_MAX_BYTES, &data, &len, err);
    if (rc == 0 && len == 0) {
        rc = jf_err_set(err, -EINVAL, "%s: empty", out);
    }
    rc = rc ? rc : jf_blob_sha256(data, len, ret_sha, err);
    if (rc != 0) {
        free(data);
        return rc;
    }
    *ret_data = data;
    *ret_len = len;
    return 0;
}
