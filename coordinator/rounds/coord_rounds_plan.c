/* The rounds planner's policies over mode tables (coord_rounds_plan.h; docs/rounds.md
 * "Planning"): maxn, equal-finish and deadline, each with the power budgets. A pure computation;
 * the tables come from coord_rounds_boards.c. */
#include "coord_rounds_plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A candidate: a mode and a minibatch count, with its finish time (s).
typedef struct s_cand {
    size_t mode;
    int64_t m;
    double finish_s;
} s_cand_t;

static bool s_allowed(const coord_rounds_board_t *b, const coord_rounds_mode_t *mode)
{
    return b->budget_w <= 0.0 || mode->power_w <= b->budget_w;
}

// The board's local minibatches per round.
static int s_local_m(const jf_rounds_t *cfg, const coord_rounds_board_t *b, int64_t *ret_m,
                     jf_err_t *err)
{
    if (cfg->local_unit == JF_ROUNDS_MINIBATCHES) {
        *ret_m = cfg->local_count;
        return 0;
    }
    if (b->minibatches_per_epoch <= 0) {
        return jf_err_set(err, -EINVAL,
                          "board '%s': local work is given in epochs, but the minibatches per "
                          "epoch of %s at batch size %d are not known from its measured runs",
                          b->name, cfg->workload, cfg->batch_size);
    }
    *ret_m = cfg->local_count * b->minibatches_per_epoch;
    return 0;
}

// Local work beyond the board's shard is not trained (its epoch ends): no plan counts on it.
static int64_t s_cap_m(const coord_rounds_board_t *b, int64_t m)
{
    return b->max_minibatches > 0 && m > b->max_minibatches ? b->max_minibatches : m;
}

// The board's fastest allowed mode (ties: the lower power), or an error naming the board.
static int s_fastest(const coord_rounds_board_t *b, size_t *ret_k, jf_err_t *err)
{
    if (b->n_modes == 0) {
        return jf_err_set(err, -EINVAL,
                          "board '%s' has no fitted time and power models for the "
                          "workload (profile it first)",
                          b->name);
    }
    bool found = false;
    double lowest_w = INFINITY;
    for (size_t k = 0; k < b->n_modes; k++) {
        const coord_rounds_mode_t *md = &b->modes[k];
        lowest_w = fmin(lowest_w, md->power_w);
        if (!s_allowed(b, md)) {
            continue;
        }
        const coord_rounds_mode_t *best = found ? &b->modes[*ret_k] : NULL;
        if (!best || md->minibatch_s < best->minibatch_s ||
            (md->minibatch_s == best->minibatch_s && md->power_w < best->power_w)) {
            *ret_k = k;
            found = true;
        }
    }
    if (!found) {
        return jf_err_set(err, -EINVAL,
                          "board '%s': no mode within its power budget of %.3g W (the lowest "
                          "predicted power is %.3g W)",
                          b->name, b->budget_w, lowest_w);
    }
    return 0;
}

// Energy of a candidate when the round ends at end_s: training plus idle until the end.
static double s_energy(const coord_rounds_board_t *b, const s_cand_t *c, double end_s)
{
    const coord_rounds_mode_t *md = &b->modes[c->mode];
    double wait = end_s > c->finish_s ? end_s - c->finish_s : 0.0;
    return c->finish_s * md->power_w + b->idle_w * wait;
}

// A round's run is one warm-up epoch: its fixed cost, then m minibatches.
static s_cand_t s_cand(const coord_rounds_board_t *b, size_t k, int64_t m)
{
    return (s_cand_t){
        .mode = k, .m = m, .finish_s = b->modes[k].warmup_s + (double) m * b->modes[k].minibatch_s};
}

// The most minibatches of mode k that finish by by_s (at least 0).
static int64_t s_m_by(const coord_rounds_board_t *b, size_t k, double by_s)
{
    double m = floor((by_s - b->modes[k].warmup_s) / b->modes[k].minibatch_s);
    return m > 0.0 ? (int64_t) m : 0;
}

// The least-energy allowed candidate with m minibatches (or, when m_for_lo, the fewest that
// reach lo_s) finishing within [lo_s, hi_s], energy counted to end_s. false when none.
static bool s_best_in(const coord_rounds_board_t *b, int64_t m, bool m_for_lo, double lo_s,
                      double hi_s, double end_s, s_cand_t *ret)
{
    bool found = false;
    double best_j = INFINITY;
    for (size_t k = 0; k < b->n_modes; k++) {
        if (!s_allowed(b, &b->modes[k])) {
            continue;
        }
        s_cand_t c = s_cand(b, k, m);
        if (m_for_lo && c.finish_s < lo_s) {
            double m_lo = ceil((lo_s - b->modes[k].warmup_s) / b->modes[k].minibatch_s);
            c = s_cand(b, k, s_cap_m(b, (int64_t) m_lo));
        }
        double j = s_energy(b, &c, end_s);
        if (c.finish_s >= lo_s && c.finish_s <= hi_s && j < best_j) {
            *ret = c;
            best_j = j;
            found = true;
        }
    }
    return found;
}

static void s_fill_choice(const coord_rounds_board_t *b, const s_cand_t *c, bool meets,
                          coord_rounds_choice_t *ret)
{
    const coord_rounds_mode_t *md = &b->modes[c->mode];
    *ret = (coord_rounds_choice_t){
        .mode = c->mode,
        .mode_id = md->mode_id,
        .custom = md->custom,
        .op = md->op,
        .minibatches = c->m,
        .pred_s = c->finish_s,
        .meets = meets,
    };
    snprintf(ret->mode_name, sizeof ret->mode_name, "%s", md->mode);
}

// Once every board has its candidate: the waits and energies to the round's end (the latest
// finish).
static void s_settle(const coord_rounds_board_t *boards, const s_cand_t *cands, size_t n,
                     coord_rounds_choice_t *choices)
{
    double end_s = 0.0;
    for (size_t i = 0; i < n; i++) {
        end_s = fmax(end_s, cands[i].finish_s);
    }
    for (size_t i = 0; i < n; i++) {
        choices[i].wait_s = end_s - cands[i].finish_s;
        choices[i].pred_j = s_energy(&boards[i], &cands[i], end_s);
    }
}

// The choice the board's last round measured, when it is allowed and still finishes within
// [lo_s, hi_s] as corrected: after the closed-loop correction its prediction is that round's
// measurement, so keeping it keeps the board's error at its repeat-to-repeat noise, where a new
// mode or count carries the models' error again (docs/rounds.md "Closed-loop correction").
static bool s_keep_last(const coord_rounds_board_t *b, double lo_s, double hi_s, s_cand_t *ret)
{
    if (!b->has_last || b->last_mode >= b->n_modes || b->last_m <= 0 ||
        !s_allowed(b, &b->modes[b->last_mode])) {
        return false;
    }
    s_cand_t c = s_cand(b, b->last_mode, s_cap_m(b, b->last_m));
    if (c.finish_s < lo_s || c.finish_s > hi_s) {
        return false;
    }
    *ret = c;
    return true;
}

// Equal-finish for one board: the round ends at t_s (the slowest board's fastest time); the
// board's window is [lo_s, t_s]. The last round's choice while it stays in the window; else the
// configured m in the window; else more minibatches to reach it (up to the shard's); else (a
// minibatch longer than the window) the latest finish not after t_s.
static bool s_equal_one(const coord_rounds_board_t *b, int64_t m, size_t fastest, double t_s,
                        double lo_s, s_cand_t *ret)
{
    if (s_keep_last(b, lo_s, t_s, ret) || s_best_in(b, m, false, lo_s, t_s, t_s, ret) ||
        s_best_in(b, m, true, lo_s, t_s, t_s, ret)) {
        return true;
    }
    *ret = s_cand(b, fastest, m);
    for (size_t k = 0; k < b->n_modes; k++) {
        if (!s_allowed(b, &b->modes[k])) {
            continue;
        }
        int64_t mk = s_cap_m(b, s_m_by(b, k, t_s));
        s_cand_t c = s_cand(b, k, mk > m ? mk : m);
        if (c.finish_s <= t_s && c.finish_s > ret->finish_s) {
            *ret = c;
        }
    }
    return false;
}

// The deadline policy's inputs, shared by its trials.
typedef struct s_dl {
    const coord_rounds_board_t *boards; // n
    size_t n;
    const int64_t *m;     // each board's minibatches
    const s_cand_t *fast; // each board's fastest allowed candidate
    const bool *meets;    // the fastest finishes by the deadline
    double dl_s;          // the deadline
} s_dl_t;

// One trial round end r_s: each board that meets the deadline takes its least-energy candidate
// finishing by min(r_s, deadline); the others keep their fastest. The total energy to the latest
// finish, INFINITY when a board has no candidate finishing in time.
static double s_deadline_trial(const s_dl_t *d, double r_s, s_cand_t *trial)
{
    double end_s = 0.0;
    for (size_t i = 0; i < d->n; i++) {
        trial[i] = d->fast[i];
        double by_s = fmin(r_s, d->dl_s);
        if (d->meets[i] && !s_best_in(&d->boards[i], d->m[i], false, 0.0, by_s, r_s, &trial[i])) {
            return INFINITY;
        }
        end_s = fmax(end_s, trial[i].finish_s);
    }
    double j = 0.0;
    for (size_t i = 0; i < d->n; i++) {
        j += s_energy(&d->boards[i], &trial[i], end_s);
    }
    return j;
}

// Deadline, exact: every board that can finishes by the deadline; the round ends at the latest
// finish R (at least the latest fastest finish of the boards that cannot meet it). For each
// candidate R (every finish time a board can have), each board takes its least-energy mode
// finishing by R (and by the deadline); the cheapest R wins. Boards' energies are evaluated to the
// end their choices give (never later than R), so the optimum is among the candidates.
static int s_deadline(const jf_rounds_t *cfg, const coord_rounds_board_t *boards, size_t n,
                      const int64_t *m, const size_t *fastest, s_cand_t *cands, bool *meets)
{
    double dl_s = (double) cfg->deadline_us / 1e6;
    double floor_s = 0.0;
    s_cand_t *fast = calloc(n ? n : 1, sizeof *fast);
    s_cand_t *trial = calloc(n ? n : 1, sizeof *trial);
    if (!fast || !trial) {
        free(fast);
        free(trial);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        fast[i] = cands[i] = s_cand(&boards[i], fastest[i], m[i]);
        meets[i] = fast[i].finish_s <= dl_s;
        floor_s = meets[i] ? floor_s : fmax(floor_s, fast[i].finish_s);
    }
    s_dl_t d = {.boards = boards, .n = n, .m = m, .fast = fast, .meets = meets, .dl_s = dl_s};
    double best_j = INFINITY;
    for (size_t bi = 0; bi < n; bi++) {
        for (size_t k = 0; k < boards[bi].n_modes; k++) {
            double r_s = s_cand(&boards[bi], k, m[bi]).finish_s;
            bool in = r_s >= floor_s && r_s <= fmax(dl_s, floor_s);
            double j = in && s_allowed(&boards[bi], &boards[bi].modes[k])
                           ? s_deadline_trial(&d, r_s, trial)
                           : INFINITY;
            if (j < best_j) {
                best_j = j;
                memcpy(cands, trial, n * sizeof *trial);
            }
        }
    }
    free(trial);
    free(fast);
    return 0;
}

// Each board's minibatch count and fastest allowed mode.
static int s_prepare(const jf_rounds_t *cfg, const coord_rounds_board_t *boards, size_t n,
                     int64_t *m, size_t *fastest, jf_err_t *err)
{
    for (size_t i = 0; i < n; i++) {
        if (s_local_m(cfg, &boards[i], &m[i], err) != 0 ||
            s_fastest(&boards[i], &fastest[i], err) != 0) {
            return -EINVAL;
        }
        m[i] = s_cap_m(&boards[i], m[i]);
    }
    return 0;
}

// The lower edge of board b's equal-finish window (docs/rounds.md "equal-finish"): with every
// board's finish off by at most its error_s, the latest measured finish is at most t_s + err_max
// and b's at least its predicted finish - b->error_s, so the measured spread stays within spread
// when b's prediction is at least (1 - spread) (t_s + err_max) + b->error_s. The margin takes at
// most half the window: the edge never rises above its middle, t_s (1 - spread / 2).
static double s_window_lo(const coord_rounds_board_t *b, double t_s, double spread, double err_max)
{
    double lo_s = (1.0 - spread) * (t_s + err_max) + b->error_s;
    return fmin(lo_s, t_s * (1.0 - spread / 2.0));
}

static void s_policy_cands(const jf_rounds_t *cfg, const coord_rounds_board_t *boards, size_t n,
                           const int64_t *m, const size_t *fastest, s_cand_t *cands, bool *meets)
{
    double t_s = 0.0, err_max = 0.0;
    for (size_t i = 0; i < n; i++) {
        cands[i] = s_cand(&boards[i], fastest[i], m[i]);
        meets[i] = true;
        t_s = fmax(t_s, cands[i].finish_s);
        err_max = fmax(err_max, boards[i].error_s);
    }
    if (cfg->policy == JF_ROUNDS_EQUAL_FINISH) {
        for (size_t i = 0; i < n; i++) {
            double lo_s = s_window_lo(&boards[i], t_s, cfg->spread_pct / 100.0, err_max);
            meets[i] = s_equal_one(&boards[i], m[i], fastest[i], t_s, lo_s, &cands[i]);
        }
    }
}

int coord_rounds_plan(const jf_rounds_t *cfg, const coord_rounds_board_t *boards, size_t n,
                      coord_rounds_choice_t *ret_choices, jf_err_t *err)
{
    if (cfg->policy == JF_ROUNDS_DEADLINE && cfg->deadline_us <= 0) {
        return jf_err_set(err, -EINVAL, "%s: policy deadline without a deadline", cfg->source);
    }
    int64_t *m = calloc(n ? n : 1, sizeof *m);
    size_t *fastest = calloc(n ? n : 1, sizeof *fastest);
    s_cand_t *cands = calloc(n ? n : 1, sizeof *cands);
    bool *meets = calloc(n ? n : 1, sizeof *meets);
    int rc = m && fastest && cands && meets ? 0 : jf_err_set(err, -ENOMEM, "plan: out of memory");
    rc = rc ? rc : s_prepare(cfg, boards, n, m, fastest, err);
    if (rc == 0 && cfg->policy == JF_ROUNDS_DEADLINE) {
        rc = s_deadline(cfg, boards, n, m, fastest, cands, meets);
        rc = rc ? jf_err_set(err, rc, "plan: out of memory") : 0;
    } else if (rc == 0) {
        s_policy_cands(cfg, boards, n, m, fastest, cands, meets);
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        s_fill_choice(&boards[i], &cands[i], meets[i], &ret_choices[i]);
    }
    if (rc == 0) {
        s_settle(boards, cands, n, ret_choices);
    }
    free(meets);
    free(cands);
    free(fastest);
    free(m);
    return rc;
}

void coord_rounds_summarise(const coord_rounds_choice_t *choices, size_t n,
                            coord_rounds_summary_t *ret)
{
    coord_rounds_summary_t s = {0};
    double first_s = INFINITY;
    for (size_t i = 0; i < n; i++) {
        s.round_s = fmax(s.round_s, choices[i].pred_s);
        first_s = fmin(first_s, choices[i].pred_s);
        s.energy_j += choices[i].pred_j;
        s.n_missed += choices[i].meets ? 0 : 1;
        s.minibatches += choices[i].minibatches;
    }
    s.spread_s = n ? s.round_s - first_s : 0.0;
    s.spread_pct = s.round_s > 0.0 ? 100.0 * s.spread_s / s.round_s : 0.0;
    *ret = s;
}

double coord_rounds_correct(coord_rounds_board_t *board, const coord_rounds_choice_t *planned,
                            int64_t trained_m, double measured_s)
{
    if (planned->mode >= board->n_modes) {
        return 1.0;
    }
    double w = board->modes[planned->mode].warmup_s, pred_s = planned->pred_s;
    int64_t planned_m = planned->minibatches;
    if (planned_m <= 0 || trained_m <= 0 || !(pred_s > w) || !isfinite(pred_s) ||
        !(measured_s > 0.0) || !isfinite(measured_s)) {
        return 1.0;
    }
    double pred_trained_s = w + (double) trained_m * (pred_s - w) / (double) planned_m;
    double ratio = measured_s / pred_trained_s;
    for (size_t k = 0; k < board->n_modes; k++) {
        board->modes[k].minibatch_s *= ratio;
        board->modes[k].warmup_s *= ratio;
    }
    board->warmup_ghz_s *= ratio;
    board->time_scale = (board->time_scale > 0.0 ? board->time_scale : 1.0) * ratio;
    // The first measurement replaces the warm-up's estimated error (coord_rounds_set_warmup);
    // after that the largest measured error stays.
    double e = fabs(measured_s - pred_trained_s);
    board->error_s = board->has_last ? fmax(board->error_s, e) : e;
    if (trained_m < planned_m) {
        board->max_minibatches = trained_m;
    }
    board->has_last = true;
    board->last_mode = planned->mode;
    board->last_m = trained_m;
    return ratio;
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

int coord_rounds_warmup_estimate(double *extra_s, const double *cpu_ghz, size_t n,
                                 double *ret_ghz_s, double *ret_rel_err)
{
    if (n == 0) {
        return -ENOENT;
    }
    for (size_t j = 0; j < n; j++) {
        extra_s[j] *= cpu_ghz[j];
    }
    qsort(extra_s, n, sizeof *extra_s, s_cmp_double);
    double median = n % 2 ? extra_s[n / 2] : (extra_s[n / 2 - 1] + extra_s[n / 2]) / 2.0;
    if (!(median > 0.0) || !isfinite(median)) {
        return -ENOENT;
    }
    *ret_ghz_s = median;
    *ret_rel_err = fmax(median - extra_s[0], extra_s[n - 1] - median) / median;
    return 0;
}

void coord_rounds_set_warmup(coord_rounds_board_t *board, double ghz_s, double rel_err)
{
    double largest_s = 0.0;
    for (size_t k = 0; k < board->n_modes; k++) {
        coord_rounds_mode_t *md = &board->modes[k];
        md->warmup_s = md->op.cpu_hz > 0 ? ghz_s / ((double) md->op.cpu_hz / 1e9) : 0.0;
        largest_s = fmax(largest_s, md->warmup_s);
    }
    board->warmup_ghz_s = ghz_s;
    board->error_s = rel_err * largest_s;
}
