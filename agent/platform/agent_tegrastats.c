/* tegrastats line parser (jetson-platforms.md §3). The line is split on blanks and read by token
 * name, never by position, because field order differs between boards and releases: a table of
 * known keys, then `NAME@T C` temperatures, then `NAME cur/avg` rails; anything else is skipped.
 * Not a tegrastats runner and not a log reader (agent_import.c). */
#include "agent_tegrastats.h"

#include "jf_units.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define S_TOKENS_MAX      (AGENT_TEGRASTATS_LINE_MAX / 2 + 1)
#define S_BYTES_PER_MB    INT64_C(1048576) // tegrastats "MB" are MiB (kB from meminfo / 1024)
#define S_HZ_PER_MHZ      INT64_C(1000000)
#define S_MC_PER_C        1000.0
#define S_OFFLINE_MC      INT64_C(-256000) // tegrastats prints -256C for a sensor that is offline
#define S_PCT_MAX         INT64_C(100)
#define S_MHZ_MAX         INT64_C(1000000)   // 1 THz: bounds the Hz product well inside int64
#define S_MB_MAX          (INT64_C(1) << 40) // bounds the bytes product well inside int64
#define S_MW_MAX          INT64_C(100000000) // 100 kW
#define S_TEMP_C_MIN      -300.0
#define S_TEMP_C_MAX      1000.0
#define S_RAIL_VALUES_MAX 3  // JetPack 7 prints three values per rail
#define S_SHOWN_MAX       64 // bytes of a bad token quoted in a message

enum {
    S_SEEN_RAM = 1u << 0,
    S_SEEN_SWAP = 1u << 1,
    S_SEEN_IRAM = 1u << 2,
    S_SEEN_CPU = 1u << 3,
    S_SEEN_EMC = 1u << 4,
    S_SEEN_GPU = 1u << 5,
    S_SEEN_GPU2 = 1u << 6,
};

// A load and/or clock(s): "L%", "L%@F", "@F", "L%@[F0,F1,...]", "@[F0,...]".
typedef struct s_clock {
    bool has_load;                               // a load was printed
    int64_t load_pct;                            // percent, 0..100
    size_t n_freq;                               // clocks printed in freq_mhz
    int64_t freq_mhz[AGENT_TEGRASTATS_GPCS_MAX]; // MHz as printed
} s_clock_t;

// The per-core entries of `CPU [...]`.
typedef struct s_cpus {
    size_t n;                                    // entries printed
    bool online[AGENT_TEGRASTATS_CPUS_MAX];      // false for "off"
    bool has_freq[AGENT_TEGRASTATS_CPUS_MAX];    // a clock was printed (or shared, L4T R24)
    int64_t load_pct[AGENT_TEGRASTATS_CPUS_MAX]; // percent, 0..100
    int64_t freq_mhz[AGENT_TEGRASTATS_CPUS_MAX]; // MHz as printed
} s_cpus_t;

typedef struct s_line {
    char buf[AGENT_TEGRASTATS_LINE_MAX + 1]; // the line, split in place
    const char *tok[S_TOKENS_MAX];           // borrowed from buf
    size_t n_tok;                            // tokens in tok
    unsigned seen;                           // S_SEEN_* of the fields met so far
    s_clock_t gpu;                           // GR3D_FREQ, written out at the end
    s_clock_t gpu2;                          // GR3D2_FREQ (AGX Orin, JetPack 5.0): the second GPC
    json_t *out;                             // owned: the sample being built
    json_t *temps;                           // borrowed from out; NULL before the first zone
    json_t *rails;                           // borrowed from out; NULL before the first rail
} s_line_t;

typedef int (*s_field_fn)(s_line_t *l, const char *name, const char *value, jf_err_t *err);

static bool s_is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool s_is_alpha(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

// Reads plain decimal digits at *p (no sign, no blanks) as a value in [0, max] and moves *p past
// them. False, with *p unchanged, when there are none or the value is larger than max.
static bool s_read_int(const char **p, int64_t max, int64_t *ret)
{
    const char *q = *p;
    int64_t v = 0;
    for (; s_is_digit(*q); q++) {
        if (v > (max - (*q - '0')) / 10) {
            return false;
        }
        v = v * 10 + (*q - '0');
    }
    if (q == *p) {
        return false;
    }
    *ret = v;
    *p = q;
    return true;
}

// Moves *p past lit when the text there starts with it.
static bool s_skip(const char **p, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0) {
        return false;
    }
    *p += n;
    return true;
}

// A rail or zone name as tegrastats prints them: [A-Za-z][A-Za-z0-9_]*, of at most `len` bytes.
static bool s_is_name(const char *text, size_t len)
{
    if (len == 0 || len > AGENT_TEGRASTATS_NAME_MAX || !s_is_alpha(text[0])) {
        return false;
    }
    for (size_t i = 1; i < len; i++) {
        if (!s_is_alpha(text[i]) && !s_is_digit(text[i]) && text[i] != '_') {
            return false;
        }
    }
    return true;
}

static int s_bad(jf_err_t *err, const char *name, const char *expected, const char *value)
{
    return jf_err_set(err, -EINVAL, "field '%s': expected %s, got '%.*s'", name, expected,
                      S_SHOWN_MAX, value);
}

// Sets obj[key] = value, taking value (jansson frees it on failure too).
static int s_put(json_t *obj, const char *key, json_t *value, jf_err_t *err)
{
    if (json_object_set_new(obj, key, value) != 0) {
        return jf_err_set(err, -ENOMEM, "out of memory building the sample");
    }
    return 0;
}

// ---------------------------------------------------------------------------------------------
// RAM, SWAP, IRAM

// "USED/TOTALMB", optionally followed directly by "(lfb ..." or "(cached ..." (some releases
// print no blank before the parenthesis).
static int s_on_used_total(s_line_t *l, const char *name, const char *value, jf_err_t *err)
{
    const char *p = value;
    int64_t used = 0;
    int64_t total = 0;
    if (!s_read_int(&p, S_MB_MAX, &used) || !s_skip(&p, "/") || !s_read_int(&p, S_MB_MAX, &total) ||
        !s_skip(&p, "MB") || (*p != '\0' && *p != '(')) {
        return s_bad(err, name, "USED/TOTALMB", value);
    }
    bool ram = strcmp(name, "RAM") == 0;
    int rc = s_put(l->out, ram ? "ram_used_bytes" : "swap_used_bytes",
                   json_integer(used * S_BYTES_PER_MB), err);
    return rc ? rc
              : s_put(l->out, ram ? "ram_total_bytes" : "swap_total_bytes",
                      json_integer(total * S_BYTES_PER_MB), err);
}

// IRAM (T210 video engines' on-chip RAM) has no place in a sample: its value is skipped.
static int s_on_ignored(s_line_t *l, const char *name, const char *value, jf_err_t *err)
{
    (void) l;
    (void) name;
    (void) value;
    (void) err;
    return 0;
}

// ---------------------------------------------------------------------------------------------
// CPU

// One entry of `CPU [...]`: "off", "L%" or "L%@F".
static bool s_read_core(const char **p, s_cpus_t *c)
{
    size_t i = c->n;
    if (s_skip(p, "off")) {
        c->n++;
        return true;
    }
    if (!s_read_int(p, S_PCT_MAX, &c->load_pct[i]) || !s_skip(p, "%")) {
        return false;
    }
    c->online[i] = true;
    c->has_freq[i] = s_skip(p, "@");
    if (c->has_freq[i] && !s_read_int(p, S_MHZ_MAX, &c->freq_mhz[i])) {
        return false;
    }
    c->n++;
    return true;
}

// "[e0,e1,...]" and, in the L4T R24 form, "[a%,b%,...]@F" with one clock for every core.
static bool s_read_cores(const char *value, s_cpus_t *c)
{
    const char *p = value;
    if (!s_skip(&p, "[")) {
        return false;
    }
    do {
        if (c->n >= AGENT_TEGRASTATS_CPUS_MAX || !s_read_core(&p, c)) {
            return false;
        }
    } while (s_skip(&p, ","));
    if (!s_skip(&p, "]")) {
        return false;
    }
    if (!s_skip(&p, "@")) {
        return *p == '\0';
    }
    int64_t shared_mhz = 0;
    if (!s_read_int(&p, S_MHZ_MAX, &shared_mhz) || *p != '\0') {
        return false;
    }
    for (size_t i = 0; i < c->n; i++) {
        if (c->online[i] && !c->has_freq[i]) {
            c->has_freq[i] = true;
            c->freq_mhz[i] = shared_mhz;
        }
    }
    return true;
}

typedef enum s_core_what { S_CORE_LOAD, S_CORE_FREQ, S_CORE_ONLINE } s_core_what_t;

// One per-core array; an element of a core that is off is null (online: false). NULL when out
// of memory.
static json_t *s_core_array(const s_cpus_t *c, s_core_what_t what)
{
    json_t *a = json_array();
    int bad = !a;
    for (size_t i = 0; i < c->n; i++) {
        json_t *v = what == S_CORE_ONLINE ? json_boolean(c->online[i])
                    : !c->online[i]       ? json_null()
                    : what == S_CORE_LOAD ? json_real((double) c->load_pct[i])
                                          : json_integer(c->freq_mhz[i] * S_HZ_PER_MHZ);
        bad |= json_array_append_new(a, v);
    }
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

// cpu_load_pct is the mean over online cores: each core's busy share of the same interval, so
// the mean is the busy share of all of them (what /proc/stat's "cpu" line gives). The clock array
// is left out when an online core has no clock printed.
static int s_put_cpus(s_line_t *l, const s_cpus_t *c, jf_err_t *err)
{
    double sum_pct = 0.0;
    size_t n_online = 0;
    bool all_freq = true;
    for (size_t i = 0; i < c->n; i++) {
        sum_pct += c->online[i] ? (double) c->load_pct[i] : 0.0;
        n_online += c->online[i];
        all_freq = all_freq && (!c->online[i] || c->has_freq[i]);
    }
    int rc = 0;
    if (n_online > 0) {
        rc = s_put(l->out, "cpu_load_pct", json_real(sum_pct / (double) n_online), err);
    }
    rc = rc ? rc : s_put(l->out, "cpu_core_load_pct", s_core_array(c, S_CORE_LOAD), err);
    if (rc == 0 && all_freq) {
        rc = s_put(l->out, "cpu_core_freq_hz", s_core_array(c, S_CORE_FREQ), err);
    }
    return rc ? rc : s_put(l->out, "cpu_online", s_core_array(c, S_CORE_ONLINE), err);
}

static int s_on_cpu(s_line_t *l, const char *name, const char *value, jf_err_t *err)
{
    s_cpus_t cpus = {0};
    if (!s_read_cores(value, &cpus)) {
        if (cpus.n >= AGENT_TEGRASTATS_CPUS_MAX) {
            return jf_err_set(err, -EINVAL, "field '%s': more than %d cores", name,
                              AGENT_TEGRASTATS_CPUS_MAX);
        }
        return jf_err_set(err, -EINVAL,
                          "field '%s': entry %zu: expected 'off' or LOAD%%@MHZ in "
                          "[...,...], got '%.*s'",
                          name, cpus.n, S_SHOWN_MAX, value);
    }
    return s_put_cpus(l, &cpus, err);
}

// ---------------------------------------------------------------------------------------------
// EMC and GPU

static bool s_read_clock(const char *value, bool allow_list, s_clock_t *c)
{
    const char *p = value;
    c->has_load = s_read_int(&p, S_PCT_MAX, &c->load_pct);
    if (c->has_load && !s_skip(&p, "%")) {
        return false;
    }
    if (s_skip(&p, "@")) {
        bool list = allow_list && s_skip(&p, "[");
        do {
            if (c->n_freq >= AGENT_TEGRASTATS_GPCS_MAX ||
                !s_read_int(&p, S_MHZ_MAX, &c->freq_mhz[c->n_freq])) {
                return false;
            }
            c->n_freq++;
        } while (list && s_skip(&p, ","));
        if (list && !s_skip(&p, "]")) {
            return false;
        }
    }
    return *p == '\0' && (c->has_load || c->n_freq > 0);
}

static int s_on_emc(s_line_t *l, const char *name, const char *value, jf_err_t *err)
{
    s_clock_t emc = {0};
    if (!s_read_clock(value, false, &emc)) {
        return s_bad(err, name, "LOAD%, LOAD%@MHZ or @MHZ", value);
    }
    int rc = 0;
    if (emc.has_load) {
        rc = s_put(l->out, "emc_load_pct", json_real((double) emc.load_pct), err);
    }
    if (rc == 0 && emc.n_freq > 0) {
        rc = s_put(l->out, "emc_freq_hz", json_integer(emc.freq_mhz[0] * S_HZ_PER_MHZ), err);
    }
    return rc;
}

static int s_on_gpu(s_line_t *l, const char *name, const char *value, jf_err_t *err)
{
    s_clock_t *c = strcmp(name, "GR3D2_FREQ") == 0 ? &l->gpu2 : &l->gpu;
    if (!s_read_clock(value, true, c)) {
        return s_bad(err, name, "LOAD%, LOAD%@MHZ, LOAD%@[MHZ,...] or @[MHZ,...]", value);
    }
    return 0;
}

// GR3D2_FREQ's clock is the second GPC of GR3D_FREQ; its load is not reported (gpu_load_pct is
// GR3D_FREQ's).
static int s_put_gpu(s_line_t *l, jf_err_t *err)
{
    const s_clock_t *g = &l->gpu;
    int rc = 0;
    if (g->has_load) {
        rc = s_put(l->out, "gpu_load_pct", json_real((double) g->load_pct), err);
    }
    if (rc != 0 || g->n_freq == 0) {
        return rc;
    }
    rc = s_put(l->out, "gpu_freq_hz", json_integer(g->freq_mhz[0] * S_HZ_PER_MHZ), err);
    if (rc != 0 || g->n_freq + l->gpu2.n_freq < 2) {
        return rc;
    }
    json_t *gpcs = json_array();
    int bad = !gpcs;
    for (size_t i = 0; i < g->n_freq + l->gpu2.n_freq; i++) {
        int64_t mhz = i < g->n_freq ? g->freq_mhz[i] : l->gpu2.freq_mhz[i - g->n_freq];
        bad |= json_array_append_new(gpcs, json_integer(mhz * S_HZ_PER_MHZ));
    }
    if (bad) {
        json_decref(gpcs);
        return jf_err_set(err, -ENOMEM, "out of memory building the sample");
    }
    return s_put(l->out, "gpu_gpc_freq_hz", gpcs, err);
}

// ---------------------------------------------------------------------------------------------
// Known fields: a key followed by one value token

static const struct s_field {
    const char *name;
    unsigned seen;      // S_SEEN_* bit: each field may appear once per line
    bool bracket_value; // a field only when the value starts with '[' ("CPU" is also a rail)
    s_field_fn fn;
} s_fields[] = {
    {"RAM", S_SEEN_RAM, false, s_on_used_total},   // RAM 1923/3964MB
    {"SWAP", S_SEEN_SWAP, false, s_on_used_total}, // SWAP 191/1982MB
    {"IRAM", S_SEEN_IRAM, false, s_on_ignored},    // IRAM 0/252kB(lfb 252kB), Nano and TX1
    {"CPU", S_SEEN_CPU, true, s_on_cpu},           // CPU [5%@1224,off,...]
    {"cpu", S_SEEN_CPU, true, s_on_cpu},           // cpu [2%,5%]@1734, L4T R24
    {"EMC_FREQ", S_SEEN_EMC, false, s_on_emc},     // EMC_FREQ 0%@1600, EMC_FREQ 0% (not root)
    {"EMC", S_SEEN_EMC, false, s_on_emc},          // EMC 0%@1600, L4T R24
    {"GR3D_FREQ", S_SEEN_GPU, false, s_on_gpu},    // GR3D_FREQ 0%@76, 39%@[305,0], @[0,0,0]
    {"GR3D", S_SEEN_GPU, false, s_on_gpu},         // GR3D 0%@998, L4T R24
    {"GR3D2_FREQ", S_SEEN_GPU2, false, s_on_gpu},  // GR3D2_FREQ 0%@0, AGX Orin on JetPack 5.0
};

static const struct s_field *s_find_field(const char *tok, const char *next)
{
    for (size_t i = 0; i < sizeof s_fields / sizeof s_fields[0]; i++) {
        const struct s_field *f = &s_fields[i];
        if (strcmp(tok, f->name) == 0 && (!f->bracket_value || (next && next[0] == '['))) {
            return f;
        }
    }
    return NULL;
}

static int s_on_field(s_line_t *l, const struct s_field *f, const char *value, jf_err_t *err)
{
    if (!value) {
        return jf_err_set(err, -EINVAL, "field '%s': missing value at the end of the line",
                          f->name);
    }
    if (l->seen & f->seen) {
        return jf_err_set(err, -EINVAL, "field '%s': appears twice in one line", f->name);
    }
    l->seen |= f->seen;
    return f->fn(l, f->name, value, err);
}

// ---------------------------------------------------------------------------------------------
// Temperatures: NAME@T C

// "T C" at text (degrees Celsius as printed) into milli-degrees; *ret_end points after the C.
static bool s_read_degrees(const char *text, int64_t *ret_mc, const char **ret_end)
{
    char num[32] = {0};
    size_t n = strspn(text, "-.0123456789");
    if (n == 0 || n >= sizeof num || text[n] != 'C') {
        return false;
    }
    memcpy(num, text, n);
    char *end = NULL;
    double c = strtod(num, &end);
    if (*end != '\0' || !isfinite(c) || c < S_TEMP_C_MIN || c > S_TEMP_C_MAX) {
        return false;
    }
    *ret_mc = (int64_t) llround(c * S_MC_PER_C);
    *ret_end = text + n + 1;
    return true;
}

// "T C", or JetPack 7's "T C/T2 C" (T2 is checked, not kept: its meaning is unconfirmed).
static bool s_read_temp(const char *text, int64_t *ret_mc)
{
    const char *end = NULL;
    int64_t second_mc = 0;
    if (!s_read_degrees(text, ret_mc, &end)) {
        return false;
    }
    if (*end == '/' && !s_read_degrees(end + 1, &second_mc, &end)) {
        return false;
    }
    return *end == '\0';
}

// The same zone printed twice must agree; an offline zone (-256C) is left out.
static int s_on_temp(s_line_t *l, const char *tok, jf_err_t *err)
{
    const char *at = strchr(tok, '@');
    char name[AGENT_TEGRASTATS_NAME_MAX + 1] = {0};
    int64_t mc = 0;
    if (!s_is_name(tok, (size_t) (at - tok)) || !s_read_temp(at + 1, &mc)) {
        return jf_err_set(err, -EINVAL, "field '%.*s': expected a temperature NAME@DEGREESC",
                          S_SHOWN_MAX, tok);
    }
    memcpy(name, tok, (size_t) (at - tok));
    if (mc == S_OFFLINE_MC) {
        return 0;
    }
    if (!l->temps) {
        l->temps = json_object();
        int rc = s_put(l->out, "temps_mc", l->temps, err);
        if (rc != 0) {
            l->temps = NULL;
            return rc;
        }
    }
    const json_t *seen = json_object_get(l->temps, name);
    if (seen) {
        return json_integer_value(seen) == mc
                   ? 0
                   : jf_err_set(err, -EINVAL, "field '%s': temperature printed twice, differing",
                                name);
    }
    return s_put(l->temps, name, json_integer(mc), err);
}

// ---------------------------------------------------------------------------------------------
// Rails: NAME cur/avg

// Boards' input rails: their power is the board's input power.
static const char *const s_input_rails[] = {"VDD_IN", "POM_5V_IN"};

// "CUR/AVG" (JetPack 4), "CURmW/AVGmW" (5, 6) or "AmW/BmW/CmW" (7).
static bool s_read_rail(const char *value, int64_t v[S_RAIL_VALUES_MAX])
{
    const char *p = value;
    size_t n = 0;
    do {
        if (n >= S_RAIL_VALUES_MAX || !s_read_int(&p, S_MW_MAX, &v[n])) {
            return false;
        }
        (void) s_skip(&p, "mW"); // the unit is optional: JetPack 4 prints none
        n++;
    } while (s_skip(&p, "/"));
    return *p == '\0' && n >= 2;
}

// True when an identical rail (AGX Orin prints `NC 0mW/0mW` twice) is already listed.
static bool s_has_rail(const json_t *rails, const char *name, const int64_t v[2])
{
    size_t i = 0;
    const json_t *r = NULL;
    json_array_foreach(rails, i, r)
    {
        if (strcmp(json_string_value(json_object_get(r, "name")), name) == 0 &&
            json_integer_value(json_object_get(r, "power_mw")) == v[0] &&
            json_integer_value(json_object_get(r, "avg_power_mw")) == v[1]) {
            return true;
        }
    }
    return false;
}

static int s_put_input_power(s_line_t *l, const char *name, int64_t power_mw, jf_err_t *err)
{
    for (size_t i = 0; i < sizeof s_input_rails / sizeof s_input_rails[0]; i++) {
        if (strcmp(name, s_input_rails[i]) == 0 && !json_object_get(l->out, "input_power_mw")) {
            return s_put(l->out, "input_power_mw", json_integer(power_mw), err);
        }
    }
    return 0;
}

static int s_on_rail(s_line_t *l, const char *name, const char *value, jf_err_t *err)
{
    int64_t v[S_RAIL_VALUES_MAX] = {0};
    if (!s_read_rail(value, v)) {
        return s_bad(err, name, "a power rail CUR/AVG or CURmW/AVGmW", value);
    }
    if (!l->rails) {
        l->rails = json_array();
        int rc = s_put(l->out, "rails", l->rails, err);
        if (rc != 0) {
            l->rails = NULL;
            return rc;
        }
    }
    if (s_has_rail(l->rails, name, v)) {
        return 0;
    }
    json_t *rail = json_pack("{s:s, s:I, s:I}", "name", name, "power_mw", (json_int_t) v[0],
                             "avg_power_mw", (json_int_t) v[1]);
    if (json_array_append_new(l->rails, rail) != 0) {
        return jf_err_set(err, -ENOMEM, "out of memory building the sample");
    }
    return s_put_input_power(l, name, v[0], err);
}

// A rail is a name followed by "digits/...": RAM, SWAP and IRAM, which look the same, are known
// fields and never get here.
static bool s_is_rail(const char *tok, const char *next)
{
    return next && s_is_digit(next[0]) && strchr(next, '/') && s_is_name(tok, strlen(tok));
}

static bool s_is_temp(const char *tok)
{
    return s_is_alpha(tok[0]) && strchr(tok, '@');
}

// ---------------------------------------------------------------------------------------------
// The line

// "MM-DD-YYYY" or "HH:MM:SS": three numbers in [lo[i], hi[i]] separated by sep.
static bool s_read_triple(const char *text, char sep, const int64_t lo[3], const int64_t hi[3],
                          int64_t ret[3])
{
    const char *p = text;
    const char sep_text[2] = {sep, '\0'};
    for (size_t i = 0; i < 3; i++) {
        if ((i > 0 && !s_skip(&p, sep_text)) || !s_read_int(&p, hi[i], &ret[i]) || ret[i] < lo[i]) {
            return false;
        }
    }
    return *p == '\0';
}

// The leading "MM-DD-YYYY HH:MM:SS" of JetPack 5 and later. tegrastats prints the board's local
// time without a zone; we read it as UTC, the only reading that needs no guess.
static int s_on_timestamp(s_line_t *l, jf_err_t *err)
{
    static const int64_t date_lo[3] = {1, 1, 1970}, date_hi[3] = {12, 31, 9999};
    static const int64_t time_lo[3] = {0, 0, 0}, time_hi[3] = {23, 59, 59};
    int64_t d[3] = {0};
    int64_t t[3] = {0};
    bool ok = l->n_tok >= 2 && s_read_triple(l->tok[0], '-', date_lo, date_hi, d) &&
              s_read_triple(l->tok[1], ':', time_lo, time_hi, t);
    struct tm tm = {.tm_year = (int) d[2] - 1900,
                    .tm_mon = (int) d[0] - 1,
                    .tm_mday = (int) d[1],
                    .tm_hour = (int) t[0],
                    .tm_min = (int) t[1],
                    .tm_sec = (int) t[2]};
    time_t s = ok ? timegm(&tm) : (time_t) -1;
    // timegm moves 02-30 to March 2: a changed day means the date does not exist.
    if (s == (time_t) -1 || tm.tm_mday != (int) d[1] || tm.tm_mon != (int) d[0] - 1) {
        return jf_err_set(err, -EINVAL,
                          "field 'timestamp': expected MM-DD-YYYY HH:MM:SS, got '%.*s%s%.*s'",
                          S_SHOWN_MAX, l->tok[0], l->n_tok >= 2 ? " " : "", S_SHOWN_MAX,
                          l->n_tok >= 2 ? l->tok[1] : "");
    }
    return s_put(l->out, "t_us", json_integer((json_int_t) s * JF_US_PER_S), err);
}

static int s_parse_tokens(s_line_t *l, size_t i, jf_err_t *err)
{
    int rc = 0;
    while (rc == 0 && i < l->n_tok) {
        const char *tok = l->tok[i];
        const char *next = i + 1 < l->n_tok ? l->tok[i + 1] : NULL;
        const struct s_field *f = s_find_field(tok, next);
        if (f) {
            rc = s_on_field(l, f, next, err);
            i += 2;
        } else if (s_is_temp(tok)) {
            rc = s_on_temp(l, tok, err);
            i += 1;
        } else if (s_is_rail(tok, next)) {
            rc = s_on_rail(l, tok, next, err);
            i += 2;
        } else {
            i += 1; // an engine or a detail we do not report: NVDEC 716, APE 150, (lfb 2x4MB) ...
        }
    }
    return rc;
}

static void s_split(s_line_t *l)
{
    for (char *p = l->buf; *p && l->n_tok < S_TOKENS_MAX;) {
        p += strspn(p, " \t\r\n");
        if (!*p) {
            break;
        }
        l->tok[l->n_tok++] = p;
        p += strcspn(p, " \t\r\n");
        if (*p) {
            *p++ = '\0';
        }
    }
}

static int s_parse(s_line_t *l, jf_err_t *err)
{
    size_t first = 0;
    int rc = 0;
    if (l->n_tok > 0 && s_is_digit(l->tok[0][0])) {
        rc = s_on_timestamp(l, err);
        first = 2;
    }
    rc = rc ? rc : s_put(l->out, "source", json_string("tegrastats"), err);
    rc = rc ? rc : s_parse_tokens(l, first, err);
    rc = rc ? rc : s_put_gpu(l, err);
    if (rc == 0 && !(l->seen & S_SEEN_RAM)) {
        rc = jf_err_set(err, -EINVAL,
                        "field 'RAM': missing; every tegrastats line has 'RAM USED/TOTALMB'");
    }
    return rc;
}

int agent_tegrastats_parse_line(const char *line, json_t *sample, jf_err_t *err)
{
    assert(line && sample);
    size_t len = strnlen(line, AGENT_TEGRASTATS_LINE_MAX + 1);
    if (len > AGENT_TEGRASTATS_LINE_MAX) {
        return jf_err_set(err, -EINVAL, "line is longer than %d bytes", AGENT_TEGRASTATS_LINE_MAX);
    }
    s_line_t l = {.n_tok = 0};
    memcpy(l.buf, line, len);
    s_split(&l);
    l.out = json_object();
    int rc = l.out ? s_parse(&l, err) : jf_err_set(err, -ENOMEM, "out of memory");
    if (rc == 0 && json_object_update(sample, l.out) != 0) {
        rc = jf_err_set(err, -ENOMEM, "out of memory building the sample");
    }
    json_decref(l.out);
    return rc;
}
