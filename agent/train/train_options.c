/* jetfleet-train option parsing with getopt_long and jf_parse (ranges from train_sim.h). Long
 * options only, so that a run's argv reads the same in every log. The run's own options (--model,
 * --batch, ...: every run spec field with a trainer flag, docs/schema.md) come from the schema
 * table and are parsed into a jf_run_spec_t by jf_schema_from_flag, so a new field needs no
 * handler here. A real run and a simulated one (--simulate) share those; each has options of its
 * own, and one given to the other kind of run is an error rather than ignored. */
#include "train_options.h"

#include "jf_parse.h"
#include "jf_run_spec.h"
#include "jf_schema.h"
#include "train_loader.h"
#include "train_sim.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    S_OPT_HELP = 'h',
    S_OPT_DATA = 256,
    S_OPT_DEVICE,
    S_OPT_DROP_LAST,
    S_OPT_NO_DROP_LAST,
    S_OPT_JSON_OUT,
    S_OPT_MAX_BATCHES,
    S_OPT_LOADER_ONLY,
    S_OPT_INIT_WEIGHTS, // a federated round's local work (issue 14), real or simulated
    S_OPT_OUT_WEIGHTS,
    S_OPT_MINIBATCHES,
    S_OPT_SHARD,
    S_OPT_SIMULATE, // from here on: the options of a simulated run
    S_OPT_SIM_PARAMS,
    S_OPT_SIM_BOARD_TYPE,
    S_OPT_SIM_BOARD,
    S_OPT_SIM_SEED,
    S_OPT_SIM_MODE,
    S_OPT_SIM_MEDIUM,
    S_OPT_SIM_SCALE,
    S_OPT_SIM_SPEED,
    S_OPT_SIM_CACHE_RESIDENT,
    S_OPT_SIM_POINT,
    S_OPT_SIM_DVFS_OFF,
    S_OPT_SIM_TELEMETRY_HZ,
    S_OPT_RUN = 512, // the run's own options: S_OPT_RUN + their index in s_parse_t.run_fields
};

// The usage text names the loader's limits; the table checks the run spec's.
_Static_assert(TRAIN_LOADER_WORKERS_MAX == JF_WORKERS_MAX, "--workers range: loader and spec");
_Static_assert(TRAIN_LOADER_PREFETCH_MAX == JF_PREFETCH_MAX, "--prefetch range: loader and spec");

#define S_RUN_FLAGS_MAX 32 // run spec fields with a trainer flag
#define S_OPTIONS_MAX   64 // getopt's table: the run's options and the trainer's own

// The options of a real run that mean nothing to a simulated one: torch, and the loader's
// variants the model does not describe (it keeps the last partial minibatch, as --no-drop-last
// does, so that one is accepted). --data is the real run's too, and a simulated run's only with
// a weights option (it then trains on that data: s_check_data_sim).
static const int s_real_only[] = {S_OPT_DEVICE, S_OPT_DROP_LAST, S_OPT_LOADER_ONLY};
// The run's options a simulated run does not take (the model has no thread knob).
static const char *const s_real_only_run[] = {"--threads", NULL};

// Parser state: the options so far and what the final checks need to know.
typedef struct s_parse {
    train_run_opts_t o; // the options so far
    int sim_only;       // the first simulation option (0: none)
    int real_only;      // the first real-run-only option (0: none)
    bool has_sim_seed;  // --sim-seed was given
    const jf_schema_field_t *run_fields[S_RUN_FLAGS_MAX]; // borrowed; the table's with a flag
    bool run_given[S_RUN_FLAGS_MAX];                      // each was given
    size_t n_run;                                         // entries of run_fields
    struct option options[S_OPTIONS_MAX + 1];             // getopt's table, {0}-terminated
    jf_schema_leaf_t minibatches_leaf; // the run spec's "--minibatches" leaf, if it has one
    bool has_minibatches_leaf;         // then it replaces the trainer's own --minibatches
} s_parse_t;

// The trainer's own options; the run's come from the schema table (s_add_run_option).
static const struct option s_long_options[] = {
    {"data", required_argument, NULL, S_OPT_DATA},
    {"device", required_argument, NULL, S_OPT_DEVICE},
    {"drop-last", no_argument, NULL, S_OPT_DROP_LAST},
    {"no-drop-last", no_argument, NULL, S_OPT_NO_DROP_LAST},
    {"json-out", required_argument, NULL, S_OPT_JSON_OUT},
    {"max-batches", required_argument, NULL, S_OPT_MAX_BATCHES},
    {"loader-only", no_argument, NULL, S_OPT_LOADER_ONLY},
    {"init-weights", required_argument, NULL, S_OPT_INIT_WEIGHTS},
    {"out-weights", required_argument, NULL, S_OPT_OUT_WEIGHTS},
    {"minibatches", required_argument, NULL, S_OPT_MINIBATCHES},
    {"shard", required_argument, NULL, S_OPT_SHARD},
    {"simulate", no_argument, NULL, S_OPT_SIMULATE},
    {"sim-params", required_argument, NULL, S_OPT_SIM_PARAMS},
    {"sim-board-type", required_argument, NULL, S_OPT_SIM_BOARD_TYPE},
    {"sim-board", required_argument, NULL, S_OPT_SIM_BOARD},
    {"sim-seed", required_argument, NULL, S_OPT_SIM_SEED},
    {"sim-mode", required_argument, NULL, S_OPT_SIM_MODE},
    {"sim-medium", required_argument, NULL, S_OPT_SIM_MEDIUM},
    {"sim-point", required_argument, NULL, S_OPT_SIM_POINT},
    {"sim-scale", required_argument, NULL, S_OPT_SIM_SCALE},
    {"sim-speed", required_argument, NULL, S_OPT_SIM_SPEED},
    {"sim-cache-resident", required_argument, NULL, S_OPT_SIM_CACHE_RESIDENT},
    {"sim-dvfs-off", no_argument, NULL, S_OPT_SIM_DVFS_OFF},
    {"sim-telemetry-hz", required_argument, NULL, S_OPT_SIM_TELEMETRY_HZ},
    {"help", no_argument, NULL, S_OPT_HELP},
    {NULL, 0, NULL, 0},
};

static void s_usage_simulate(FILE *out)
{
    (void)fprintf(
        out,
        "\n"
        "       jetfleet-train --simulate --sim-params FILE --sim-board-type TYPE\n"
        "                      --sim-board NAME --sim-seed N --sim-mode ID|NAME\n"
        "                      --sim-medium MEDIUM\n"
        "                      [--sim-scale F] [--sim-speed X] [--sim-cache-resident F]\n"
        "                      [--sim-point C,CPU,GPU,EMC] [--sim-dvfs-off]\n"
        "                      [--sim-telemetry-hz N]\n"
        "                      --model M --workers N --batch N\n"
        "                      --epochs N [--prefetch N] [--seed N] [--json-out FILE]\n"
        "                      [--max-batches N] [--minibatches N]\n"
        "                      [--init-weights FILE] [--out-weights FILE] [--data DIR]\n"
        "                      [--shard K/N]\n"
        "\n"
        "Simulates the run on the performance model of a Jetson board (docs/simulator.md): no\n"
        "dataset and no torch, the same record lines as a real run, marked \"platform\": \"sim\",\n"
        "with the model's times (uncompressed) and per-rail power, written in real time divided\n"
        "by the speed. A workload that does not fit the board reports oom and exits 3. The\n"
        "dataset is the model's: lenet5 mnist, resnet18 and vgg11 cifar10, mobilenetv3 gld23k.\n"
        "--data, --device, --threads, --drop-last and --loader-only do not apply.\n"
        "\n"
        "  --sim-params FILE      the model's parameter file (agent/share/sim_params.yaml)\n"
        "  --sim-board-type TYPE  the Jetson simulated: agx-xavier, xavier-nx, nano, orin-agx,\n"
        "                         orin-nano\n"
        "  --sim-board NAME       the simulated board's name: with --sim-seed, its persistent\n"
        "                         speed and power factors\n"
        "  --sim-seed N           the fleet's seed of board factors, 0..2^63-1\n"
        "  --sim-mode ID|NAME     nvpmodel power mode, by id or name (MODE_15W_6CORE)\n"
        "  --sim-medium MEDIUM    storage the dataset is read from: %s\n"
        "  --sim-point C,CPU,GPU,EMC  a custom point over the mode: C cores online and the\n"
        "                         CPU, GPU and EMC clocks in Hz (0 for GPU or EMC: the mode's)\n"
        "  --sim-scale F          dataset size relative to the real one, %g..%g (default %g)\n"
        "  --sim-speed X          modelled seconds per wall-clock second, %g..%g (default %g)\n"
        "  --sim-cache-resident F share of the dataset in the page cache at the start, 0..1\n"
        "                         (default 0: cold; the agent passes its board's warm cache)\n"
        "  --sim-dvfs-off         with --idle-s: the idle board's clocks pinned\n"
        "  --sim-telemetry-hz N   with --idle-s: the sampler's rate, 0..50 (0: not sampling)\n"
        "  --seed N               also seeds the run's noise and minibatch draws\n"
        "  --max-batches N        at most N minibatches per epoch; the epoch's figures are then\n"
        "                         those of its first N minibatches\n"
        "  --minibatches N        the same (a federated round's local work; 0: every minibatch)\n"
        "  --shard K/N            train on part K of N of the dataset (samples i with i mod N = K):\n"
        "                         the modelled dataset is 1/N of the model's, and so is --data's\n"
        "  --init-weights FILE, --out-weights FILE\n"
        "                         with either, the model also trains for real, on the CPU with\n"
        "                         libtorch, on the dataset in --data (required then): losses\n"
        "                         are real, times and power stay the model's. jetfleet-train-sim\n"
        "                         hands such a run to jetfleet-train beside it\n"
        "  --infer-model M, --infer-batch N, --infer-rate R, --infer-budget-ms L\n"
        "                         inference beside training: model, requests per minibatch,\n"
        "                         requests per second, latency budget (docs/concurrent.md);\n"
        "                         modelled with --simulate; without it a second model serves\n"
        "                         the requests for real between the training minibatches\n",
        jf_run_spec_media(), TRAIN_SIM_SCALE_MIN, TRAIN_SIM_SCALE_MAX, TRAIN_SIM_SCALE_DEFAULT,
        TRAIN_SIM_SPEED_MIN, TRAIN_SIM_SPEED_MAX, TRAIN_SIM_SPEED_DEFAULT);
}

void train_options_usage(FILE *out)
{
    (void)fprintf(
        out,
        "usage: jetfleet-train --model lenet5|resnet18|vgg11|mobilenetv3 --data DIR --workers N --batch N\n"
        "                      --epochs N [--prefetch N] [--threads N] [--device cpu|cuda|auto]\n"
        "                      [--seed N] [--drop-last|--no-drop-last] [--json-out FILE]\n"
        "                      [--max-batches N] [--minibatches N] [--loader-only]\n"
        "                      [--init-weights FILE] [--out-weights FILE] [--shard K/N]\n"
        "                      [--infer-model M --infer-batch N --infer-rate R\n"
        "                       --infer-budget-ms L]\n"
        "       jetfleet-train --help | --version (--version only as the one argument)\n"
        "\n"
        "Trains a model on the MNIST, CIFAR-10 or GLD-23k training set in DIR (kind recognised\n"
        "from the files) and writes one JSON record per line to stdout: start, minibatch, epoch,\n"
        "done, or error. Logs go to stderr. Exit codes: 0 ok, 1 failure, 2 invalid input, 3 out\n"
        "of memory. Models pair with datasets: lenet5-mnist, resnet18 and vgg11-cifar10,\n"
        "mobilenetv3-gld23k.\n"
        "\n"
        "  --workers N      loader threads, 0..%d (0: fetch on the training thread)\n"
        "  --prefetch N     batches prepared ahead per worker, 1..%d (default %d)\n"
        "  --threads N      torch intra-op threads, 0..%d (0 or absent: 1)\n"
        "  --device D       cpu (default), cuda or auto\n"
        "  --seed N         model initialisation and shuffle seed (default 0)\n"
        "  --drop-last      drop each epoch's last incomplete minibatch (default: keep it)\n"
        "  --json-out FILE  also write the whole run as one JSON document to FILE at the end\n"
        "  --max-batches N  at most N minibatches per epoch (for tests)\n"
        "  --minibatches N  the same, as a federated round's local work (0: every minibatch)\n"
        "  --init-weights FILE  start from this weight set instead of the seeded initialisation\n"
        "  --out-weights FILE   after the last epoch, write the final weights there (atomically)\n"
        "  --shard K/N      train on part K of N of the dataset: samples i with i mod N = K\n"
        "  --loader-only    the data pipeline alone (fetch, decode, preprocess, batch): no model,\n"
        "                   compute 0; samples_per_s is then the loader's images/s\n"
        "  --roofline       the roofline microbenchmarks instead of training (docs/roofline.md);\n"
        "                   the agent sets it from the run spec\n"
        "\n"
        "Test hook: environment variable %s=crash raises SIGSEGV after the first epoch record;\n"
        "%s=oom reports {\"kind\":\"error\",\"reason\":\"oom\"} and exits 3 after it.\n",
        TRAIN_LOADER_WORKERS_MAX, TRAIN_LOADER_PREFETCH_MAX, TRAIN_LOADER_PREFETCH_DEFAULT,
        JF_THREADS_MAX, TRAIN_RUN_FAULT_ENV, TRAIN_RUN_FAULT_ENV);
    s_usage_simulate(out);
}

void train_options_usage_simulate(FILE *out)
{
    (void)fprintf(out, "usage: jetfleet-train-sim OPTIONS: jetfleet-train --simulate OPTIONS, without\n"
                       "libtorch (--simulate is implied):\n");
    s_usage_simulate(out);
}

static int s_number(const char *name, const char *arg, int64_t min, int64_t max, int64_t *ret,
                    jf_err_t *err)
{
    int rc = jf_parse_i64(arg, min, max, ret, err);
    return rc < 0 ? jf_err_prefix(err, "--%s", name) : 0;
}

// Applies one option. Numbers are range-checked here; names are checked by train_run.
static int s_apply(train_run_opts_t *o, int id, const char *arg, jf_err_t *err)
{
    int64_t v = 0;
    int rc = 0;
    switch (id) {
    case S_OPT_DATA:
        o->data_dir = arg;
        break;
    case S_OPT_DEVICE:
        o->device = arg;
        break;
    case S_OPT_JSON_OUT:
        o->json_out = arg;
        break;
    case S_OPT_LOADER_ONLY:
        o->loader_only = true;
        break;
    case S_OPT_DROP_LAST:
    case S_OPT_NO_DROP_LAST:
        o->drop_last = id == S_OPT_DROP_LAST;
        break;
    case S_OPT_MAX_BATCHES:
    case S_OPT_MINIBATCHES:
        rc = s_number(id == S_OPT_MINIBATCHES ? "minibatches" : "max-batches", arg, 0,
                      TRAIN_OPTIONS_MAX_BATCHES_MAX, &v, err);
        o->max_batches = (size_t)v;
        break;
    case S_OPT_INIT_WEIGHTS:
        o->init_weights = arg;
        break;
    case S_OPT_OUT_WEIGHTS:
        o->out_weights = arg;
        break;
    case S_OPT_SHARD:
        rc = train_shard_parse(arg, &o->shard, err);
        break;
    default:
        rc = jf_err_set(err, -EINVAL, "internal: option %d has no handler", id);
        break;
    }
    return rc;
}

static int s_real(const char *name, const char *arg, double min, double max, double *ret,
                  jf_err_t *err)
{
    int rc = jf_parse_double(arg, min, max, ret, err);
    return rc < 0 ? jf_err_prefix(err, "--%s", name) : 0;
}

// --sim-point C,CPU,GPU,EMC: four comma-separated integers (cores, then clocks in Hz).
static int s_sim_point(train_run_sim_opts_t *s, const char *arg, jf_err_t *err)
{
    static const char *const names[] = {"cores", "CPU Hz", "GPU Hz", "EMC Hz"};
    static const int64_t max[] = {JF_RUN_CORES_MAX, JF_RUN_CLOCK_MAX_HZ, JF_RUN_CLOCK_MAX_HZ,
                                  JF_RUN_CLOCK_MAX_HZ};
    int64_t v[4] = {0};
    const char *p = arg;
    for (int i = 0; i < 4; i++) {
        const char *comma = i < 3 ? strchr(p, ',') : p + strlen(p);
        char word[32] = "";
        size_t n = comma ? (size_t)(comma - p) : 0;
        if (!comma || n >= sizeof word) {
            return jf_err_set(err, -EINVAL, "--sim-point: expected C,CPU,GPU,EMC, got '%.64s'",
                              arg);
        }
        memcpy(word, p, n);
        if (jf_parse_i64(word, i < 2 ? 1 : 0, max[i], &v[i], err) != 0) {
            return jf_err_prefix(err, "--sim-point: %s", names[i]);
        }
        p = comma + 1;
    }
    s->point_cores = (int)v[0];
    s->point_cpu_hz = v[1];
    s->point_gpu_hz = v[2];
    s->point_emc_hz = v[3];
    return 0;
}

// Applies one option of a simulated run. Names are checked by train_sim.
static int s_apply_sim(train_run_sim_opts_t *s, int id, const char *arg, jf_err_t *err)
{
    int64_t v = 0;
    int rc = 0;
    switch (id) {
    case S_OPT_SIM_PARAMS:
        s->params_path = arg;
        break;
    case S_OPT_SIM_BOARD_TYPE:
        s->board_type = arg;
        break;
    case S_OPT_SIM_BOARD:
        s->board = arg;
        break;
    case S_OPT_SIM_MODE:
        s->mode = arg;
        break;
    case S_OPT_SIM_MEDIUM:
        s->medium = arg;
        break;
    case S_OPT_SIM_SEED:
        rc = s_number("sim-seed", arg, 0, INT64_MAX, &v, err);
        s->fleet_seed = (uint64_t)v;
        break;
    case S_OPT_SIM_SCALE:
        rc = s_real("sim-scale", arg, TRAIN_SIM_SCALE_MIN, TRAIN_SIM_SCALE_MAX, &s->scale, err);
        break;
    case S_OPT_SIM_SPEED:
        rc = s_real("sim-speed", arg, TRAIN_SIM_SPEED_MIN, TRAIN_SIM_SPEED_MAX, &s->speed, err);
        break;
    case S_OPT_SIM_CACHE_RESIDENT:
        rc = s_real("sim-cache-resident", arg, 0.0, 1.0, &s->cache_resident, err);
        break;
    case S_OPT_SIM_POINT:
        rc = s_sim_point(s, arg, err);
        break;
    case S_OPT_SIM_DVFS_OFF:
        s->dvfs_off = true;
        break;
    case S_OPT_SIM_TELEMETRY_HZ:
        rc = s_number("sim-telemetry-hz", arg, 0, JF_TELEMETRY_HZ_MAX, &v, err);
        s->telemetry_hz = (int)v;
        break;
    default:
        rc = jf_err_set(err, -EINVAL, "internal: option %d has no handler", id);
        break;
    }
    return rc;
}

// The long name of option id (without "--"), for messages.
static const char *s_option_name(const s_parse_t *p, int id)
{
    for (const struct option *opt = p->options; opt->name; opt++) {
        if (opt->val == id) {
            return opt->name;
        }
    }
    return "?";
}

static bool s_is_real_only(const s_parse_t *p, int id)
{
    for (size_t i = 0; i < sizeof s_real_only / sizeof s_real_only[0]; i++) {
        if (s_real_only[i] == id) {
            return true;
        }
    }
    for (const char *const *f = s_real_only_run; id >= S_OPT_RUN && *f; f++) {
        if (strcmp(p->run_fields[id - S_OPT_RUN]->flag, *f) == 0) {
            return true;
        }
    }
    return false;
}

// Whether the run's option flag ("--model") was given.
static bool s_run_given(const s_parse_t *p, const char *flag)
{
    for (size_t i = 0; i < p->n_run; i++) {
        if (strcmp(p->run_fields[i]->flag, flag) == 0) {
            return p->run_given[i];
        }
    }
    return false;
}

// Applies one option, noting the first of each kind that only one kind of run accepts.
static int s_apply_any(s_parse_t *p, int id, const char *arg, jf_err_t *err)
{
    if (p->real_only == 0 && s_is_real_only(p, id)) {
        p->real_only = id;
    }
    if (id >= S_OPT_RUN) {
        p->run_given[id - S_OPT_RUN] = true;
        return jf_schema_from_flag(jf_run_spec_schema(), &p->o.run,
                                   p->run_fields[id - S_OPT_RUN]->flag, arg, err);
    }
    if (id == S_OPT_SIMULATE) {
        p->o.simulate = true;
        return 0;
    }
    if (id < S_OPT_SIMULATE) {
        return s_apply(&p->o, id, arg, err);
    }
    p->sim_only = p->sim_only ? p->sim_only : id;
    p->has_sim_seed = p->has_sim_seed || id == S_OPT_SIM_SEED;
    return s_apply_sim(&p->o.sim, id, arg, err);
}

// The first required run option missing: --model (unless the loader runs alone), --workers,
// --batch, --epochs; NULL when all are there.
static const char *s_missing_run(const s_parse_t *p, bool need_model)
{
    static const char *const required[] = {"--model", "--workers", "--batch", "--epochs"};
    for (size_t i = need_model ? 0 : 1; i < sizeof required / sizeof required[0]; i++) {
        if (!s_run_given(p, required[i])) {
            return required[i];
        }
    }
    return NULL;
}

// A simulated run reads no data, unless a weights option makes it train for real (on the CPU,
// with the dataset in --data; docs/simulator.md "Local rounds").
static int s_check_data_sim(const s_parse_t *p, jf_err_t *err)
{
    bool learns = p->o.init_weights || p->o.out_weights;
    if (p->o.data_dir && !learns) {
        return jf_err_set(err, -EINVAL,
                          "--data does not apply to --simulate without --init-weights or "
                          "--out-weights");
    }
    if (!p->o.data_dir && learns) {
        return jf_err_set(err, -EINVAL,
                          "missing required option --data for --simulate with --%s: the model "
                          "trains for real on that dataset",
                          p->o.init_weights ? "init-weights" : "out-weights");
    }
    return 0;
}

static int s_check_required_sim(const s_parse_t *p, jf_err_t *err)
{
    const train_run_sim_opts_t *s = &p->o.sim;
    if (p->real_only) {
        return jf_err_set(err, -EINVAL, "--%s does not apply to --simulate",
                          s_option_name(p, p->real_only));
    }
    int rc = s_check_data_sim(p, err);
    if (rc < 0) {
        return rc;
    }
    const char *missing = s_missing_run(p, true);
    missing = missing            ? missing
              : !s->params_path  ? "--sim-params"
              : !s->board_type   ? "--sim-board-type"
              : !s->board        ? "--sim-board"
              : !p->has_sim_seed ? "--sim-seed"
              : !s->mode         ? "--sim-mode"
              : !s->medium       ? "--sim-medium"
                                 : NULL;
    if (missing) {
        return jf_err_set(err, -EINVAL, "missing required option %s for --simulate", missing);
    }
    return 0;
}

static int s_check_required(const s_parse_t *p, jf_err_t *err)
{
    if (p->o.simulate) {
        return s_check_required_sim(p, err);
    }
    if (p->o.loader_only && (p->o.init_weights || p->o.out_weights)) {
        return jf_err_set(err, -EINVAL, "--%s needs a model: not with --loader-only",
                          p->o.init_weights ? "init-weights" : "out-weights");
    }
    if (p->sim_only) {
        return jf_err_set(err, -EINVAL, "--%s needs --simulate", s_option_name(p, p->sim_only));
    }
    const char *missing = !s_run_given(p, "--model") && !p->o.loader_only ? "--model"
                          : !p->o.data_dir                                ? "--data"
                                                                          : NULL;
    missing = missing ? missing : s_missing_run(p, false);
    if (missing) {
        return jf_err_set(err, -EINVAL, "missing required option %s", missing);
    }
    return 0;
}

// getopt's table: every run spec field with a trainer flag, then the trainer's own options.
static int s_add_run_option(const jf_schema_leaf_t *leaf, void *arg)
{
    s_parse_t *p = arg;
    const char *flag = leaf->field->flag;
    if (!flag) {
        return 0;
    }
    if (p->n_run >= S_RUN_FLAGS_MAX || strncmp(flag, "--", 2) != 0) {
        return -E2BIG; // a broken table: unit.schema checks flags
    }
    if (strcmp(flag, "--minibatches") == 0) {
        p->minibatches_leaf = *leaf;
        p->has_minibatches_leaf = true;
    }
    p->options[p->n_run] = (struct option){
        flag + 2, leaf->field->type == JF_SCHEMA_BOOL ? no_argument : required_argument, NULL,
        S_OPT_RUN + (int) p->n_run};
    p->run_fields[p->n_run++] = leaf->field;
    return 0;
}

static int s_build_options(s_parse_t *p, jf_err_t *err)
{
    size_t n_own = sizeof s_long_options / sizeof s_long_options[0]; // with the terminator
    if (jf_schema_each_leaf(jf_run_spec_schema(), s_add_run_option, p) != 0 ||
        p->n_run + n_own > S_OPTIONS_MAX + 1) {
        return jf_err_set(err, -EINVAL, "internal: too many run options for the trainer's table");
    }
    size_t at = p->n_run;
    for (size_t i = 0; i < n_own; i++) {
        // A run spec field with the same flag takes the option (getopt would match the first).
        bool taken = p->has_minibatches_leaf && s_long_options[i].val == S_OPT_MINIBATCHES;
        if (!taken) {
            p->options[at++] = s_long_options[i];
        }
    }
    return 0;
}

// The trainer's fields from the run's options parsed into o->run; a run spec field
// "minibatches" with the trainer flag --minibatches, when the table has one, is max_batches.
static void s_from_run(s_parse_t *p)
{
    train_run_opts_t *o = &p->o;
    if (p->has_minibatches_leaf && jf_schema_leaf_is_present(&p->minibatches_leaf, &o->run) &&
        s_run_given(p, "--minibatches")) {
        int64_t v = jf_schema_leaf_int(&p->minibatches_leaf, &o->run);
        o->max_batches = v > 0 ? (size_t)v : 0;
    }
    o->workers = o->run.workers;
    o->prefetch = o->run.prefetch;
    o->batch = (size_t) o->run.batch_size;
    o->epochs = o->run.epochs;
    o->threads = o->run.threads;
    o->seed = o->run.seed;
}

static int s_parse_fault(train_fault_t *ret_fault, jf_err_t *err)
{
    const char *text = getenv(TRAIN_RUN_FAULT_ENV);
    if (!text || !*text) {
        *ret_fault = TRAIN_FAULT_NONE;
    } else if (strcmp(text, "crash") == 0) {
        *ret_fault = TRAIN_FAULT_CRASH;
    } else if (strcmp(text, "oom") == 0) {
        *ret_fault = TRAIN_FAULT_OOM;
    } else {
        return jf_err_set(err, -EINVAL, "%s must be crash or oom, got '%.64s'", TRAIN_RUN_FAULT_ENV,
                          text);
    }
    return 0;
}

int train_options_parse(int argc, char *argv[], train_run_opts_t *ret_opts, bool *ret_help,
                        jf_err_t *err)
{
    s_parse_t p = {
        .o = {.device = "cpu",
              .run = {.prefetch = TRAIN_LOADER_PREFETCH_DEFAULT},
              .sim = {.scale = TRAIN_SIM_SCALE_DEFAULT, .speed = TRAIN_SIM_SPEED_DEFAULT}}};
    *ret_help = false;
    int rc = s_build_options(&p, err);
    if (rc != 0) {
        return rc;
    }
    optind = 0; // GNU getopt: 0 re-initialises, so the parser can run more than once
    opterr = 0; // we report errors ourselves, through err
    int id = 0;
    while (rc == 0 && (id = getopt_long(argc, argv, ":h", p.options, NULL)) != -1) {
        if (id == 'h') {
            *ret_help = true;
            return 0;
        }
        if (id == '?' || id == ':') {
            const char *what = id == ':' ? "missing value for" : "unknown option";
            return jf_err_set(err, -EINVAL, "%s '%.64s'", what, argv[optind - 1]);
        }
        rc = s_apply_any(&p, id, optarg, err);
    }
    if (rc == 0 && optind < argc) {
        rc = jf_err_set(err, -EINVAL, "unexpected argument '%.64s'", argv[optind]);
    }
    rc = rc < 0 ? rc : s_check_required(&p, err);
    rc = rc < 0 ? rc : s_parse_fault(&p.o.fault, err);
    if (rc == 0) {
        s_from_run(&p);
        *ret_opts = p.o;
    }
    return rc;
}
