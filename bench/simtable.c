/* jf-simtable: the simulated fleet's "measurement" of every custom operating point of a board
 * type, written as an import CSV (docs/import.md) in seconds instead of days: for N simulated
 * boards (per-board factors from the seed, as sim agents have them) and each point of the type's
 * clock tables (common/jf_board_clocks.h), E epochs from the simulator's model with its noise on
 * (agent/sim/sim_model.h). Ground truth for the analysis of issue #12; the rows say
 * source=simulated, and nothing but this CSV reaches the fitting code. Built with JF_BUILD_BENCH.
 */
#include "jf_board_clocks.h"
#include "jf_parse.h"
#include "jf_run_spec.h"
#include "jf_workload.h"
#include "sim_model.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_BOARDS_MAX 64
#define ST_EPOCHS_MAX 10
#define ST_PREFETCH   2 // batches per worker, the run spec's default

typedef struct st_opts {
    jf_board_type_t type;
    const jf_workload_t *workload;
    const char *params; // sim_params.yaml
    const char *out;    // the CSV
    const char *medium; // storage medium
    int boards, epochs, workers, batch;
    uint64_t seed;
    bool grid; // --modes grid: the PowerTrain-like subset (docs/import.md)
} st_opts_t;

typedef struct st_count {
    size_t points, rows, oom;
} st_count_t;

static int st_usage(const char *why)
{
    fprintf(stderr,
            "jf-simtable: %s\nusage: jf-simtable --type T --workload W --boards N --seed S "
            "[--modes all|grid] [--epochs E] [--workers N] [--batch N] [--storage M] "
            "[--params sim_params.yaml] -o FILE.csv\n",
            why);
    return 2;
}

static int st_int(const char *text, int64_t min, int64_t max, int *ret)
{
    int64_t v = 0;
    jf_err_t err = {0};
    if (jf_parse_i64(text, min, max, &v, &err) != 0) {
        fprintf(stderr, "jf-simtable: %s\n", err.msg);
        return -EINVAL;
    }
    *ret = (int) v;
    return 0;
}

static const jf_workload_t *st_workload(const char *name)
{
    for (size_t i = 0; i < jf_workload_count(); i++) {
        if (strcmp(jf_workload_at(i)->name, name) == 0) {
            return jf_workload_at(i);
        }
    }
    return NULL;
}

static int st_opt(st_opts_t *o, int c, const char *arg)
{
    int64_t seed = 0;
    switch (c) {
    case 't':
        return jf_board_type_parse(arg, &o->type) && jf_board_clocks(o->type) ? 0 : -EINVAL;
    case 'w':
        o->workload = st_workload(arg);
        return o->workload ? 0 : -EINVAL;
    case 'b':
        return st_int(arg, 1, ST_BOARDS_MAX, &o->boards);
    case 'e':
        return st_int(arg, 1, ST_EPOCHS_MAX, &o->epochs);
    case 'W':
        return st_int(arg, 0, JF_WORKERS_MAX, &o->workers);
    case 'B':
        return st_int(arg, 1, JF_BATCH_MAX, &o->batch);
    case 's':
        o->seed = jf_parse_i64(arg, 0, INT64_MAX, &seed, NULL) == 0 ? (uint64_t) seed : 0;
        return jf_parse_i64(arg, 0, INT64_MAX, &seed, NULL);
    case 'm':
        o->grid = strcmp(arg, "grid") == 0;
        return o->grid || strcmp(arg, "all") == 0 ? 0 : -EINVAL;
    case 'S':
        o->medium = arg;
        return 0;
    case 'p':
        o->params = arg;
        return 0;
    case 'o':
        o->out = arg;
        return 0;
    default:
        return -EINVAL;
    }
}

static int st_parse(int argc, char **argv, st_opts_t *o)
{
    static const struct option opts[] = {{"type", required_argument, NULL, 't'},
                                         {"workload", required_argument, NULL, 'w'},
                                         {"boards", required_argument, NULL, 'b'},
                                         {"seed", required_argument, NULL, 's'},
                                         {"modes", required_argument, NULL, 'm'},
                                         {"epochs", required_argument, NULL, 'e'},
                                         {"workers", required_argument, NULL, 'W'},
                                         {"batch", required_argument, NULL, 'B'},
                                         {"storage", required_argument, NULL, 'S'},
                                         {"params", required_argument, NULL, 'p'},
                                         {NULL, 0, NULL, 0}};
    *o = (st_opts_t){.type = JF_BOARD_TYPE_COUNT,
                     .params = JF_SIMTABLE_PARAMS,
                     .medium = "nvme",
                     .epochs = 3,
                     .workers = 4,
                     .batch = 64};
    bool seeded = false;
    int c = 0;
    while ((c = getopt_long(argc, argv, "o:", opts, NULL)) != -1) {
        if (st_opt(o, c, optarg) != 0) {
            return st_usage("bad or unknown option (types with clock tables: agx-xavier, "
                            "xavier-nx, orin-agx, orin-nano; workloads as docs/workloads.md)");
        }
        seeded = seeded || c == 's';
    }
    if (optind != argc || !o->workload || o->type == JF_BOARD_TYPE_COUNT || !o->boards || !seeded ||
        !o->out) {
        return st_usage("--type, --workload, --boards, --seed and -o are required");
    }
    return 0;
}

// The grid keeps even core counts and every other CPU step counted down from the top one (the
// PowerTrain study's grid is of this kind); all: every point of the tables.
static bool st_in_grid(const st_opts_t *o, const jf_board_clocks_t *t, int cores, size_t cpu)
{
    return !o->grid || (cores % 2 == 0 && (t->n_cpu_steps - 1 - cpu) % 2 == 0);
}

// Board power as the agent's energy meter sums it: the input rail where the board has one
// (its name ends in _IN), else the sum of the rails (agent/measure/agent_energy.h).
static double st_power_w(const sim_epoch_out_t *out)
{
    double sum_mw = 0;
    for (size_t i = 0; i < out->n_rails; i++) {
        size_t n = strlen(out->rails[i].name);
        if (n >= 3 && strcmp(out->rails[i].name + n - 3, "_IN") == 0) {
            return (double) out->rails[i].power_mw / 1000.0;
        }
        sum_mw += (double) out->rails[i].power_mw;
    }
    return sum_mw / 1000.0;
}

typedef struct st_run {
    const st_opts_t *o;
    const sim_model_t *model;
    FILE *f;
    char board[32];
    sim_epoch_in_t in;
} st_run_t;

static uint64_t st_mix(uint64_t h, uint64_t v)
{
    h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
    return h;
}

// One run (board, point): epoch 0 starts with a cold page cache, later epochs with what the
// previous one left, as on a board. Writes its rows; *ret_oom when the point does not fit.
static int st_run_point(st_run_t *r, size_t *ret_rows, bool *ret_oom, jf_err_t *err)
{
    sim_epoch_out_t out = {0};
    double resident = 0;
    for (int e = 0; e < r->o->epochs; e++) {
        r->in.epoch = e;
        r->in.resident_fraction = resident;
        int rc = sim_model_epoch(r->model, &r->in, &out, err);
        if (rc != 0 || out.oom) {
            *ret_oom = rc == 0;
            return rc;
        }
        resident = out.resident_fraction;
        double t_s = (double) out.e2e_us / 1e6, p_w = st_power_w(&out);
        const sim_op_t *op = &r->in.op;
        fprintf(r->f,
                "%s,%s,%s,%s,%d,%lld,%lld,%lld,%d,%d,0,%d,%.6f,%.6f,%.6f,%.4f,%.4f,simulated\n",
                r->board, jf_board_type_name(r->o->type), r->o->workload->name, r->o->medium,
                op->n_cores, (long long) op->cpu_hz, (long long) op->gpu_hz, (long long) op->emc_hz,
                r->o->workers, r->o->batch, e, t_s, (double) out.fetch_stall_us / 1e6,
                (double) out.compute_us / 1e6, p_w, p_w * t_s);
        (*ret_rows)++;
    }
    return 0;
}

static int st_board(st_run_t *r, const jf_board_clocks_t *t, st_count_t *n, jf_err_t *err)
{
    for (int cores = 1; cores <= t->n_cpus; cores++) {
        for (size_t c = 0; c < t->n_cpu_steps; c++) {
            if (!st_in_grid(r->o, t, cores, c)) {
                continue;
            }
            for (size_t g = 0; g < t->n_gpu_steps * t->n_emc_steps; g++) {
                r->in.op = (sim_op_t){.n_cores = cores,
                                      .cpu_hz = t->cpu_steps_hz[c],
                                      .gpu_hz = t->gpu_steps_hz[g / t->n_emc_steps],
                                      .emc_hz = t->emc_steps_hz[g % t->n_emc_steps]};
                r->in.run_seed = st_mix(st_mix(r->o->seed, (uint64_t) n->points), 0x51u);
                bool oom = false;
                int rc = st_run_point(r, &n->rows, &oom, err);
                if (rc != 0) {
                    return rc;
                }
                n->points++;
                n->oom += oom;
            }
        }
    }
    return 0;
}

static int st_write(const st_opts_t *o, const sim_model_t *model, FILE *f, st_count_t *n,
                    jf_err_t *err)
{
    const jf_board_clocks_t *t = jf_board_clocks(o->type);
    fprintf(f, "board,board_type,workload,storage,cores,cpu_freq_hz,gpu_freq_hz,emc_freq_hz,"
               "workers,batch_size,repeat,epoch,epoch_time_s,fetch_stall_s,compute_s,"
               "mean_power_w,energy_j,source\n");
    for (int b = 0; b < o->boards; b++) {
        st_run_t r = {.o = o, .model = model, .f = f};
        (void) snprintf(r.board, sizeof r.board, "sim-%s-%d", jf_board_type_name(o->type), b + 1);
        r.in = (sim_epoch_in_t){.board_type = o->type,
                                .model = o->workload->model,
                                .dataset = o->workload->dataset,
                                .medium = o->medium,
                                .workers = o->workers,
                                .prefetch = ST_PREFETCH,
                                .batch_size = o->batch,
                                .dataset_scale = 1.0,
                                .noise = true};
        sim_model_board_factors(model, o->type, o->seed, r.board, &r.in.factors);
        int rc = st_board(&r, t, n, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    st_opts_t o;
    if (st_parse(argc, argv, &o) != 0) {
        return 2;
    }
    jf_err_t err = {0};
    sim_model_t *model = sim_model_load(o.params, &err);
    FILE *f = model ? fopen(o.out, "w") : NULL;
    st_count_t n = {0};
    int rc = f ? st_write(&o, model, f, &n, &err) : -EIO;
    if (f && fclose(f) != 0 && rc == 0) {
        rc = jf_err_set(&err, -EIO, "%s: write failed", o.out);
    }
    if (!f && model) {
        jf_err_set(&err, -EIO, "%s: cannot create", o.out);
    }
    sim_model_destroy(&model);
    if (rc != 0) {
        fprintf(stderr, "jf-simtable: %s\n", err.msg);
        return 1;
    }
    printf("jf-simtable: wrote %zu rows to %s: %d boards x %zu points of %s (%s), %d epochs each "
           "(epoch 0 the warm-up); %zu points out of memory left out; source=simulated\n",
           n.rows, o.out, o.boards, n.points / (size_t) o.boards, jf_board_type_name(o.type),
           o.grid ? "grid" : "all", o.epochs, n.oom);
    return 0;
}
