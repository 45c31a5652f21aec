/* posix_spawn with pipes, a deadline and a bounded capture of the output. */
#include "privhelper_spawn.h"

#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static void s_close(int *fd)
{
    if (*fd >= 0) {
        (void) close(*fd); // a pipe end: nothing to flush
        *fd = -1;
    }
}

// The child's stdin: the read end of a pipe or one end of a socket pair, the input already in
// it and our end closed, so the child sees the bytes and then end of file.
static int s_input(const privhelper_spawn_opts_t *o, int *ret_fd)
{
    int fds[2] = {-1, -1};
    int rc = o->input_socket ? socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds)
                             : pipe2(fds, O_CLOEXEC);
    if (rc != 0) {
        return -errno;
    }
    size_t done = 0;
    while (done < o->input_len) {
        ssize_t n = write(fds[1], o->input + done, o->input_len - done);
        if (n < 0) {
            rc = -errno;
            break;
        }
        done += (size_t) n;
    }
    s_close(&fds[1]); // queued bytes stay readable by the other end
    if (rc != 0) {
        s_close(&fds[0]);
        return rc;
    }
    *ret_fd = fds[0];
    return 0;
}

static int s_start(const privhelper_spawn_opts_t *o, int in_fd, const int out[2], const int errp[2],
                   pid_t *ret_pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    (void) posix_spawn_file_actions_init(&fa);
    (void) posix_spawnattr_init(&attr);
    if (in_fd >= 0) {
        (void) posix_spawn_file_actions_adddup2(&fa, in_fd, STDIN_FILENO);
    } else {
        (void) posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    }
    (void) posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    (void) posix_spawn_file_actions_adddup2(&fa, errp[1], STDERR_FILENO);
    // An ignored SIGPIPE or a blocked signal in the parent would be inherited across exec.
    sigset_t none, pipe;
    (void) sigemptyset(&none);
    (void) sigemptyset(&pipe);
    (void) sigaddset(&pipe, SIGPIPE);
    (void) posix_spawnattr_setsigmask(&attr, &none);
    (void) posix_spawnattr_setsigdefault(&attr, &pipe);
    (void) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    int rc = posix_spawn(ret_pid, o->argv[0], &fa, &attr, (char *const *) o->argv,
                         (char *const *) o->envp);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return -rc;
}

static void s_drain(int *fd, char *buf, size_t *len)
{
    char tmp[512];
    ssize_t n = read(*fd, tmp, sizeof tmp);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return;
    }
    if (n <= 0) {
        s_close(fd);
        return;
    }
    size_t keep = (size_t) n < PRIVHELPER_SPAWN_OUTPUT_MAX - *len
                      ? (size_t) n
                      : PRIVHELPER_SPAWN_OUTPUT_MAX - *len;
    memcpy(buf + *len, tmp, keep);
    *len += keep;
    buf[*len] = '\0';
}

// Reads stdout and stderr until both reach end of file or the deadline passes.
static void s_collect(int fds[2], int64_t deadline_us, privhelper_spawn_result_t *r)
{
    char *bufs[2] = {r->out, r->err};
    size_t lens[2] = {0, 0};
    while (fds[0] >= 0 || fds[1] >= 0) {
        int64_t left_ms = (deadline_us - jf_clock_mono_us() + 999) / 1000;
        if (left_ms <= 0) {
            r->timed_out = true;
            break;
        }
        struct pollfd pfd[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
        int n = poll(pfd, 2, left_ms > INT_MAX ? INT_MAX : (int) left_ms);
        if (n < 0 && errno != EINTR) {
            break;
        }
        for (size_t i = 0; n > 0 && i < 2; i++) {
            if (pfd[i].revents) {
                s_drain(&fds[i], bufs[i], &lens[i]);
            }
        }
    }
    s_close(&fds[0]);
    s_close(&fds[1]);
}

// Waits for the child; at a deadline it is killed first unless it has already exited (a
// grandchild may hold the pipes open after the child is gone).
static void s_reap(pid_t pid, privhelper_spawn_result_t *r)
{
    int status = 0;
    pid_t got = r->timed_out ? waitpid(pid, &status, WNOHANG) : 0;
    if (got == pid) {
        r->timed_out = false;
    } else {
        if (r->timed_out) {
            (void) kill(pid, SIGKILL); // fails only if it is gone or not ours (sudo): wait anyway
        }
        while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
        }
    }
    r->exit_code = got == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r->signal = got == pid && WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

int privhelper_spawn_run(const privhelper_spawn_opts_t *opts, privhelper_spawn_result_t *ret_result,
                         jf_err_t *err)
{
    memset(ret_result, 0, sizeof *ret_result);
    if (!opts->argv || !opts->argv[0] || opts->argv[0][0] != '/' ||
        opts->input_len > PRIVHELPER_SPAWN_INPUT_MAX) {
        return jf_err_set(err, -EINVAL,
                          "spawn: the program needs an absolute path and at most "
                          "%d bytes of input",
                          PRIVHELPER_SPAWN_INPUT_MAX);
    }
    int in_fd = -1, out[2] = {-1, -1}, errp[2] = {-1, -1};
    int rc = opts->input ? s_input(opts, &in_fd) : 0;
    if (rc == 0 && (pipe2(out, O_CLOEXEC) != 0 || pipe2(errp, O_CLOEXEC) != 0)) {
        rc = -errno;
    }
    pid_t pid = 0;
    rc = rc != 0 ? rc : s_start(opts, in_fd, out, errp, &pid);
    s_close(&in_fd);
    s_close(&out[1]);
    s_close(&errp[1]);
    if (rc != 0) {
        s_close(&out[0]);
        s_close(&errp[0]);
        return jf_err_set(err, rc, "cannot start '%.200s': %s", opts->argv[0], strerror(-rc));
    }
    int fds[2] = {out[0], errp[0]};
    s_collect(fds, jf_clock_mono_us() + opts->timeout_us, ret_result);
    s_reap(pid, ret_result);
    return 0;
}
