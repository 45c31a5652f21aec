/* jetfleet-train --simulate (train_sim.h): the run's inputs resolved against the model's
 * parameters, then per epoch the model's figures spread over minibatch records and paced on the
 * monotonic clock. The model (agent/sim) decides every time and power; this file only draws the
 * minibatches around its means, keeps the page cache going between epochs and writes records. */
#include "train_sim.h"

#include "jf_board.h"
#include "jf_parse.h"
#include "jf_rng.h"
#include "jf_run_spec.h"
#include "jf_units.h"
#include "sim_model.h"
#include "train_records.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

// The minibatch draws of epoch e use rng stream S_DRAW_STREAM | e of the run seed, apart from the
// model's own noise streams (e + 1) and the real loader's.
#define S_DRAW_STREAM UINT64_C(0x53494d0000000000) // "SIM" in the top bytes
#define S_NS_PER_US   1000

_Static_assert(TRAIN_SIM_SCALE_MAX == SIM_DATASET_SCALE_MAX, "--sim-scale range is the model's");
_Static_assert(TRAIN_RECORDS_RAILS_MAX >= SIM_RAILS_MAX, "records hold every rail of a board");

struct train_sim {
    train_run_opts_t opts;         // copy; strings borrowed from the caller
    FILE *out;                     // borrowed; record lines
    sim_model_t *model;            // owned
    jf_board_type_t board_type;    // the Jetson type simulated
    const sim_mode_params_t *mode; // borrowed from model: the power mode simulated
    sim_epoch_in_t in;             // the model's input; epoch and resident_fraction advance
    sim_epoch_out_t now;           // the current epoch, as the model gives it
    double now_resident;           // share of the dataset resident at the current epoch's start
    sim_epoch_out_t next;          // the next epoch, evaluated before the current one's line
    train_records_t *records;      // owned
    int64_t start_us;              // monotonic: when the run's start line went out
    int64_t modelled_us;           // modelled time of every minibatch written since then
    train_sim_learner_t learner;   // real training beside the model; step NULL: none
};

// Spreads a total over parts in proportion to weights that add up to weight_sum, by cumulative
// rounding: every part is >= 0 and, once every weight has been given, they add up to total_us.
typedef struct s_spread {
    int64_t total_us;  // what the parts add up to
    double weight_sum; // the sum of every weight that will be given
    double weight_cum; // weights given so far
    int64_t given_us;  // parts given so far
} s_spread_t;

static int64_t s_spread_next(s_spread_t *s, double weight)
{
    s->weight_cum += weight;
    double share = s->weight_sum > 0.0 ? fmin(1.0, s->weight_cum / s->weight_sum) : 1.0;
    int64_t upto = llround((double)s->total_us * share);
    int64_t part = upto - s->given_us;
    s->given_us = upto;
    return part;
}

// How one epoch's totals are spread over its minibatches.
typedef struct s_plan {
    int64_t emitted;  // minibatches written: all, or the first max_batches
    int64_t first_us; // stall of minibatch 0
    s_spread_t stall; // the later minibatches' stalls
    s_spread_t step;  // every minibatch's step
    bool even_stall;  // the stall draws were all 0: spread the stall evenly
    bool even_step;   // the same for the steps
} s_plan_t;

// The generator of epoch's minibatch draws.
static void s_draws_seed(jf_rng_t *rng, uint64_t run_seed, int epoch)
{
    jf_rng_seed(rng, run_seed, S_DRAW_STREAM | (uint64_t)epoch);
}

// Minibatch index's draws around the model's means, truncated at 0: its stall (minibatch 0 waits
// first_us instead) and its step. Always two normals, so the sequence does not depend on index.
static void s_draw(jf_rng_t *rng, const sim_epoch_out_t *o, int64_t index, double *ret_stall,
                   double *ret_step)
{
    double z_stall = jf_rng_normal(rng);
    double z_step = jf_rng_normal(rng);
    double stall = (double)o->stall_mean_us + (double)o->stall_sd_us * z_stall;
    *ret_stall = index == 0 ? 0.0 : fmax(0.0, stall);
    *ret_step = fmax(0.0, (double)o->step_mean_us + (double)o->step_sd_us * z_step);
}

// The plan of the epoch whose figures are o: a first pass over every draw gives the sums that
// scale them to the model's totals (the second pass, s_plan_take, redraws the same sequence).
static void s_plan_init(s_plan_t *p, const sim_epoch_out_t *o, const train_run_opts_t *opts,
                        int epoch)
{
    size_t max = opts->max_batches;
    *p = (s_plan_t){.emitted = max > 0 && (int64_t)max < o->batches ? (int64_t)max : o->batches};
    // Rounded separately, the first stall may exceed the total by a microsecond.
    bool first_fits = o->batches > 1 && o->first_stall_us < o->fetch_stall_us;
    p->first_us = first_fits ? o->first_stall_us : o->fetch_stall_us;
    jf_rng_t rng = {0};
    s_draws_seed(&rng, opts->seed, epoch);
    double stall_sum = 0.0, step_sum = 0.0;
    for (int64_t i = 0; i < o->batches; i++) {
        double stall = 0.0, step = 0.0;
        s_draw(&rng, o, i, &stall, &step);
        stall_sum += stall;
        step_sum += step;
    }
    p->even_stall = !(stall_sum > 0.0);
    p->even_step = !(step_sum > 0.0);
    p->stall = (s_spread_t){.total_us = o->fetch_stall_us - p->first_us,
                            .weight_sum = p->even_stall ? (double)(o->batches - 1) : stall_sum};
    p->step = (s_spread_t){.total_us = o->compute_us,
                           .weight_sum = p->even_step ? (double)o->batches : step_sum};
}

// Minibatch index's stall and step (the second pass: call for index 0, 1, ... in order).
static void s_plan_take(s_plan_t *p, jf_rng_t *rng, const sim_epoch_out_t *o, int64_t index,
                        train_minibatch_rec_t *rec)
{
    double stall = 0.0, step = 0.0;
    s_draw(rng, o, index, &stall, &step);
    rec->fetch_stall_us =
        index == 0 ? p->first_us : s_spread_next(&p->stall, p->even_stall ? 1.0 : stall);
    rec->compute_us = s_spread_next(&p->step, p->even_step ? 1.0 : step);
}

// Sleeps until deadline_us on the monotonic clock (jf_clock_mono_us's), through signals.
static void s_sleep_until(int64_t deadline_us)
{
    struct timespec at = {.tv_sec = (time_t)(deadline_us / JF_US_PER_S),
                          .tv_nsec = (long)(deadline_us % JF_US_PER_S) * S_NS_PER_US};
    // clock_nanosleep returns the error rather than setting errno; only EINTR can occur here.
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR) {
    }
}

// Paces a minibatch that took took_us of modelled time: its line goes out when the modelled
// time since the start, divided by the speed, has passed on the wall clock.
static void s_pace(train_sim_t *self, int64_t took_us)
{
    self->modelled_us += took_us;
    double wall_us = (double)self->modelled_us / self->opts.sim.speed;
    s_sleep_until(self->start_us + llround(wall_us));
}

// Writes the minibatch lines of the current epoch; *ret_e2e_us is their modelled time.
static int s_minibatches(train_sim_t *self, int epoch, int64_t *ret_e2e_us, jf_err_t *err)
{
    const sim_epoch_out_t *o = &self->now;
    s_plan_t plan = {0};
    s_plan_init(&plan, o, &self->opts, epoch);
    jf_rng_t rng = {0};
    s_draws_seed(&rng, self->opts.seed, epoch);
    int64_t batch = (int64_t)self->opts.batch, e2e_us = 0;
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < plan.emitted; i++) {
        train_minibatch_rec_t rec = {
            .index = (size_t)i,
            .samples = (size_t)(i + 1 < o->batches ? batch : o->samples - i * batch),
            .loss = NAN}; // no model is trained: the loss is null
        if (self->learner.step) { // unless one is, for real: its loss
            rc = self->learner.step(self->learner.ctx, rec.samples, &rec.loss, err);
            if (rc < 0) {
                break;
            }
        }
        s_plan_take(&plan, &rng, o, i, &rec);
        e2e_us += rec.fetch_stall_us + rec.compute_us;
        s_pace(self, rec.fetch_stall_us + rec.compute_us);
        rc = train_records_minibatch(self->records, &rec, err);
    }
    *ret_e2e_us = e2e_us;
    return rc;
}

static void s_power(const sim_epoch_out_t *o, train_records_power_t *ret_power)
{
    *ret_power = (train_records_power_t){.n_rails = o->n_rails,
                                         .gpu_load_pct = o->gpu_load * 100.0,
                                         .cpu_busy_cores = o->cpu_busy_cores};
    for (size_t i = 0; i < o->n_rails; i++) {
        ret_power->names[i] = o->rails[i].name;
        ret_power->power_mw[i] = o->rails[i].power_mw;
    }
}

// Evaluates epoch with the page cache holding resident of the dataset at its start.
static int s_evaluate(train_sim_t *self, int epoch, double resident, sim_epoch_out_t *ret_out,
                      jf_err_t *err)
{
    self->in.epoch = epoch;
    self->in.resident_fraction = resident;
    return sim_model_epoch(self->model, &self->in, ret_out, err);
}

// The current epoch's line, after evaluating the next epoch (whose power it carries).
static int s_epoch_line(train_sim_t *self, int epoch, int64_t e2e_us, int64_t wall0_us,
                        jf_err_t *err)
{
    bool last = epoch + 1 >= self->opts.epochs;
    int rc = last ? 0 : s_evaluate(self, epoch + 1, self->now.resident_fraction, &self->next, err);
    if (rc < 0) {
        return rc;
    }
    train_records_power_t power = {0}, next_power = {0};
    s_power(&self->now, &power);
    s_power(&self->next, &next_power);
    train_records_cache_t cache = {.resident_before = self->now_resident,
                                   .resident_after = self->now.resident_fraction,
                                   .hit_fraction = self->now.cache_hit_fraction,
                                   .cache_bytes = self->now.cache_bytes,
                                   .dataset_bytes = self->now.dataset_bytes};
    train_records_epoch_sim_t sim = {.wall_us = jf_clock_mono_us() - wall0_us,
                                     .power = &power,
                                     .next_power = last ? NULL : &next_power,
                                     .cache = &cache};
    rc = train_records_epoch_end_sim(self->records, e2e_us, &sim, err);
    if (!last) {
        self->now_resident = self->now.resident_fraction;
        self->now = self->next;
    }
    return rc;
}

static int s_run_epoch(train_sim_t *self, int epoch, jf_err_t *err)
{
    if (self->now.oom) {
        // The detail reaches reports as the run's failure: say that the board is simulated.
        return jf_err_set(err, -ENOMEM, "%s (simulated %s '%.64s')", self->now.oom_reason,
                          jf_board_type_name(self->board_type), self->opts.sim.board);
    }
    int64_t wall0_us = jf_clock_mono_us();
    train_records_epoch_begin(self->records, epoch);
    int64_t e2e_us = 0;
    int rc = self->learner.epoch_start
                 ? self->learner.epoch_start(self->learner.ctx, epoch, err)
                 : 0;
    rc = rc < 0 ? rc : s_minibatches(self, epoch, &e2e_us, err);
    return rc < 0 ? rc : s_epoch_line(self, epoch, e2e_us, wall0_us, err);
}

static int s_epoch_cb(void *ctx, int epoch, jf_err_t *err)
{
    return s_run_epoch(ctx, epoch, err);
}

static int s_finish_cb(void *ctx, jf_err_t *err)
{
    const train_sim_t *self = ctx;
    return self->learner.finish ? self->learner.finish(self->learner.ctx, err) : 0;
}

void train_sim_set_learner(train_sim_t *self, const train_sim_learner_t *learner)
{
    self->learner = *learner;
}

int train_sim_exec(train_sim_t *self, jf_err_t *err)
{
    if ((self->opts.init_weights || self->opts.out_weights) && !self->learner.step) {
        // The start line would say the model trains: refuse before writing it.
        return jf_err_set(err, -EINVAL,
                          "--init-weights/--out-weights: this simulated run has no libtorch "
                          "to train with (jetfleet-train --simulate has)");
    }
    self->start_us = jf_clock_mono_us();
    self->modelled_us = 0;
    train_run_driver_t d = {.opts = &self->opts, .out = self->out, .records = self->records,
                            .epoch = s_epoch_cb, .ctx = self, .finish = s_finish_cb};
    return train_run_drive(&d, err);
}

static int s_resolve_board(train_sim_t *self, jf_err_t *err)
{
    const train_run_sim_opts_t *s = &self->opts.sim;
    if (!jf_board_type_parse(s->board_type, &self->board_type) ||
        !sim_model_params(self->model)->boards[self->board_type].present) {
        return jf_err_set(err, -EINVAL,
                          "--sim-board-type: no model for board type '%.64s', expected one of: "
                          "agx-xavier, xavier-nx, nano, orin-agx, orin-nano",
                          s->board_type);
    }
    if (!jf_parse_is_ident(s->board)) {
        return jf_err_set(err, -EINVAL,
                          "--sim-board: '%.64s' is not a board name (lower-case letters, digits, "
                          "'.', '_', '-'; at most %d)",
                          s->board, JF_IDENT_MAX);
    }
    self->in.board_type = self->board_type;
    sim_model_board_factors(self->model, self->board_type, s->fleet_seed, s->board,
                            &self->in.factors);
    return 0;
}

// A custom point (--sim-point) over the mode's operating point; a clock given as 0 keeps the
// mode's. The model checks the values (cores within the board's, positive clocks).
static void s_apply_point(const train_run_sim_opts_t *s, sim_op_t *op)
{
    if (s->point_cores == 0) {
        return;
    }
    op->n_cores = s->point_cores;
    op->cpu_hz = s->point_cpu_hz;
    op->gpu_hz = s->point_gpu_hz ? s->point_gpu_hz : op->gpu_hz;
    op->emc_hz = s->point_emc_hz ? s->point_emc_hz : op->emc_hz;
}

// The power mode by nvpmodel id (a number) or name, and its operating point.
static int s_resolve_mode(train_sim_t *self, jf_err_t *err)
{
    const char *text = self->opts.sim.mode;
    const sim_board_params_t *b = &sim_model_params(self->model)->boards[self->board_type];
    int64_t id = -1;
    bool by_id = jf_parse_i64(text, 0, INT32_MAX, &id, NULL) == 0;
    for (size_t i = 0; !self->mode && i < b->n_modes; i++) {
        bool match = by_id ? b->modes[i].id == id : strcmp(b->modes[i].name, text) == 0;
        self->mode = match ? &b->modes[i] : NULL;
    }
    if (!self->mode) {
        return jf_err_set(err, -EINVAL, "--sim-mode: %s has no power mode '%.64s'",
                          jf_board_type_name(self->board_type), text);
    }
    int rc = sim_model_mode_op(self->model, self->board_type, self->mode->id, &self->in.op, err);
    if (rc < 0) {
        return jf_err_prefix(err, "--sim-mode");
    }
    s_apply_point(&self->opts.sim, &self->in.op);
    return 0;
}

// The dataset the model is trained on, as the parameter file pairs them.
static int s_resolve_dataset(train_sim_t *self, jf_err_t *err)
{
    const char *model = self->opts.run.model;
    if (!jf_run_spec_is_model(model)) {
        return jf_err_set(err, -EINVAL, "--model: unknown model '%.64s', expected one of: %s",
                          model ? model : "(null)", jf_run_spec_models());
    }
    const sim_params_t *p = sim_model_params(self->model);
    for (size_t i = 0; i < p->n_workloads; i++) {
        if (strcmp(p->workloads[i].model, model) == 0) {
            self->in.dataset = p->workloads[i].dataset;
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "--model: the simulator's parameters have no workload for '%s'",
                      model);
}

uint64_t train_sim_noise_seed(uint64_t seed, const char *board, const struct sim_op *op)
{
    char text[JF_IDENT_MAX + 128];
    (void) snprintf(text, sizeof text, "board=%s op=%d,%lld,%lld,%lld,%d", board ? board : "",
                    op->n_cores, (long long) op->cpu_hz, (long long) op->gpu_hz,
                    (long long) op->emc_hz, op->gpu_cores);
    jf_rng_t rng;
    jf_rng_seed_name(&rng, seed, text);
    return jf_rng_next(&rng);
}

static int s_resolve(train_sim_t *self, jf_err_t *err)
{
    const train_run_opts_t *o = &self->opts;
    self->in = (sim_epoch_in_t){.model = o->run.model,
                                .medium = o->sim.medium,
                                .workers = o->workers,
                                .prefetch = o->prefetch,
                                .batch_size = (int) o->batch,
                                // A shard is modelled as a dataset 1/N the size (--shard K/N).
                                .dataset_scale =
                                    o->sim.scale / (o->shard.count > 0 ? o->shard.count : 1),
                                .run_seed = o->seed,
                                .noise = true};
    if (o->epochs < 1 || o->batch > JF_BATCH_MAX) {
        return jf_err_set(err, -EINVAL, "sim: epochs must be >= 1 and batch 1..%d, got %d and %zu",
                          JF_BATCH_MAX, o->epochs, o->batch);
    }
    if (!(o->sim.speed >= TRAIN_SIM_SPEED_MIN && o->sim.speed <= TRAIN_SIM_SPEED_MAX)) {
        return jf_err_set(err, -EINVAL, "--sim-speed must be in [%g, %g], got %g",
                          TRAIN_SIM_SPEED_MIN, TRAIN_SIM_SPEED_MAX, o->sim.speed);
    }
    int rc = s_resolve_board(self, err);
    rc = rc < 0 ? rc : s_resolve_mode(self, err);
    rc = rc < 0 ? rc : s_resolve_dataset(self, err);
    // Seeded with the training seed alone, every mode's epochs would carry the same noise and a
    // model over the modes would fit the formula exactly (issue #12).
    self->in.run_seed = train_sim_noise_seed(o->seed, o->sim.board, &self->in.op);
    // The model checks the medium, the loader settings and the scale.
    if (rc == 0 && !(o->sim.cache_resident >= 0.0 && o->sim.cache_resident <= 1.0)) {
        return jf_err_set(err, -EINVAL, "--sim-cache-resident must be in [0, 1], got %g",
                          o->sim.cache_resident);
    }
    self->now_resident = o->sim.cache_resident;
    return rc < 0 ? rc : s_evaluate(self, 0, o->sim.cache_resident, &self->now, err);
}

static int s_open_records(train_sim_t *self, jf_err_t *err)
{
    const train_run_opts_t *o = &self->opts;
    int64_t samples = self->now.samples, batch = (int64_t)o->batch;
    int64_t batches = (samples + batch - 1) / batch; // also when the run does not fit
    size_t max = o->max_batches;
    train_records_sim_t sim = {.speed = o->sim.speed,
                               .board_type = jf_board_type_name(self->board_type),
                               .board = o->sim.board,
                               .fleet_seed = o->sim.fleet_seed,
                               .power_mode_id = self->mode->id,
                               .power_mode = self->mode->name,
                               .medium = o->sim.medium,
                               .scale = o->sim.scale,
                               .cache_resident = o->sim.cache_resident,
                               .trains = o->init_weights || o->out_weights};
    s_power(&self->now, &sim.power);
    train_records_params_t p = {
        .model = o->run.model,
        .dataset = self->in.dataset,
        .workers = o->workers,
        .prefetch = o->prefetch,
        .batch = o->batch,
        .epochs = o->epochs,
        .seed = o->seed,
        .samples = (size_t) samples,
        .batches_per_epoch = max > 0 && (int64_t) max < batches ? max : (size_t) batches,
        .sim = &sim,
    };
    self->records = train_records_new(&p, self->out, err);
    return self->records ? 0 : err->code;
}

static int s_load(train_sim_t *self, jf_err_t *err)
{
    self->model = sim_model_load(self->opts.sim.params_path, err);
    if (!self->model) {
        // A file that cannot be read or parsed is bad input to this run, whatever its errno.
        int code = err->code == -ENOMEM ? -ENOMEM : -EINVAL;
        err->code = code;
        return jf_err_prefix(err, "--sim-params");
    }
    return 0;
}

train_sim_t *train_sim_new(const train_run_opts_t *opts, FILE *out, jf_err_t *err)
{
    jf_err_t local = {0};
    err = err ? err : &local;
    train_sim_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void)jf_err_set(err, -ENOMEM, "sim: out of memory");
        return NULL;
    }
    self->opts = *opts;
    self->out = out;
    int rc = s_load(self, err);
    rc = rc < 0 ? rc : s_resolve(self, err);
    rc = rc < 0 ? rc : s_open_records(self, err);
    if (rc < 0) {
        train_sim_destroy(&self);
    }
    return self;
}

void train_sim_destroy(train_sim_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_sim_t *self = *self_p;
    train_records_destroy(&self->records);
    sim_model_destroy(&self->model);
    free(self);
    *self_p = NULL;
}
