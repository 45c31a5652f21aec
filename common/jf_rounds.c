/* Rounds files (jf_rounds.h): parse and validate one rounds file, strictly, through jf_yaml
 * (positions in every message), and resolve its board selection against a fleet. Stops at the
 * first error. Does not plan or run anything. Format: docs/rounds.md "Rounds file". */
#include "jf_rounds.h"

#include "jf_workload.h"
#include "jf_yaml.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static const char *const s_top_keys[] = {
    "name",    "description", "boards",       "workload",   "batch_size", "workers",
    "storage", "rounds",      "local",        "policy",     "deadline",   "spread",
    "timeout", "straggler",   "power_budget", "idle_power", "seed"};
static const char *const s_required[] = {"name",   "boards", "workload", "batch_size",
                                         "rounds", "local",  "policy"};
static const char *const s_select_keys[] = {"name", "type", "label"};
static const char *const s_power_keys[] = {"name", "type", "watts"};
static const char *const s_workload_keys[] = {"model", "dataset"};
static const char *const s_local_keys[] = {"minibatches", "epochs"};
static const char *const s_policies[] = {"maxn", "equal-finish", "deadline"};
static const char *const s_stragglers[] = {"drop", "wait"};

// Handles one top-level key; the table below maps each key to one.
typedef int (*s_key_fn)(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err);

// The one of names[0..n) that text equals: its index, or -EINVAL with err at node.
static int s_enum(const jf_yaml_node_t *v, const char *const *names, size_t n, const char *what,
                  const char *expected, int *ret_index, jf_err_t *err)
{
    if (jf_yaml_node_expect(v, JF_YAML_SCALAR, err) != 0) {
        return -EINVAL;
    }
    const char *t = jf_yaml_node_text(v);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(t, names[i]) == 0) {
            *ret_index = (int) i;
            return 0;
        }
    }
    const char *near = jf_yaml_suggest(t, names, n);
    return jf_yaml_error(err, -EINVAL, v, "unknown %s '%.64s', expected %s%s%s%s", what, t,
                         expected, near ? "; did you mean '" : "", near ? near : "",
                         near ? "'?" : "");
}

static int s_name(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_ident(v, r->name, sizeof r->name, err);
}

static int s_description(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_str(v, r->description, sizeof r->description, err);
}

// One selector mapping with exactly one of the allowed keys (name, type, label; for a power
// entry name or type, plus watts).
static int s_selector(const jf_yaml_node_t *item, bool power, jf_rounds_select_t *ret,
                      jf_err_t *err)
{
    const char *ctx = power ? "a power entry" : "a boards entry";
    int rc = jf_yaml_node_expect(item, JF_YAML_MAPPING, err);
    rc = rc ? rc
            : jf_yaml_check_keys(item, power ? s_power_keys : s_select_keys,
                                 power ? S_COUNT(s_power_keys) : S_COUNT(s_select_keys), ctx, err);
    if (rc != 0) {
        return rc;
    }
    size_t found = 0;
    for (size_t k = 0; k < S_COUNT(s_select_keys) - (power ? 1 : 0); k++) {
        const jf_yaml_node_t *v = jf_yaml_node_get(item, s_select_keys[k]);
        if (v) {
            found++;
            ret->by = (jf_rounds_by_t) k;
            if (jf_yaml_node_to_ident(v, ret->value, sizeof ret->value, err) != 0) {
                return -EINVAL;
            }
        }
    }
    if (found != 1) {
        return jf_yaml_error(err, -EINVAL, item, "%s must have exactly one of %s, got %zu", ctx,
                             power ? "name or type" : "name, type or label", found);
    }
    if (ret->by == JF_ROUNDS_BY_TYPE && !jf_board_type_parse(ret->value, &ret->type)) {
        return jf_yaml_error(err, -EINVAL, jf_yaml_node_get(item, "type"),
                             "unknown board type '%s', expected one of: %s", ret->value,
                             jf_board_type_names());
    }
    ret->line = jf_yaml_node_line(item);
    ret->column = jf_yaml_node_column(item);
    return 0;
}

// A non-empty sequence of at most max items.
static int s_seq(const jf_yaml_node_t *v, size_t max, jf_err_t *err)
{
    if (jf_yaml_node_expect(v, JF_YAML_SEQUENCE, err) != 0) {
        return -EINVAL;
    }
    size_t n = jf_yaml_node_size(v);
    if (n == 0 || n > max) {
        return jf_yaml_error(err, -EINVAL, v, "expected 1 to %zu entries, got %zu", max, n);
    }
    return 0;
}

static int s_boards(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    if (s_seq(v, JF_ROUNDS_SELECT_MAX, err) != 0) {
        return -EINVAL;
    }
    for (size_t i = 0; i < jf_yaml_node_size(v); i++) {
        if (s_selector(jf_yaml_node_item(v, i), false, &r->select[i], err) != 0) {
            return -EINVAL;
        }
        r->n_select = i + 1;
    }
    return 0;
}

static int s_power_list(jf_rounds_power_t *list, size_t *ret_n, const jf_yaml_node_t *v,
                        jf_err_t *err)
{
    if (s_seq(v, JF_ROUNDS_POWER_MAX, err) != 0) {
        return -EINVAL;
    }
    for (size_t i = 0; i < jf_yaml_node_size(v); i++) {
        const jf_yaml_node_t *item = jf_yaml_node_item(v, i);
        const jf_yaml_node_t *w = NULL;
        if (s_selector(item, true, &list[i].sel, err) != 0 ||
            jf_yaml_node_require(item, "watts", "a power entry", &w, err) != 0 ||
            jf_yaml_node_to_double(w, 0.0, JF_ROUNDS_WATTS_MAX, &list[i].watts, err) != 0) {
            return -EINVAL;
        }
        if (!(list[i].watts > 0.0)) {
            return jf_yaml_error(err, -EINVAL, w, "'watts' must be above 0");
        }
        for (size_t j = 0; j < i; j++) {
            if (list[j].sel.by == list[i].sel.by && !strcmp(list[j].sel.value, list[i].sel.value)) {
                return jf_yaml_error(err, -EINVAL, item, "'%s' is listed twice", list[i].sel.value);
            }
        }
        *ret_n = i + 1;
    }
    return 0;
}

static int s_budget(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return s_power_list(r->budget, &r->n_budget, v, err);
}

static int s_idle(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return s_power_list(r->idle, &r->n_idle, v, err);
}

static int s_workload(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    const jf_yaml_node_t *m = NULL;
    const jf_yaml_node_t *d = NULL;
    int rc = jf_yaml_node_expect(v, JF_YAML_MAPPING, err);
    rc =
        rc ? rc : jf_yaml_check_keys(v, s_workload_keys, S_COUNT(s_workload_keys), "workload", err);
    rc = rc ? rc : jf_yaml_node_require(v, "model", "workload", &m, err);
    rc = rc ? rc : jf_yaml_node_require(v, "dataset", "workload", &d, err);
    rc = rc ? rc : jf_yaml_node_to_ident(m, r->model, sizeof r->model, err);
    rc = rc ? rc : jf_yaml_node_to_ident(d, r->dataset, sizeof r->dataset, err);
    if (rc != 0) {
        return rc;
    }
    jf_err_t why = {0};
    if (jf_workload_check_pair(r->model, r->dataset, &why) != 0) {
        return jf_yaml_error(err, -EINVAL, v, "%s", why.msg);
    }
    snprintf(r->workload, sizeof r->workload, "%s-%s", r->model, r->dataset);
    return 0;
}

static int s_batch(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_int(v, 1, JF_ROUNDS_BATCH_MAX, &r->batch_size, err);
}

static int s_workers(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_int(v, 0, JF_ROUNDS_WORKERS_MAX, &r->workers, err);
}

static int s_storage(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_ident(v, r->storage, sizeof r->storage, err);
}

static int s_rounds(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_i64(v, 1, JF_ROUNDS_MAX, &r->rounds, err);
}

static int s_local(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(v, JF_YAML_MAPPING, err);
    rc = rc ? rc : jf_yaml_check_keys(v, s_local_keys, S_COUNT(s_local_keys), "local", err);
    if (rc != 0) {
        return rc;
    }
    if (jf_yaml_node_size(v) != 1) {
        return jf_yaml_error(err, -EINVAL, v,
                             "'local' must have exactly one of minibatches or epochs, got %zu",
                             jf_yaml_node_size(v));
    }
    const jf_yaml_node_t *k = jf_yaml_node_key(v, 0);
    r->local_unit =
        strcmp(jf_yaml_node_text(k), "epochs") == 0 ? JF_ROUNDS_EPOCHS : JF_ROUNDS_MINIBATCHES;
    return jf_yaml_node_to_i64(jf_yaml_node_value(v, 0), 1, JF_ROUNDS_LOCAL_MAX, &r->local_count,
                               err);
}

static int s_policy(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    int i = 0;
    int rc = s_enum(v, s_policies, S_COUNT(s_policies), "policy", "maxn, equal-finish or deadline",
                    &i, err);
    r->policy = (jf_rounds_policy_t) i;
    return rc;
}

static int s_straggler(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    int i = 0;
    int rc =
        s_enum(v, s_stragglers, S_COUNT(s_stragglers), "straggler policy", "drop or wait", &i, err);
    r->straggler = (jf_rounds_straggler_t) i;
    return rc;
}

static int s_deadline(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_duration_us(v, 1, JF_ROUNDS_DURATION_MAX_US, &r->deadline_us, err);
}

static int s_timeout(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    return jf_yaml_node_to_duration_us(v, 1, JF_ROUNDS_DURATION_MAX_US, &r->timeout_us, err);
}

// `spread: 5%` (the percent sign optional).
static int s_spread(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    if (jf_yaml_node_expect(v, JF_YAML_SCALAR, err) != 0) {
        return -EINVAL;
    }
    char text[64] = "";
    snprintf(text, sizeof text, "%s", jf_yaml_node_text(v));
    size_t len = strlen(text);
    if (len > 0 && text[len - 1] == '%') {
        text[len - 1] = '\0';
    }
    jf_err_t why = {0};
    if (jf_parse_double(text, 0.0, JF_ROUNDS_SPREAD_PCT_MAX, &r->spread_pct, &why) != 0 ||
        !(r->spread_pct > 0.0)) {
        return jf_yaml_error(err, -EINVAL, v,
                             "'spread': expected a percentage above 0 and at most %g, got '%.64s'",
                             JF_ROUNDS_SPREAD_PCT_MAX, jf_yaml_node_text(v));
    }
    return 0;
}

static int s_seed(jf_rounds_t *r, const jf_yaml_node_t *v, jf_err_t *err)
{
    int64_t seed = 0;
    int rc = jf_yaml_node_to_i64(v, 0, INT64_MAX, &seed, err);
    r->seed = (uint64_t) seed;
    return rc;
}

// In the order of s_top_keys.
static const s_key_fn s_key_fns[] = {s_name,     s_description, s_boards,  s_workload,  s_batch,
                                     s_workers,  s_storage,     s_rounds,  s_local,     s_policy,
                                     s_deadline, s_spread,      s_timeout, s_straggler, s_budget,
                                     s_idle,     s_seed};

// The rules between keys: the deadline belongs to the deadline policy, the spread to
// equal-finish.
static int s_cross_checks(jf_rounds_t *r, const jf_yaml_node_t *root, jf_err_t *err)
{
    const jf_yaml_node_t *dl = jf_yaml_node_get(root, "deadline");
    const jf_yaml_node_t *sp = jf_yaml_node_get(root, "spread");
    const jf_yaml_node_t *pol = jf_yaml_node_get(root, "policy");
    if (r->policy == JF_ROUNDS_DEADLINE && !dl) {
        return jf_yaml_error(err, -EINVAL, pol, "policy deadline needs a 'deadline' (e.g. 30s)");
    }
    if (r->policy != JF_ROUNDS_DEADLINE && dl) {
        return jf_yaml_error(err, -EINVAL, dl,
                             "'deadline' is used only by policy deadline, the "
                             "policy is %s",
                             jf_rounds_policy_name(r->policy));
    }
    if (r->policy != JF_ROUNDS_EQUAL_FINISH && sp) {
        return jf_yaml_error(err, -EINVAL, sp,
                             "'spread' is used only by policy equal-finish, "
                             "the policy is %s",
                             jf_rounds_policy_name(r->policy));
    }
    return 0;
}

static int s_fill(jf_rounds_t *r, const jf_yaml_node_t *root, jf_err_t *err)
{
    if (jf_yaml_node_expect(root, JF_YAML_MAPPING, err) != 0 ||
        jf_yaml_check_keys(root, s_top_keys, S_COUNT(s_top_keys), "the rounds file", err) != 0) {
        return -EINVAL;
    }
    for (size_t i = 0; i < S_COUNT(s_required); i++) {
        const jf_yaml_node_t *v = NULL;
        if (jf_yaml_node_require(root, s_required[i], "the rounds file", &v, err) != 0) {
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < S_COUNT(s_top_keys); i++) {
        const jf_yaml_node_t *v = jf_yaml_node_get(root, s_top_keys[i]);
        if (v && s_key_fns[i](r, v, err) != 0) {
            return -EINVAL;
        }
    }
    return s_cross_checks(r, root, err);
}

static void s_defaults(jf_rounds_t *r, const char *source)
{
    snprintf(r->source, sizeof r->source, "%s", source ? source : "<input>");
    r->workers = JF_ROUNDS_DEFAULT_WORKERS;
    r->timeout_us = JF_ROUNDS_DEFAULT_TIMEOUT_US;
    r->spread_pct = JF_ROUNDS_DEFAULT_SPREAD_PCT;
    r->straggler = JF_ROUNDS_DROP;
    r->seed = 1;
}

static jf_rounds_t *s_from_doc(jf_yaml_t *doc, const char *source, jf_err_t *err)
{
    jf_rounds_t *r = doc ? calloc(1, sizeof *r) : NULL;
    if (doc && !r) {
        jf_err_set(err, -ENOMEM, "%s: out of memory", source);
    }
    if (r) {
        s_defaults(r, source);
        if (s_fill(r, jf_yaml_root(doc), err) != 0) {
            jf_rounds_destroy(&r);
        }
    }
    jf_yaml_destroy(&doc);
    return r;
}

jf_rounds_t *jf_rounds_parse(const char *text, size_t len, const char *source_name, jf_err_t *err)
{
    const char *source = source_name ? source_name : "<input>";
    return s_from_doc(jf_yaml_parse(text, len, source, JF_ROUNDS_FILE_MAX_BYTES, err), source, err);
}

jf_rounds_t *jf_rounds_load(const char *path, jf_err_t *err)
{
    return s_from_doc(jf_yaml_load(path, JF_ROUNDS_FILE_MAX_BYTES, err), path, err);
}

void jf_rounds_destroy(jf_rounds_t **self_p)
{
    if (self_p && *self_p) {
        free(*self_p);
        *self_p = NULL;
    }
}

static jf_board_type_t s_type_of(const jf_board_spec_t *b)
{
    return b->type == JF_BOARD_SIM ? b->simulates : b->type;
}

static bool s_picks(const jf_rounds_select_t *s, const jf_board_spec_t *b)
{
    switch (s->by) {
    case JF_ROUNDS_BY_NAME:
        return strcmp(b->name, s->value) == 0;
    case JF_ROUNDS_BY_TYPE:
        return s_type_of(b) == s->type;
    case JF_ROUNDS_BY_LABEL:
        return jf_board_spec_has_label(b, s->value);
    }
    return false;
}

static const char *const s_by_names[] = {"name", "type", "label"};

// The selector must pick at least one board of the picked set.
static int s_check_picks(const jf_rounds_t *self, const jf_rounds_select_t *sel,
                         const jf_board_spec_t *const *picked, size_t n, const char *what,
                         jf_err_t *err)
{
    for (size_t j = 0; j < n; j++) {
        if (s_picks(sel, picked[j])) {
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "%s:%d:%d: no board %s has %s '%s'", self->source, sel->line,
                      sel->column, what, s_by_names[sel->by], sel->value);
}

static int s_check_power(const jf_rounds_t *self, const jf_board_spec_t *const *picked, size_t n,
                         jf_err_t *err)
{
    for (size_t i = 0; i < self->n_budget; i++) {
        if (s_check_picks(self, &self->budget[i].sel, picked, n, "selected here", err) != 0) {
            return -EINVAL;
        }
    }
    for (size_t i = 0; i < self->n_idle; i++) {
        if (s_check_picks(self, &self->idle[i].sel, picked, n, "selected here", err) != 0) {
            return -EINVAL;
        }
    }
    return 0;
}

int jf_rounds_resolve(const jf_rounds_t *self, const jf_fleet_config_t *fleet,
                      const jf_board_spec_t ***ret_boards, size_t *ret_n, jf_err_t *err)
{
    const jf_board_spec_t **picked = calloc(fleet->n_boards + 1, sizeof *picked);
    if (!picked) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", self->source);
    }
    size_t n = 0;
    for (size_t b = 0; b < fleet->n_boards; b++) {
        bool take = false;
        for (size_t s = 0; s < self->n_select && !take; s++) {
            take = s_picks(&self->select[s], &fleet->boards[b]);
        }
        if (take) {
            picked[n++] = &fleet->boards[b];
        }
    }
    char where[PATH_MAX + 8];
    snprintf(where, sizeof where, "in %s", fleet->source);
    const jf_board_spec_t *const *all = (const jf_board_spec_t *const *) picked;
    for (size_t s = 0; s < self->n_select; s++) {
        if (s_check_picks(self, &self->select[s], all, n, where, err) != 0) {
            free(picked);
            return -EINVAL;
        }
    }
    if (s_check_power(self, all, n, err) != 0) {
        free(picked);
        return -EINVAL;
    }
    *ret_boards = picked;
    *ret_n = n;
    return 0;
}

static double s_power_for(const jf_rounds_power_t *list, size_t n, const jf_board_spec_t *b)
{
    double by_type = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (list[i].sel.by == JF_ROUNDS_BY_NAME && strcmp(list[i].sel.value, b->name) == 0) {
            return list[i].watts;
        }
        if (list[i].sel.by == JF_ROUNDS_BY_TYPE && list[i].sel.type == s_type_of(b)) {
            by_type = list[i].watts;
        }
    }
    return by_type;
}

double jf_rounds_budget_w(const jf_rounds_t *self, const jf_board_spec_t *board)
{
    return s_power_for(self->budget, self->n_budget, board);
}

double jf_rounds_idle_w(const jf_rounds_t *self, const jf_board_spec_t *board)
{
    return s_power_for(self->idle, self->n_idle, board);
}

const char *jf_rounds_policy_name(jf_rounds_policy_t policy)
{
    return (size_t) policy < S_COUNT(s_policies) ? s_policies[policy] : "unknown";
}

bool jf_rounds_policy_parse(const char *name, jf_rounds_policy_t *ret_policy)
{
    for (size_t i = 0; name && i < S_COUNT(s_policies); i++) {
        if (strcmp(name, s_policies[i]) == 0) {
            *ret_policy = (jf_rounds_policy_t) i;
            return true;
        }
    }
    return false;
}

const char *jf_rounds_straggler_name(jf_rounds_straggler_t s)
{
    return (size_t) s < S_COUNT(s_stragglers) ? s_stragglers[s] : "unknown";
}
