/* The platform interface's shared part: --platform parsing, choosing an implementation, and the
 * operations every implementation does the same way (sampling through agent_sysfs, the hello's
 * software facts, --sample-once). */
#include "agent_platform_internal.h"
#include "agent_tegrastats_child.h"
#include "jf_units.h"

#include <assert.h>
#include <czmq.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#define S_SIM_PREFIX  "sim:"
#define S_AGENT_VERSION "0.1.0"

static const struct {
    const char *name;
    agent_platform_kind_t kind;
} s_kinds[] = {
    {"auto", AGENT_PLATFORM_AUTO},
    {"jetson", AGENT_PLATFORM_JETSON},
    {"host", AGENT_PLATFORM_HOST},
};

int agent_platform_kind_parse(const char *text, agent_platform_kind_t *ret_kind,
                              jf_board_type_t *ret_sim_type, jf_err_t *err)
{
    for (size_t i = 0; i < sizeof s_kinds / sizeof s_kinds[0]; i++) {
        if (strcmp(text, s_kinds[i].name) == 0) {
            *ret_kind = s_kinds[i].kind;
            return 0;
        }
    }
    jf_board_type_t type = JF_BOARD_HOST;
    bool sim = strncmp(text, S_SIM_PREFIX, strlen(S_SIM_PREFIX)) == 0 &&
               jf_board_type_parse(text + strlen(S_SIM_PREFIX), &type);
    // A sim stands in for a Jetson family; "sim:host" or "sim:sim" simulate nothing.
    if (!sim || type == JF_BOARD_HOST || type == JF_BOARD_SIM) {
        return jf_err_set(err, -EINVAL,
                          "--platform '%.64s': expected auto, jetson, host or sim:<type> with "
                          "type one of agx-xavier, xavier-nx, nano, orin-agx, orin-nano",
                          text);
    }
    *ret_kind = AGENT_PLATFORM_SIM;
    *ret_sim_type = type;
    return 0;
}

agent_platform_t *agent_platform_new(const agent_platform_opts_t *opts, jf_err_t *err)
{
    agent_detect_t d = {0};
    switch (opts->kind) {
    case AGENT_PLATFORM_JETSON: return agent_platform_jetson_new(opts, err);
    case AGENT_PLATFORM_HOST: return agent_platform_host_new(opts, err);
    case AGENT_PLATFORM_SIM: return agent_platform_sim_new(opts, err);
    case AGENT_PLATFORM_AUTO:
    default:
        // A Jetson without a board type is an error, not a silent fallback to host.
        if (agent_detect_board(opts->proc_root, opts->etc_root, &d, err) != 0) {
            return NULL;
        }
        return d.is_tegra ? agent_platform_jetson_new(opts, err)
                          : agent_platform_host_new(opts, err);
    }
}

agent_platform_t *agent_platform_alloc(const agent_platform_ops_t *ops, jf_board_type_t type,
                                       jf_err_t *err)
{
    agent_platform_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "platform: out of memory");
        return NULL;
    }
    self->ops = ops;
    self->board_type = type;
    return self;
}

void agent_platform_describe_missing(agent_platform_t *self)
{
    const char *missing = agent_sysfs_missing(self->sysfs);
    size_t len = strlen(self->describe);
    if (*missing && len < sizeof self->describe) {
        (void) snprintf(self->describe + len, sizeof self->describe - len,
                        "; not readable, left out of samples: %s", missing);
    }
}

void agent_platform_destroy(agent_platform_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_sysfs_destroy(&(*self_p)->sysfs);
    agent_sim_tree_destroy(&(*self_p)->sim_tree); // after the reader: it closed its files
    sim_model_destroy(&(*self_p)->sim_model);
    free(*self_p);
    *self_p = NULL;
}

const char *agent_platform_name(const agent_platform_t *self)
{
    return self->ops->name;
}

jf_board_type_t agent_platform_board_type(const agent_platform_t *self)
{
    return self->board_type;
}

const jf_power_mode_t *agent_platform_modes(const agent_platform_t *self, size_t *ret_count)
{
    *ret_count = self->n_modes;
    return self->modes;
}

int agent_platform_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err)
{
    for (size_t i = 0; i < self->n_modes; i++) {
        if (self->modes[i].id == mode_id) {
            return self->ops->set_mode(self, mode_id, err);
        }
    }
    return jf_err_set(err, -EINVAL, "%s platform: %s has no power mode %d", self->ops->name,
                      jf_board_type_name(self->board_type), mode_id);
}

int agent_platform_set_point(agent_platform_t *self, int mode_id, const jf_run_custom_t *custom,
                             bool dvfs_off, jf_err_t *err)
{
    if (!self->ops->set_point) {
        return jf_err_set(err, -ENOTSUP,
                          "%s platform: custom power modes and DVFS off are not available "
                          "(they need a Jetson's clocks, or a sim board)",
                          self->ops->name);
    }
    for (size_t i = 0; i < self->n_modes; i++) {
        if (self->modes[i].id == mode_id) {
            return self->ops->set_point(self, mode_id, custom, dvfs_off, err);
        }
    }
    return jf_err_set(err, -EINVAL, "%s platform: %s has no power mode %d", self->ops->name,
                      jf_board_type_name(self->board_type), mode_id);
}

int agent_platform_sample(agent_platform_t *self, json_t *sample, jf_err_t *err)
{
    assert(self && sample);
    if (!self->sysfs) {
        return jf_err_set(err, -ENODEV, "platform: the telemetry reader was handed over");
    }
    return agent_sysfs_sample(self->sysfs, sample, err);
}

agent_sysfs_t *agent_platform_take_reader(agent_platform_t *self)
{
    agent_sysfs_t *reader = self->sysfs;
    self->sysfs = NULL;
    return reader;
}

const char *agent_platform_tegrastats(const agent_platform_t *self)
{
    return self->tegrastats[0] ? self->tegrastats : NULL;
}

const char *agent_platform_input_rail(const agent_platform_t *self)
{
    return self->input_rail;
}

int agent_platform_power_new(const agent_platform_t *self, const char *const *helper_argv,
                             agent_power_t **ret_power, jf_err_t *err)
{
    *ret_power = NULL;
    return self->ops->power_new ? self->ops->power_new(self, helper_argv, ret_power, err) : 0;
}

// Waits until the monotonic clock passes deadline (a one-shot command, not the daemon loop).
static void s_wait_until(const struct timespec *deadline)
{
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, deadline, NULL) == EINTR) {
    }
}

static int s_print(const json_t *sample, FILE *out, jf_err_t *err)
{
    if (json_dumpf(sample, out, JSON_COMPACT | JSON_REAL_PRECISION(10)) != 0 ||
        fputc('\n', out) == EOF || fflush(out) != 0) {
        return jf_err_set(err, -EIO, "platform: writing the sample failed");
    }
    return 0;
}

// The tegrastats fallback for one sample: one line at an interval of gap_us (within its range),
// waited for at most two intervals plus a second for its start. A failure leaves sample as it
// is and says why in err, without failing the sample.
static void s_fill_once(const agent_platform_t *self, int64_t gap_us, json_t *sample,
                        jf_err_t *err)
{
    int64_t ms = gap_us / JF_US_PER_MS;
    ms = ms < AGENT_TEGRASTATS_INTERVAL_MIN_MS ? AGENT_TEGRASTATS_INTERVAL_MIN_MS : ms;
    ms = ms > AGENT_TEGRASTATS_INTERVAL_MAX_MS ? AGENT_TEGRASTATS_INTERVAL_MAX_MS : ms;
    agent_tegrastats_child_opts_t o = {.path = self->tegrastats, .interval_ms = (int) ms};
    agent_tegrastats_child_t *ts = agent_tegrastats_child_new(&o, err);
    int64_t wait_us = 2 * ms * JF_US_PER_MS + JF_US_PER_S;
    if (ts && agent_tegrastats_child_wait_line(ts, wait_us, err) == 0 &&
        agent_tegrastats_child_fill(ts, sample, jf_clock_mono_us(), wait_us) != 0) {
        jf_err_set(err, -ENOMEM, "platform: out of memory");
    }
    agent_tegrastats_child_destroy(&ts);
}

int agent_platform_sample_once(agent_platform_t *self, int64_t gap_us, FILE *out, jf_err_t *err)
{
    json_t *first = json_object();
    json_t *sample = json_pack("{s:s}", "board_type", jf_board_type_name(self->board_type));
    struct timespec deadline = {0};
    (void) clock_gettime(CLOCK_MONOTONIC, &deadline);
    int rc = first && sample ? agent_platform_sample(self, first, err)
                             : jf_err_set(err, -ENOMEM, "platform: out of memory");
    int64_t ns = (int64_t) deadline.tv_nsec + gap_us * 1000;
    deadline.tv_sec += (time_t) (ns / 1000000000);
    deadline.tv_nsec = (long) (ns % 1000000000);
    if (rc == 0) {
        s_wait_until(&deadline);
        rc = agent_platform_sample(self, sample, err);
    }
    if (rc == 0 && self->tegrastats[0]) {
        s_fill_once(self, gap_us, sample, err);
    }
    rc = rc ? rc : s_print(sample, out, err);
    json_decref(first);
    json_decref(sample);
    return rc;
}

json_t *agent_platform_software(const agent_platform_t *self)
{
    struct utsname u;
    int maj = 0, min = 0, pat = 0;
    zmq_version(&maj, &min, &pat);
    char zmq[32] = {0};
    (void) snprintf(zmq, sizeof zmq, "%d.%d.%d", maj, min, pat);
    json_t *sw = json_pack("{s:s, s:s, s:s, s:s}", "agent", S_AGENT_VERSION, "libzmq", zmq,
                           "jansson", JANSSON_VERSION, "kernel",
                           uname(&u) == 0 ? u.release : "unknown");
    if (sw && self->ops->add_software) {
        self->ops->add_software(self, sw);
    }
    return sw;
}

const char *agent_platform_describe(const agent_platform_t *self)
{
    return self->describe;
}
