/* What `jetfleet roofline` and `jetfleet recommend` share (docs/roofline.md): a board's rooflines
 * per power setting from the store, its measured training runs, and the work of a workload's
 * minibatch counted from its model's layers (jf_torch_flops.h), each counted once. */
#ifndef CLI_ROOFLINE_H
#define CLI_ROOFLINE_H

#include "coord_roofline.h"
#include "coord_store_roofline.h"
#include "jf_torch_flops.h"

#include <stddef.h>

#define CLI_ROOFLINE_MODELS 4 // lenet5, resnet18, vgg11, mobilenetv3 (jf_torch_model_kind_t)

typedef struct cli_roofline_set {
    coord_roofline_t *roofs; // owned; one per power setting with both benchmarks
    size_t n_roofs;
    coord_roofline_measured_t *measured; // owned; the board's training runs per setting
    size_t n_measured;
    jf_torch_cost_t costs[CLI_ROOFLINE_MODELS]; // per model kind, counted on first use
    bool have_cost[CLI_ROOFLINE_MODELS];
} cli_roofline_set_t;

// Reads board's rooflines (power NULL: every setting; a setting whose benchmarks lack one is
// skipped with a line on stderr) and measured runs. Returns 0, -ENOENT with err when the board
// has no usable roofline, -EIO, -ENOMEM. Release with cli_roofline_fini, also on failure.
int cli_roofline_load(coord_store_t *store, const char *board, const char *power,
                      cli_roofline_set_t *ret_set, jf_err_t *err);

void cli_roofline_fini(cli_roofline_set_t *self);

// The work of one minibatch of batch samples of model (a jf_torch model name). Returns 0,
// -EINVAL (unknown model), or the shim's failure.
int cli_roofline_work(cli_roofline_set_t *self, const char *model, int batch,
                      jf_torch_work_t *ret_work, jf_err_t *err);

// The roofline of power in the set, or NULL.
const coord_roofline_t *cli_roofline_find(const cli_roofline_set_t *self, const char *power);

#endif
