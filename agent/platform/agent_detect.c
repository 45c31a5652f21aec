/* Board detection from the device tree and nv_tegra_release (jetson-platforms.md §1). */
#include "agent_detect.h"

#include "jf_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define S_NUMBER_DIGITS_MAX 4 // L4T numbers are small; more digits is a malformed file

// §1.3, jetson_stats' NVIDIA_JETPACK table.
static const struct {
    agent_l4t_t l4t;
    const char *jetpack;
} s_jetpack[] = {
    {{32, 1, 0}, "4.2"},        {{32, 2, 0}, "4.2.1"},       {{32, 2, 1}, "4.2.2"},
    {{32, 2, 3}, "4.2.3"},      {{32, 3, 1}, "4.3"},         {{32, 4, 2}, "4.4 DP"},
    {{32, 4, 3}, "4.4"},        {{32, 4, 4}, "4.4.1"},       {{32, 5, 0}, "4.5"},
    {{32, 5, 1}, "4.5.1"},      {{32, 5, 2}, "4.5.1"},       {{32, 6, 1}, "4.6"},
    {{32, 7, 1}, "4.6.1"},      {{32, 7, 2}, "4.6.2"},       {{32, 7, 3}, "4.6.3"},
    {{32, 7, 4}, "4.6.4"},      {{32, 7, 5}, "4.6.5"},       {{32, 7, 6}, "4.6.6"},
    {{34, 1, 0}, "5.0 DP"},     {{34, 1, 1}, "5.0.1 DP"},    {{35, 1, 0}, "5.0.2 GA"},
    {{35, 2, 1}, "5.1"},        {{35, 3, 0}, "5.1.1 PRE"},   {{35, 3, 1}, "5.1.1"},
    {{35, 4, 1}, "5.1.2"},      {{35, 5, 0}, "5.1.3"},       {{35, 6, 0}, "5.1.4"},
    {{35, 6, 1}, "5.1.5"},      {{35, 6, 2}, "5.1.5"},       {{35, 6, 3}, "5.1.5"},
    {{35, 6, 4}, "5.1.6"},      {{36, 0, 0}, "6.0 EA"},      {{36, 2, 0}, "6.0 DP"},
    {{36, 3, 0}, "6.0"},        {{36, 4, 0}, "6.1"},         {{36, 4, 2}, "6.1 (rev1)"},
    {{36, 4, 3}, "6.2"},        {{36, 4, 4}, "6.2.1"},       {{36, 4, 7}, "6.2.1"},
    {{36, 5, 0}, "6.2.2"},      {{38, 2, 0}, "7.0"},         {{38, 2, 1}, "7.0"},
    {{38, 2, 2}, "7.0"},        {{38, 4, 0}, "7.1"},         {{39, 0, 0}, "7.2 EA"},
    {{39, 2, 0}, "7.2 GA"},
};

static const struct {
    int l4t_major;
    int jetpack_major;
} s_jetpack_major[] = {{32, 4}, {34, 5}, {35, 5}, {36, 6}, {38, 7}, {39, 7}};

#define S_COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *agent_detect_jetpack(const agent_l4t_t *l4t)
{
    for (size_t i = 0; i < S_COUNT(s_jetpack); i++) {
        const agent_l4t_t *e = &s_jetpack[i].l4t;
        if (e->major == l4t->major && e->minor == l4t->minor && e->patch == l4t->patch) {
            return s_jetpack[i].jetpack;
        }
    }
    return NULL;
}

int agent_detect_jetpack_major(int l4t_major)
{
    for (size_t i = 0; i < S_COUNT(s_jetpack_major); i++) {
        if (s_jetpack_major[i].l4t_major == l4t_major) {
            return s_jetpack_major[i].jetpack_major;
        }
    }
    return 0;
}

// Reads 1..S_NUMBER_DIGITS_MAX decimal digits at *p; advances *p past them.
static bool s_take_number(const char **p, int *ret)
{
    char digits[S_NUMBER_DIGITS_MAX + 1] = {0};
    size_t n = 0;
    while (n < S_NUMBER_DIGITS_MAX && (*p)[n] >= '0' && (*p)[n] <= '9') {
        digits[n] = (*p)[n];
        n++;
    }
    int64_t v = 0;
    if (n == 0 || ((*p)[n] >= '0' && (*p)[n] <= '9') || jf_parse_i64(digits, 0, 9999, &v, NULL)) {
        return false;
    }
    *p += n;
    *ret = (int) v;
    return true;
}

static bool s_take_literal(const char **p, const char *lit)
{
    size_t n = strlen(lit);
    if (strncmp(*p, lit, n) != 0) {
        return false;
    }
    *p += n;
    return true;
}

int agent_detect_parse_release(const char *text, agent_l4t_t *ret_l4t, jf_err_t *err)
{
    agent_l4t_t l = {0};
    const char *p = text;
    bool ok = s_take_literal(&p, "# R") && s_take_number(&p, &l.major) &&
              s_take_literal(&p, " (release), REVISION: ") && s_take_number(&p, &l.minor) &&
              s_take_literal(&p, ".") && s_take_number(&p, &l.patch) &&
              (*p == ',' || *p == '\n' || *p == '\0');
    if (!ok) {
        return jf_err_set(err, -EINVAL,
                          "line 1: expected '# R<major> (release), REVISION: <minor>.<patch>, ...'"
                          ", got '%.60s'",
                          text);
    }
    *ret_l4t = l;
    return 0;
}

// Reads at most size - 1 bytes of root/rel into buf (NUL-terminated); the byte count, or -errno.
static ssize_t s_slurp(const char *root, const char *rel, char *buf, size_t size)
{
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/%s", root, rel);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return -errno;
    }
    size_t len = 0;
    ssize_t n = 0;
    while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0) {
        len += (size_t) n;
    }
    int rc = n < 0 ? -errno : 0;
    (void) close(fd); // read-only: nothing to lose on close
    buf[len] = '\0';
    return rc < 0 ? rc : (ssize_t) len;
}

// The last entry of a NUL-separated list (trailing NULs ignored), or "" when empty.
static const char *s_last_entry(const char *list, size_t len)
{
    while (len > 0 && list[len - 1] == '\0') {
        len--;
    }
    size_t start = len;
    while (start > 0 && list[start - 1] != '\0') {
        start--;
    }
    return len > 0 ? list + start : "";
}

static bool s_list_has(const char *list, size_t len, const char *needle)
{
    for (size_t i = 0; i < len; i += strlen(list + i) + 1) {
        if (strstr(list + i, needle)) {
            return true;
        }
    }
    return false;
}

static bool s_row_matches(const agent_board_ident_t *row, const char *soc, const char *model,
                          const char *compat, size_t compat_len)
{
    if (*soc && strcmp(row->soc, soc) != 0) {
        return false;
    }
    for (size_t k = 0; k < AGENT_BOARD_MATCH_MAX; k++) {
        const char *needle = compat ? row->compat[k] : row->models[k];
        if (needle && (compat ? s_list_has(compat, compat_len, needle) : !!strstr(model, needle))) {
            return true;
        }
    }
    return false;
}

const agent_board_ident_t *agent_detect_match(const char *model, const char *compat,
                                              size_t compat_len)
{
    size_t n = 0;
    const agent_board_ident_t *rows = agent_board_table_idents(&n);
    const char *soc = s_last_entry(compat, compat_len);
    // The P-number is the most precise key (§1.1); model strings change between releases.
    for (size_t pass = *soc ? 0 : 1; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            if (s_row_matches(&rows[i], soc, model, pass == 0 ? compat : NULL, compat_len)) {
                return &rows[i];
            }
        }
    }
    return NULL;
}

// Fills the L4T fields of d from <etc>/nv_tegra_release; an unknown release leaves a note.
static void s_detect_release(const char *etc_root, agent_detect_t *d)
{
    char text[AGENT_DETECT_RELEASE_MAX];
    ssize_t n = s_slurp(etc_root, "nv_tegra_release", text, sizeof text);
    jf_err_t err = {0};
    if (n < 0) {
        (void) snprintf(d->note, sizeof d->note, "%.160s/nv_tegra_release: %s", etc_root,
                        strerror((int) -n));
        return;
    }
    if (agent_detect_parse_release(text, &d->l4t, &err) != 0) {
        (void) snprintf(d->note, sizeof d->note, "%.100s/nv_tegra_release:%.130s", etc_root,
                        err.msg);
        return;
    }
    d->has_l4t = true;
    (void) snprintf(d->l4t_text, sizeof d->l4t_text, "%d.%d.%d", d->l4t.major, d->l4t.minor,
                    d->l4t.patch);
    const char *jp = agent_detect_jetpack(&d->l4t);
    (void) snprintf(d->jetpack, sizeof d->jetpack, "%s", jp ? jp : "");
    d->jetpack_major = agent_detect_jetpack_major(d->l4t.major);
    if (!d->jetpack_major) {
        (void) snprintf(d->note, sizeof d->note, "L4T R%d is not a JetPack 4-7 release",
                        d->l4t.major);
    }
}

int agent_detect_board(const char *proc_root, const char *etc_root, agent_detect_t *ret,
                       jf_err_t *err)
{
    agent_detect_t d = {.type = JF_BOARD_TYPE_COUNT};
    char compat[AGENT_DETECT_COMPAT_MAX];
    ssize_t mlen = s_slurp(proc_root, "device-tree/model", d.model, sizeof d.model);
    ssize_t clen = s_slurp(proc_root, "device-tree/compatible", compat, sizeof compat);
    while (mlen > 0 && (d.model[mlen - 1] == '\0' || d.model[mlen - 1] == '\n')) {
        d.model[--mlen] = '\0';
    }
    clen = clen < 0 ? 0 : clen;
    (void) snprintf(d.soc, sizeof d.soc, "%s", s_last_entry(compat, (size_t) clen));
    d.is_tegra = strncmp(d.soc, "nvidia,tegra", strlen("nvidia,tegra")) == 0 ||
                 strstr(d.model, "Jetson") != NULL;
    if (!d.is_tegra) {
        *ret = d;
        return 0;
    }
    d.ident = agent_detect_match(d.model, compat, (size_t) clen);
    if (!d.ident || d.ident->type == JF_BOARD_TYPE_COUNT) {
        return jf_err_set(err, -ENOTSUP,
                          "%.100s/device-tree: '%.80s' (%s) is %s%s, which has no jetfleet board "
                          "type; --platform host runs it as a plain Linux machine",
                          proc_root, d.model, d.soc[0] ? d.soc : "no compatible",
                          d.ident ? "a " : "an unknown Jetson", d.ident ? d.ident->label : "");
    }
    d.type = d.ident->type;
    s_detect_release(etc_root, &d);
    *ret = d;
    return 0;
}
