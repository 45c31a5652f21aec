/* jetfleet containers --sweep S: the container overhead (docs/containers.md), from the store: for
 * each combination the sweep ran bare and in a container, time, CPU/GPU/memory utilisation and
 * energy side by side, and their mean differences as name=value lines. Read-only. */
#include "cli_cmds.h"

#include "coord_store_runtime.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_USAGE    "usage: jetfleet containers --sweep NAME"
#define S_MIB      1048576.0
#define S_CELL_MAX 32
#define S_SIM_NOTE                                                                                 \
    "on simulated boards e2e_s and energy are the model's, which a container does not change; "    \
    "run_s (wall time, start-up included) and the utilisation are measured"

// Sums of the differences over the pairs that have both sides of a figure.
typedef struct s_sums {
    size_t pairs;
    double sum[6];
    size_t n[6];
} s_sums_t;

enum { S_E2E = 0, S_RUN, S_ENERGY, S_CPU, S_GPU, S_RAM };

// A cell: v with prec decimals, or "" when not measured.
static const char *s_cell(char *buf, bool has, int prec, double v)
{
    if (!has) {
        return "";
    }
    (void) snprintf(buf, S_CELL_MAX, "%.*f", prec, v);
    return buf;
}

// Adds one figure's difference: relative (%) for times and energy, absolute otherwise.
static void s_add(s_sums_t *s, int k, bool has_b, double b, bool has_c, double c, bool rel)
{
    if (has_b && has_c && (!rel || b > 0.0)) {
        s->sum[k] += rel ? 100.0 * (c - b) / b : c - b;
        s->n[k]++;
    }
}

static int s_print_pair(const coord_runtime_pair_t *p, void *arg)
{
    s_sums_t *s = arg;
    const coord_runtime_side_t *b = &p->bare, *c = &p->container;
    char cells[12][S_CELL_MAX];
    printf("%-10s %-14s %-22s %2d %4d %2d  %9s %9s  %8s %8s  %10s %10s  %6s %6s  %6s %6s  %8s "
           "%8s\n",
           p->board, p->workload, p->power, p->workers, p->batch_size, p->repeat,
           s_cell(cells[0], b->has_e2e, 3, b->e2e_s), s_cell(cells[1], c->has_e2e, 3, c->e2e_s),
           s_cell(cells[2], b->has_run, 2, b->run_s), s_cell(cells[3], c->has_run, 2, c->run_s),
           s_cell(cells[4], b->has_energy, 1, b->energy_mj),
           s_cell(cells[5], c->has_energy, 1, c->energy_mj),
           s_cell(cells[6], b->has_cpu, 1, b->cpu_pct), s_cell(cells[7], c->has_cpu, 1, c->cpu_pct),
           s_cell(cells[8], b->has_gpu, 1, b->gpu_pct), s_cell(cells[9], c->has_gpu, 1, c->gpu_pct),
           s_cell(cells[10], b->has_ram, 1, b->ram_bytes / S_MIB),
           s_cell(cells[11], c->has_ram, 1, c->ram_bytes / S_MIB));
    s->pairs++;
    s_add(s, S_E2E, b->has_e2e, b->e2e_s, c->has_e2e, c->e2e_s, true);
    s_add(s, S_RUN, b->has_run, b->run_s, c->has_run, c->run_s, true);
    s_add(s, S_ENERGY, b->has_energy, b->energy_mj, c->has_energy, c->energy_mj, true);
    s_add(s, S_CPU, b->has_cpu, b->cpu_pct, c->has_cpu, c->cpu_pct, false);
    s_add(s, S_GPU, b->has_gpu, b->gpu_pct, c->has_gpu, c->gpu_pct, false);
    s_add(s, S_RAM, b->has_ram, b->ram_bytes / S_MIB, c->has_ram, c->ram_bytes / S_MIB, false);
    return 0;
}

static void s_summary(const s_sums_t *s)
{
    static const char *const names[] = {"time_overhead_pct",   "run_time_overhead_pct",
                                        "energy_overhead_pct", "cpu_load_delta_pct",
                                        "gpu_load_delta_pct",  "ram_used_delta_mib"};
    printf("pairs=%zu\n", s->pairs);
    for (int k = 0; k < 6; k++) {
        if (s->n[k] > 0) {
            printf("%s=%.2f\n", names[k], s->sum[k] / (double) s->n[k]);
        }
    }
}

int cli_cmd_containers(cli_ctx_t *ctx, int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[0], "--sweep") != 0) {
        return cli_fail(CLI_EXIT_USAGE, S_USAGE);
    }
    jf_err_t err = {0};
    coord_store_t *store = cli_ctx_store(ctx, &err);
    if (!store || coord_store_sweep_exists(store, argv[1], &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    printf("bare against container runs of sweep '%s' (mean epoch e2e_s and energy_mj without the "
           "warm-up epoch; run_s: the attempt's wall time; cpu/gpu %%: mean load; ram: mean used "
           "MiB; empty: not measured)\n",
           argv[1]);
    printf(
        "%-10s %-14s %-22s %2s %4s %2s  %9s %9s  %8s %8s  %10s %10s  %6s %6s  %6s %6s  %8s %8s\n",
        "board", "workload", "power", "w", "bs", "r", "e2e_bare", "e2e_cont", "run_bare",
        "run_cont", "mj_bare", "mj_cont", "cpu_b", "cpu_c", "gpu_b", "gpu_c", "ram_b", "ram_c");
    s_sums_t sums = {0};
    if (coord_store_runtime_pairs(store, argv[1], s_print_pair, &sums, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    if (sums.pairs == 0) {
        return cli_fail(CLI_EXIT_ERROR,
                        "sweep '%s' has no done bare and container runs of one combination (a "
                        "sweep with runtime: [bare, container], docs/containers.md)",
                        argv[1]);
    }
    s_summary(&sums);
    printf("differences are container minus bare: times and energy in %% of bare, load in "
           "percentage points, RAM in MiB; %s\n",
           S_SIM_NOTE);
    return CLI_EXIT_OK;
}
