/* jetfleet-coordinator: argv + fleet.yaml -> coord_server; nothing else but raising the soft
 * open-file limit first (one descriptor per connection; systemd's default 1024 is too few). */
#include "coord_auth.h"
#include "coord_fdguard.h"
#include "coord_influx.h"
#include "coord_server.h"
#include "jf_fleet_config.h"
#include "jf_log.h"
#include "jf_version.h"

#include <czmq.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <sys/stat.h>

static volatile sig_atomic_t s_stop = 0;

static void s_on_signal(int sig)
{
    (void) sig;
    s_stop = 1;
}

static const char s_usage_text[] =
    "usage: jetfleet-coordinator --config FLEET.yaml "
    "[--log-level error|warn|notice|info|debug] [--syslog] [--new-store]\n"
    "       [--insecure-loopback] [--keygen]\n"
    "       jetfleet-coordinator --help | --version\n";

static int s_usage(const char *why)
{
    fprintf(stderr, "jetfleet-coordinator: %s\n%s", why, s_usage_text);
    return 2;
}

static void s_raise_nofile(void)
{
    long soft = 0, hard = 0;
    jf_err_t err = {0};
    if (coord_fdguard_raise_nofile(&soft, &hard, &err) == 0) {
        jf_log_notice("coordinator: open-file limit: soft %ld, hard %ld; soft now %ld", soft, hard,
                      hard);
    } else {
        jf_log_warn("coordinator: %s; keeping the current open-file limit", err.msg);
    }
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"log-level", required_argument, NULL, 'l'},
                                         {"syslog", no_argument, NULL, 's'},
                                         {"new-store", no_argument, NULL, 'n'},
                                         {"insecure-loopback", no_argument, NULL, 'i'},
                                         {"keygen", no_argument, NULL, 'k'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {NULL, 0, NULL, 0}};
    const char *config = NULL;
    jf_log_level_t level = JF_LOG_NOTICE;
    jf_log_sink_t sink = JF_LOG_SINK_STDERR;
    coord_server_opts_t sopts = {0}; // docs/store.md, "Identity"; docs/protocol.md §1.7
    bool keygen = false;
    for (int c; (c = getopt_long(argc, argv, "c:l:snik", opts, NULL)) != -1;) {
        if (c == 'c') {
            config = optarg;
        } else if (c == 'l' && !jf_log_level_parse(optarg, &level)) {
            return s_usage("--log-level takes error, warn, notice, info or debug");
        } else if (c == 's') {
            sink = JF_LOG_SINK_SYSLOG;
        } else if (c == 'n' || c == 'i' || c == 'k') {
            *(c == 'n' ? &sopts.new_store : c == 'i' ? &sopts.insecure_loopback : &keygen) = true;
        } else if (c == 'h' || c == 'V') {
            fputs(c == 'h' ? s_usage_text : "jetfleet-coordinator " JF_VERSION "\n", stdout);
            return 0;
        } else if (c == '?') {
            return s_usage("unknown option");
        }
    }
    if (!config || optind != argc) {
        return s_usage(config ? "unexpected argument" : "--config is required");
    }
    jf_log_open("jetfleet-coordinator", sink, level);
    s_raise_nofile();
    // Everything the coordinator creates (store, control socket, lock, endpoint file) is its
    // user's alone, from the moment it exists: no window before a chmod.
    (void) umask(S_IRWXG | S_IRWXO);
    zsys_handler_set(NULL); // our own handlers: SIGINT/SIGTERM only set a flag
    struct sigaction sa = {.sa_handler = s_on_signal};
    (void) sigaction(SIGINT, &sa, NULL);
    (void) sigaction(SIGTERM, &sa, NULL);
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = jf_fleet_config_load(config, &err);
    coord_server_t *server = NULL;
    coord_influx_t *influx = NULL; // docs/metrics.md: only with coordinator.influx
    int rc = -1;
    if (fleet && keygen) {
        rc = coord_auth_keygen(fleet->coord.data_dir, &err);
    } else if (fleet && (server = coord_server_new(fleet, &sopts, &err)) != NULL &&
               (!fleet->coord.influx.enabled ||
                (influx = coord_influx_new(&fleet->coord.influx, fleet->coord.store_path,
                                           fleet->coord.data_dir, &err)) != NULL)) {
        rc = coord_server_run(server, &s_stop, &err);
    }
    coord_influx_destroy(&influx);
    if (rc != 0) {
        jf_log_error("%s", err.msg);
    }
    coord_server_destroy(&server);
    jf_fleet_config_destroy(&fleet);
    jf_log_close();
    return rc == 0 ? 0 : 1;
}
