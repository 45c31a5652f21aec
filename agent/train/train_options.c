/* jetfleet-train option parsing with getopt_long and jf_parse (ranges from jf_run_spec.h and
 * train_loader.h). Long options only, so that a run's argv reads the same in every log. */
#include "train_options.h"

#include "jf_parse.h"
#include "jf_run_spec.h"
#include "train_loader.h"

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
};

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
    {"help", no_argument, NULL, S_OPT_HELP},
    {NULL, 0, NULL, 0},
};

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

static int s_check_required(const train_run_opts_t *o, jf_err_t *err)
{
    const char *missing = !o->model && !o->loader_only ? "--model"
                          : !o->data_dir   ? "--data"
                          : o->workers < 0 ? "--workers"
                          : o->batch == 0  ? "--batch"
                          : o->epochs == 0 ? "--epochs"
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
    train_run_opts_t o = {
        .device = "cpu", .workers = -1, .prefetch = TRAIN_LOADER_PREFETCH_DEFAULT};
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
        rc = s_apply(&o, id, optarg, err);
    }
    if (rc == 0 && optind < argc) {
        rc = jf_err_set(err, -EINVAL, "unexpected argument '%.64s'", argv[optind]);
    }
    rc = rc < 0 ? rc : s_check_required(&o, err);
    rc = rc < 0 ? rc : s_parse_fault(&o.fault, err);
    if (rc == 0) {
        *ret_opts = o;
    }
    return rc;
}
