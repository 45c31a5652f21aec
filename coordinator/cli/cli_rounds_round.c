/* One federated round (docs/rounds.md "Execution", "Stragglers", "Records"): each board's run is
 * a one-run sweep submitted through the coordinator's ordinary path (ctl.submit), with the plan's
 * mode and minibatches, the global weights to start from and return_weights; the loop waits for
 * them up to the round timeout (a late board is then dropped: its sweep cancelled; or waited for),
 * averages the returned weights weighted by the samples each board trained (FedAvg, through the
 * shim) and records the round. Times and energy come from the runs' epoch records, so on a
 * simulated board they are the simulator's modelled figures. */
#include "cli_rounds_exec.h"

#include "coord_store_blobs.h"
#include "jf_msg_ctl.h"
#include "jf_sweep.h"
#include "jf_torch.h"
#include "jf_units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// The one-run sweep of slot i in this round, as YAML (caller frees).
static char *s_sweep_yaml(const cli_rounds_exec_t *x, size_t i, int64_t round)
{
    const jf_rounds_t *c = x->cfg;
    const cli_rounds_slot_t *s = &x->slots[i];
    const coord_rounds_choice_t *ch = &x->choices[i];
    const char *storage = c->storage[0] ? c->storage : s->spec->storage[0].medium;
    bool epochs = c->local_unit == JF_ROUNDS_EPOCHS;
    char mode[256];
    if (ch->custom) {
        (void) snprintf(mode, sizeof mode,
                        "{custom: {cores: %d, cpu_freq: %lldHz, gpu_freq: %lldHz, emc_freq: "
                        "%lldHz}}",
                        ch->op.cores, (long long) ch->op.cpu_hz, (long long) ch->op.gpu_hz,
                        (long long) ch->op.emc_hz);
    } else {
        (void) snprintf(mode, sizeof mode, "%s", ch->mode_name);
    }
    char init[128] = "";
    if (x->weights[0]) {
        (void) snprintf(init, sizeof init, ", init_weights: \"%s\"", x->weights);
    }
    char *yaml = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&yaml, &size);
    if (!f) {
        return NULL;
    }
    (void) fprintf(f,
                   "name: %s\ndescription: \"round %lld of rounds run %lld (%s), board %s\"\n"
                   "target: {boards: [%s]}\n"
                   "workloads: [{model: %s, dataset: %s, epochs: %lld}]\n"
                   "power_modes: [%s]\nstorage: [%s]\nworkers: [%d]\nbatch_sizes: [%d]\n"
                   "seed: %llu\n"
                   "fl_round: {round: \"fl%lld.%lld\", minibatches: %lld, return_weights: "
                   "true, shards: %zu, shard: %zu%s}\n",
                   s->sweep, (long long) round, (long long) x->id, c->name, s->spec->name,
                   s->spec->name, c->model, c->dataset, epochs ? (long long) c->local_count : 1LL,
                   mode, storage, c->workers, c->batch_size, (unsigned long long) c->seed,
                   (long long) x->id, (long long) round, epochs ? 0LL : (long long) ch->minibatches,
                   x->n, i, init);
    return fclose(f) == 0 ? yaml : (free(yaml), NULL);
}

// Submits slot i's run; the slot learns its run id from the same expansion the coordinator does.
static int s_submit(cli_rounds_exec_t *x, size_t i, int64_t round, jf_err_t *err)
{
    cli_rounds_slot_t *s = &x->slots[i];
    (void) snprintf(s->sweep, sizeof s->sweep, "fl%lld-%lld-%zu", (long long) x->id,
                    (long long) round, i);
    char *yaml = s_sweep_yaml(x, i, round);
    const jf_fleet_config_t *fleet = cli_ctx_fleet(x->ctx, err);
    jf_sweep_t *sw =
        yaml && fleet ? jf_sweep_parse(yaml, strlen(yaml), s->sweep, fleet, err) : NULL;
    int rc = sw && sw->n_runs == 1 ? 0 : -EINVAL;
    if (sw && sw->n_runs != 1) {
        jf_err_set(err, -EINVAL, "round %lld: board '%s': the round's sweep has %zu runs, not 1",
                   (long long) round, s->spec->name, sw->n_runs);
    }
    json_t *data = NULL;
    if (rc == 0) {
        s->run = sw->runs[0];
        rc = cli_ctx_request(x->ctx, jf_msg_ctl_submit_new(1, s->sweep, yaml), &data, err);
    }
    json_decref(data);
    jf_sweep_destroy(&sw);
    free(yaml);
    return rc;
}

static double s_nan(void)
{
    return NAN;
}

// The board record as far as the plan goes, before its run ends.
static void s_slot_begin(cli_rounds_exec_t *x, size_t i, int64_t round)
{
    cli_rounds_slot_t *s = &x->slots[i];
    const coord_rounds_choice_t *ch = &x->choices[i];
    s->ended = false;
    s->rec = (coord_fl_board_t){.rounds = x->id,
                                .round = round,
                                .simulated = s->spec->type == JF_BOARD_SIM,
                                .minibatches = ch->minibatches,
                                .loss = s_nan(),
                                .start_s = 0.0,
                                .finish_s = s_nan(),
                                .idle_s = s_nan(),
                                .energy_j = s_nan(),
                                .pred_s = x->planned ? ch->pred_s : s_nan(),
                                .pred_j = x->planned ? ch->pred_j : s_nan()};
    (void) snprintf(s->rec.board, sizeof s->rec.board, "%s", s->spec->name);
    (void) snprintf(s->rec.status, sizeof s->rec.status, "running");
}

// A finished run: its figures, or why it counts for nothing.
static int s_slot_end(cli_rounds_exec_t *x, cli_rounds_slot_t *s, const coord_run_row_t *row,
                      jf_err_t *err)
{
    s->ended = true;
    memcpy(s->rec.run, s->run.run_id, sizeof s->rec.run);
    jf_run_spec_power_label(&s->run, s->rec.mode, sizeof s->rec.mode);
    if (row->state != COORD_RUN_DONE) {
        (void) snprintf(s->rec.status, sizeof s->rec.status, "failed");
        (void) snprintf(s->rec.detail, sizeof s->rec.detail,
                        "run %s failed (its reason: jetfleet runs --sweep %s)", s->run.run_id,
                        s->sweep);
        return 0;
    }
    coord_fl_run_facts_t f = {0};
    int rc = coord_store_fl_run_facts(x->store, s->run.run_id, row->attempt, &f, err);
    rc = rc ? rc : coord_store_run_weights(x->store, s->run.run_id, row->attempt, s->rec.blob, err);
    if (rc != 0) {
        return rc;
    }
    (void) snprintf(s->rec.status, sizeof s->rec.status, "in");
    s->rec.samples = f.samples;
    s->rec.loss = f.has_loss ? f.loss : s_nan();
    s->rec.finish_s = (double) f.time_us / (double) JF_US_PER_S;
    s->rec.energy_j = f.has_energy ? f.energy_mj / 1000.0 : s_nan();
    return 0;
}

// Cancels a straggler's sweep (policy drop) and records it as dropped.
static int s_drop(cli_rounds_exec_t *x, cli_rounds_slot_t *s, jf_err_t *err)
{
    json_t *data = NULL;
    int rc = cli_ctx_request(x->ctx, jf_msg_ctl_cancel_new(1, s->sweep), &data, err);
    json_decref(data);
    s->ended = true;
    memcpy(s->rec.run, s->run.run_id, sizeof s->rec.run);
    jf_run_spec_power_label(&s->run, s->rec.mode, sizeof s->rec.mode);
    (void) snprintf(s->rec.status, sizeof s->rec.status, "dropped");
    (void) snprintf(s->rec.detail, sizeof s->rec.detail,
                    "missed the round timeout of %.1f s (straggler policy drop)",
                    (double) x->cfg->timeout_us / (double) JF_US_PER_S);
    printf("round_event board=%s event=dropped timeout_s=%.1f\n", s->spec->name,
           (double) x->cfg->timeout_us / (double) JF_US_PER_S);
    return rc;
}

// Polls the runs until every one has ended, dropping or waiting for stragglers by policy.
static int s_wait(cli_rounds_exec_t *x, int64_t round, jf_err_t *err)
{
    int64_t deadline = jf_clock_mono_us() + x->cfg->timeout_us;
    bool told = false;
    for (;;) {
        size_t open = 0;
        for (size_t i = 0; i < x->n; i++) {
            cli_rounds_slot_t *s = &x->slots[i];
            coord_run_row_t row = {0};
            int rc = s->ended ? 0 : coord_store_run_get(x->store, s->run.run_id, &row, err);
            if (rc != 0) {
                return rc;
            }
            bool over = !s->ended && (row.state == COORD_RUN_DONE || row.state == COORD_RUN_FAILED);
            if (over && (rc = s_slot_end(x, s, &row, err)) != 0) {
                return rc;
            }
            open += s->ended ? 0 : 1;
        }
        if (open == 0) {
            return 0;
        }
        if (jf_clock_mono_us() >= deadline && x->cfg->straggler == JF_ROUNDS_DROP) {
            for (size_t i = 0; i < x->n; i++) {
                int rc = x->slots[i].ended ? 0 : s_drop(x, &x->slots[i], err);
                if (rc != 0) {
                    return rc;
                }
            }
            return 0;
        }
        if (jf_clock_mono_us() >= deadline && !told) {
            printf("round_event round=%lld event=timeout waiting=%zu (straggler policy wait)\n",
                   (long long) round, open);
            told = true;
        }
        usleep(CLI_ROUNDS_POLL_MS * 1000);
    }
}

// FedAvg of the boards that are in, weighted by the samples each trained; *ret_sha names it.
static int s_average(cli_rounds_exec_t *x, coord_fl_round_t *r, jf_err_t *err)
{
    void **blobs = calloc(x->n, sizeof *blobs);
    size_t *lens = calloc(x->n, sizeof *lens);
    double *w = calloc(x->n, sizeof *w);
    size_t k = 0;
    int rc = blobs && lens && w ? 0 : jf_err_set(err, -ENOMEM, "out of memory");
    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        const coord_fl_board_t *b = &x->slots[i].rec;
        if (strcmp(b->status, "in") == 0 && b->samples > 0) {
            w[k] = (double) b->samples;
            rc = coord_store_blob_get(x->store, b->blob, &blobs[k], &lens[k], err);
            k += rc == 0 ? 1 : 0;
        }
    }
    void *avg = NULL;
    size_t avg_len = 0;
    if (rc == 0 && k > 0) {
        rc = jf_torch_weights_average((const void *const *) blobs, lens, w, k, &avg, &avg_len, err);
        rc = rc ? rc : coord_store_blob_put(x->store, avg, avg_len, r->avg_blob, err);
    }
    r->boards_in = (int64_t) k;
    free(avg);
    for (size_t i = 0; blobs && i < k; i++) {
        free(blobs[i]);
    }
    free(blobs);
    free(lens);
    free(w);
    return rc;
}

// The round's figures from its boards: latest finish, spread, energy (training, and idle at the
// barrier where the idle power is known), sample-weighted loss.
static void s_summarise(cli_rounds_exec_t *x, coord_fl_round_t *r)
{
    double lo = INFINITY, hi = -INFINITY, energy = 0.0, loss = 0.0;
    int64_t samples = 0;
    for (size_t i = 0; i < x->n; i++) {
        const coord_fl_board_t *b = &x->slots[i].rec;
        if (strcmp(b->status, "in") == 0) {
            lo = fmin(lo, b->finish_s);
            hi = fmax(hi, b->finish_s);
            samples += b->samples;
            loss += isnan(b->loss) ? 0.0 : b->loss * (double) b->samples;
        }
        r->simulated = r->simulated || b->simulated;
    }
    for (size_t i = 0; i < x->n; i++) {
        coord_fl_board_t *b = &x->slots[i].rec;
        if (strcmp(b->status, "in") == 0) {
            b->idle_s = hi - b->finish_s;
            double idle_w = x->boards ? x->boards[i].idle_w : 0.0;
            energy += (isnan(b->energy_j) ? 0.0 : b->energy_j) + idle_w * b->idle_s;
        }
    }
    bool any = samples > 0;
    r->samples = samples;
    r->loss = any ? loss / (double) samples : NAN;
    r->round_s = any ? hi : NAN;
    r->spread_s = any ? hi - lo : NAN;
    r->spread_pct = any && hi > 0 ? 100.0 * (hi - lo) / hi : NAN;
    r->energy_j = any ? energy : NAN;
}

static void s_print(const cli_rounds_exec_t *x, const coord_fl_round_t *r)
{
    for (size_t i = 0; i < x->n; i++) {
        const coord_fl_board_t *b = &x->slots[i].rec;
        printf("round=%lld board=%s status=%s mode=%s minibatches=%lld samples=%lld loss=%.5g "
               "finish_s=%.3f idle_s=%.3f energy_j=%.3f%s\n",
               (long long) r->round, b->board, b->status, b->mode[0] ? b->mode : "-",
               (long long) b->minibatches, (long long) b->samples, b->loss, b->finish_s, b->idle_s,
               b->energy_j, b->simulated ? " simulated=1" : "");
        int64_t bs = x->cfg->batch_size;
        int64_t trained = (b->samples + bs - 1) / bs;
        if (strcmp(b->status, "in") == 0 && trained != b->minibatches) {
            printf("note: round=%lld board=%s trained_minibatches=%lld of minibatches=%lld asked "
                   "(its shard holds fewer; docs/rounds.md \"Execution\")\n",
                   (long long) r->round, b->board, (long long) trained, (long long) b->minibatches);
        }
    }
    printf("round=%lld boards=%lld boards_in=%lld samples=%lld loss=%.5g round_s=%.3f "
           "spread_s=%.3f spread_pct=%.2f energy_j=%.3f weights=%.16s%s\n",
           (long long) r->round, (long long) r->boards, (long long) r->boards_in,
           (long long) r->samples, r->loss, r->round_s, r->spread_s, r->spread_pct, r->energy_j,
           r->avg_blob[0] ? r->avg_blob : "-",
           r->simulated ? " simulated=1 (times and energy modelled by the simulator)" : "");
    (void) fflush(stdout);
}

static int s_record(cli_rounds_exec_t *x, const coord_fl_round_t *r, jf_err_t *err)
{
    int rc = coord_store_begin(x->store, err);
    rc = rc ? rc : coord_store_fl_round_put(x->store, r, err);
    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        rc = coord_store_fl_board_put(x->store, &x->slots[i].rec, err);
    }
    if (rc != 0) {
        coord_store_rollback(x->store); // the error above is the one to report
        return rc;
    }
    return coord_store_commit(x->store, err);
}

int cli_rounds_round(cli_rounds_exec_t *x, int64_t round, jf_err_t *err)
{
    coord_fl_round_t r = {.rounds = x->id,
                          .round = round,
                          .boards = (int64_t) x->n,
                          .started_us = jf_clock_wall_us()};
    memcpy(r.init_blob, x->weights, sizeof r.init_blob);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < x->n; i++) {
        s_slot_begin(x, i, round);
        rc = s_submit(x, i, round, err);
    }
    rc = rc ? rc : s_wait(x, round, err);
    rc = rc ? rc : s_average(x, &r, err); // the average is a blob: stored before the round's rows
    if (rc != 0) {
        return rc;
    }
    s_summarise(x, &r);
    r.finished_us = jf_clock_wall_us();
    rc = rc ? rc : s_record(x, &r, err);
    if (rc == 0 && r.avg_blob[0]) {
        memcpy(x->weights, r.avg_blob, sizeof x->weights);
    }
    if (rc == 0) {
        s_print(x, &r);
    }
    return rc;
}
