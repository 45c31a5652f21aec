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

#endif
