/* Internal to the jf_schema*.c files: the value checks that decode (on wire values) and validate
 * (on struct values) share, and the raw member access. Not for use outside common/jf_schema*. */
#ifndef JF_SCHEMA_INTERNAL_H
#define JF_SCHEMA_INTERNAL_H

#include "jf_schema.h"

// An integer in wire units against the field's [lo, hi]; name is the dotted name.
int jf_schema_check_int(const jf_schema_field_t *f, const char *name, int64_t v, jf_err_t *err);
// A uint64_t against [lo, hi] (compared unsigned, so 2^63 and above cannot wrap into range).
int jf_schema_check_u64(const jf_schema_field_t *f, const char *name, uint64_t v, jf_err_t *err);
int jf_schema_check_num(const jf_schema_field_t *f, const char *name, double v, jf_err_t *err);
int jf_schema_check_str(const jf_schema_field_t *f, const char *name, const char *s, jf_err_t *err);

// dst = a sep b; -ENAMETOOLONG when it does not fit (the table test keeps names short).
int jf_schema_join(char *dst, size_t size, const char *a, const char *sep, const char *b);

// The field's scale (1 when unset).
int64_t jf_schema_scale(const jf_schema_field_t *f);

// The struct member of field f in the record at base (a nested record's address).
void *jf_schema_member(const jf_schema_field_t *f, void *base);
const void *jf_schema_cmember(const jf_schema_field_t *f, const void *base);

// True when the nested record at base has any non-zero leaf (JF_SCHEMA_OBJ presence).
bool jf_schema_is_set(const jf_schema_t *schema, const void *base);

// True when field f of the record at base holds a value: its has_ flag, or for a nested record
// its key field; always true for the rest.
bool jf_schema_field_is_present(const jf_schema_field_t *f, const void *base);

// One record level of a JSON object into base (jf_schema_json.c), prefix the dotted name of the
// level ("custom."), and its JSON form; the array and enum codecs recurse through them.
int jf_schema_decode_level(const jf_schema_t *schema, const json_t *obj, void *base,
                           const char *prefix, jf_err_t *err);
json_t *jf_schema_encode_level(const jf_schema_t *schema, const void *base);
// One scalar value of field f into member m, checked (jf_schema_json.c).
int jf_schema_decode_scalar(const jf_schema_field_t *f, const char *name, const json_t *v, void *m,
                            jf_err_t *err);
json_t *jf_schema_encode_scalar(const jf_schema_field_t *f, const void *m);

// Enums and arrays (jf_schema_nested.c). name is the dotted name for messages.
int jf_schema_decode_enum(const jf_schema_field_t *f, const char *name, const json_t *v, void *m,
                          jf_err_t *err);
json_t *jf_schema_encode_enum(const jf_schema_field_t *f, const void *m);
int jf_schema_check_enum(const jf_schema_field_t *f, const char *name, int v, jf_err_t *err);
// An array into the struct at base; label names it in messages ("rails", "measure.cache").
int jf_schema_decode_arr(const jf_schema_field_t *f, const char *label, const json_t *v, void *base,
                         jf_err_t *err);
json_t *jf_schema_encode_arr(const jf_schema_field_t *f, const void *base);
size_t jf_schema_arr_count(const jf_schema_field_t *f, const void *base);
// The open schema's unknown members of obj, copied into the record at base.
int jf_schema_keep_extra(const jf_schema_t *schema, const json_t *obj, void *base);

#endif
