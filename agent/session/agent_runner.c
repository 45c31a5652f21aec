/* Child process for one training run: spawn, read JSON lines, classify the exit. */
#include "agent_runner.h"

#include "jf_log.h"
#include "jf_run_spec.h"
#include "jf_schema.h"
#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define S_ARGV_MAX (1 + AGENT_PLATFORM_TRAINER_ARGS_MAX + JF_SCHEMA_ARGV_MAX + 1) // with NULL
#define S_ENV_KEEP_MAX 8

struct agent_runner {
    pid_t pid;               // child (and its process group); 0 once reaped
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
    int64_t epochs;
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
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    (void) posix_spawn_file_actions_init(&fa);
    (void) posix_spawnattr_init(&attr);
    (void) posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    (void) posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    (void) posix_spawnattr_setpgroup(&attr, 0); // own group: a stop reaches its whole tree
    (void) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    int rc = posix_spawn(&self->pid, argv[0], &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        return jf_err_set(err, -rc, "cannot start '%s': %s", argv[0], strerror(rc));
    }
    return 0;
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
    if (rc != 0 || 1 + t->n_args + run->n >= S_ARGV_MAX) {
        return jf_err_set(err, -E2BIG,
                          "runner: the trainer's command line needs more than %d arguments",
                          S_ARGV_MAX - 1);
    }
    size_t at = s_copy_argv(&t->program, 1, argv, 0);
    at = s_copy_argv(t->args, t->n_args, argv, at);
    (void) s_copy_argv(run->args, run->n, argv, at);
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
    int fds[2] = {-1, -1};
    if (!(self->line = malloc(AGENT_RUNNER_LINE_MAX)) || pipe2(fds, O_CLOEXEC) != 0) {
        jf_err_set(err, -ENOMEM, "runner: cannot allocate a buffer or create a pipe");
        goto fail_destroy;
    }
    self->fd = fds[0];
    self->line_fn = opts->line_fn;
    self->line_arg = opts->line_arg;
    char *argv[S_ARGV_MAX] = {0};
    jf_schema_argv_t run = {0};
    int rc = s_build_argv(opts, &run, argv, err);
    rc = rc ? rc : s_spawn(self, argv, fds[1], err);
    close(fds[1]); // the child has its copy
    if (rc != 0) {
        goto fail_destroy;
    }
    (void) fcntl(self->fd, F_SETFL, O_NONBLOCK);
    self->deadline_us = jf_clock_mono_us() + opts->spec->timeout_us;
    return self;
fail_destroy:
    agent_runner_destroy(&self);
    return NULL;
}

int agent_runner_fd(const agent_runner_t *self)
{
    return self->fd;
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

static void s_take_line(agent_runner_t *self, agent_runner_record_fn fn, void *arg)
{
    self->line[self->line_len] = '\0';
    if (!self->line_overflow && self->line_len > 0) {
        json_t *rec = s_line_record(self, self->line);
        if (rec) {
            (void) fn(rec, arg);
        }
    } else if (self->line_overflow) {
        self->bad_lines++;
    }
    self->line_len = 0;
    self->line_overflow = false;
}

void agent_runner_read(agent_runner_t *self, agent_runner_record_fn fn, void *arg)
{
    char buf[8192];
    while (self->fd >= 0) {
        ssize_t n = read(self->fd, buf, sizeof buf);
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            return;
        }
        if (n <= 0) {
            close(self->fd); // end of file (or an error that ends the stream the same way)
            self->fd = -1;
            return;
        }
        for (ssize_t i = 0; i < n; i++) {
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
    if (self->reaped || self->pid <= 0) {
        return;
    }
    pid_t r = waitpid(self->pid, &self->status, WNOHANG);
    if (r == self->pid) {
        self->reaped = true;
    }
}

void agent_runner_stop(agent_runner_t *self, jf_fail_reason_t reason)
{
    if (self->stopping || self->reaped) {
        return;
    }
    self->stopping = true;
    self->stop_reason = reason;
    self->kill_at_us = jf_clock_mono_us() + AGENT_RUNNER_KILL_GRACE_US;
    (void) kill(-self->pid, SIGTERM); // the group may already be gone
}

void agent_runner_tick(agent_runner_t *self, int64_t now_mono_us)
{
    s_reap(self);
    if (self->reaped) {
        return;
    }
    if (!self->stopping && now_mono_us > self->deadline_us) {
        agent_runner_stop(self, JF_FAIL_TIMEOUT);
    }
    if (self->stopping && now_mono_us > self->kill_at_us) {
        (void) kill(-self->pid, SIGKILL);
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

bool agent_runner_finished(agent_runner_t *self, agent_runner_outcome_t *ret_outcome)
{
    s_reap(self);
    if (!self->reaped || self->fd >= 0) {
        return false;
    }
    agent_runner_outcome_t o = {.epochs = self->epochs, .reason = JF_FAIL_CRASHED};
    if (WIFEXITED(self->status) && WEXITSTATUS(self->status) == 0 && self->done_seen &&
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
    if (self->pid > 0 && !self->reaped) {
        (void) kill(-self->pid, SIGKILL);
        (void) waitpid(self->pid, &self->status, 0); // SIGKILL cannot be ignored: this returns
    }
    if (self->fd >= 0) {
        close(self->fd);
    }
    free(self->line);
    free(self);
    *self_p = NULL;
}
