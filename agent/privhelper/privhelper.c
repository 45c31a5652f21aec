/* The helper's life cycle, the probe of the root, and the execution of a plan. */
#include "privhelper_internal.h"

#include "privhelper_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SYS                          PRIVHELPER_SYSFS_PREFIX
#define S_COMPATIBLE_MAX             512  // bytes of /proc/device-tree/compatible read
#define PRIVHELPER_INHERITED_FDS_MAX 1024 // descriptors made close-on-exec at start

// The SoC is the last NUL-separated entry of the device-tree compatible list (§1.1).
static const privhelper_soc_t *s_probe_soc(const privhelper_root_t *root)
{
    char buf[S_COMPATIBLE_MAX];
    size_t len = 0;
    if (privhelper_root_read(root, PRIVHELPER_COMPATIBLE_PATH, buf, sizeof buf, &len, NULL) != 0) {
        return NULL;
    }
    const char *last = NULL;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1) {
        if (buf[i] != '\0') {
            last = buf + i;
        }
    }
    return privhelper_paths_soc(last);
}

privhelper_t *privhelper_new(const privhelper_config_t *config, jf_err_t *err)
{
    privhelper_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    int n = snprintf(self->nvpmodel, sizeof self->nvpmodel, "%s",
                     config->nvpmodel ? config->nvpmodel : "");
    if (n <= 0 || (size_t) n >= sizeof self->nvpmodel || self->nvpmodel[0] != '/') {
        jf_err_set(err, -EINVAL, "the nvpmodel path must be absolute");
        goto fail_destroy;
    }
    self->nvpmodel_timeout_us = config->nvpmodel_timeout_us;
    self->root = privhelper_root_open(config->root, err);
    if (!self->root) {
        goto fail_destroy;
    }
    // nvpmodel runs in the root: "/" on a board, the tree a test's fake nvpmodel works on.
    if (fchdir(privhelper_root_fd(self->root)) != 0) {
        jf_err_set(err, -errno, "cannot enter '%.200s': %s", config->root, strerror(errno));
        goto fail_destroy;
    }
    // nvpmodel must inherit nothing the caller passed beyond stdin, stdout and stderr.
    for (int fd = STDERR_FILENO + 1; fd < PRIVHELPER_INHERITED_FDS_MAX; fd++) {
        (void) fcntl(fd, F_SETFD, FD_CLOEXEC); // EBADF for the many that are not open
    }
    self->soc = s_probe_soc(self->root);
    // None found leaves them empty: the verbs that need them say so.
    (void) privhelper_paths_find_gpu_dir(self->root, SYS, self->gpu_dir);
    (void) privhelper_paths_find_emc_cap(self->root, SYS, self->emc_cap);
    // Missing until a verb that needs saved states asks for it; the reason is kept for then.
    self->store = privhelper_store_open(self->root, &self->store_err);
    return self;

fail_destroy:
    privhelper_destroy(&self);
    return NULL;
}

void privhelper_destroy(privhelper_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    privhelper_store_destroy(&(*self_p)->store);
    privhelper_root_destroy(&(*self_p)->root);
    free(*self_p);
    *self_p = NULL;
}

// Every file the plan writes must resolve beneath the root with no symlink on the way. Checked
// before the first write, so that such a request is refused with nothing written; the writes
// resolve the same way again, so a swap in between fails instead of escaping.
static int s_check_targets(const privhelper_t *self, const privhelper_plan_t *plan, jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < plan->n_steps; i++) {
        const privhelper_step_t *s = &plan->steps[i];
        bool write = s->kind == PRIVHELPER_STEP_WRITE || s->kind == PRIVHELPER_STEP_RANGE;
        rc = write ? privhelper_root_check_write(self->root, s->path, err) : 0;
        if (rc == 0 && s->kind == PRIVHELPER_STEP_RANGE) {
            rc = privhelper_root_check_write(self->root, s->path2, err);
        }
    }
    return rc;
}

int privhelper_plan(privhelper_t *self, const privhelper_request_t *req,
                    privhelper_plan_t *ret_plan, jf_err_t *err)
{
    int rc = privhelper_verbs_plan(self, req, ret_plan, err);
    return rc != 0 ? rc : s_check_targets(self, ret_plan, err);
}

// Sets a min/max pair so that min <= max holds after each write: 4.9 kernels refuse a min above
// the max in force (jetson-platforms.md §8 #22). The max goes first unless it goes below the
// min in force now.
static int s_exec_range(const privhelper_t *self, const privhelper_step_t *s, jf_err_t *err)
{
    int64_t min_now = 0;
    int rc = privhelper_root_read_i64(self->root, s->path, &min_now, err);
    if (rc != 0) {
        return rc;
    }
    bool max_first = min_now <= s->value2;
    rc = privhelper_root_write_i64(self->root, max_first ? s->path2 : s->path,
                                   max_first ? s->value2 : s->value, err);
    return rc != 0 ? rc
                   : privhelper_root_write_i64(self->root, max_first ? s->path : s->path2,
                                               max_first ? s->value : s->value2, err);
}

// The first line of what nvpmodel printed, for a one-line message.
static const char *s_first_line(char *text)
{
    text[strcspn(text, "\r\n")] = '\0';
    return text;
}

// `nvpmodel -m <id>`: a fixed absolute path, an explicit argv and environment, stdin from
// /dev/null so that a reboot prompt (§4.3) reads end of file instead of waiting.
static int s_exec_nvpmodel(const privhelper_t *self, int64_t id, jf_err_t *err)
{
    char id_text[16];
    (void) snprintf(id_text, sizeof id_text, "%lld", (long long) id);
    const char *const argv[] = {self->nvpmodel, "-m", id_text, NULL};
    static const char *const envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", NULL};
    privhelper_spawn_opts_t o = {
        .argv = argv, .envp = envp, .timeout_us = self->nvpmodel_timeout_us};
    privhelper_spawn_result_t *r = malloc(sizeof *r);
    int rc = r ? privhelper_spawn_run(&o, r, err) : jf_err_set(err, -ENOMEM, "out of memory");
    if (rc == 0 && r->timed_out) {
        rc = jf_err_set(err, -ETIMEDOUT, "nvpmodel -m %lld did not finish in %lld s; killed",
                        (long long) id, (long long) (self->nvpmodel_timeout_us / 1000000));
    } else if (rc == 0 && r->exit_code != 0) {
        const char *said = s_first_line(r->err[0] ? r->err : r->out);
        rc = jf_err_set(err, -EIO, "nvpmodel -m %lld exited with status %d (signal %d): '%.120s'",
                        (long long) id, r->exit_code, r->signal, said);
    }
    free(r);
    return rc;
}

static int s_exec(privhelper_t *self, const privhelper_plan_t *plan, const privhelper_step_t *s,
                  jf_err_t *err)
{
    switch (s->kind) {
    case PRIVHELPER_STEP_WRITE:
        return privhelper_root_write_i64(self->root, s->path, s->value, err);
    case PRIVHELPER_STEP_RANGE:
        return s_exec_range(self, s, err);
    case PRIVHELPER_STEP_NVPMODEL:
        return s_exec_nvpmodel(self, s->value, err);
    case PRIVHELPER_STEP_SYNC:
        sync();
        return 0;
    case PRIVHELPER_STEP_STORE:
        return privhelper_store_write(self->store, (int) s->value, plan->state, plan->state_len,
                                      err);
    case PRIVHELPER_STEP_FORGET:
        return privhelper_store_remove(self->store, (int) s->value, err);
    }
    return jf_err_set(err, -EINVAL, "unknown step");
}

int privhelper_execute(privhelper_t *self, const privhelper_plan_t *plan, jf_err_t *err)
{
    for (size_t i = 0; i < plan->n_steps; i++) {
        int rc = s_exec(self, plan, &plan->steps[i], err);
        if (rc != 0) {
            (void) jf_err_prefix(err, "step %zu of %zu", i + 1, plan->n_steps);
            return rc;
        }
    }
    return 0;
}

privhelper_outcome_t privhelper_handle(privhelper_t *self, const char *buf, size_t len, char *reply,
                                       size_t size, jf_err_t *err)
{
    privhelper_request_t req = {0};
    privhelper_plan_t *plan = malloc(sizeof *plan);
    if (!plan) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return PRIVHELPER_FAILED;
    }
    privhelper_outcome_t out = PRIVHELPER_REJECTED;
    if (privhelper_request_parse(buf, len, &req, err) == 0 &&
        privhelper_plan(self, &req, plan, err) == 0) {
        out = privhelper_execute(self, plan, err) == 0 ? PRIVHELPER_APPLIED : PRIVHELPER_FAILED;
    }
    if (out == PRIVHELPER_APPLIED) {
        char slot[24] = "";
        if (plan->reply_slot > 0) {
            (void) snprintf(slot, sizeof slot, " state=%d", plan->reply_slot);
        }
        (void) snprintf(reply, size, "ok%s%s%s", slot, plan->note[0] ? " " : "", plan->note);
    }
    free(plan);
    return out;
}
