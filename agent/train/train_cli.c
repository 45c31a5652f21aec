/* The shared life of jetfleet-train's and jetfleet-train-sim's mains (train_cli.h). */
#include "train_cli.h"

#include "jf_log.h"
#include "jf_version.h"
#include "train_options.h"
#include "train_records.h"
#include "train_sim.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

train_cli_exit_t train_cli_fail(const jf_err_t *err, const char *reason)
{
    jf_log_error("train: %s", err->msg);
    (void)train_records_emit_error(stdout, reason, err->msg); // stdout gone: nothing to do
    if (strcmp(reason, "oom") == 0) {
        return TRAIN_CLI_EXIT_OOM;
    }
    return strcmp(reason, "invalid") == 0 ? TRAIN_CLI_EXIT_INVALID : TRAIN_CLI_EXIT_FAILED;
}

int train_cli_exec_sim(const train_run_opts_t *opts, jf_err_t *err)
{
    train_sim_t *sim = train_sim_new(opts, stdout, err);
    int rc = sim ? train_sim_exec(sim, err) : err->code;
    train_sim_destroy(&sim);
    return rc;
}

int train_cli_handoff(int argc, char *argv[], jf_err_t *err)
{
    train_run_opts_t opts = {0};
    bool help = false;
    jf_err_t parse_err = {0};
    if (train_options_parse(argc, argv, &opts, &help, &parse_err) < 0 || help ||
        !(opts.init_weights || opts.out_weights)) {
        return 0;
    }
    char self[PATH_MAX] = "";
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash = n > 0 ? memchr(self, '/', (size_t) n) : NULL;
    if (!slash) {
        return jf_err_set(err, -EIO, "cannot find this program's directory: %s",
                          n < 0 ? strerror(errno) : "no '/' in /proc/self/exe");
    }
    self[n] = '\0';
    *strrchr(self, '/') = '\0';
    char trainer[PATH_MAX + sizeof TRAIN_CLI_TRAINER + 1];
    (void) snprintf(trainer, sizeof trainer, "%s/%s", self, TRAIN_CLI_TRAINER);
    char *program = argv[0];
    argv[0] = trainer;
    (void) fflush(stdout); // nothing written yet; be sure before the image is replaced
    execv(trainer, argv);
    argv[0] = program;
    return jf_err_set(err, -EIO,
                      "--init-weights/--out-weights: the model trains in %s, which cannot be "
                      "run: %s",
                      trainer, strerror(errno));
}

train_cli_exit_t train_cli_main(const char *program, int argc, char *argv[], train_cli_exec_fn exec,
                                void (*usage)(FILE *out))
{
    jf_log_open(program, JF_LOG_SINK_STDERR, JF_LOG_NOTICE);
    train_run_opts_t opts = {0};
    bool help = false;
    jf_err_t err = {0};
    train_cli_exit_t code = TRAIN_CLI_EXIT_OK;
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        (void)printf("%s %s\n", program, JF_VERSION);
    } else if (train_options_parse(argc, argv, &opts, &help, &err) < 0) {
        (void)fprintf(stderr, "%s: %s (try --help)\n", program, err.msg);
        code = train_cli_fail(&err, "invalid");
    } else if (help) {
        usage(stdout);
    } else {
        int rc = exec(&opts, &err);
        code = rc < 0 ? train_cli_fail(&err, train_run_failure_reason(rc)) : TRAIN_CLI_EXIT_OK;
    }
    jf_log_close();
    return code;
}
