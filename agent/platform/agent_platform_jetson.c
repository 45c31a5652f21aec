/* Jetson platform: detects the family and L4T release (agent_detect), picks the family's sysfs
 * layout for that JetPack generation (agent_board_table) and samples it through agent_sysfs.
 * The hello lists the modes of the board's own nvpmodel conf (<etc root>/nvpmodel.conf; the
 * family's NVIDIA defaults of jf_board.h only when the conf cannot be loaded, and then runs are
 * refused); runs switch modes through an agent_power handle over that conf
 * (agent_platform_power_new). */
#include "agent_platform_internal.h"
#include "agent_tegrastats_child.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int s_set_mode(agent_platform_t *self, int mode_id, jf_err_t *err)
{
    // Modes change through the handle of s_power_new (the privileged helper, off the loop).
    return jf_err_set(err, -ENOTSUP,
                      "jetson platform: %s switches to power mode %d through its power handle "
                      "(agent_platform_power_new), not here",
                      jf_board_type_name(self->board_type), mode_id);
}

static int s_power_new(const agent_platform_t *self, const char *const *helper_argv,
                       agent_power_t **ret_power, jf_err_t *err)
{
    char conf[PATH_MAX + 32], status[PATH_MAX + 32];
    (void) snprintf(conf, sizeof conf, "%s/nvpmodel.conf", self->etc_root);
    (void) snprintf(status, sizeof status, "%s/lib/nvpmodel/status", self->var_root);
    agent_power_opts_t o = {.conf_path = conf, .sysfs_root = self->sysfs_root,
                            .status_path = status, .helper_argv = helper_argv};
    *ret_power = agent_power_new(&o, err);
    return *ret_power ? 0 : (err && err->code ? err->code : -EINVAL);
}

static void s_add_software(const agent_platform_t *self, json_t *sw)
{
    const agent_detect_t *d = &self->detect;
    (void) json_object_set_new(sw, "model", json_string(d->model));
    if (d->has_l4t) {
        (void) json_object_set_new(sw, "l4t", json_string(d->l4t_text));
    }
    if (d->jetpack[0]) {
        (void) json_object_set_new(sw, "jetpack", json_string(d->jetpack));
    }
}

static const agent_platform_ops_t s_ops = {
    .name = "jetson",
    .set_mode = s_set_mode,
    .add_software = s_add_software,
    .power_new = s_power_new,
};

static bool s_layout_fits(const char *sysfs_root, const agent_board_layout_t *l)
{
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/%s/cur_freq", sysfs_root, l->gpu_devfreq_dir);
    return access(path, F_OK) == 0;
}

// The layout for the detected JetPack generation; when the release is unknown (no or a
// malformed nv_tegra_release, or a JetPack the table does not cover), the newest layout whose
// GPU devfreq node exists, else the newest. How it was chosen goes into *ret_how.
static const agent_board_layout_t *s_pick_layout(const agent_detect_t *d, const char *sysfs_root,
                                                 const char **ret_how)
{
    const agent_board_layout_t *l = agent_board_table_layout(d->type, d->jetpack_major);
    const agent_board_layout_t *all[8] = {NULL};
    size_t n = agent_board_table_layouts(d->type, all, sizeof all / sizeof all[0]);
    *ret_how = "for its JetPack";
    for (size_t i = 0; !l && i < n; i++) {
        l = s_layout_fits(sysfs_root, all[i]) ? all[i] : NULL;
        *ret_how = "found by probing the GPU devfreq node";
    }
    if (!l) {
        l = all[0];
        *ret_how = "the newest, as no GPU devfreq node matched";
    }
    return l;
}

static void s_describe(agent_platform_t *self, const agent_board_layout_t *l, const char *how)
{
    const agent_detect_t *d = &self->detect;
    char gen[32];
    (void) snprintf(gen, sizeof gen, l->jetpack_min == l->jetpack_max ? "%d" : "%d-%d",
                    l->jetpack_min, l->jetpack_max);
    (void) snprintf(self->describe, sizeof self->describe,
                    "jetson: %s '%.100s', L4T %s (JetPack %s)%s%.300s; sysfs layout of JetPack %s "
                    "%s; %zu cores; %s",
                    jf_board_type_name(self->board_type), d->model,
                    d->has_l4t ? d->l4t_text : "unknown", d->jetpack[0] ? d->jetpack : "unknown",
                    d->note[0] ? ": " : "", d->note, gen, how, agent_sysfs_n_cpus(self->sysfs),
                    self->modes_note);
}

// Without a readable rail the rails come from tegrastats, when there is one to run.
static void s_pick_power_source(agent_platform_t *self, const char *tegrastats)
{
    size_t len = strlen(self->describe);
    char *at = self->describe + len;
    size_t room = sizeof self->describe - len;
    if (agent_sysfs_has_power(self->sysfs) || room <= 1) {
        return;
    }
    if (!tegrastats || !tegrastats[0] || strcmp(tegrastats, AGENT_TEGRASTATS_PATH_NONE) == 0) {
        (void) snprintf(at, room, "; no readable power rail and no tegrastats fallback "
                        "(--tegrastats none): samples go without rails");
    } else if (access(tegrastats, X_OK) != 0) {
        (void) snprintf(at, room, "; no readable power rail, and tegrastats '%.200s' is not "
                        "executable: samples go without rails", tegrastats);
    } else {
        (void) snprintf(self->tegrastats, sizeof self->tegrastats, "%s", tegrastats);
        (void) snprintf(at, room, "; no readable power rail: rails come from tegrastats '%.200s' "
                        "while a run is measured", tegrastats);
    }
}

static void s_copy_family_modes(agent_platform_t *self)
{
    const jf_board_family_t *fam = jf_board_family(self->board_type);
    self->n_modes = fam ? fam->n_modes : 0;
    memcpy(self->modes, fam ? fam->modes : self->modes, self->n_modes * sizeof self->modes[0]);
}

// The modes of <etc root>/nvpmodel.conf, ids and names as the conf has them (the parser checks
// the names against jf_board_is_mode_name and the count against JF_POWER_MODES_MAX). When the
// conf cannot be loaded, the family's defaults stand in and modes_note says why; the power
// handle then fails on the same conf, so runs are refused (agent_session.c).
static void s_load_modes(agent_platform_t *self)
{
    char conf_path[PATH_MAX + 32];
    (void) snprintf(conf_path, sizeof conf_path, "%s/nvpmodel.conf", self->etc_root);
    jf_err_t err = {0};
    agent_nvpmodel_t *conf = agent_nvpmodel_load(conf_path, &err);
    if (!conf) {
        s_copy_family_modes(self);
        (void) snprintf(self->modes_note, sizeof self->modes_note,
                        "power modes: the %s defaults of jf_board.h, as the board's conf could "
                        "not be loaded (%.300s); runs will be refused",
                        jf_board_type_name(self->board_type), err.msg);
        return;
    }
    self->n_modes = agent_nvpmodel_n_modes(conf);
    for (size_t i = 0; i < self->n_modes; i++) {
        const agent_nvpmodel_mode_t *m = agent_nvpmodel_mode_at(conf, i);
        self->modes[i].id = m->id;
        (void) snprintf(self->modes[i].name, sizeof self->modes[i].name, "%s", m->name);
    }
    (void) snprintf(self->modes_note, sizeof self->modes_note,
                    "power modes: %zu from %.300s (default %d)", self->n_modes, conf_path,
                    agent_nvpmodel_default_id(conf));
    agent_nvpmodel_destroy(&conf);
}

agent_platform_t *agent_platform_jetson_new(const agent_platform_opts_t *opts, jf_err_t *err)
{
    agent_detect_t d = {0};
    if (agent_detect_board(opts->proc_root, opts->etc_root, &d, err) != 0) {
        return NULL;
    }
    if (!d.is_tegra) {
        jf_err_set(err, -ENOENT, "jetson platform: %.200s/device-tree does not name a Jetson "
                   "(model '%.80s'); --platform host runs on any Linux machine",
                   opts->proc_root, d.model[0] ? d.model : "unreadable");
        return NULL;
    }
    agent_platform_t *self = agent_platform_alloc(&s_ops, d.type, err);
    if (!self) {
        return NULL;
    }
    self->detect = d;
    (void) snprintf(self->sysfs_root, sizeof self->sysfs_root, "%s", opts->sysfs_root);
    (void) snprintf(self->etc_root, sizeof self->etc_root, "%s", opts->etc_root);
    (void) snprintf(self->var_root, sizeof self->var_root, "%s",
                    opts->var_root ? opts->var_root : AGENT_PLATFORM_VAR_ROOT);
    s_load_modes(self);
    const char *how = NULL;
    const agent_board_layout_t *l = s_pick_layout(&d, opts->sysfs_root, &how);
    agent_sysfs_opts_t so = {.sysfs_root = opts->sysfs_root, .proc_root = opts->proc_root,
                             .layout = l, .n_cpus = d.ident->n_cpus, .source = "sysfs"};
    self->sysfs = agent_sysfs_new(&so, err);
    if (!self->sysfs) {
        goto fail_destroy;
    }
    self->input_rail = l->input_rail;
    s_describe(self, l, how);
    s_pick_power_source(self, opts->tegrastats);
    agent_platform_describe_missing(self); // last: the list can be long
    return self;

fail_destroy:
    agent_platform_destroy(&self);
    return NULL;
}
