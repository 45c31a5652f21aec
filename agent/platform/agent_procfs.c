/* /proc/stat and /proc/meminfo parsers (proc(5)). */
#include "agent_procfs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// Reads one unsigned decimal after blanks into *ret and returns the end, or NULL when the next
// token is not a plain digit string (strtoull would accept a sign and wrap "-1" to 2^64 - 1).
static const char *s_read_u64(const char *p, uint64_t *ret)
{
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p < '0' || *p > '9') {
        return NULL;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long x = strtoull(p, &end, 10);
    if (end == p || errno == ERANGE) {
        return NULL;
    }
    *ret = x;
    return end;
}

// "cpuN user nice system idle iowait irq softirq steal ..." (at least the first 4 values).
static int s_parse_cpu_line(const char *line, agent_cpu_times_t *ret)
{
    uint64_t v[8] = {0};
    const char *p = strchr(line, ' ');
    int n = 0;
    while (p && n < 8) {
        p = s_read_u64(p, &v[n]);
        n += p != NULL;
    }
    if (n < 4) {
        return -EINVAL;
    }
    ret->idle = v[3] + v[4];
    ret->busy = v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
    return 0;
}

static int s_stat_line(const char *line, int lineno, agent_proc_stat_t *st, jf_err_t *err)
{
    if (strncmp(line, "cpu", 3) != 0) {
        return 0;
    }
    agent_cpu_times_t t = {0};
    if (s_parse_cpu_line(line, &t) != 0) {
        return jf_err_set(err, -EINVAL, "stat:%d: expected at least 4 CPU time values", lineno);
    }
    if (line[3] == ' ') {
        st->total = t;
        return 0;
    }
    char *end = NULL;
    unsigned long idx = strtoul(line + 3, &end, 10);
    if (end == line + 3 || *end != ' ' || idx >= AGENT_PROCFS_CPUS_MAX) {
        return jf_err_set(err, -EINVAL, "stat:%d: bad CPU line", lineno);
    }
    st->cpus[idx] = t;
    st->n_cpus = idx + 1 > st->n_cpus ? idx + 1 : st->n_cpus;
    return 0;
}

int agent_procfs_parse_stat(const char *text, agent_proc_stat_t *ret_stat, jf_err_t *err)
{
    agent_proc_stat_t st = {0};
    char line[1024];
    int lineno = 0;
    bool total = false;
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t) (nl - p) : strlen(p);
        lineno++;
        (void) snprintf(line, sizeof line, "%.*s", (int) (len < sizeof line ? len : 1023), p);
        int rc = s_stat_line(line, lineno, &st, err);
        if (rc != 0) {
            return rc;
        }
        total |= strncmp(line, "cpu ", 4) == 0;
        p = nl ? nl + 1 : NULL;
    }
    if (!total) {
        return jf_err_set(err, -EINVAL, "stat: no 'cpu' line");
    }
    *ret_stat = st;
    return 0;
}

int agent_procfs_parse_meminfo(const char *text, agent_meminfo_t *ret_info, jf_err_t *err)
{
    static const char *const keys[] = {"MemTotal:", "MemAvailable:", "Cached:", "SwapTotal:",
                                       "SwapFree:"};
    agent_meminfo_t tmp = {0};
    int64_t *tmpdst[] = {&tmp.total_bytes, &tmp.available_bytes, &tmp.cached_bytes,
                         &tmp.swap_total_bytes, &tmp.swap_free_bytes};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *p = strstr(text, keys[i]);
        // The key must start a line: "SwapCached:" must not match "Cached:".
        while (p && p != text && p[-1] != '\n') {
            p = strstr(p + 1, keys[i]);
        }
        uint64_t kb = 0;
        const char *end = p ? s_read_u64(p + strlen(keys[i]), &kb) : NULL;
        if (!end || strncmp(end, " kB", 3) != 0) {
            return jf_err_set(err, -EINVAL, "meminfo: '%s' missing or not in kB", keys[i]);
        }
        if (kb > (uint64_t) (INT64_MAX / 1024)) {
            return jf_err_set(err, -EINVAL, "meminfo: '%s' %llu kB is too large", keys[i],
                              (unsigned long long) kb);
        }
        *tmpdst[i] = (int64_t) kb * 1024;
    }
    *ret_info = tmp;
    return 0;
}

bool agent_procfs_load_pct(const agent_cpu_times_t *before, const agent_cpu_times_t *after,
                           double *ret_pct)
{
    if (after->busy < before->busy || after->idle < before->idle) {
        return false;
    }
    uint64_t busy = after->busy - before->busy;
    uint64_t total = busy + (after->idle - before->idle);
    if (total == 0) {
        return false;
    }
    *ret_pct = 100.0 * (double) busy / (double) total;
    return true;
}
