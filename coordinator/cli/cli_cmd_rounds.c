/* jetfleet rounds: the subcommands of federated-learning rounds (issue #14, docs/rounds.md), by
 * a table from the word after the verb to its function. */
#include "cli_cmds.h"
#include "cli_rounds.h"

#include <string.h>

#define S_USAGE                                                                                    \
    "usage: jetfleet rounds plan FILE [--no-profile] [--profile-modes N] "                         \
    "[--timeout SECONDS]\n"                                                                        \
    "       jetfleet rounds run FILE [--no-profile] [--profile-modes N]\n"                         \
    "       jetfleet rounds show ID [--boards] [--format text|csv|json]"

int cli_cmd_rounds(cli_ctx_t *ctx, int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(cli_ctx_t *ctx, int argc, char **argv);
    } subs[] = {{"plan", cli_rounds_plan}, {"run", cli_rounds_run}, {"show", cli_rounds_show}};
    const char *sub = argc > 0 ? argv[0] : "";
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++) {
        if (strcmp(sub, subs[i].name) == 0) {
            return subs[i].fn(ctx, argc, argv);
        }
    }
    return cli_fail(CLI_EXIT_USAGE, S_USAGE);
}
