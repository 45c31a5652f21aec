/* Schema command lines: a record as the trainer's "--flag value" arguments and one argument
 * back into a record, both from the table's flags, so a new run field reaches the trainer with
 * no list to edit (docs/schema.md "The trainer's arguments"). */
#include "jf_schema_internal.h"

#include "jf_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool s_skipped(const char *flag, const char *const *skip)
{
    for (const char *const *p = skip; p && *p; p++) {
        if (strcmp(*p, flag) == 0) {
            return true;
        }
    }
    return false;
}

typedef struct s_build {
    const void *rec;         // the record
    const char *const *skip; // flags left out
    jf_schema_argv_t *out;   // being filled
    size_t n_text;           // numbers formatted so far
} s_build_t;

static const char *s_value(s_build_t *b, const jf_schema_leaf_t *leaf)
{
    const jf_schema_field_t *f = leaf->field;
    if (f->type == JF_SCHEMA_STR) {
        return jf_schema_leaf_str(leaf, b->rec);
    }
    char *t = b->out->text[b->n_text++];
    if (f->type == JF_SCHEMA_NUM) {
        (void)snprintf(t, sizeof b->out->text[0], "%.17g", jf_schema_leaf_num(leaf, b->rec));
    } else if (f->type == JF_SCHEMA_U64) {
        (void)snprintf(t, sizeof b->out->text[0], "%" PRIu64,
                       (uint64_t)jf_schema_leaf_int(leaf, b->rec) / (uint64_t)jf_schema_scale(f));
    } else {
        (void)snprintf(t, sizeof b->out->text[0], "%" PRId64,
                       jf_schema_leaf_int(leaf, b->rec) / jf_schema_scale(f));
    }
    return t;
}

static int s_add_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_build_t *b = arg;
    const jf_schema_field_t *f = leaf->field;
    if (!f->flag || s_skipped(f->flag, b->skip) || !jf_schema_leaf_is_present(leaf, b->rec)) {
        return 0;
    }
    bool zero = f->type != JF_SCHEMA_STR && f->type != JF_SCHEMA_NUM &&
                jf_schema_leaf_int(leaf, b->rec) == 0;
    if ((f->omit_zero && zero) || (f->type == JF_SCHEMA_BOOL && zero)) {
        return 0;
    }
    if (b->out->n + 2 > JF_SCHEMA_ARGV_MAX) {
        return -E2BIG;
    }
    b->out->args[b->out->n++] = f->flag;
    if (f->type != JF_SCHEMA_BOOL) {
        b->out->args[b->out->n++] = s_value(b, leaf);
    }
    return 0;
}

int jf_schema_to_argv(const jf_schema_t *schema, const void *rec, const char *const *skip,
                      jf_schema_argv_t *ret_argv)
{
    *ret_argv = (jf_schema_argv_t){0};
    s_build_t b = {.rec = rec, .skip = skip, .out = ret_argv};
    int rc = jf_schema_each_leaf(schema, s_add_leaf, &b);
    ret_argv->args[ret_argv->n] = NULL;
    return rc;
}

typedef struct s_flag {
    const char *flag;  // wanted
    const char *value; // its text
    void *rec;         // being set
    jf_err_t *err;     // for a bad value
    bool found;        // a leaf has the flag
} s_flag_t;

static int s_set_number(const jf_schema_leaf_t *leaf, s_flag_t *q)
{
    const jf_schema_field_t *f = leaf->field;
    if (f->type == JF_SCHEMA_NUM) {
        double d = 0;
        int rc = jf_parse_double(q->value, f->lo_num, f->hi_num, &d, q->err);
        if (rc == 0) {
            jf_schema_leaf_set_num(leaf, q->rec, d);
        }
        return rc;
    }
    int64_t v = 0;
    int rc = jf_parse_i64(q->value, f->lo, f->hi, &v, q->err);
    return rc ? rc : jf_schema_leaf_set_int(leaf, q->rec, v * jf_schema_scale(f));
}

static int s_set_leaf(const jf_schema_leaf_t *leaf, s_flag_t *q)
{
    const jf_schema_field_t *f = leaf->field;
    if (f->type == JF_SCHEMA_BOOL) {
        return jf_schema_leaf_set_int(leaf, q->rec, 1);
    }
    if (!q->value) {
        return jf_err_set(q->err, -EINVAL, "needs a value");
    }
    if (f->type != JF_SCHEMA_STR) {
        return s_set_number(leaf, q);
    }
    int rc = jf_schema_leaf_set_str(leaf, q->rec, q->value, q->err);
    return rc ? rc : jf_schema_check_str(f, leaf->name, q->value, q->err);
}

static int s_flag_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_flag_t *q = arg;
    if (!leaf->field->flag || strcmp(leaf->field->flag, q->flag) != 0) {
        return 0;
    }
    q->found = true;
    int rc = s_set_leaf(leaf, q);
    return rc ? jf_err_prefix(q->err, "%s", q->flag) : 1; // 1 stops the walk: done
}

int jf_schema_from_flag(const jf_schema_t *schema, void *rec, const char *flag, const char *value,
                        jf_err_t *err)
{
    s_flag_t q = {.flag = flag, .value = value, .rec = rec, .err = err};
    int rc = jf_schema_each_leaf(schema, s_flag_leaf, &q);
    if (!q.found) {
        return jf_err_set(err, -ENOENT, "%s: not a field's option", flag);
    }
    return rc == 1 ? 0 : -EINVAL;
}
