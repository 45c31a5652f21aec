/* jetfleet-agent: argv -> platform + session, one sample, or a tegrastats log -> samples. */
#include "agent_import.h"
#include "agent_options.h"
#include "agent_platform.h"
#include "agent_session.h"
#include "jf_curve.h"
#include "jf_log.h"
#include "jf_version.h"

#include <czmq.h>
#include <signal.h>
#include <stdio.h>

static volatile sig_atomic_t s_stop = 0;

static void s_on_signal(int sig)
{
    (void) sig;
    s_stop = 1;
}

// --parse-tegrastats: 0 when every line parsed, 1 when one did not or the file is unreadable.
static int s_parse_tegrastats(const char *path)
{
    agent_import_opts_t io = {.path = path, .out = stdout, .diag = stderr};
    agent_import_result_t res = {0};
    jf_err_t err = {0};
    if (agent_import_tegrastats(&io, &res, &err) != 0) {
        fprintf(stderr, "jetfleet-agent: %s\n", err.msg);
        return 1;
    }
    return res.n_failed > 0 ? 1 : 0;
}

// The daemon: 0 on a clean stop.
static int s_daemon(const agent_options_t *o, agent_platform_t *platform, jf_err_t *err)
{
    zsys_handler_set(NULL); // our own handlers: SIGINT/SIGTERM only set a flag
    struct sigaction sa = {.sa_handler = s_on_signal};
    (void) sigaction(SIGINT, &sa, NULL);
    (void) sigaction(SIGTERM, &sa, NULL);
    agent_session_opts_t so = {.name = o->name, .endpoint = o->endpoint,
                               .train_bin = o->train_bin, .n_storage = o->n_storage,
                               .storage = o->storage, .storage_mount = o->storage_mount,
                               .helper_command = o->privhelper, .proc_root = o->proc_root,
                               .sysfs_root = o->sysfs_root, .platform = platform,
                               .spool = {.state_dir = o->spool_in_memory ? NULL : o->state_dir,
                                         .max_bytes = o->spool_max_bytes,
                                         .forget_on_send = o->spool_forget_on_send},
                               .key_path = o->key, .coordinator_key_path = o->coordinator_key,
                               .container_command = o->container,
                               .insecure_loopback = o->insecure_loopback};
    agent_session_t *session = agent_session_new(&so, err);
    int rc = session ? agent_session_run(session, &s_stop, err) : -1;
    agent_session_destroy(&session);
    return rc;
}

int main(int argc, char **argv)
{
    agent_options_t opts;
    jf_err_t err = {0};
    if (agent_options_parse(argc, argv, &opts, &err) != 0) {
        fprintf(stderr, "jetfleet-agent: %s\n%s", err.msg, agent_options_usage());
        return 2;
    }
    if (opts.help || opts.version) {
        fputs(opts.help ? agent_options_usage() : "jetfleet-agent " JF_VERSION "\n", stdout);
        return 0;
    }
    if (opts.parse_tegrastats[0]) {
        return s_parse_tegrastats(opts.parse_tegrastats);
    }
    if (opts.keygen) {
        int krc = jf_curve_keygen(opts.key, opts.name[0] ? opts.name : NULL, &err);
        fprintf(krc ? stderr : stdout, "jetfleet-agent: %s%s\n", krc ? err.msg : "wrote ",
                krc ? "" : opts.key);
        return krc ? 1 : 0;
    }
    jf_log_open("jetfleet-agent", JF_LOG_SINK_STDERR, opts.log_level);
    agent_platform_opts_t popts = {.kind = opts.platform, .sim_type = opts.sim_type,
                                   .sysfs_root = opts.sysfs_root, .proc_root = opts.proc_root,
                                   .etc_root = opts.etc_root, .var_root = opts.var_root,
                                   .tegrastats = opts.tegrastats,
                                   .sim_params = opts.sim_params,
                                   .sim_train_bin = opts.sim_train_bin,
                                   .sim_board = opts.name[0] ? opts.name : NULL,
                                   .sim_seed = opts.sim_seed, .sim_speed = opts.sim_speed,
                                   .sim_scale = opts.sim_scale};
    agent_platform_t *platform = agent_platform_new(&popts, &err);
    if (platform) {
        jf_log_notice("platform: %s", agent_platform_describe(platform));
    }
    int rc = !platform          ? -1
             : opts.sample_once ? agent_platform_sample_once(platform, AGENT_PLATFORM_SAMPLE_GAP_US,
                                                             stdout, &err)
                                : s_daemon(&opts, platform, &err);
    if (rc != 0) {
        jf_log_error("%s", err.msg);
    } else if (err.code != 0) {
        jf_log_warn("%s; the sample went without rails", err.msg); // --sample-once's fallback
    }
    agent_platform_destroy(&platform);
    jf_log_close();
    return rc == 0 ? 0 : 1;
}
