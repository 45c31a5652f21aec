/* jetfleet baseline: measure a board's idle power (docs/baseline.md) as an idle sweep of its own,
 * "baseline-<board>", through the coordinator like any sweep, then show the stored baseline. The
 * sweep is written here as a sweep file's text (docs/sweeps.md, "idle_s") from the fleet's board:
 * its default and lowest-power modes x DVFS on/off, each with telemetry on and off. */
#include "cli_adaptive.h"
#include "cli_baseline.h"
#include "cli_cmds.h"

#include "coord_store_baseline.h"
#include "jf_board_clocks.h"
#include "jf_board_idle.h"
#include "jf_msg_ctl.h"
#include "jf_units.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet baseline --board NAME [--seconds S] [--lowest-mode NAME|ID] "                 \
    "[--timeout SECONDS] [--no-wait] | baseline show --board NAME"
#define S_SECONDS_DEFAULT 60   // each phase's idle time, s
#define S_YAML_MAX        2048 // the generated sweep file
#define S_NAME_PREFIX     "baseline-"

typedef struct s_args {
    const char *board;
    int seconds;
    const char *lowest; // --lowest-mode, or NULL: the family's (jf_board_idle.h)
    int64_t timeout_s;  // 0: none
    bool no_wait;
    bool show;
} s_args_t;

static int s_parse(int argc, char **argv, s_args_t *a)
{
    static const struct option opts[] = {
        {"board", required_argument, NULL, 'b'},       {"seconds", required_argument, NULL, 's'},
        {"lowest-mode", required_argument, NULL, 'l'}, {"timeout", required_argument, NULL, 't'},
        {"no-wait", no_argument, NULL, 'n'},           {NULL, 0, NULL, 0}};
    a->show = argc > 0 && strcmp(argv[0], "show") == 0;
    char **nargv = cli_getopt_argv("baseline", argc - a->show, argv + a->show);
    bool ok = nargv != NULL;
    optind = 0; // restart getopt fully: argv[0] is an option here
    int64_t v = 0;
    for (int c; ok && (c = getopt_long(argc - a->show + 1, nargv, "", opts, NULL)) != -1;) {
        ok = c == 'b' || c == 'l' || c == 'n' ||
             ((c == 's' || c == 't') &&
              jf_parse_i64(optarg, c == 's' ? 1 : 0, c == 's' ? JF_IDLE_S_MAX : INT32_MAX, &v,
                           NULL) == 0);
        a->board = c == 'b' ? optarg : a->board;
        a->lowest = c == 'l' ? optarg : a->lowest;
        a->no_wait |= c == 'n';
        a->seconds = c == 's' ? (int) v : a->seconds;
        a->timeout_s = c == 't' ? v : a->timeout_s;
    }
    ok = ok && optind == argc - a->show + 1 && a->board;
    ok = ok && (!a->show || (!a->lowest && !a->no_wait && a->seconds == 0 && a->timeout_s == 0));
    free(nargv);
    return ok ? 0 : -1;
}

// The mode of board with id, or NULL.
static const jf_power_mode_t *s_mode_id(const jf_board_spec_t *b, int id)
{
    for (size_t i = 0; i < b->n_modes; i++) {
        if (b->modes[i].id == id) {
            return &b->modes[i];
        }
    }
    return NULL;
}

// The sweep's text: the default mode (the family's, else the board's first) and the lowest.
static int s_yaml(const jf_board_spec_t *b, const s_args_t *a, char *buf, size_t size,
                  jf_err_t *err)
{
    const jf_board_family_t *fam = jf_board_family(b->simulates);
    const jf_power_mode_t *def = s_mode_id(b, fam->default_mode_id);
    def = def ? def : &b->modes[0];
    const jf_power_mode_t *low = a->lowest ? jf_board_spec_mode(b, a->lowest)
                                           : s_mode_id(b, jf_board_lowest_mode_id(b->simulates));
    if (!low) {
        char modes[JF_POWER_MODES_MAX * (JF_POWER_MODE_NAME_MAX + 2) + 1] = "";
        for (size_t i = 0, used = 0; i < b->n_modes && used < sizeof modes; i++) {
            int n = snprintf(modes + used, sizeof modes - used, "%s%s", i ? ", " : "",
                             b->modes[i].name);
            used += n > 0 ? (size_t) n : 0;
        }
        return jf_err_set(err, -EINVAL, "board '%s' has no power mode '%.64s' (its modes: %.300s)",
                          b->name, a->lowest ? a->lowest : "lowest-power", modes);
    }
    if (b->n_storage == 0) {
        return jf_err_set(err, -EINVAL, "board '%s' has no storage in fleet.yaml: a run needs one",
                          b->name);
    }
    char modes[2 * JF_POWER_MODE_NAME_MAX + 8];
    (void) snprintf(modes, sizeof modes, low == def ? "%s" : "%s, %s", def->name, low->name);
    // A new seed each time: the runs get new ids, so every call measures afresh.
    int n = snprintf(buf, size,
                     "name: " S_NAME_PREFIX "%s\n"
                     "description: \"idle baseline of %s (jetfleet baseline, docs/baseline.md)\"\n"
                     "target: {boards: [%s]}\n"
                     "workloads: [{name: idle, model: lenet5, dataset: mnist, epochs: 1}]\n"
                     "power_modes: [%s]\n"
                     "dvfs: [%s]\n"
                     "storage: [%s]\n"
                     "idle_s: %d\n"
                     "seed: %lld\n",
                     b->name, b->name, b->name, modes,
                     jf_board_clocks(b->simulates) ? "on, off" : "on", b->storage[0].medium,
                     a->seconds ? a->seconds : S_SECONDS_DEFAULT, (long long) time(NULL));
    return n > 0 && (size_t) n < size ? 0 : jf_err_set(err, -ENOSPC, "baseline: sweep too long");
}

static int s_measure(cli_ctx_t *ctx, const s_args_t *a)
{
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, &err);
    const jf_board_spec_t *b = fleet ? jf_fleet_config_board(fleet, a->board) : NULL;
    if (fleet && !b) {
        return cli_fail(CLI_EXIT_USAGE, "no board '%.200s' in %s", a->board, fleet->source);
    }
    char yaml[S_YAML_MAX];
    json_t *data = NULL;
    if (!b || s_yaml(b, a, yaml, sizeof yaml, &err) != 0 ||
        cli_ctx_request(ctx, jf_msg_ctl_submit_new(1, "jetfleet baseline", yaml), &data, &err) !=
            0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    char name[JF_IDENT_MAX + 1];
    (void) snprintf(name, sizeof name, "%s", json_string_value(json_object_get(data, "sweep")));
    printf("submitted idle baseline '%s': %lld idle runs of %d s each\n", name,
           json_integer_value(json_object_get(data, "added")),
           a->seconds ? a->seconds : S_SECONDS_DEFAULT);
    json_decref(data);
    if (a->no_wait) {
        printf("see it with: jetfleet baseline show --board %s\n", a->board);
        return CLI_EXIT_OK;
    }
    int rc = cli_sweep_wait(ctx, name, a->timeout_s * JF_US_PER_S, true);
    return rc == CLI_EXIT_OK ? cli_baseline_show(ctx, a->board) : rc;
}

int cli_cmd_baseline(cli_ctx_t *ctx, int argc, char **argv)
{
    s_args_t a = {0};
    if (s_parse(argc, argv, &a) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    return a.show ? cli_baseline_show(ctx, a.board) : s_measure(ctx, &a);
}
