/* Test support: a real PostgreSQL server for one test, in the test's own temporary directory.
 * initdb there (trust authentication, fsync off), a postmaster listening only on a Unix socket
 * in that directory (listen_addresses ''), one database, its URI; at teardown an immediate stop
 * (SIGQUIT), SIGKILL if it lingers, and the directory removed. As root, the server's programs run
 * as the `postgres` system user (initdb refuses root) through setpriv, with the directory given
 * to that user. The server binaries come from $JF_PG_BIN or /usr/lib/postgresql/<13..17>/bin. */
#ifndef JFT_PG_H
#define JFT_PG_H

#include "jf_err.h"

#include <stdbool.h>

typedef struct jft_pg jft_pg_t;

// What jft_pg_start returns when the server binaries are missing and JF_ALLOW_SKIP_PG=1.
#define JFT_PG_SKIP 1

// How long initdb, the server's start and its stop may take (times JF_TEST_TIMEOUT_SCALE).
#define JFT_PG_INITDB_TIMEOUT_MS 60000
#define JFT_PG_READY_TIMEOUT_MS  30000
#define JFT_PG_STOP_TIMEOUT_MS   10000

// Starts a server with a database named db_name. Returns 0 with *ret_pg (release with
// jft_pg_destroy); JFT_PG_SKIP with err saying why when the binaries are missing and
// JF_ALLOW_SKIP_PG=1 (without it that is a failure: CI installs them); or a negative errno with
// err saying which step failed (the server's log is quoted where it has one). Nothing is left
// behind on failure.
int jft_pg_start(const char *db_name, jft_pg_t **ret_pg, jf_err_t *err);

// The database's URI, "postgresql:///<db>?host=<socket dir>" (borrowed; valid until destroy).
const char *jft_pg_uri(const jft_pg_t *pg);

// The server's own directory (its data directory, socket and log are under it).
const char *jft_pg_dir(const jft_pg_t *pg);

// Stops the server now (immediate shutdown, SIGKILL after JFT_PG_STOP_TIMEOUT_MS), keeping the
// directory: connections see it go away. Safe when already stopped.
void jft_pg_stop(jft_pg_t *pg);

// Stops the server if it runs and removes its directory. NULL-safe; sets *pg_p to NULL.
void jft_pg_destroy(jft_pg_t **pg_p);

#endif
