/* nvpmodel conf parser (jetson-platforms.md §4.2). One pass over the lines: a `< ... >` header
 * opens a section and the lines below it belong to that section (agent_nvpmodel_lines.c). The
 * cross-checks that need the whole file (a default that names a mode) run at the end. */
#include "agent_nvpmodel_internal.h"

#include "jf_parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*s_header_fn)(agent_nvpmodel_parser_t *p, char **toks, size_t n);

int agent_nvpmodel_fail(agent_nvpmodel_parser_t *p, const char *fmt, ...)
{
    char msg[JF_ERR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(msg, sizeof msg, fmt, ap); // truncation is acceptable in a message
    va_end(ap);
    return jf_err_set(p->err, -EINVAL, "%s:%d: %s", p->name, p->line, msg);
}

// Splits line in place at blanks into at most max tokens. Returns the count, or max + 1 when
// there are more.
static size_t s_split(char *line, char **toks, size_t max)
{
    size_t n = 0;
    char *s = line;
    for (;;) {
        s += strspn(s, " \t");
        if (*s == '\0') {
            return n;
        }
        if (n == max) {
            return max + 1;
        }
        toks[n++] = s;
        s += strcspn(s, " \t");
        if (*s != '\0') {
            *s++ = '\0';
        }
    }
}

// Strips leading and trailing blanks (and a CR left by CRLF line ends) in place.
static char *s_trim(char *line)
{
    char *s = line + strspn(line, " \t");
    size_t n = strlen(s);
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) {
        s[--n] = '\0';
    }
    return s;
}

// True if every byte of s is printable ASCII or a tab.
static bool s_is_clean(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char) *s;
        if ((c < 0x20 && c != '\t') || c >= 0x7f) {
            return false;
        }
    }
    return true;
}

bool agent_nvpmodel_is_name(const char *s, size_t max)
{
    size_t n = strlen(s);
    return n > 0 && n <= max &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

// A decimal integer token in [min, max]: an optional '-' and digits only (no '+', blanks or hex).
bool agent_nvpmodel_is_int(const char *tok, int64_t min, int64_t max, int64_t *ret)
{
    const char *d = tok[0] == '-' ? tok + 1 : tok;
    if (*d == '\0' || strspn(d, "0123456789") != strlen(d)) {
        return false;
    }
    return jf_parse_i64(tok, min, max, ret, NULL) == 0;
}

size_t agent_nvpmodel_index(const char *word, const char *const *words, size_t n)
{
    size_t i = 0;
    while (i < n && strcmp(word, words[i]) != 0) {
        i++;
    }
    return i;
}

int agent_nvpmodel_find_param(const agent_nvpmodel_t *conf, const char *name)
{
    for (size_t i = 0; i < conf->n_params; i++) {
        if (strcmp(conf->params[i].name, name) == 0) {
            return (int) i;
        }
    }
    return -1;
}

int agent_nvpmodel_find_arg(const agent_nvpmodel_param_t *par, const char *name)
{
    for (size_t i = 0; i < par->n_args; i++) {
        if (strcmp(par->args[i].name, name) == 0) {
            return (int) i;
        }
    }
    return -1;
}

static const agent_nvpmodel_mode_t *s_find_mode_name(const agent_nvpmodel_t *conf, const char *name)
{
    for (size_t i = 0; i < conf->n_modes; i++) {
        if (strcmp(conf->modes[i].name, name) == 0) {
            return &conf->modes[i];
        }
    }
    return NULL;
}

// Fills vals[i] with the value of keys[i] from KEY=VALUE tokens; each key exactly once and no
// other key.
static int s_keys(agent_nvpmodel_parser_t *p, char **toks, size_t n, const char *const *keys,
                  const char **vals, size_t n_keys)
{
    for (size_t i = 0; i < n_keys; i++) {
        vals[i] = NULL;
    }
    for (size_t t = 0; t < n; t++) {
        char *eq = strchr(toks[t], '=');
        if (!eq) {
            return agent_nvpmodel_fail(p, "expected KEY=VALUE in the header, got '%.40s'", toks[t]);
        }
        *eq = '\0';
        size_t k = agent_nvpmodel_index(toks[t], keys, n_keys);
        if (k == n_keys) {
            return agent_nvpmodel_fail(p, "unknown key '%.40s' in the header", toks[t]);
        }
        if (vals[k] || eq[1] == '\0') {
            return agent_nvpmodel_fail(p, "key %s is given twice or has no value", keys[k]);
        }
        vals[k] = eq + 1;
    }
    for (size_t i = 0; i < n_keys; i++) {
        if (!vals[i]) {
            return agent_nvpmodel_fail(p, "the header has no %s=", keys[i]);
        }
    }
    return 0;
}

static int s_header_param(agent_nvpmodel_parser_t *p, char **toks, size_t n)
{
    static const char *const keys[] = {"TYPE", "NAME"};
    static const char *const types[] = {"FILE", "CLOCK", "HWMON"}; // agent_nvpmodel_param_type_t
    const char *v[2];
    int rc = s_keys(p, toks, n, keys, v, 2);
    if (rc != 0) {
        return rc;
    }
    size_t type = agent_nvpmodel_index(v[0], types, 3);
    if (type == 3) {
        return agent_nvpmodel_fail(p, "unknown PARAM TYPE '%.40s' (expected FILE, CLOCK or HWMON)",
                                   v[0]);
    }
    if (!agent_nvpmodel_is_name(v[1], AGENT_NVPMODEL_NAME_MAX) ||
        agent_nvpmodel_find_param(p->conf, v[1]) >= 0) {
        return agent_nvpmodel_fail(
            p, "PARAM NAME '%.40s' is not 1..%d of [A-Za-z0-9_] or is defined twice", v[1],
            AGENT_NVPMODEL_NAME_MAX);
    }
    if (p->conf->n_params == AGENT_NVPMODEL_PARAMS_MAX) {
        return agent_nvpmodel_fail(p, "more than %d PARAM definitions", AGENT_NVPMODEL_PARAMS_MAX);
    }
    agent_nvpmodel_param_t *par = &p->conf->params[p->conf->n_params++];
    *par = (agent_nvpmodel_param_t){.type = (agent_nvpmodel_param_type_t) type,
                                    .kind = AGENT_NVPMODEL_CLOCK_ENGINE,
                                    .first_core = -1,
                                    .unit_hz = 1,
                                    .line = p->line};
    (void) snprintf(par->name, sizeof par->name, "%s", v[1]); // length checked above
    if (par->type == AGENT_NVPMODEL_CLOCK && strcmp(par->name, "GPU") == 0) {
        par->kind = AGENT_NVPMODEL_CLOCK_GPU;
    } else if (par->type == AGENT_NVPMODEL_CLOCK && strcmp(par->name, "EMC") == 0) {
        par->kind = AGENT_NVPMODEL_CLOCK_EMC;
    }
    p->section = AGENT_NVPMODEL_SECTION_PARAM;
    return 0;
}

static int s_header_mode(agent_nvpmodel_parser_t *p, char **toks, size_t n)
{
    static const char *const keys[] = {"ID", "NAME"};
    const char *v[2];
    int64_t id = 0;
    int rc = s_keys(p, toks, n, keys, v, 2);
    if (rc != 0) {
        return rc;
    }
    if (!agent_nvpmodel_is_int(v[0], 0, AGENT_NVPMODEL_ID_MAX, &id)) {
        return agent_nvpmodel_fail(p, "POWER_MODEL ID must be an integer in 0..%d, got '%.40s'",
                                   AGENT_NVPMODEL_ID_MAX, v[0]);
    }
    if (!jf_board_is_mode_name(v[1])) {
        return agent_nvpmodel_fail(p, "POWER_MODEL NAME '%.40s' is not 1..%d of [A-Za-z0-9_]", v[1],
                                   JF_POWER_MODE_NAME_MAX);
    }
    const agent_nvpmodel_mode_t *dup = agent_nvpmodel_mode(p->conf, (int) id);
    dup = dup ? dup : s_find_mode_name(p->conf, v[1]);
    if (dup) {
        return agent_nvpmodel_fail(p, "POWER_MODEL ID=%d NAME=%s repeats the id or name of line %d",
                                   (int) id, v[1], dup->line);
    }
    if (p->conf->n_modes == AGENT_NVPMODEL_MODES_MAX) {
        return agent_nvpmodel_fail(p, "more than %d POWER_MODEL sections",
                                   AGENT_NVPMODEL_MODES_MAX);
    }
    agent_nvpmodel_mode_t *m = &p->conf->modes[p->conf->n_modes++];
    memset(m, 0, sizeof *m);
    m->id = (int) id;
    m->line = p->line;
    (void) snprintf(m->name, sizeof m->name, "%s", v[1]); // length checked above
    p->section = AGENT_NVPMODEL_SECTION_MODE;
    return 0;
}

static int s_header_config(agent_nvpmodel_parser_t *p, char **toks, size_t n)
{
    static const char *const keys[] = {"DEFAULT"};
    const char *v[1];
    int64_t id = 0;
    int rc = s_keys(p, toks, n, keys, v, 1);
    if (rc != 0) {
        return rc;
    }
    if (p->conf->default_line != 0) {
        return agent_nvpmodel_fail(p, "PM_CONFIG given twice (first at line %d)",
                                   p->conf->default_line);
    }
    if (!agent_nvpmodel_is_int(v[0], 0, AGENT_NVPMODEL_ID_MAX, &id)) {
        return agent_nvpmodel_fail(p, "PM_CONFIG DEFAULT must be an integer in 0..%d, got '%.40s'",
                                   AGENT_NVPMODEL_ID_MAX, v[0]);
    }
    p->conf->default_id = (int) id;
    p->conf->default_line = p->line;
    p->section = AGENT_NVPMODEL_SECTION_CONFIG;
    return 0;
}

// "< KIND KEY=VALUE ... >", blanks inside the brackets optional: NVIDIA's own files have both
// "< PARAM" and "<PARAM" (nvpmodel_p3767_0003.conf).
static int s_header(agent_nvpmodel_parser_t *p, char *line)
{
    static const char *const kinds[] = {"PARAM", "POWER_MODEL", "PM_CONFIG"};
    static const s_header_fn fns[] = {s_header_param, s_header_mode, s_header_config};
    size_t len = strlen(line);
    if (len < 2 || line[len - 1] != '>') {
        return agent_nvpmodel_fail(p, "a section header must end with '>' and nothing after it");
    }
    line[len - 1] = '\0';
    char *toks[AGENT_NVPMODEL_TOKENS_MAX];
    size_t n = s_split(line + 1, toks, AGENT_NVPMODEL_TOKENS_MAX);
    if (n == 0 || n > AGENT_NVPMODEL_TOKENS_MAX) {
        return agent_nvpmodel_fail(p,
                                   "a section header needs a kind and at most %d KEY=VALUE fields",
                                   AGENT_NVPMODEL_TOKENS_MAX - 1);
    }
    size_t k = agent_nvpmodel_index(toks[0], kinds, 3);
    if (k < 3) {
        return fns[k](p, toks + 1, n - 1);
    }
    if (strcmp(toks[0], "PM_STATUS") == 0) {
        return agent_nvpmodel_fail(p, "the legacy PM_STATUS format (L4T 27/28) is not supported");
    }
    return agent_nvpmodel_fail(
        p, "unknown section '%.40s' (expected PARAM, POWER_MODEL or PM_CONFIG)", toks[0]);
}

static int s_line(agent_nvpmodel_parser_t *p, char *line)
{
    char *s = s_trim(line);
    if (*s == '\0' || *s == '#') {
        return 0;
    }
    if (!s_is_clean(s)) {
        return agent_nvpmodel_fail(p, "control or non-ASCII byte outside a comment");
    }
    if (*s == '<') {
        return s_header(p, s);
    }
    char *toks[AGENT_NVPMODEL_TOKENS_MAX];
    size_t n = s_split(s, toks, AGENT_NVPMODEL_TOKENS_MAX);
    switch (p->section) {
    case AGENT_NVPMODEL_SECTION_PARAM:
        return agent_nvpmodel_param_line(p, toks, n);
    case AGENT_NVPMODEL_SECTION_MODE:
        return agent_nvpmodel_mode_line(p, toks, n);
    case AGENT_NVPMODEL_SECTION_CONFIG:
        return agent_nvpmodel_fail(p, "PM_CONFIG takes no lines after its header");
    case AGENT_NVPMODEL_SECTION_NONE:
        break;
    }
    return agent_nvpmodel_fail(p, "line outside a section (expected a '< ... >' header first)");
}

static int s_lines(agent_nvpmodel_parser_t *p, const char *text, size_t len)
{
    char line[AGENT_NVPMODEL_LINE_MAX + 1];
    size_t pos = 0;
    while (pos < len) {
        p->line++;
        const char *start = text + pos;
        const char *nl = memchr(start, '\n', len - pos);
        size_t n = nl ? (size_t) (nl - start) : len - pos;
        pos += n + (nl != NULL);
        if (memchr(start, '\0', n)) {
            return agent_nvpmodel_fail(p, "NUL byte");
        }
        if (n > AGENT_NVPMODEL_LINE_MAX) {
            return agent_nvpmodel_fail(p, "line longer than %d bytes", AGENT_NVPMODEL_LINE_MAX);
        }
        memcpy(line, start, n);
        line[n] = '\0';
        int rc = s_line(p, line);
        if (rc != 0) {
            return rc;
        }
    }
    return 0;
}

static int s_finish(agent_nvpmodel_parser_t *p)
{
    if (p->conf->n_modes == 0) {
        return jf_err_set(p->err, -EINVAL, "%s: no POWER_MODEL section (one is required)", p->name);
    }
    if (p->conf->default_line == 0) {
        return jf_err_set(p->err, -EINVAL, "%s: no '< PM_CONFIG DEFAULT=n >' section", p->name);
    }
    if (!agent_nvpmodel_mode(p->conf, p->conf->default_id)) {
        p->line = p->conf->default_line;
        return agent_nvpmodel_fail(p, "PM_CONFIG DEFAULT=%d names no POWER_MODEL",
                                   p->conf->default_id);
    }
    return 0;
}

agent_nvpmodel_t *agent_nvpmodel_parse(const char *text, size_t len, const char *name,
                                       jf_err_t *err)
{
    agent_nvpmodel_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    agent_nvpmodel_parser_t p = {.conf = self, .name = name, .err = err};
    int rc = 0;
    if (len > AGENT_NVPMODEL_FILE_MAX) {
        rc = jf_err_set(err, -EFBIG, "%s: larger than %d bytes", name, AGENT_NVPMODEL_FILE_MAX);
    }
    rc = rc != 0 ? rc : s_lines(&p, text, len);
    rc = rc != 0 ? rc : s_finish(&p);
    if (rc != 0) {
        agent_nvpmodel_destroy(&self);
    }
    return self;
}

agent_nvpmodel_t *agent_nvpmodel_load(const char *path, jf_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int e = errno;
        jf_err_set(err, -e, "%s: cannot open: %s", path, strerror(e));
        return NULL;
    }
    char *buf = malloc(AGENT_NVPMODEL_FILE_MAX + 1);
    size_t n = buf ? fread(buf, 1, AGENT_NVPMODEL_FILE_MAX + 1, f) : 0;
    bool failed = !buf || ferror(f);
    (void) fclose(f); // read-only: nothing to lose
    agent_nvpmodel_t *self = NULL;
    if (failed) {
        jf_err_set(err, buf ? -EIO : -ENOMEM, "%s: cannot read", path);
    } else {
        self = agent_nvpmodel_parse(buf, n, path, err);
    }
    free(buf);
    return self;
}

void agent_nvpmodel_destroy(agent_nvpmodel_t **self_p)
{
    if (self_p && *self_p) {
        free(*self_p);
        *self_p = NULL;
    }
}

int agent_nvpmodel_default_id(const agent_nvpmodel_t *self)
{
    return self->default_id;
}

size_t agent_nvpmodel_n_modes(const agent_nvpmodel_t *self)
{
    return self->n_modes;
}

const agent_nvpmodel_mode_t *agent_nvpmodel_mode_at(const agent_nvpmodel_t *self, size_t i)
{
    return i < self->n_modes ? &self->modes[i] : NULL;
}

const agent_nvpmodel_mode_t *agent_nvpmodel_mode(const agent_nvpmodel_t *self, int id)
{
    for (size_t i = 0; i < self->n_modes; i++) {
        if (self->modes[i].id == id) {
            return &self->modes[i];
        }
    }
    return NULL;
}

size_t agent_nvpmodel_n_params(const agent_nvpmodel_t *self)
{
    return self->n_params;
}

const agent_nvpmodel_param_t *agent_nvpmodel_param_at(const agent_nvpmodel_t *self, size_t i)
{
    return i < self->n_params ? &self->params[i] : NULL;
}

const agent_nvpmodel_clock_t *agent_nvpmodel_mode_clock(const agent_nvpmodel_mode_t *mode,
                                                        agent_nvpmodel_clock_kind_t kind,
                                                        int first_core)
{
    for (size_t i = 0; i < mode->n_clocks; i++) {
        const agent_nvpmodel_clock_t *c = &mode->clocks[i];
        if (c->kind == kind && (kind != AGENT_NVPMODEL_CLOCK_CPU || c->first_core == first_core)) {
            return c;
        }
    }
    return NULL;
}

int agent_nvpmodel_mode_n_online(const agent_nvpmodel_mode_t *mode)
{
    return __builtin_popcountll(mode->online_mask);
}

const char *agent_nvpmodel_clock_kind_name(agent_nvpmodel_clock_kind_t kind)
{
    static const char *const names[] = {"cpu", "gpu", "emc", "engine"};
    return (unsigned) kind < 4 ? names[kind] : "?";
}

int agent_nvpmodel_parse_status(const char *text, size_t len, int *ret_id, jf_err_t *err)
{
    static const char prefix[] = "pmode:";
    size_t plen = sizeof prefix - 1;
    size_t digits = 0;
    while (plen + digits < len && text[plen + digits] >= '0' && text[plen + digits] <= '9') {
        digits++;
    }
    size_t end = plen + digits;
    bool ends = end >= len || text[end] == ' ' || text[end] == '\n'; // never read past len
    char num[8] = "";
    int64_t id = 0;
    if (len < plen || memcmp(text, prefix, plen) != 0 || digits == 0 || digits >= sizeof num ||
        !ends || memchr(text, '\0', len)) {
        char shown[41];
        size_t n = len < sizeof shown - 1 ? len : sizeof shown - 1;
        for (size_t i = 0; i < n; i++) {
            shown[i] = text[i] >= ' ' && text[i] <= '~' ? text[i] : '?';
        }
        shown[n] = '\0';
        return jf_err_set(err, -EINVAL, "nvpmodel status: expected 'pmode:NNNN ...', got '%s'",
                          shown);
    }
    memcpy(num, text + plen, digits);
    if (jf_parse_i64(num, 0, AGENT_NVPMODEL_ID_MAX, &id, NULL) != 0) {
        return jf_err_set(err, -EINVAL, "nvpmodel status: mode id '%s' is not in 0..%d", num,
                          AGENT_NVPMODEL_ID_MAX);
    }
    *ret_id = (int) id;
    return 0;
}
