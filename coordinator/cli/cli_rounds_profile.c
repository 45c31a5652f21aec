/* Profiling a board that has no fitted model before a rounds plan (cli_rounds.h; docs/rounds.md
 * "Planning"): an adaptive sweep of custom points of the board's type, written to a temporary
 * file and run through cli_adaptive_submit (docs/sweeps.md "Adaptive sweeps"). */
#include "cli_adaptive.h"
#include "cli_rounds.h"

#include "cli_board_clocks.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_TEXT_MAX     (64 * 1024)
#define S_EPOCHS       2 // the first epoch is the warm-up the models leave out
#define S_AXIS_N       4 // cores, CPU and GPU values of the grid
#define S_EMC_N        2 // EMC values of the grid
#define S_DIR_TEMPLATE "jetfleet-rounds-XXXXXX" // in $TMPDIR, else /tmp

// Fractions of each table the grid takes (index round(f * (steps - 1))): from near the bottom
// to the top, so the models see the range a plan chooses from, including points slow enough for
// a fast board to finish with a slow one. The tables are the board's own where its hello sent
// them (cli_board_clocks.h), else its family's; the EMC stops below the top of those, as the
// Xavier NX's family table is the AGX Xavier's EMC list (jf_board_clocks.c), whose 2133 MHz is
// above the NX's 1866 MHz cap, and a point above a board's cap is refused.
static const double s_frac[S_AXIS_N] = {0.1, 0.4, 0.7, 1.0};
static const double s_emc_frac[S_EMC_N] = {0.5, 0.85};

static int64_t s_step(const int64_t *steps, size_t n, double f)
{
    return steps[(size_t) (f * (double) (n - 1) + 0.5)];
}

// The grid's distinct values of one axis into out; returns how many.
static size_t s_axis(const int64_t *steps, size_t n, const double *frac, size_t nf, int64_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < nf && n > 0; i++) {
        int64_t v = s_step(steps, n, frac[i]);
        if (k == 0 || out[k - 1] != v) {
            out[k++] = v;
        }
    }
    return k;
}

// The sweep text: one board, the rounds' workload and loader settings, the grid's custom points.
static int s_sweep_text(const jf_rounds_t *cfg, const jf_board_spec_t *b, const char *medium,
                        const jf_board_clocks_t *c, char *text, char *ret_name)
{
    int64_t cores[S_AXIS_N], cpu[S_AXIS_N], gpu[S_AXIS_N], emc[S_EMC_N],
        core_steps[JF_BOARD_CORES_MAX];
    for (int i = 0; i < c->n_cpus; i++) {
        core_steps[i] = i + 1;
    }
    size_t n_cores = s_axis(core_steps, (size_t) c->n_cpus, s_frac, S_AXIS_N, cores);
    size_t n_cpu = s_axis(c->cpu_steps_hz, c->n_cpu_steps, s_frac, S_AXIS_N, cpu);
    size_t n_gpu = s_axis(c->gpu_steps_hz, c->n_gpu_steps, s_frac, S_AXIS_N, gpu);
    size_t n_emc = s_axis(c->emc_steps_hz, c->n_emc_steps, s_emc_frac, S_EMC_N, emc);
    (void) snprintf(ret_name, JF_IDENT_MAX + 1, "rounds-%.20s-%.30s", cfg->name, b->name);
    int len = snprintf(text, S_TEXT_MAX,
                       "name: %s\ndescription: \"profiling for rounds '%s'\"\n"
                       "target:\n  boards: [%s]\nworkloads:\n"
                       "  - {model: %s, dataset: %s, epochs: %d}\n"
                       "storage: [%s]\nworkers: [%d]\nbatch_sizes: [%d]\nseed: %llu\n"
                       "power_modes:\n",
                       ret_name, cfg->name, b->name, cfg->model, cfg->dataset, S_EPOCHS, medium,
                       cfg->workers, cfg->batch_size, (unsigned long long) cfg->seed);
    for (size_t i = 0; i < n_cores * n_cpu * n_gpu * n_emc && len > 0 && len < S_TEXT_MAX; i++) {
        len += snprintf(text + len, (size_t) (S_TEXT_MAX - len),
                        "  - custom: {cores: %lld, cpu_freq: %lld, gpu_freq: %lld, emc_freq: "
                        "%lld}\n",
                        (long long) cores[i % n_cores], (long long) cpu[i / n_cores % n_cpu],
                        (long long) gpu[i / n_cores / n_cpu % n_gpu],
                        (long long) emc[i / n_cores / n_cpu / n_gpu]);
    }
    return len > 0 && len < S_TEXT_MAX ? 0 : -E2BIG;
}

static int s_write(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return -errno;
    }
    size_t len = strlen(text);
    int rc = fwrite(text, 1, len, f) == len ? 0 : -EIO;
    return fclose(f) == 0 ? rc : -EIO;
}

// Writes text to <$TMPDIR or /tmp>/jetfleet-rounds-XXXXXX/<name>.yaml: the directory into dir
// (PATH_MAX), the file into path. Returns the exit code (a message on failure).
static int s_write_tmp(const char *name, const char *text, char *dir, char *path)
{
    const char *tmp = getenv("TMPDIR");
    (void) snprintf(dir, PATH_MAX, "%s/" S_DIR_TEMPLATE, tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        return cli_fail(CLI_EXIT_ERROR, "%s: cannot create a temporary directory: %s", dir,
                        strerror(errno));
    }
    (void) snprintf(path, PATH_MAX + JF_IDENT_MAX + 8, "%s/%s.yaml", dir, name);
    int rc = s_write(path, text);
    if (rc != 0) {
        (void) rmdir(dir);
        return cli_fail(CLI_EXIT_ERROR, "%s: cannot write: %s", path, strerror(-rc));
    }
    return CLI_EXIT_OK;
}

// The adaptive loop, again with more points while the fit fails (the loop resumes from the
// runs the store has, so only the new points run).
static int s_adaptive(cli_ctx_t *ctx, const char *path, const jf_board_spec_t *board,
                      const cli_rounds_profile_opts_t *opts)
{
    cli_adaptive_opts_t ao = {.n = opts->n,
                              .batch = CLI_ROUNDS_PROFILE_BATCH,
                              .seed = CLI_ROUNDS_PROFILE_SEED,
                              .timeout_us = opts->timeout_us};
    int code = cli_adaptive_submit(ctx, path, &ao);
    for (int t = 1; t < CLI_ROUNDS_PROFILE_TRIES && code == CLI_EXIT_ERROR; t++) {
        ao.n += CLI_ROUNDS_PROFILE_BATCH;
        printf("profiling: board '%s': no models yet (see above); profiling %d more points, %zu "
               "in all\n",
               board->name, CLI_ROUNDS_PROFILE_BATCH, ao.n);
        fflush(stdout);
        code = cli_adaptive_submit(ctx, path, &ao);
    }
    return code;
}

int cli_rounds_profile(cli_ctx_t *ctx, const jf_rounds_t *cfg, const jf_board_spec_t *board,
                       const cli_rounds_profile_opts_t *opts)
{
    jf_board_clocks_t own;
    cli_clocks_source_t source = CLI_CLOCKS_FAMILY;
    jf_err_t err = {0};
    int rc = cli_board_clocks(ctx, board, &own, &source, &err);
    const jf_board_clocks_t *clocks = rc == 0 ? &own : NULL;
    const char *medium = cfg->storage[0]    ? cfg->storage
                         : board->n_storage ? board->storage[0].medium
                                            : NULL;
    if (rc != 0 && rc != -ENOTSUP) {
        return cli_fail(CLI_EXIT_ERROR, "board '%s': %s", board->name, err.msg);
    }
    if (!clocks || !medium) {
        return cli_fail(CLI_EXIT_USAGE,
                        "board '%s' has no fitted model for %s and cannot be profiled: %s",
                        board->name, cfg->workload,
                        !clocks ? "its type has no custom power modes" : "it has no storage");
    }
    static char text[S_TEXT_MAX];
    char name[JF_IDENT_MAX + 1] = "";
    if (s_sweep_text(cfg, board, medium, clocks, text, name) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "board '%s': the profiling sweep is too large",
                        board->name);
    }
    char dir[PATH_MAX] = "";
    char path[PATH_MAX + JF_IDENT_MAX + 8] = "";
    int code = s_write_tmp(name, text, dir, path);
    if (code == CLI_EXIT_OK) {
        printf("profiling: board '%s' has no fitted time and power models for %s; profiling %zu "
               "custom points (adaptive sweep '%s', clocks: %s)\n",
               board->name, cfg->workload, opts->n, name, cli_clocks_source_text(source));
        fflush(stdout);
        code = s_adaptive(ctx, path, board, opts);
    }
    if (path[0]) { // best effort: a leftover file in the temporary directory harms nothing
        (void) unlink(path);
        (void) rmdir(dir);
    }
    return code;
}
