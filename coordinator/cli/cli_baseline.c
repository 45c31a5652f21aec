/* Stored idle baselines in the CLI (cli_baseline.h, docs/baseline.md). */
#include "cli_baseline.h"

#include "cli_cmds.h"
#include "cli_table.h"
#include "coord_store_baseline.h"
#include "jf_board_idle.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_ROWS_MAX 256 // phases kept per cache (a baseline has 8 per board)
#define S_SIM_NOTE                                                                                 \
    "rows with source simulated are the simulator's idle model (docs/baseline.md), not measured"

struct cli_baseline {
    coord_store_t *store;             // borrowed
    size_t n_rows;                    // entries used in rows
    coord_baseline_row_t *rows;       // owned: every loaded board's phases
    size_t n_boards;                  // boards loaded (their names in loaded)
    char (*loaded)[JF_IDENT_MAX + 1]; // owned
};

typedef struct s_collect {
    coord_baseline_row_t *rows; // borrowed
    size_t n, cap;
} s_collect_t;

static int s_collect(const coord_baseline_row_t *row, void *arg)
{
    s_collect_t *c = arg;
    if (c->n == c->cap) {
        return -ENOSPC;
    }
    c->rows[c->n++] = *row;
    return 0;
}

// The phase of rows matching (power, dvfs_off, telemetry_off), or NULL.
static const coord_baseline_row_t *s_find(const coord_baseline_row_t *rows, size_t n,
                                          const char *power, bool telemetry_off)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].power, power) == 0 && rows[i].telemetry_off == telemetry_off &&
            rows[i].has_power) {
            return &rows[i];
        }
    }
    return NULL;
}

static void s_print_row(const coord_baseline_row_t *r)
{
    char tel[32], mw[32];
    (void) snprintf(tel, sizeof tel, r->telemetry_off ? "off (ends)" : "%d Hz", r->telemetry_hz);
    (void) snprintf(mw, sizeof mw, r->has_power ? "%.1f" : "", r->idle_power_mw);
    printf("%-32s %-9s %-11s %10s %8lld %-14s %s\n", r->power, r->dvfs_off ? "off" : "on", tel, mw,
           (long long) r->samples, r->source[0] ? r->source : "(no power)", r->run);
}

// The name=value lines: each a difference of two stored phases, printed only when both are.
static void s_summary(const coord_baseline_row_t *rows, size_t n, const char *def, const char *low)
{
    char def_off[JF_RUN_POWER_LABEL_MAX + 16];
    (void) snprintf(def_off, sizeof def_off, "%s +dvfs-off", def);
    const coord_baseline_row_t *on = s_find(rows, n, def, false);
    const coord_baseline_row_t *quiet = s_find(rows, n, def, true);
    const coord_baseline_row_t *pinned = s_find(rows, n, def_off, false);
    const coord_baseline_row_t *lowest = low ? s_find(rows, n, low, true) : NULL;
    if (on) {
        printf("idle_mw=%.1f\n", on->idle_power_mw);
    }
    if (on && pinned) {
        printf("dvfs_off_cost_mw=%.1f\n", pinned->idle_power_mw - on->idle_power_mw);
    }
    if (on && quiet) {
        printf("telemetry_cost_mw=%.1f\n", on->idle_power_mw - quiet->idle_power_mw);
    }
    if (lowest) {
        printf("lowest_idle_mw=%.1f\n", lowest->idle_power_mw);
    }
    if (lowest && quiet) {
        printf("lowest_saving_mw=%.1f\n", quiet->idle_power_mw - lowest->idle_power_mw);
    }
}

// The board's default and lowest-power mode names from fleet.yaml (as jetfleet baseline chose
// them); "" when the fleet cannot be read or lacks the board.
static void s_modes(cli_ctx_t *ctx, const char *board, const char **ret_def, const char **ret_low)
{
    const jf_fleet_config_t *fleet = cli_ctx_fleet(ctx, NULL);
    const jf_board_spec_t *b = fleet ? jf_fleet_config_board(fleet, board) : NULL;
    *ret_def = *ret_low = "";
    for (size_t i = 0; b && i < b->n_modes; i++) {
        *ret_def = b->modes[i].id == jf_board_family(b->simulates)->default_mode_id ||
                           (i == 0 && !(*ret_def)[0])
                       ? b->modes[i].name
                       : *ret_def;
        *ret_low =
            b->modes[i].id == jf_board_lowest_mode_id(b->simulates) ? b->modes[i].name : *ret_low;
    }
}

int cli_baseline_show(cli_ctx_t *ctx, const char *board)
{
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    coord_baseline_row_t rows[S_ROWS_MAX];
    s_collect_t c = {.rows = rows, .cap = S_ROWS_MAX};
    if (!store || coord_store_baseline_each(store, board, s_collect, &c, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg[0] ? err.msg : "too many baseline phases");
    }
    if (c.n == 0) {
        return cli_fail(CLI_EXIT_ERROR,
                        "no idle baseline stored for board '%.200s': " CLI_BASELINE_MISSING_HINT,
                        board, board);
    }
    printf("idle baseline of board '%s': the newest idle run of each phase; idle_mw is the mean "
           "power over its idle time\n",
           board);
    printf("%-32s %-9s %-11s %10s %8s %-14s %s\n", "power", "dvfs", "telemetry", "idle_mw",
           "samples", "source", "run");
    bool sim = false;
    for (size_t i = 0; i < c.n; i++) {
        s_print_row(&rows[i]);
        sim |= strcmp(rows[i].source, "simulated") == 0;
    }
    const char *def = NULL, *low = NULL;
    s_modes(ctx, board, &def, &low);
    s_summary(rows, c.n, def, low[0] ? low : NULL);
    if (sim) {
        printf("%s\n", S_SIM_NOTE);
    }
    return CLI_EXIT_OK;
}

cli_baseline_t *cli_baseline_new(coord_store_t *store)
{
    cli_baseline_t *self = calloc(1, sizeof *self);
    if (self) {
        self->store = store;
        self->rows = calloc(S_ROWS_MAX, sizeof *self->rows);
        self->loaded = calloc(S_ROWS_MAX, sizeof *self->loaded);
    }
    if (self && (!self->rows || !self->loaded)) {
        cli_baseline_destroy(&self);
    }
    return self;
}

void cli_baseline_destroy(cli_baseline_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    free((*self_p)->rows);
    free((*self_p)->loaded);
    free(*self_p);
    *self_p = NULL;
}

static int s_load(cli_baseline_t *self, const char *board, jf_err_t *err)
{
    for (size_t i = 0; i < self->n_boards; i++) {
        if (strcmp(self->loaded[i], board) == 0) {
            return 0;
        }
    }
    if (self->n_boards == S_ROWS_MAX) {
        return jf_err_set(err, -ENOSPC, "baseline: more than %d boards", S_ROWS_MAX);
    }
    s_collect_t c = {.rows = self->rows + self->n_rows, .cap = S_ROWS_MAX - self->n_rows};
    int rc = coord_store_baseline_each(self->store, board, s_collect, &c, err);
    if (rc == -ENOSPC) {
        return jf_err_set(err, rc, "baseline: more than %d phases in all", S_ROWS_MAX);
    }
    self->n_rows += c.n;
    (void) snprintf(self->loaded[self->n_boards++], sizeof self->loaded[0], "%s", board);
    return rc;
}

int cli_baseline_idle_mw(cli_baseline_t *self, const char *board, const char *power, double *ret_mw,
                         jf_err_t *err)
{
    int rc = s_load(self, board, err);
    const coord_baseline_row_t *found = NULL;
    for (size_t i = 0; rc == 0 && !found && i < self->n_rows; i++) {
        found = strcmp(self->rows[i].board, board) == 0 ? s_find(&self->rows[i], 1, power, false)
                                                        : NULL;
    }
    if (rc == 0 && !found) {
        return jf_err_set(err, -ENOENT,
                          "no idle baseline with telemetry on stored for board '%.200s' at '%s': "
                          "" CLI_BASELINE_MISSING_HINT,
                          board, power, board);
    }
    if (rc == 0) {
        *ret_mw = found->idle_power_mw;
    }
    return rc;
}

// The value of column name in a row, or NULL.
static const char *s_col(int ncols, const char *const *names, const char *const *values,
                         const char *name)
{
    for (int i = 0; i < ncols; i++) {
        if (strcmp(names[i], name) == 0) {
            return values[i];
        }
    }
    return NULL;
}

// The row's idle power into idle (text, "" without) and its dynamic energy into dyn_text.
static int s_dynamic_cells(cli_baseline_dyn_t *d, int ncols, const char *const *names,
                           const char *const *values, char idle[32], char dyn_text[32])
{
    const char *board = s_col(ncols, names, values, "board");
    const char *power = s_col(ncols, names, values, "power");
    const char *energy = s_col(ncols, names, values, "energy_mj");
    const char *e2e = s_col(ncols, names, values, "e2e_s");
    double idle_mw = 0.0, e_mj = 0.0, t_s = 0.0;
    jf_err_t err = {0};
    int rc = board && power ? cli_baseline_idle_mw(d->base, board, power, &idle_mw, &err)
                            : jf_err_set(&err, -ENOENT, "rows without board and power columns");
    if (rc == -ENOENT) {
        d->n_no_base++;
        (void) snprintf(d->no_base, sizeof d->no_base, "%s", d->no_base[0] ? d->no_base : err.msg);
        return 0;
    }
    if (rc == 0) {
        (void) snprintf(idle, 32, "%.1f", idle_mw);
    }
    if (rc == 0 && energy && e2e && jf_parse_double(energy, -1e18, 1e18, &e_mj, NULL) == 0 &&
        jf_parse_double(e2e, 0, 1e18, &t_s, NULL) == 0) {
        (void) snprintf(dyn_text, 32, "%.1f", e_mj - idle_mw * t_s); // mW x s = mJ
        d->n_dynamic++;
    }
    return rc;
}

int cli_baseline_dynamic_row(int ncols, const char *const *names, const char *const *values,
                             const coord_value_kind_t *kinds, void *arg)
{
    cli_baseline_dyn_t *d = arg;
    if (ncols + 2 > CLI_BASELINE_COLS_MAX) {
        return -EINVAL;
    }
    const char *n2[CLI_BASELINE_COLS_MAX], *v2[CLI_BASELINE_COLS_MAX];
    coord_value_kind_t k2[CLI_BASELINE_COLS_MAX];
    memcpy(n2, names, (size_t) ncols * sizeof *names);
    memcpy(v2, values, (size_t) ncols * sizeof *values);
    memcpy(k2, kinds, (size_t) ncols * sizeof *kinds);
    char idle[32] = "", dyn[32] = "";
    int rc = s_dynamic_cells(d, ncols, names, values, idle, dyn);
    n2[ncols] = "idle_mw";
    v2[ncols] = idle[0] ? idle : NULL;
    k2[ncols] = idle[0] ? COORD_VALUE_REAL : COORD_VALUE_NULL;
    n2[ncols + 1] = "dynamic_energy_mj";
    v2[ncols + 1] = dyn[0] ? dyn : NULL;
    k2[ncols + 1] = dyn[0] ? COORD_VALUE_REAL : COORD_VALUE_NULL;
    return rc != 0 ? rc : d->fn(ncols + 2, n2, v2, k2, d->arg);
}

void cli_baseline_dynamic_footer(const cli_baseline_dyn_t *dyn, FILE *out)
{
    (void) fprintf(out,
                   "dynamic_energy_mj = energy_mj - idle_mw x e2e_s: the idle baseline (telemetry "
                   "on, at the run's power setting; jetfleet baseline show) subtracted "
                   "(docs/baseline.md)\n");
    if (dyn->n_no_base > 0 && dyn->n_dynamic > 0) {
        (void) fprintf(out, "%zu rows have no dynamic energy: %s\n", dyn->n_no_base, dyn->no_base);
    }
}

int cli_baseline_dynamic_check(const cli_baseline_dyn_t *dyn, jf_err_t *err)
{
    return dyn->n_no_base > 0 && dyn->n_dynamic == 0
               ? jf_err_set(err, -ENOENT, "no dynamic energy: %s", dyn->no_base)
               : 0;
}
