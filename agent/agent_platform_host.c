/* Host platform: /proc CPU load and memory. Files are opened once and re-read with pread. */
#include "agent_platform.h"

#include "agent_procfs.h"

#include <czmq.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define S_READ_MAX (64 * 1024)

struct agent_platform {
    int stat_fd;                 // owned: <proc>/stat
    int meminfo_fd;              // owned: <proc>/meminfo
    bool have_prev;
    agent_proc_stat_t prev;      // previous /proc/stat reading, for load deltas
    char buf[S_READ_MAX];
};

static const jf_power_mode_t s_host_mode = {0, "DEFAULT"};

static int s_open(const char *root, const char *name, int *ret_fd, jf_err_t *err)
{
    char path[PATH_MAX] = {0};
    (void) snprintf(path, sizeof path, "%s/%s", root, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return jf_err_set(err, -errno, "%s: %s", path, strerror(errno));
    }
    *ret_fd = fd;
    return 0;
}

agent_platform_t *agent_platform_host_new(const agent_platform_opts_t *opts, jf_err_t *err)
{
    agent_platform_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "platform: out of memory");
        return NULL;
    }
    self->stat_fd = self->meminfo_fd = -1;
    const char *root = opts && opts->proc_root ? opts->proc_root : "/proc";
    if (s_open(root, "stat", &self->stat_fd, err) != 0 ||
        s_open(root, "meminfo", &self->meminfo_fd, err) != 0) {
        agent_platform_destroy(&self);
    }
    return self;
}

void agent_platform_destroy(agent_platform_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    if ((*self_p)->stat_fd >= 0) {
        close((*self_p)->stat_fd);
    }
    if ((*self_p)->meminfo_fd >= 0) {
        close((*self_p)->meminfo_fd);
    }
    free(*self_p);
    *self_p = NULL;
}

const char *agent_platform_name(const agent_platform_t *self)
{
    (void) self;
    return "host";
}

jf_board_type_t agent_platform_board_type(const agent_platform_t *self)
{
    (void) self;
    return JF_BOARD_HOST;
}

const jf_power_mode_t *agent_platform_modes(const agent_platform_t *self, size_t *ret_count)
{
    (void) self;
    *ret_count = 1;
    return &s_host_mode;
}

int agent_platform_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err)
{
    (void) self;
    if (mode_id != s_host_mode.id) {
        return jf_err_set(err, -EINVAL, "host platform has only power mode %d (%s)",
                          s_host_mode.id, s_host_mode.name);
    }
    return 0; // the host stays as it is configured; nothing to change
}

static int s_read(agent_platform_t *self, int fd, jf_err_t *err)
{
    ssize_t n = pread(fd, self->buf, sizeof self->buf - 1, 0);
    if (n < 0) {
        return jf_err_set(err, -errno, "platform: reading /proc: %s", strerror(errno));
    }
    self->buf[n] = '\0';
    return 0;
}

static void s_add_load(agent_platform_t *self, const agent_proc_stat_t *now, json_t *sample)
{
    double pct = 0;
    if (self->have_prev && agent_procfs_load_pct(&self->prev.total, &now->total, &pct)) {
        (void) json_object_set_new(sample, "cpu_load_pct", json_real(pct));
        json_t *cores = json_array();
        for (size_t i = 0; cores && i < now->n_cpus && i < self->prev.n_cpus; i++) {
            double c = 0;
            (void) json_array_append_new(cores,
                                         agent_procfs_load_pct(&self->prev.cpus[i], &now->cpus[i], &c)
                                             ? json_real(c)
                                             : json_null());
        }
        (void) json_object_set_new(sample, "cpu_core_load_pct", cores);
    }
    self->prev = *now;
    self->have_prev = true;
}

int agent_platform_sample(agent_platform_t *self, json_t *sample, jf_err_t *err)
{
    agent_proc_stat_t st;
    agent_meminfo_t mi;
    int rc = s_read(self, self->stat_fd, err);
    rc = rc ? rc : agent_procfs_parse_stat(self->buf, &st, err);
    if (rc == 0) {
        s_add_load(self, &st, sample); // the first sample has no load: it needs two readings
    }
    int mrc = s_read(self, self->meminfo_fd, err);
    mrc = mrc ? mrc : agent_procfs_parse_meminfo(self->buf, &mi, err);
    if (mrc == 0) {
        (void) json_object_update_new(
            sample, json_pack("{s:I, s:I, s:I, s:I, s:I}", "ram_total_bytes",
                              (json_int_t) mi.total_bytes, "ram_used_bytes",
                              (json_int_t) (mi.total_bytes - mi.available_bytes),
                              "ram_available_bytes", (json_int_t) mi.available_bytes,
                              "page_cache_bytes", (json_int_t) mi.cached_bytes, "swap_used_bytes",
                              (json_int_t) (mi.swap_total_bytes - mi.swap_free_bytes)));
    }
    return rc != 0 && mrc != 0 ? rc : 0;
}

json_t *agent_platform_software(const agent_platform_t *self)
{
    (void) self;
    struct utsname u;
    int maj = 0, min = 0, pat = 0;
    zmq_version(&maj, &min, &pat);
    char zmq[32] = {0};
    (void) snprintf(zmq, sizeof zmq, "%d.%d.%d", maj, min, pat);
    return json_pack("{s:s, s:s, s:s, s:s}", "agent", "0.1.0", "libzmq", zmq, "jansson",
                     JANSSON_VERSION, "kernel", uname(&u) == 0 ? u.release : "unknown");
}
