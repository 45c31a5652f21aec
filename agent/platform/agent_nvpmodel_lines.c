/* The lines inside nvpmodel conf sections (jetson-platforms.md §4.2): a PARAM's arguments with
 * their paths, and a POWER_MODEL's settings with their values, converted to Hz and cores. The
 * headers, the file and the checks across sections are in agent_nvpmodel.c. */
#include "agent_nvpmodel_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// A FILE value: "1", "on", "auto", a mask.
static bool s_is_value(const char *s)
{
    size_t n = strlen(s);
    return n > 0 && n <= AGENT_NVPMODEL_VALUE_MAX &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

// The N of "/sys/devices/system/cpu/cpu<N>/<leaf>..." (the whole rest when exact); -1 if the
// path is not one.
static int s_cpu_of_path(const char *path, const char *leaf, bool exact)
{
    static const char prefix[] = "/sys/devices/system/cpu/cpu";
    if (strncmp(path, prefix, sizeof prefix - 1) != 0) {
        return -1;
    }
    const char *d = path + sizeof prefix - 1;
    size_t nd = strspn(d, "0123456789");
    if (nd == 0 || nd > 2 || (nd > 1 && d[0] == '0') || d[nd] != '/') {
        return -1;
    }
    const char *rest = d + nd + 1;
    if (exact ? strcmp(rest, leaf) != 0 : strncmp(rest, leaf, strlen(leaf)) != 0) {
        return -1;
    }
    int cpu = (int) strtol(d, NULL, 10); // at most 2 digits, checked above
    return cpu < AGENT_NVPMODEL_CPUS_MAX ? cpu : -1;
}

static bool s_is_clock_arg(const char *name)
{
    static const char *const args[] = {"FREQ_TABLE",       "MAX_FREQ",       "MIN_FREQ",
                                       "FREQ_TABLE_KNEXT", "MAX_FREQ_KNEXT", "MIN_FREQ_KNEXT"};
    return agent_nvpmodel_index(name, args, 6) < 6;
}

// What a path tells about its param: CPU_ONLINE paths must name a core's online file; a CLOCK
// with cpufreq paths drives that core's policy, in kHz.
static int s_classify_arg(agent_nvpmodel_parser_t *p, agent_nvpmodel_param_t *par, const char *path)
{
    if (par->type == AGENT_NVPMODEL_FILE && strcmp(par->name, "CPU_ONLINE") == 0 &&
        s_cpu_of_path(path, "online", true) < 0) {
        return agent_nvpmodel_fail(
            p,
            "CPU_ONLINE paths must be /sys/devices/system/cpu/cpuN/online, got "
            "'%.80s'",
            path);
    }
    int cpu = par->type == AGENT_NVPMODEL_CLOCK ? s_cpu_of_path(path, "cpufreq/", false) : -1;
    if (cpu < 0) {
        return 0;
    }
    if (par->kind == AGENT_NVPMODEL_CLOCK_CPU && par->first_core != cpu) {
        return agent_nvpmodel_fail(p, "CLOCK %s names both cpu%d and cpu%d", par->name,
                                   par->first_core, cpu);
    }
    par->kind = AGENT_NVPMODEL_CLOCK_CPU;
    par->first_core = cpu;
    par->unit_hz = 1000; // cpufreq files are in kHz (§2.0)
    return 0;
}

// "<ARG> <path>" (FILE, CLOCK) or "<ARG> <dir> <attribute>" (HWMON) below a PARAM header.
int agent_nvpmodel_param_line(agent_nvpmodel_parser_t *p, char **toks, size_t n)
{
    agent_nvpmodel_param_t *par = &p->conf->params[p->conf->n_params - 1];
    bool hwmon = par->type == AGENT_NVPMODEL_HWMON;
    if (n != (hwmon ? 3u : 2u)) {
        return agent_nvpmodel_fail(p, "a %s line must be '<ARG> %s', got %zu fields", par->name,
                                   hwmon ? "<dir> <attribute>" : "<path>", n);
    }
    if (!agent_nvpmodel_is_name(toks[0], AGENT_NVPMODEL_NAME_MAX) ||
        agent_nvpmodel_find_arg(par, toks[0]) >= 0) {
        return agent_nvpmodel_fail(p, "argument '%.40s' of %s is not a name or is defined twice",
                                   toks[0], par->name);
    }
    if (par->type == AGENT_NVPMODEL_CLOCK && !s_is_clock_arg(toks[0])) {
        return agent_nvpmodel_fail(
            p,
            "unknown CLOCK argument '%.40s' (expected FREQ_TABLE, MAX_FREQ, MIN_FREQ "
            "or their _KNEXT forms)",
            toks[0]);
    }
    if (toks[1][0] != '/' || strlen(toks[1]) > AGENT_NVPMODEL_PATH_MAX ||
        (hwmon && !agent_nvpmodel_is_name(toks[2], AGENT_NVPMODEL_ATTR_MAX))) {
        return agent_nvpmodel_fail(p, "'%.80s' is not an absolute path of at most %d bytes%s",
                                   toks[1], AGENT_NVPMODEL_PATH_MAX,
                                   hwmon ? " followed by an attribute name" : "");
    }
    if (par->n_args == AGENT_NVPMODEL_ARGS_MAX) {
        return agent_nvpmodel_fail(p, "%s has more than %d arguments", par->name,
                                   AGENT_NVPMODEL_ARGS_MAX);
    }
    int rc = s_classify_arg(p, par, toks[1]);
    if (rc != 0) {
        return rc;
    }
    agent_nvpmodel_arg_t *a = &par->args[par->n_args++];
    (void) snprintf(a->name, sizeof a->name, "%s", toks[0]); // lengths checked above
    (void) snprintf(a->path, sizeof a->path, "%s", toks[1]);
    (void) snprintf(a->attr, sizeof a->attr, "%s", hwmon ? toks[2] : "");
    return 0;
}

static agent_nvpmodel_clock_t *s_clock_slot(agent_nvpmodel_mode_t *m,
                                            const agent_nvpmodel_param_t *par, size_t pi)
{
    for (size_t i = 0; i < m->n_clocks; i++) {
        if (m->clocks[i].param == pi) {
            return &m->clocks[i];
        }
    }
    if (m->n_clocks == AGENT_NVPMODEL_CLOCKS_MAX) {
        return NULL;
    }
    agent_nvpmodel_clock_t *c = &m->clocks[m->n_clocks++];
    *c = (agent_nvpmodel_clock_t){.param = (uint16_t) pi,
                                  .kind = par->kind,
                                  .first_core = par->first_core,
                                  .min_hz = AGENT_NVPMODEL_UNSET,
                                  .max_hz = AGENT_NVPMODEL_UNSET};
    return c;
}

// "<CLOCK> MIN_FREQ|MAX_FREQ <value>": -1 is INT_MAX (no limit), and so is EMC MAX_FREQ 0 (§4.2).
static int s_mode_clock(agent_nvpmodel_parser_t *p, agent_nvpmodel_mode_t *m, size_t pi,
                        const char *arg, const char *value)
{
    const agent_nvpmodel_param_t *par = &p->conf->params[pi];
    bool is_max = strcmp(arg, "MAX_FREQ") == 0;
    if (!is_max && strcmp(arg, "MIN_FREQ") != 0) {
        return agent_nvpmodel_fail(p, "a mode sets only MIN_FREQ or MAX_FREQ of %s, not %s",
                                   par->name, arg);
    }
    int64_t v = 0;
    if (!agent_nvpmodel_is_int(value, -1, AGENT_NVPMODEL_HZ_MAX / par->unit_hz, &v)) {
        return agent_nvpmodel_fail(p, "%s %s must be -1 or an integer in 0..%lld, got '%.40s'",
                                   par->name, arg,
                                   (long long) (AGENT_NVPMODEL_HZ_MAX / par->unit_hz), value);
    }
    agent_nvpmodel_clock_t *c = s_clock_slot(m, par, pi);
    if (!c) {
        return agent_nvpmodel_fail(p, "mode %d sets more than %d clocks", m->id,
                                   AGENT_NVPMODEL_CLOCKS_MAX);
    }
    bool no_cap = v < 0 || (is_max && v == 0 && par->kind == AGENT_NVPMODEL_CLOCK_EMC);
    *(is_max ? &c->max_hz : &c->min_hz) = no_cap ? AGENT_NVPMODEL_NO_LIMIT : v * par->unit_hz;
    return 0;
}

static int s_mode_online(agent_nvpmodel_parser_t *p, agent_nvpmodel_mode_t *m,
                         const agent_nvpmodel_arg_t *arg, const char *value)
{
    int cpu = s_cpu_of_path(arg->path, "online", true); // checked by s_classify_arg
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
        return agent_nvpmodel_fail(p, "CPU_ONLINE %s must be 0 or 1, got '%.40s'", arg->name,
                                   value);
    }
    if (cpu == 0 && value[0] == '0') {
        return agent_nvpmodel_fail(p, "cpu0 cannot be offline (CPU_ONLINE %s 0)", arg->name);
    }
    m->listed_mask |= UINT64_C(1) << cpu;
    if (value[0] == '1') {
        m->online_mask |= UINT64_C(1) << cpu;
    }
    return 0;
}

static int s_mode_value(agent_nvpmodel_parser_t *p, agent_nvpmodel_mode_t *m, size_t pi, size_t ai,
                        const char *value)
{
    const agent_nvpmodel_param_t *par = &p->conf->params[pi];
    int64_t v = 0;
    switch (par->type) {
    case AGENT_NVPMODEL_CLOCK:
        return s_mode_clock(p, m, pi, par->args[ai].name, value);
    case AGENT_NVPMODEL_HWMON:
        return agent_nvpmodel_is_int(value, 0, INT32_MAX, &v)
                   ? 0
                   : agent_nvpmodel_fail(p, "%s %s must be a non-negative integer, got '%.40s'",
                                         par->name, par->args[ai].name, value);
    case AGENT_NVPMODEL_FILE:
        if (strcmp(par->name, "CPU_ONLINE") == 0) {
            return s_mode_online(p, m, &par->args[ai], value);
        }
        return s_is_value(value)
                   ? 0
                   : agent_nvpmodel_fail(p, "%s value '%.40s' is not 1..%d of [A-Za-z0-9_.-]",
                                         par->name, value, AGENT_NVPMODEL_VALUE_MAX);
    }
    return agent_nvpmodel_fail(p, "internal: unknown PARAM type");
}

static const agent_nvpmodel_setting_t *s_find_setting(const agent_nvpmodel_mode_t *m, size_t pi,
                                                      size_t ai)
{
    for (size_t i = 0; i < m->n_settings; i++) {
        if (m->settings[i].param == pi && m->settings[i].arg == ai) {
            return &m->settings[i];
        }
    }
    return NULL;
}

// "<PARAM> <ARG> <VALUE>" below a POWER_MODEL header.
int agent_nvpmodel_mode_line(agent_nvpmodel_parser_t *p, char **toks, size_t n)
{
    agent_nvpmodel_mode_t *m = &p->conf->modes[p->conf->n_modes - 1];
    if (n != 3) {
        return agent_nvpmodel_fail(
            p, "a POWER_MODEL line must be '<PARAM> <ARG> <VALUE>', got %zu fields", n);
    }
    int pi = agent_nvpmodel_find_param(p->conf, toks[0]);
    if (pi < 0) {
        return agent_nvpmodel_fail(p, "unknown PARAM '%.40s' (not defined above)", toks[0]);
    }
    int ai = agent_nvpmodel_find_arg(&p->conf->params[pi], toks[1]);
    if (ai < 0) {
        return agent_nvpmodel_fail(p, "PARAM %s has no argument '%.40s'", toks[0], toks[1]);
    }
    const agent_nvpmodel_setting_t *dup = s_find_setting(m, (size_t) pi, (size_t) ai);
    if (dup) {
        return agent_nvpmodel_fail(p, "'%s %s' is set twice in mode %d (first at line %d)", toks[0],
                                   toks[1], m->id, dup->line);
    }
    if (strlen(toks[2]) > AGENT_NVPMODEL_VALUE_MAX ||
        m->n_settings == AGENT_NVPMODEL_SETTINGS_MAX) {
        return agent_nvpmodel_fail(p,
                                   "value longer than %d bytes, or more than %d lines in mode %d",
                                   AGENT_NVPMODEL_VALUE_MAX, AGENT_NVPMODEL_SETTINGS_MAX, m->id);
    }
    int rc = s_mode_value(p, m, (size_t) pi, (size_t) ai, toks[2]);
    if (rc != 0) {
        return rc;
    }
    agent_nvpmodel_setting_t *s = &m->settings[m->n_settings++];
    *s = (agent_nvpmodel_setting_t){.param = (uint16_t) pi, .arg = (uint16_t) ai, .line = p->line};
    (void) snprintf(s->value, sizeof s->value, "%s", toks[2]); // length checked above
    return 0;
}
