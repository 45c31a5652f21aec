/* The measure record: names, the codec over its schema (common/jf_measure_schema.c) and the
 * cache reader (docs/protocol.md §5.4.1). */
#include "jf_msg_measure.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const s_drops[] = {"none", "helper", "fadvise", "simulated"};

#define S_N_DROPS ((int) (sizeof s_drops / sizeof s_drops[0]))

const char *jf_measure_drop_name(jf_measure_drop_t drop)
{
    return (unsigned) drop < (unsigned) S_N_DROPS ? s_drops[drop] : "?";
}

const char *jf_measure_total_name(jf_measure_total_t total)
{
    static const char *const names[] = {
        [JF_MEASURE_TOTAL_NONE] = "none",
        [JF_MEASURE_TOTAL_INPUT_RAIL] = "input-rail",
        [JF_MEASURE_TOTAL_SUM_OF_RAILS] = "sum-of-rails",
        [JF_MEASURE_TOTAL_RAPL] = "rapl",
    };
    if ((int) total < 0 || (size_t) total >= sizeof names / sizeof names[0]) {
        return "?";
    }
    return names[total];
}

// ---------------------------------------------------------------------------------------------
// Codec, from the schema (jf_measure_schema.c)

int jf_measure_decode(const json_t *rec, jf_measure_t *ret, jf_err_t *err)
{
    *ret = (jf_measure_t){0};
    return jf_schema_decode(jf_measure_schema(), rec, ret, err);
}

// The builder's rules, so a caller need not know them: with total none no figure, source,
// input rail or cover; otherwise no reason; the tegrastats interval only with tegrastats.
static void s_canonical(jf_measure_t *c)
{
    bool none = c->total == JF_MEASURE_TOTAL_NONE;
    c->has_energy = !none;
    if (none) {
        c->energy_mj = c->avg_power_mw = c->peak_power_mw = 0.0;
        c->covered_us = 0;
        c->input_rail[0] = c->energy_source[0] = c->covers[0] = '\0';
    } else {
        c->reason[0] = '\0';
    }
    if (strcmp(c->energy_source, JF_MEASURE_SOURCE_TEGRASTATS) != 0) {
        c->tegrastats_interval_ms = 0;
    }
}

json_t *jf_measure_to_json(const jf_measure_t *m)
{
    jf_measure_t *c = malloc(sizeof *c); // ~40 kB: not on the stack
    if (!c) {
        return NULL;
    }
    memcpy(c, m, sizeof *c);
    s_canonical(c);
    json_t *rec = jf_schema_encode(jf_measure_schema(), c);
    free(c);
    if (!rec || json_object_set_new(rec, "kind", json_string("measure")) != 0 ||
        jf_measure_check(rec, NULL) != 0) {
        json_decref(rec);
        return NULL;
    }
    return rec;
}

int jf_measure_check(const json_t *rec, jf_err_t *err)
{
    // The struct is large (the cache of up to 1000 epochs, a mount path): not on the stack.
    jf_measure_t *m = malloc(sizeof *m);
    int rc = m ? jf_measure_decode(rec, m, err) : jf_err_set(err, -ENOMEM, "out of memory");
    free(m);
    return rc;
}

// ---------------------------------------------------------------------------------------------
// Reader

size_t jf_measure_cache_count(const json_t *rec)
{
    return json_array_size(json_object_get(rec, "cache"));
}

int jf_measure_cache_at(const json_t *rec, size_t i, jf_measure_cache_t *ret_cache)
{
    const json_t *c = json_array_get(json_object_get(rec, "cache"), i);
    if (!c) {
        return -ENOENT;
    }
    const json_t *b = json_object_get(c, "resident_before");
    const json_t *a = json_object_get(c, "resident_after");
    *ret_cache =
        (jf_measure_cache_t){.epoch = (int) json_integer_value(json_object_get(c, "epoch")),
                             .has_before = b != NULL,
                             .before = json_number_value(b),
                             .has_after = a != NULL,
                             .after = json_number_value(a)};
    return 0;
}
