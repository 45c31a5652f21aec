/* The saved-state text: a version line, then one "<keyword> <numbers>" line per item. The helper
 * wrote it into a root-only directory, and parses it back as strictly as a request anyway. */
#include "privhelper_state.h"

#include "jf_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define S_VERSION  "jetfleet-privhelper-state 1"
#define S_NUMS_MAX 3

typedef enum s_key {
    S_ONLINE = 0,
    S_POLICY,
    S_GPU,
    S_RAILGATE,
    S_EMC_CAP,
    S_EMC_LOCK,
    S_IDLE,
    S_PMODE,
    S_KEY_COUNT,
} s_key_t;

typedef struct s_line_spec {
    const char *word;
    size_t n;
    int64_t max[S_NUMS_MAX]; // every number is in 0..max
} s_line_spec_t;

static const s_line_spec_t s_specs[S_KEY_COUNT] = {
    [S_ONLINE] = {"online", 2, {PRIVHELPER_CPUS_MAX - 1, 1, 0}},
    [S_POLICY] = {"policy", 3, {PRIVHELPER_CPUS_MAX - 1, PRIVHELPER_KHZ_MAX, PRIVHELPER_KHZ_MAX}},
    [S_GPU] = {"gpu", 2, {PRIVHELPER_HZ_MAX, PRIVHELPER_HZ_MAX, 0}},
    [S_RAILGATE] = {"railgate", 1, {1, 0, 0}},
    [S_EMC_CAP] = {"emc-cap", 1, {PRIVHELPER_HZ_MAX, 0, 0}},
    [S_EMC_LOCK] = {"emc-lock", 2, {1, PRIVHELPER_HZ_MAX, 0}},
    [S_IDLE] = {"idle", 3, {PRIVHELPER_CPUS_MAX - 1, PRIVHELPER_IDLE_STATES_MAX - 1, 1}},
    [S_PMODE] = {"pmode", 1, {PRIVHELPER_MODE_MAX, 0, 0}},
};

typedef struct s_out {
    char *buf;
    size_t size;
    size_t len;
    bool full;
} s_out_t;

__attribute__((format(printf, 2, 3))) static void s_put(s_out_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t) n >= o->size - o->len) {
        o->full = true;
        return;
    }
    o->len += (size_t) n;
}

int privhelper_state_format(const privhelper_state_t *st, char *buf, size_t size, size_t *ret_len,
                            jf_err_t *err)
{
    s_out_t o = {.buf = buf, .size = size};
    s_put(&o, "%s\n", S_VERSION);
    if (st->has_pmode) {
        s_put(&o, "pmode %d\n", st->pmode);
    }
    for (int cpu = 1; cpu < PRIVHELPER_CPUS_MAX && !o.full; cpu++) {
        if (st->online_known & (UINT64_C(1) << cpu)) {
            s_put(&o, "online %d %d\n", cpu, (int) ((st->online >> cpu) & 1));
        }
    }
    for (size_t i = 0; i < st->n_policies && !o.full; i++) {
        const privhelper_policy_t *p = &st->policies[i];
        s_put(&o, "policy %d %lld %lld\n", p->cpu, (long long) p->min_khz, (long long) p->max_khz);
    }
    if (st->has_gpu) {
        s_put(&o, "gpu %lld %lld\n", (long long) st->gpu_min_hz, (long long) st->gpu_max_hz);
    }
    if (st->has_railgate) {
        s_put(&o, "railgate %d\n", st->railgate);
    }
    if (st->has_emc_cap) {
        s_put(&o, "emc-cap %lld\n", (long long) st->emc_cap_hz);
    }
    if (st->has_emc_lock) {
        s_put(&o, "emc-lock %d %lld\n", st->emc_locked, (long long) st->emc_rate_hz);
    }
    for (size_t i = 0; i < st->n_idle && !o.full; i++) {
        s_put(&o, "idle %d %d %d\n", st->idle[i].cpu, st->idle[i].state, st->idle[i].disable);
    }
    if (o.full) {
        return jf_err_set(err, -ENOSPC, "the saved state does not fit in %zu bytes", size);
    }
    *ret_len = o.len;
    return 0;
}

// Splits a line at single spaces into the keyword and its numbers.
static int s_numbers(char *line, int lineno, const s_line_spec_t **ret_spec, int64_t *nums,
                     jf_err_t *err)
{
    char *tok[S_NUMS_MAX + 2] = {0};
    size_t n = 0;
    for (char *s = line; s && n < S_NUMS_MAX + 2; n++) {
        tok[n] = s;
        s = strchr(s, ' ');
        if (s) {
            *s++ = '\0';
        }
    }
    size_t k = 0;
    while (k < S_KEY_COUNT && strcmp(tok[0], s_specs[k].word) != 0) {
        k++;
    }
    if (k == S_KEY_COUNT || n != s_specs[k].n + 1) {
        return jf_err_set(err, -EINVAL, "state:%d: unknown line '%.32s' or wrong field count",
                          lineno, tok[0]);
    }
    for (size_t i = 0; i < s_specs[k].n; i++) {
        bool canonical = tok[i + 1][0] != '0' || tok[i + 1][1] == '\0';
        if (!canonical || strspn(tok[i + 1], "0123456789") != strlen(tok[i + 1]) ||
            jf_parse_i64(tok[i + 1], 0, s_specs[k].max[i], &nums[i], NULL) != 0) {
            return jf_err_set(err, -EINVAL, "state:%d: bad number '%.32s'", lineno, tok[i + 1]);
        }
    }
    *ret_spec = &s_specs[k];
    return 0;
}

static int s_apply(privhelper_state_t *st, s_key_t key, const int64_t *v, int lineno, jf_err_t *err)
{
    bool dup = false;
    switch (key) {
    case S_ONLINE:
        dup = v[0] == 0 || (st->online_known & (UINT64_C(1) << v[0]));
        st->online_known |= UINT64_C(1) << v[0];
        st->online |= (uint64_t) v[1] << v[0];
        break;
    case S_POLICY:
        dup = st->n_policies == PRIVHELPER_CPUS_MAX;
        st->policies[dup ? 0 : st->n_policies++] = (privhelper_policy_t){(int) v[0], v[1], v[2]};
        break;
    case S_GPU:
        dup = st->has_gpu;
        st->has_gpu = true;
        st->gpu_min_hz = v[0];
        st->gpu_max_hz = v[1];
        break;
    case S_RAILGATE:
        dup = st->has_railgate;
        st->has_railgate = true;
        st->railgate = (int) v[0];
        break;
    case S_EMC_CAP:
        dup = st->has_emc_cap;
        st->has_emc_cap = true;
        st->emc_cap_hz = v[0];
        break;
    case S_EMC_LOCK:
        dup = st->has_emc_lock;
        st->has_emc_lock = true;
        st->emc_locked = (int) v[0];
        st->emc_rate_hz = v[1];
        break;
    case S_IDLE:
        dup = st->n_idle == PRIVHELPER_STATE_IDLE_MAX;
        st->idle[dup ? 0 : st->n_idle++] = (privhelper_idle_t){(int) v[0], (int) v[1], (int) v[2]};
        break;
    case S_PMODE:
        dup = st->has_pmode;
        st->has_pmode = true;
        st->pmode = (int) v[0];
        break;
    case S_KEY_COUNT:
        break;
    }
    return dup ? jf_err_set(err, -EINVAL, "state:%d: repeated item, cpu0 or too many items", lineno)
               : 0;
}

int privhelper_state_parse(const char *text, size_t len, privhelper_state_t *ret_st, jf_err_t *err)
{
    memset(ret_st, 0, sizeof *ret_st);
    size_t vlen = sizeof S_VERSION - 1;
    if (len <= vlen || memcmp(text, S_VERSION "\n", vlen + 1) != 0 || memchr(text, '\0', len)) {
        return jf_err_set(err, -EINVAL, "state:1: not a '%s' file", S_VERSION);
    }
    char line[128];
    int lineno = 1;
    for (size_t pos = vlen + 1; pos < len; lineno++) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t) (nl - (text + pos)) : len - pos;
        if (!nl || n == 0 || n >= sizeof line) {
            return jf_err_set(err, -EINVAL, "state:%d: empty, unterminated or long line",
                              lineno + 1);
        }
        memcpy(line, text + pos, n);
        line[n] = '\0';
        pos += n + 1;
        const s_line_spec_t *spec = NULL;
        int64_t v[S_NUMS_MAX] = {0};
        int rc = s_numbers(line, lineno + 1, &spec, v, err);
        rc = rc != 0 ? rc : s_apply(ret_st, (s_key_t) (spec - s_specs), v, lineno + 1, err);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}
