/* Schema table walkers: field lookup by dotted name, the flattened leaves (store columns, export
 * headers, trainer flags) and typed access to one leaf's value in a record. docs/schema.md. */
#include "jf_schema_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int s_each(const jf_schema_t *schema, const jf_schema_leaf_t *outer, jf_schema_leaf_fn fn,
                  void *arg)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < schema->n_fields; i++) {
        const jf_schema_field_t *f = &schema->fields[i];
        jf_schema_leaf_t leaf = {
            .field = f, .base = outer ? outer->base : 0, .outer = outer ? schema : NULL};
        const char *dot = outer ? "." : "", *under = outer ? "_" : "";
        rc = jf_schema_join(leaf.name, sizeof leaf.name, outer ? outer->name : "", dot, f->name);
        if (rc == 0 && f->column && (!outer || outer->column[0])) {
            rc = jf_schema_join(leaf.column, sizeof leaf.column, outer ? outer->column : "", under,
                                f->column);
        }
        if (rc != 0) {
            break;
        }
        if (f->type == JF_SCHEMA_ARR) {
            continue; // an array is not one column; its records are walked by their own schema
        }
        if (f->type == JF_SCHEMA_OBJ) {
            leaf.base += f->offset;
            rc = s_each(f->sub, &leaf, fn, arg);
        } else {
            rc = fn(&leaf, arg);
        }
    }
    return rc;
}

int jf_schema_each_leaf(const jf_schema_t *schema, jf_schema_leaf_fn fn, void *arg)
{
    return s_each(schema, NULL, fn, arg);
}

const char *jf_schema_sql_type(jf_schema_type_t type)
{
    return type == JF_SCHEMA_STR ? "TEXT" : type == JF_SCHEMA_NUM ? "REAL" : "INTEGER";
}

typedef struct s_count {
    size_t leaves;  // every leaf
    size_t columns; // leaves with a store column
} s_count_t;

static int s_count_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_count_t *c = arg;
    c->leaves++;
    c->columns += leaf->column[0] != '\0';
    return 0;
}

size_t jf_schema_n_leaves(const jf_schema_t *schema)
{
    s_count_t c = {0};
    (void) jf_schema_each_leaf(schema, s_count_leaf, &c); // s_count_leaf cannot fail
    return c.leaves;
}

size_t jf_schema_n_columns(const jf_schema_t *schema)
{
    s_count_t c = {0};
    (void) jf_schema_each_leaf(schema, s_count_leaf, &c); // s_count_leaf cannot fail
    return c.columns;
}

typedef struct s_find {
    const char *name;               // wanted dotted name
    const jf_schema_field_t *found; // borrowed from the table
} s_find_t;

static int s_find_leaf(const jf_schema_leaf_t *leaf, void *arg)
{
    s_find_t *q = arg;
    if (strcmp(leaf->name, q->name) == 0) {
        q->found = leaf->field;
        return 1; // stop the walk
    }
    return 0;
}

const jf_schema_field_t *jf_schema_field(const jf_schema_t *schema, const char *name)
{
    s_find_t q = {.name = name};
    (void) jf_schema_each_leaf(schema, s_find_leaf, &q); // 1 only means found
    return q.found;
}

static const void *s_at(const jf_schema_leaf_t *leaf, const void *rec)
{
    return (const char *) rec + leaf->base + leaf->field->offset;
}

static void *s_at_mut(const jf_schema_leaf_t *leaf, void *rec)
{
    return (char *) rec + leaf->base + leaf->field->offset;
}

bool jf_schema_leaf_is_present(const jf_schema_leaf_t *leaf, const void *rec)
{
    const char *base = (const char *) rec + leaf->base;
    if (leaf->outer && !jf_schema_is_set(leaf->outer, base)) {
        return false; // inside an absent nested record (no custom point: no clocks)
    }
    return jf_schema_field_is_present(leaf->field, base);
}

int64_t jf_schema_leaf_int(const jf_schema_leaf_t *leaf, const void *rec)
{
    const void *m = s_at(leaf, rec);
    switch (leaf->field->type) {
    case JF_SCHEMA_INT:
        return *(const int *) m;
    case JF_SCHEMA_I64:
        return *(const int64_t *) m;
    case JF_SCHEMA_U64:
        return (int64_t) * (const uint64_t *) m; // ranges stop at INT64_MAX (table test)
    case JF_SCHEMA_BOOL:
        return *(const bool *) m ? 1 : 0;
    case JF_SCHEMA_NUM:
        return (int64_t) * (const double *) m;
    default:
        return 0;
    }
}

double jf_schema_leaf_num(const jf_schema_leaf_t *leaf, const void *rec)
{
    if (leaf->field->type == JF_SCHEMA_NUM) {
        return *(const double *) s_at(leaf, rec);
    }
    return (double) jf_schema_leaf_int(leaf, rec);
}

const char *jf_schema_leaf_str(const jf_schema_leaf_t *leaf, const void *rec)
{
    return leaf->field->type == JF_SCHEMA_STR ? (const char *) s_at(leaf, rec) : "";
}

static void s_mark_present(const jf_schema_leaf_t *leaf, void *rec)
{
    if (leaf->field->has_flag) {
        *(bool *) ((char *) rec + leaf->base + leaf->field->has_offset) = true;
    }
}

int jf_schema_leaf_set_int(const jf_schema_leaf_t *leaf, void *rec, int64_t v)
{
    void *m = s_at_mut(leaf, rec);
    switch (leaf->field->type) {
    case JF_SCHEMA_INT:
        if (v < INT32_MIN || v > INT32_MAX) {
            return -ERANGE;
        }
        *(int *) m = (int) v;
        break;
    case JF_SCHEMA_I64:
        *(int64_t *) m = v;
        break;
    case JF_SCHEMA_U64:
        *(uint64_t *) m = (uint64_t) v;
        break;
    case JF_SCHEMA_BOOL:
        *(bool *) m = v != 0;
        break;
    default:
        return -EINVAL;
    }
    s_mark_present(leaf, rec);
    return 0;
}

void jf_schema_leaf_set_num(const jf_schema_leaf_t *leaf, void *rec, double v)
{
    if (leaf->field->type == JF_SCHEMA_NUM) {
        *(double *) s_at_mut(leaf, rec) = v;
        s_mark_present(leaf, rec);
    }
}

int jf_schema_leaf_set_str(const jf_schema_leaf_t *leaf, void *rec, const char *s, jf_err_t *err)
{
    size_t n = strlen(s);
    if (leaf->field->type != JF_SCHEMA_STR || n >= leaf->field->size) {
        return jf_err_set(err, -EINVAL, "'%s' is longer than %zu bytes", leaf->name,
                          leaf->field->size - 1);
    }
    memcpy(s_at_mut(leaf, rec), s, n + 1);
    s_mark_present(leaf, rec);
    return 0;
}
