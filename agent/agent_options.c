/* jetfleet-agent options (getopt_long). */
#include "agent_options.h"

#include "agent_container.h"
#include "agent_tegrastats_child.h"
#include "jf_fleet_config.h"
#include "jf_parse.h"
#include "jf_run_spec.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const char *agent_options_usage(void)
{
    return "usage: jetfleet-agent --coordinator ENDPOINT --name NAME\n"
           "         [--storage MEDIUM=DATASET_ROOT]... [--config FLEET.yaml]\n"
           "         [--train-bin PATH] [--privhelper CMD] [PLATFORM OPTIONS]\n"
           "         [--log-level LEVEL]\n"
           "       jetfleet-agent [PLATFORM OPTIONS] --sample-once\n"
           "       jetfleet-agent --parse-tegrastats FILE\n"
           "       jetfleet-agent --keygen [--name BOARD] [--key FILE]\n"
           "       jetfleet-agent --help | --version\n"
           "  --storage   a medium (sd, emmc, nvme, usb-hdd, usb-ssd, ssd, hdd, local) and the\n"
           "              directory holding datasets on it (<root>/<dataset>/); repeatable\n"
           "  --config    take this board's storage media from fleet.yaml instead; runs then\n"
           "              check that their dataset is on the medium's configured mount\n"
           "  --container CMD   how to run a trainer in a container, for runs with runtime\n"
           "              container: 'ENGINE run [OPTIONS] IMAGE' (docs/containers.md), e.g.\n"
           "              '/usr/bin/podman run --rm --network none --rootfs /srv/jf-rootfs'\n"
           "  --privhelper CMD  how to run jetfleet-privhelper for power modes and cache drops,\n"
           "              e.g. '/usr/bin/sudo -n /usr/local/libexec/jetfleet-privhelper'\n"
           "              (words split at spaces; without it the agent changes nothing)\n"
           "  --state-dir DIR  where the agent keeps its spool of unacknowledged results,\n"
           "              spool.db (default /var/lib/jetfleet-agent; created if missing, its\n"
           "              parent must exist); one agent per directory\n"
           "  --spool-max-bytes N  refuse new runs while the spool holds N bytes or more\n"
           "              (default 268435456); a running attempt may go past it\n"
           "  --coordinator-key FILE  the coordinator's public key (its keys/coordinator file),\n"
           "              pinned: the agent talks CURVE to that key only (required unless\n"
           "              --insecure-loopback)\n"
           "  --key FILE  this board's keypair (default STATE_DIR/agent.key, FILE_secret beside)\n"
           "  --keygen    write a new keypair to --key and exit; give the public file to the\n"
           "              coordinator's operator (jetfleet keys accept)\n"
           "  --insecure-loopback  plaintext to a coordinator on tcp://127.0.0.1 or ipc:// (tests)\n"
           "  --spool-in-memory  keep the spool in memory only, losing it on a restart\n"
           "              (test builds only: for tests that show what the file saves)\n"
           "  --spool-forget-on-send  forget each result once sent, as if acknowledged, so\n"
           "              nothing lost on the way is resent (test builds only: the control that\n"
           "              shows what acknowledgements save)\n"
           "  --sample-once  print one telemetry sample (JSON; two readings 100 ms apart) and\n"
           "              exit\n"
           "  --parse-tegrastats  print one JSON telemetry sample per line of a saved tegrastats\n"
           "              log and exit (1 if a line could not be parsed)\n"
           "platform options:\n"
           "  --platform auto|jetson|host|sim:TYPE  (default auto: jetson when the device tree\n"
           "              names a supported Jetson, else host)\n"
           "  --sysfs-root DIR  sysfs mount (default /sys)\n"
           "  --proc-root DIR   procfs mount (default /proc)\n"
           "  --etc-root DIR    where nv_tegra_release and nvpmodel.conf are (default /etc)\n"
           "  --var-root DIR    where lib/nvpmodel/status is (default /var)\n"
           "  --tegrastats PATH  on a Jetson whose power rails sysfs cannot read, run this\n"
           "              tegrastats while a run is measured and take the rails from it\n"
           "              (default /usr/bin/tegrastats; 'none': no fallback)\n"
           "simulated boards (--platform sim:TYPE, docs/simulator.md; runs use\n"
           "jetfleet-train-sim; the platform writes its own fake sysfs tree):\n"
           "  --sim-params FILE  the model's parameters (default: sim_params.yaml beside the\n"
           "              agent, in ../share/jetfleet, or in the source tree)\n"
           "  --sim-train-bin PATH  the simulated trainer (default: jetfleet-train-sim beside\n"
           "              the agent)\n"
           "  --sim-seed N      the fleet's seed of board factors (default 1)\n"
           "  --sim-speed X     modelled seconds per wall-clock second, 1..100000 (default 1)\n"
           "  --sim-scale F     dataset size of the runs relative to the real one,\n"
           "              0.0001..1000 (default 1)\n";
}

static int s_spool_option(agent_options_t *o, int c, const char *arg, jf_err_t *err)
{
    if (c == 'D') {
        if (arg[0] != '/' || strlen(arg) >= sizeof o->state_dir - sizeof AGENT_SPOOL_FILE_NAME) {
            return jf_err_set(err, -EINVAL, "--state-dir '%.200s': expected an absolute path",
                              arg);
        }
        (void) snprintf(o->state_dir, sizeof o->state_dir, "%s", arg);
        return 0;
    }
    int rc = jf_parse_i64(arg, 1, INT64_C(1) << 62, &o->spool_max_bytes, err);
    return rc ? jf_err_prefix(err, "--spool-max-bytes") : 0;
}

// --spool-in-memory and --spool-forget-on-send exist for tests only (they lose what the spool
// keeps: docs/programs.md): an agent built without tests (what cmake --install and the package
// ship) refuses them, so a production agent's spool cannot be told to forget.
#if JF_AGENT_TEST_HOOKS
static int s_test_option(agent_options_t *o, int c, jf_err_t *err)
{
    (void) err;
    o->spool_in_memory |= c == 'M';
    o->spool_forget_on_send |= c == 'F';
    return 0;
}
#else
static int s_test_option(agent_options_t *o, int c, jf_err_t *err)
{
    (void) o;
    return jf_err_set(err, -EINVAL, "%s: only in test builds of the agent (-DJF_BUILD_TESTS=ON)",
                      c == 'M' ? "--spool-in-memory" : "--spool-forget-on-send");
}
#endif

static int s_add_storage(agent_options_t *o, const char *arg, jf_err_t *err)
{
    const char *eq = strchr(arg, '=');
    if (!eq || o->n_storage >= JF_HELLO_STORAGE_MAX || (size_t) (eq - arg) > JF_IDENT_MAX) {
        return jf_err_set(err, -EINVAL, "--storage takes MEDIUM=DIR, at most %d times",
                          JF_HELLO_STORAGE_MAX);
    }
    jf_hello_storage_t *s = &o->storage[o->n_storage];
    (void) snprintf(s->medium, sizeof s->medium, "%.*s", (int) (eq - arg), arg);
    (void) snprintf(s->dataset_root, sizeof s->dataset_root, "%s", eq + 1);
    if (!jf_run_spec_is_medium(s->medium) || eq[1] != '/') {
        return jf_err_set(err, -EINVAL, "--storage '%s': medium must be one of %s and DIR absolute",
                          arg, jf_run_spec_media());
    }
    o->n_storage++;
    return 0;
}

static int s_storage_from_config(agent_options_t *o, const char *path, jf_err_t *err)
{
    jf_fleet_config_t *fleet = jf_fleet_config_load(path, err);
    const jf_board_spec_t *b = fleet ? jf_fleet_config_board(fleet, o->name) : NULL;
    int rc = fleet ? 0 : -EINVAL;
    if (fleet && !b) {
        rc = jf_err_set(err, -EINVAL, "%s: no board named '%s'", path, o->name);
    }
    for (size_t i = 0; b && i < b->n_storage && i < JF_HELLO_STORAGE_MAX; i++) {
        (void) snprintf(o->storage_mount[o->n_storage], sizeof o->storage_mount[0], "%s",
                        b->storage[i].mount);
        jf_hello_storage_t *s = &o->storage[o->n_storage++];
        (void) snprintf(s->medium, sizeof s->medium, "%s", b->storage[i].medium);
        (void) snprintf(s->dataset_root, sizeof s->dataset_root, "%s", b->storage[i].dataset_root);
    }
    jf_fleet_config_destroy(&fleet);
    return rc;
}

int agent_options_split_command(const char *text, char *buf, size_t size, const char **argv,
                                size_t max, jf_err_t *err)
{
    size_t n = 0;
    if (strlen(text) >= size) {
        return jf_err_set(err, -EINVAL, "--privhelper: the command is too long");
    }
    memcpy(buf, text, strlen(text) + 1);
    for (char *p = buf; *p;) {
        p += strspn(p, " ");
        if (!*p) {
            break;
        }
        if (n == max) {
            return jf_err_set(err, -EINVAL, "--privhelper: more than %zu words", max);
        }
        argv[n++] = p;
        p += strcspn(p, " ");
        if (*p) {
            *p++ = '\0';
        }
    }
    argv[n] = NULL;
    if (n == 0 || argv[0][0] != '/') {
        return jf_err_set(err, -EINVAL,
                          "--privhelper '%.200s': expected a command whose first word is an "
                          "absolute path",
                          text);
    }
    return (int) n;
}

// --container CMD: checked as the session will parse it (agent_container.h).
static int s_container(agent_options_t *o, const char *text, jf_err_t *err)
{
    agent_container_t c;
    (void) snprintf(o->container, sizeof o->container, "%s", text);
    return strlen(text) >= sizeof o->container
               ? jf_err_set(err, -EINVAL, "--container: the command is too long")
               : agent_container_parse(o->container, &c, err);
}

static int s_check_privhelper(const char *text, jf_err_t *err)
{
    char buf[PATH_MAX];
    const char *argv[AGENT_OPTIONS_HELPER_WORDS_MAX + 1];
    int n = agent_options_split_command(text, buf, sizeof buf, argv, AGENT_OPTIONS_HELPER_WORDS_MAX,
                                        err);
    return n < 0 ? n : 0;
}

// program beside the agent's own executable.
static void s_default_bin(const char *program, char *out, size_t size)
{
    char self[PATH_MAX] = {0};
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    (void) snprintf(out, size, "%s/%s", n > 0 ? dirname(self) : ".", program);
}

// The first readable of: beside the agent (a build tree), ../share/jetfleet (an install), the
// source tree's copy (JF_SIM_PARAMS_SOURCE, a compile definition).
static void s_default_sim_params(char *out, size_t size)
{
    char self[PATH_MAX] = {0};
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    const char *dir = n > 0 ? dirname(self) : ".";
    (void) snprintf(out, size, "%s/" AGENT_OPTIONS_SIM_PARAMS_NAME, dir);
    if (access(out, R_OK) != 0) {
        (void) snprintf(out, size, "%s/../share/jetfleet/" AGENT_OPTIONS_SIM_PARAMS_NAME, dir);
    }
    if (access(out, R_OK) != 0) {
        (void) snprintf(out, size, "%s", JF_SIM_PARAMS_SOURCE);
    }
}

static int s_sim_option(agent_options_t *o, int c, const char *arg, jf_err_t *err)
{
    int64_t seed = 0;
    int rc = 0;
    switch (c) {
    case 'm': (void) snprintf(o->sim_params, sizeof o->sim_params, "%s", arg); break;
    case 'b': (void) snprintf(o->sim_train_bin, sizeof o->sim_train_bin, "%s", arg); break;
    case 'd':
        rc = jf_parse_i64(arg, 0, AGENT_OPTIONS_SIM_SEED_MAX, &seed, err);
        o->sim_seed = (uint64_t) seed;
        break;
    case 'g':
        rc = jf_parse_double(arg, AGENT_OPTIONS_SIM_SCALE_MIN, AGENT_OPTIONS_SIM_SCALE_MAX,
                             &o->sim_scale, err);
        break;
    default:
        rc = jf_parse_double(arg, AGENT_OPTIONS_SIM_SPEED_MIN, AGENT_OPTIONS_SIM_SPEED_MAX,
                             &o->sim_speed, err);
        break;
    }
    return rc ? jf_err_prefix(err, "--%s", c == 'd' ? "sim-seed" : c == 'g' ? "sim-scale"
                                                                            : "sim-speed")
              : 0;
}

// --tegrastats: "none" or an absolute path (whether it runs is known only when it is needed).
static int s_tegrastats(agent_options_t *o, const char *arg, jf_err_t *err)
{
    if (strcmp(arg, AGENT_TEGRASTATS_PATH_NONE) != 0 &&
        (arg[0] != '/' || strlen(arg) >= sizeof o->tegrastats)) {
        return jf_err_set(err, -EINVAL, "--tegrastats '%.200s': expected an absolute path or "
                          "'none'", arg);
    }
    (void) snprintf(o->tegrastats, sizeof o->tegrastats, "%s", arg);
    return 0;
}

// Import mode and --sample-once take no daemon option; the daemon needs a coordinator and a
// name.
static int s_check(const agent_options_t *o, const char *config, jf_err_t *err)
{
    bool daemon = o->endpoint[0] || o->name[0] || o->n_storage > 0 || config || o->privhelper[0];
    if (o->sim_option && o->platform != AGENT_PLATFORM_SIM) {
        return jf_err_set(err, -EINVAL, "--sim-params, --sim-train-bin, --sim-seed, --sim-speed "
                          "and --sim-scale need --platform sim:TYPE");
    }
    if (o->parse_tegrastats[0] && o->sample_once) {
        return jf_err_set(err, -EINVAL, "--parse-tegrastats and --sample-once exclude each other");
    }
    if (o->parse_tegrastats[0] || o->sample_once) {
        return daemon ? jf_err_set(err, -EINVAL, "%s takes no daemon options",
                                   o->sample_once ? "--sample-once" : "--parse-tegrastats")
                      : 0;
    }
    if (o->keygen) {
        return o->name[0] && !jf_parse_is_ident(o->name)
                   ? jf_err_set(err, -EINVAL, "--name '%.200s' is not a valid board name", o->name)
                   : 0;
    }
    if (o->insecure_loopback && strncmp(o->endpoint, "tcp://127.0.0.1:", 16) != 0 &&
        strncmp(o->endpoint, "ipc://", 6) != 0) {
        return jf_err_set(err, -EINVAL, "--insecure-loopback refused: --coordinator '%.200s' is "
                                        "not tcp://127.0.0.1:PORT or ipc://", o->endpoint);
    }
    if (!o->endpoint[0] || !jf_parse_is_ident(o->name)) {
        return jf_err_set(err, -EINVAL, "--coordinator and a valid --name are required");
    }
    return 0;
}

int agent_options_parse(int argc, char **argv, agent_options_t *o, jf_err_t *err)
{
    static const struct option opts[] = {{"coordinator", required_argument, NULL, 'c'},
                                         {"name", required_argument, NULL, 'n'},
                                         {"storage", required_argument, NULL, 's'},
                                         {"config", required_argument, NULL, 'f'},
                                         {"train-bin", required_argument, NULL, 't'},
                                         {"proc-root", required_argument, NULL, 'p'},
                                         {"log-level", required_argument, NULL, 'l'},
                                         {"parse-tegrastats", required_argument, NULL, 'T'},
                                         {"platform", required_argument, NULL, 'P'},
                                         {"sysfs-root", required_argument, NULL, 'S'},
                                         {"etc-root", required_argument, NULL, 'E'},
                                         {"var-root", required_argument, NULL, 'V'},
                                         {"sample-once", no_argument, NULL, 'O'},
                                         {"privhelper", required_argument, NULL, 'H'},
                                         {"container", required_argument, NULL, 'C'},
                                         {"sim-params", required_argument, NULL, 'm'},
                                         {"sim-train-bin", required_argument, NULL, 'b'},
                                         {"sim-seed", required_argument, NULL, 'd'},
                                         {"sim-speed", required_argument, NULL, 'x'},
                                         {"sim-scale", required_argument, NULL, 'g'},
                                         {"tegrastats", required_argument, NULL, 'G'},
                                         {"state-dir", required_argument, NULL, 'D'},
                                         {"spool-max-bytes", required_argument, NULL, 'B'},
                                         {"spool-in-memory", no_argument, NULL, 'M'},
                                         {"spool-forget-on-send", no_argument, NULL, 'F'},
                                         {"key", required_argument, NULL, 'k'},
                                         {"coordinator-key", required_argument, NULL, 'K'},
                                         {"insecure-loopback", no_argument, NULL, 'I'},
                                         {"keygen", no_argument, NULL, 'Y'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'v'},
                                         {NULL, 0, NULL, 0}};
    *o = (agent_options_t){.log_level = JF_LOG_NOTICE, .platform = AGENT_PLATFORM_AUTO,
                           .sim_type = JF_BOARD_SIM, .sysfs_root = AGENT_PLATFORM_SYSFS_ROOT,
                           .proc_root = AGENT_PLATFORM_PROC_ROOT,
                           .etc_root = AGENT_PLATFORM_ETC_ROOT,
                           .var_root = AGENT_PLATFORM_VAR_ROOT,
                           .sim_seed = AGENT_PLATFORM_SIM_SEED_DEFAULT,
                           .sim_speed = AGENT_PLATFORM_SIM_SPEED_DEFAULT,
                           .sim_scale = AGENT_PLATFORM_SIM_SCALE_DEFAULT,
                           .state_dir = AGENT_OPTIONS_STATE_DIR,
                           .spool_max_bytes = AGENT_SPOOL_BYTES_MAX};
    (void) snprintf(o->tegrastats, sizeof o->tegrastats, "%s", AGENT_TEGRASTATS_PATH_DEFAULT);
    s_default_bin("jetfleet-train", o->train_bin, sizeof o->train_bin);
    s_default_bin("jetfleet-train-sim", o->sim_train_bin, sizeof o->sim_train_bin);
    s_default_sim_params(o->sim_params, sizeof o->sim_params);
    const char *config = NULL;
    int rc = 0;
    for (int c; rc == 0 && (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        switch (c) {
        case 'c': (void) snprintf(o->endpoint, sizeof o->endpoint, "%s", optarg); break;
        case 'n': (void) snprintf(o->name, sizeof o->name, "%s", optarg); break;
        case 's': rc = s_add_storage(o, optarg, err); break;
        case 'f': config = optarg; break;
        case 't': (void) snprintf(o->train_bin, sizeof o->train_bin, "%s", optarg); break;
        case 'p': (void) snprintf(o->proc_root, sizeof o->proc_root, "%s", optarg); break;
        case 'S': (void) snprintf(o->sysfs_root, sizeof o->sysfs_root, "%s", optarg); break;
        case 'E': (void) snprintf(o->etc_root, sizeof o->etc_root, "%s", optarg); break;
        case 'V': (void) snprintf(o->var_root, sizeof o->var_root, "%s", optarg); break;
        case 'P': rc = agent_platform_kind_parse(optarg, &o->platform, &o->sim_type, err); break;
        case 'O': o->sample_once = true; break;
        case 'D': case 'B': rc = s_spool_option(o, c, optarg, err); break;
        case 'M': case 'F': rc = s_test_option(o, c, err); break;
        case 'k': (void) snprintf(o->key, sizeof o->key, "%s", optarg); break;
        case 'K': (void) snprintf(o->coordinator_key, sizeof o->coordinator_key, "%s", optarg);
            break;
        case 'I': o->insecure_loopback = true; break;
        case 'Y': o->keygen = true; break;
        case 'h': o->help = true; return 0;
        case 'v': o->version = true; return 0;
        case 'G': rc = s_tegrastats(o, optarg, err); break;
        case 'm': case 'b': case 'd': case 'x': case 'g':
            o->sim_option = true;
            rc = s_sim_option(o, c, optarg, err);
            break;
        case 'C': rc = s_container(o, optarg, err); break;
        case 'H':
            (void) snprintf(o->privhelper, sizeof o->privhelper, "%s", optarg);
            rc = s_check_privhelper(o->privhelper, err);
            break;
        case 'T': (void) snprintf(o->parse_tegrastats, sizeof o->parse_tegrastats, "%s", optarg);
            break;
        case 'l':
            rc = jf_log_level_parse(optarg, &o->log_level) ? 0
                 : jf_err_set(err, -EINVAL, "--log-level takes error|warn|notice|info|debug");
            break;
        default: rc = jf_err_set(err, -EINVAL, "unknown option"); break;
        }
    }
    if (rc == 0 && optind != argc) {
        rc = jf_err_set(err, -EINVAL, "unexpected argument '%.200s'", argv[optind]);
    }
    if (rc == 0 && !o->key[0] &&
        snprintf(o->key, sizeof o->key, "%s/%s", o->state_dir, AGENT_OPTIONS_KEY_NAME) >=
            (int) sizeof o->key) {
        rc = jf_err_set(err, -EINVAL, "--state-dir: too long for the key path");
    }
    rc = rc ? rc : s_check(o, config, err);
    if (rc == 0 && config) {
        rc = s_storage_from_config(o, config, err);
    }
    return rc;
}
