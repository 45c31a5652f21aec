/* Benchmark helper: the agent's telemetry work alone, as a separate process, so that a training
 * run can be timed with it running beside (bench/telemetry-overhead.sh) and without it. It runs
 * the agent's own sampler actor (agent_sampler.h: its thread, CLOCK_MONOTONIC deadlines, the
 * platform's reader, /proc/diskstats for a device) at --rate Hz, and its main thread does what
 * the agent's event loop does with each sample: receives it from the actor's pipe and encodes it
 * as compact JSON for the telemetry stream. It does not send it over the network (the agent's
 * ZeroMQ send of ~1 kB per sample is not included). At SIGTERM or SIGINT, or after --seconds, it
 * stops the sampler and prints one JSON line: samples, late, missed, the achieved rate and the
 * CPU time of the whole process (all threads) as a share of one core. --rate 0 starts the same
 * process, platform and sampler actor but never starts sampling: the "telemetry off" baseline
 * of an agent that is there but does not sample.
 * Built only with -DJF_BUILD_BENCH=ON.
 *   jf-bench-telemetry-load [--platform P] [--sysfs-root D] [--proc-root D] [--etc-root D]
 *                           [--rate HZ|0] [--device DISK] [--seconds S] */
#include "agent_platform.h"
#include "agent_sampler.h"
#include "jf_parse.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <czmq.h>
#include <zmq.h>

#define S_RATE_DEFAULT    10
#define S_SECONDS_MAX     (7 * 24 * 3600)
#define S_POLL_MS         100
#define S_STOP_WAIT_NS    (INT64_C(5) * 1000000000)

typedef struct s_opts {
    agent_platform_opts_t platform;
    int64_t rate_hz;
    int64_t seconds; // 0: until a signal
    const char *device;
} s_opts_t;

static volatile sig_atomic_t s_stop_requested;

static void s_on_signal(int sig)
{
    (void) sig;
    s_stop_requested = 1;
}

static int64_t s_now_ns(clockid_t clock)
{
    struct timespec ts = {0};
    (void) clock_gettime(clock, &ts);
    return (int64_t) ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int s_parse(int argc, char **argv, s_opts_t *o, jf_err_t *err)
{
    static const struct option opts[] = {
        {"platform", required_argument, NULL, 'P'},  {"sysfs-root", required_argument, NULL, 'S'},
        {"proc-root", required_argument, NULL, 'p'}, {"etc-root", required_argument, NULL, 'E'},
        {"rate", required_argument, NULL, 'r'},      {"device", required_argument, NULL, 'd'},
        {"seconds", required_argument, NULL, 's'},   {NULL, 0, NULL, 0}};
    *o = (s_opts_t){.platform = {.sysfs_root = AGENT_PLATFORM_SYSFS_ROOT,
                                 .proc_root = AGENT_PLATFORM_PROC_ROOT,
                                 .etc_root = AGENT_PLATFORM_ETC_ROOT},
                    .rate_hz = S_RATE_DEFAULT,
                    .device = ""};
    int rc = 0;
    for (int c; rc == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case 'P':
            rc = agent_platform_kind_parse(optarg, &o->platform.kind, &o->platform.sim_type, err);
            break;
        case 'S': o->platform.sysfs_root = optarg; break;
        case 'p': o->platform.proc_root = optarg; break;
        case 'E': o->platform.etc_root = optarg; break;
        case 'r': rc = jf_parse_i64(optarg, 0, AGENT_SAMPLER_RATE_MAX_HZ, &o->rate_hz, err); break;
        case 'd': o->device = optarg; break;
        case 's': rc = jf_parse_i64(optarg, 1, S_SECONDS_MAX, &o->seconds, err); break;
        default: rc = jf_err_set(err, -EINVAL, "unknown option"); break;
        }
    }
    if (rc == 0 && o->platform.kind == AGENT_PLATFORM_SIM) {
        rc = jf_err_set(err, -EINVAL, "--platform sim is not measured here: its rails are "
                                      "written by the simulated trainer, use a fixture tree");
    }
    if (rc == 0 && optind < argc) {
        rc = jf_err_set(err, -EINVAL, "unexpected argument '%s'", argv[optind]);
    }
    return rc;
}

// One event from the actor: a sample is encoded as the stream would and dropped. Returns 1 when
// it was the STOPPED answer (its counts in *ret_stats), 0 otherwise, -1 when nothing waits.
static int s_drain_one(agent_sampler_t *sampler, agent_sampler_stats_t *ret_stats,
                       int64_t *encoded_bytes)
{
    agent_sampler_event_t ev;
    int rc = agent_sampler_recv(sampler, &ev);
    if (rc == -EAGAIN) {
        return -1;
    }
    if (rc != 0) {
        return 0;
    }
    if (ev.kind == AGENT_SAMPLER_SAMPLE) {
        char *text = json_dumps(ev.sample, JSON_COMPACT);
        *encoded_bytes += text ? (int64_t) strlen(text) : 0;
        free(text);
        json_decref(ev.sample);
    } else if (ev.kind == AGENT_SAMPLER_WARNING) {
        fprintf(stderr, "telemetry_load: sampler: %s\n", ev.text);
    } else {
        *ret_stats = ev.stats;
        return 1;
    }
    return 0;
}

// Polls the actor's pipe until *stop says so (or the deadline), then stops it and waits for
// STOPPED. Returns 0, or -ETIMEDOUT when the actor never answered.
static int s_run(agent_sampler_t *sampler, int64_t deadline_ns, agent_sampler_stats_t *ret_stats,
                 int64_t *encoded_bytes)
{
    zmq_pollitem_t item = {.socket = agent_sampler_handle(sampler), .events = ZMQ_POLLIN};
    bool stopping = false;
    int64_t stop_by = 0;
    for (;;) {
        int64_t now = s_now_ns(CLOCK_MONOTONIC);
        if (!stopping && (s_stop_requested || (deadline_ns > 0 && now >= deadline_ns))) {
            stopping = agent_sampler_stop(sampler) == 0;
            stop_by = now + S_STOP_WAIT_NS;
            if (!stopping) {
                return -EIO;
            }
        }
        if (stopping && now > stop_by) {
            return -ETIMEDOUT;
        }
        (void) zmq_poll(&item, 1, S_POLL_MS);
        for (int rc; (rc = s_drain_one(sampler, ret_stats, encoded_bytes)) >= 0;) {
            if (rc == 1 && stopping) {
                return 0;
            }
        }
    }
}

// --rate 0: waits for the signal (or the deadline) with the sampler idle.
static void s_idle(int64_t deadline_ns)
{
    while (!s_stop_requested && (deadline_ns == 0 || s_now_ns(CLOCK_MONOTONIC) < deadline_ns)) {
        (void) zmq_poll(NULL, 0, S_POLL_MS);
    }
}

static double s_cpu_s(void)
{
    struct rusage ru = {0};
    (void) getrusage(RUSAGE_SELF, &ru);
    return (double) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

int main(int argc, char **argv)
{
    s_opts_t o;
    jf_err_t err = {0};
    if (s_parse(argc, argv, &o, &err) != 0) {
        fprintf(stderr, "telemetry_load: %s\n", err.msg);
        return 2;
    }
    zsys_handler_set(NULL); // czmq must not take SIGTERM over: it only sets a flag here
    struct sigaction sa = {.sa_handler = s_on_signal};
    (void) sigemptyset(&sa.sa_mask);
    (void) sigaction(SIGTERM, &sa, NULL);
    (void) sigaction(SIGINT, &sa, NULL);

    agent_platform_t *p = agent_platform_new(&o.platform, &err);
    agent_sysfs_t *reader = p ? agent_platform_take_reader(p) : NULL;
    agent_sampler_opts_t so = {.reader_p = &reader, .proc_root = o.platform.proc_root};
    agent_sampler_t *sampler = reader ? agent_sampler_new(&so, &err) : NULL;
    double cpu0 = s_cpu_s();
    int64_t wall0 = s_now_ns(CLOCK_MONOTONIC), encoded = 0;
    agent_sampler_stats_t stats = {0};
    int rc = !sampler ? -1 : o.rate_hz > 0 ? agent_sampler_start(sampler, (int) o.rate_hz, o.device)
                                           : 0;
    int64_t deadline = o.seconds > 0 ? wall0 + o.seconds * 1000000000 : 0;
    if (rc == 0 && o.rate_hz > 0) {
        rc = s_run(sampler, deadline, &stats, &encoded);
    } else if (rc == 0) {
        s_idle(deadline); // the same process and threads, the sampler never started
    }
    double wall_s = (double) (s_now_ns(CLOCK_MONOTONIC) - wall0) / 1e9;
    double cpu_s = s_cpu_s() - cpu0;
    if (rc == 0) {
        printf("{\"platform\": \"%s\", \"rate_hz\": %lld, \"samples\": %lld, \"late\": %lld, "
               "\"missed\": %lld, \"achieved_rate_hz\": %.3f, \"wall_s\": %.3f, \"cpu_s\": %.4f, "
               "\"cpu_pct_of_core\": %.4f, \"cpu_us_per_sample\": %.1f, "
               "\"json_bytes_per_sample\": %.0f}\n",
               agent_platform_name(p), (long long) o.rate_hz, (long long) stats.samples,
               (long long) stats.late, (long long) stats.missed, stats.achieved_rate_hz, wall_s,
               cpu_s, wall_s > 0 ? 100.0 * cpu_s / wall_s : 0.0,
               stats.samples > 0 ? 1e6 * cpu_s / (double) stats.samples : 0.0,
               stats.samples > 0 ? (double) encoded / (double) stats.samples : 0.0);
    } else {
        fprintf(stderr, "telemetry_load: %s\n",
                err.msg[0] ? err.msg : "the sampler did not answer its stop");
    }
    agent_sampler_destroy(&sampler);
    agent_sysfs_destroy(&reader);
    agent_platform_destroy(&p);
    return rc == 0 ? 0 : 1;
}
