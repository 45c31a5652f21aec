/* Telemetry sample packing (docs/store.md, "Telemetry storage"): a sample (a JSON object, docs/
 * protocol.md §5.4.2) stored as the numbers in which it differs from a base sample of the same
 * shape, as varints in a BLOB; the base (a layout) holds the names, strings and booleans once.
 * Lossless for any JSON object. Also the per-second mean of samples of one shape. No SQL but
 * the one SQL function that unpacks (coord_store_telemetry.c holds the tables). */
#ifndef COORD_TELEMETRY_PACK_H
#define COORD_TELEMETRY_PACK_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

// The SQL function that unpacks a stored sample: coord_telemetry_json(base TEXT, base_t_us
// INTEGER, t_us INTEGER, vals BLOB) -> the sample as compact JSON text (docs/store.md).
#define COORD_TPACK_SQL_FN "coord_telemetry_json"

// Packs sample against base, a sample whose t_us column was base_t_us; t_us is sample's
// column. Returns 0 with *ret_blob (caller owns; release with free) of *ret_len bytes;
// -ENOMSG when sample does not have base's shape (other keys or key order, other strings,
// booleans, nulls or array lengths, a number of the other JSON type, a difference past the
// varint's range): the caller makes sample a base of its own; -ENOMEM.
int coord_tpack_pack(const json_t *base, int64_t base_t_us, const json_t *sample, int64_t t_us,
                     unsigned char **ret_blob, size_t *ret_len);

// The sample that coord_tpack_pack packed into blob, in *ret (caller owns; json_decref).
// Returns 0, -EPROTO when blob does not fit base (a damaged row), or -ENOMEM. (No jf_err_t:
// this library links no common code, so test builds can pair it with either common library.)
int coord_tpack_unpack(const json_t *base, int64_t base_t_us, int64_t t_us,
                       const unsigned char *blob, size_t len, json_t **ret);

// The mean of n >= 1 samples of one shape (docs/store.md, "Retention"): every number is the
// mean over the samples (integers rounded to the nearest), except the members that are
// counters or running figures (coord_telemetry_pack.c, s_last_keys), which keep the last
// sample's value; strings and booleans are the shape's. *ret: caller owns. Returns 0, -EINVAL
// when n is 0 or the samples differ in shape, or -ENOMEM.
int coord_tpack_mean(json_t *const *samples, size_t n, json_t **ret);

// Registers COORD_TPACK_SQL_FN on db, a SQLite connection: every SQLite store connection (the
// store passes coord_db_sqlite(), coord_db.h) and tests' own connections. A PostgreSQL store has
// no need of it: samples are stored as JSON text there, and its compat script's function of that
// name returns them (coord_store_telemetry.c, coord_db_pg_compat.c). Returns 0 or -EIO.
int coord_tpack_sql_register(sqlite3 *db);

#endif
