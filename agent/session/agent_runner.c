/* Child process for one training run: spawn, read JSON lines, classify the exit. With an output
 * file the trainer outlives the agent, and a restarted agent re-attaches to it (pid and start
 * time from /proc), reading on from its read mark (docs/protocol.md §4.4). */
#include "agent_runner.h"

#include "jf_log.h"
#include "jf_run_spec.h"
#include "jf_schema.h"
#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_ARGV_MAX                                                                                 \
    (1 + AGENT_PLATFORM_TRAINER_ARGS_MAX + JF_SCHEMA_ARGV_MAX + AGENT_RUNNER_EXTRA_MAX + 1) // NULL
#define S_ENV_KEEP_MAX 8
#define S_CHILD_EXIT_SETUP 126 // the child could not set up its stdin or stdout
#define S_CHILD_EXIT_NO_GO 125 // the gate closed without a go-ahead: the trainer never ran
#define S_CHILD_EXIT_EXEC  127 // exec failed (after the check before the fork)

struct agent_runner {
    pid_t pid;               // trainer (and its process group); 0 once reaped
    int gate_fd;             // the agent's end of the start gate; -1 once released (or none)
    int64_t start_ticks;     // its start time (field 22 of /proc/PID/stat); 0 if unknown
    bool file_mode;          // stdout goes to a file: EOF is not the end until it has ended
    int wake_fd;             // file mode: inotify on the file, to poll for new lines; -1: none
    bool attached;           // not our child (re-attached): no wait status, /proc says if alive
    bool gone;               // attached: the process has ended (or is another one now)
    int64_t read_off;        // bytes of the output consumed
    agent_runner_mark_t mark; // records at or below it are in the spool already: skipped
    int64_t skipped;         // records skipped by the mark
    int64_t offset_mark;     // end of the last line that gave a record (agent_runner_offset)
    int fd;                  // read end of its stdout; -1 at EOF
    int status;              // waitpid status once reaped
    bool reaped;
    char *line;              // owned: partial line buffer
    size_t line_len;
    bool line_overflow;      // discarding the rest of a too-long line
    int64_t deadline_us;     // monotonic: the run timeout
    int64_t kill_at_us;      // monotonic: when to SIGKILL after SIGTERM (0: not stopping)
    bool stopping;
    jf_fail_reason_t stop_reason;
    bool done_seen;          // the child printed {"kind":"done"}
    bool error_seen;         // the child printed {"kind":"error"}
    jf_fail_reason_t error_reason;
    char error_detail[200];
    int64_t epochs;          // epoch records handed out (from mark.epochs after a re-attach)
    int64_t bad_lines;
    agent_runner_line_fn line_fn; // the trainer's parsed lines; NULL: none
    void *line_arg;               // for line_fn
};

static void s_env_keep(char **env, size_t *n, char bufs[][512], const char *name)
{
    const char *v = getenv(name);
    if (v && *n < S_ENV_KEEP_MAX) {
        (void) snprintf(bufs[*n], 512, "%s=%s", name, v);
        env[*n] = bufs[*n];
        (*n)++;
    }
}

// The child between fork and exec runs only async-signal-safe calls (the agent has threads): its
// own process group, stdout to out_fd, stdin from /dev/null, then it waits on the gate. The
// agent sends one byte once the spool names the trainer; the gate's end-of-file (the agent died
// before that, or gave up on the start) makes it exit without ever running the trainer.
static void s_child(int gate_fd, int gate_peer, int out_fd, char *const argv[], char *const env[])
{
    sigset_t none;
    (void) sigemptyset(&none);
    (void) sigprocmask(SIG_SETMASK, &none, NULL);
    (void) setpgid(0, 0); // own group: a stop reaches its whole tree
    (void) close(gate_peer);
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 || dup2(out_fd, STDOUT_FILENO) < 0) {
        _exit(S_CHILD_EXIT_SETUP);
    }
    char go = 0;
    ssize_t n = 0;
    do {
        n = read(gate_fd, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) {
        _exit(S_CHILD_EXIT_NO_GO);
    }
    (void) execve(argv[0], argv, env);
    _exit(S_CHILD_EXIT_EXEC);
}

static int s_spawn(agent_runner_t *self, char *const argv[], int out_fd, jf_err_t *err)
{
    // A cleared environment with a fixed allow-list (reliability-security.md §2.3).
    static const char *const keep[] = {"LANG", "JF_TRAIN_FAULT", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                       "LSAN_OPTIONS", "LD_LIBRARY_PATH", "OPENBLAS_NUM_THREADS"};
    char bufs[S_ENV_KEEP_MAX][512];
    char *env[S_ENV_KEEP_MAX + 1] = {0};
    size_t n = 0;
    for (size_t i = 0; i < sizeof keep / sizeof keep[0]; i++) {
        s_env_keep(env, &n, bufs, keep[i]);
    }
    // exec fails in the child, after the fork: what can be checked before is checked here, so
    // that a missing program is a failed start, not an attempt that crashes.
    if (access(argv[0], X_OK) != 0) {
        return jf_err_set(err, -errno, "cannot start '%s': %s", argv[0], strerror(errno));
    }
    // A socket pair, not a pipe: the go-ahead is sent with MSG_NOSIGNAL, so a child killed
    // meanwhile cannot raise SIGPIPE in the agent.
    int gate[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) != 0) {
        return jf_err_set(err, -errno, "runner: cannot create the start gate: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid == 0) {
        s_child(gate[1], gate[0], out_fd, argv, env);
    }
    int fork_errno = errno;
    close(gate[1]);
    if (pid < 0) {
        close(gate[0]);
        return jf_err_set(err, -fork_errno, "cannot start '%s': fork: %s", argv[0],
                          strerror(fork_errno));
    }
    (void) setpgid(pid, pid); // as the child does: whichever runs first, the group exists
    self->pid = pid;
    self->gate_fd = gate[0];
    return 0;
}

int agent_runner_release(agent_runner_t *self)
{
    if (self->gate_fd < 0) {
        return 0;
    }
    char go = 'g';
    ssize_t n = send(self->gate_fd, &go, 1, MSG_NOSIGNAL);
    close(self->gate_fd);
    self->gate_fd = -1;
    return n == 1 ? 0 : -EIO;
}

// Copies n arguments to argv from index at on, keeping the NULL at the end; returns the next index.
static size_t s_copy_argv(const char *const *args, size_t n, char *argv[], size_t at)
{
    for (size_t i = 0; i < n && at < S_ARGV_MAX - 1; i++) {
        argv[at++] = (char *) args[i];
    }
    return at;
}

// The program and the platform's arguments (agent_platform_trainer), then the run's own: every
// run spec field with a trainer option in the schema table (jf_run_spec_schema), so a new field
// needs no edit here. --threads is the platform's to pass: only a real machine's trainer takes
// it. run outlives argv.
static int s_build_argv(const agent_runner_opts_t *o, jf_schema_argv_t *run, char *argv[],
                        jf_err_t *err)
{
    static const char *const platform_owned[] = {"--threads", NULL};
    const agent_platform_trainer_t *t = o->trainer;
    int rc = jf_schema_to_argv(jf_run_spec_schema(), o->spec, platform_owned, run);
    if (rc != 0 || o->n_extra > AGENT_RUNNER_EXTRA_MAX ||
        1 + t->n_args + run->n + o->n_extra >= S_ARGV_MAX) {
        return jf_err_set(err, -E2BIG,
                          "runner: the trainer's command line needs more than %d arguments",
                          S_ARGV_MAX - 1);
    }
    size_t at = s_copy_argv(&t->program, 1, argv, 0);
    at = s_copy_argv(t->args, t->n_args, argv, at);
    at = s_copy_argv(run->args, run->n, argv, at);
    (void) s_copy_argv(o->extra_args, o->n_extra, argv, at);
    return 0;
}

int agent_runner_proc_start_ticks(int64_t pid, int64_t *ret_ticks)
{
    char path[64], text[1024];
    (void) snprintf(path, sizeof path, "/proc/%lld/stat", (long long) pid);
    FILE *f = fopen(path, "re");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) {
        (void) fclose(f);
    }
    text[n] = '\0';
    // The name in parentheses may hold anything: the fields start after the last ')'. Field 3
    // is the state (a zombie has ended), field 22 the start time in clock ticks since boot.
    char *p = n > 0 ? strrchr(text, ')') : NULL;
    char state = 0;
    unsigned long long ticks = 0;
    if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
                            "%*s %*s %llu",
                     &state, &ticks) != 2) {
        return -ENOENT;
    }
    if (state == 'Z' || state == 'X' || state == 'x') {
        return -ENOENT;
    }
    *ret_ticks = (int64_t) ticks;
    return 0;
}

// An attached trainer is alive while its pid names a live process with its start time.
static bool s_attached_alive(agent_runner_t *self)
{
    int64_t ticks = 0;
    if (!self->gone && (agent_runner_proc_start_ticks(self->pid, &ticks) != 0 ||
                        ticks != self->start_ticks)) {
        self->gone = true;
    }
    return !self->gone;
}

// A regular file is always readable to poll: an inotify watch wakes the loop when the trainer
// writes, so that an epoch's end is seen when it happens (its energy interval ends then), not a
// tick later. Without it (no inotify) the loop still reads each tick.
static void s_watch_file(agent_runner_t *self, const char *path)
{
    self->wake_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    if (self->wake_fd >= 0 && inotify_add_watch(self->wake_fd, path, IN_MODIFY) < 0) {
        close(self->wake_fd);
        self->wake_fd = -1;
    }
}

static void s_drain_wake(agent_runner_t *self)
{
    char events[4096];
    while (self->wake_fd >= 0 && read(self->wake_fd, events, sizeof events) > 0) {
    }
}

// The trainer's stdout: a pipe, or (with out_path) a new file it appends to while the agent
// reads it through a second descriptor. *ret_child is the child's end (closed after the spawn).
static int s_open_output(agent_runner_t *self, const char *out_path, int *ret_child, jf_err_t *err)
{
    int fds[2] = {-1, -1};
    if (!out_path) {
        if (pipe2(fds, O_CLOEXEC) != 0) {
            return jf_err_set(err, -errno, "runner: cannot create a pipe: %s", strerror(errno));
        }
        self->fd = fds[0];
        *ret_child = fds[1];
        (void) fcntl(self->fd, F_SETFL, O_NONBLOCK);
        return 0;
    }
    fds[1] = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
    fds[0] = fds[1] >= 0 ? open(out_path, O_RDONLY | O_CLOEXEC) : -1;
    if (fds[0] < 0) {
        int e = errno;
        if (fds[1] >= 0) {
            close(fds[1]);
        }
        return jf_err_set(err, -e, "runner: cannot open '%.200s': %s", out_path, strerror(e));
    }
    self->fd = fds[0];
    self->file_mode = true;
    s_watch_file(self, out_path);
    *ret_child = fds[1];
    return 0;
}

agent_runner_t *agent_runner_start(const agent_runner_opts_t *opts, jf_err_t *err)
{
    agent_runner_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "runner: out of memory");
        return NULL;
    }
    self->fd = -1;
    self->wake_fd = -1;
    self->gate_fd = -1;
    self->mark = AGENT_RUNNER_MARK_NONE;
    int child_fd = -1;
    if (!(self->line = malloc(AGENT_RUNNER_LINE_MAX))) {
        jf_err_set(err, -ENOMEM, "runner: out of memory");
        goto fail_destroy;
    }
    if (s_open_output(self, opts->out_path, &child_fd, err) != 0) {
        goto fail_destroy;
    }
    self->line_fn = opts->line_fn;
    self->line_arg = opts->line_arg;
    char *argv[S_ARGV_MAX] = {0};
    jf_schema_argv_t run = {0};
    int rc = s_build_argv(opts, &run, argv, err);
    rc = rc ? rc : s_spawn(self, argv, child_fd, err);
    close(child_fd); // the child has its copy
    if (rc != 0) {
        goto fail_destroy;
    }
    // Read now, while the child waits at the gate (it cannot have ended): its identity for a
    // later re-attach. exec keeps the start time.
    if (agent_runner_proc_start_ticks(self->pid, &self->start_ticks) != 0) {
        self->start_ticks = 0;
    }
    self->deadline_us = jf_clock_mono_us() + opts->spec->timeout_us;
    if (!opts->hold && agent_runner_release(self) != 0) {
        jf_err_set(err, -EIO, "runner: the trainer ended before it could start");
        goto fail_destroy;
    }
    return self;
fail_destroy:
    agent_runner_destroy(&self);
    return NULL;
}

// The run timeout of a trainer that started start_ticks clock ticks after boot (/proc counts on
// the boot clock, which goes on through suspend), on this process's monotonic clock: a
// re-attached run keeps its original deadline. Without the boot clock, from now.
static int64_t s_deadline_since_start(int64_t start_ticks, int64_t timeout_us)
{
    int64_t now_us = jf_clock_mono_us();
    long hz = sysconf(_SC_CLK_TCK);
    struct timespec ts;
    if (hz <= 0 || start_ticks <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0) {
        return now_us + timeout_us;
    }
    int64_t boot_us = (int64_t) ts.tv_sec * JF_US_PER_S + ts.tv_nsec / 1000;
    int64_t elapsed_us = boot_us - start_ticks * JF_US_PER_S / hz;
    return now_us - (elapsed_us > 0 ? elapsed_us : 0) + timeout_us;
}

agent_runner_t *agent_runner_attach(const agent_runner_attach_t *a, jf_err_t *err)
{
    agent_runner_t *self = calloc(1, sizeof *self);
    if (!self || !(self->line = malloc(AGENT_RUNNER_LINE_MAX))) {
        free(self);
        jf_err_set(err, -ENOMEM, "runner: out of memory");
        return NULL;
    }
    self->wake_fd = -1;
    self->gate_fd = -1;
    self->pid = (pid_t) a->pid;
    self->start_ticks = a->start_ticks;
    self->attached = true;
    self->file_mode = true;
    self->mark = a->mark;
    self->epochs = a->mark.epochs;
    self->line_fn = a->line_fn;
    self->line_arg = a->line_arg;
    self->deadline_us = s_deadline_since_start(a->start_ticks, a->timeout_us);
    self->fd = open(a->out_path, O_RDONLY | O_CLOEXEC);
    off_t at = self->fd >= 0 ? lseek(self->fd, (off_t) a->mark.offset, SEEK_SET) : -1;
    if (at < 0 || a->pid <= 0) {
        jf_err_set(err, -ENOENT, "runner: cannot read '%.200s' from offset %lld: %s", a->out_path,
                   (long long) a->mark.offset, strerror(errno));
        agent_runner_destroy(&self);
        return NULL;
    }
    self->read_off = a->mark.offset;
    self->offset_mark = a->mark.offset;
    s_watch_file(self, a->out_path);
    (void) s_attached_alive(self);
    return self;
}

void agent_runner_identity(const agent_runner_t *self, int64_t *ret_pid, int64_t *ret_start_ticks)
{
    *ret_pid = self->pid;
    *ret_start_ticks = self->start_ticks;
}

int64_t agent_runner_deadline_us(const agent_runner_t *self)
{
    return self->deadline_us;
}

int64_t agent_runner_offset(const agent_runner_t *self)
{
    return self->offset_mark;
}

bool agent_runner_is_attached(const agent_runner_t *self)
{
    return self->attached;
}

int64_t agent_runner_skipped(const agent_runner_t *self)
{
    return self->skipped;
}

int agent_runner_fd(const agent_runner_t *self)
{
    return self->file_mode && self->fd >= 0 ? self->wake_fd : self->fd;
}

// The schema's members of a trainer line: the line has more (samples_per_s, a simulated run's
// sim_*), which the wire record does not carry. NULL when out of memory.
static json_t *s_pick_members(const jf_schema_t *schema, const json_t *line)
{
    json_t *picked = json_object();
    for (size_t i = 0; picked && i < schema->n_fields; i++) {
        json_t *v = json_object_get(line, schema->fields[i].name);
        if (v && json_object_set(picked, schema->fields[i].name, v) != 0) {
            json_decref(picked);
            picked = NULL;
        }
    }
    return picked;
}

// A trainer line of kind epoch or minibatch -> its wire record. The line is decoded once, by the
// record's schema (the wire decoder's own types and ranges), and the record encoded from the
// struct: both carry the internal units (us), so nothing converts. NULL for a bad line.
static json_t *s_timed_record(const json_t *line, bool epoch)
{
    const jf_schema_t *schema = epoch ? jf_epoch_rec_schema() : jf_minibatch_rec_schema();
    jf_epoch_rec_t e = {0};
    jf_minibatch_rec_t m = {0};
    json_t *picked = s_pick_members(schema, line);
    int rc = picked ? jf_schema_decode(schema, picked, epoch ? (void *) &e : (void *) &m, NULL)
                    : -ENOMEM;
    json_decref(picked);
    if (rc != 0) {
        return NULL;
    }
    return epoch ? jf_record_epoch_to_json(&e) : jf_record_minibatch_to_json(&m);
}

static json_t *s_start_record(const json_t *line)
{
    json_t *info = json_object();
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) line, k, v) {
        bool scalar = json_is_number(v) || json_is_boolean(v) || json_is_string(v);
        if (info && scalar && strcmp(k, "kind") != 0) {
            (void) json_object_set(info, k, v);
        }
    }
    return info ? json_pack("{s:s, s:o}", "kind", "start", "info", info) : NULL;
}

static void s_note_error(agent_runner_t *self, const json_t *line)
{
    const char *reason = json_string_value(json_object_get(line, "reason"));
    const char *detail = json_string_value(json_object_get(line, "detail"));
    self->error_seen = true;
    if (!jf_fail_reason_parse(reason, &self->error_reason) || self->error_reason == JF_FAIL_BUSY) {
        // "busy" only refuses an assignment; a trainer that says it has crashed.
        self->error_reason = JF_FAIL_CRASHED;
    }
    (void) snprintf(self->error_detail, sizeof self->error_detail, "%s",
                    detail ? detail : "the trainer reported an error");
}

// Converts one line into a wire record (validated with the wire decoder's own rules), or
// records its effect (done, error). Returns the record or NULL.
static json_t *s_line_record(agent_runner_t *self, const char *text)
{
    json_error_t jerr;
    json_t *line = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
    const char *kind = json_string_value(json_object_get(line, "kind"));
    json_t *rec = NULL;
    if (line && self->line_fn) {
        self->line_fn(line, self->line_arg);
    }
    if (kind && strcmp(kind, "start") == 0) {
        rec = s_start_record(line);
    } else if (kind && (strcmp(kind, "epoch") == 0 || strcmp(kind, "minibatch") == 0)) {
        rec = s_timed_record(line, kind[0] == 'e');
        self->epochs += rec && kind[0] == 'e';
    } else if (kind && strcmp(kind, "done") == 0) {
        self->done_seen = true;
    } else if (kind && strcmp(kind, "error") == 0) {
        s_note_error(self, line);
    }
    jf_record_t parsed;
    // The start record is built from the line's scalars: check it as the coordinator will.
    if (rec && kind[0] == 's' && jf_record_parse(rec, &parsed, NULL) != 0) {
        json_decref(rec);
        rec = NULL;
    }
    if (!rec && (!kind || (strcmp(kind, "done") != 0 && strcmp(kind, "error") != 0))) {
        self->bad_lines++;
    }
    json_decref(line);
    return rec;
}

// True for a record the spool has already (at or below the mark of a re-attached run): the
// trainer writes start, then minibatch and epoch records in increasing (epoch, index) order.
static bool s_below_mark(const agent_runner_mark_t *m, const json_t *rec)
{
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    json_int_t epoch = json_integer_value(json_object_get(rec, "epoch"));
    json_int_t index = json_integer_value(json_object_get(rec, "index"));
    if (strcmp(kind, "start") == 0) {
        return m->start;
    }
    if (strcmp(kind, "epoch") == 0) {
        return epoch <= m->epoch;
    }
    return epoch < m->mb_epoch || (epoch == m->mb_epoch && index <= m->mb_index);
}

static void s_take_line(agent_runner_t *self, agent_runner_record_fn fn, void *arg)
{
    self->line[self->line_len] = '\0';
    if (!self->line_overflow && self->line_len > 0) {
        json_t *rec = s_line_record(self, self->line);
        if (rec && s_below_mark(&self->mark, rec)) {
            self->epochs -= strcmp(json_string_value(json_object_get(rec, "kind")), "epoch") == 0;
            self->skipped++;
            json_decref(rec);
        } else if (rec) {
            self->offset_mark = self->read_off; // the end of this line: read up to here
            (void) fn(rec, arg);
        }
    } else if (self->line_overflow) {
        self->bad_lines++;
    }
    self->line_len = 0;
    self->line_overflow = false;
}

static bool s_has_ended(agent_runner_t *self);

void agent_runner_read(agent_runner_t *self, agent_runner_record_fn fn, void *arg)
{
    char buf[8192];
    s_drain_wake(self);
    // Checked before reading: what a trainer that has ended wrote is all in the file by now.
    bool ended = !self->file_mode || s_has_ended(self);
    while (self->fd >= 0) {
        ssize_t n = read(self->fd, buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        if (n == 0 && !ended) {
            return; // a file's end while the trainer still runs: more comes later
        }
        if (n <= 0) {
            close(self->fd); // end of file (or an error that ends the stream the same way)
            self->fd = -1;
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
            self->read_off++;
            if (buf[i] == '\n') {
                s_take_line(self, fn, arg);
            } else if (self->line_len + 1 < AGENT_RUNNER_LINE_MAX) {
                self->line[self->line_len++] = buf[i];
            } else {
                self->line_overflow = true;
            }
        }
    }
}

static void s_reap(agent_runner_t *self)
{
    if (self->attached) {
        (void) s_attached_alive(self);
        return;
    }
    if (self->reaped || self->pid <= 0) {
        return;
    }
    pid_t r = waitpid(self->pid, &self->status, WNOHANG);
    if (r == self->pid) {
        self->reaped = true;
    }
}

static bool s_has_ended(agent_runner_t *self)
{
    s_reap(self);
    return self->attached ? self->gone : self->reaped;
}

// Signals the trainer's process group; an attached one only while it is still the same process.
static void s_signal(agent_runner_t *self, int sig)
{
    if (!self->attached || s_attached_alive(self)) {
        (void) kill(-self->pid, sig); // the group may already be gone
    }
}

bool agent_runner_has_ended(agent_runner_t *self)
{
    return s_has_ended(self);
}

void agent_runner_stop(agent_runner_t *self, jf_fail_reason_t reason)
{
    if (self->stopping || s_has_ended(self)) {
        return;
    }
    self->stopping = true;
    self->stop_reason = reason;
    self->kill_at_us = jf_clock_mono_us() + AGENT_RUNNER_KILL_GRACE_US;
    s_signal(self, SIGTERM);
}

void agent_runner_tick(agent_runner_t *self, int64_t now_mono_us)
{
    if (s_has_ended(self)) {
        return;
    }
    if (!self->stopping && now_mono_us > self->deadline_us) {
        agent_runner_stop(self, JF_FAIL_TIMEOUT);
    }
    if (self->stopping && now_mono_us > self->kill_at_us) {
        s_signal(self, SIGKILL);
    }
}

static void s_classify_signal(agent_runner_t *self, int sig, agent_runner_outcome_t *o)
{
    if (self->stopping) {
        o->reason = self->stop_reason;
        (void) snprintf(o->detail, sizeof o->detail, "stopped by the agent (%s)",
                        jf_fail_reason_name(self->stop_reason));
    } else if (sig == SIGKILL) {
        // Nobody here sent it: on a training box that is the kernel's OOM killer.
        o->reason = JF_FAIL_OOM;
        (void) snprintf(o->detail, sizeof o->detail,
                        "killed by SIGKILL, not sent by the agent (most likely the kernel OOM "
                        "killer)");
    } else {
        o->reason = JF_FAIL_CRASHED;
        (void) snprintf(o->detail, sizeof o->detail, "killed by signal %d (%s)", sig,
                        strsignal(sig));
    }
}

static void s_classify_exit(agent_runner_t *self, int code, agent_runner_outcome_t *o)
{
    if (self->stopping) {
        o->reason = self->stop_reason;
        (void) snprintf(o->detail, sizeof o->detail, "stopped by the agent (%s), exit %d",
                        jf_fail_reason_name(self->stop_reason), code);
    } else if (self->error_seen) {
        o->reason = self->error_reason;
        (void) snprintf(o->detail, sizeof o->detail, "%s (exit %d)", self->error_detail, code);
    } else {
        o->reason = code == 3 ? JF_FAIL_OOM : code == 2 ? JF_FAIL_INVALID : JF_FAIL_CRASHED;
        (void) snprintf(o->detail, sizeof o->detail, "trainer exited with code %d%s", code,
                        code == 0 ? " without finishing" : "");
    }
}

// A re-attached trainer has no wait status for the agent: its own done and error lines say how
// it ended, and without either it died (a signal, a crash) while nobody could see it.
static void s_classify_attached(agent_runner_t *self, agent_runner_outcome_t *o)
{
    if (self->done_seen && !self->stopping) {
        o->done = true;
    } else if (self->stopping) {
        o->reason = self->stop_reason;
        (void) snprintf(o->detail, sizeof o->detail, "stopped by the agent (%s)",
                        jf_fail_reason_name(self->stop_reason));
    } else if (self->error_seen) {
        o->reason = self->error_reason;
        (void) snprintf(o->detail, sizeof o->detail, "%s", self->error_detail);
    } else {
        o->reason = JF_FAIL_CRASHED;
        (void) snprintf(o->detail, sizeof o->detail, "%s", AGENT_RUNNER_ATTACHED_DIED);
    }
}

bool agent_runner_finished(agent_runner_t *self, agent_runner_outcome_t *ret_outcome)
{
    if (!s_has_ended(self) || self->fd >= 0) {
        return false;
    }
    agent_runner_outcome_t o = {.epochs = self->epochs, .reason = JF_FAIL_CRASHED};
    if (self->attached) {
        s_classify_attached(self, &o);
    } else if (WIFEXITED(self->status) && WEXITSTATUS(self->status) == 0 && self->done_seen &&
        !self->stopping) {
        o.done = true;
    } else if (WIFSIGNALED(self->status)) {
        s_classify_signal(self, WTERMSIG(self->status), &o);
    } else {
        s_classify_exit(self, WEXITSTATUS(self->status), &o);
    }
    if (self->bad_lines > 0) {
        jf_log_warn("runner: %lld unreadable lines from the trainer were skipped",
                    (long long) self->bad_lines);
    }
    *ret_outcome = o;
    return true;
}

void agent_runner_destroy(agent_runner_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_runner_t *self = *self_p;
    if (self->gate_fd >= 0) {
        close(self->gate_fd); // a trainer held at the gate exits without running
    }
    if (self->attached && self->pid > 0) {
        s_signal(self, SIGKILL); // not ours to wait for: its new parent reaps it
    } else if (self->pid > 0 && !self->reaped) {
        (void) kill(-self->pid, SIGKILL);
        (void) waitpid(self->pid, &self->status, 0); // SIGKILL cannot be ignored: this returns
    }
    if (self->fd >= 0) {
        close(self->fd);
    }
    if (self->wake_fd >= 0) {
        close(self->wake_fd);
    }
    free(self->line);
    free(self);
    *self_p = NULL;
}
