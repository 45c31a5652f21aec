/* Record schemas: one table per record kind (run spec, epoch, ...), each field once, with its
 * name, C type, range, unit and store column. The JSON decode into the typed struct, the encode
 * back, the validation and the table walkers (store columns, export headers, trainer flags) all
 * read the table, so a new field is one row. docs/schema.md describes the tables. */
#ifndef JF_SCHEMA_H
#define JF_SCHEMA_H

#include "jf_err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_SCHEMA_NULL_I64 INT64_MIN // a nullable I64 array element that is null on the wire
#define JF_SCHEMA_NAME_MAX 64        // longest dotted field name ("custom.cpu_hz"), without the NUL

typedef enum jf_schema_type {
    JF_SCHEMA_STR = 0, // char[size] in the struct; a JSON string shorter than size
    JF_SCHEMA_INT,     // int; a JSON integer
    JF_SCHEMA_I64,     // int64_t; a JSON integer
    JF_SCHEMA_U64,     // uint64_t; a JSON integer, range [lo, hi] with hi <= INT64_MAX
    JF_SCHEMA_BOOL,    // bool; true or false
    JF_SCHEMA_NUM,     // double; a finite JSON number (integer or real)
    JF_SCHEMA_OBJ,     // a nested record described by .sub: always present when required;
                       // optional, present by its has_ flag or else when its first field is
                       // non-zero (custom.cores 0: no custom point)
    JF_SCHEMA_ENUM,    // int (an enum) in the struct; on the wire one of .names[value]
    JF_SCHEMA_ARR,     // an array in the struct of at most .max_count elements of .elem_size
                       // bytes, the count in a size_t at .count_offset: records described by
                       // .sub, or scalars described by .elem (jf_schema_nested.c)
} jf_schema_type_t;

// How a schema words a missing or unknown member: as jansson's strict unpack did for the run
// parameters, or as the record checkers did (tests/fixtures/messages/bad/ pins both).
typedef enum jf_schema_words {
    JF_SCHEMA_WORDS_UNPACK = 0, // "Object item not found: a", "N object item(s) left unpacked: a"
    JF_SCHEMA_WORDS_MEMBER,     // "'a' must be an integer", "unknown member 'a'"
} jf_schema_words_t;

typedef struct jf_schema jf_schema_t;

// One field. Fill with designated initialisers; a zero member means "not used".
typedef struct jf_schema_field {
    const char *name;      // JSON member name (static)
    jf_schema_type_t type; // C type of the struct member at offset
    size_t offset;         // offsetof(record, member)
    size_t size;           // sizeof the member (the buffer size for JF_SCHEMA_STR)
    int64_t lo, hi;        // integer range in wire units (JF_SCHEMA_INT/I64/U64)
    double lo_num, hi_num; // number range (JF_SCHEMA_NUM)
    int64_t scale;         // struct value = wire value * scale (ms on the wire, us inside); 0: 1
    const char *unit;      // the struct member's unit ("us", "mJ", "Hz"); NULL: none
    bool say_unit;         // name the unit after the range in error messages
    bool optional;         // may be absent (then zero, and has_ false)
    bool omit_zero;        // optional and written only when non-zero
    bool nullable;         // null on the wire means absent (JF_SCHEMA_NUM with a has_ flag)
    bool derived;          // computed, not chosen (run id): jf_schema_validate skips it
    bool has_flag;         // has_offset is a bool saying whether the value is present
    size_t has_offset;     // offsetof the has_ bool, when has_flag
    bool (*is_valid)(const char *text); // vocabulary or syntax of a string; NULL: any
    const char *must; // what is_valid wants, as "must be one of a, b" or "is not a valid name"
    const jf_schema_t *sub;   // JF_SCHEMA_OBJ: the nested schema
    const char *column;       // store column (prefix of the nested columns for JF_SCHEMA_OBJ)
    bool null_zero;           // the store column holds NULL, not 0, when the value is 0 (absent)
    const char *header;       // export header, the unit it is exported in named in it; NULL: none
    int64_t header_scale;     // struct value / header_scale is exported (us -> s: 1000000); 0: 1
    bool summary_mean;        // a run's summary (results) exports its mean over the measured
                              // epochs under header (docs/store.md §Exports)
    const char *flag;         // the trainer's option for it ("--batch-size"); NULL: not passed
    bool id_append;           // a field added after run id v1: enters the id as "|name=value"
                              // when non-zero (jf_run_spec_compute_id), so older ids stay
    const char *doc;          // one line for docs/schema.md
    const char *const *names; // JF_SCHEMA_ENUM: wire name of each value, NULL-ended
    size_t max_count;         // JF_SCHEMA_ARR: most elements (more is -EPROTO)
    size_t count_offset;      // JF_SCHEMA_ARR: offsetof the size_t element count
    size_t elem_size;         // JF_SCHEMA_ARR: sizeof one element
    const struct jf_schema_field *elem; // JF_SCHEMA_ARR of scalars: the element's type and
                                        // range (its name and offset unused); nullable: null
                                        // is NAN (NUM) or JF_SCHEMA_NULL_I64 (I64)
    bool map; // JF_SCHEMA_ARR: on the wire an object name -> value, in the struct records of
              // .sub whose first field (STR) is the name and second the value ("temps_mc")
} jf_schema_field_t;

// A schema's table and its length, in designated initialisers: JF_SCHEMA_FIELDS(s_fields).
#define JF_SCHEMA_FIELDS(arr) .fields = (arr), .n_fields = sizeof(arr) / sizeof((arr)[0])

struct jf_schema {
    const char *name;                // record kind, "run spec"
    const char *context;             // prefix of shape errors, "run parameters"; NULL: none
    const jf_schema_field_t *fields; // the table (static)
    size_t n_fields;                 // its length
    jf_schema_words_t words;         // wording of a missing or unknown member
    const char *const *also_allowed; // NULL-terminated members decoded elsewhere ("kind")
    // Checks that span fields (a clock needs cores). Returns 0 or -EINVAL with err set; NULL:
    // none.
    int (*check)(const void *rec, jf_err_t *err);
    // Checks on the JSON object before its values are decoded, for rules about which members
    // come together (the epoch's energy). Returns 0 or -EPROTO with err set; NULL: none.
    int (*check_json)(const json_t *obj, jf_err_t *err);
    // Errors inside a nested record or array element are prefixed "<path>.<member>: " (or
    // "<path>.<member>[i]: ") and name the inner members bare, as the measure record's checker
    // did ("measure.energy: rails[2]: ..."); NULL: dotted names ("custom.cores").
    const char *path;
    // Open record (a telemetry sample): members the table does not know are not refused; with
    // keep_extra they are copied into the json_t * at extra_offset (an object the record owns,
    // NULL when there are none; release with jf_schema_fini) and written back by encode.
    bool open;
    bool keep_extra;
    size_t extra_offset;
};

// Decodes the JSON object obj into rec (a zeroed struct of the schema's type) and validates it:
// every member known, every required one present, each of its type (-EPROTO, the message
// prefixed with the schema's context) and in range or vocabulary (-EINVAL, naming the field).
// On failure rec holds a partial decode: decode into a scratch struct and copy on success.
int jf_schema_decode(const jf_schema_t *schema, const json_t *obj, void *rec, jf_err_t *err);

// The JSON object form of rec: optional fields that are absent (has_ false, or zero when
// omit_zero) are left out, nullable absent numbers are null. Caller owns the result; release
// with json_decref. NULL only when out of memory.
json_t *jf_schema_encode(const jf_schema_t *schema, const void *rec);

// Releases what a decoded record owns (an open schema's kept members) and zeroes that pointer.
void jf_schema_fini(const jf_schema_t *schema, void *rec);

// Checks every field of rec that is not derived against its range and vocabulary, then the
// schema's check. Returns 0 or -EINVAL with err naming the field.
int jf_schema_validate(const jf_schema_t *schema, const void *rec, jf_err_t *err);

// The field named name (dotted for nested fields, "custom.cpu_hz") or NULL.
const jf_schema_field_t *jf_schema_field(const jf_schema_t *schema, const char *name);

// One leaf field as the walkers see it: the field, its dotted name and its store column, and
// the struct offset of the nested record it lives in (0 at top level).
typedef struct jf_schema_leaf {
    const jf_schema_field_t *field;      // borrowed from the table
    char name[JF_SCHEMA_NAME_MAX + 1];   // "custom.cpu_hz"
    char column[JF_SCHEMA_NAME_MAX + 1]; // "custom_cpu_hz"; "" when the field is not stored
    size_t base;                         // offset of the nested struct inside the record
    const jf_schema_t *outer;            // the nested schema holding it; NULL at top level
                                         // (one level of nesting: the table test checks it)
} jf_schema_leaf_t;

// Calls fn for every leaf field in table order (nested records flattened), stopping at the
// first non-zero return, which it returns. 0 when every call returned 0.
typedef int (*jf_schema_leaf_fn)(const jf_schema_leaf_t *leaf, void *arg);
int jf_schema_each_leaf(const jf_schema_t *schema, jf_schema_leaf_fn fn, void *arg);

// The SQLite column type that stores a leaf of this type: "TEXT", "REAL" or "INTEGER" (ints and
// booleans). Static.
const char *jf_schema_sql_type(jf_schema_type_t type);

// Number of leaf fields (nested records flattened), and of those with a store column.
size_t jf_schema_n_leaves(const jf_schema_t *schema);
size_t jf_schema_n_columns(const jf_schema_t *schema);

// A leaf's value in rec as an integer (STR: not one; NUM: truncated), and whether it is present
// (its has_ flag, and its nested record's key field; else true). For the store binds and the
// trainer argv.
int64_t jf_schema_leaf_int(const jf_schema_leaf_t *leaf, const void *rec);
double jf_schema_leaf_num(const jf_schema_leaf_t *leaf, const void *rec);
const char *jf_schema_leaf_str(const jf_schema_leaf_t *leaf, const void *rec);
bool jf_schema_leaf_is_present(const jf_schema_leaf_t *leaf, const void *rec);

// Sets a leaf's value in rec from an integer (INT, I64, U64, BOOL), a double (NUM) or a
// string (STR, truncated-safe: -EINVAL when too long). Marks it present (has_ flag).
int jf_schema_leaf_set_int(const jf_schema_leaf_t *leaf, void *rec, int64_t v); // -ERANGE, -EINVAL
void jf_schema_leaf_set_num(const jf_schema_leaf_t *leaf, void *rec, double v);
int jf_schema_leaf_set_str(const jf_schema_leaf_t *leaf, void *rec, const char *s, jf_err_t *err);

// The trainer's command line for a record: "--flag value" for every present leaf with a flag,
// in table order (a true boolean is "--flag" alone; a false one and an omit_zero zero are left
// out), numbers in wire units. Flags in skip (NULL-terminated, may be NULL) are left out.
#define JF_SCHEMA_ARGV_MAX 64 // strings, flags and values
typedef struct jf_schema_argv {
    size_t n;                                 // strings in args
    const char *args[JF_SCHEMA_ARGV_MAX + 1]; // NULL-terminated; flags are the table's, strings
                                              // borrowed from the record, numbers from text
    char text[JF_SCHEMA_ARGV_MAX / 2][24];    // the numbers, formatted
} jf_schema_argv_t;

// Fills *ret_argv. Returns 0, or -E2BIG when more than JF_SCHEMA_ARGV_MAX strings would be
// needed (an error, never a cut).
int jf_schema_to_argv(const jf_schema_t *schema, const void *rec, const char *const *skip,
                      jf_schema_argv_t *ret_argv);

// Sets the leaf whose flag is flag ("--batch") in rec from its command-line text (NULL for a
// boolean flag), checked against the table's range or vocabulary. Returns 0, -ENOENT when no
// leaf has that flag, or -EINVAL with err naming the flag.
int jf_schema_from_flag(const jf_schema_t *schema, void *rec, const char *flag, const char *value,
                        jf_err_t *err);

#endif
