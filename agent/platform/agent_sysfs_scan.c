/* The directory-scanned part of the sysfs reader: INA3221 rails (jetson-platforms.md §2.5),
 * thermal zones (§2.6) and the host's RAPL counters. hwmonK, iio:deviceK and thermal_zoneN
 * numbers are not stable across boots, so the directories are listed once at creation; names
 * (labels, zone types) are read then too, and only the value files are re-read per sample. */
#include "agent_sysfs_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define S_MV_MAX      INT64_C(100000)   // INA3221 bus voltage is at most 26 V
#define S_MA_MAX      INT64_C(100000)   // |current|; the INA reads slightly negative near 0
#define S_MW_MAX      INT64_C(10000000) // |power|
#define S_MC_MIN      INT64_C(-300000)  // below absolute zero with margin: not a temperature
#define S_MC_MAX      INT64_C(500000)
#define S_ENTRIES_MAX 64                // numbered entries considered in one directory
#define S_RAPL_PREFIX "intel-rapl:"

// Numbers N of the entries "<prefix>N" in dir, ascending, into nums; returns how many.
static size_t s_numbered(const char *dir, const char *prefix, long *nums, size_t max)
{
    DIR *d = opendir(dir);
    size_t n = 0, plen = strlen(prefix);
    for (struct dirent *e = d ? readdir(d) : NULL; e && n < max; e = readdir(d)) {
        char *end = NULL;
        const char *p = e->d_name + plen;
        if (strncmp(e->d_name, prefix, plen) == 0 && *p >= '0' && *p <= '9') {
            long v = strtol(p, &end, 10);
            nums[n] = v;
            n += *end == '\0';
        }
    }
    if (d) {
        (void) closedir(d);
    }
    for (size_t i = 1; i < n; i++) { // insertion sort: a handful of entries
        for (size_t j = i; j > 0 && nums[j - 1] > nums[j]; j--) {
            long t = nums[j];
            nums[j] = nums[j - 1];
            nums[j - 1] = t;
        }
    }
    return n;
}

static int s_open_channel_file(agent_sysfs_t *self, const char *dir, const agent_ina_file_t *f,
                               int chan, const char *what)
{
    if (!f->prefix) {
        return -1;
    }
    char rel[128];
    (void) snprintf(rel, sizeof rel, "%s%d%s", f->prefix, chan, f->suffix);
    return agent_sysfs_open(self, dir, rel, what);
}

// One channel: its label (or the table's name when there is no label file), then its files.
static void s_open_rail(agent_sysfs_t *self, const agent_ina_files_t *files, const char *dir,
                        int chan, const char *table_name)
{
    agent_sysfs_rail_t r = {.voltage_fd = -1, .current_fd = -1, .power_fd = -1};
    char path[PATH_MAX + 128];
    (void) snprintf(path, sizeof path, "%s/%s%d%s", dir, files->label.prefix, chan,
                    files->label.suffix);
    if (!agent_sysfs_read_name(path, r.name, sizeof r.name)) {
        (void) snprintf(r.name, sizeof r.name, "%s", table_name ? table_name : "");
    }
    // "NC" channels are not connected (AGX Orin 1-0041, §8 pitfall 4).
    if (!r.name[0] || strcmp(r.name, "NC") == 0 || self->n_rails >= AGENT_SYSFS_RAILS_MAX) {
        return;
    }
    char what[AGENT_SYSFS_NAME_MAX + 32];
    (void) snprintf(what, sizeof what, "rail %s voltage_mv", r.name);
    r.voltage_fd = s_open_channel_file(self, dir, &files->voltage_mv, chan, what);
    (void) snprintf(what, sizeof what, "rail %s current_ma", r.name);
    r.current_fd = s_open_channel_file(self, dir, &files->current_ma, chan, what);
    (void) snprintf(what, sizeof what, "rail %s power_mw", r.name);
    r.power_fd = s_open_channel_file(self, dir, &files->power_mw, chan, what);
    if (r.voltage_fd >= 0 || r.current_fd >= 0 || r.power_fd >= 0) {
        self->rails[self->n_rails++] = r;
    }
}

static void s_open_ina(agent_sysfs_t *self, const agent_ina_files_t *files,
                       const agent_board_ina_t *ina)
{
    char dir[PATH_MAX];
    long num = 0;
    int n = snprintf(dir, sizeof dir, "%s/bus/i2c/devices/%s%s%s", self->sysfs_root,
                     ina->i2c_dev, files->subdir[0] ? "/" : "", files->subdir);
    if (n < 0 || (size_t) n >= sizeof dir || s_numbered(dir, files->dir_prefix, &num, 1) == 0) {
        char detail[PATH_MAX + 64];
        (void) snprintf(detail, sizeof detail, "%s: no %sN entry", dir, files->dir_prefix);
        agent_sysfs_note_missing(self, "rails", detail);
        return;
    }
    size_t len = (size_t) n;
    (void) snprintf(dir + len, sizeof dir - len, "/%s%ld", files->dir_prefix, num);
    for (int ch = 0; ch < AGENT_BOARD_INA_CHANNELS; ch++) {
        s_open_rail(self, files, dir, files->first_channel + ch, ina->rails[ch]);
    }
}

void agent_sysfs_open_rails(agent_sysfs_t *self)
{
    const agent_board_layout_t *l = self->layout;
    const agent_ina_files_t *files = agent_board_table_ina_files(l->ina_driver);
    for (size_t i = 0; files && i < l->n_ina && i < AGENT_BOARD_INA_MAX; i++) {
        s_open_ina(self, files, &l->ina[i]);
    }
}

static bool s_has_zone(const agent_sysfs_t *self, const char *name)
{
    for (size_t i = 0; i < self->n_zones; i++) {
        if (strcmp(self->zones[i].name, name) == 0) {
            return true;
        }
    }
    return false;
}

static void s_open_zone(agent_sysfs_t *self, const char *dir, long num)
{
    char path[PATH_MAX + 64], type[AGENT_SYSFS_NAME_MAX + 1], rel[64];
    (void) snprintf(path, sizeof path, "%s/thermal_zone%ld/type", dir, num);
    if (!agent_sysfs_read_name(path, type, sizeof type)) {
        agent_sysfs_note_missing(self, "temps_mc", path);
        return;
    }
    agent_sysfs_named_t z = {.fd = -1};
    (void) snprintf(z.name, sizeof z.name, "%s", agent_board_table_zone_name(self->layout, type));
    if (s_has_zone(self, z.name)) {
        agent_sysfs_note_missing(self, "temps_mc duplicate zone name", path);
        return;
    }
    (void) snprintf(rel, sizeof rel, "thermal_zone%ld/temp", num);
    z.fd = agent_sysfs_open(self, dir, rel, "temps_mc");
    if (z.fd >= 0) {
        self->zones[self->n_zones++] = z;
    }
}

void agent_sysfs_open_zones(agent_sysfs_t *self)
{
    if (!self->layout->thermal_dir) {
        return;
    }
    char dir[PATH_MAX];
    long nums[S_ENTRIES_MAX];
    (void) snprintf(dir, sizeof dir, "%s/%s", self->sysfs_root, self->layout->thermal_dir);
    size_t n = s_numbered(dir, "thermal_zone", nums, S_ENTRIES_MAX);
    if (n == 0) {
        agent_sysfs_note_missing(self, "temps_mc", "no thermal_zoneN");
    }
    for (size_t i = 0; i < n && self->n_zones < AGENT_SYSFS_ZONES_MAX; i++) {
        s_open_zone(self, dir, nums[i]);
    }
}

static int s_strcmp(const void *a, const void *b)
{
    return strcmp((const char *) a, (const char *) b);
}

// RAPL zone dirs "intel-rapl:A" and "intel-rapl:A:B", sorted so parents come first.
static size_t s_rapl_dirs(const char *dir, char names[][AGENT_SYSFS_NAME_MAX + 1], size_t max)
{
    DIR *d = opendir(dir);
    size_t n = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e && n < max; e = readdir(d)) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, S_RAPL_PREFIX, strlen(S_RAPL_PREFIX)) == 0 &&
            len <= AGENT_SYSFS_NAME_MAX) {
            memcpy(names[n++], e->d_name, len + 1);
        }
    }
    if (d) {
        (void) closedir(d);
    }
    qsort(names, n, sizeof names[0], s_strcmp);
    return n;
}

// A sub-zone is named after its parent: "package-0/dram"; a top zone by its name: "package-0".
static void s_rapl_key(const char dirs[][AGENT_SYSFS_NAME_MAX + 1],
                       const char labels[][AGENT_SYSFS_NAME_MAX + 1], size_t i, char *key,
                       size_t size)
{
    const char *last = strrchr(dirs[i], ':');
    size_t plen = (size_t) (last - dirs[i]);
    for (size_t p = 0; p < i; p++) {
        if (strlen(dirs[p]) == plen && strncmp(dirs[p], dirs[i], plen) == 0) {
            (void) snprintf(key, size, "%.31s/%.31s", labels[p], labels[i]);
            return;
        }
    }
    (void) snprintf(key, size, "%s", labels[i]);
}

// A zone's wrap range, read once: it does not change while the machine runs. 0 when unreadable.
static int64_t s_rapl_range(const char *dir, const char *zone)
{
    char path[PATH_MAX + 128], text[AGENT_SYSFS_NAME_MAX + 1];
    int64_t uj = 0;
    (void) snprintf(path, sizeof path, "%s/%s/max_energy_range_uj", dir, zone);
    if (!agent_sysfs_read_name(path, text, sizeof text) ||
        agent_sysfs_parse_value(text, 1, INT64_MAX, &uj, NULL) != 0) {
        return 0;
    }
    return uj;
}

void agent_sysfs_open_rapl(agent_sysfs_t *self)
{
    if (!self->layout->rapl_dir) {
        return;
    }
    char dir[PATH_MAX], path[PATH_MAX + 128], rel[AGENT_SYSFS_NAME_MAX + 16];
    char dirs[AGENT_SYSFS_RAPL_MAX][AGENT_SYSFS_NAME_MAX + 1];
    char labels[AGENT_SYSFS_RAPL_MAX][AGENT_SYSFS_NAME_MAX + 1];
    (void) snprintf(dir, sizeof dir, "%s/%s", self->sysfs_root, self->layout->rapl_dir);
    size_t n = s_rapl_dirs(dir, dirs, AGENT_SYSFS_RAPL_MAX);
    if (n == 0) {
        agent_sysfs_note_missing(self, "rapl_energy_uj", "no " S_RAPL_PREFIX "N zone");
    }
    for (size_t i = 0; i < n; i++) {
        (void) snprintf(path, sizeof path, "%s/%s/name", dir, dirs[i]);
        if (!agent_sysfs_read_name(path, labels[i], sizeof labels[i])) {
            (void) snprintf(labels[i], sizeof labels[i], "%s", dirs[i]);
        }
        agent_sysfs_named_t z = {.fd = -1};
        s_rapl_key((const char(*)[AGENT_SYSFS_NAME_MAX + 1]) dirs,
                   (const char(*)[AGENT_SYSFS_NAME_MAX + 1]) labels, i, z.name, sizeof z.name);
        (void) snprintf(rel, sizeof rel, "%s/energy_uj", dirs[i]);
        // energy_uj is root-only on kernels since 5.10 (CVE-2020-8694): then it is absent.
        z.fd = agent_sysfs_open(self, dir, rel, "rapl_energy_uj");
        if (z.fd >= 0) {
            self->rapl_range_uj[self->n_rapl] = s_rapl_range(dir, dirs[i]);
            self->rapl[self->n_rapl++] = z;
        }
    }
}

void agent_sysfs_add_temps(agent_sysfs_t *self, json_t *sample)
{
    json_t *temps = self->n_zones ? json_object() : NULL;
    for (size_t i = 0; temps && i < self->n_zones; i++) {
        int64_t mc = 0;
        // A powered-down sensor reads -256 C or fails to read (§2.6): left out, not 0.
        if (agent_sysfs_read_i64(self->zones[i].fd, S_MC_MIN, S_MC_MAX, &mc) &&
            mc > AGENT_SYSFS_TEMP_OFFLINE_MC) {
            (void) json_object_set_new(temps, self->zones[i].name, json_integer(mc));
        }
    }
    if (temps && json_object_size(temps) > 0) {
        (void) json_object_set_new(sample, "temps_mc", temps);
    } else {
        json_decref(temps);
    }
}

// mV x mA / 1000 = mW, rounded half away from zero.
static int64_t s_power_mw(int64_t mv, int64_t ma)
{
    int64_t uw = mv * ma;
    return uw >= 0 ? (uw + 500) / 1000 : -((-uw + 500) / 1000);
}

// One rail's object with the members that could be read, or NULL when none could.
static json_t *s_rail(const agent_sysfs_rail_t *r, int64_t *ret_power_mw, bool *ret_has_power)
{
    int64_t mv = 0, ma = 0, mw = 0;
    bool has_v = agent_sysfs_read_i64(r->voltage_fd, 0, S_MV_MAX, &mv);
    bool has_i = agent_sysfs_read_i64(r->current_fd, -S_MA_MAX, S_MA_MAX, &ma);
    // The IIO driver gives power; hwmon does not, and V x I is what jetson_stats computes.
    bool has_p = r->power_fd >= 0 ? agent_sysfs_read_i64(r->power_fd, -S_MW_MAX, S_MW_MAX, &mw)
                                   : has_v && has_i;
    mw = r->power_fd >= 0 ? mw : s_power_mw(mv, ma);
    if (!has_v && !has_i && !has_p) {
        return NULL;
    }
    json_t *o = json_pack("{s:s}", "name", r->name);
    if (o && has_v) {
        (void) json_object_set_new(o, "voltage_mv", json_integer(mv));
    }
    if (o && has_i) {
        (void) json_object_set_new(o, "current_ma", json_integer(ma));
    }
    if (o && has_p) {
        (void) json_object_set_new(o, "power_mw", json_integer(mw));
    }
    if (has_p) {
        *ret_power_mw = mw;
    }
    *ret_has_power = has_p;
    return o;
}

bool agent_sysfs_has_power(const agent_sysfs_t *self)
{
    for (size_t i = 0; i < self->n_rails; i++) {
        const agent_sysfs_rail_t *r = &self->rails[i];
        if (r->power_fd >= 0 || (r->voltage_fd >= 0 && r->current_fd >= 0)) {
            return true;
        }
    }
    return false;
}

void agent_sysfs_add_rails(agent_sysfs_t *self, json_t *sample)
{
    json_t *rails = self->n_rails ? json_array() : NULL;
    const char *input = self->layout->input_rail;
    int64_t input_mw = 0;
    bool has_input = false;
    for (size_t i = 0; rails && i < self->n_rails; i++) {
        int64_t mw = 0;
        bool has_p = false;
        json_t *o = s_rail(&self->rails[i], &mw, &has_p);
        if (!o) {
            continue;
        }
        (void) json_array_append_new(rails, o);
        if (input && has_p && strcmp(self->rails[i].name, input) == 0) {
            input_mw = mw;
            has_input = true;
        }
    }
    if (rails && json_array_size(rails) > 0) {
        (void) json_object_set_new(sample, "rails", rails);
    } else {
        json_decref(rails);
    }
    if (has_input) {
        (void) json_object_set_new(sample, "input_power_mw", json_integer(input_mw));
    }
}

// Each readable zone's counter, and beside it the wrap range of those whose range is known, so
// that whoever turns the counters into energy (agent_energy_counter) can unwrap them.
void agent_sysfs_add_rapl(agent_sysfs_t *self, json_t *sample)
{
    json_t *rapl = self->n_rapl ? json_object() : NULL;
    json_t *range = self->n_rapl ? json_object() : NULL;
    for (size_t i = 0; rapl && range && i < self->n_rapl; i++) {
        int64_t uj = 0;
        if (agent_sysfs_read_i64(self->rapl[i].fd, 0, INT64_MAX, &uj)) {
            (void) json_object_set_new(rapl, self->rapl[i].name, json_integer(uj));
            if (self->rapl_range_uj[i] > 0) {
                (void) json_object_set_new(range, self->rapl[i].name,
                                           json_integer(self->rapl_range_uj[i]));
            }
        }
    }
    if (rapl && json_object_size(rapl) > 0) {
        (void) json_object_set_new(sample, "rapl_energy_uj", rapl);
        rapl = NULL;
    }
    if (range && json_object_size(range) > 0 && !rapl) {
        (void) json_object_set_new(sample, "rapl_max_energy_range_uj", range);
        range = NULL;
    }
    json_decref(rapl);
    json_decref(range);
}
