/* Other load: /proc/stat totals minus the agent's process tree, per interval. */
#include "agent_otherload.h"

#include "agent_procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_STAT_MAX   (64 * 1024) // /proc/stat of many cores
#define S_PID_STAT   1024        // one /proc/PID/stat line
#define S_FIELDS_MIN 15          // fields after the comm up to cstime (proc(5): 3..17)
#define S_DEPTH_MAX  64          // parent links followed, at most

typedef struct s_proc {
    pid_t pid, ppid;
    uint64_t ticks;
} s_proc_t;

struct agent_otherload {
    char root[PATH_MAX];
    pid_t root_pid;
    bool have;          // a read is there to close an interval from
    int64_t last_us;    // monotonic time of that read
    uint64_t last_all;  // its busy + idle ticks of all CPUs
    uint64_t last_busy; // its busy ticks
    uint64_t last_tree; // its tree ticks
    uint64_t sum_all;   // over the intervals
    uint64_t sum_other; // over the intervals
    int64_t intervals;
    double max_pct;
    s_proc_t *procs; // owned: scratch for a walk
};

agent_otherload_t *agent_otherload_new(const char *proc_root, pid_t root_pid)
{
    agent_otherload_t *self = calloc(1, sizeof *self);
    s_proc_t *procs = calloc(AGENT_OTHERLOAD_PROCS_MAX, sizeof *procs);
    if (!self || !procs) {
        free(self);
        free(procs);
        return NULL;
    }
    (void) snprintf(self->root, sizeof self->root, "%s", proc_root);
    self->root_pid = root_pid;
    self->procs = procs;
    return self;
}

void agent_otherload_destroy(agent_otherload_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->procs);
    free(*self_p);
    *self_p = NULL;
}

// The file's text into buf (NUL-terminated); -EIO when it cannot be read.
static int s_read(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -EIO;
    }
    size_t used = 0;
    for (ssize_t n = 1; n > 0 && used<size - 1; used += n> 0 ? (size_t) n : 0) {
        n = read(fd, buf + used, size - 1 - used);
        if (n < 0) {
            (void) close(fd);
            return -EIO;
        }
    }
    (void) close(fd);
    buf[used] = '\0';
    return 0;
}

int agent_otherload_parse_pid_stat(const char *text, pid_t *ret_ppid, uint64_t *ret_ticks,
                                   jf_err_t *err)
{
    const char *close = strrchr(text, ')'); // the comm may hold spaces and parentheses
    if (!close) {
        return jf_err_set(err, -EINVAL, "pid stat: no ')' after the command name");
    }
    unsigned long long f[S_FIELDS_MIN] = {0}; // fields 3..17; field 3 (state) is a letter
    char state = 0;
    int n = sscanf(close + 1,
                   " %c %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu "
                   "%llu %llu",
                   &state, &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10],
                   &f[11], &f[12], &f[13], &f[14]);
    if (n != S_FIELDS_MIN || f[1] > (unsigned long long) INT_MAX) {
        return jf_err_set(err, -EINVAL, "pid stat: %d of the fields up to cstime read, want %d", n,
                          S_FIELDS_MIN);
    }
    // Fields 14..17 (utime, stime, cutime, cstime) are f[11]..f[14]; field 4 (ppid) is f[1].
    *ret_ppid = (pid_t) f[1];
    *ret_ticks = f[11] + f[12] + f[13] + f[14];
    return 0;
}

static int s_cmp_pid(const void *a, const void *b)
{
    pid_t x = ((const s_proc_t *) a)->pid;
    pid_t y = ((const s_proc_t *) b)->pid;
    return (x > y) - (x < y);
}

// Whether p descends from (or is) root, following parents through the sorted table.
static bool s_in_tree(const agent_otherload_t *self, const s_proc_t *p, size_t n)
{
    for (int depth = 0; p && depth < S_DEPTH_MAX; depth++) {
        if (p->pid == self->root_pid) {
            return true;
        }
        s_proc_t key = {.pid = p->ppid};
        p = p->ppid > 0 ? bsearch(&key, self->procs, n, sizeof key, s_cmp_pid) : NULL;
    }
    return false;
}

// The ticks of the root's tree now. Processes that vanish during the walk are skipped.
static uint64_t s_tree_ticks(agent_otherload_t *self)
{
    DIR *d = opendir(self->root);
    size_t n = 0;
    for (struct dirent *e; d && n < AGENT_OTHERLOAD_PROCS_MAX && (e = readdir(d));) {
        char *end = NULL;
        long pid = strtol(e->d_name, &end, 10);
        char path[PATH_MAX + 32], text[S_PID_STAT];
        if (pid <= 0 || *end ||
            snprintf(path, sizeof path, "%s/%s/stat", self->root, e->d_name) >= (int) sizeof path ||
            s_read(path, text, sizeof text) != 0) {
            continue;
        }
        s_proc_t *p = &self->procs[n];
        p->pid = (pid_t) pid;
        n += agent_otherload_parse_pid_stat(text, &p->ppid, &p->ticks, NULL) == 0;
    }
    if (d) {
        (void) closedir(d);
    }
    qsort(self->procs, n, sizeof *self->procs, s_cmp_pid);
    uint64_t ticks = 0;
    for (size_t i = 0; i < n; i++) {
        ticks += s_in_tree(self, &self->procs[i], n) ? self->procs[i].ticks : 0;
    }
    return ticks;
}

int agent_otherload_read(agent_otherload_t *self, int64_t mono_us, jf_err_t *err)
{
    if (self->have && mono_us - self->last_us < AGENT_OTHERLOAD_MIN_INTERVAL_US) {
        return 0;
    }
    static char text[S_STAT_MAX]; // the sampler's thread only (header)
    char path[PATH_MAX + 8];
    (void) snprintf(path, sizeof path, "%s/stat", self->root);
    agent_proc_stat_t st;
    if (s_read(path, text, sizeof text) != 0) {
        self->have = false;
        return jf_err_set(err, -EIO, "other load: cannot read %s", path);
    }
    int rc = agent_procfs_parse_stat(text, &st, err);
    if (rc != 0) {
        self->have = false;
        return rc;
    }
    uint64_t tree = s_tree_ticks(self);
    uint64_t all = st.total.busy + st.total.idle;
    if (self->have && all > self->last_all && st.total.busy >= self->last_busy) {
        uint64_t d_all = all - self->last_all;
        uint64_t d_busy = st.total.busy - self->last_busy;
        uint64_t d_tree = tree > self->last_tree ? tree - self->last_tree : 0;
        // The tree's ticks and /proc/stat's are read at slightly different moments: clamp.
        uint64_t d_other = d_busy > d_tree ? d_busy - d_tree : 0;
        double pct = 100.0 * (double) d_other / (double) d_all;
        self->sum_all += d_all;
        self->sum_other += d_other;
        self->intervals++;
        self->max_pct = pct > self->max_pct ? pct : self->max_pct;
    }
    self->have = true;
    self->last_us = mono_us;
    self->last_all = all;
    self->last_busy = st.total.busy;
    self->last_tree = tree;
    return 0;
}

void agent_otherload_result(const agent_otherload_t *self, agent_otherload_result_t *ret)
{
    *ret = (agent_otherload_result_t){
        .intervals = self->intervals,
        .mean_pct = self->sum_all ? 100.0 * (double) self->sum_other / (double) self->sum_all : 0,
        .max_pct = self->max_pct};
}
