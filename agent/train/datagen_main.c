/* jetfleet-datagen: writes a synthetic MNIST, CIFAR-10 or GLD-23k training set in the real
 * formats (train_datagen.h). Exit codes: 0 ok, 1 failure, 2 usage. */
#include "jf_log.h"
#include "jf_parse.h"
#include "jf_version.h"
#include "train_datagen.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

static const char s_usage[] =
    "usage: jetfleet-datagen --kind mnist|cifar10|gld23k --scale S --seed N --out DIR\n"
    "       jetfleet-datagen --help | --version\n"
    "  S in (0, 16] multiplies the real training-set size (60000 MNIST, 50000 CIFAR-10,\n"
    "  23080 GLD-23k images; at least one is written)\n";

static const struct option s_long_options[] = {
    {"kind", required_argument, NULL, 'k'}, {"scale", required_argument, NULL, 's'},
    {"seed", required_argument, NULL, 'n'}, {"out", required_argument, NULL, 'o'},
    {"help", no_argument, NULL, 'h'},       {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0}};

static int s_apply(train_datagen_opts_t *o, int id, const char *arg, jf_err_t *err)
{
    int64_t seed = 0;
    int rc = 0;
    switch (id) {
    case 'k':
        return train_dataset_kind_parse(arg, &o->kind, err);
    case 's':
        rc = jf_parse_double(arg, 0.0, TRAIN_DATAGEN_SCALE_MAX, &o->scale, err);
        return rc < 0 || o->scale > 0.0 ? rc : jf_err_set(err, -EINVAL, "--scale must be > 0");
    case 'n':
        rc = jf_parse_i64(arg, 0, INT64_MAX, &seed, err);
        o->seed = (uint64_t)seed;
        return rc;
    case 'o':
        o->out_dir = arg;
        return 0;
    default:
        return jf_err_set(err, -EINVAL, "unknown option or missing value '%s'", arg);
    }
}

// Returns 0 to run, 1 for --help, 2 for --version, or -EINVAL.
static int s_parse(int argc, char *argv[], train_datagen_opts_t *o, jf_err_t *err)
{
    opterr = 0; // errors are reported through err
    int id = 0, rc = 0, seen = 0;
    while (rc == 0 && (id = getopt_long(argc, argv, ":h", s_long_options, NULL)) != -1) {
        bool known = id == 'k' || id == 's' || id == 'n' || id == 'o';
        seen |= id == 'k' ? 1 : id == 's' ? 2 : id == 'n' ? 4 : id == 'o' ? 8 : 0;
        rc = id == 'h' ? 1 : id == 'V' ? 2 : s_apply(o, id, known ? optarg : argv[optind - 1], err);
    }
    if (rc == 0 && (seen != 15 || o->scale <= 0.0 || !o->out_dir || optind < argc)) {
        rc = jf_err_set(err, -EINVAL, "--kind, --scale, --seed and --out are required");
    }
    return rc;
}

int main(int argc, char *argv[])
{
    jf_log_open("jetfleet-datagen", JF_LOG_SINK_STDERR, JF_LOG_NOTICE);
    train_datagen_opts_t opts = {0};
    jf_err_t err = {0};
    int rc = s_parse(argc, argv, &opts, &err);
    if (rc == 2) {
        (void)fputs("jetfleet-datagen " JF_VERSION "\n", stdout);
        jf_log_close();
        return 0;
    }
    if (rc != 0) {
        (void)fprintf(rc > 0 ? stdout : stderr, "%s%s%s", rc > 0 ? "" : err.msg, rc > 0 ? "" : "\n",
                      s_usage);
        jf_log_close();
        return rc > 0 ? 0 : 2;
    }
    rc = train_datagen_write(&opts, &err);
    if (rc < 0) {
        jf_log_error("datagen: %s", err.msg);
    }
    jf_log_close();
    return rc < 0 ? 1 : 0;
}
