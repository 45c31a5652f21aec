/* What every `jetfleet` command needs: the fleet config (for paths and planning), a read-only
 * store connection, and one request/reply exchange with the coordinator's control endpoint. */
#ifndef CLI_CTX_H
#define CLI_CTX_H

#include "coord_store.h"
#include "jf_err.h"
#include "jf_fleet_config.h"

#include <jansson.h>

#define CLI_EXIT_OK          0
#define CLI_EXIT_ERROR       1
#define CLI_EXIT_USAGE       2
#define CLI_REPLY_TIMEOUT_MS 10000

typedef struct cli_ctx {
    const char *config_path;  // fleet.yaml
    const char *store_path;   // --store FILE: the store, without a fleet.yaml; NULL: the config's
    jf_fleet_config_t *fleet; // owned; loaded on first use
    coord_store_t *store;     // owned; opened read-only on first use
} cli_ctx_t;

// Loads fleet.yaml on first use. Returns the config (borrowed) or NULL with err.
const jf_fleet_config_t *cli_ctx_fleet(cli_ctx_t *self, jf_err_t *err);

// Opens an existing store (never creates one): a PostgreSQL URI as it is, a SQLite file only
// when it exists, else -ENOENT "no store at PATH". NULL with err.
coord_store_t *cli_store_open(const char *path, bool read_only, jf_err_t *err);

// Opens the store read-only on first use (the coordinator need not run): --store's file, else
// the config's store path. NULL with err.
coord_store_t *cli_ctx_store(cli_ctx_t *self, jf_err_t *err);

// Sends msg (taking it over) to the control endpoint and waits for its ctl.reply. On success
// *ret_data is the reply's data object (caller owns). An `error` reply becomes -EPROTO with its
// detail in err; no answer in time becomes -ETIMEDOUT.
int cli_ctx_request(cli_ctx_t *self, json_t *msg, json_t **ret_data, jf_err_t *err);

void cli_ctx_fini(cli_ctx_t *self);

// A command's words with its verb in front, as getopt_long wants them (it skips argv[0]): argc
// + 1 strings borrowed from verb and argv, then NULL, however many there are. Caller frees the
// array with free(); NULL when out of memory.
char **cli_getopt_argv(const char *verb, int argc, char **argv);

#endif
