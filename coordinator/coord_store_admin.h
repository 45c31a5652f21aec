/* Store administration for a lab (docs/store.md, "Check, backup, salvage"): check a store file
 * for damage, copy it consistently while the coordinator writes, and save what is readable from
 * a damaged one into a new store. Each call opens its own connections; the source is only read.
 * Not for the coordinator's loop: these take as long as the file is big. */
#ifndef COORD_STORE_ADMIN_H
#define COORD_STORE_ADMIN_H

#include "coord_store.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COORD_CHECK_PROBLEMS_MAX   10  // integrity_check lines kept in a report
#define COORD_CHECK_PROBLEM_LEN    256 // bytes per kept line, NUL included
#define COORD_SALVAGE_TABLES_MAX   24
#define COORD_SALVAGE_CHUNK_ROWIDS 4096   // rowids copied per statement before any damage is met
#define COORD_SALVAGE_PROBES_MAX   100000 // failed reads per table before giving the table up
#define COORD_SALVAGE_ROWID_GUESS  (INT64_C(1) << 20) // upper rowid when max(rowid) is unreadable

typedef struct coord_store_check_report {
    int schema_version; // PRAGMA user_version; -1 if unreadable
    bool has_store_id;  // meta 'store_id' was readable
    int64_t store_id;   // the store's identity (coord_store_ident.h) if has_store_id
    int64_t runs;       // rows in runs; -1 if unreadable
    size_t problems;    // lines integrity_check reported; 0 means the file is sound
    size_t n_kept;      // how many of them are in problem[]
    char problem[COORD_CHECK_PROBLEMS_MAX][COORD_CHECK_PROBLEM_LEN]; // the first lines
} coord_store_check_report_t;

typedef struct coord_salvage_table {
    char name[32];      // table name
    int64_t rows;       // rows copied into the new store
    int64_t unreadable; // rowid tables: rowids that could not be read; per-run tables: runs
                        // whose rows could not be read
    bool gave_up;       // COORD_SALVAGE_PROBES_MAX failed reads: the rest was not tried
} coord_salvage_table_t;

typedef struct coord_salvage_report {
    size_t n_tables;
    coord_salvage_table_t table[COORD_SALVAGE_TABLES_MAX]; // in copy order
    char not_copied[256]; // tables of the schema that salvage does not know ("" if none)
} coord_salvage_report_t;

// Runs PRAGMA integrity_check (quick_check when quick) on the store file at path, opened
// read-only, and reads its schema version, store id and run count where it can. Returns 0 when
// the check ran, whatever it found (ret_report->problems > 0 means damaged; a file SQLite does
// not recognise as a database counts as one problem); -ENOENT if path does not exist; -EIO if the
// file cannot be opened or read for another reason. err names the path.
int coord_store_check(const char *path, bool quick, coord_store_check_report_t *ret_report,
                      jf_err_t *err);

// The same check on an open store (the coordinator's quick_check at start).
int coord_store_check_open(coord_store_t *self, bool quick, coord_store_check_report_t *ret_report,
                           jf_err_t *err);

// Copies the store at path into a new file out_path with SQLite's online backup API in one step:
// one read transaction, so the copy is the store as of one commit even while the coordinator
// writes, and the coordinator is not blocked (WAL). The copy is then integrity-checked. Returns 0,
// -EEXIST if out_path exists, -EBADMSG if the copy fails its check, -EIO otherwise; on failure
// out_path is removed. *ret_runs (may be NULL) is the copy's run count.
int coord_store_backup(const char *path, const char *out_path, int64_t *ret_runs, jf_err_t *err);

// Creates a new store at out_path (latest schema) and copies into it every row of the store at
// path that can still be read: rowid tables range by range, halving a range that fails down to
// single rows; the per-run tables (sweep_runs, epochs, minibatches, telemetry) run by run for
// the runs saved. The source must have this program's schema version. Returns 0 with the counts
// in *ret_report; -EEXIST if out_path exists; -EPROTO if the source's schema cannot be read or
// is another version; -EIO if the new store cannot be written (out_path is removed then).
int coord_store_salvage(const char *path, const char *out_path, coord_salvage_report_t *ret_report,
                        jf_err_t *err);

#endif
