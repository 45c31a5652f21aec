/* jetfleet rounds run FILE and jetfleet rounds show ID (docs/rounds.md "Execution", "Records"):
 * loads the rounds file, its boards and their plan (the planner of coord_rounds_plan.h; under
 * maxn a board without fitted models runs its fastest preset with all the local work), records
 * the rounds run and runs its rounds one after another (cli_rounds_round.c), replanning each
 * after the previous one's closed-loop correction (s_correct); show prints the
 * records as a table, CSV or JSON. The loop lives in this process, as `sweep submit --adaptive`
 * does: the coordinator only sees ordinary sweeps. */
#include "cli_rounds_exec.h"

#include "cli_table.h"
#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_RUN_USAGE   "usage: jetfleet rounds run FILE [--no-profile] [--profile-modes N]"
#define S_SHOW_USAGE  "usage: jetfleet rounds show ID [--boards] [--format text|csv|json]"
#define S_PROFILE_MAX 1000

static void s_exec_fini(cli_rounds_exec_t *x)
{
    coord_store_destroy(&x->store);
    coord_rounds_boards_free(&x->boards, x->n);
    free(x->choices);
    free(x->slots);
    free(x->specs);
    jf_rounds_destroy(&x->cfg);
}

// The mode name of a preset of the board.
static const char *s_mode_name(const jf_board_spec_t *spec, int id)
{
    for (size_t i = 0; i < spec->n_modes; i++) {
        if (spec->modes[i].id == id) {
            return spec->modes[i].name;
        }
    }
    return NULL;
}

// Maxn without fitted models: each board's fastest preset with all the local work; nothing is
// predicted (the records' pred_s and pred_j stay empty).
static int s_maxn_defaults(cli_rounds_exec_t *x, jf_err_t *err)
{
    for (size_t i = 0; i < x->n; i++) {
        const char *name = s_mode_name(x->specs[i], x->boards[i].maxn_mode_id);
        if (!name) {
            return jf_err_set(err, -EINVAL, "board '%s': no preset power mode to run maxn in",
                              x->specs[i]->name);
        }
        x->choices[i] = (coord_rounds_choice_t){.mode_id = x->boards[i].maxn_mode_id,
                                                .minibatches = x->cfg->local_count};
        (void) snprintf(x->choices[i].mode_name, sizeof x->choices[i].mode_name, "%s", name);
    }
    x->planned = false;
    return 0;
}

// The plan: the planner when every board has fitted models (boards without are profiled first
// unless profiling is off), else, under maxn only, the boards' fastest presets.
static int s_plan(cli_rounds_exec_t *x, bool profile, size_t profile_modes, jf_err_t *err)
{
    bool missing = false;
    for (size_t i = 0; i < x->n; i++) {
        missing = missing || x->boards[i].n_modes == 0;
    }
    if (missing && x->cfg->policy == JF_ROUNDS_MAXN) {
        printf("note: not every board has fitted models for %s: maxn runs each board's fastest "
               "preset with all the local work, without predictions\n",
               x->cfg->workload);
        return s_maxn_defaults(x, err);
    }
    for (size_t i = 0; missing && i < x->n; i++) {
        if (x->boards[i].n_modes > 0) {
            continue;
        }
        if (!profile) {
            return jf_err_set(err, -ENOENT,
                              "board '%s' has no fitted time and power models for %s (run "
                              "without --no-profile to profile it first)",
                              x->specs[i]->name, x->cfg->workload);
        }
        cli_rounds_profile_opts_t po = {.n = profile_modes};
        if (cli_rounds_profile(x->ctx, x->cfg, x->specs[i], &po) != CLI_EXIT_OK) {
            return jf_err_set(err, -EIO, "board '%s' could not be profiled", x->specs[i]->name);
        }
    }
    if (missing) {
        coord_rounds_boards_free(&x->boards, x->n);
        size_t n = 0;
        int rc = coord_rounds_boards_load(x->store, x->cfg, x->specs, x->n, &x->boards, &n, err);
        if (rc != 0) {
            return rc;
        }
    }
    x->planned = true;
    return coord_rounds_plan(x->cfg, x->boards, x->n, x->choices, err);
}

static int s_load(cli_rounds_exec_t *x, const char *file, jf_err_t *err)
{
    const jf_fleet_config_t *fleet = cli_ctx_fleet(x->ctx, err);
    // Written to (the rounds' records and blobs), so opened for writing: the store must exist.
    const char *path = x->ctx->store_path ? x->ctx->store_path
                       : fleet            ? fleet->coord.store_path
                                          : NULL;
    x->store = path ? cli_store_open(path, false, err) : NULL;
    if (!x->store) {
        return -EIO;
    }
    x->file = file;
    x->cfg = jf_rounds_load(file, err);
    int rc = x->cfg ? jf_rounds_resolve(x->cfg, fleet, &x->specs, &x->n, err) : -EINVAL;
    if (rc != 0) {
        return rc;
    }
    x->choices = calloc(x->n, sizeof *x->choices);
    x->slots = calloc(x->n, sizeof *x->slots);
    if (!x->choices || !x->slots) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < x->n; i++) {
        x->slots[i].spec = x->specs[i];
    }
    size_t n = 0;
    rc = coord_rounds_boards_load(x->store, x->cfg, x->specs, x->n, &x->boards, &n, err);
    return rc ? rc : 0;
}

static int s_begin(cli_rounds_exec_t *x, jf_err_t *err)
{
    coord_fl_rounds_t r = {.rounds = x->cfg->rounds,
                           .batch_size = x->cfg->batch_size,
                           .timeout_us = x->cfg->timeout_us};
    (void) snprintf(r.name, sizeof r.name, "%s", x->cfg->name);
    (void) snprintf(r.file, sizeof r.file, "%s", x->file);
    (void) snprintf(r.policy, sizeof r.policy, "%s", jf_rounds_policy_name(x->cfg->policy));
    (void) snprintf(r.straggler, sizeof r.straggler, "%s",
                    jf_rounds_straggler_name(x->cfg->straggler));
    (void) snprintf(r.workload, sizeof r.workload, "%s", x->cfg->workload);
    int rc = coord_store_fl_rounds_begin(x->store, &r, &x->id, err);
    if (rc == 0) {
        printf("rounds_id=%lld name=%s policy=%s straggler=%s boards=%zu rounds=%lld "
               "timeout_s=%.1f\n",
               (long long) x->id, r.name, r.policy, r.straggler, x->n, (long long) r.rounds,
               (double) r.timeout_us / (double) JF_US_PER_S);
        for (size_t i = 0; i < x->n; i++) {
            const coord_rounds_board_t *b = &x->boards[i];
            double warmup_s = x->planned ? b->modes[x->choices[i].mode].warmup_s : 0.0;
            printf("plan board=%s mode=%s minibatches=%lld pred_s=%.3f pred_j=%.3f warmup_s=%.3f "
                   "warmup_ghz_s=%.4f warmup_runs=%zu error_s=%.3f%s\n",
                   x->specs[i]->name, x->choices[i].mode_name,
                   (long long) x->choices[i].minibatches, x->planned ? x->choices[i].pred_s : 0.0,
                   x->planned ? x->choices[i].pred_j : 0.0, warmup_s, b->warmup_ghz_s,
                   b->warmup_runs, b->error_s, x->planned ? "" : " (no prediction)");
        }
    }
    return rc;
}

// Closed-loop correction (docs/rounds.md "Closed-loop correction"): each board that finished the
// round corrects its mode table by its measured time against the plan's prediction, and the next
// round is planned again from the corrected tables. Only when the plan came from the planner.
static int s_correct(cli_rounds_exec_t *x, int64_t round, jf_err_t *err)
{
    if (!x->planned) {
        return 0;
    }
    for (size_t i = 0; i < x->n; i++) {
        const coord_fl_board_t *b = &x->slots[i].rec;
        if (strcmp(b->status, "in") != 0) {
            continue; // no measurement: the board keeps its correction
        }
        int64_t bs = x->cfg->batch_size;
        int64_t trained_m = (b->samples + bs - 1) / bs;
        double ratio = coord_rounds_correct(&x->boards[i], &x->choices[i], trained_m, b->finish_s);
        printf("correction round=%lld board=%s pred_s=%.3f finish_s=%.3f minibatches=%lld "
               "trained_minibatches=%lld ratio=%.4f time_scale=%.4f error_s=%.3f\n",
               (long long) round, x->specs[i]->name, x->choices[i].pred_s, b->finish_s,
               (long long) x->choices[i].minibatches, (long long) trained_m, ratio,
               x->boards[i].time_scale, x->boards[i].error_s);
    }
    int rc = coord_rounds_plan(x->cfg, x->boards, x->n, x->choices, err);
    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        printf("plan round=%lld board=%s mode=%s minibatches=%lld pred_s=%.3f pred_j=%.3f\n",
               (long long) round + 1, x->specs[i]->name, x->choices[i].mode_name,
               (long long) x->choices[i].minibatches, x->choices[i].pred_s, x->choices[i].pred_j);
    }
    return rc;
}

static int s_parse_run(int argc, char **argv, const char **ret_file, bool *ret_profile,
                       size_t *ret_modes)
{
    static const struct option opts[] = {{"no-profile", no_argument, NULL, 'n'},
                                         {"profile-modes", required_argument, NULL, 'm'},
                                         {NULL, 0, NULL, 0}};
    optind = 0; // argv[0] ("run") stands for the program name
    *ret_profile = true;
    *ret_modes = CLI_ROUNDS_PROFILE_MODES;
    int64_t v = 0;
    jf_err_t err = {0};
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        if (c == 'n') {
            *ret_profile = false;
        } else if (c == 'm' && jf_parse_i64(optarg, 1, S_PROFILE_MAX, &v, &err) == 0) {
            *ret_modes = (size_t) v;
        } else {
            return cli_fail(CLI_EXIT_USAGE, c == 'm' ? "--profile-modes '%s': %s" : "%s%s",
                            c == 'm' ? optarg : S_RUN_USAGE, c == 'm' ? err.msg : "");
        }
    }
    if (optind != argc - 1) {
        return cli_fail(CLI_EXIT_USAGE, S_RUN_USAGE);
    }
    *ret_file = argv[optind];
    return CLI_EXIT_OK;
}

int cli_rounds_run(cli_ctx_t *ctx, int argc, char **argv)
{
    const char *file = NULL;
    bool profile = true;
    size_t modes = 0;
    int code = s_parse_run(argc, argv, &file, &profile, &modes);
    if (code != CLI_EXIT_OK) {
        return code;
    }
    cli_rounds_exec_t x = {.ctx = ctx};
    jf_err_t err = {0};
    int rc = s_load(&x, file, &err);
    if (rc == -EINVAL) {
        s_exec_fini(&x);
        return cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
    }
    rc = rc ? rc : s_plan(&x, profile, modes, &err);
    rc = rc ? rc : s_begin(&x, &err);
    for (int64_t r = 1; rc == 0 && r <= x.cfg->rounds; r++) {
        rc = cli_rounds_round(&x, r, &err);
        rc = rc == 0 && r < x.cfg->rounds ? s_correct(&x, r, &err) : rc;
    }
    if (x.id > 0) {
        jf_err_t end_err = {0};
        if (coord_store_fl_rounds_end(x.store, x.id, rc ? "failed" : "done", rc ? err.msg : NULL,
                                      &end_err) != 0) {
            rc = rc ? rc : -EIO;
            err = rc == -EIO ? end_err : err;
        }
    }
    if (rc == 0) {
        printf("rounds_id=%lld done weights=%s\n", (long long) x.id,
               x.weights[0] ? x.weights : "-");
    }
    s_exec_fini(&x);
    return rc ? cli_fail(CLI_EXIT_ERROR, "rounds run: %s", err.msg) : CLI_EXIT_OK;
}

static int s_parse_show(int argc, char **argv, int64_t *ret_id, bool *ret_boards,
                        cli_format_t *ret_format)
{
    static const struct option opts[] = {{"boards", no_argument, NULL, 'b'},
                                         {"format", required_argument, NULL, 'f'},
                                         {NULL, 0, NULL, 0}};
    optind = 0;
    *ret_boards = false;
    *ret_format = CLI_FORMAT_TEXT;
    for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
        bool ok =
            c == 'b' || (c == 'f' && (strcmp(optarg, "text") == 0 || strcmp(optarg, "csv") == 0 ||
                                      strcmp(optarg, "json") == 0));
        if (!ok) {
            return cli_fail(CLI_EXIT_USAGE, S_SHOW_USAGE);
        }
        *ret_boards = *ret_boards || c == 'b';
        if (c == 'f') {
            *ret_format = strcmp(optarg, "csv") == 0    ? CLI_FORMAT_CSV
                          : strcmp(optarg, "json") == 0 ? CLI_FORMAT_JSON
                                                        : CLI_FORMAT_TEXT;
        }
    }
    jf_err_t err = {0};
    if (optind != argc - 1 || jf_parse_i64(argv[optind], 1, INT64_MAX, ret_id, &err) != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_SHOW_USAGE);
    }
    return CLI_EXIT_OK;
}

// Collects the board rows whose run trained fewer minibatches than the plan asked (its shard
// held fewer), as note lines; the rows themselves go on to the table, if any.
typedef struct s_short {
    cli_table_t *table; // borrowed; NULL: notes only
    FILE *notes;        // owned memstream of the note lines
    char *text;         // its buffer
    size_t size;
} s_short_t;

static int s_short_row(int ncols, const char *const *names, const char *const *values,
                       const coord_value_kind_t *kinds, void *arg)
{
    s_short_t *sh = arg;
    const char *v[5] = {NULL};
    static const char *const cols[5] = {"round", "board", "minibatches", "trained_minibatches",
                                        "rounds"};
    for (int i = 0; i < ncols; i++) {
        for (int c = 0; c < 5; c++) {
            v[c] = strcmp(names[i], cols[c]) == 0 ? values[i] : v[c];
        }
    }
    if (v[2] && v[3] && strcmp(v[2], v[3]) != 0) {
        (void) fprintf(sh->notes,
                       "note: rounds %s round %s: board '%s' trained %s of the %s minibatches "
                       "asked (its shard holds fewer; docs/rounds.md \"Execution\")\n",
                       v[4] ? v[4] : "?", v[0] ? v[0] : "?", v[1] ? v[1] : "?", v[3], v[2]);
    }
    return sh->table ? cli_table_add_row(ncols, names, values, kinds, sh->table) : 0;
}

int cli_rounds_write_boards(coord_store_t *store, const char *key, cli_format_t format, FILE *out,
                            FILE *notes, jf_err_t *err)
{
    s_short_t sh = {.table = cli_table_new(NULL)};
    sh.notes = open_memstream(&sh.text, &sh.size);
    int rc = sh.table && sh.notes ? 0 : jf_err_set(err, -ENOMEM, "out of memory");
    rc = rc ? rc
            : coord_store_select(store, COORD_TABLE_FL_BOARDS, key, NULL, s_short_row, &sh, err);
    if (rc != 0 && sh.table && cli_table_error(sh.table)[0]) {
        jf_err_set(err, rc, "%s", cli_table_error(sh.table));
    }
    if (rc == 0 && cli_table_write(sh.table, format, out) != 0) {
        rc = jf_err_set(err, -EIO, "rounds: writing the table failed");
    }
    if (sh.notes && fclose(sh.notes) != 0) {
        rc = rc ? rc : jf_err_set(err, -ENOMEM, "out of memory");
    }
    if (rc == 0 && notes && sh.text) {
        (void) fputs(sh.text, notes);
    }
    free(sh.text);
    cli_table_destroy(&sh.table);
    return rc;
}

// The rounds of a rounds run as a table; the notes of its boards that trained fewer
// minibatches than asked go to notes (NULL: none).
static int s_write_rounds(coord_store_t *store, const char *key, cli_format_t format, FILE *notes,
                          jf_err_t *err)
{
    cli_table_t *table = cli_table_new(NULL);
    int rc = table ? coord_store_select(store, COORD_TABLE_FL_ROUNDS, key, NULL, cli_table_add_row,
                                        table, err)
                   : jf_err_set(err, -ENOMEM, "out of memory");
    if (rc == 0 && cli_table_write(table, format, stdout) != 0) {
        rc = jf_err_set(err, -EIO, "rounds: writing the table failed");
    }
    cli_table_destroy(&table);
    if (rc == 0 && notes) {
        s_short_t sh = {0};
        sh.notes = open_memstream(&sh.text, &sh.size);
        rc = sh.notes ? coord_store_select(store, COORD_TABLE_FL_BOARDS, key, NULL, s_short_row,
                                           &sh, err)
                      : jf_err_set(err, -ENOMEM, "out of memory");
        if (sh.notes && fclose(sh.notes) == 0 && rc == 0 && sh.text) {
            (void) fputs(sh.text, notes);
        }
        free(sh.text);
    }
    return rc;
}

int cli_rounds_show(cli_ctx_t *ctx, int argc, char **argv)
{
    int64_t id = 0;
    bool boards = false;
    cli_format_t format = CLI_FORMAT_TEXT;
    int code = s_parse_show(argc, argv, &id, &boards, &format);
    if (code != CLI_EXIT_OK) {
        return code;
    }
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    char key[24];
    (void) snprintf(key, sizeof key, "%lld", (long long) id);
    // Notes only with the text table: CSV and JSON on stdout are data only.
    FILE *notes = format == CLI_FORMAT_TEXT ? stdout : NULL;
    int rc = store ? coord_store_fl_rounds_exists(store, id, &err) : -EIO;
    rc = rc       ? rc
         : boards ? cli_rounds_write_boards(store, key, format, stdout, notes, &err)
                  : s_write_rounds(store, key, format, notes, &err);
    if (rc == 0 && format == CLI_FORMAT_TEXT) {
        printf("(simulated = 1: times and energy are the simulator's modelled figures; "
               "docs/rounds.md \"Records\")\n");
    }
    return rc ? cli_fail(rc == -ENOENT ? CLI_EXIT_USAGE : CLI_EXIT_ERROR, "rounds show: %s",
                         err.msg)
              : CLI_EXIT_OK;
}
