/* `jetfleet recommend` without fitted models: the power setting of a board chosen from its
 * rooflines' predictions of one minibatch (docs/roofline.md "Recommending without a model"). */
#ifndef CLI_RECOMMEND_ROOFLINE_H
#define CLI_RECOMMEND_ROOFLINE_H

#include "cli_ctx.h"

// What the roofline path takes (strings borrowed from argv; NULL: not given).
typedef struct cli_recommend_roofline_args {
    const char *board;        // required
    const char *model;        // required: a model name (lenet5, ...)
    const char *batch;        // samples per minibatch; NULL: 16
    const char *power_budget; // W, exactly one of the two budgets
    const char *time_budget;  // s per minibatch
    const char *reason;       // why no fitted model is used (printed, and prefixed to errors)
} cli_recommend_roofline_args_t;

// Prints the setting that minimises predicted minibatch time under the power budget, or energy
// under the time budget, among the board's rooflines with energy, saying that no fitted model
// was used and why (reason). Returns CLI_EXIT_OK, CLI_EXIT_USAGE or CLI_EXIT_ERROR (reported on
// stderr, after the reason).
int cli_recommend_roofline(cli_ctx_t *ctx, const cli_recommend_roofline_args_t *a);

#endif
