/* Session family codecs: hello, welcome, heartbeat, error (docs/protocol.md §4). */
#include "jf_msg_session.h"

#include "jf_msg_family.h"
#include "jf_msg_run.h"
#include "jf_units.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define JF_TIME_MAX_US (INT64_C(1) << 62)

static const char *const s_platforms[] = {"jetson", "host", "sim"};

static int s_parse_modes(const json_t *arr, jf_hello_t *h, jf_err_t *err)
{
    if (!json_is_array(arr) || json_array_size(arr) == 0 ||
        json_array_size(arr) > JF_POWER_MODES_MAX) {
        return jf_err_set(err, -EPROTO, "'power_modes' must be an array of 1..%d modes",
                          JF_POWER_MODES_MAX);
    }
    size_t i = 0;
    json_t *m = NULL;
    json_array_foreach(arr, i, m) {
        int64_t id = 0;
        jf_power_mode_t *pm = &h->modes[i];
        int rc = jf_msg_get_int(m, "id", 0, 255, &id, err);
        rc = rc ? rc : jf_msg_get_str(m, "name", false, pm->name, sizeof pm->name, err);
        if (rc == 0 && (json_object_size(m) != 2 || !jf_board_is_mode_name(pm->name))) {
            rc = jf_err_set(err, -EPROTO, "power mode must be {\"id\", \"name\"} with a valid name");
        }
        // The board's conf has one mode per id and per name (agent_nvpmodel checks the same).
        for (size_t k = 0; rc == 0 && k < i; k++) {
            if (h->modes[k].id == (int) id || strcmp(h->modes[k].name, pm->name) == 0) {
                rc = jf_err_set(err, -EPROTO, "repeats the id or name of power_modes[%zu]", k);
            }
        }
        if (rc != 0) {
            return jf_err_prefix(err, "power_modes[%zu]", i);
        }
        pm->id = (int) id;
    }
    h->n_modes = json_array_size(arr);
    return 0;
}

static int s_parse_storage(const json_t *arr, jf_hello_t *h, jf_err_t *err)
{
    if (!json_is_array(arr) || json_array_size(arr) > JF_HELLO_STORAGE_MAX) {
        return jf_err_set(err, -EPROTO, "'storage' must be an array of at most %d media",
                          JF_HELLO_STORAGE_MAX);
    }
    size_t i = 0;
    json_t *s = NULL;
    json_array_foreach(arr, i, s) {
        jf_hello_storage_t *hs = &h->storage[i];
        int rc = jf_msg_get_str(s, "medium", false, hs->medium, sizeof hs->medium, err);
        rc = rc ? rc
                : jf_msg_get_str(s, "dataset_root", false, hs->dataset_root,
                                 sizeof hs->dataset_root, err);
        if (rc == 0 && (json_object_size(s) != 2 || !jf_run_spec_is_medium(hs->medium))) {
            rc = jf_err_set(err, -EPROTO, "must be {\"medium\", \"dataset_root\"}, medium one of %s",
                            jf_run_spec_media());
        }
        if (rc != 0) {
            return jf_err_prefix(err, "storage[%zu]", i);
        }
    }
    h->n_storage = json_array_size(arr);
    return 0;
}

static int s_parse_inventory(const json_t *arr, jf_hello_t *h, jf_err_t *err)
{
    if (!json_is_array(arr) || json_array_size(arr) > JF_HELLO_RUNS_MAX) {
        return jf_err_set(err, -EPROTO, "'runs' must be an array of at most %d runs",
                          JF_HELLO_RUNS_MAX);
    }
    size_t i = 0;
    json_t *r = NULL;
    json_array_foreach(arr, i, r) {
        jf_hello_run_t *hr = &h->runs[i];
        json_t *fin = json_object_get(r, "finished");
        int rc = jf_msg_get_str(r, "run", false, hr->run, sizeof hr->run, err);
        rc = rc ? rc : jf_msg_get_int(r, "attempt", 1, INT32_MAX, &hr->attempt, err);
        rc = rc ? rc : jf_msg_get_int(r, "next_seq", 1, JF_TIME_MAX_US, &hr->next_seq, err);
        if (rc == 0 && (!json_is_boolean(fin) || json_object_size(r) != 4 ||
                        !jf_run_spec_is_run_id(hr->run))) {
            rc = jf_err_set(err, -EPROTO, "must be {run, attempt, next_seq, finished}");
        }
        if (rc != 0) {
            return jf_err_prefix(err, "runs[%zu]", i);
        }
        hr->finished = json_is_true(fin);
    }
    h->n_runs = json_array_size(arr);
    return 0;
}

static int s_check_software(const json_t *sw, jf_err_t *err)
{
    if (!json_is_object(sw) || json_object_size(sw) > JF_HELLO_SOFTWARE_MAX) {
        return jf_err_set(err, -EPROTO, "'software' must be an object of at most %d strings",
                          JF_HELLO_SOFTWARE_MAX);
    }
    const char *k = NULL;
    json_t *v = NULL;
    json_object_foreach((json_t *) sw, k, v) {
        if (!json_is_string(v) || strlen(k) > JF_IDENT_MAX || json_string_length(v) > 128) {
            return jf_err_set(err, -EPROTO, "'software.%.64s' must be a string of <= 128 bytes", k);
        }
    }
    return 0;
}

// One clock table of `clocks`: 0..JF_BOARD_CLOCK_STEPS_MAX (at least min) integers in Hz,
// strictly ascending, each 1 .. JF_HELLO_CLOCK_HZ_MAX.
static int s_parse_steps(const json_t *clocks, const char *key, size_t min, int64_t *steps,
                         size_t *ret_n, jf_err_t *err)
{
    const json_t *arr = json_object_get(clocks, key);
    if (!json_is_array(arr) || json_array_size(arr) < min ||
        json_array_size(arr) > JF_BOARD_CLOCK_STEPS_MAX) {
        return jf_err_set(err, -EPROTO, "'clocks.%s' must be an array of %zu..%d steps in Hz", key,
                          min, JF_BOARD_CLOCK_STEPS_MAX);
    }
    size_t i = 0;
    json_t *v = NULL;
    json_array_foreach(arr, i, v)
    {
        json_int_t hz = json_is_integer(v) ? json_integer_value(v) : 0;
        if (hz < 1 || hz > JF_HELLO_CLOCK_HZ_MAX || (i > 0 && hz <= steps[i - 1])) {
            return jf_err_set(err, -EPROTO,
                              "'clocks.%s[%zu]' must be an integer 1..%lld Hz above the step "
                              "before it",
                              key, i, (long long) JF_HELLO_CLOCK_HZ_MAX);
        }
        steps[i] = hz;
    }
    *ret_n = json_array_size(arr);
    return 0;
}

// The optional `clocks` member: exactly {cores, cpu_hz, gpu_hz, emc_hz}.
static int s_parse_clocks(const json_t *clocks, jf_hello_t *h, jf_err_t *err)
{
    if (!clocks) {
        return 0;
    }
    jf_board_clocks_t *c = &h->clocks;
    int64_t cores = 0;
    if (!json_is_object(clocks) || json_object_size(clocks) != 4) {
        return jf_err_set(err, -EPROTO, "'clocks' must be {cores, cpu_hz, gpu_hz, emc_hz}");
    }
    if (jf_msg_get_int(clocks, "cores", 1, JF_BOARD_CORES_MAX, &cores, err) != 0) {
        return jf_err_prefix(err, "clocks");
    }
    int rc = s_parse_steps(clocks, "cpu_hz", 1, c->cpu_steps_hz, &c->n_cpu_steps, err);
    rc = rc ? rc : s_parse_steps(clocks, "gpu_hz", 0, c->gpu_steps_hz, &c->n_gpu_steps, err);
    rc = rc ? rc : s_parse_steps(clocks, "emc_hz", 0, c->emc_steps_hz, &c->n_emc_steps, err);
    if (rc != 0) {
        return rc;
    }
    c->n_cpus = (int) cores;
    h->has_clocks = true;
    return 0;
}

static bool s_is_platform(const char *p)
{
    for (size_t i = 0; i < sizeof s_platforms / sizeof s_platforms[0]; i++) {
        if (strcmp(p, s_platforms[i]) == 0) {
            return true;
        }
    }
    return false;
}

int jf_msg_hello_parse(const json_t *body, jf_hello_t *ret_hello, jf_err_t *err)
{
    jf_hello_t h = {0};
    char type[JF_IDENT_MAX + 1] = {0};
    int rc = jf_msg_get_str(body, "name", false, h.name, sizeof h.name, err);
    rc = rc ? rc : jf_msg_get_str(body, "board_type", false, type, sizeof type, err);
    rc = rc ? rc : jf_msg_get_str(body, "platform", false, h.platform, sizeof h.platform, err);
    rc = rc ? rc : jf_msg_get_int(body, "started_us", 0, JF_TIME_MAX_US, &h.started_us, err);
    rc = rc ? rc : s_check_software(json_object_get(body, "software"), err);
    rc = rc ? rc : s_parse_modes(json_object_get(body, "power_modes"), &h, err);
    rc = rc ? rc : s_parse_storage(json_object_get(body, "storage"), &h, err);
    rc = rc ? rc : s_parse_inventory(json_object_get(body, "runs"), &h, err);
    rc = rc ? rc : s_parse_clocks(json_object_get(body, "clocks"), &h, err);
    if (rc != 0) {
        return rc;
    }
    if (!jf_parse_is_ident(h.name)) {
        return jf_err_set(err, -EINVAL, "'name' is not a valid board name");
    }
    if (!jf_board_type_parse(type, &h.board_type)) {
        return jf_err_set(err, -EINVAL, "'board_type' must be one of %s", jf_board_type_names());
    }
    if (!s_is_platform(h.platform)) {
        return jf_err_set(err, -EINVAL, "'platform' must be one of jetson, host, sim");
    }
    // A simulated board reports the Jetson type it simulates with platform sim: "sim" is
    // fleet.yaml's type, never a hello's, and a sim platform never simulates a host.
    bool sim = strcmp(h.platform, "sim") == 0;
    if (h.board_type == JF_BOARD_SIM || (sim && h.board_type == JF_BOARD_HOST)) {
        return jf_err_set(err, -EINVAL,
                          "'board_type' %s with platform %s: a simulated board reports the "
                          "Jetson type it simulates, with platform sim",
                          jf_board_type_name(h.board_type), h.platform);
    }
    h.clocks.type = h.board_type;
    *ret_hello = h;
    return 0;
}

int jf_msg_check_hello(const json_t *body, jf_err_t *err)
{
    jf_hello_t h;
    return jf_msg_hello_parse(body, &h, err);
}

static json_t *s_hello_modes(const jf_hello_t *h)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < h->n_modes; i++) {
        (void) json_array_append_new(arr, json_pack("{s:i, s:s}", "id", h->modes[i].id, "name",
                                                     h->modes[i].name));
    }
    return arr;
}

static json_t *s_hello_storage(const jf_hello_t *h)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < h->n_storage; i++) {
        (void) json_array_append_new(arr, json_pack("{s:s, s:s}", "medium", h->storage[i].medium,
                                                     "dataset_root", h->storage[i].dataset_root));
    }
    return arr;
}

static json_t *s_steps(const int64_t *steps, size_t n)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++) {
        (void) json_array_append_new(arr, json_integer((json_int_t) steps[i]));
    }
    return arr;
}

static json_t *s_hello_clocks(const jf_hello_t *h)
{
    const jf_board_clocks_t *c = &h->clocks;
    return json_pack("{s:i, s:o, s:o, s:o}", "cores", c->n_cpus, "cpu_hz",
                     s_steps(c->cpu_steps_hz, c->n_cpu_steps), "gpu_hz",
                     s_steps(c->gpu_steps_hz, c->n_gpu_steps), "emc_hz",
                     s_steps(c->emc_steps_hz, c->n_emc_steps));
}

static json_t *s_hello_runs(const jf_hello_t *h)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < h->n_runs; i++) {
        const jf_hello_run_t *r = &h->runs[i];
        (void) json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:b}", "run", r->run,
                                                     "attempt", (json_int_t) r->attempt,
                                                     "next_seq", (json_int_t) r->next_seq,
                                                     "finished", r->finished));
    }
    return arr;
}

int64_t jf_hello_backoff_us(int tries)
{
    if (tries <= 0) {
        return JF_HELLO_RETRY_FIRST_US;
    }
    // 4 s, 8 s, 16 s, then the cap: the shift stops before it could overflow.
    int64_t backoff = JF_HELLO_RETRY_FIRST_US << (tries < 5 ? tries + 1 : 6);
    return backoff < JF_HELLO_RETRY_MAX_US ? backoff : JF_HELLO_RETRY_MAX_US;
}

json_t *jf_msg_hello_new(int64_t id, const jf_hello_t *h, const json_t *software)
{
    json_t *msg = jf_msg_new(JF_MSG_HELLO, id);
    json_t *sw = software ? json_deep_copy(software) : json_object();
    if (!msg || !sw ||
        json_object_update_new(msg, json_pack("{s:s, s:s, s:s, s:I}", "name", h->name, "board_type",
                                          jf_board_type_name(h->board_type), "platform",
                                          h->platform, "started_us",
                                          (json_int_t) h->started_us)) != 0) {
        json_decref(sw);
        json_decref(msg);
        return NULL;
    }
    (void) json_object_set_new(msg, "software", sw);
    (void) json_object_set_new(msg, "power_modes", s_hello_modes(h));
    (void) json_object_set_new(msg, "storage", s_hello_storage(h));
    (void) json_object_set_new(msg, "runs", s_hello_runs(h));
    if (h->has_clocks) {
        (void) json_object_set_new(msg, "clocks", s_hello_clocks(h));
    }
    return msg;
}

static const char *const s_actions[] = {"continue", "drop"};

const char *jf_resume_action_name(jf_resume_action_t action)
{
    return (unsigned) action < 2 ? s_actions[action] : "?";
}

static int s_parse_resume_one(const json_t *r, jf_welcome_resume_t *wr, jf_err_t *err)
{
    char action[16] = {0};
    int rc = jf_msg_get_str(r, "run", false, wr->run, sizeof wr->run, err);
    rc = rc ? rc : jf_msg_get_int(r, "attempt", 1, INT32_MAX, &wr->attempt, err);
    rc = rc ? rc : jf_msg_get_int(r, "acked_seq", 0, JF_TIME_MAX_US, &wr->acked_seq, err);
    rc = rc ? rc : jf_msg_get_str(r, "action", false, action, sizeof action, err);
    if (rc != 0) {
        return rc;
    }
    if (json_object_size(r) != 4 || !jf_run_spec_is_run_id(wr->run)) {
        return jf_err_set(err, -EPROTO, "must be {run, attempt, acked_seq, action}");
    }
    for (int i = 0; i < 2; i++) {
        if (strcmp(action, s_actions[i]) == 0) {
            wr->action = (jf_resume_action_t) i;
            return 0;
        }
    }
    return jf_err_set(err, -EINVAL, "'action' must be continue or drop");
}

int jf_msg_welcome_parse(const json_t *body, jf_welcome_t *ret_welcome, jf_err_t *err)
{
    jf_welcome_t w = {0};
    int64_t hb_ms = 0, hbt_ms = 0, hz = 0, re = 0;
    int rc = jf_msg_get_str(body, "session", false, w.session, sizeof w.session, err);
    rc = rc ? rc : jf_msg_get_int(body, "re", 0, INT64_MAX, &re, err);
    rc = rc ? rc : jf_msg_get_int(body, "coordinator_epoch", 1, INT64_MAX, &w.coordinator_epoch, err);
    rc = rc ? rc : jf_msg_get_int(body, "heartbeat_ms", 100, 60000, &hb_ms, err);
    rc = rc ? rc : jf_msg_get_int(body, "heartbeat_timeout_ms", 200, 600000, &hbt_ms, err);
    rc = rc ? rc : jf_msg_get_int(body, "telemetry_hz", 1, JF_TELEMETRY_HZ_MAX, &hz, err);
    rc = rc ? rc : jf_msg_credit_parse(body, &w.credit, err);
    if (rc != 0) {
        return rc;
    }
    json_t *arr = json_object_get(body, "resume");
    if (!json_is_array(arr) || json_array_size(arr) > JF_HELLO_RUNS_MAX) {
        return jf_err_set(err, -EPROTO, "'resume' must be an array of at most %d entries",
                          JF_HELLO_RUNS_MAX);
    }
    size_t i = 0;
    json_t *r = NULL;
    json_array_foreach(arr, i, r) {
        if ((rc = s_parse_resume_one(r, &w.resume[i], err)) != 0) {
            return jf_err_prefix(err, "resume[%zu]", i);
        }
    }
    w.n_resume = json_array_size(arr);
    w.heartbeat_us = hb_ms * JF_US_PER_MS;
    w.heartbeat_timeout_us = hbt_ms * JF_US_PER_MS;
    w.telemetry_hz = (int) hz;
    *ret_welcome = w;
    return 0;
}

int jf_msg_check_welcome(const json_t *body, jf_err_t *err)
{
    jf_welcome_t w;
    return jf_msg_welcome_parse(body, &w, err);
}

json_t *jf_msg_welcome_new(int64_t id, int64_t re, const jf_welcome_t *w)
{
    json_t *msg = jf_msg_new(JF_MSG_WELCOME, id);
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < w->n_resume; i++) {
        const jf_welcome_resume_t *r = &w->resume[i];
        (void) json_array_append_new(
            arr, json_pack("{s:s, s:I, s:I, s:s}", "run", r->run, "attempt",
                           (json_int_t) r->attempt, "acked_seq", (json_int_t) r->acked_seq,
                           "action", jf_resume_action_name(r->action)));
    }
    if (!msg || !arr ||
        json_object_update_new(
            msg, json_pack("{s:I, s:s, s:I, s:I, s:I, s:i}", "re", (json_int_t) re, "session",
                           w->session, "coordinator_epoch", (json_int_t) w->coordinator_epoch,
                           "heartbeat_ms", (json_int_t) (w->heartbeat_us / JF_US_PER_MS),
                           "heartbeat_timeout_ms",
                           (json_int_t) (w->heartbeat_timeout_us / JF_US_PER_MS), "telemetry_hz",
                           w->telemetry_hz)) != 0) {
        json_decref(arr);
        json_decref(msg);
        return NULL;
    }
    (void) json_object_set_new(msg, "resume", arr);
    if (jf_msg_set_credit(msg, w->credit) != 0) {
        json_decref(msg);
        return NULL;
    }
    return msg;
}

int jf_msg_heartbeat_parse(const json_t *body, jf_heartbeat_t *ret_hb, jf_err_t *err)
{
    jf_heartbeat_t hb = {0};
    int rc = jf_msg_get_int(body, "t_us", 0, JF_TIME_MAX_US, &hb.t_us, err);
    json_t *echo = json_object_get(body, "echo_t_us");
    json_t *recv = json_object_get(body, "recv_t_us");
    if (rc == 0 && (echo == NULL) != (recv == NULL)) {
        return jf_err_set(err, -EPROTO, "'echo_t_us' and 'recv_t_us' must come together");
    }
    hb.has_echo = echo != NULL;
    if (rc == 0 && hb.has_echo) {
        rc = jf_msg_get_int(body, "echo_t_us", 0, JF_TIME_MAX_US, &hb.echo_t_us, err);
        rc = rc ? rc : jf_msg_get_int(body, "recv_t_us", 0, JF_TIME_MAX_US, &hb.recv_t_us, err);
        if (rc == 0 && hb.recv_t_us > hb.t_us) {
            rc = jf_err_set(err, -EPROTO, "'recv_t_us' %lld is after 't_us' %lld",
                            (long long) hb.recv_t_us, (long long) hb.t_us);
        }
    }
    if (rc == 0) {
        *ret_hb = hb;
    }
    return rc;
}

int jf_msg_check_heartbeat(const json_t *body, jf_err_t *err)
{
    jf_heartbeat_t hb;
    int rc = jf_msg_heartbeat_parse(body, &hb, err);
    json_t *run = json_object_get(body, "run");
    if (rc == 0 && run && !json_is_null(run) && !jf_run_spec_is_run_id(json_string_value(run))) {
        rc = jf_err_set(err, -EPROTO, "'run' must be null or a run id");
    }
    return rc;
}

json_t *jf_msg_heartbeat_clock_new(int64_t id, const char *run, const jf_heartbeat_t *hb)
{
    json_t *msg = jf_msg_new(JF_MSG_HEARTBEAT, id);
    if (!msg) {
        return NULL;
    }
    (void) json_object_set_new(msg, "t_us", json_integer(hb->t_us));
    if (hb->has_echo) {
        (void) json_object_set_new(msg, "echo_t_us", json_integer(hb->echo_t_us));
        (void) json_object_set_new(msg, "recv_t_us", json_integer(hb->recv_t_us));
    }
    if (run) {
        (void) json_object_set_new(msg, "run", json_string(run));
    }
    return msg;
}

json_t *jf_msg_heartbeat_new(int64_t id, const char *run)
{
    jf_heartbeat_t hb = {.t_us = jf_clock_wall_us()};
    return jf_msg_heartbeat_clock_new(id, run, &hb);
}

int jf_msg_error_parse(const json_t *body, char *code, size_t code_size, char *detail,
                       size_t detail_size, jf_err_t *err)
{
    int rc = jf_msg_get_str(body, "code", false, code, code_size, err);
    rc = rc ? rc : jf_msg_get_str(body, "detail", true, detail, detail_size, err);
    json_t *re = json_object_get(body, "re");
    if (rc == 0 && re && !json_is_null(re) && !json_is_integer(re)) {
        rc = jf_err_set(err, -EPROTO, "'re' must be null or an integer");
    }
    return rc;
}

int jf_msg_check_error(const json_t *body, jf_err_t *err)
{
    char code[JF_IDENT_MAX + 1];
    char detail[JF_MSG_TEXT_MAX + 1];
    return jf_msg_error_parse(body, code, sizeof code, detail, sizeof detail, err);
}
