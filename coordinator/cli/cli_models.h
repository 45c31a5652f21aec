/* What the model, pareto and recommend commands share: their options (all "--name VALUE"), a
 * stored model loaded by id, a model's training configuration, and figures predicted for a list
 * of modes. Not a command itself; docs/analysis.md describes the commands. */
#ifndef CLI_MODELS_H
#define CLI_MODELS_H

#include "cli_cmds.h"
#include "coord_model.h"
#include "coord_pareto.h"
#include "coord_points.h"
#include "coord_store.h"

#define CLI_MODELS_OPTS_MAX 16 // most options one command takes

// Parses argc words of "--name VALUE" options into values[i] for names[i] (NULL-terminated;
// values not given stay NULL). Returns 0, or -1 for an unknown option, a missing value or a
// word that is not an option.
int cli_models_opts(const char *verb, int argc, char **argv, const char *const *names,
                    const char **values);

// Parses a model id (a positive integer). 0, or -EINVAL with err naming the option and text.
int cli_models_parse_id(const char *opt, const char *text, int64_t *ret_id, jf_err_t *err);

// Loads model id: its row (release with coord_model_row_fini) and the model (caller owns;
// coord_model_destroy). NULL with err: -ENOENT "no model with id N", a params error.
coord_model_t *cli_models_load(coord_store_t *store, int64_t id, coord_model_row_t *ret_row,
                               jf_err_t *err);

// The model's training workers and batch size from its features JSON (-1 each when its runs had
// more than one).
void cli_models_trained_config(const coord_model_row_t *row, int *ret_workers, int *ret_batch);

// Predicts time and power (and energy as their product) at each of n ops into ret_pts. 0, or
// the first prediction's error.
int cli_models_predict(coord_model_t *time_model, coord_model_t *power_model, const coord_op_t *ops,
                       size_t n, coord_pareto_point_t *ret_pts, jf_err_t *err);

// The per-run means of sweep's valid runs (jetfleet check, with the validity options of ctx) of
// workload on board (or of board type when type is set); f->valid is ignored. *ret_left counts
// the matching runs left out, by reason. Fails with -ENOENT "sweep 'S' has no measured runs of
// workload W on board B" (and the counts left out, when any) when none is left.
int cli_models_runs(const cli_ctx_t *ctx, coord_store_t *store, const char *sweep,
                    const coord_points_filter_t *f, coord_run_mean_t **ret_runs, size_t *ret_n,
                    coord_points_left_t *ret_left, jf_err_t *err);

// Prints on stderr (stdout stays data) "valid runs only: N runs used, K left out as invalid, M
// without a known operating point (see: jetfleet check --sweep S)". The commands print it once
// they have succeeded, so an error stays one line.
void cli_models_print_left(const char *sweep, size_t used, const coord_points_left_t *left);

// Requires two models of targets time and power. 0, or -EINVAL with err.
int cli_models_check_pair(const coord_model_row_t *t, const coord_model_row_t *p, jf_err_t *err);

#define CLI_MODELS_CELL_MAX  32 // room for one printed number
#define CLI_MODELS_MODE_COLS 6  // cores, cpu_mhz, gpu_mhz, emc_mhz, workers, batch_size

// The column names of a mode (static), CLI_MODELS_MODE_COLS of them.
extern const char *const cli_models_mode_names[CLI_MODELS_MODE_COLS];

// The printed cells of a mode: cores, clocks in MHz, workers, batch size.
void cli_models_mode_cells(const coord_op_t *op, char cells[][CLI_MODELS_CELL_MAX]);

// The mode among n with op's operating point, or NULL (borrowed from modes).
const coord_pareto_point_t *cli_models_find(const coord_pareto_point_t *modes, size_t n,
                                            const coord_op_t *op);

// Loads the time and power models time_id and power_id and predicts every mode of the grid of
// runs (coord_points_grid). *ret_pts is malloc'ed (caller frees). 0, or a negative errno with
// err (unknown model, wrong targets, grid too large).
int cli_models_predict_grid(coord_store_t *store, int64_t time_id, int64_t power_id,
                            const coord_run_mean_t *runs, size_t n, coord_pareto_point_t **ret_pts,
                            size_t *ret_n, jf_err_t *err);

#endif
