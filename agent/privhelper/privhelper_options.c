/* jetfleet-privhelper's options (getopt_long). */
#include "privhelper_options.h"

#include "jf_parse.h"
#include "privhelper_paths.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char s_usage[] =
    "usage: jetfleet-privhelper < request\n"
    "       jetfleet-privhelper --help | --version (as the one and only argument)\n"
    "Reads one request line (at most 256 bytes) on stdin and applies it as root.\n"
    "  nvpmodel <mode>          run nvpmodel -m <mode>; the mode must be in /etc/nvpmodel.conf\n"
    "  cpu-online <cpu> <0|1>   switch a core (not cpu0)\n"
    "  cpu-freq <cpu> <khz>     pin the policy whose first core is <cpu> (min = max)\n"
    "  gpu-freq <hz>            pin the GPU (min = max)\n"
    "  emc-freq <hz>            cap and lock the memory clock\n"
    "  dvfs off | dvfs restore  pin everything at its current cap, like jetson_clocks; undo\n"
    "  clocks-store             save the clock state; replies state=N\n"
    "  restore <state>          write state N back\n"
    "  drop-caches              sync, then drop the page cache\n"
    "Replies 'ok ...' on stdout and exits 0; else one line on stderr, exit 2 (rejected,\n"
    "nothing written) or 1 (failed while applying). See docs/privileges.md.\n";

const char *privhelper_options_usage(void)
{
    return s_usage;
}

static int s_path(char *dst, const char *arg, const char *opt, jf_err_t *err)
{
    int n = snprintf(dst, PATH_MAX, "%s", arg);
    if (arg[0] != '/' || n <= 0 || n >= PATH_MAX) {
        return jf_err_set(err, -EINVAL, "%s needs an absolute path", opt);
    }
    return 0;
}

static int s_option(int c, const char *arg, bool test_hooks, privhelper_options_t *o, jf_err_t *err)
{
    int64_t uid = 0;
    if ((c == 'r' || c == 'n' || c == 'u') && !test_hooks) {
        return jf_err_set(err, -EINVAL, "--%s is accepted only by a test build",
                          c == 'r'   ? "root"
                          : c == 'n' ? "nvpmodel"
                                     : "allow-uid");
    }
    switch (c) {
    case 'r':
        return s_path(o->root, arg, "--root", err);
    case 'n':
        return s_path(o->nvpmodel, arg, "--nvpmodel", err);
    case 'u':
        if (jf_parse_i64(arg, 0, INT32_MAX, &uid, NULL) != 0) {
            return jf_err_set(err, -EINVAL, "--allow-uid needs a uid, got '%.32s'", arg);
        }
        o->caller.n_allowed = 1;
        o->caller.allowed[0] = (uid_t) uid;
        return 0;
    default:
        return jf_err_set(err, -EINVAL, "unknown option or missing value");
    }
}

int privhelper_options_parse(int argc, char **argv, bool test_hooks, privhelper_options_t *ret_opts,
                             jf_err_t *err)
{
    static const struct option longs[] = {
        {"root", required_argument, NULL, 'r'},
        {"nvpmodel", required_argument, NULL, 'n'},
        {"allow-uid", required_argument, NULL, 'u'},
        {NULL, 0, NULL, 0},
    };
    privhelper_options_t o = {.root = "/", .nvpmodel = PRIVHELPER_NVPMODEL_BIN};
    privhelper_caller_default(&o.caller);
    // --help and --version only alone: never mixed with anything that would be acted on.
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "--version") == 0)) {
        *(argv[1][2] == 'h' ? &o.help : &o.version) = true;
        *ret_opts = o;
        return 0;
    }
    opterr = 0; // one line on stderr, ours
    optind = 1;
    int c = 0;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        int rc = s_option(c, optarg, test_hooks, &o, err);
        if (rc != 0) {
            return rc;
        }
    }
    if (optind < argc) {
        return jf_err_set(err, -EINVAL, "unexpected argument '%.32s' (the request comes on stdin)",
                          argv[optind]);
    }
    *ret_opts = o;
    return 0;
}
