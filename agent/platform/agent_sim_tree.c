/* The fake board of a sim platform: writes the family's sysfs/proc/etc layout into a private
 * temporary directory and rewrites its clocks, rails and thermal zones (agent_sim_tree.h). */
#include "agent_sim_tree.h"

#include "agent_board_table.h"
#include "agent_nvpmodel.h"
#include "agent_sim_confs.h" // generated: share/nvpmodel/ (cmake/jf_embed_confs.cmake)
#include "agent_sim_load.h"
#include "sim_thermal.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define S_PATH_MAX (PATH_MAX + 256)
#define S_TREE_FDS 16 // nftw's open directories while removing the tree

typedef struct s_rail {
    char name[SIM_RAIL_NAME_MAX + 1];
    double idle_mw;
    char voltage[S_PATH_MAX];
    char current[S_PATH_MAX];
    char power[S_PATH_MAX]; // "" when the driver has no power file
    double mw;              // power written last, mW
} s_rail_t;

typedef struct s_zone {
    char temp[S_PATH_MAX]; // the zone's temp file, relative to the sysfs root
    size_t param;          // its index in board.zones (and the thermal state)
    int64_t written_mc;    // value written last (INT64_MIN: none yet)
} s_zone_t;

struct agent_sim_tree {
    char dir[PATH_MAX];
    char sysfs[PATH_MAX];
    char proc[PATH_MAX];
    char etc[PATH_MAX];
    const agent_board_layout_t *layout; // static
    int n_cpus;
    size_t n_rails;
    s_rail_t rails[SIM_RAILS_MAX];
    sim_board_params_t board; // a copy: the thermal state borrows its zones
    sim_thermal_t thermal;    // the zones' temperatures, in modelled time
    size_t n_zones;           // the layout's zones, thermal_zone0..n_zones-1
    s_zone_t zones[SIM_ZONES_MAX];
    agent_sim_load_t load;    // CPU and GPU load counters, in modelled time
    int64_t gpu_load_written; // GPU load file's value written last (-1: none yet)
    int64_t gpu_mode_hz;      // the operating point's GPU clock (0: none set yet), Hz
    int64_t gpu_written_hz;   // the GPU clock written last (0: none yet), Hz
};

// The L4T release line written for each JetPack generation of the table's newest layout.
static const struct {
    int jetpack;
    const char *line;
} s_releases[] = {
    {4, "# R32 (release), REVISION: 7.4, GCID: 33514132, BOARD: t210ref, EABI: aarch64, "
        "DATE: Fri Jun  9 04:25:08 UTC 2023\n"},
    {5, "# R35 (release), REVISION: 4.1, GCID: 33958178, BOARD: t186ref, EABI: aarch64, "
        "DATE: Tue Aug  1 19:57:35 UTC 2023\n"},
    {6, "# R36 (release), REVISION: 4.0, GCID: 37537400, BOARD: generic, EABI: aarch64, "
        "DATE: Fri Sep 13 04:36:44 UTC 2024\n"},
};

// Each family's nvpmodel conf: the text of agent/share/nvpmodel/<family>.conf, built from
// ../shared/reference/jetson-platforms.md §4.4, embedded at build time.
static const char *const s_confs[JF_BOARD_TYPE_COUNT] = {
    [JF_BOARD_AGX_XAVIER] = agent_sim_conf_agx_xavier,
    [JF_BOARD_XAVIER_NX] = agent_sim_conf_xavier_nx,
    [JF_BOARD_NANO] = agent_sim_conf_nano,
    [JF_BOARD_ORIN_AGX] = agent_sim_conf_orin_agx,
    [JF_BOARD_ORIN_NANO] = agent_sim_conf_orin_nano,
};

static int s_mkdirs(const char *path, jf_err_t *err)
{
    char buf[S_PATH_MAX];
    (void) snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') {
            continue;
        }
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
            return jf_err_set(err, -errno, "sim: cannot create '%.300s': %s", buf, strerror(errno));
        }
        *p = '/';
    }
    if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
        return jf_err_set(err, -errno, "sim: cannot create '%.300s': %s", buf, strerror(errno));
    }
    return 0;
}

// Writes len bytes of text at offset 0 of root/rel (creating it and its directories the first
// time), without truncating: a value file keeps its inode and its fixed width. An update opens
// the file it finds, so the tree's values cost one open, write and close each, not a mkdir of
// every directory on the path as well.
static int s_write(const char *root, const char *rel, const char *text, size_t len, jf_err_t *err)
{
    char path[S_PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/%s", root, rel);
    int rc = 0;
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        rc = s_mkdirs(path, err);
        *slash = '/';
        fd = rc == 0 ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
    }
    if (rc == 0 && (fd < 0 || pwrite(fd, text, len, 0) != (ssize_t) len)) {
        rc = jf_err_set(err, -errno, "sim: cannot write '%.300s': %s", path, strerror(errno));
    }
    if (fd >= 0 && close(fd) != 0 && rc == 0) {
        rc = jf_err_set(err, -errno, "sim: cannot write '%.300s': %s", path, strerror(errno));
    }
    return rc;
}

static int s_write_text(const char *root, const char *rel, const char *text, jf_err_t *err)
{
    return s_write(root, rel, text, strlen(text), err);
}

// A value file: the number, blanks, a newline; always AGENT_SIM_TREE_VALUE_LEN bytes.
static int s_write_value(const char *root, const char *rel, long long value, jf_err_t *err)
{
    char text[AGENT_SIM_TREE_VALUE_LEN + 1];
    int n = snprintf(text, sizeof text, "%-*lld\n", AGENT_SIM_TREE_VALUE_LEN - 1, value);
    if (n != AGENT_SIM_TREE_VALUE_LEN) {
        return jf_err_set(err, -ERANGE, "sim: value %lld does not fit the %d bytes of '%.300s'",
                          value, AGENT_SIM_TREE_VALUE_LEN, rel);
    }
    return s_write(root, rel, text, AGENT_SIM_TREE_VALUE_LEN, err);
}

static int s_write_identity(agent_sim_tree_t *self, jf_board_type_t type, jf_err_t *err)
{
    const agent_board_ident_t *id = agent_board_table_ident(type);
    char model[128], compat[128];
    (void) snprintf(model, sizeof model, "NVIDIA %s (simulated)", id->label);
    int n = snprintf(compat, sizeof compat, "nvidia,%s-0000", id->compat[0]);
    n += 1 + snprintf(compat + n + 1, sizeof compat - (size_t) n - 1, "%s", id->soc);
    int rc = s_write(self->proc, "device-tree/model", model, strlen(model) + 1, err);
    rc = rc ? rc : s_write(self->proc, "device-tree/compatible", compat, (size_t) n + 1, err);
    for (size_t i = 0; rc == 0 && i < sizeof s_releases / sizeof s_releases[0]; i++) {
        if (s_releases[i].jetpack == self->layout->jetpack_max) {
            rc = s_write_text(self->etc, "nv_tegra_release", s_releases[i].line, err);
        }
    }
    return rc;
}

// /proc/stat from the load counters (advanced by agent_sim_tree_advance and _set_load).
static int s_write_stat(agent_sim_tree_t *self, jf_err_t *err)
{
    char text[AGENT_SIM_LOAD_STAT_MAX];
    size_t len = agent_sim_load_stat_text(&self->load, text, sizeof text);
    if (len == 0) {
        return jf_err_set(err, -ERANGE, "sim: /proc/stat of %d cores does not fit %d bytes",
                          self->n_cpus, AGENT_SIM_LOAD_STAT_MAX);
    }
    return s_write(self->proc, "stat", text, len, err);
}

// The GPU's load file (per mille), where the layout has one, if it changed.
static int s_write_gpu_load(agent_sim_tree_t *self, jf_err_t *err)
{
    int64_t permille = agent_sim_load_gpu_permille(&self->load);
    const char *rel = self->layout->gpu_load[0];
    if (!rel || permille == self->gpu_load_written) {
        return 0;
    }
    int rc = s_write_value(self->sysfs, rel, (long long) permille, err);
    self->gpu_load_written = rc == 0 ? permille : -1;
    return rc;
}

// /proc/stat and the GPU load of an idle board, and /proc/meminfo of the board's RAM with the
// OS's share in use.
static int s_write_proc(agent_sim_tree_t *self, const sim_board_params_t *b, jf_err_t *err)
{
    char text[4096];
    agent_sim_load_init(&self->load, self->n_cpus);
    self->gpu_load_written = -1;
    int rc = s_write_stat(self, err);
    rc = rc ? rc : s_write_gpu_load(self, err);
    long long total_kb = llround(b->ram_bytes / 1024.0);
    long long avail_kb = llround((b->ram_bytes - b->os_bytes) / 1024.0);
    (void) snprintf(text, sizeof text,
                    "MemTotal:       %lld kB\nMemFree:        %lld kB\nMemAvailable:   %lld kB\n"
                    "Buffers:        0 kB\nCached:         0 kB\nSwapCached:     0 kB\n"
                    "SwapTotal:      0 kB\nSwapFree:       0 kB\n",
                    total_kb, avail_kb, avail_kb);
    return rc ? rc : s_write_text(self->proc, "meminfo", text, err);
}

static const sim_rail_params_t *s_rail_params(const sim_board_params_t *b, const char *name)
{
    for (size_t i = 0; i < b->n_rails; i++) {
        if (strcmp(b->rails[i].name, name) == 0) {
            return &b->rails[i];
        }
    }
    return NULL;
}

static void s_file(char *out, const char *dir, const agent_ina_file_t *f, int chan)
{
    out[0] = '\0';
    if (f->prefix) {
        int n = snprintf(out, S_PATH_MAX, "%s/%s%d%s", dir, f->prefix, chan, f->suffix);
        if (n < 0 || n >= S_PATH_MAX) {
            out[0] = '\0'; // cannot happen: dir is a short relative path; never a cut-off one
        }
    }
}

// One INA3221: its driver directory, and a label and value files for each channel the model
// has a rail for (a channel it does not know stays absent, as on a board without it).
static int s_write_ina(agent_sim_tree_t *self, const sim_board_params_t *b,
                       const agent_board_ina_t *ina, const agent_sim_tree_opts_t *o, jf_err_t *err)
{
    const agent_ina_files_t *f = agent_board_table_ina_files(self->layout->ina_driver);
    char dir[S_PATH_MAX];
    (void) snprintf(dir, sizeof dir, "bus/i2c/devices/%s%s%s/%s0", ina->i2c_dev,
                    f->subdir[0] ? "/" : "", f->subdir, f->dir_prefix);
    int rc = 0;
    for (int ch = 0; rc == 0 && ch < AGENT_BOARD_INA_CHANNELS; ch++) {
        const sim_rail_params_t *p = s_rail_params(b, ina->rails[ch]);
        if (!p || self->n_rails >= SIM_RAILS_MAX) {
            continue;
        }
        s_rail_t *r = &self->rails[self->n_rails++];
        int chan = f->first_channel + ch;
        (void) snprintf(r->name, sizeof r->name, "%s", p->name);
        r->idle_mw = p->idle_mw * o->factors.idle_power;
        r->mw = r->idle_mw;
        char label[S_PATH_MAX], text[SIM_RAIL_NAME_MAX + 2];
        s_file(label, dir, &f->label, chan);
        s_file(r->voltage, dir, &f->voltage_mv, chan);
        s_file(r->current, dir, &f->current_ma, chan);
        s_file(r->power, dir, &f->power_mw, chan);
        (void) snprintf(text, sizeof text, "%s\n", p->name);
        rc = s_write_text(self->sysfs, label, text, err);
    }
    return rc;
}

static int s_write_layout(agent_sim_tree_t *self, const sim_board_params_t *b,
                          const agent_sim_tree_opts_t *o, jf_err_t *err)
{
    char text[32];
    (void) snprintf(text, sizeof text, "0-%d\n", self->n_cpus - 1);
    int rc = s_write_text(self->sysfs, "devices/system/cpu/present", text, err);
    for (size_t i = 0; rc == 0 && i < self->layout->n_ina; i++) {
        rc = s_write_ina(self, b, &self->layout->ina[i], o, err);
    }
    return rc;
}

// Zone n of the layout as thermal_zone<n> with its type file, tied to its parameters.
static int s_add_zone(agent_sim_tree_t *self, size_t n, jf_err_t *err)
{
    const agent_board_layout_t *l = self->layout;
    const char *type = l->zones[n].type;
    size_t i = 0;
    while (i < self->board.n_zones && strcmp(self->board.zones[i].type, type) != 0) {
        i++;
    }
    if (i == self->board.n_zones || self->n_zones >= SIM_ZONES_MAX) {
        return jf_err_set(err, -EINVAL, "sim: no thermal parameters for zone '%s' of %s", type,
                          jf_board_type_name(l->type));
    }
    s_zone_t *z = &self->zones[self->n_zones++];
    z->param = i;
    z->written_mc = INT64_MIN;
    char rel[S_PATH_MAX], text[SIM_ZONE_TYPE_MAX + 2];
    (void) snprintf(z->temp, sizeof z->temp, "%s/thermal_zone%zu/temp", l->thermal_dir, n);
    (void) snprintf(rel, sizeof rel, "%s/thermal_zone%zu/type", l->thermal_dir, n);
    (void) snprintf(text, sizeof text, "%s\n", type);
    return s_write_text(self->sysfs, rel, text, err);
}

// The layout's thermal zones (agent_board_table.c) as thermal_zone0.. in its order. The
// parameters must list exactly these zones, modelled or offline; -EINVAL if not.
static int s_write_zones(agent_sim_tree_t *self, jf_err_t *err)
{
    const agent_board_layout_t *l = self->layout;
    int rc = 0;
    size_t n = 0;
    for (; rc == 0 && l->thermal_dir && n < AGENT_BOARD_ZONES_MAX && l->zones[n].type; n++) {
        rc = s_add_zone(self, n, err);
    }
    if (rc == 0 && n != self->board.n_zones) {
        rc = jf_err_set(err, -EINVAL,
                        "sim: the %s parameters list %zu thermal zones, the sysfs layout %zu",
                        jf_board_type_name(l->type), self->board.n_zones, n);
    }
    return rc;
}

// The board's heating power (docs/simulator.md, "Thermal"): its input rail where the family has
// one; else the sum of its rails, which are then separate parts of the module.
static double s_heating_mw(const agent_sim_tree_t *self)
{
    const char *input = self->layout->input_rail;
    double sum_mw = 0.0;
    for (size_t i = 0; i < self->n_rails; i++) {
        if (input && strcmp(self->rails[i].name, input) == 0) {
            return self->rails[i].mw;
        }
        sum_mw += self->rails[i].mw;
    }
    return sum_mw;
}

// 0 if the conf has exactly the model's modes (ids and names, in order), else -EINVAL: the model
// could not produce the operating point of a mode the conf lists, or the reverse.
static int s_check_conf_modes(const agent_nvpmodel_t *conf, const sim_board_params_t *b,
                              jf_board_type_t type, jf_err_t *err)
{
    size_t n = agent_nvpmodel_n_modes(conf);
    for (size_t i = 0; i < n || i < b->n_modes; i++) {
        const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode_at(conf, i);
        const sim_mode_params_t *p = i < b->n_modes ? &b->modes[i] : NULL;
        if (!m || !p || m->id != p->id || strcmp(m->name, p->name) != 0) {
            return jf_err_set(err, -EINVAL,
                              "sim: the %s nvpmodel conf's mode #%zu (%d %s) differs from the "
                              "model's (%d %s)",
                              jf_board_type_name(type), i, m ? m->id : -1, m ? m->name : "none",
                              p ? p->id : -1, p ? p->name : "none");
        }
    }
    return 0;
}

// <etc>/nvpmodel.conf in NVIDIA's format, the family's conf, after checking that it parses and
// lists the model's modes, so that the jetson platform reads the board's modes from it.
static int s_write_conf(agent_sim_tree_t *self, jf_board_type_t type, const sim_board_params_t *b,
                        jf_err_t *err)
{
    const char *text = s_confs[type];
    agent_nvpmodel_t *conf = agent_nvpmodel_parse(text, strlen(text), "sim nvpmodel.conf", err);
    int rc = conf ? s_check_conf_modes(conf, b, type, err) : -EINVAL;
    agent_nvpmodel_destroy(&conf);
    return rc ? rc : s_write_text(self->etc, "nvpmodel.conf", text, err);
}

static int s_remove_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void) sb;
    (void) flag;
    (void) ftw;
    (void) remove(path); // best effort: what cannot go stays for the system's tmp cleaner
    return 0;
}

void agent_sim_tree_destroy(agent_sim_tree_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    if ((*self_p)->dir[0]) {
        (void) nftw((*self_p)->dir, s_remove_one, S_TREE_FDS, FTW_DEPTH | FTW_PHYS);
    }
    free(*self_p);
    *self_p = NULL;
}

static int s_make_dir(agent_sim_tree_t *self, const char *tmp_dir, jf_err_t *err)
{
    const char *base = tmp_dir ? tmp_dir : getenv("TMPDIR");
    (void) snprintf(self->dir, sizeof self->dir, "%.900s/jetfleet-sim-XXXXXX",
                    base && base[0] ? base : "/tmp");
    if (!mkdtemp(self->dir)) {
        int e = errno;
        self->dir[0] = '\0';
        return jf_err_set(err, -e, "sim: cannot create a directory in '%.300s': %s",
                          base && base[0] ? base : "/tmp", strerror(e));
    }
    (void) snprintf(self->sysfs, sizeof self->sysfs, "%.1000s/sys", self->dir);
    (void) snprintf(self->proc, sizeof self->proc, "%.1000s/proc", self->dir);
    (void) snprintf(self->etc, sizeof self->etc, "%.1000s/etc", self->dir);
    return 0;
}

agent_sim_tree_t *agent_sim_tree_new(const agent_sim_tree_opts_t *opts, jf_err_t *err)
{
    const sim_board_params_t *b = (unsigned) opts->type < JF_BOARD_TYPE_COUNT
                                      ? &sim_model_params(opts->model)->boards[opts->type]
                                      : NULL;
    const agent_board_layout_t *all[8] = {NULL};
    const jf_board_family_t *fam = jf_board_family(opts->type);
    if (!b || !b->present || !fam || fam->n_modes == 0 || !s_confs[opts->type] ||
        agent_board_table_layouts(opts->type, all, 8) == 0) {
        jf_err_set(err, -EINVAL, "sim: no parameters or sysfs layout for board type %s",
                   jf_board_type_name(opts->type));
        return NULL;
    }
    agent_sim_tree_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "sim: out of memory");
        return NULL;
    }
    self->layout = all[0];
    self->n_cpus = b->cpu_cores;
    self->board = *b;
    sim_op_t op = {0};
    int rc = s_make_dir(self, opts->tmp_dir, err);
    rc = rc ? rc : s_write_identity(self, opts->type, err);
    rc = rc ? rc : s_write_conf(self, opts->type, b, err);
    rc = rc ? rc : s_write_proc(self, b, err);
    rc = rc ? rc : s_write_layout(self, b, opts, err);
    rc = rc ? rc : s_write_zones(self, err);
    rc = rc ? rc : sim_model_mode_op(opts->model, opts->type, fam->modes[0].id, &op, err);
    rc = rc ? rc : agent_sim_tree_set_op(self, &op, err);
    if (rc == 0) {
        sim_thermal_init(&self->thermal, &self->board, s_heating_mw(self), 0); // idle for long
        rc = agent_sim_tree_set_power(self, NULL, 0, err);
    }
    if (rc != 0) {
        agent_sim_tree_destroy(&self);
    }
    return self;
}

const char *agent_sim_tree_sysfs_root(const agent_sim_tree_t *self)
{
    return self->sysfs;
}

const char *agent_sim_tree_proc_root(const agent_sim_tree_t *self)
{
    return self->proc;
}

const char *agent_sim_tree_etc_root(const agent_sim_tree_t *self)
{
    return self->etc;
}

// The GPU clock in force: the operating point's, or with simulated throttling on
// (thermal.throttle, docs/simulator.md) and any zone at or above its temperature, that clock
// times throttle_gpu_pct. Written where it changed.
static int s_write_gpu_clock(agent_sim_tree_t *self, jf_err_t *err)
{
    if (self->gpu_mode_hz <= 0) {
        return 0; // no operating point yet
    }
    // While the tree is being made the thermal state is not there yet: not hot.
    bool hot = false;
    for (size_t i = 0; self->thermal.board && self->board.throttle_c > 0.0 && i < self->n_zones;
         i++) {
        hot = hot || (double) sim_thermal_zone_mc(&self->thermal, self->zones[i].param) >=
                         self->board.throttle_c * 1000.0;
    }
    int64_t hz = hot ? llround((double) self->gpu_mode_hz * self->board.throttle_gpu_pct / 100.0)
                     : self->gpu_mode_hz;
    if (hz == self->gpu_written_hz) {
        return 0;
    }
    char rel[PATH_MAX];
    (void) snprintf(rel, sizeof rel, "%s/cur_freq", self->layout->gpu_devfreq_dir);
    int rc = s_write_value(self->sysfs, rel, (long long) hz, err);
    self->gpu_written_hz = rc == 0 ? hz : 0;
    return rc;
}

int agent_sim_tree_set_op(agent_sim_tree_t *self, const sim_op_t *op, jf_err_t *err)
{
    const agent_board_layout_t *l = self->layout;
    char text[32], rel[PATH_MAX];
    (void) snprintf(text, sizeof text, op->n_cores > 1 ? "0-%d\n" : "0\n", op->n_cores - 1);
    int rc = s_write_text(self->sysfs, "devices/system/cpu/online", text, err);
    agent_sim_load_set_online(&self->load, op->n_cores);
    for (int i = 0; rc == 0 && i < self->n_cpus; i++) {
        (void) snprintf(rel, sizeof rel, "devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", i);
        rc = s_write_value(self->sysfs, rel, (long long) (op->cpu_hz / 1000), err);
    }
    self->gpu_mode_hz = op->gpu_hz;
    self->gpu_written_hz = 0;
    rc = rc ? rc : s_write_gpu_clock(self, err);
    if (rc == 0 && l->emc_rate[0]) {
        rc = s_write_value(self->sysfs, l->emc_rate[0], (long long) op->emc_hz, err);
    }
    return rc;
}

static int s_write_rail(agent_sim_tree_t *self, const s_rail_t *r, double mw, jf_err_t *err)
{
    long long ma = llround(mw / AGENT_SIM_TREE_RAIL_MV * 1000.0);
    int rc =
        r->voltage[0] ? s_write_value(self->sysfs, r->voltage, AGENT_SIM_TREE_RAIL_MV, err) : 0;
    rc = rc || !r->current[0] ? rc : s_write_value(self->sysfs, r->current, ma, err);
    rc = rc || !r->power[0] ? rc : s_write_value(self->sysfs, r->power, llround(mw), err);
    return rc;
}

// Each zone's temperature as the thermal state has it, written where it changed.
static int s_write_temps(agent_sim_tree_t *self, jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < self->n_zones; i++) {
        s_zone_t *z = &self->zones[i];
        int64_t mc = sim_thermal_zone_mc(&self->thermal, z->param);
        if (mc != z->written_mc) {
            rc = s_write_value(self->sysfs, z->temp, (long long) mc, err);
            z->written_mc = rc == 0 ? mc : INT64_MIN;
        }
    }
    return rc ? rc : s_write_gpu_clock(self, err);
}

int agent_sim_tree_set_power(agent_sim_tree_t *self, const json_t *power_mw, int64_t model_us,
                             jf_err_t *err)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < self->n_rails; i++) {
        const json_t *v = power_mw ? json_object_get(power_mw, self->rails[i].name) : NULL;
        double mw = json_is_number(v) ? json_number_value(v) : self->rails[i].idle_mw;
        mw = isfinite(mw) && mw >= 0 ? mw : self->rails[i].idle_mw; // nonsense: idle
        self->rails[i].mw = mw;
        rc = s_write_rail(self, &self->rails[i], mw, err);
    }
    sim_thermal_set_power(&self->thermal, s_heating_mw(self), model_us);
    return rc ? rc : s_write_temps(self, err);
}

int agent_sim_tree_advance(agent_sim_tree_t *self, int64_t model_us, jf_err_t *err)
{
    sim_thermal_advance(&self->thermal, model_us);
    int rc = s_write_temps(self, err);
    if (rc == 0 && model_us > self->load.at_us) {
        agent_sim_load_advance(&self->load, model_us);
        rc = s_write_stat(self, err);
    }
    return rc;
}

int agent_sim_tree_set_load(agent_sim_tree_t *self, const json_t *load, int64_t model_us,
                            jf_err_t *err)
{
    const json_t *gpu = json_object_get(load, "gpu_pct");
    const json_t *cores = json_object_get(load, "cpu_busy_cores");
    double gpu_pct = json_is_number(gpu) ? json_number_value(gpu) : 0.0;
    double busy = json_is_number(cores) ? json_number_value(cores) : 0.0;
    agent_sim_load_set(&self->load, gpu_pct / 100.0, busy, model_us);
    int rc = s_write_stat(self, err);
    return rc ? rc : s_write_gpu_load(self, err);
}

int64_t agent_sim_tree_heating_mw(const agent_sim_tree_t *self)
{
    return llround(self->thermal.power_mw);
}
