/* A live tegrastats child: spawn with a CLOEXEC pipe, non-blocking line reads parsed by
 * agent_tegrastats_parse_line, SIGTERM-then-SIGKILL stop that always reaps. Implements the
 * tegrastats fallback of docs/telemetry.md with the command line of jetson-platforms.md §3.1. */
#include "agent_tegrastats_child.h"

#include "agent_tegrastats.h"
#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define S_BUF_BYTES  (AGENT_TEGRASTATS_LINE_MAX + 2) // a longest line, its newline, a NUL
#define S_ERR_MAX    255
#define S_REAP_STEP_NS (1000 * 1000L)               // 1 ms between waitpid checks at a stop

struct agent_tegrastats_child {
    char path[PATH_MAX];          // the executable
    int interval_ms;              // --interval
    pid_t pid;                    // the child; stays set after it was reaped
    bool reaped;                  // waitpid collected it
    int status;                   // its waitpid status once reaped
    int fd;                       // owned: the read end of its stdout, O_NONBLOCK; -1 when closed
    char buf[S_BUF_BYTES];        // the line being read
    size_t len;                   // bytes in buf
    bool skipping;                // discarding the rest of an overlong line
    json_t *latest;               // owned: the newest parsed line; NULL before the first
    int64_t latest_us;            // monotonic time it was read
    int64_t lines;                // lines parsed
    int64_t bad;                  // lines skipped
    char last_error[S_ERR_MAX + 1]; // why the last skipped line was skipped
};

static int s_spawn(agent_tegrastats_child_t *self, int out_fd, jf_err_t *err)
{
    // A fixed environment: tegrastats needs nothing from the agent's.
    static char *const env[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
    char interval[16];
    (void) snprintf(interval, sizeof interval, "%d", self->interval_ms);
    char *const argv[] = {self->path, "--interval", interval, NULL};
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, dflt;
    (void) sigemptyset(&none);
    (void) sigemptyset(&dflt);
    (void) sigaddset(&dflt, SIGPIPE); // dies when the agent closes the pipe, even if it is killed
    (void) sigaddset(&dflt, SIGTERM);
    (void) sigaddset(&dflt, SIGINT);
    (void) posix_spawn_file_actions_init(&fa);
    (void) posix_spawnattr_init(&attr);
    (void) posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    (void) posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    // Its complaints (no root, a missing node) would flood the agent's log at every interval.
    (void) posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    (void) posix_spawnattr_setsigmask(&attr, &none);
    (void) posix_spawnattr_setsigdefault(&attr, &dflt);
    (void) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawn(&self->pid, self->path, &fa, &attr, argv, env);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) {
        self->pid = 0;
        return jf_err_set(err, -rc, "tegrastats: cannot start '%.200s': %s", self->path,
                          strerror(rc));
    }
    return 0;
}

static int s_check_opts(const agent_tegrastats_child_opts_t *opts, jf_err_t *err)
{
    if (opts->interval_ms < AGENT_TEGRASTATS_INTERVAL_MIN_MS ||
        opts->interval_ms > AGENT_TEGRASTATS_INTERVAL_MAX_MS) {
        return jf_err_set(err, -EINVAL, "tegrastats: interval %d ms is outside %d..%d",
                          opts->interval_ms, AGENT_TEGRASTATS_INTERVAL_MIN_MS,
                          AGENT_TEGRASTATS_INTERVAL_MAX_MS);
    }
    if (!opts->path || opts->path[0] != '/' || strlen(opts->path) >= PATH_MAX) {
        return jf_err_set(err, -EINVAL, "tegrastats: '%.200s' is not an absolute path",
                          opts->path ? opts->path : "");
    }
    if (access(opts->path, X_OK) != 0) {
        int e = errno;
        return jf_err_set(err, -e, "tegrastats: '%.200s' is not executable: %s", opts->path,
                          strerror(e));
    }
    return 0;
}

agent_tegrastats_child_t *agent_tegrastats_child_new(const agent_tegrastats_child_opts_t *opts,
                                                     jf_err_t *err)
{
    if (s_check_opts(opts, err) != 0) {
        return NULL;
    }
    agent_tegrastats_child_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "tegrastats: out of memory");
        return NULL;
    }
    self->fd = -1;
    self->interval_ms = opts->interval_ms;
    (void) snprintf(self->path, sizeof self->path, "%s", opts->path);
    // CLOEXEC on both ends: no other child (the trainer) may hold the write end, or the end of
    // tegrastats would never show as end-of-file.
    int fds[2] = {-1, -1};
    if (pipe2(fds, O_CLOEXEC) != 0) {
        jf_err_set(err, -errno, "tegrastats: pipe: %s", strerror(errno));
        goto fail_destroy;
    }
    self->fd = fds[0];
    int rc = fcntl(self->fd, F_SETFL, O_NONBLOCK) == 0 ? s_spawn(self, fds[1], err)
                                                       : jf_err_set(err, -errno, "tegrastats: "
                                                                    "fcntl: %s", strerror(errno));
    close(fds[1]);
    if (rc != 0) {
        goto fail_destroy;
    }
    return self;

fail_destroy:
    agent_tegrastats_child_destroy(&self);
    return NULL;
}

// Collects the child: waits up to grace_us for it to exit by itself, then SIGKILLs it (which it
// cannot ignore, so the final waitpid returns at once).
static void s_reap(agent_tegrastats_child_t *self, int64_t grace_us)
{
    if (self->pid <= 0 || self->reaped) {
        return;
    }
    int64_t deadline_us = jf_clock_mono_us() + grace_us;
    for (;;) {
        pid_t r = waitpid(self->pid, &self->status, WNOHANG);
        if (r == self->pid || (r < 0 && errno != EINTR)) {
            self->reaped = true; // r < 0: ECHILD, someone else reaped it; nothing is left
            return;
        }
        if (jf_clock_mono_us() >= deadline_us) {
            break;
        }
        struct timespec step = {.tv_nsec = S_REAP_STEP_NS};
        (void) nanosleep(&step, NULL);
    }
    (void) kill(self->pid, SIGKILL);
    while (waitpid(self->pid, &self->status, 0) < 0 && errno == EINTR) {
    }
    self->reaped = true;
}

void agent_tegrastats_child_destroy(agent_tegrastats_child_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_tegrastats_child_t *self = *self_p;
    if (self->fd >= 0) {
        close(self->fd);
    }
    if (self->pid > 0 && !self->reaped) {
        (void) kill(self->pid, SIGTERM);
        s_reap(self, AGENT_TEGRASTATS_STOP_WAIT_US);
    }
    json_decref(self->latest);
    free(self);
    *self_p = NULL;
}

static void s_bad(agent_tegrastats_child_t *self, const char *why)
{
    self->bad++;
    (void) snprintf(self->last_error, sizeof self->last_error, "%s", why);
}

static void s_on_line(agent_tegrastats_child_t *self, char *line, int64_t now_us)
{
    json_t *sample = json_object();
    jf_err_t e = {0};
    if (!sample || agent_tegrastats_parse_line(line, sample, &e) != 0) {
        json_decref(sample);
        s_bad(self, sample ? e.msg : "out of memory");
        return;
    }
    json_decref(self->latest);
    self->latest = sample;
    self->latest_us = now_us;
    self->lines++;
}

// Handles the complete lines in buf and keeps the unfinished rest.
static void s_split(agent_tegrastats_child_t *self, int64_t now_us)
{
    size_t start = 0;
    for (char *nl; (nl = memchr(self->buf + start, '\n', self->len - start)) != NULL;) {
        *nl = '\0';
        if (!self->skipping) {
            s_on_line(self, self->buf + start, now_us);
        }
        self->skipping = false;
        start = (size_t) (nl - self->buf) + 1;
    }
    memmove(self->buf, self->buf + start, self->len - start);
    self->len -= start;
    if (self->len >= sizeof self->buf - 1) {
        s_bad(self, "a line longer than AGENT_TEGRASTATS_LINE_MAX bytes");
        self->skipping = true;
        self->len = 0;
    }
}

static int s_ended(agent_tegrastats_child_t *self, jf_err_t *err)
{
    int st = self->status;
    if (WIFEXITED(st)) {
        return jf_err_set(err, -EPIPE, "tegrastats '%.200s' exited with status %d", self->path,
                          WEXITSTATUS(st));
    }
    return jf_err_set(err, -EPIPE, "tegrastats '%.200s' was killed by signal %d (%s)", self->path,
                      WIFSIGNALED(st) ? WTERMSIG(st) : 0,
                      WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "unknown");
}

int agent_tegrastats_child_poll(agent_tegrastats_child_t *self, int64_t now_us, jf_err_t *err)
{
    while (self->fd >= 0) {
        ssize_t n = read(self->fd, self->buf + self->len, sizeof self->buf - 1 - self->len);
        if (n > 0) {
            self->len += (size_t) n;
            s_split(self, now_us);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        } else {
            // End of file (or a read error): the child is gone or going; it gets a moment to
            // exit so that its own status is reported, not our SIGKILL.
            close(self->fd);
            self->fd = -1;
            s_reap(self, AGENT_TEGRASTATS_STOP_WAIT_US);
        }
    }
    return s_ended(self, err);
}

int agent_tegrastats_child_wait_line(agent_tegrastats_child_t *self, int64_t timeout_us,
                                     jf_err_t *err)
{
    int64_t deadline_us = jf_clock_mono_us() + timeout_us;
    int64_t before = self->lines;
    for (;;) {
        int64_t now_us = jf_clock_mono_us();
        int rc = agent_tegrastats_child_poll(self, now_us, err);
        if (rc != 0 || self->lines > before) {
            return rc;
        }
        if (now_us >= deadline_us) {
            return jf_err_set(err, -ETIMEDOUT, "tegrastats '%.200s' printed no usable line in "
                              "%lld ms%s%.200s", self->path,
                              (long long) (timeout_us / JF_US_PER_MS),
                              self->bad ? "; last skipped: " : "", self->last_error);
        }
        struct pollfd p = {.fd = self->fd, .events = POLLIN};
        (void) poll(&p, 1, (int) ((deadline_us - now_us + JF_US_PER_MS - 1) / JF_US_PER_MS));
    }
}

// Whether sample has a rail with a power reading, so that its rails need no filling.
static bool s_has_rail_power(const json_t *sample)
{
    size_t i;
    json_t *rail;
    json_array_foreach(json_object_get(sample, "rails"), i, rail) {
        if (json_object_get(rail, "power_mw")) {
            return true;
        }
    }
    return false;
}

static bool s_lacks(const json_t *sample, const char *key)
{
    static const char *const never[] = {"t_us", "mono_us", "source", "board_type"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        if (strcmp(key, never[i]) == 0) {
            return false;
        }
    }
    if (strcmp(key, "rails") == 0 || strcmp(key, "input_power_mw") == 0) {
        return !s_has_rail_power(sample);
    }
    return json_object_get(sample, key) == NULL;
}

int agent_tegrastats_child_fill(const agent_tegrastats_child_t *self, json_t *sample,
                                int64_t now_us, int64_t max_age_us)
{
    if (!self->latest || now_us - self->latest_us > max_age_us) {
        return -ESTALE;
    }
    json_t *keys = json_array();
    json_t *copies = json_object();
    const char *key;
    json_t *value;
    json_object_foreach(self->latest, key, value) {
        if (keys && copies && s_lacks(sample, key)) {
            (void) json_object_set_new(copies, key, json_deep_copy(value));
            (void) json_array_append_new(keys, json_string(key));
        }
    }
    int rc = keys && copies && json_array_size(keys) == json_object_size(copies) ? 0 : -ENOMEM;
    if (rc == 0 && json_array_size(keys) > 0) {
        rc = json_object_update(sample, copies) == 0 ? 0 : -ENOMEM;
        (void) json_object_set(sample, "from_tegrastats", keys);
        (void) json_object_set_new(sample, "tegrastats_age_us",
                                   json_integer(now_us - self->latest_us));
    }
    json_decref(keys);
    json_decref(copies);
    return rc;
}

const json_t *agent_tegrastats_child_latest(const agent_tegrastats_child_t *self,
                                            int64_t *ret_read_us)
{
    if (self->latest && ret_read_us) {
        *ret_read_us = self->latest_us;
    }
    return self->latest;
}

int64_t agent_tegrastats_child_bad_lines(const agent_tegrastats_child_t *self)
{
    return self->bad;
}

const char *agent_tegrastats_child_last_error(const agent_tegrastats_child_t *self)
{
    return self->last_error;
}

int agent_tegrastats_child_fd(const agent_tegrastats_child_t *self)
{
    return self->fd;
}

pid_t agent_tegrastats_child_pid(const agent_tegrastats_child_t *self)
{
    return self->pid;
}

int agent_tegrastats_child_interval_ms(const agent_tegrastats_child_t *self)
{
    return self->interval_ms;
}
