/* jft-fake-nvpmodel: stands in for /usr/sbin/nvpmodel in the helper and power tests. Run as
 * `jft-fake-nvpmodel -m <id>` with the working directory at a fixture root (the helper chdirs
 * there), it applies mode <id> of etc/nvpmodel.conf the way nvpmodel and the kernel would: every
 * line in order, each path taken below the root, CLOCK values clamped to the FREQ_TABLE (-1 is the
 * table's top, EMC -1 is no cap), HWMON lines skipped. It appends its arguments to
 * var/lib/nvpmodel/fake-calls and writes var/lib/nvpmodel/status. If etc/fake-nvpmodel-exit
 * holds a number, it exits with it after applying (the real nvpmodel exits 255 after some mode
 * changes that did apply, jetson-platforms.md §4.3); if etc/fake-nvpmodel-skip exists, it applies
 * nothing (a mode change that did not happen). */
#include "agent_nvpmodel.h"
#include "jf_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_CONF   "etc/nvpmodel.conf"
#define T_CALLS  "var/lib/nvpmodel/fake-calls"
#define T_STATUS "var/lib/nvpmodel/status"
#define T_EXIT   "etc/fake-nvpmodel-exit"
#define T_SKIP   "etc/fake-nvpmodel-skip"

// Writes text to an existing file below the working directory; never creates one.
static int t_write(const char *rel, const char *text, int extra_flags)
{
    int fd = open(rel, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | extra_flags);
    if (fd < 0) {
        fprintf(stderr, "NVPM ERROR: cannot open %s: %s\n", rel, strerror(errno));
        return -1;
    }
    ssize_t n = write(fd, text, strlen(text));
    int bad = n != (ssize_t) strlen(text);
    bad |= close(fd) != 0;
    return bad ? -1 : 0;
}

static int t_read(const char *rel, char *buf, size_t size)
{
    FILE *f = fopen(rel, "r");
    if (!f) {
        return -1;
    }
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    (void) fclose(f); // read-only
    return 0;
}

// The smallest and largest number of a frequency table file.
static int t_table(const char *rel, long long *ret_min, long long *ret_max)
{
    char buf[4096];
    if (t_read(rel, buf, sizeof buf) != 0) {
        return -1;
    }
    long long lo = -1, hi = -1;
    char *end = NULL;
    for (const char *s = buf;; s = end) {
        long long v = strtoll(s, &end, 10);
        if (end == s) {
            break;
        }
        lo = lo < 0 || v < lo ? v : lo;
        hi = v > hi ? v : hi;
    }
    *ret_min = lo;
    *ret_max = hi;
    return hi < 0 ? -1 : 0;
}

static const agent_nvpmodel_arg_t *t_arg(const agent_nvpmodel_param_t *p, const char *name)
{
    for (size_t i = 0; i < p->n_args; i++) {
        if (strcmp(p->args[i].name, name) == 0) {
            return &p->args[i];
        }
    }
    return NULL;
}

// The kernel's view of a CLOCK value: INT_MAX (-1) means the top of the table, anything else is
// clamped into it. Without a table (EMC), -1 means no cap: 0.
static long long t_clock_value(const agent_nvpmodel_param_t *p, const char *value)
{
    long long v = strtoll(value, NULL, 10);
    const agent_nvpmodel_arg_t *table = t_arg(p, "FREQ_TABLE");
    long long lo = 0, hi = 0;
    if (!table || t_table(table->path + 1, &lo, &hi) != 0) {
        return v < 0 ? 0 : v;
    }
    if (v < 0 || v > hi) {
        return hi;
    }
    return v < lo ? lo : v;
}

static int t_apply(const agent_nvpmodel_t *conf, const agent_nvpmodel_mode_t *m)
{
    for (size_t i = 0; i < m->n_settings; i++) {
        const agent_nvpmodel_setting_t *s = &m->settings[i];
        const agent_nvpmodel_param_t *p = agent_nvpmodel_param_at(conf, s->param);
        const agent_nvpmodel_arg_t *a = &p->args[s->arg];
        char text[64];
        if (p->type == AGENT_NVPMODEL_HWMON) {
            continue; // the fixture has no hwmon tree
        }
        if (p->type == AGENT_NVPMODEL_CLOCK) {
            (void) snprintf(text, sizeof text, "%lld\n", t_clock_value(p, s->value));
        } else {
            (void) snprintf(text, sizeof text, "%s\n", s->value);
        }
        if (t_write(a->path + 1, text, O_TRUNC) != 0) {
            return -1;
        }
    }
    return 0;
}

static int t_exit_code(void)
{
    char buf[32];
    int64_t code = 0;
    if (t_read(T_EXIT, buf, sizeof buf) != 0) {
        return 0;
    }
    buf[strcspn(buf, "\n")] = '\0';
    return jf_parse_i64(buf, 0, 255, &code, NULL) == 0 ? (int) code : 1;
}

int main(int argc, char **argv)
{
    char calls[256] = "", line[260];
    for (int i = 1; i < argc; i++) {
        size_t used = strlen(calls);
        (void) snprintf(calls + used, sizeof calls - used, "%s%s", i > 1 ? " " : "", argv[i]);
    }
    (void) snprintf(line, sizeof line, "%s\n", calls);
    int64_t id = -1;
    if (t_write(T_CALLS, line, O_APPEND) != 0 || argc != 3 || strcmp(argv[1], "-m") != 0 ||
        jf_parse_i64(argv[2], 0, 255, &id, NULL) != 0) {
        fprintf(stderr, "NVPM ERROR: usage: nvpmodel -m <id>\n");
        return 1;
    }
    jf_err_t err = {0};
    agent_nvpmodel_t *conf = agent_nvpmodel_load(T_CONF, &err);
    const agent_nvpmodel_mode_t *m = conf ? agent_nvpmodel_mode(conf, (int) id) : NULL;
    int rc = !m ? -1 : access(T_SKIP, F_OK) == 0 ? 0 : t_apply(conf, m);
    if (!m) {
        fprintf(stderr, "NVPM ERROR: no power mode %lld (%s)\n", (long long) id, err.msg);
    }
    char status[64];
    (void) snprintf(status, sizeof status, "pmode:%04lld fmode:quiet\n", (long long) id);
    rc = rc == 0 ? t_write(T_STATUS, status, O_TRUNC) : rc;
    agent_nvpmodel_destroy(&conf);
    printf("NVPM: fake nvpmodel applied mode %lld\n", (long long) id);
    return rc != 0 ? 1 : t_exit_code();
}
