/* The sysfs/procfs reader's core: value parsing, file opening, and the CPU, GPU, EMC and memory
 * quantities (jetson-platforms.md §2.0-2.4). Rails, thermal zones and RAPL are in
 * agent_sysfs_scan.c. Units are converted here, at the boundary: cpufreq kHz -> Hz, GPU load
 * per-mille -> %, /proc kB -> bytes (agent_procfs). */
#include "agent_sysfs_internal.h"

#include "jf_parse.h"
#include "jf_units.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_KHZ_MAX      INT64_C(100000000)       // 100 GHz in kHz: above is not a CPU clock
#define S_HZ_MAX       INT64_C(100000000000)    // 100 GHz
#define S_PERMILLE_MAX 1000
#define S_ACTIVITY_MAX INT64_C(1000000000000000) // mc_all counter sanity bound
#define S_PCT_MAX      100.0

int agent_sysfs_parse_value(const char *text, int64_t min, int64_t max, int64_t *ret_value,
                            jf_err_t *err)
{
    char digits[AGENT_SYSFS_VALUE_MAX + 1];
    size_t len = strlen(text);
    while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\t')) {
        len--;
    }
    bool starts_ok = len > 0 && (text[0] == '-' || (text[0] >= '0' && text[0] <= '9'));
    if (!starts_ok || len >= sizeof digits) {
        return jf_err_set(err, -EINVAL, "expected a decimal integer, got '%.*s'",
                          (int) (len < 64 ? len : 64), text);
    }
    memcpy(digits, text, len);
    digits[len] = '\0';
    return jf_parse_i64(digits, min, max, ret_value, err);
}

// One "a" or "a-b" item of a CPU list; advances *p.
static int s_cpu_range(const char **p, bool *set, size_t n, jf_err_t *err)
{
    char *end = NULL;
    errno = 0;
    unsigned long a = strtoul(*p, &end, 10), b = a;
    bool ok = end != *p && **p >= '0' && **p <= '9' && errno == 0;
    if (ok && *end == '-') {
        const char *q = end + 1;
        b = strtoul(q, &end, 10);
        ok = end != q && *q >= '0' && *q <= '9' && errno == 0 && b >= a;
    }
    if (!ok || b >= AGENT_SYSFS_CPUS_MAX) {
        return jf_err_set(err, -EINVAL, "CPU list: expected N or N-M below %d at '%.20s'",
                          AGENT_SYSFS_CPUS_MAX, *p);
    }
    for (unsigned long i = a; i <= b && i < n; i++) {
        set[i] = true;
    }
    *p = end;
    return 0;
}

int agent_sysfs_parse_cpu_list(const char *text, bool *ret_set, size_t n, jf_err_t *err)
{
    bool set[AGENT_SYSFS_CPUS_MAX] = {false};
    n = n < AGENT_SYSFS_CPUS_MAX ? n : AGENT_SYSFS_CPUS_MAX;
    const char *p = text;
    while (*p && *p != '\n') {
        int rc = s_cpu_range(&p, set, n, err);
        if (rc != 0) {
            return rc;
        }
        if (*p == ',') {
            p++;
        } else if (*p && *p != '\n') {
            return jf_err_set(err, -EINVAL, "CPU list: unexpected '%.20s'", p);
        }
    }
    if (*p == '\n' && p[1] != '\0') {
        return jf_err_set(err, -EINVAL, "CPU list: text after the newline");
    }
    memcpy(ret_set, set, n * sizeof *set);
    return 0;
}

void agent_sysfs_note_missing(agent_sysfs_t *self, const char *what, const char *detail)
{
    size_t room = sizeof self->missing - self->missing_len;
    int n = snprintf(self->missing + self->missing_len, room, "%s%s (%s)",
                     self->missing_len ? "; " : "", what, detail);
    if (n > 0) {
        self->missing_len += (size_t) n < room ? (size_t) n : room - 1;
    }
}

int agent_sysfs_open(agent_sysfs_t *self, const char *root, const char *rel, const char *what)
{
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/%s", root, rel);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && what) {
        char detail[PATH_MAX + 64];
        (void) snprintf(detail, sizeof detail, "%s: %s", path, strerror(errno));
        agent_sysfs_note_missing(self, what, detail);
    }
    return fd;
}

// The first of a table's candidate files that opens; -1 (noted under the first path) if none.
static int s_open_first(agent_sysfs_t *self, const char *const rel[], const char *what)
{
    for (size_t i = 0; i < AGENT_BOARD_PATHS_MAX && rel[i]; i++) {
        int fd = agent_sysfs_open(self, self->sysfs_root, rel[i], NULL);
        if (fd >= 0) {
            return fd;
        }
    }
    return rel[0] ? agent_sysfs_open(self, self->sysfs_root, rel[0], what) : -1;
}

bool agent_sysfs_read_name(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return false;
    }
    ssize_t n = read(fd, buf, size - 1);
    (void) close(fd); // read-only: nothing to lose on close
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0' || buf[n - 1] == ' ')) {
        n--;
    }
    buf[n > 0 ? n : 0] = '\0';
    return n > 0;
}

bool agent_sysfs_read_i64(int fd, int64_t min, int64_t max, int64_t *ret_value)
{
    char text[AGENT_SYSFS_VALUE_MAX + 2];
    ssize_t n = fd < 0 ? -1 : pread(fd, text, sizeof text - 1, 0);
    if (n < 0 || (size_t) n > AGENT_SYSFS_VALUE_MAX) {
        return false; // unreadable (a powered-off sensor reads EIO/ENODATA) or not a value file
    }
    text[n] = '\0';
    return agent_sysfs_parse_value(text, min, max, ret_value, NULL) == 0;
}

// Reads a whole /proc file into self->buf.
static bool s_read_proc(agent_sysfs_t *self, int fd)
{
    ssize_t n = fd < 0 ? -1 : pread(fd, self->buf, sizeof self->buf - 1, 0);
    if (n < 0) {
        return false;
    }
    self->buf[n] = '\0';
    return true;
}

// Cores from <sysfs>/devices/system/cpu/present ("0-11"), read once at creation.
static size_t s_present_cpus(agent_sysfs_t *self)
{
    char path[PATH_MAX], text[AGENT_SYSFS_VALUE_MAX + 1];
    bool set[AGENT_SYSFS_CPUS_MAX] = {false};
    (void) snprintf(path, sizeof path, "%s/devices/system/cpu/present", self->sysfs_root);
    if (!agent_sysfs_read_name(path, text, sizeof text) ||
        agent_sysfs_parse_cpu_list(text, set, AGENT_SYSFS_CPUS_MAX, NULL) != 0) {
        return 0;
    }
    size_t n = AGENT_SYSFS_CPUS_MAX;
    while (n > 0 && !set[n - 1]) {
        n--;
    }
    return n;
}

// The number of cores: the present list, else the table's count, else /proc/stat's lines.
static void s_count_cpus(agent_sysfs_t *self, size_t table_n_cpus)
{
    size_t n = s_present_cpus(self);
    n = n ? n : table_n_cpus;
    if (n == 0 && s_read_proc(self, self->stat_fd) &&
        agent_procfs_parse_stat(self->buf, &self->now, NULL) == 0) {
        n = self->now.n_cpus;
    }
    self->n_cpus = n < AGENT_SYSFS_CPUS_MAX ? n : AGENT_SYSFS_CPUS_MAX;
}

static int s_open_cpu_freq(agent_sysfs_t *self, size_t cpu)
{
    char rel[64];
    (void) snprintf(rel, sizeof rel, "devices/system/cpu/cpu%zu/cpufreq/scaling_cur_freq", cpu);
    return agent_sysfs_open(self, self->sysfs_root, rel, NULL);
}

// Opens the per-core and the fixed files of the layout.
static void s_open_files(agent_sysfs_t *self)
{
    const agent_board_layout_t *l = self->layout;
    bool any_freq = false;
    for (size_t i = 0; i < self->n_cpus; i++) {
        self->cpu_freq_fd[i] = s_open_cpu_freq(self, i);
        any_freq |= self->cpu_freq_fd[i] >= 0;
    }
    if (!any_freq && self->n_cpus > 0) {
        agent_sysfs_note_missing(self, "cpu_core_freq_hz", "no cpuN/cpufreq/scaling_cur_freq");
    }
    self->meminfo_fd = agent_sysfs_open(self, self->proc_root, "meminfo", "memory");
    self->online_fd = agent_sysfs_open(self, self->sysfs_root, "devices/system/cpu/online",
                                       "cpu_online");
    if (l->gpu_devfreq_dir) {
        char rel[PATH_MAX];
        (void) snprintf(rel, sizeof rel, "%s/cur_freq", l->gpu_devfreq_dir);
        self->gpu_freq_fd = agent_sysfs_open(self, self->sysfs_root, rel, "gpu_freq_hz");
    }
    self->gpu_load_fd = s_open_first(self, l->gpu_load, "gpu_load_pct");
    self->emc_rate_fd = s_open_first(self, l->emc_rate, "emc_freq_hz");
    self->emc_activity_fd = s_open_first(self, l->emc_activity, "emc_load_pct");
}

// Closes fd when it is open. The files are read-only: a failing close cannot lose data.
static void s_close(int fd)
{
    if (fd >= 0) {
        (void) close(fd);
    }
}

void agent_sysfs_destroy(agent_sysfs_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_sysfs_t *self = *self_p;
    const int fixed[] = {self->stat_fd,    self->meminfo_fd,  self->online_fd,
                         self->gpu_freq_fd, self->gpu_load_fd, self->emc_rate_fd,
                         self->emc_activity_fd};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        s_close(fixed[i]);
    }
    for (size_t i = 0; i < AGENT_SYSFS_CPUS_MAX; i++) {
        s_close(self->cpu_freq_fd[i]);
    }
    for (size_t i = 0; i < self->n_rails; i++) {
        s_close(self->rails[i].voltage_fd);
        s_close(self->rails[i].current_fd);
        s_close(self->rails[i].power_fd);
    }
    for (size_t i = 0; i < self->n_zones; i++) {
        s_close(self->zones[i].fd);
    }
    for (size_t i = 0; i < self->n_rapl; i++) {
        s_close(self->rapl[i].fd);
    }
    free(self);
    *self_p = NULL;
}

static agent_sysfs_t *s_alloc(const agent_sysfs_opts_t *opts)
{
    agent_sysfs_t *self = calloc(1, sizeof *self);
    if (!self) {
        return NULL;
    }
    self->stat_fd = self->meminfo_fd = self->online_fd = -1;
    self->gpu_freq_fd = self->gpu_load_fd = self->emc_rate_fd = self->emc_activity_fd = -1;
    for (size_t i = 0; i < AGENT_SYSFS_CPUS_MAX; i++) {
        self->cpu_freq_fd[i] = -1;
    }
    self->layout = opts->layout;
    self->source = opts->source;
    (void) snprintf(self->sysfs_root, sizeof self->sysfs_root, "%s", opts->sysfs_root);
    (void) snprintf(self->proc_root, sizeof self->proc_root, "%s", opts->proc_root);
    return self;
}

agent_sysfs_t *agent_sysfs_new(const agent_sysfs_opts_t *opts, jf_err_t *err)
{
    assert(opts && opts->layout && opts->sysfs_root && opts->proc_root && opts->source);
    if (strlen(opts->sysfs_root) > AGENT_SYSFS_ROOT_MAX ||
        strlen(opts->proc_root) > AGENT_SYSFS_ROOT_MAX) {
        jf_err_set(err, -ENAMETOOLONG, "sysfs: a root directory is longer than %d bytes",
                   AGENT_SYSFS_ROOT_MAX);
        return NULL;
    }
    agent_sysfs_t *self = s_alloc(opts);
    if (!self) {
        jf_err_set(err, -ENOMEM, "sysfs: out of memory");
        return NULL;
    }
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/stat", self->proc_root);
    self->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
    if (self->stat_fd < 0) {
        jf_err_set(err, -errno, "sysfs: %s: %s (is --proc-root right?)", path, strerror(errno));
        goto fail_destroy;
    }
    s_count_cpus(self, opts->n_cpus);
    s_open_files(self);
    agent_sysfs_open_rails(self);
    agent_sysfs_open_zones(self);
    agent_sysfs_open_rapl(self);
    return self;

fail_destroy:
    agent_sysfs_destroy(&self);
    return NULL;
}

size_t agent_sysfs_n_cpus(const agent_sysfs_t *self)
{
    return self->n_cpus;
}

const char *agent_sysfs_missing(const agent_sysfs_t *self)
{
    return self->missing;
}

// Reads the online list into self->online. A core coming online gets its cpufreq file opened
// then: an offline core's cpufreq dir may be missing at creation (a power mode with fewer
// cores). This is the only open after creation, and it happens on a change, not per sample.
static void s_read_online(agent_sysfs_t *self)
{
    char text[AGENT_SYSFS_VALUE_MAX + 2];
    bool set[AGENT_SYSFS_CPUS_MAX] = {false};
    ssize_t n = self->online_fd < 0 ? -1 : pread(self->online_fd, text, sizeof text - 1, 0);
    self->online_known = false;
    if (n <= 0 || (size_t) n > AGENT_SYSFS_VALUE_MAX) {
        return;
    }
    text[n] = '\0';
    if (agent_sysfs_parse_cpu_list(text, set, self->n_cpus, NULL) != 0) {
        return;
    }
    for (size_t i = 0; i < self->n_cpus; i++) {
        if (set[i] && !self->online[i] && self->cpu_freq_fd[i] < 0) {
            self->cpu_freq_fd[i] = s_open_cpu_freq(self, i);
        }
        self->online[i] = set[i];
    }
    self->online_known = true;
}

// A core counts as online from the online list, or else from having a /proc/stat line.
static bool s_is_online(const agent_sysfs_t *self, size_t cpu)
{
    const agent_cpu_times_t *t = &self->now.cpus[cpu];
    return self->online_known ? self->online[cpu] : (t->busy | t->idle) != 0;
}

static json_t *s_core_load(const agent_sysfs_t *self, size_t cpu)
{
    const agent_cpu_times_t *a = &self->prev.cpus[cpu], *b = &self->now.cpus[cpu];
    double pct = 0;
    // A core without ticks in the previous reading was offline then: no interval to measure.
    bool ok = s_is_online(self, cpu) && (a->busy | a->idle) != 0 &&
              agent_procfs_load_pct(a, b, &pct);
    return ok ? json_real(pct) : json_null();
}

static void s_add_load(agent_sysfs_t *self, json_t *sample)
{
    double pct = 0;
    if (!self->have_prev || !agent_procfs_load_pct(&self->prev.total, &self->now.total, &pct)) {
        return; // the first sample, or no time passed: load needs two readings
    }
    (void) json_object_set_new(sample, "cpu_load_pct", json_real(pct));
    json_t *cores = json_array();
    for (size_t i = 0; cores && i < self->n_cpus; i++) {
        (void) json_array_append_new(cores, s_core_load(self, i));
    }
    (void) json_object_set_new(sample, "cpu_core_load_pct", cores);
}

static void s_add_freqs(agent_sysfs_t *self, json_t *sample)
{
    bool any_fd = false;
    for (size_t i = 0; i < self->n_cpus; i++) {
        any_fd |= self->cpu_freq_fd[i] >= 0;
    }
    json_t *freqs = any_fd ? json_array() : NULL;
    for (size_t i = 0; freqs && i < self->n_cpus; i++) {
        int64_t khz = 0;
        bool ok = s_is_online(self, i) &&
                  agent_sysfs_read_i64(self->cpu_freq_fd[i], 0, S_KHZ_MAX, &khz);
        (void) json_array_append_new(freqs, ok ? json_integer(khz * 1000) : json_null());
    }
    if (freqs) {
        (void) json_object_set_new(sample, "cpu_core_freq_hz", freqs);
    }
}

static void s_add_online(const agent_sysfs_t *self, json_t *sample)
{
    json_t *online = self->online_known && self->n_cpus > 0 ? json_array() : NULL;
    for (size_t i = 0; online && i < self->n_cpus; i++) {
        (void) json_array_append_new(online, json_boolean(self->online[i]));
    }
    if (online) {
        (void) json_object_set_new(sample, "cpu_online", online);
    }
}

static void s_add_cpus(agent_sysfs_t *self, json_t *sample)
{
    bool have_stat = s_read_proc(self, self->stat_fd) &&
                     agent_procfs_parse_stat(self->buf, &self->now, NULL) == 0;
    s_read_online(self);
    if (have_stat) {
        s_add_load(self, sample);
    }
    s_add_freqs(self, sample);
    s_add_online(self, sample);
    if (have_stat) {
        self->prev = self->now;
        self->have_prev = true;
    }
}

static void s_add_gpu_emc(agent_sysfs_t *self, json_t *sample)
{
    int64_t v = 0, rate_hz = 0;
    if (agent_sysfs_read_i64(self->gpu_load_fd, 0, S_PERMILLE_MAX, &v)) {
        (void) json_object_set_new(sample, "gpu_load_pct", json_real((double) v / 10.0));
    }
    if (agent_sysfs_read_i64(self->gpu_freq_fd, 0, S_HZ_MAX, &v)) {
        (void) json_object_set_new(sample, "gpu_freq_hz", json_integer(v));
    }
    bool have_rate = agent_sysfs_read_i64(self->emc_rate_fd, 0, S_HZ_MAX, &rate_hz);
    if (have_rate) {
        (void) json_object_set_new(sample, "emc_freq_hz", json_integer(rate_hz));
    }
    // mc_all / EMC kHz is jetson_stats' reading of the activity counter (§2.3; NVIDIA's scaling
    // is unconfirmed). A result above 100 % is not a utilisation and is left out.
    if (have_rate && rate_hz >= 1000 &&
        agent_sysfs_read_i64(self->emc_activity_fd, 0, S_ACTIVITY_MAX, &v)) {
        double pct = (double) v / ((double) rate_hz / 1000.0);
        (void) (pct <= S_PCT_MAX ? json_object_set_new(sample, "emc_load_pct", json_real(pct)) : 0);
    }
}

static void s_add_memory(agent_sysfs_t *self, json_t *sample)
{
    agent_meminfo_t m = {0};
    if (!s_read_proc(self, self->meminfo_fd) ||
        agent_procfs_parse_meminfo(self->buf, &m, NULL) != 0) {
        return;
    }
    (void) json_object_set_new(sample, "ram_total_bytes", json_integer(m.total_bytes));
    (void) json_object_set_new(sample, "ram_used_bytes",
                               json_integer(m.total_bytes - m.available_bytes));
    (void) json_object_set_new(sample, "ram_available_bytes", json_integer(m.available_bytes));
    (void) json_object_set_new(sample, "page_cache_bytes", json_integer(m.cached_bytes));
    (void) json_object_set_new(sample, "swap_total_bytes", json_integer(m.swap_total_bytes));
    (void) json_object_set_new(sample, "swap_used_bytes",
                               json_integer(m.swap_total_bytes - m.swap_free_bytes));
}

int agent_sysfs_sample(agent_sysfs_t *self, json_t *sample, jf_err_t *err)
{
    assert(self && sample);
    (void) json_object_set_new(sample, "t_us", json_integer(jf_clock_wall_us()));
    (void) json_object_set_new(sample, "mono_us", json_integer(jf_clock_mono_us()));
    (void) json_object_set_new(sample, "source", json_string(self->source));
    size_t base = json_object_size(sample);
    s_add_cpus(self, sample);
    s_add_gpu_emc(self, sample);
    s_add_memory(self, sample);
    agent_sysfs_add_temps(self, sample);
    agent_sysfs_add_rails(self, sample);
    agent_sysfs_add_rapl(self, sample);
    if (json_object_size(sample) == base) {
        return jf_err_set(err, -EIO, "sysfs: nothing readable under '%s' and '%s'",
                          self->proc_root, self->sysfs_root);
    }
    return 0;
}
