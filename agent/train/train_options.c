/* jetfleet-train option parsing with getopt_long and jf_parse (ranges from jf_run_spec.h,
 * train_loader.h and train_sim.h). Long options only, so that a run's argv reads the same in
 * every log. A real run and a simulated one (--simulate) share the workload options; each has
 * options of its own, and one given to the other kind of run is an error rather than ignored. */
#include "train_options.h"

#include "jf_parse.h"
#include "jf_run_spec.h"
#include "train_loader.h"
#include "train_sim.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum {
    S_OPT_HELP = 'h',
    S_OPT_MODEL = 256,
    S_OPT_DATA,
    S_OPT_WORKERS,
    S_OPT_PREFETCH,
    S_OPT_BATCH,
    S_OPT_EPOCHS,
    S_OPT_THREADS,
    S_OPT_DEVICE,
    S_OPT_SEED,
    S_OPT_DROP_LAST,
    S_OPT_NO_DROP_LAST,
    S_OPT_JSON_OUT,
    S_OPT_MAX_BATCHES,
    S_OPT_LOADER_ONLY,
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
};

// The options of a real run that mean nothing to a simulated one: the data, torch, and the
// loader's variants the model does not describe (it keeps the last partial minibatch, as
// --no-drop-last does, so that one is accepted).
static const int s_real_only[] = {S_OPT_DATA, S_OPT_DEVICE, S_OPT_THREADS, S_OPT_DROP_LAST,
                                  S_OPT_LOADER_ONLY};

// Parser state: the options so far and what the final checks need to know.
typedef struct s_parse {
    train_run_opts_t o; // the options so far
    int sim_only;       // the first simulation option given (0: none)
    int real_only;      // the first option of s_real_only given (0: none)
    bool has_sim_seed;  // --sim-seed was given
} s_parse_t;

static const struct option s_long_options[] = {
    {"model", required_argument, NULL, S_OPT_MODEL},
    {"data", required_argument, NULL, S_OPT_DATA},
    {"workers", required_argument, NULL, S_OPT_WORKERS},
    {"prefetch", required_argument, NULL, S_OPT_PREFETCH},
    {"batch", required_argument, NULL, S_OPT_BATCH},
    {"epochs", required_argument, NULL, S_OPT_EPOCHS},
    {"threads", required_argument, NULL, S_OPT_THREADS},
    {"device", required_argument, NULL, S_OPT_DEVICE},
    {"seed", required_argument, NULL, S_OPT_SEED},
    {"drop-last", no_argument, NULL, S_OPT_DROP_LAST},
    {"no-drop-last", no_argument, NULL, S_OPT_NO_DROP_LAST},
    {"json-out", required_argument, NULL, S_OPT_JSON_OUT},
    {"max-batches", required_argument, NULL, S_OPT_MAX_BATCHES},
    {"loader-only", no_argument, NULL, S_OPT_LOADER_ONLY},
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
        "                      [--sim-point C,CPU,GPU,EMC]\n"
        "                      --model M --workers N --batch N\n"
        "                      --epochs N [--prefetch N] [--seed N] [--json-out FILE]\n"
        "                      [--max-batches N]\n"
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
        "  --seed N               also seeds the run's noise and minibatch draws\n"
        "  --max-batches N        at most N minibatches per epoch; the epoch's figures are then\n"
        "                         those of its first N minibatches\n",
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
        "                      [--max-batches N] [--loader-only]\n"
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
        "  --loader-only    the data pipeline alone (fetch, decode, preprocess, batch): no model,\n"
        "                   compute 0; samples_per_s is then the loader's images/s\n"
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
    case S_OPT_MODEL:
        o->model = arg;
        break;
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
    case S_OPT_WORKERS:
        rc = s_number("workers", arg, 0, TRAIN_LOADER_WORKERS_MAX, &v, err);
        o->workers = (int)v;
        break;
    case S_OPT_PREFETCH:
        rc = s_number("prefetch", arg, 1, TRAIN_LOADER_PREFETCH_MAX, &v, err);
        o->prefetch = (int)v;
        break;
    case S_OPT_BATCH:
        rc = s_number("batch", arg, 1, JF_BATCH_MAX, &v, err);
        o->batch = (size_t)v;
        break;
    case S_OPT_EPOCHS:
        rc = s_number("epochs", arg, 1, JF_EPOCHS_MAX, &v, err);
        o->epochs = (int)v;
        break;
    case S_OPT_THREADS:
        rc = s_number("threads", arg, 0, JF_THREADS_MAX, &v, err);
        o->threads = (int)v;
        break;
    case S_OPT_SEED:
        rc = s_number("seed", arg, 0, INT64_MAX, &v, err);
        o->seed = (uint64_t)v;
        break;
    case S_OPT_MAX_BATCHES:
        rc = s_number("max-batches", arg, 0, TRAIN_OPTIONS_MAX_BATCHES_MAX, &v, err);
        o->max_batches = (size_t)v;
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
    default:
        rc = jf_err_set(err, -EINVAL, "internal: option %d has no handler", id);
        break;
    }
    return rc;
}

// The long name of option id, for messages.
static const char *s_option_name(int id)
{
    for (const struct option *opt = s_long_options; opt->name; opt++) {
        if (opt->val == id) {
            return opt->name;
        }
    }
    return "?";
}

static bool s_is_real_only(int id)
{
    for (size_t i = 0; i < sizeof s_real_only / sizeof s_real_only[0]; i++) {
        if (s_real_only[i] == id) {
            return true;
        }
    }
    return false;
}

// Applies one option, noting the first of each kind that only one kind of run accepts.
static int s_apply_any(s_parse_t *p, int id, const char *arg, jf_err_t *err)
{
    if (p->real_only == 0 && s_is_real_only(id)) {
        p->real_only = id;
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

static int s_check_required_sim(const s_parse_t *p, jf_err_t *err)
{
    const train_run_opts_t *o = &p->o;
    const train_run_sim_opts_t *s = &o->sim;
    if (p->real_only) {
        return jf_err_set(err, -EINVAL, "--%s does not apply to --simulate",
                          s_option_name(p->real_only));
    }
    const char *missing = !o->model          ? "--model"
                          : o->workers < 0   ? "--workers"
                          : o->batch == 0    ? "--batch"
                          : o->epochs == 0   ? "--epochs"
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
    if (p->sim_only) {
        return jf_err_set(err, -EINVAL, "--%s needs --simulate", s_option_name(p->sim_only));
    }
    const train_run_opts_t *o = &p->o;
    const char *missing = !o->model && !o->loader_only ? "--model"
                          : !o->data_dir               ? "--data"
                          : o->workers < 0             ? "--workers"
                          : o->batch == 0              ? "--batch"
                          : o->epochs == 0             ? "--epochs"
                                                       : NULL;
    if (missing) {
        return jf_err_set(err, -EINVAL, "missing required option %s", missing);
    }
    return 0;
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
              .workers = -1,
              .prefetch = TRAIN_LOADER_PREFETCH_DEFAULT,
              .sim = {.scale = TRAIN_SIM_SCALE_DEFAULT, .speed = TRAIN_SIM_SPEED_DEFAULT}}};
    *ret_help = false;
    optind = 0; // GNU getopt: 0 re-initialises, so the parser can run more than once
    opterr = 0; // we report errors ourselves, through err
    int id = 0, rc = 0;
    while (rc == 0 && (id = getopt_long(argc, argv, ":h", s_long_options, NULL)) != -1) {
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
        *ret_opts = p.o;
    }
    return rc;
}
