/* In-memory outgoing streams with cumulative acks and go-back-N resend. */
#include "agent_spool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct s_item {
    int64_t seq;
    char *text; // owned
    size_t len;
} s_item_t;

typedef struct s_stream {
    bool open;
    char run[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    int64_t next_seq;     // seq of the next appended message
    int64_t acked_seq;    // everything <= this is stored by the coordinator
    int64_t sent_seq;     // everything <= this was sent since the last rewind
    int64_t last_ack_us;  // when acked_seq last advanced (or the stream was rewound)
    bool final_appended;
    size_t n, cap;
    s_item_t *items;      // owned: seqs acked_seq + 1 .. next_seq - 1, in order
} s_stream_t;

struct agent_spool {
    s_stream_t streams[AGENT_SPOOL_STREAMS_MAX];
    size_t bytes;
};

agent_spool_t *agent_spool_new(void)
{
    return calloc(1, sizeof(agent_spool_t));
}

static void s_stream_clear(agent_spool_t *self, s_stream_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        self->bytes -= s->items[i].len;
        free(s->items[i].text);
    }
    free(s->items);
    *s = (s_stream_t){0};
}

void agent_spool_destroy(agent_spool_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        s_stream_clear(*self_p, &(*self_p)->streams[i]);
    }
    free(*self_p);
    *self_p = NULL;
}

static s_stream_t *s_find(const agent_spool_t *self, const char *run, int64_t attempt)
{
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        const s_stream_t *s = &self->streams[i];
        if (s->open && s->attempt == attempt && strcmp(s->run, run) == 0) {
            return (s_stream_t *) s;
        }
    }
    return NULL;
}

int agent_spool_open(agent_spool_t *self, const char *run, int64_t attempt, jf_err_t *err)
{
    if (s_find(self, run, attempt)) {
        return 0;
    }
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        s_stream_t *s = &self->streams[i];
        if (!s->open) {
            *s = (s_stream_t){.open = true, .attempt = attempt, .next_seq = 1};
            (void) snprintf(s->run, sizeof s->run, "%s", run);
            return 0;
        }
    }
    return jf_err_set(err, -ENOSPC, "spool: %d streams already open", AGENT_SPOOL_STREAMS_MAX);
}

int64_t agent_spool_next_seq(const agent_spool_t *self, const char *run, int64_t attempt)
{
    const s_stream_t *s = s_find(self, run, attempt);
    return s ? s->next_seq : 0;
}

bool agent_spool_has(const agent_spool_t *self, const char *run, int64_t attempt)
{
    return s_find(self, run, attempt) != NULL;
}

size_t agent_spool_bytes(const agent_spool_t *self)
{
    return self->bytes;
}

int agent_spool_append(agent_spool_t *self, const char *run, int64_t attempt, int64_t seq,
                       char *text, size_t len, bool final, jf_err_t *err)
{
    s_stream_t *s = s_find(self, run, attempt);
    if (!s || seq != s->next_seq || s->final_appended) {
        return jf_err_set(err, -EINVAL, "spool: run %s attempt %lld does not expect seq %lld", run,
                          (long long) attempt, (long long) seq);
    }
    if (self->bytes + len > AGENT_SPOOL_BYTES_MAX) {
        return jf_err_set(err, -ENOSPC, "spool: %zu bytes held, cap reached", self->bytes);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        s_item_t *grown = realloc(s->items, cap * sizeof *grown);
        if (!grown) {
            return jf_err_set(err, -ENOMEM, "spool: out of memory");
        }
        s->items = grown;
        s->cap = cap;
    }
    s->items[s->n++] = (s_item_t){.seq = seq, .text = text, .len = len};
    s->next_seq++;
    s->final_appended = final;
    self->bytes += len;
    return 0;
}

void agent_spool_ack(agent_spool_t *self, const char *run, int64_t attempt, int64_t seq)
{
    s_stream_t *s = s_find(self, run, attempt);
    if (!s || seq <= s->acked_seq) {
        return;
    }
    size_t drop = 0;
    while (drop < s->n && s->items[drop].seq <= seq) {
        self->bytes -= s->items[drop].len;
        free(s->items[drop].text);
        drop++;
    }
    memmove(s->items, s->items + drop, (s->n - drop) * sizeof *s->items);
    s->n -= drop;
    s->acked_seq = seq < s->next_seq ? seq : s->next_seq - 1;
    s->sent_seq = s->sent_seq > s->acked_seq ? s->sent_seq : s->acked_seq;
    s->last_ack_us = 0; // restart the resend timer from the next pump
    if (s->final_appended && s->n == 0) {
        s_stream_clear(self, s);
    }
}

void agent_spool_rewind(agent_spool_t *self, const char *run, int64_t attempt, int64_t acked_seq)
{
    s_stream_t *s = s_find(self, run, attempt);
    if (!s) {
        return;
    }
    agent_spool_ack(self, run, attempt, acked_seq);
    s = s_find(self, run, attempt);
    if (s) {
        s->sent_seq = s->acked_seq;
        s->last_ack_us = 0;
    }
}

void agent_spool_drop(agent_spool_t *self, const char *run, int64_t attempt)
{
    s_stream_t *s = s_find(self, run, attempt);
    if (s) {
        s_stream_clear(self, s);
    }
}

// Sends what the window allows of one stream. *ret_refused is set when send refused a message:
// the socket is full or down, so no other stream should try either.
static size_t s_pump_stream(s_stream_t *s, int64_t now_us, agent_spool_send_fn send, void *arg,
                            bool *ret_refused)
{
    if (s->last_ack_us == 0) {
        s->last_ack_us = now_us;
    }
    if (s->sent_seq > s->acked_seq && now_us - s->last_ack_us > AGENT_SPOOL_RESEND_US) {
        s->sent_seq = s->acked_seq; // go back N: nothing was acked for a while
        s->last_ack_us = now_us;
    }
    size_t sent = 0;
    for (size_t i = 0; i < s->n; i++) {
        s_item_t *it = &s->items[i];
        if (it->seq <= s->sent_seq) {
            continue;
        }
        if (it->seq - s->acked_seq > AGENT_SPOOL_WINDOW) {
            break;
        }
        if (s->sent_seq == s->acked_seq) {
            s->last_ack_us = now_us; // nothing was in flight: the ack timer starts now
        }
        if (send(it->text, it->len, arg) != 0) {
            *ret_refused = true;
            break;
        }
        s->sent_seq = it->seq;
        sent++;
    }
    return sent;
}

size_t agent_spool_pump(agent_spool_t *self, int64_t now_mono_us, agent_spool_send_fn send,
                        void *arg)
{
    size_t sent = 0;
    bool refused = false;
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX && !refused; i++) {
        if (self->streams[i].open) {
            sent += s_pump_stream(&self->streams[i], now_mono_us, send, arg, &refused);
        }
    }
    return sent;
}

size_t agent_spool_inventory(const agent_spool_t *self, jf_hello_run_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX && n < max; i++) {
        const s_stream_t *s = &self->streams[i];
        if (s->open) {
            out[n] = (jf_hello_run_t){.attempt = s->attempt, .next_seq = s->next_seq,
                                      .finished = s->final_appended};
            memcpy(out[n].run, s->run, sizeof out[n].run);
            n++;
        }
    }
    return n;
}
