/* Test support: damage a store file the way a failing disk would (garbage over whole pages of the
 * runs table, from a seeded generator) and read figures from any SQLite file. Fails the running
 * cmocka test on error. */
#ifndef JFT_STORE_H
#define JFT_STORE_H

#include <stdint.h>

// Writes seeded garbage over n_pages leaf pages of the runs table of the (closed) store at path,
// spread over the middle of the table, and returns how many rows those pages held (SQLite's
// dbstat, read before the damage). Prints runs_leaf_pages= and runs_on_damaged_pages=.
int64_t jft_store_damage_runs(const char *path, int n_pages, uint32_t seed);

// Runs sql on the SQLite file at path (read-only) expecting one integer; -1 on any failure.
// attach, if not NULL, is attached first as 'orig' (read-only), for comparing two files.
int64_t jft_store_sql_int(const char *path, const char *attach, const char *sql);

#endif
