/* jetfleet: the command-line client. Parses the global options and hands the rest to a command. */
#include "cli_cmds.h"
#include "jf_log.h"
#include "jf_version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_usage[] =
    "usage: jetfleet [--config FLEET.yaml | --store FILE] COMMAND ...\n"
    "       jetfleet --help | --version\n"
    "  status                                   boards, their runs and the queue\n"
    "  sweep plan FILE                          runs a sweep file expands to, per type and board\n"
    "  sweep submit FILE [--wait [--timeout SECONDS]]\n"
    "                                           submit (and follow it to the end; --wait exits 1\n"
    "                                           after SECONDS, or when no board that holds its\n"
    "                                           open runs is online for a heartbeat timeout)\n"
    "  sweep submit --adaptive N [--batch B] [--seed S] [--timeout SECONDS] FILE\n"
    "                                           profile N of the custom points, chosen in rounds,\n"
    "                                           then fit time and power models (docs/sweeps.md)\n"
    "  sweep list | show NAME | cancel NAME\n"
    "  runs [--sweep NAME] [--state STATE]      one line per run\n"
    "  results --sweep NAME                     mean epoch figures per done run (warm-up left "
    "out)\n"
    "  export --sweep NAME --what runs|epochs|minibatches|telemetry|results\n"
    "         [--format csv|json] [-o|--output FILE] [--dynamic]\n"
    "                                           tidy tables for pandas (--dynamic: the idle\n"
    "                                           baseline's columns too)\n"
    "  export --what rounds [--rounds ID] [--format csv|json] [-o FILE]\n"
    "                                           federated rounds, one row per board and round\n"
    "  import --sweep-name NAME FILE.csv [--board-type T] [--store FILE]\n"
    "                                           load runs measured elsewhere as an imported sweep\n"
    "                                           (docs/import.md)\n"
    "  store check [--store FILE]               integrity_check and schema version (1: damaged)\n"
    "  store backup -o FILE [--store FILE]      consistent copy, also while the coordinator runs\n"
    "  store salvage -o FILE [--store FILE]     what is readable of a damaged store, into FILE\n"
    "                                           (-o is also --output)\n"
    "  store prune [--dry-run] [--store FILE]   apply fleet.yaml's telemetry retention now\n"
    "                                           (--dry-run: say what it would do)\n"
    "  keys list                                agent keys by state (accepted, pending, ...)\n"
    "  keys accept NAME [--board BOARD]         trust a pending key for BOARD (default NAME)\n"
    "  keys reject NAME | revoke NAME           refuse a pending key; withdraw an accepted one\n"
    "  keys release BOARD                       end a board's quarantine (its key is accepted)\n"
    "  variability --sweep NAME [--metric e2e|stall|compute|energy|all] [--format text|csv|json]\n"
    "                                           board-to-board spread per configuration (valid\n"
    "                                           runs only; docs/analysis.md)\n"
    "  check --sweep NAME [--format text|csv|json] [--max-other-load PCT]\n"
    "                                           per done run: can its figures be trusted, and why\n"
    "                                           not\n"
    "  model fit --sweep S --workload W (--board B | --type T) --target time|power|energy\n"
    "         [--kind linear|mlp|phys] [--transfer-from ID\n"
    "         [--transfer-kind auto|head|finetune|phys]]\n"
    "         [--name NAME]\n"
    "                                           fit a model on the sweep's measured modes, store "
    "it\n"
    "  model list | predict --model ID --cores N --cpu-freq F --gpu-freq F --emc-freq F\n"
    "         [--workers N --batch N] | eval --model ID --sweep S [--board B]\n"
    "  pareto --sweep S --workload W --board B [--predicted TIME_ID,POWER_ID] [--format text|csv]\n"
    "                                           time-energy Pareto front of a board's modes\n"
    "  recommend --workload W --board B (--power-budget W | --time-budget S) [--margin PCT]\n"
    "         [--sweep S --time-model ID --power-model ID]\n"
    "                                           the best mode under a budget, from the given\n"
    "                                           models, else the newest fitted ones (docs/\n"
    "                                           analysis.md); --margin: the safety margin in %\n"
    "  recommend --board B --model M [--batch N] (--power-budget W | --time-budget S)\n"
    "                                           the same from the board's rooflines, no models\n"
    "  report --sweep S -o|--output FILE.html [--run RUN_ID]\n"
    "                                           one HTML page of the sweep's figures "
    "(docs/report.md)\n"
    "  fleet inventory [-o|--output FILE] [--coordinator-host HOST]\n"
    "                                           Ansible inventory of the boards (docs/deploy.md)\n"
    "  baseline --board B [--seconds S] [--lowest-mode M] [--timeout SECONDS] [--no-wait]\n"
    "                                           measure and store B's idle power "
    "(docs/baseline.md)\n"
    "  baseline show --board B                  B's stored idle baseline; results --sweep NAME\n"
    "                                           --dynamic subtracts it from the runs' energy\n"
    "  containers --sweep NAME                  container overhead: bare against container runs\n"
    "                                           of one combination (docs/containers.md)\n"
    "  rounds plan FILE [--no-profile] [--profile-modes N] [--timeout SECONDS]\n"
    "                                           each board's mode and minibatches for one round "
    "of\n"
    "                                           a rounds file, predicted (docs/rounds.md); boards\n"
    "                                           without fitted models are profiled first\n"
    "  rounds run FILE [--no-profile] [--profile-modes N]\n"
    "                                           run the rounds: plan, train, FedAvg, stragglers\n"
    "  rounds show ID [--boards] [--format text|csv|json]\n"
    "                                           each round's spread, energy, loss (per board)\n"
    "  roofline --board B [--mode M] [--batch N]\n"
    "                                           time and energy rooflines, workloads on them\n"
    "                                           (docs/roofline.md)\n"
    "  concurrent search --board B --policy gd|al --workload MODEL-DATASET --infer-model M\n"
    "      --rate R --latency-budget-ms L --power-budget-w P [--batch N] [--seed S]\n"
    "      [--timeout SECONDS] [--max-profiles N] [--reruns N]\n"
    "                                           power mode and inference batch for training\n"
    "                                           beside inference, each point run on B\n"
    "                                           (docs/concurrent.md)\n"
    "The config defaults to $JETFLEET_CONFIG, else ./fleet.yaml. --store FILE reads that store\n"
    "without a config (commands that talk to the coordinator still need the config).\n";

int cli_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("jetfleet: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

int main(int argc, char **argv)
{
    jf_log_open("jetfleet", JF_LOG_SINK_STDERR, JF_LOG_WARN);
    cli_ctx_t ctx = {.config_path =
                         getenv("JETFLEET_CONFIG") ? getenv("JETFLEET_CONFIG") : "fleet.yaml"};
    int i = 1;
    for (; i + 1 < argc && (strcmp(argv[i], "--config") == 0 || strcmp(argv[i], "--store") == 0);
         i += 2) {
        *(strcmp(argv[i], "--config") == 0 ? &ctx.config_path : &ctx.store_path) = argv[i + 1];
    }
    if (i < argc && (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)) {
        fputs(s_usage, stdout);
        return CLI_EXIT_OK;
    }
    if (i < argc && strcmp(argv[i], "--version") == 0) {
        fputs("jetfleet " JF_VERSION "\n", stdout);
        return CLI_EXIT_OK;
    }
    static const struct {
        const char *verb;
        int (*fn)(cli_ctx_t *, int, char **);
    } cmds[] = {{"status", cli_cmd_status},
                {"sweep", cli_cmd_sweep},
                {"runs", cli_cmd_runs},
                {"results", cli_cmd_results},
                {"export", cli_cmd_export},
                {"store", cli_cmd_store},
                {"keys", cli_cmd_keys},
                {"import", cli_cmd_import},
                {"variability", cli_cmd_variability},
                {"check", cli_cmd_check},
                {"model", cli_cmd_model},
                {"pareto", cli_cmd_pareto},
                {"recommend", cli_cmd_recommend},
                {"report", cli_cmd_report},
                {"fleet", cli_cmd_fleet},
                {"baseline", cli_cmd_baseline},
                {"containers", cli_cmd_containers},
                {"rounds", cli_cmd_rounds},
                {"roofline", cli_cmd_roofline},
                {"concurrent", cli_cmd_concurrent}};
    int rc = -1;
    for (size_t c = 0; i < argc && c < sizeof cmds / sizeof cmds[0]; c++) {
        if (strcmp(argv[i], cmds[c].verb) == 0) {
            rc = cmds[c].fn(&ctx, argc - i - 1, argv + i + 1);
        }
    }
    if (rc < 0) {
        rc = cli_fail(CLI_EXIT_USAGE, "%s (try: jetfleet --help)",
                      i < argc ? "unknown command" : "a command is required");
    }
    cli_ctx_fini(&ctx);
    jf_log_close();
    return rc;
}
