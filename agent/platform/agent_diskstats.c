/* /proc/diskstats reader for one device (Documentation/admin-guide/iostats.rst); the `disk`
 * object of docs/telemetry.md. */
#include "agent_diskstats.h"

#include "jf_parse.h"
#include "jf_units.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_FIELDS_MAX     32   // fields checked per line; the kernel prints 14, 18 or 20
#define S_NUMBER_MAX     20   // digits of the largest u64 the kernel prints
#define S_BUF_START      8192 // initial read buffer; grows by doubling up to the file cap
#define S_F_READS        3    // 0-based field indexes (iostats.rst numbers them from 1 after name)
#define S_F_READ_SECTORS 5
#define S_F_READ_TIME_MS 6
#define S_F_IN_FLIGHT    11

struct agent_diskstats {
    int fd;                                    // <proc_root>/diskstats, O_RDONLY; -1 if not open
    char *buf;                                 // owned: the last read, NUL-terminated
    size_t cap;                                // bytes allocated for buf
    char device[AGENT_DISKSTATS_NAME_MAX + 1]; // the device this object reads
    char path[PATH_MAX];                       // for messages
};

typedef struct s_field {
    const char *p; // borrowed from the text; not NUL-terminated
    size_t len;
} s_field_t;

// Splits [p, eol) at runs of blanks into at most S_FIELDS_MAX fields; returns how many there are
// (also counting those past the cap).
static size_t s_split(const char *p, const char *eol, s_field_t *fields)
{
    size_t n = 0;
    while (p < eol) {
        while (p < eol && (*p == ' ' || *p == '\t')) {
            p++;
        }
        const char *start = p;
        while (p < eol && *p != ' ' && *p != '\t') {
            p++;
        }
        if (p > start && n < S_FIELDS_MAX) {
            fields[n] = (s_field_t){start, (size_t) (p - start)};
        }
        n += p > start;
    }
    return n;
}

static bool s_field_is(const s_field_t *f, const char *s)
{
    return f->len == strlen(s) && memcmp(f->p, s, f->len) == 0;
}

// A counter: a plain decimal in [0, INT64_MAX] (no sign, no blanks; jf_parse_i64 does the range).
static int s_counter(const s_field_t *f, int64_t *ret, jf_err_t *err)
{
    char buf[S_NUMBER_MAX + 2] = {0};
    bool digits = f->len > 0 && f->len <= S_NUMBER_MAX;
    for (size_t i = 0; digits && i < f->len; i++) {
        digits = f->p[i] >= '0' && f->p[i] <= '9';
    }
    if (!digits) {
        return jf_err_set(err, -EINVAL, "expected a non-negative counter, got '%.*s'",
                          (int) (f->len < 32 ? f->len : 32), f->p);
    }
    memcpy(buf, f->p, f->len);
    return jf_parse_i64(buf, 0, INT64_MAX, ret, err);
}

// Converts the checked counters of one line into the sample's units.
static int s_fill(const int64_t *v, agent_disk_sample_t *s, jf_err_t *err)
{
    if (v[S_F_READ_SECTORS] > INT64_MAX / AGENT_DISKSTATS_SECTOR_BYTES ||
        v[S_F_READ_TIME_MS] > INT64_MAX / JF_US_PER_MS) {
        return jf_err_set(err, -EINVAL, "sectors read or time reading is too large");
    }
    s->reads = v[S_F_READS];
    s->read_bytes = v[S_F_READ_SECTORS] * AGENT_DISKSTATS_SECTOR_BYTES;
    s->read_time_us = v[S_F_READ_TIME_MS] * JF_US_PER_MS;
    s->in_flight = v[S_F_IN_FLIGHT];
    return 0;
}

static int s_parse_line(const s_field_t *f, size_t n, agent_disk_sample_t *s, jf_err_t *err)
{
    if (n < AGENT_DISKSTATS_FIELDS_MIN) {
        return jf_err_set(err, -EINVAL, "expected at least %d fields, got %zu",
                          AGENT_DISKSTATS_FIELDS_MIN, n);
    }
    int64_t v[S_FIELDS_MAX] = {0};
    size_t checked = n < S_FIELDS_MAX ? n : S_FIELDS_MAX;
    for (size_t i = 0; i < checked; i++) {
        // The name is field 2; every other field, major and minor included, is a number.
        int rc = i != 2 ? s_counter(&f[i], &v[i], err) : 0;
        if (rc != 0) {
            (void) jf_err_prefix(err, "field %zu", i + 1); // keeps rc; err may be NULL
            return rc;
        }
    }
    return s_fill(v, s, err);
}

int agent_diskstats_parse(const char *text, const char *device, agent_disk_sample_t *ret_sample,
                          jf_err_t *err)
{
    if (strlen(device) > AGENT_DISKSTATS_NAME_MAX) {
        return jf_err_set(err, -EINVAL, "diskstats: device name '%.40s' is too long", device);
    }
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        eol = eol ? eol : p + strlen(p);
        lineno++;
        s_field_t f[S_FIELDS_MAX] = {0};
        size_t n = s_split(p, eol, f);
        if (n >= 3 && s_field_is(&f[2], device)) {
            agent_disk_sample_t s = {0};
            (void) snprintf(s.device, sizeof s.device, "%s", device);
            int rc = s_parse_line(f, n, &s, err);
            if (rc != 0) {
                (void) jf_err_prefix(err, "diskstats:%d: device '%s'", lineno, device);
                return rc;
            }
            *ret_sample = s;
            return 0;
        }
        p = *eol ? eol + 1 : eol;
    }
    return jf_err_set(err, -ENOENT, "diskstats: no line for device '%s'", device);
}

// Kernel block device names: letters, digits and . _ - ! (a '/' in the name becomes '!').
static bool s_is_device_name(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > AGENT_DISKSTATS_NAME_MAX || name[0] == '.') {
        return false;
    }
    return strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-!") ==
           len;
}

// Doubles the read buffer, up to the file cap.
static int s_grow(agent_diskstats_t *self, jf_err_t *err)
{
    size_t cap = self->cap * 2;
    if (cap > AGENT_DISKSTATS_FILE_MAX_BYTES + 1) {
        return jf_err_set(err, -EFBIG, "%s: larger than %d bytes", self->path,
                          AGENT_DISKSTATS_FILE_MAX_BYTES);
    }
    char *buf = realloc(self->buf, cap);
    if (!buf) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory", self->path);
    }
    self->buf = buf;
    self->cap = cap;
    return 0;
}

// Reads the whole file from offset 0 into self->buf. pread on the one descriptor: /proc files
// regenerate their text on each read from offset 0, so no reopen is needed.
static int s_read_all(agent_diskstats_t *self, jf_err_t *err)
{
    size_t off = 0;
    for (;;) {
        int rc = off + 1 == self->cap ? s_grow(self, err) : 0;
        if (rc != 0) {
            return rc;
        }
        ssize_t n = pread(self->fd, self->buf + off, self->cap - 1 - off, (off_t) off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return jf_err_set(err, -EIO, "%s: read failed: %s", self->path, strerror(errno));
        }
        if (n == 0) {
            break;
        }
        off += (size_t) n;
    }
    self->buf[off] = '\0';
    return 0;
}

agent_diskstats_t *agent_diskstats_new(const char *proc_root, const char *device, jf_err_t *err)
{
    if (!s_is_device_name(device)) {
        jf_err_set(err, -EINVAL, "diskstats: '%.40s' is not a block device name", device);
        return NULL;
    }
    agent_diskstats_t *self = calloc(1, sizeof *self);
    if (!self || !(self->buf = malloc(S_BUF_START))) {
        jf_err_set(err, -ENOMEM, "diskstats: out of memory");
        goto fail_destroy;
    }
    self->fd = -1;
    self->cap = S_BUF_START;
    (void) snprintf(self->device, sizeof self->device, "%s", device);
    int len = snprintf(self->path, sizeof self->path, "%s/diskstats", proc_root);
    if (len < 0 || (size_t) len >= sizeof self->path) {
        jf_err_set(err, -ENAMETOOLONG, "diskstats: proc root '%.200s' is too long", proc_root);
        goto fail_destroy;
    }
    self->fd = open(self->path, O_RDONLY | O_CLOEXEC);
    if (self->fd < 0) {
        jf_err_set(err, -errno, "%s: cannot open: %s", self->path, strerror(errno));
        goto fail_destroy;
    }
    agent_disk_sample_t first = {0};
    if (agent_diskstats_read(self, &first, err) != 0) {
        goto fail_destroy;
    }
    return self;
fail_destroy:
    agent_diskstats_destroy(&self);
    return NULL;
}

void agent_diskstats_destroy(agent_diskstats_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    agent_diskstats_t *self = *self_p;
    if (self->fd >= 0) {
        (void) close(self->fd); // read-only: nothing to flush, nothing to report
    }
    free(self->buf);
    free(self);
    *self_p = NULL;
}

int agent_diskstats_read(agent_diskstats_t *self, agent_disk_sample_t *ret_sample, jf_err_t *err)
{
    int rc = s_read_all(self, err);
    if (rc != 0) {
        return rc;
    }
    agent_disk_sample_t s = {0};
    rc = agent_diskstats_parse(self->buf, self->device, &s, err);
    if (rc != 0) {
        return rc;
    }
    s.mono_us = jf_clock_mono_us();
    *ret_sample = s;
    return 0;
}

int agent_diskstats_rate(const agent_disk_sample_t *before, const agent_disk_sample_t *after,
                         agent_disk_rate_t *ret_rate, jf_err_t *err)
{
    if (strcmp(before->device, after->device) != 0) {
        return jf_err_set(err, -EINVAL, "diskstats: readings of '%s' and '%s' do not compare",
                          before->device, after->device);
    }
    int64_t dt_us = after->mono_us - before->mono_us;
    if (dt_us <= 0) {
        return jf_err_set(err, -EINVAL, "diskstats: '%s': no time passed between readings",
                          after->device);
    }
    int64_t reads = after->reads - before->reads;
    int64_t bytes = after->read_bytes - before->read_bytes;
    int64_t time_us = after->read_time_us - before->read_time_us;
    if (reads < 0 || bytes < 0 || time_us < 0) {
        return jf_err_set(err, -ERANGE, "diskstats: '%s': a counter went backwards", after->device);
    }
    double dt_s = (double) dt_us / (double) JF_US_PER_S;
    *ret_rate = (agent_disk_rate_t){
        .interval_us = dt_us,
        .reads_per_s = (double) reads / dt_s,
        .read_bytes_per_s = (double) bytes / dt_s,
        .read_await_us = reads > 0 ? (double) time_us / (double) reads : 0.0,
    };
    return 0;
}

json_t *agent_diskstats_to_json(const agent_disk_sample_t *sample)
{
    return json_pack("{s:s, s:I, s:I, s:I, s:I}", "device", sample->device, "reads",
                     (json_int_t) sample->reads, "read_bytes", (json_int_t) sample->read_bytes,
                     "read_time_us", (json_int_t) sample->read_time_us, "in_flight",
                     (json_int_t) sample->in_flight);
}
