/* Outgoing streams with cumulative acks and go-back-N resend over an index in memory; the
 * messages themselves are in the spool file (agent_spool_db.c), or in memory without one. */
#include "agent_spool.h"

#include "agent_spool_db.h"
#include "jf_msg.h"
#include "jf_msg_run.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct s_item {
    int64_t seq;
    char *text; // owned; NULL when the message is only in the file
    size_t len;
} s_item_t;

typedef struct s_stream {
    bool open;
    char run[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    int64_t next_seq;    // seq of the next appended message
    int64_t acked_seq;   // everything <= this is stored by the coordinator
    int64_t sent_seq;    // everything <= this was sent since the last rewind
    int64_t last_ack_us; // when acked_seq last advanced (or the stream was rewound)
    bool final_appended;
    bool live;           // its trainer was re-attached: not an orphan (agent_spool_keep)
    char *mark;          // owned: the trainer read mark the next append stores; NULL: none
    size_t n, cap;
    s_item_t *items; // owned: seqs acked_seq + 1 .. next_seq - 1, in order
} s_stream_t;

struct agent_spool {
    s_stream_t streams[AGENT_SPOOL_STREAMS_MAX];
    size_t bytes;
    int64_t max_bytes;
    bool forget_on_send; // tests only: what is sent counts as acknowledged (no resend)
    int64_t window;       // messages in flight per stream: the coordinator's credit, or the default
    agent_spool_db_t *db; // owned; NULL: memory only
    char state_dir[PATH_MAX]; // the --state-dir; "" when memory only
};

static void s_stream_clear(agent_spool_t *self, s_stream_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        self->bytes -= s->items[i].len;
        free(s->items[i].text);
    }
    free(s->items);
    free(s->mark);
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
    agent_spool_db_destroy(&(*self_p)->db);
    free(*self_p);
    *self_p = NULL;
}

static int s_push_item(s_stream_t *s, const s_item_t *item, jf_err_t *err)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 64;
        s_item_t *grown = realloc(s->items, cap * sizeof *grown);
        if (!grown) {
            return jf_err_set(err, -ENOMEM, "spool: out of memory");
        }
        s->items = grown;
        s->cap = cap;
    }
    s->items[s->n++] = *item;
    return 0;
}

static s_stream_t *s_free_slot(agent_spool_t *self)
{
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        if (!self->streams[i].open) {
            return &self->streams[i];
        }
    }
    return NULL;
}

// Loading from the file: streams arrive one by one, each followed by its rows in seq order.
typedef struct s_loader {
    agent_spool_t *spool;
    s_stream_t *current;
} s_loader_t;

static int s_load_stream(const agent_spool_db_stream_t *in, void *arg, jf_err_t *err)
{
    s_loader_t *l = arg;
    l->current = s_free_slot(l->spool);
    if (!l->current) {
        return jf_err_set(err, -EIO, "spool '%s': more than %d streams%s",
                          agent_spool_db_path(l->spool->db), AGENT_SPOOL_STREAMS_MAX,
                          "; the file was not written by this agent: move it aside");
    }
    *l->current = (s_stream_t){.open = true,
                               .attempt = in->attempt,
                               .next_seq = in->next_seq,
                               .acked_seq = in->next_seq - 1,
                               .sent_seq = in->next_seq - 1,
                               .final_appended = in->final};
    memcpy(l->current->run, in->run, sizeof l->current->run);
    return 0;
}

static int s_load_row(const agent_spool_db_row_t *row, void *arg, jf_err_t *err)
{
    s_loader_t *l = arg;
    s_stream_t *s = l->current;
    if (s->n == 0) {
        s->acked_seq = row->seq - 1; // the rows before were acknowledged and deleted
        s->sent_seq = s->acked_seq;
    }
    l->spool->bytes += row->len;
    return s_push_item(s, &(s_item_t){.seq = row->seq, .len = row->len}, err);
}

// A final stream without rows was acknowledged but not yet forgotten when the agent stopped.
static void s_forget_finished(agent_spool_t *self)
{
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        s_stream_t *s = &self->streams[i];
        if (s->open && s->final_appended && s->n == 0) {
            (void)agent_spool_db_ack(self->db, s->run, s->attempt, s->next_seq, true, NULL);
            s_stream_clear(self, s); // if the delete failed, the next start forgets it again
        }
    }
}

// The directory is the agent's own: created private, and an existing one is used as it is.
static int s_make_state_dir(const char *dir, char *path, size_t size, jf_err_t *err)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        return jf_err_set(err, -errno, "state dir '%.200s': cannot create it: %s (--state-dir)",
                          dir, strerror(errno));
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        return jf_err_set(err, -ENOTDIR, "state dir '%.200s': not a directory (--state-dir)", dir);
    }
    int n = snprintf(path, size, "%s/%s", dir, AGENT_SPOOL_FILE_NAME);
    return n > 0 && (size_t)n < size
               ? 0
               : jf_err_set(err, -ENAMETOOLONG, "state dir '%.200s': path too long", dir);
}

agent_spool_t *agent_spool_new(const agent_spool_opts_t *opts, jf_err_t *err)
{
    if (opts->max_bytes <= 0) {
        jf_err_set(err, -EINVAL, "spool: max_bytes must be > 0, got %lld",
                   (long long)opts->max_bytes);
        return NULL;
    }
    agent_spool_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "spool: out of memory");
        return NULL;
    }
    self->max_bytes = opts->max_bytes;
    self->window = AGENT_SPOOL_WINDOW;
    self->forget_on_send = opts->forget_on_send;
    char path[PATH_MAX];
    if (opts->state_dir && s_make_state_dir(opts->state_dir, path, sizeof path, err) != 0) {
        agent_spool_destroy(&self);
        return NULL;
    }
    if (opts->state_dir) {
        (void)snprintf(self->state_dir, sizeof self->state_dir, "%s", opts->state_dir);
        self->db = agent_spool_db_new(path, err);
        s_loader_t l = {.spool = self};
        agent_spool_db_visitor_t v = {.on_stream = s_load_stream, .on_row = s_load_row, .arg = &l};
        if (!self->db || agent_spool_db_load(self->db, &v, err) != 0) {
            agent_spool_destroy(&self);
            return NULL;
        }
        s_forget_finished(self);
    }
    return self;
}

static s_stream_t *s_find(const agent_spool_t *self, const char *run, int64_t attempt)
{
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        const s_stream_t *s = &self->streams[i];
        if (s->open && s->attempt == attempt && strcmp(s->run, run) == 0) {
            return (s_stream_t *)s;
        }
    }
    return NULL;
}

int agent_spool_open(agent_spool_t *self, const char *run, int64_t attempt, jf_err_t *err)
{
    if (s_find(self, run, attempt)) {
        return 0;
    }
    s_stream_t *s = s_free_slot(self);
    if (!s) {
        return jf_err_set(err, -ENOSPC, "spool: %d streams already open", AGENT_SPOOL_STREAMS_MAX);
    }
    if (agent_spool_is_full(self)) {
        return jf_err_set(err, -ENOSPC, "spool full: %zu bytes held, cap %lld (--spool-max-bytes)",
                          self->bytes, (long long)self->max_bytes);
    }
    int rc = self->db ? agent_spool_db_open_stream(self->db, run, attempt, err) : 0;
    if (rc == 0) {
        *s = (s_stream_t){.open = true, .attempt = attempt, .next_seq = 1};
        (void)snprintf(s->run, sizeof s->run, "%s", run);
    }
    return rc;
}

bool agent_spool_is_full(const agent_spool_t *self)
{
    return (int64_t)self->bytes >= self->max_bytes;
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

bool agent_spool_is_open(const agent_spool_t *self, const char *run, int64_t attempt)
{
    const s_stream_t *s = s_find(self, run, attempt);
    return s && !s->final_appended;
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
                          (long long)attempt, (long long)seq);
    }
    // Grown first, so that a message on disk always has its index entry.
    if (s_push_item(s, &(s_item_t){.seq = seq, .text = text, .len = len}, err) != 0) {
        return -ENOMEM;
    }
    agent_spool_db_stream_t after = {.attempt = attempt, .next_seq = seq + 1, .final = final};
    memcpy(after.run, s->run, sizeof after.run);
    if (self->db && agent_spool_db_append(self->db, &after, text, len, s->mark, err) != 0) {
        s->n--;
        return -EIO;
    }
    if (self->db) {
        free(text); // on disk now: memory keeps only the index
        s->items[s->n - 1].text = NULL;
    }
    free(s->mark); // stored with the message
    s->mark = NULL;
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
    if (self->db) {
        // A failed delete leaves rows that a restart resends and the coordinator de-duplicates.
        (void)agent_spool_db_ack(self->db, s->run, s->attempt, s->acked_seq,
                                 s->final_appended && s->n == 0, NULL);
    }
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
    if (s && self->db) {
        // A failed delete leaves a stream that the next start announces, and the coordinator
        // answers drop again.
        (void)agent_spool_db_ack(self->db, s->run, s->attempt, INT64_MAX, true, NULL);
    }
    if (s) {
        s_stream_clear(self, s);
    }
}

typedef struct s_pump {
    agent_spool_db_t *db; // borrowed; NULL: texts are in memory
    agent_spool_send_fn send;
    void *arg;
    bool refused;   // send refused a message: the socket is full or down, so no
                    // other stream should try either
    int64_t window; // messages in flight per stream
} s_pump_t;

// Sends one message, from memory or read back from the file. 0 if sent.
static int s_send_item(s_pump_t *p, const s_stream_t *s, const s_item_t *it)
{
    if (it->text) {
        return p->send(it->text, it->len, p->arg) == 0 ? 0 : (p->refused = true, -EAGAIN);
    }
    char *text = NULL;
    size_t len = 0;
    if (agent_spool_db_read(p->db, s->run, s->attempt, it->seq, &text, &len, NULL) != 0) {
        return -EIO; // this stream waits; the resend timer tries again
    }
    int rc = p->send(text, len, p->arg) == 0 ? 0 : (p->refused = true, -EAGAIN);
    free(text);
    return rc;
}

// Sends what the window allows of one stream.
static size_t s_pump_stream(s_pump_t *p, s_stream_t *s, int64_t now_us)
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
        const s_item_t *it = &s->items[i];
        if (it->seq <= s->sent_seq) {
            continue;
        }
        if (it->seq - s->acked_seq > p->window) {
            break;
        }
        if (s->sent_seq == s->acked_seq) {
            s->last_ack_us = now_us; // nothing was in flight: the ack timer starts now
        }
        if (s_send_item(p, s, it) != 0) {
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
    s_pump_t p = {.db = self->db, .send = send, .arg = arg, .window = self->window};
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX && !p.refused; i++) {
        s_stream_t *s = &self->streams[i];
        if (s->open) {
            sent += s_pump_stream(&p, s, now_mono_us);
        }
        if (s->open && self->forget_on_send && s->sent_seq > s->acked_seq) {
            // The test-only control without acknowledgements (partition_test.c): forget what
            // was sent, so nothing lost on the way can be resent.
            char run[JF_RUN_ID_LEN + 1];
            (void)snprintf(run, sizeof run, "%s", s->run);
            agent_spool_ack(self, run, s->attempt, s->sent_seq);
        }
    }
    return sent;
}

void agent_spool_set_window(agent_spool_t *self, int64_t credit)
{
    self->window = credit > 0 && credit < AGENT_SPOOL_WINDOW ? credit : AGENT_SPOOL_WINDOW;
}

int64_t agent_spool_window(const agent_spool_t *self)
{
    return self->window;
}

size_t agent_spool_inventory(const agent_spool_t *self, jf_hello_run_t *out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX && n < max; i++) {
        const s_stream_t *s = &self->streams[i];
        if (s->open) {
            out[n] = (jf_hello_run_t){
                .attempt = s->attempt, .next_seq = s->next_seq, .finished = s->final_appended};
            memcpy(out[n].run, s->run, sizeof out[n].run);
            n++;
        }
    }
    return n;
}

// Builds and appends the crash report that ends one orphaned stream.
static int s_end_orphan(agent_spool_t *self, const s_stream_t *s, int64_t id, jf_err_t *err)
{
    jf_msg_run_ref_t ref = {.attempt = s->attempt, .seq = s->next_seq};
    memcpy(ref.run, s->run, sizeof ref.run);
    json_t *msg = jf_msg_run_failed_new(id, &ref, JF_FAIL_CRASHED, AGENT_SPOOL_RESTART_DETAIL);
    size_t len = 0;
    char *text = msg ? jf_msg_encode(msg, &len) : NULL;
    json_decref(msg);
    if (!text) {
        return jf_err_set(err, -ENOMEM, "spool: out of memory");
    }
    int rc = agent_spool_append(self, ref.run, ref.attempt, ref.seq, text, len, true, err);
    if (rc != 0) {
        free(text);
    }
    return rc;
}

int agent_spool_end_orphans(agent_spool_t *self, int64_t *next_id, jf_err_t *err)
{
    int ended = 0;
    for (size_t i = 0; i < AGENT_SPOOL_STREAMS_MAX; i++) {
        const s_stream_t *s = &self->streams[i];
        if (!s->open || s->final_appended || s->live) {
            continue;
        }
        int rc = s_end_orphan(self, s, *next_id, err);
        if (rc != 0) {
            return rc;
        }
        (*next_id)++;
        ended++;
    }
    return ended;
}

const char *agent_spool_state_dir(const agent_spool_t *self)
{
    return self->db ? self->state_dir : NULL;
}

int agent_spool_set_trainer(agent_spool_t *self, const char *run, int64_t attempt,
                            const agent_spool_db_trainer_t *t, jf_err_t *err)
{
    if (!self->db || !s_find(self, run, attempt)) {
        return jf_err_set(err, -EINVAL, "spool: no file or no stream for run %s attempt %lld", run,
                          (long long)attempt);
    }
    return agent_spool_db_put_trainer(self->db, run, attempt, t, err);
}

int agent_spool_trainer(agent_spool_t *self, const char *run, int64_t attempt,
                        agent_spool_db_trainer_t *ret_trainer, jf_err_t *err)
{
    return self->db ? agent_spool_db_trainer(self->db, run, attempt, ret_trainer, err) : -ENOENT;
}

int agent_spool_set_mark(agent_spool_t *self, const char *run, int64_t attempt, const char *mark)
{
    s_stream_t *s = s_find(self, run, attempt);
    char *copy = s && self->db ? strdup(mark) : NULL;
    if (!copy) {
        return s && self->db ? -ENOMEM : 0;
    }
    free(s->mark);
    s->mark = copy;
    return 0;
}

void agent_spool_keep(agent_spool_t *self, const char *run, int64_t attempt)
{
    s_stream_t *s = s_find(self, run, attempt);
    if (s) {
        s->live = true;
    }
}
