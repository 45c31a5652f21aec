/* Field readers shared by the message family checkers: every string is length-checked and every
 * integer range-checked before use (reliability-security.md §5.1, layer 5). */
#include "jf_msg_family.h"

#include <errno.h>
#include <math.h>
#include <string.h>

int jf_msg_get_str(const json_t *body, const char *key, bool optional, char *dst, size_t size,
                   jf_err_t *err)
{
    json_t *v = json_object_get(body, key);
    if (!v && optional) {
        dst[0] = '\0';
        return 0;
    }
    if (!json_is_string(v)) {
        return jf_err_set(err, -EPROTO, "'%s' must be a string", key);
    }
    size_t n = json_string_length(v);
    if (n >= size) {
        return jf_err_set(err, -EINVAL, "'%s' is longer than %zu bytes", key, size - 1);
    }
    memcpy(dst, json_string_value(v), n + 1);
    return 0;
}

int jf_msg_get_int(const json_t *body, const char *key, int64_t lo, int64_t hi,
                   int64_t *ret_value, jf_err_t *err)
{
    json_t *v = json_object_get(body, key);
    if (!json_is_integer(v)) {
        return jf_err_set(err, -EPROTO, "'%s' must be an integer", key);
    }
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi) {
        return jf_err_set(err, -EINVAL, "'%s' must be in [%lld, %lld], got %lld", key,
                          (long long) lo, (long long) hi, (long long) x);
    }
    *ret_value = x;
    return 0;
}

int jf_msg_get_num(const json_t *body, const char *key, double lo, double hi, double *ret_value,
                   jf_err_t *err)
{
    json_t *v = json_object_get(body, key);
    double x = json_number_value(v);
    if (!json_is_number(v) || !isfinite(x)) {
        return jf_err_set(err, -EPROTO, "'%s' must be a finite number", key);
    }
    if (x < lo || x > hi) {
        return jf_err_set(err, -EINVAL, "'%s' must be in [%g, %g], got %g", key, lo, hi, x);
    }
    *ret_value = x;
    return 0;
}

int jf_msg_get_bool(const json_t *body, const char *key, bool *ret_value, jf_err_t *err)
{
    json_t *v = json_object_get(body, key);
    if (!json_is_boolean(v)) {
        return jf_err_set(err, -EPROTO, "'%s' must be a boolean", key);
    }
    *ret_value = json_is_true(v);
    return 0;
}

int jf_msg_only_keys(const json_t *obj, const char *const *keys, jf_err_t *err)
{
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) obj, k, v) {
        (void) v;
        bool known = false;
        for (const char *const *p = keys; *p && !known; p++) {
            known = strcmp(*p, k) == 0;
        }
        if (!known) {
            return jf_err_set(err, -EPROTO, "unknown member '%.64s'", k);
        }
    }
    return 0;
}
