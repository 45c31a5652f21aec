/* Telemetry sampler actor: deadlines on CLOCK_MONOTONIC, samples to the loop through the pipe.
 * Pipe messages, loop -> actor: "START" + a start record, "STOP", "$TERM"; actor -> loop:
 * "SAMPLE" + JSON text, "STOPPED" + agent_sampler_stats_t, "WARN" + text. */
#include "agent_sampler.h"

#include "agent_diskstats.h"
#include "agent_otherload.h"
#include "agent_tegrastats_child.h"
#include "jf_units.h"

#include <czmq.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_CMD_START   "START"
#define S_CMD_STOP    "STOP"
#define S_EV_SAMPLE   "SAMPLE"
#define S_EV_STOPPED  "STOPPED"
#define S_EV_WARN     "WARN"
#define S_POLL_MAX_MS 1000 // idle: wake up now and then anyway
#define S_ENDS_PERIOD_US (INT64_C(1) << 50) // AGENT_SAMPLER_ENDS_ONLY: no second deadline

typedef struct s_start {
    int rate_hz;
    char device[AGENT_SAMPLER_DEVICE_MAX + 1];
} s_start_t;

// The actor's state: created by agent_sampler_new, then touched only by the actor's thread.
typedef struct s_state {
    agent_sysfs_t *reader;       // owned
    char proc_root[PATH_MAX];    // for diskstats
    agent_diskstats_t *disk;     // owned while sampling with a device
    bool running;                // sampling a run
    int64_t period_us;           // 1e6 / rate
    int64_t next_us;             // monotonic deadline of the next sample
    agent_sampler_stats_t stats; // counts of the run
    int64_t scheduled;           // samples taken at deadlines
    int64_t first_us;            // monotonic time of the first of them
    int64_t last_us;             // and of the latest
    char tegrastats[PATH_MAX];   // the fallback's executable; "" when there is none
    agent_tegrastats_child_t *ts; // owned while a run is measured with the fallback
    bool ts_bad_told;            // a skipped tegrastats line was reported in this run
    agent_otherload_t *other;    // owned while a run is measured: other load on the machine
} s_state_t;

struct agent_sampler {
    zactor_t *actor; // owned
};

static void s_warn(zsock_t *pipe, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void s_warn(zsock_t *pipe, const char *fmt, ...)
{
    char text[AGENT_SAMPLER_TEXT_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    (void) zsock_send(pipe, "ss", S_EV_WARN, text);
}

static void s_add_disk(s_state_t *st, zsock_t *pipe, json_t *sample)
{
    agent_disk_sample_t d;
    jf_err_t err = {0};
    if (!st->disk) {
        return;
    }
    if (agent_diskstats_read(st->disk, &d, &err) != 0) {
        s_warn(pipe, "sampler: %s; this sample goes without its disk object", err.msg);
        return;
    }
    (void) json_object_set_new(sample, "disk", agent_diskstats_to_json(&d));
}

// Reads what tegrastats has printed. Its end is told once, and sampling goes on without it.
static void s_ts_poll(s_state_t *st, zsock_t *pipe)
{
    jf_err_t err = {0};
    if (st->ts && agent_tegrastats_child_poll(st->ts, jf_clock_mono_us(), &err) != 0) {
        s_warn(pipe, "sampler: %s; samples go without its rails for the rest of the run",
               err.msg);
        agent_tegrastats_child_destroy(&st->ts);
    }
    if (st->ts && agent_tegrastats_child_bad_lines(st->ts) > 0 && !st->ts_bad_told) {
        st->ts_bad_told = true;
        s_warn(pipe, "sampler: a tegrastats line was skipped: %.200s; later ones are skipped "
               "silently", agent_tegrastats_child_last_error(st->ts));
    }
}

// Completes sample from tegrastats' newest line. false when the fallback runs but that line is
// older than two intervals (or there is none): the sample goes without what it would have given.
static bool s_ts_fill(s_state_t *st, zsock_t *pipe, json_t *sample)
{
    s_ts_poll(st, pipe);
    if (!st->ts) {
        return true;
    }
    int64_t max_age_us = 2 * agent_tegrastats_child_interval_ms(st->ts) * JF_US_PER_MS;
    return agent_tegrastats_child_fill(st->ts, sample, jf_clock_mono_us(), max_age_us) == 0;
}

// Starts tegrastats at the run's rate and waits (at most two intervals) for its first line, so
// that the run's first sample has rails.
static void s_ts_start(s_state_t *st, zsock_t *pipe, int rate_hz)
{
    agent_tegrastats_child_destroy(&st->ts);
    st->ts_bad_told = false;
    if (!st->tegrastats[0]) {
        return;
    }
    int hz = rate_hz > 0 ? rate_hz : 1; // sampling the ends only: tegrastats at its slowest
    agent_tegrastats_child_opts_t o = {.path = st->tegrastats, .interval_ms = 1000 / hz};
    jf_err_t err = {0};
    st->ts = agent_tegrastats_child_new(&o, &err);
    if (!st->ts) {
        s_warn(pipe, "sampler: no readable power rails, and %s; samples go without rails",
               err.msg);
        return;
    }
    st->stats.tegrastats_interval_ms = o.interval_ms;
    int64_t wait_us = 2 * o.interval_ms * JF_US_PER_MS;
    int rc = agent_tegrastats_child_wait_line(st->ts, wait_us, &err);
    if (rc == -ETIMEDOUT) {
        s_warn(pipe, "sampler: %s; sampling starts without its rails", err.msg);
    } else if (rc != 0) {
        s_warn(pipe, "sampler: %s; samples go without its rails", err.msg);
        agent_tegrastats_child_destroy(&st->ts);
    }
}

// Takes one sample and sends it. Returns true if one was sent; *ret_stale says that it went
// without the rails of the tegrastats fallback because no fresh line was there.
static bool s_take(s_state_t *st, zsock_t *pipe, bool *ret_stale)
{
    json_t *sample = json_object();
    jf_err_t err = {0};
    if (!sample || agent_sysfs_sample(st->reader, sample, &err) != 0) {
        json_decref(sample);
        s_warn(pipe, "sampler: %s; no sample at this deadline", sample ? err.msg : "out of memory");
        return false;
    }
    *ret_stale = !s_ts_fill(st, pipe, sample);
    s_add_disk(st, pipe, sample);
    char *text = json_dumps(sample, JSON_COMPACT);
    json_decref(sample);
    bool sent = text && zsock_send(pipe, "ss", S_EV_SAMPLE, text) == 0;
    free(text);
    st->stats.samples += sent;
    return sent;
}

// Other load beside the run; a failure is told once and ends it for the run.
static void s_other_read(s_state_t *st, zsock_t *pipe, int64_t now_us)
{
    jf_err_t err = {0};
    if (st->other && agent_otherload_read(st->other, now_us, &err) != 0) {
        s_warn(pipe, "sampler: %s; the run goes without its other-load figures", err.msg);
        agent_otherload_destroy(&st->other);
    }
}

// At a deadline: the sample, then the next deadline. A deadline more than half a period gone
// is skipped and counted missed, so that a stall does not turn into a burst of samples.
static void s_on_deadline(s_state_t *st, zsock_t *pipe, int64_t now_us)
{
    int64_t half = st->period_us / 2;
    bool stale = false;
    st->stats.late += now_us - st->next_us > half;
    bool sent = s_take(st, pipe, &stale);
    if (sent) {
        st->first_us = st->scheduled++ == 0 ? now_us : st->first_us;
        st->last_us = now_us;
    }
    // A sample without the fallback's rails is sent for what sysfs read, but it is no sample
    // of the board's power: the deadline counts missed.
    st->stats.missed += !sent || stale;
    s_other_read(st, pipe, now_us);
    st->next_us += st->period_us;
    for (int64_t after = jf_clock_mono_us(); after - st->next_us > half;) {
        st->next_us += st->period_us;
        st->stats.missed++;
    }
}

static void s_on_start(s_state_t *st, zsock_t *pipe, const s_start_t *cmd)
{
    agent_diskstats_destroy(&st->disk);
    jf_err_t err = {0};
    if (cmd->device[0] && !(st->disk = agent_diskstats_new(st->proc_root, cmd->device, &err))) {
        s_warn(pipe, "sampler: %s; samples go without the disk object", err.msg);
    }
    st->running = true;
    // Ends only: one deadline now, the next beyond any run; the final sample comes at stop.
    st->period_us = cmd->rate_hz > 0 ? JF_US_PER_S / cmd->rate_hz : S_ENDS_PERIOD_US;
    st->stats = (agent_sampler_stats_t){0};
    st->scheduled = 0;
    s_ts_start(st, pipe, cmd->rate_hz);
    agent_otherload_destroy(&st->other);
    st->other = agent_otherload_new(st->proc_root, getpid());
    if (!st->other) {
        s_warn(pipe, "sampler: out of memory; the run goes without its other-load figures");
    }
    s_other_read(st, pipe, jf_clock_mono_us());
    st->next_us = jf_clock_mono_us();
}

static void s_on_stop(s_state_t *st, zsock_t *pipe)
{
    if (st->running) {
        // Closes the last epoch's energy interval: a sample after the trainer has ended.
        bool stale = false;
        (void) s_take(st, pipe, &stale);
    }
    st->running = false;
    agent_diskstats_destroy(&st->disk);
    agent_tegrastats_child_destroy(&st->ts);
    if (st->other) {
        agent_otherload_result_t o;
        agent_otherload_result(st->other, &o);
        st->stats.other_intervals = o.intervals;
        st->stats.other_mean_pct = o.mean_pct;
        st->stats.other_max_pct = o.max_pct;
        agent_otherload_destroy(&st->other);
    }
    if (st->scheduled >= 2 && st->last_us > st->first_us) {
        st->stats.achieved_rate_hz =
            (double) (st->scheduled - 1) * JF_US_PER_S / (double) (st->last_us - st->first_us);
    }
    (void) zsock_send(pipe, "sb", S_EV_STOPPED, &st->stats, sizeof st->stats);
}

// One command from the loop. Returns false on $TERM.
static bool s_on_command(s_state_t *st, zsock_t *pipe)
{
    char *cmd = NULL;
    void *data = NULL;
    size_t size = 0;
    zmsg_t *msg = zmsg_recv(pipe);
    if (!msg) {
        return false; // interrupted: the context is going away
    }
    cmd = zmsg_popstr(msg);
    zframe_t *f = zmsg_pop(msg);
    if (f) {
        data = zframe_data(f);
        size = zframe_size(f);
    }
    bool go_on = cmd && strcmp(cmd, "$TERM") != 0;
    if (go_on && strcmp(cmd, S_CMD_START) == 0 && size == sizeof(s_start_t)) {
        s_start_t start;
        memcpy(&start, data, sizeof start);
        s_on_start(st, pipe, &start);
    } else if (go_on && strcmp(cmd, S_CMD_STOP) == 0) {
        s_on_stop(st, pipe);
    }
    zframe_destroy(&f);
    zstr_free(&cmd);
    zmsg_destroy(&msg);
    return go_on;
}

static void s_actor(zsock_t *pipe, void *args)
{
    s_state_t *st = args;
    (void) zsock_signal(pipe, 0);
    for (bool go_on = true; go_on;) {
        int64_t now_us = jf_clock_mono_us();
        long timeout_ms = S_POLL_MAX_MS;
        if (st->running) {
            int64_t left_us = st->next_us - now_us;
            timeout_ms = left_us <= 0 ? 0 : (long) ((left_us + JF_US_PER_MS - 1) / JF_US_PER_MS);
            timeout_ms = timeout_ms < S_POLL_MAX_MS ? timeout_ms : S_POLL_MAX_MS;
        }
        // tegrastats' lines are read as they come, so that their age is known to the ms.
        int ts_fd = st->ts ? agent_tegrastats_child_fd(st->ts) : -1;
        zmq_pollitem_t items[2] = {{zsock_resolve(pipe), 0, ZMQ_POLLIN, 0},
                                   {NULL, ts_fd, ZMQ_POLLIN, 0}};
        int n = zmq_poll(items, ts_fd >= 0 ? 2 : 1, timeout_ms);
        if (n > 0 && (items[1].revents & ZMQ_POLLIN)) {
            s_ts_poll(st, pipe);
        }
        if (n > 0 && (items[0].revents & ZMQ_POLLIN)) {
            go_on = s_on_command(st, pipe);
        }
        now_us = jf_clock_mono_us();
        if (go_on && st->running && now_us >= st->next_us) {
            s_on_deadline(st, pipe, now_us);
        }
    }
    agent_diskstats_destroy(&st->disk);
    agent_tegrastats_child_destroy(&st->ts);
    agent_otherload_destroy(&st->other);
    agent_sysfs_destroy(&st->reader);
    free(st);
}

agent_sampler_t *agent_sampler_new(const agent_sampler_opts_t *opts, jf_err_t *err)
{
    if (!opts->reader_p || !*opts->reader_p) {
        jf_err_set(err, -EINVAL, "sampler: no telemetry reader");
        return NULL;
    }
    agent_sampler_t *self = calloc(1, sizeof *self);
    s_state_t *st = calloc(1, sizeof *st);
    if (!self || !st) {
        free(self);
        free(st);
        jf_err_set(err, -ENOMEM, "sampler: out of memory");
        return NULL;
    }
    st->reader = *opts->reader_p;
    (void) snprintf(st->proc_root, sizeof st->proc_root, "%s", opts->proc_root);
    (void) snprintf(st->tegrastats, sizeof st->tegrastats, "%s",
                    opts->tegrastats ? opts->tegrastats : "");
    self->actor = zactor_new(s_actor, st); // the actor owns st from here on
    if (!self->actor) {
        free(st);
        free(self);
        jf_err_set(err, -ENOMEM, "sampler: cannot start its thread");
        return NULL;
    }
    *opts->reader_p = NULL;
    return self;
}

void agent_sampler_destroy(agent_sampler_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    zactor_destroy(&(*self_p)->actor);
    free(*self_p);
    *self_p = NULL;
}

void *agent_sampler_handle(agent_sampler_t *self)
{
    return zsock_resolve(zactor_sock(self->actor));
}

int agent_sampler_start(agent_sampler_t *self, int rate_hz, const char *device)
{
    if ((rate_hz < 1 && rate_hz != AGENT_SAMPLER_ENDS_ONLY) ||
        rate_hz > AGENT_SAMPLER_RATE_MAX_HZ) {
        return -EINVAL;
    }
    s_start_t cmd = {.rate_hz = rate_hz};
    (void) snprintf(cmd.device, sizeof cmd.device, "%s", device ? device : "");
    return zsock_send(zactor_sock(self->actor), "sb", S_CMD_START, &cmd, sizeof cmd) == 0 ? 0
                                                                                          : -EIO;
}

int agent_sampler_stop(agent_sampler_t *self)
{
    return zstr_send(zactor_sock(self->actor), S_CMD_STOP) == 0 ? 0 : -EIO;
}

static int s_decode(const char *kind, zframe_t *f, agent_sampler_event_t *ev)
{
    size_t size = f ? zframe_size(f) : 0;
    if (strcmp(kind, S_EV_SAMPLE) == 0 && f) {
        ev->kind = AGENT_SAMPLER_SAMPLE;
        ev->sample = json_loadb((const char *) zframe_data(f), size, 0, NULL);
        return ev->sample ? 0 : -EPROTO;
    }
    if (strcmp(kind, S_EV_STOPPED) == 0 && size == sizeof ev->stats) {
        ev->kind = AGENT_SAMPLER_STOPPED;
        memcpy(&ev->stats, zframe_data(f), size);
        return 0;
    }
    if (strcmp(kind, S_EV_WARN) == 0 && f) {
        ev->kind = AGENT_SAMPLER_WARNING;
        size = size < sizeof ev->text - 1 ? size : sizeof ev->text - 1;
        memcpy(ev->text, zframe_data(f), size);
        ev->text[size] = '\0';
        return 0;
    }
    return -EPROTO;
}

int agent_sampler_recv(agent_sampler_t *self, agent_sampler_event_t *ret_event)
{
    zsock_t *sock = zactor_sock(self->actor);
    if (!(zsock_events(sock) & ZMQ_POLLIN)) {
        return -EAGAIN;
    }
    zmsg_t *msg = zmsg_recv(sock);
    char *kind = msg ? zmsg_popstr(msg) : NULL;
    zframe_t *f = msg ? zmsg_pop(msg) : NULL;
    agent_sampler_event_t ev = {0};
    int rc = kind ? s_decode(kind, f, &ev) : -EPROTO;
    if (rc == 0) {
        *ret_event = ev;
    }
    zframe_destroy(&f);
    zstr_free(&kind);
    zmsg_destroy(&msg);
    return rc;
}
