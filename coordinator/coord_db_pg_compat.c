/* The PostgreSQL back end's compat script (coord_db_pg_internal.h): SQL functions and aggregates
 * with SQLite's names and results, for the SQLite functions the store's SQL calls that PostgreSQL
 * lacks (coord_db_sql.h lists them). unit.db_pg compares each with SQLite. */
#include "coord_db_pg_internal.h"

// The SQLite functions the store's SQL calls that PostgreSQL does not have (coord_db_sql.h
// lists them), created in the connection's first schema at every open. Values follow SQLite's:
// json_extract gives a string's text, a number's JSON text, 1/0 for true/false, NULL for null or
// a missing path, an object's or array's JSON text; but it always returns text (a PostgreSQL
// function has one return type), where SQLite returns an integer or a real for a number.
// The advisory lock keeps coordinators opening the same database at once from racing on the
// catalog.
const char coord_db_pg_compat_sql[] =
    "BEGIN;"
    "SELECT pg_advisory_xact_lock(7022136);"
    // SQLite's PRAGMA user_version, as coord_db_sql rewrites it.
    "CREATE TABLE IF NOT EXISTS jf_pragma(name TEXT PRIMARY KEY, value BIGINT NOT NULL);"
    "CREATE OR REPLACE FUNCTION jf_sqlite_json_path(path text) RETURNS text[]"
    " LANGUAGE plpgsql IMMUTABLE STRICT AS $f$ BEGIN"
    "  IF path !~ '^[$]([.][A-Za-z_][A-Za-z0-9_]*|\\[[0-9]+\\])*$' THEN"
    "   RAISE EXCEPTION 'JSON path ''%'' is not of the form $.a.b[0]', path"
    "    USING ERRCODE = '22023';"
    "  END IF;"
    "  RETURN ARRAY(SELECT coalesce(m[1], m[2]) FROM regexp_matches(path,"
    "   '[.]([A-Za-z_][A-Za-z0-9_]*)|\\[([0-9]+)\\]', 'g') AS m);"
    " END $f$;"
    "CREATE OR REPLACE FUNCTION jf_sqlite_json_value(v json) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $f$ SELECT CASE json_typeof(v) WHEN 'null' THEN NULL"
    "  WHEN 'string' THEN v #>> '{}'"
    "  WHEN 'boolean' THEN CASE WHEN v::text = 'true' THEN '1' ELSE '0' END"
    "  ELSE v::text END $f$;"
    "CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text"
    " LANGUAGE sql IMMUTABLE STRICT AS"
    " $f$ SELECT jf_sqlite_json_value(doc::json #> jf_sqlite_json_path(path)) $f$;"
    "CREATE OR REPLACE FUNCTION json_each(doc text, path text) RETURNS TABLE(key text, value text)"
    " LANGUAGE sql IMMUTABLE STRICT AS $f$"
    " WITH s(v) AS (SELECT doc::json #> jf_sqlite_json_path(path))"
    " SELECT o.key, jf_sqlite_json_value(o.value) FROM s,"
    "  json_each(CASE WHEN json_typeof(s.v) = 'object' THEN s.v END) AS o"
    " UNION ALL SELECT (a.n - 1)::text, jf_sqlite_json_value(a.value) FROM s,"
    "  json_array_elements(CASE WHEN json_typeof(s.v) = 'array' THEN s.v END)"
    "  WITH ORDINALITY AS a(value, n) $f$;"
    "CREATE OR REPLACE FUNCTION json_array_length(doc text, path text) RETURNS bigint"
    " LANGUAGE sql IMMUTABLE STRICT AS $f$"
    " SELECT CASE WHEN v IS NULL THEN NULL WHEN json_typeof(v) = 'array'"
    "  THEN json_array_length(v)::bigint ELSE 0 END"
    " FROM (SELECT doc::json #> jf_sqlite_json_path(path)) AS s(v) $f$;"
    "CREATE OR REPLACE FUNCTION jf_total_bool(s double precision, v boolean)"
    " RETURNS double precision LANGUAGE sql IMMUTABLE STRICT AS"
    " $f$ SELECT s + CASE WHEN v THEN 1 ELSE 0 END $f$;"
    "CREATE OR REPLACE AGGREGATE total(double precision)"
    " (SFUNC = float8pl, STYPE = double precision, INITCOND = '0');"
    "CREATE OR REPLACE AGGREGATE total(boolean)"
    " (SFUNC = jf_total_bool, STYPE = double precision, INITCOND = '0');"
    // sum over a comparison, as SQLite sums its 1s and 0s: an integer, NULL when no row has one.
    "CREATE OR REPLACE FUNCTION jf_sum_bool(s bigint, v boolean) RETURNS bigint"
    " LANGUAGE sql IMMUTABLE AS"
    " $f$ SELECT CASE WHEN v IS NULL THEN s ELSE coalesce(s, 0) + CASE WHEN v THEN 1 ELSE 0 END"
    "  END $f$;"
    "CREATE OR REPLACE AGGREGATE sum(boolean) (SFUNC = jf_sum_bool, STYPE = bigint);"
    "CREATE OR REPLACE FUNCTION jf_group_concat_step(acc text, v text, sep text) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $f$ SELECT CASE WHEN v IS NULL THEN acc WHEN acc IS NULL THEN v"
    "  ELSE acc || coalesce(sep, '') || v END $f$;"
    "CREATE OR REPLACE FUNCTION jf_group_concat_step(acc text, v text) RETURNS text"
    " LANGUAGE sql IMMUTABLE AS $f$ SELECT jf_group_concat_step(acc, v, ',') $f$;"
    "CREATE OR REPLACE AGGREGATE group_concat(text, text)"
    " (SFUNC = jf_group_concat_step, STYPE = text);"
    "CREATE OR REPLACE AGGREGATE group_concat(text) (SFUNC = jf_group_concat_step, STYPE = text);"
    // SQLite's table-valued json_tree(doc): every node of the document in document order, with
    // SQLite's type names, fullkey and path (a key that is not a letter then letters and digits
    // is quoted, as SQLite does), parent the parent node's id (NULL for the root). id counts the
    // nodes from 1, where SQLite's is an internal node number: only their order agrees.
    "CREATE OR REPLACE FUNCTION json_tree(doc text) RETURNS TABLE(key text, value text,"
    " type text, atom text, id bigint, parent bigint, fullkey text, path text)"
    " LANGUAGE sql IMMUTABLE STRICT AS $f$"
    " WITH RECURSIVE n(ord, key, v, fullkey, path) AS ("
    "  SELECT ARRAY[]::bigint[], NULL::text, doc::json, '$'::text, '$'::text"
    "  UNION ALL SELECT n.ord || e.o, e.k, e.v, n.fullkey || CASE WHEN e.arr THEN"
    "   '[' || e.k || ']' WHEN e.k ~ '^[A-Za-z][A-Za-z0-9]*$' THEN '.' || e.k"
    "   ELSE '.\"' || e.k || '\"' END, n.fullkey"
    "  FROM n CROSS JOIN LATERAL ("
    "   SELECT o.key, o.value, o.ord, false FROM json_each(CASE WHEN json_typeof(n.v) ="
    "    'object' THEN n.v END) WITH ORDINALITY AS o(key, value, ord)"
    "   UNION ALL SELECT (a.ord - 1)::text, a.value, a.ord, true FROM json_array_elements("
    "    CASE WHEN json_typeof(n.v) = 'array' THEN n.v END) WITH ORDINALITY AS a(value, ord)"
    "  ) AS e(k, v, o, arr)),"
    " t AS (SELECT n.*, row_number() OVER (ORDER BY n.ord) AS id FROM n)"
    " SELECT t.key, jf_sqlite_json_value(t.v), CASE json_typeof(t.v) WHEN 'number' THEN"
    "  CASE WHEN t.v::text ~ '^-?[0-9]+$' THEN 'integer' ELSE 'real' END"
    "  WHEN 'string' THEN 'text' WHEN 'boolean' THEN t.v::text ELSE json_typeof(t.v) END,"
    "  CASE WHEN json_typeof(t.v) IN ('object', 'array') THEN NULL"
    "  ELSE jf_sqlite_json_value(t.v) END, t.id, p.id, t.fullkey, t.path"
    " FROM t LEFT JOIN t AS p ON cardinality(t.ord) > 0"
    "  AND p.ord = t.ord[1:cardinality(t.ord) - 1] ORDER BY t.id $f$;"
    // SQLite's scalar max(a, b) and min(a, b): NULL when either is NULL (greatest/least skip
    // NULLs).
    "CREATE OR REPLACE FUNCTION max(a anycompatible, b anycompatible) RETURNS anycompatible"
    " LANGUAGE sql IMMUTABLE AS"
    " $f$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE greatest(a, b) END $f$;"
    "CREATE OR REPLACE FUNCTION min(a anycompatible, b anycompatible) RETURNS anycompatible"
    " LANGUAGE sql IMMUTABLE AS"
    " $f$ SELECT CASE WHEN a IS NULL OR b IS NULL THEN NULL ELSE least(a, b) END $f$;"
    // SQLite's table-valued pragma_table_info(table): the columns of a table of the current
    // schema (type is PostgreSQL's name for it).
    "CREATE OR REPLACE FUNCTION pragma_table_info(t text) RETURNS TABLE(cid bigint, name text,"
    " type text, \"notnull\" bigint, dflt_value text, pk bigint) LANGUAGE sql STABLE AS $f$"
    " SELECT (c.ordinal_position - 1)::bigint, c.column_name::text, upper(c.data_type)::text,"
    "  CASE WHEN c.is_nullable = 'NO' THEN 1 ELSE 0 END::bigint, c.column_default::text,"
    "  coalesce((SELECT k.ordinal_position FROM information_schema.table_constraints AS tc"
    "   JOIN information_schema.key_column_usage AS k ON k.constraint_name = tc.constraint_name"
    "   AND k.table_schema = tc.table_schema AND k.table_name = tc.table_name"
    "   WHERE tc.table_schema = c.table_schema AND tc.table_name = c.table_name"
    "   AND tc.constraint_type = 'PRIMARY KEY' AND k.column_name = c.column_name), 0)::bigint"
    " FROM information_schema.columns AS c"
    " WHERE c.table_schema = current_schema() AND c.table_name = t ORDER BY c.ordinal_position"
    " $f$;"
    // The store's telemetry_json view calls coord_telemetry_json, which on SQLite unpacks the
    // packed samples in C (coord_telemetry_pack.h). On PostgreSQL the store keeps each sample's
    // JSON text in vals instead (coord_store_telemetry.c, docs/store.md §10): this returns it.
    "CREATE OR REPLACE FUNCTION coord_telemetry_json(base text, base_t_us bigint, t_us bigint,"
    " vals bytea) RETURNS text LANGUAGE sql IMMUTABLE AS $f$"
    " SELECT convert_from(vals, 'UTF8') $f$;"
    "COMMIT;";
