/* `jetfleet fleet inventory [-o FILE] [--coordinator-host HOST]`: an Ansible inventory in YAML,
 * written with libyaml's emitter from fleet.yaml, for playbooks/ (docs/deploy.md). */
#include "cli_cmds.h"
#include "jf_board.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#define S_USAGE    "usage: jetfleet fleet inventory [-o FILE] [--coordinator-host HOST]"
#define S_HOST_MAX 253 // a DNS name

typedef struct s_args {
    const char *out;  // -o FILE; NULL: stdout
    const char *host; // --coordinator-host; NULL: from agent_endpoint or this host's name
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
                                         {"coordinator-host", required_argument, NULL, 'c'},
                                         {NULL, 0, NULL, 0}};
    if (argc < 1 || strcmp(argv[0], "inventory") != 0) {
        return -1;
    }
    char **nargv = cli_getopt_argv("inventory", argc - 1, argv + 1);
    if (!nargv) {
        return -1;
    }
    optind = 0; // restart getopt fully: it may have parsed other words before
    opterr = 0; // one usage line, ours
    *a = (s_args_t){0};
    int c = 0;
    while ((c = getopt_long(argc, nargv, "o:", opts, NULL)) == 'o' || c == 'c') {
        *(c == 'o' ? &a->out : &a->host) = optarg;
    }
    bool ok = c == -1 && optind == argc;
    free(nargv);
    return ok ? 0 : -1;
}

// A host name for the agents' endpoint: letters, digits, '.', '-', ':' (IPv6), 1..253 bytes.
static bool s_is_host(const char *h)
{
    size_t n = strlen(h);
    if (n == 0 || n > S_HOST_MAX) {
        return false;
    }
    return strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:") == n;
}

// The endpoint agents connect to: agent_endpoint with its host replaced by host when given, or
// when the coordinator binds every interface (*, 0.0.0.0) by this machine's name. An ipc://
// endpoint stays as it is (agents on this machine only). Warns when boards cannot reach it.
static int s_agent_endpoint(const char *bind, const char *host, char *out, size_t size,
                            jf_err_t *err)
{
    if (strncmp(bind, "tcp://", 6) != 0) {
        (void) snprintf(out, size, "%s", bind);
        fprintf(stderr,
                "jetfleet: warning: agent_endpoint '%s' is not tcp://: only agents on "
                "the coordinator's machine can reach it\n",
                bind);
        return 0;
    }
    const char *hp = bind + 6, *colon = strrchr(hp, ':');
    if (!colon || colon == hp) {
        return jf_err_set(err, -EINVAL, "agent_endpoint '%s': expected tcp://HOST:PORT", bind);
    }
    char bound[S_HOST_MAX + 1] = "", name[S_HOST_MAX + 1] = "";
    (void) snprintf(bound, sizeof bound, "%.*s", (int) (colon - hp), hp);
    bool any = strcmp(bound, "*") == 0 || strcmp(bound, "0.0.0.0") == 0;
    if (!host && any) {
        if (gethostname(name, sizeof name - 1) != 0) {
            return jf_err_set(err, -errno, "gethostname: %s (give --coordinator-host)",
                              strerror(errno));
        }
        host = name;
    }
    host = host ? host : bound;
    if (!s_is_host(host)) {
        return jf_err_set(err, -EINVAL,
                          "--coordinator-host '%.64s': expected a host name or "
                          "address",
                          host);
    }
    if (strcmp(host, "127.0.0.1") == 0 || strcmp(host, "localhost") == 0) {
        fprintf(stderr,
                "jetfleet: warning: agent_endpoint '%s' is loopback: boards cannot reach "
                "it (set coordinator.agent_endpoint, or give --coordinator-host)\n",
                bind);
    }
    bool v6 = strchr(host, ':') != NULL && host[0] != '[';
    int n = snprintf(out, size, "tcp://%s%s%s%s", v6 ? "[" : "", host, v6 ? "]" : "", colon);
    return n > 0 && (size_t) n < size ? 0 : jf_err_set(err, -EINVAL, "agent endpoint too long");
}

// libyaml events: one call each, false once the emitter has failed.
typedef struct s_emit {
    yaml_emitter_t emitter;
    bool ok;
} s_emit_t;

static void s_event(s_emit_t *e, yaml_event_t *ev, int init_ok)
{
    if (e->ok && init_ok) {
        e->ok = yaml_emitter_emit(&e->emitter, ev) != 0; // takes the event, even on failure
    } else {
        e->ok = false;
        if (init_ok) {
            yaml_event_delete(ev);
        }
    }
}

// Keys are our own names (plain); values and host names are double-quoted, so that a board
// named "123" or "yes" stays a string in Ansible.
static void s_str(s_emit_t *e, const char *text, bool quoted)
{
    yaml_event_t ev;
    int ok = yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *) text, -1, !quoted, 1,
                                          quoted ? YAML_DOUBLE_QUOTED_SCALAR_STYLE
                                                 : YAML_PLAIN_SCALAR_STYLE);
    s_event(e, &ev, ok);
}

static void s_key(s_emit_t *e, const char *key)
{
    s_str(e, key, false);
}

static void s_kv(s_emit_t *e, const char *key, const char *value)
{
    s_key(e, key);
    s_str(e, value, true);
}

static void s_map(s_emit_t *e, bool start)
{
    yaml_event_t ev;
    int ok = start
                 ? yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE)
                 : yaml_mapping_end_event_initialize(&ev);
    s_event(e, &ev, ok);
}

static void s_seq(s_emit_t *e, bool start)
{
    yaml_event_t ev;
    int ok =
        start ? yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE)
              : yaml_sequence_end_event_initialize(&ev);
    s_event(e, &ev, ok);
}

// One host of the agents group: the board's name, and its facts as host variables.
static void s_board(s_emit_t *e, const jf_board_spec_t *b)
{
    char platform[JF_IDENT_MAX + 8];
    (void) snprintf(platform, sizeof platform, "%s%s", b->type == JF_BOARD_SIM ? "sim:" : "auto",
                    b->type == JF_BOARD_SIM ? jf_board_type_name(b->simulates) : "");
    s_str(e, b->name, true);
    s_map(e, true);
    s_kv(e, "jetfleet_board", b->name);
    s_kv(e, "jetfleet_board_type", jf_board_type_name(b->type));
    s_kv(e, "jetfleet_device_type", jf_board_type_name(b->simulates));
    s_kv(e, "jetfleet_platform", platform);
    s_key(e, "jetfleet_labels");
    s_seq(e, true);
    for (size_t i = 0; i < b->n_labels; i++) {
        s_str(e, b->labels[i], true);
    }
    s_seq(e, false);
    s_key(e, "jetfleet_storage");
    s_seq(e, true);
    for (size_t i = 0; i < b->n_storage; i++) {
        s_map(e, true);
        s_kv(e, "medium", b->storage[i].medium);
        s_kv(e, "mount", b->storage[i].mount);
        s_kv(e, "dataset_root", b->storage[i].dataset_root);
        s_map(e, false);
    }
    s_seq(e, false);
    s_key(e, "jetfleet_dataset_roots");
    s_seq(e, true);
    for (size_t i = 0; i < b->n_storage; i++) {
        s_str(e, b->storage[i].dataset_root, true);
    }
    s_seq(e, false);
    s_map(e, false);
}

// The whole inventory: all.vars (the fleet file), the coordinator group (this machine, connection
// local) and the agents group (one host per board).
static void s_inventory(s_emit_t *e, const jf_fleet_config_t *fleet, const char *fleet_path,
                        const char *endpoint)
{
    yaml_event_t ev;
    s_event(e, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
    s_event(e, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 0));
    s_map(e, true);
    s_key(e, "all");
    s_map(e, true);
    s_key(e, "vars");
    s_map(e, true);
    s_kv(e, "jetfleet_fleet_yaml", fleet_path);
    s_kv(e, "jetfleet_coordinator_endpoint", endpoint);
    s_map(e, false);
    s_key(e, "children");
    s_map(e, true);
    s_key(e, "coordinator");
    s_map(e, true);
    s_key(e, "hosts");
    s_map(e, true);
    s_key(e, "localhost");
    s_map(e, true);
    s_kv(e, "ansible_connection", "local");
    s_map(e, false);
    s_map(e, false);
    s_key(e, "vars");
    s_map(e, true);
    s_kv(e, "jetfleet_data_dir", fleet->coord.data_dir);
    s_kv(e, "jetfleet_agent_endpoint", fleet->coord.agent_endpoint);
    s_map(e, false);
    s_map(e, false);
    s_key(e, "agents");
    s_map(e, true);
    s_key(e, "hosts");
    s_map(e, true);
    for (size_t i = 0; i < fleet->n_boards; i++) {
        s_board(e, &fleet->boards[i]);
    }
    s_map(e, false);
    s_map(e, false);
    s_map(e, false);
    s_map(e, false);
    s_map(e, false);
    s_event(e, &ev, yaml_document_end_event_initialize(&ev, 0));
    s_event(e, &ev, yaml_stream_end_event_initialize(&ev));
}

// Writes the inventory to out; 0 or -EIO with the emitter's reason.
static int s_write(FILE *out, const jf_fleet_config_t *fleet, const char *fleet_path,
                   const char *endpoint, jf_err_t *err)
{
    s_emit_t e = {.ok = true};
    if (!yaml_emitter_initialize(&e.emitter)) {
        return jf_err_set(err, -ENOMEM, "fleet inventory: out of memory");
    }
    yaml_emitter_set_output_file(&e.emitter, out);
    yaml_emitter_set_unicode(&e.emitter, 1);
    yaml_emitter_set_width(&e.emitter, -1);
    fputs("# Ansible inventory written by `jetfleet fleet inventory` from fleet.yaml\n", out);
    s_inventory(&e, fleet, fleet_path, endpoint);
    int rc = e.ok && yaml_emitter_flush(&e.emitter)
                 ? 0
                 : jf_err_set(err, -EIO, "fleet inventory: %s",
                              e.emitter.problem ? e.emitter.problem : "write failed");
    yaml_emitter_delete(&e.emitter);
    return rc;
}

int cli_cmd_fleet(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a;
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "%s", S_USAGE);
    }
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, &err);
    char path[PATH_MAX], endpoint[JF_ENDPOINT_MAX + S_HOST_MAX + 8];
    if (!fleet || s_agent_endpoint(fleet->coord.agent_endpoint, a.host, endpoint, sizeof endpoint,
                                   &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    if (!realpath(ctx->config_path, path)) {
        return cli_fail(CLI_EXIT_ERROR, "%s: %s", ctx->config_path, strerror(errno));
    }
    // -o FILE: written beside it and renamed, so a failed run leaves no half inventory.
    char tmp[PATH_MAX + 8] = "";
    if (a.out && snprintf(tmp, sizeof tmp, "%s.tmp", a.out) >= (int) sizeof tmp) {
        return cli_fail(CLI_EXIT_ERROR, "%s: path too long", a.out);
    }
    FILE *out = a.out ? fopen(tmp, "w") : stdout;
    if (!out) {
        return cli_fail(CLI_EXIT_ERROR, "%s: %s", tmp, strerror(errno));
    }
    int rc = s_write(out, fleet, path, endpoint, &err);
    if ((out != stdout && fclose(out) != 0) || (out == stdout && fflush(out) != 0)) {
        rc = rc ? rc : jf_err_set(&err, -EIO, "%s: write failed", a.out ? tmp : "stdout");
    }
    if (rc == 0 && a.out && rename(tmp, a.out) != 0) {
        rc = jf_err_set(&err, -errno, "%s: %s", a.out, strerror(errno));
    }
    if (rc != 0 && a.out) {
        (void) unlink(tmp); // nothing half-written stays behind; a missing file is fine
    }
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
}
