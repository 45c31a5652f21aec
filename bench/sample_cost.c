/* Benchmark: the CPU cost of one telemetry sample (agent_platform_sample, JSON included) on a
 * fixture tree or on this machine, in microseconds of thread CPU time per sample, and the share
 * of it that is the kernel generating /proc/stat. Built only with -DJF_BUILD_BENCH=ON.
 *   jf-bench-sample-cost [--platform P] [--sysfs-root D] [--proc-root D] [--etc-root D]
 *                        [--samples N] */
#include "agent_platform.h"
#include "agent_procfs.h"
#include "jf_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_SAMPLES_DEFAULT 10000
#define S_SAMPLES_MAX     10000000
#define S_STAT_MAX        (64 * 1024)

typedef struct s_opts {
    agent_platform_opts_t platform;
    int64_t samples;
} s_opts_t;

static int64_t s_now_ns(clockid_t clock)
{
    struct timespec ts = {0};
    (void) clock_gettime(clock, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int s_parse(int argc, char **argv, s_opts_t *o, jf_err_t *err)
{
    static const struct option opts[] = {
        {"platform", required_argument, NULL, 'P'},   {"sysfs-root", required_argument, NULL, 'S'},
        {"proc-root", required_argument, NULL, 'p'},  {"etc-root", required_argument, NULL, 'E'},
        {"samples", required_argument, NULL, 'n'},    {NULL, 0, NULL, 0}};
    *o = (s_opts_t){.platform = {.sysfs_root = AGENT_PLATFORM_SYSFS_ROOT,
                                 .proc_root = AGENT_PLATFORM_PROC_ROOT,
                                 .etc_root = AGENT_PLATFORM_ETC_ROOT},
                    .samples = S_SAMPLES_DEFAULT};
    int rc = 0;
    for (int c; rc == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case 'P':
            rc = agent_platform_kind_parse(optarg, &o->platform.kind, &o->platform.sim_type, err);
            break;
        case 'S': o->platform.sysfs_root = optarg; break;
        case 'p': o->platform.proc_root = optarg; break;
        case 'E': o->platform.etc_root = optarg; break;
        case 'n': rc = jf_parse_i64(optarg, 1, S_SAMPLES_MAX, &o->samples, err); break;
        default: rc = jf_err_set(err, -EINVAL, "unknown option"); break;
        }
    }
    return rc;
}

// Thread CPU µs per sample over n samples (each into a fresh JSON object, freed).
static int s_measure(agent_platform_t *p, int64_t n, double *ret_cpu_us, double *ret_wall_us,
                     jf_err_t *err)
{
    int64_t cpu0 = s_now_ns(CLOCK_THREAD_CPUTIME_ID), wall0 = s_now_ns(CLOCK_MONOTONIC);
    for (int64_t i = 0; i < n; i++) {
        json_t *sample = json_object();
        int rc = sample ? agent_platform_sample(p, sample, err) : -ENOMEM;
        json_decref(sample);
        if (rc != 0) {
            return rc;
        }
    }
    *ret_cpu_us = (double) (s_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1000.0 / (double) n;
    *ret_wall_us = (double) (s_now_ns(CLOCK_MONOTONIC) - wall0) / 1000.0 / (double) n;
    return 0;
}

// The same for pread + parse of <proc>/stat alone: the floor no reader can go below.
static double s_proc_stat_us(const char *proc_root, int64_t n)
{
    char path[4096];
    (void) snprintf(path, sizeof path, "%s/stat", proc_root);
    char *buf = malloc(S_STAT_MAX);
    agent_proc_stat_t *st = malloc(sizeof *st);
    int fd = buf && st ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    double us = -1;
    if (fd >= 0) {
        int64_t cpu0 = s_now_ns(CLOCK_THREAD_CPUTIME_ID);
        for (int64_t i = 0; i < n; i++) {
            ssize_t len = pread(fd, buf, S_STAT_MAX - 1, 0);
            buf[len > 0 ? len : 0] = '\0';
            (void) agent_procfs_parse_stat(buf, st, NULL); // only the cost is of interest
        }
        us = (double) (s_now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / 1000.0 / (double) n;
        (void) close(fd); // read-only
    }
    free(buf);
    free(st);
    return us;
}

int main(int argc, char **argv)
{
    s_opts_t o;
    jf_err_t err = {0};
    if (s_parse(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "sample_cost: %s\n", err.msg);
        return 2;
    }
    agent_platform_t *p = agent_platform_new(&o.platform, &err);
    double cpu_us = 0, wall_us = 0;
    int rc = p ? s_measure(p, 1, &cpu_us, &wall_us, &err) : -1; // warm-up: caches, first load
    rc = rc ? rc : s_measure(p, o.samples, &cpu_us, &wall_us, &err);
    if (rc == 0) {
        printf("%s: %lld samples: %.2f us CPU per sample (%.2f us wall); /proc/stat pread+parse "
               "alone: %.2f us\n",
               agent_platform_describe(p), (long long) o.samples, cpu_us, wall_us,
               s_proc_stat_us(o.platform.proc_root, o.samples));
    } else {
        fprintf(stderr, "sample_cost: %s\n", err.msg);
    }
    agent_platform_destroy(&p);
    return rc == 0 ? 0 : 1;
}
