/* jetfleet-train-sim: jetfleet-train --simulate without libtorch, the loader or JPEG, for the
 * agents of simulated boards (docs/simulator.md "The simulated trainer"). Takes jetfleet-train's
 * simulation options; --simulate is implied (giving it too is allowed). Same records and exit
 * codes (train_cli.h). A run with --init-weights or --out-weights trains the model for real,
 * which needs libtorch: it is handed to jetfleet-train --simulate beside this program (execv). */
#include "train_cli.h"
#include "train_options.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char *argv[])
{
    if (argc == 2 && strcmp(argv[1], "--version") == 0) { // train_cli_main's: the one argument
        return (int)train_cli_main("jetfleet-train-sim", argc, argv, train_cli_exec_sim,
                                   train_options_usage_simulate);
    }
    // argv with --simulate after the program name; argv[argc] is NULL, so is ours.
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args) {
        return TRAIN_CLI_EXIT_FAILED;
    }
    static char simulate[] = "--simulate";
    args[0] = argv[0];
    args[1] = simulate;
    for (int i = 1; i < argc; i++) {
        args[i + 1] = argv[i];
    }
    // A run that also trains the model for real needs libtorch: jetfleet-train takes it over.
    jf_err_t err = {0};
    int code = train_cli_handoff(argc + 1, args, &err) < 0
                   ? (int)train_cli_fail(&err, "crashed")
                   : (int)train_cli_main("jetfleet-train-sim", argc + 1, args, train_cli_exec_sim,
                                         train_options_usage_simulate);
    free(args);
    return code;
}
