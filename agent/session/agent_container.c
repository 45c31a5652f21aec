/* Container commands for a run's trainer (agent_container.h, docs/containers.md). */
#include "agent_container.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

static void s_board_part(const char *board, char b[49]);

int agent_container_parse(const char *text, agent_container_t *ret, jf_err_t *err)
{
    *ret = (agent_container_t){0};
    if (!text || !text[0]) {
        return 0;
    }
    if (strlen(text) >= sizeof ret->buf) {
        return jf_err_set(err, -EINVAL, "--container: the command is too long");
    }
    memcpy(ret->buf, text, strlen(text) + 1);
    for (char *p = ret->buf + strspn(ret->buf, " "); *p; p += strspn(p, " ")) {
        if (ret->n_words == AGENT_CONTAINER_WORDS_MAX) {
            *ret = (agent_container_t){0};
            return jf_err_set(err, -EINVAL, "--container: more than %d words",
                              AGENT_CONTAINER_WORDS_MAX);
        }
        ret->words[ret->n_words++] = p;
        p += strcspn(p, " ");
        if (*p) {
            *p++ = '\0';
        }
    }
    bool ok = ret->n_words >= 3 && ret->words[0][0] == '/' && strcmp(ret->words[1], "run") == 0;
    if (!ok) {
        *ret = (agent_container_t){0};
        return jf_err_set(err, -EINVAL,
                          "--container '%.200s': expected ENGINE run [OPTIONS] IMAGE, the engine "
                          "an absolute path (docs/containers.md)",
                          text);
    }
    return 0;
}

__attribute__((format(printf, 3, 4))) static int s_add(agent_platform_trainer_t *t, jf_err_t *err,
                                                       const char *fmt, ...)
{
    size_t left = sizeof t->buf - t->used;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(t->buf + t->used, left, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= left || t->n_args == AGENT_PLATFORM_TRAINER_ARGS_MAX) {
        return jf_err_set(err, -ENOSPC, "container: the trainer's command does not fit");
    }
    const char *word = t->buf + t->used;
    t->used += (size_t) n + 1;
    if (!t->program) {
        t->program = word;
    } else {
        t->args[t->n_args++] = word;
    }
    return 0;
}

void agent_container_name(const char *board, const char *run_id, int64_t attempt,
                          char buf[AGENT_CONTAINER_NAME_MAX])
{
    uint64_t h = UINT64_C(14695981039346656037); // FNV-1a, 64 bits
    for (const unsigned char *p = (const unsigned char *) run_id; *p; p++) {
        h = (h ^ *p) * UINT64_C(1099511628211);
    }
    char b[49];
    s_board_part(board, b);
    (void) snprintf(buf, AGENT_CONTAINER_NAME_MAX, "jf-%s-%016" PRIx64 "-%" PRId64, b, h, attempt);
}

int agent_container_remove(const agent_container_t *self, const char *name, jf_err_t *err)
{
    if (self->n_words == 0 || !name || !name[0]) {
        return 0;
    }
    char *kill_argv[] = {(char *) self->words[0], "kill", (char *) name, NULL};
    char *rm_argv[] = {(char *) self->words[0], "rm", "-f", (char *) name, NULL};
    pid_t pid = fork();
    if (pid < 0) {
        return jf_err_set(err, -errno, "container: cannot start '%s rm -f %s': %s", self->words[0],
                          name, strerror(errno));
    }
    if (pid == 0) {        // only async-signal-safe calls from here: the agent has threads
        if (fork() == 0) { // the grandchild: kill, then rm -f
            int fd = open("/dev/null", O_RDWR);
            if (fd >= 0) {
                (void) dup2(fd, STDIN_FILENO);
                (void) dup2(fd, STDOUT_FILENO);
                (void) dup2(fd, STDERR_FILENO);
            }
            pid_t k = fork();
            if (k == 0) {
                execv(kill_argv[0], kill_argv);
                _exit(127);
            }
            int st = 0;
            while (k > 0 && waitpid(k, &st, 0) < 0 && errno == EINTR) {
            }
            execv(rm_argv[0], rm_argv);
        }
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return 0;
}

int agent_container_wrap(const agent_container_t *self, const char *name, const char *dataset_dir,
                         const agent_platform_trainer_t *in, agent_platform_trainer_t *ret_out,
                         jf_err_t *err)
{
    if (self->n_words == 0) {
        return jf_err_set(err, -ENOENT,
                          "the run asks for a container and this agent has no "
                          "container engine configured (--container)");
    }
    agent_platform_trainer_t *t = ret_out;
    t->program = NULL;
    t->n_args = 0;
    t->used = 0;
    int rc = s_add(t, err, "%s", self->words[0]);
    rc = rc ? rc : s_add(t, err, "%s", self->words[1]);
    if (rc == 0 && name && name[0]) {
        rc = s_add(t, err, "--name");
        rc = rc ? rc : s_add(t, err, "%s", name);
    }
    if (rc == 0 && dataset_dir && dataset_dir[0]) {
        rc = s_add(t, err, "-v");
        rc = rc ? rc : s_add(t, err, "%s:%s:ro", dataset_dir, dataset_dir);
    }
    for (size_t i = 2; rc == 0 && i < self->n_words; i++) {
        rc = s_add(t, err, "%s", self->words[i]);
    }
    rc = rc ? rc : s_add(t, err, "%s", in->program);
    for (size_t i = 0; rc == 0 && i < in->n_args; i++) {
        rc = s_add(t, err, "%s", in->args[i]);
    }
    return rc;
}

// The board part of a container name, as agent_container_name writes it, into b (49 bytes).
static void s_board_part(const char *board, char b[49])
{
    size_t n = 0;
    for (; board[n] && n < 48; n++) {
        char ch = board[n];
        b[n] = isalnum((unsigned char) ch) || ch == '_' || ch == '.' || ch == '-' ? ch : '_';
    }
    b[n] = '\0';
}

bool agent_container_is_boards(const char *board, const char *name)
{
    char b[49], prefix[64];
    s_board_part(board, b);
    int len = snprintf(prefix, sizeof prefix, "jf-%s-", b);
    if (len <= 0 || strncmp(name, prefix, (size_t) len) != 0) {
        return false;
    }
    const char *p = name + len;
    for (int i = 0; i < 16; i++, p++) {
        if (!isxdigit((unsigned char) *p) || isupper((unsigned char) *p)) {
            return false;
        }
    }
    if (*p++ != '-' || !isdigit((unsigned char) *p)) {
        return false;
    }
    while (isdigit((unsigned char) *p)) {
        p++;
    }
    return *p == '\0';
}

static int64_t s_mono_ms(void)
{
    struct timespec ts;
    (void) clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Reads fd to its end into out (size bytes, NUL-terminated; the rest is read and dropped) until
// deadline_ms. 0 or -ETIMEDOUT.
static int s_read_all(int fd, int64_t deadline_ms, char *out, size_t size)
{
    size_t kept = 0;
    for (;;) {
        int64_t left = deadline_ms - s_mono_ms();
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = left > 0 ? poll(&pfd, 1, (int) left) : 0;
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            out[kept] = '\0';
            return -ETIMEDOUT;
        }
        char chunk[4096];
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        size_t take = (size_t) n < size - 1 - kept ? (size_t) n : size - 1 - kept;
        memcpy(out + kept, chunk, take);
        kept += take;
    }
    out[kept] = '\0';
    return 0;
}

// Starts argv with stdout and stderr into out_fd and stdin from /dev/null, in its own process
// group. 0 or a positive posix_spawn error.
static int s_spawn(char *const *argv, int out_fd, pid_t *ret_pid)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    (void) posix_spawn_file_actions_init(&fa);
    (void) posix_spawnattr_init(&attr);
    (void) posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    (void) posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
    (void) posix_spawn_file_actions_adddup2(&fa, out_fd, STDERR_FILENO);
    (void) posix_spawnattr_setpgroup(&attr, 0);
    (void) posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    extern char **environ;
    int rc = posix_spawn(ret_pid, argv[0], &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    return rc;
}

int agent_container_list(const agent_container_t *self, const char *board,
                         char (*names)[AGENT_CONTAINER_NAME_MAX], size_t max, size_t *ret_n,
                         int timeout_ms, jf_err_t *err)
{
    *ret_n = 0;
    if (self->n_words == 0) {
        return jf_err_set(err, -ENOENT, "container: no engine configured (--container)");
    }
    char b[49], filter[80];
    s_board_part(board, b);
    (void) snprintf(filter, sizeof filter, "name=jf-%s-", b);
    char *argv[] = {
        (char *) self->words[0], "ps", "-a", "--filter", filter, "--format", "{{.Names}}", NULL};
    int fds[2] = {-1, -1};
    if (pipe2(fds, O_CLOEXEC) != 0) {
        return jf_err_set(err, -EIO, "container: cannot create a pipe: %s", strerror(errno));
    }
    pid_t pid = -1;
    int rc = s_spawn(argv, fds[1], &pid);
    (void) close(fds[1]);
    if (rc != 0) {
        (void) close(fds[0]);
        return jf_err_set(err, -EIO, "container: cannot start '%s ps': %s", self->words[0],
                          strerror(rc));
    }
    static char out[64 * 1024]; // the agent's loop thread only
    rc = s_read_all(fds[0], s_mono_ms() + timeout_ms, out, sizeof out);
    (void) close(fds[0]);
    if (rc != 0) {
        (void) kill(-pid, SIGKILL);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (rc != 0) {
        return jf_err_set(err, -ETIMEDOUT, "container: '%s ps' did not answer within %d ms",
                          self->words[0], timeout_ms);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        out[strcspn(out, "\n")] = '\0';
        return jf_err_set(err, -EIO, "container: '%s ps' failed: %.200s", self->words[0], out);
    }
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        if (agent_container_is_boards(board, line) && *ret_n < max) {
            (void) snprintf(names[*ret_n], AGENT_CONTAINER_NAME_MAX, "%s", line);
            (*ret_n)++;
        }
    }
    return 0;
}
