/* The helper's request language as one table: verb words, argument names and ranges. Every
 * check here is on the bytes alone; nothing is read from the system. */
#include "privhelper_request.h"

#include "jf_parse.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define S_TOKENS_MAX (PRIVHELPER_ARGS_MAX + 2) // two verb words and the arguments
#define S_DIGITS_MAX 12                        // the longest number any range allows

typedef struct s_arg {
    const char *name; // as in the syntax and in messages: "cpu", "khz"
    int64_t min;
    int64_t max;
} s_arg_t;

typedef struct s_verb {
    const char *word;   // first token
    const char *word2;  // second token, or NULL
    const char *syntax; // for messages
    size_t n_args;
    s_arg_t args[PRIVHELPER_ARGS_MAX];
} s_verb_t;

// Indexed by privhelper_verb_t.
static const s_verb_t s_verbs[PRIVHELPER_VERB_COUNT] = {
    [PRIVHELPER_NVPMODEL] =
        {"nvpmodel", NULL, "nvpmodel <mode>", 1, {{"mode", 0, PRIVHELPER_MODE_MAX}}},
    [PRIVHELPER_CPU_ONLINE] = {"cpu-online",
                               NULL,
                               "cpu-online <cpu> <0|1>",
                               2,
                               {{"cpu", 0, PRIVHELPER_CPUS_MAX - 1}, {"online", 0, 1}}},
    [PRIVHELPER_CPU_FREQ] = {"cpu-freq",
                             NULL,
                             "cpu-freq <cpu> <khz>",
                             2,
                             {{"cpu", 0, PRIVHELPER_CPUS_MAX - 1}, {"khz", 1, PRIVHELPER_KHZ_MAX}}},
    [PRIVHELPER_GPU_FREQ] = {"gpu-freq", NULL, "gpu-freq <hz>", 1, {{"hz", 1, PRIVHELPER_HZ_MAX}}},
    [PRIVHELPER_EMC_FREQ] = {"emc-freq", NULL, "emc-freq <hz>", 1, {{"hz", 1, PRIVHELPER_HZ_MAX}}},
    [PRIVHELPER_DVFS_OFF] = {"dvfs", "off", "dvfs off", 0, {{NULL, 0, 0}}},
    [PRIVHELPER_DVFS_RESTORE] = {"dvfs", "restore", "dvfs restore", 0, {{NULL, 0, 0}}},
    [PRIVHELPER_CLOCKS_STORE] = {"clocks-store", NULL, "clocks-store", 0, {{NULL, 0, 0}}},
    [PRIVHELPER_RESTORE] =
        {"restore", NULL, "restore <state>", 1, {{"state", 1, PRIVHELPER_STATES_MAX}}},
    [PRIVHELPER_DROP_CACHES] = {"drop-caches", NULL, "drop-caches", 0, {{NULL, 0, 0}}},
};

const char *privhelper_verb_syntax(privhelper_verb_t verb)
{
    return (unsigned) verb < PRIVHELPER_VERB_COUNT ? s_verbs[verb].syntax : "?";
}

// Checks the bytes of one line (without its newline): a path gets its own message because it is
// the attack this language exists to refuse.
static int s_check_bytes(const char *line, size_t len, jf_err_t *err)
{
    if (len == 0) {
        return jf_err_set(err, -EINVAL, "empty request");
    }
    if (memchr(line, '/', len)) {
        return jf_err_set(err, -EINVAL, "a path is not allowed in a request");
    }
    for (size_t i = 0; i < len; i++) {
        char c = line[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == ' ';
        if (!ok) {
            return jf_err_set(err, -EINVAL,
                              "byte 0x%02x at offset %zu is not allowed (only a-z, 0-9, '-' and "
                              "single spaces)",
                              (unsigned) (unsigned char) c, i);
        }
    }
    if (line[0] == ' ' || line[len - 1] == ' ' || memmem(line, len, "  ", 2)) {
        return jf_err_set(err, -EINVAL, "fields must be separated by single spaces");
    }
    return 0;
}

// The line without its newline into out (PRIVHELPER_LINE_MAX bytes), NUL-terminated.
static int s_one_line(const char *buf, size_t len, char *out, jf_err_t *err)
{
    if (len > PRIVHELPER_LINE_MAX) {
        return jf_err_set(err, -EINVAL, "request longer than %d bytes", PRIVHELPER_LINE_MAX);
    }
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        return jf_err_set(err, -EINVAL, "NUL byte at offset %zu", (size_t) (nul - buf));
    }
    const char *nl = memchr(buf, '\n', len);
    if (nl && nl != buf + len - 1) {
        return jf_err_set(err, -EINVAL, "bytes after the request line (one request per call)");
    }
    size_t n = nl ? len - 1 : len;
    int rc = s_check_bytes(buf, n, err);
    if (rc == 0) {
        memcpy(out, buf, n);
        out[n] = '\0';
    }
    return rc;
}

static size_t s_split(char *line, char **toks)
{
    size_t n = 0;
    for (char *s = line; s; n++) {
        if (n == S_TOKENS_MAX) {
            return S_TOKENS_MAX + 1;
        }
        toks[n] = s;
        s = strchr(s, ' ');
        if (s) {
            *s++ = '\0';
        }
    }
    return n;
}

static const s_verb_t *s_match(char **toks, size_t n, jf_err_t *err)
{
    bool known = false;
    for (size_t v = 0; v < PRIVHELPER_VERB_COUNT; v++) {
        const s_verb_t *sv = &s_verbs[v];
        if (strcmp(toks[0], sv->word) != 0) {
            continue;
        }
        known = true;
        if (!sv->word2 || (n > 1 && strcmp(toks[1], sv->word2) == 0)) {
            return sv;
        }
    }
    if (known) {
        jf_err_set(err, -EINVAL, "'%s' must be followed by 'off' or 'restore'", toks[0]);
    } else {
        jf_err_set(err, -EINVAL, "unknown verb '%.32s'", toks[0]);
    }
    return NULL;
}

// A canonical decimal: digits only, no sign, no leading zero, no hex.
static int s_number(const s_arg_t *a, const char *tok, int64_t *ret, jf_err_t *err)
{
    size_t n = strlen(tok);
    if (n == 0 || n > S_DIGITS_MAX || strspn(tok, "0123456789") != n || (n > 1 && tok[0] == '0')) {
        return jf_err_set(err, -EINVAL,
                          "%s '%.32s' is not a decimal number (no sign, leading zero or hex)",
                          a->name, tok);
    }
    if (jf_parse_i64(tok, a->min, a->max, ret, NULL) != 0) {
        return jf_err_set(err, -EINVAL, "%s %s is out of range %lld..%lld", a->name, tok,
                          (long long) a->min, (long long) a->max);
    }
    return 0;
}

static int s_args(const s_verb_t *sv, char **toks, size_t n, privhelper_request_t *req,
                  jf_err_t *err)
{
    size_t first = sv->word2 ? 2 : 1;
    if (n != first + sv->n_args) {
        return jf_err_set(err, -EINVAL, "'%s' takes %zu argument%s, got %zu", sv->syntax,
                          sv->n_args, sv->n_args == 1 ? "" : "s", n > first ? n - first : 0);
    }
    for (size_t i = 0; i < sv->n_args; i++) {
        int rc = s_number(&sv->args[i], toks[first + i], &req->args[i], err);
        if (rc != 0) {
            return rc;
        }
    }
    req->n_args = sv->n_args;
    req->verb = (privhelper_verb_t) (sv - s_verbs);
    if (req->verb == PRIVHELPER_CPU_ONLINE && req->args[0] == 0) {
        return jf_err_set(err, -EINVAL, "cpu0 is always online and cannot be switched");
    }
    return 0;
}

int privhelper_request_parse(const char *buf, size_t len, privhelper_request_t *ret_req,
                             jf_err_t *err)
{
    char line[PRIVHELPER_LINE_MAX + 1];
    int rc = s_one_line(buf, len, line, err);
    if (rc != 0) {
        return rc;
    }
    char *toks[S_TOKENS_MAX];
    size_t n = s_split(line, toks);
    if (n > S_TOKENS_MAX) {
        return jf_err_set(err, -EINVAL, "too many fields (at most %d)", S_TOKENS_MAX);
    }
    const s_verb_t *sv = s_match(toks, n, err);
    if (!sv) {
        return -EINVAL;
    }
    privhelper_request_t req = {0};
    rc = s_args(sv, toks, n, &req, err);
    if (rc == 0) {
        *ret_req = req;
    }
    return rc;
}

int privhelper_request_format(const privhelper_request_t *req, char *buf, size_t size,
                              jf_err_t *err)
{
    if ((unsigned) req->verb >= PRIVHELPER_VERB_COUNT || req->n_args > PRIVHELPER_ARGS_MAX) {
        return jf_err_set(err, -EINVAL, "not a request verb");
    }
    const s_verb_t *sv = &s_verbs[req->verb];
    char line[PRIVHELPER_LINE_MAX + 1];
    int n = snprintf(line, sizeof line, "%s%s%s", sv->word, sv->word2 ? " " : "",
                     sv->word2 ? sv->word2 : "");
    for (size_t i = 0; i < req->n_args && n > 0 && (size_t) n < sizeof line; i++) {
        n += snprintf(line + n, sizeof line - (size_t) n, " %lld", (long long) req->args[i]);
    }
    if (n < 0 || (size_t) n >= sizeof line || (size_t) n >= size) {
        return jf_err_set(err, -ENAMETOOLONG, "request '%s' does not fit", sv->syntax);
    }
    privhelper_request_t back = {0};
    int rc = privhelper_request_parse(line, (size_t) n, &back, err);
    if (rc == 0 && (back.verb != req->verb || back.n_args != req->n_args ||
                    memcmp(back.args, req->args, req->n_args * sizeof req->args[0]) != 0)) {
        rc = jf_err_set(err, -EINVAL, "'%s' has the wrong number of arguments", sv->syntax);
    }
    if (rc == 0) {
        memcpy(buf, line, (size_t) n + 1);
    }
    return rc;
}
