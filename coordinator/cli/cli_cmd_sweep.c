/* jetfleet sweep plan|submit|list|show|cancel. */
#include "cli_adaptive.h"
#include "coord_adaptive.h"
#include "cli_cmds.h"
#include "cli_table.h"
#include "jf_msg_ctl.h"
#include "jf_parse.h"
#include "jf_sweep.h"
#include "jf_units.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define S_WAIT_POLL_MS  1000
#define S_TIMEOUT_MAX_S (INT64_C(366) * 24 * 3600) // --timeout: up to a year
#define S_SUBMIT_USAGE                                                                             \
    "jetfleet sweep submit FILE [--wait [--timeout SECONDS]] | sweep submit --adaptive N "         \
    "[--batch "                                                                                    \
    "B] [--seed S] [--timeout SECONDS] FILE"
#define S_BATCH_MAX 1000 // --batch: modes per adaptive round

static void s_count_add(cli_table_t *t, const char *const *names, const char *a, const char *b,
                        size_t n)
{
    char num[32];
    (void) snprintf(num, sizeof num, "%zu", n);
    const char *values[] = {a, b, num};
    (void) cli_table_add_text(t, 3, names, values);
}

static void s_print_plan(const jf_fleet_config_t *fleet, const jf_sweep_t *sw)
{
    static const char *const tnames[] = {"type", "boards", "runs"};
    static const char *const bnames[] = {"board", "type", "runs"};
    cli_table_t *types = cli_table_new(NULL), *boards = cli_table_new(NULL);
    for (int ty = 0; ty < JF_BOARD_TYPE_COUNT; ty++) {
        size_t nb = 0, nr = 0;
        for (size_t b = 0; b < fleet->n_boards; b++) {
            size_t runs = 0;
            for (size_t r = 0; r < sw->n_runs; r++) {
                runs += strcmp(sw->runs[r].board, fleet->boards[b].name) == 0;
            }
            if ((int) fleet->boards[b].simulates == ty && runs > 0) {
                nb++;
                nr += runs;
                s_count_add(boards, bnames, fleet->boards[b].name, jf_board_type_name(ty), runs);
            }
        }
        char nbs[32];
        (void) snprintf(nbs, sizeof nbs, "%zu", nb);
        if (nr > 0) {
            s_count_add(types, tnames, jf_board_type_name(ty), nbs, nr);
        }
    }
    printf("sweep '%s' (%s): %zu runs\nleft out: %zu excluded, %zu lacking the storage medium, "
           "%zu lacking the power mode (or unable to run its custom point or DVFS off)\n\n",
           sw->name, sw->source, sw->n_runs, sw->skips.excluded, sw->skips.no_storage,
           sw->skips.no_power_mode);
    (void) cli_table_write(types, CLI_FORMAT_TEXT, stdout);
    putchar('\n');
    (void) cli_table_write(boards, CLI_FORMAT_TEXT, stdout);
    cli_table_destroy(&types);
    cli_table_destroy(&boards);
}

// A sweep file that does not validate (-EINVAL with its file:line:col, or -EFBIG: over the size
// limit) is the user's input being wrong, so it exits 2 like a usage error (issue #10); a file
// that cannot be read, or a bad fleet, is an error (1).
static int s_load_exit(const jf_fleet_config_t *fleet, const jf_err_t *err)
{
    bool bad_input = err->code == -EINVAL || err->code == -EFBIG;
    return fleet && bad_input ? CLI_EXIT_USAGE : CLI_EXIT_ERROR;
}

static int s_plan(cli_ctx_t *ctx, const char *file)
{
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, &err);
    jf_sweep_t *sw = fleet ? jf_sweep_load(file, fleet, &err) : NULL;
    if (!sw) {
        return cli_fail(s_load_exit(fleet, &err), "%s", err.msg);
    }
    s_print_plan(fleet, sw);
    jf_sweep_destroy(&sw);
    return CLI_EXIT_OK;
}

static char *s_read_file(const char *path, jf_err_t *err)
{
    FILE *f = fopen(path, "r");
    char *buf = f ? calloc(1, JF_CTL_YAML_MAX + 2) : NULL;
    size_t n = buf ? fread(buf, 1, JF_CTL_YAML_MAX + 1, f) : 0;
    if (f) {
        fclose(f);
    }
    if (!buf || n > JF_CTL_YAML_MAX) {
        free(buf);
        jf_err_set(err, -EINVAL, "%s: %s", path,
                   f ? "larger than a sweep file may be" : strerror(errno));
        return NULL;
    }
    return buf;
}

static void s_progress(const coord_state_counts_t *c, size_t total, int64_t start_us,
                       size_t finished_at_start, bool tty)
{
    size_t finished = c->n[COORD_RUN_DONE] + c->n[COORD_RUN_FAILED];
    size_t left = total - finished;
    char bar[41] = {0};
    size_t fill = total ? 40 * finished / total : 40;
    for (size_t i = 0; i < 40; i++) {
        bar[i] = i < fill ? '#' : '.';
    }
    char eta[32] = "--";
    double elapsed_s = (double) (jf_clock_mono_us() - start_us) / (double) JF_US_PER_S;
    if (finished > finished_at_start) {
        // A stated model: runs keep finishing at the rate seen since --wait started.
        double per_run = elapsed_s / (double) (finished - finished_at_start);
        int s = (int) (per_run * (double) left + 0.5);
        (void) snprintf(eta, sizeof eta, "%d:%02d", s / 60, s % 60);
    }
    printf("%s[%s] %zu/%zu  done %zu  failed %zu  running %zu  ETA %s%s", tty ? "\r" : "", bar,
           finished, total, c->n[COORD_RUN_DONE], c->n[COORD_RUN_FAILED],
           c->n[COORD_RUN_RUNNING] + c->n[COORD_RUN_ASSIGNED], eta, tty ? "  " : "\n");
    fflush(stdout);
}

// --wait's state: what it has printed, and since when the sweep has been unable to progress.
typedef struct s_waiter {
    cli_ctx_t *ctx;           // borrowed
    const char *name;         // borrowed: the sweep
    bool tty;                 // stdout is a terminal: redraw one progress line
    int64_t start_us;         // monotonic: when --wait began
    int64_t timeout_us;       // --timeout (0: none)
    int64_t stalled_since_us; // monotonic: since when no board of an open run is online (0: not)
    int64_t last_print_us;    // monotonic: the last progress line
    size_t at_start;          // runs finished when --wait began (SIZE_MAX: not counted yet)
    size_t last_finished;     // runs finished at the last progress line
} s_waiter_t;

// Collects the boards of the sweep's open runs (pending, assigned, running) as keys of arg.
static int s_collect_open_board(int ncols, const char *const *names, const char *const *values,
                                const coord_value_kind_t *kinds, void *arg)
{
    (void) kinds;
    const char *board = NULL, *state = NULL;
    for (int i = 0; i < ncols; i++) {
        board = strcmp(names[i], "board") == 0 ? values[i] : board;
        state = strcmp(names[i], "state") == 0 ? values[i] : state;
    }
    bool open = state && (strcmp(state, "pending") == 0 || strcmp(state, "assigned") == 0 ||
                          strcmp(state, "running") == 0);
    if (open && board) {
        (void) json_object_set_new(arg, board, json_true());
    }
    return 0;
}

// Whether a board that holds an open run of the sweep is online, in the coordinator's live view
// (a sweep's runs are bound to boards at expansion, so only those boards can take them). When
// not, why says which boards the sweep waits for.
static bool s_can_progress(s_waiter_t *w, char *why, size_t why_size)
{
    jf_err_t err = {0};
    json_t *open = json_object(), *data = NULL;
    coord_store_t *store = cli_ctx_store(w->ctx, &err);
    bool ok = open && store &&
              coord_store_select(store, COORD_TABLE_RUNS, w->name, NULL, s_collect_open_board, open,
                                 &err) == 0 &&
              cli_ctx_request(w->ctx, jf_msg_new(JF_MSG_CTL_STATUS, 1), &data, &err) == 0;
    bool online = false;
    size_t i = 0;
    json_t *b = NULL;
    json_array_foreach(json_object_get(data, "boards"), i, b)
    {
        const char *board = json_string_value(json_object_get(b, "name"));
        bool ours = board && json_object_get(open, board);
        online |= ours && json_is_true(json_object_get(b, "online"));
    }
    if (!ok) {
        (void) snprintf(why, why_size, "%s", err.msg);
    } else if (!online) {
        (void) snprintf(why, why_size, "none of the %zu boards its open runs belong to is online",
                        json_object_size(open));
    }
    bool can = ok && (online || json_object_size(open) == 0);
    json_decref(open);
    json_decref(data);
    return can;
}

// 0 while the sweep may still finish, else CLI_EXIT_ERROR after saying why it stopped waiting.
static int s_check_stuck(s_waiter_t *w, const coord_state_counts_t *c, size_t unfinished)
{
    int64_t now = jf_clock_mono_us();
    const char *lead = w->tty ? "\n" : "";
    if (w->timeout_us > 0 && now - w->start_us >= w->timeout_us) {
        printf("%s", lead);
        return cli_fail(CLI_EXIT_ERROR,
                        "sweep '%s': --timeout of %lld s passed with %zu runs unfinished (%zu "
                        "pending, %zu running); they stay queued in the coordinator",
                        w->name, (long long) (w->timeout_us / JF_US_PER_S), unfinished,
                        c->n[COORD_RUN_PENDING],
                        c->n[COORD_RUN_RUNNING] + c->n[COORD_RUN_ASSIGNED]);
    }
    char why[JF_ERR_MSG_MAX + 64] = {0};
    if (s_can_progress(w, why, sizeof why)) {
        w->stalled_since_us = 0;
        return 0;
    }
    w->stalled_since_us = w->stalled_since_us ? w->stalled_since_us : now;
    // A board is declared offline only after a heartbeat timeout of silence; one more timeout
    // lets a board that is re-registering come back before --wait gives up.
    const jf_fleet_config_t *fleet = cli_ctx_fleet(w->ctx, NULL);
    int64_t grace_us = fleet ? fleet->coord.heartbeat_timeout_us : JF_DEFAULT_HB_TIMEOUT_US;
    if (now - w->stalled_since_us < grace_us) {
        return 0;
    }
    printf("%s", lead);
    return cli_fail(CLI_EXIT_ERROR,
                    "sweep '%s' cannot make progress: %s (for %lld s); %zu runs unfinished stay "
                    "queued (see `jetfleet status`)",
                    w->name, why, (long long) ((now - w->stalled_since_us) / JF_US_PER_S),
                    unfinished);
}

static void s_wait_print(s_waiter_t *w, const coord_state_counts_t *c, size_t total,
                         size_t finished)
{
    w->at_start = w->at_start == SIZE_MAX ? finished : w->at_start;
    int64_t now = jf_clock_mono_us();
    if (w->tty || finished != w->last_finished || now - w->last_print_us > 10 * JF_US_PER_S) {
        s_progress(c, total, w->start_us, w->at_start, w->tty);
        w->last_print_us = now;
        w->last_finished = finished;
    }
}

int cli_sweep_wait(cli_ctx_t *ctx, const char *name, int64_t timeout_us, bool failed_ok)
{
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    s_waiter_t w = {.ctx = ctx,
                    .name = name,
                    .tty = isatty(STDOUT_FILENO),
                    .start_us = jf_clock_mono_us(),
                    .timeout_us = timeout_us,
                    .at_start = SIZE_MAX,
                    .last_finished = SIZE_MAX};
    coord_state_counts_t c = {0};
    while (store && coord_store_counts(store, name, &c, &err) == 0) {
        size_t total = 0, finished = c.n[COORD_RUN_DONE] + c.n[COORD_RUN_FAILED];
        for (int s = 0; s < COORD_RUN_STATE_COUNT; s++) {
            total += c.n[s];
        }
        s_wait_print(&w, &c, total, finished);
        if (finished == total) {
            printf("%ssweep '%s' finished: %zu done, %zu failed\n", w.tty ? "\n" : "", name,
                   c.n[COORD_RUN_DONE], c.n[COORD_RUN_FAILED]);
            return c.n[COORD_RUN_FAILED] && !failed_ok ? CLI_EXIT_ERROR : CLI_EXIT_OK;
        }
        int rc = s_check_stuck(&w, &c, total - finished);
        if (rc != 0) {
            return rc;
        }
        usleep(S_WAIT_POLL_MS * 1000);
    }
    return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
}

static int s_submit(cli_ctx_t *ctx, const char *file, bool wait, int64_t timeout_us)
{
    jf_err_t err = {0};
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, &err);
    jf_sweep_t *sw = fleet ? jf_sweep_load(file, fleet, &err) : NULL; // errors with positions
    if (!sw) {
        return cli_fail(s_load_exit(fleet, &err), "%s", err.msg);
    }
    char *yaml = s_read_file(file, &err);
    json_t *data = NULL;
    if (!yaml || cli_ctx_request(ctx, jf_msg_ctl_submit_new(1, file, yaml), &data, &err) != 0) {
        free(yaml);
        jf_sweep_destroy(&sw);
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    char name[JF_IDENT_MAX + 1];
    (void) snprintf(name, sizeof name, "%s", sw->name);
    printf("submitted sweep '%s': %lld runs (%lld new, %lld already done, %lld failed ones "
           "retried)\n",
           name, json_integer_value(json_object_get(data, "runs")),
           json_integer_value(json_object_get(data, "added")),
           json_integer_value(json_object_get(data, "already_done")),
           json_integer_value(json_object_get(data, "retried")));
    json_decref(data);
    free(yaml);
    jf_sweep_destroy(&sw);
    return wait ? cli_sweep_wait(ctx, name, timeout_us, false) : CLI_EXIT_OK;
}

static int s_cancel(cli_ctx_t *ctx, const char *name)
{
    json_t *data = NULL;
    jf_err_t err = {0};
    if (cli_ctx_request(ctx, jf_msg_ctl_cancel_new(1, name), &data, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    printf("cancelled sweep '%s': %lld pending runs dropped, %lld running runs being stopped\n",
           name, json_integer_value(json_object_get(data, "cancelled_pending")),
           json_integer_value(json_object_get(data, "stopping")));
    json_decref(data);
    return CLI_EXIT_OK;
}

static int s_table(cli_ctx_t *ctx, coord_table_t table, const char *sweep,
                   const char *const *columns)
{
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    cli_table_t *t = cli_table_new(columns);
    int rc = store && t ? coord_store_select(store, table, sweep, NULL, cli_table_add_row, t, &err)
                        : -EIO;
    if (rc != 0 && t && cli_table_error(t)[0]) {
        jf_err_set(&err, rc, "%s", cli_table_error(t)); // the table's reason, not errno's
    }
    if (rc == 0) {
        rc = cli_table_write(t, CLI_FORMAT_TEXT, stdout);
    }
    if (rc == 0 && cli_table_rows(t) == 0) {
        printf("(no rows)\n");
    }
    cli_table_destroy(&t);
    return rc == 0 ? CLI_EXIT_OK : cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
}

// The options of submit, as given.
typedef struct s_submit_args {
    bool wait;
    const char *timeout, *adaptive, *batch, *seed;
} s_submit_args_t;

// --adaptive N [--batch B] [--seed S] [--timeout SECONDS] FILE.
static int s_adaptive_args(cli_ctx_t *ctx, const s_submit_args_t *a, const char *file)
{
    int64_t n = 0, batch = CLI_ADAPTIVE_BATCH, seed = CLI_ADAPTIVE_SEED, timeout_s = 0;
    jf_err_t err = {0};
    const char *bad =
        jf_parse_i64(a->adaptive, 1, COORD_ADAPTIVE_CANDS_MAX, &n, &err) ? "--adaptive" : NULL;
    bad =
        !bad && a->batch && jf_parse_i64(a->batch, 1, S_BATCH_MAX, &batch, &err) ? "--batch" : bad;
    bad = !bad && a->seed && jf_parse_i64(a->seed, 0, INT64_MAX, &seed, &err) ? "--seed" : bad;
    bad = !bad && a->timeout && jf_parse_i64(a->timeout, 1, S_TIMEOUT_MAX_S, &timeout_s, &err)
              ? "--timeout"
              : bad;
    if (bad) {
        return cli_fail(CLI_EXIT_USAGE, "%s: %s", bad, err.msg);
    }
    cli_adaptive_opts_t o = {.n = (size_t) n,
                             .batch = (size_t) batch,
                             .seed = (uint64_t) seed,
                             .timeout_us = timeout_s * JF_US_PER_S};
    return cli_adaptive_submit(ctx, file, &o);
}

// submit FILE [--wait [--timeout SECONDS]] or submit --adaptive N ...: argv[0] is "submit".
static int s_submit_args(cli_ctx_t *ctx, int argc, char **argv)
{
    static const struct option opts[] = {
        {"wait", no_argument, NULL, 'w'},           {"timeout", required_argument, NULL, 't'},
        {"adaptive", required_argument, NULL, 'a'}, {"batch", required_argument, NULL, 'b'},
        {"seed", required_argument, NULL, 's'},     {NULL, 0, NULL, 0}};
    optind = 0; // restart getopt fully; argv[0] ("submit") stands for the program name
    s_submit_args_t a = {0};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == '?') {
            return cli_fail(CLI_EXIT_USAGE, "usage: " S_SUBMIT_USAGE);
        }
        a.wait |= c == 'w';
        a.timeout = c == 't' ? optarg : a.timeout;
        a.adaptive = c == 'a' ? optarg : a.adaptive;
        a.batch = c == 'b' ? optarg : a.batch;
        a.seed = c == 's' ? optarg : a.seed;
    }
    bool adaptive_only = (a.batch || a.seed) && !a.adaptive;
    if (optind != argc - 1 || (a.timeout && !a.wait && !a.adaptive) || adaptive_only) {
        return cli_fail(CLI_EXIT_USAGE, "usage: " S_SUBMIT_USAGE "%s",
                        adaptive_only ? " (--batch and --seed need --adaptive)"
                        : a.timeout && !a.wait && !a.adaptive ? " (--timeout needs --wait)"
                                                              : "");
    }
    if (a.adaptive) { // it waits for every round: --wait is implied
        return s_adaptive_args(ctx, &a, argv[optind]);
    }
    int64_t timeout_s = 0;
    jf_err_t err = {0};
    if (a.timeout && jf_parse_i64(a.timeout, 1, S_TIMEOUT_MAX_S, &timeout_s, &err) != 0) {
        return cli_fail(CLI_EXIT_USAGE, "--timeout '%s': %s", a.timeout, err.msg);
    }
    return s_submit(ctx, argv[optind], a.wait, timeout_s * JF_US_PER_S);
}

int cli_cmd_sweep(cli_ctx_t *ctx, int argc, char **argv)
{
    const char *verb = argc > 0 ? argv[0] : "";
    const char *arg = argc > 1 ? argv[1] : NULL;
    if (strcmp(verb, "list") == 0 && argc == 1) {
        return s_table(ctx, COORD_TABLE_SWEEPS, NULL, NULL);
    }
    if (strcmp(verb, "submit") == 0) {
        return s_submit_args(ctx, argc, argv);
    }
    if (argc != 2) {
        return cli_fail(CLI_EXIT_USAGE, "usage: jetfleet sweep plan FILE | " S_SUBMIT_USAGE
                                        " | list | show NAME | cancel NAME");
    }
    if (strcmp(verb, "plan") == 0) {
        return s_plan(ctx, arg);
    }
    if (strcmp(verb, "cancel") == 0) {
        return s_cancel(ctx, arg);
    }
    if (strcmp(verb, "show") == 0) {
        int rc = s_table(ctx, COORD_TABLE_SWEEPS, arg, NULL);
        return rc ? rc
                  : (putchar('\n'), cli_cmd_results(ctx, 2, (char *[]){"--sweep", (char *) arg}));
    }
    return cli_fail(CLI_EXIT_USAGE, "unknown sweep command '%s'", verb);
}
