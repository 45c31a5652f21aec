/* Test support: processes. */
#include "jft_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void s_child(const char *log_path, char *const argv[], char *const env_extra[],
                    pid_t parent)
{
    (void) setpgid(0, 0);
    (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) {
        _exit(127); // the test died before we got here
    }
    int fd = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    int null = open("/dev/null", O_RDONLY);
    if (fd < 0 || null < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || dup2(null, 0) < 0) {
        _exit(127);
    }
    for (int i = 0; env_extra && env_extra[i]; i++) {
        (void) putenv(env_extra[i]);
    }
    execv(argv[0], argv);
    _exit(127);
}

int jft_proc_start(jft_proc_t *p, const char *log_path, char *const argv[],
                   char *const env_extra[])
{
    memset(p, 0, sizeof *p);
    (void) snprintf(p->log_path, sizeof p->log_path, "%s", log_path);
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        return -errno;
    }
    if (pid == 0) {
        s_child(log_path, argv, env_extra, parent);
    }
    (void) setpgid(pid, pid); // also here, so a signal sent right away reaches the group
    p->pid = pid;
    return 0;
}

bool jft_proc_alive(jft_proc_t *p)
{
    if (p->pid <= 0) {
        return false;
    }
    if (waitpid(p->pid, &p->status, WNOHANG) == p->pid) {
        p->pid = 0;
        return false;
    }
    return true;
}

static void s_sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long) (ms % 1000) * 1000000L};
    (void) nanosleep(&ts, NULL);
}

int jft_proc_wait(jft_proc_t *p, int timeout_ms, int *ret_status)
{
    for (int waited = 0; waited <= timeout_ms; waited += 10) {
        if (!jft_proc_alive(p)) {
            if (ret_status) {
                *ret_status = p->status;
            }
            return 0;
        }
        s_sleep_ms(10);
    }
    return -ETIMEDOUT;
}

void jft_proc_signal(jft_proc_t *p, int sig)
{
    if (p->pid > 0) {
        (void) kill(-p->pid, sig);
    }
}

int jft_proc_stop(jft_proc_t *p)
{
    if (p->pid <= 0) {
        return -1;
    }
    jft_proc_signal(p, SIGTERM);
    int status = 0;
    if (jft_proc_wait(p, JFT_STOP_GRACE_MS, &status) != 0) {
        jft_proc_signal(p, SIGKILL);
        (void) waitpid(p->pid, &status, 0);
        p->pid = 0;
    }
    return status;
}

int jft_run(char *const argv[], const char *out_path, int timeout_ms, char *const env_extra[])
{
    jft_proc_t p;
    (void) unlink(out_path);
    int rc = jft_proc_start(&p, out_path, argv, env_extra);
    if (rc != 0) {
        return rc;
    }
    int status = 0;
    if (jft_proc_wait(&p, timeout_ms, &status) != 0) {
        (void) jft_proc_stop(&p);
        return -ETIMEDOUT;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
