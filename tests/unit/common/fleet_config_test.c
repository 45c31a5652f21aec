/* Unit tests for jf_fleet_config: fleet.yaml.example and the good fixtures load with the right
 * values and defaults, relative paths resolve, and every file in tests/fixtures/yaml/bad/fleet-*
 * fails with its code and file:line:col (table-driven). */
#include "jf_fleet_config.h"

#include "jft_config.h"
#include "jft_fs.h"

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define T_S  INT64_C(1000000)
#define T_MB (1024 * 1024)

static jf_fleet_config_t *t_parse(const char *text, const char *base_dir, jf_err_t *err)
{
    return jf_fleet_config_parse(text, strlen(text), "t.yaml", base_dir, err);
}

#define T_BOARD                                                                                    \
    "boards:\n  - {name: b1, type: nano, storage: [{medium: sd, mount: /, "                        \
    "dataset_root: /d}]}\n"

static void t_assert_example_coord(const jf_coord_settings_t *c)
{
    assert_string_equal(c->agent_endpoint, "tcp://*:7700");
    assert_string_equal(c->control_endpoint, "ipc:///var/lib/jetfleet/control.sock");
    assert_string_equal(c->data_dir, "/var/lib/jetfleet");
    assert_string_equal(c->store_path, "/var/lib/jetfleet/jetfleet.db");
    assert_int_equal(c->telemetry_hz, 1);
    assert_int_equal(c->heartbeat_interval_us, 2 * T_S);
    assert_int_equal(c->heartbeat_timeout_us, 6 * T_S);
    assert_int_equal(c->run_timeout_us, 2 * 3600 * T_S);
    assert_int_equal(c->max_attempts, 3);
    assert_int_equal(c->handshake_timeout_us, 10 * T_S);
    assert_int_equal(c->clock_offset_warn_us, 5 * T_S / 1000);
    assert_true(c->max_other_load_pct == 0.0); // commented out there
    assert_int_equal(c->telemetry_after, JF_RETENTION_DROP);
    assert_int_equal(c->telemetry_raw_us, 168 * 3600 * T_S);
    assert_int_equal(c->min_free_bytes, INT64_C(2) << 30);
}

static void test_example_loads(void **state)
{
    (void) state;
    jf_fleet_config_t *fleet = jft_fleet_fixture("../../fleet.yaml.example");
    static const char *const names[] = {
        "agx-01", "agx-02", "agx-03",  "agx-04",  "agx-05",  "nx-01",   "nx-02",   "nx-03",
        "nx-04",  "nx-05",  "nano-01", "nano-02", "nano-03", "nano-04", "nano-05", "orin-01"};
    assert_int_equal(fleet->n_boards, 16);
    for (size_t i = 0; i < fleet->n_boards; i++) {
        assert_string_equal(fleet->boards[i].name, names[i]);
        assert_int_equal(fleet->boards[i].simulates, fleet->boards[i].type);
        assert_true(fleet->boards[i].n_storage >= 1);
    }
    t_assert_example_coord(&fleet->coord);
    const jf_board_spec_t *agx = jf_fleet_config_board(fleet, "agx-01");
    assert_int_equal(agx->type, JF_BOARD_AGX_XAVIER);
    assert_int_equal(agx->n_modes, 8);
    assert_true(jf_board_spec_has_label(agx, "study"));
    assert_string_equal(jf_board_spec_storage(agx, "emmc")->dataset_root, "/home/jetson/datasets");
    assert_string_equal(jf_board_spec_storage(agx, "nvme")->mount, "/mnt/nvme");
    assert_null(jf_board_spec_storage(agx, "usb-hdd"));
    for (int i = 1; i <= 5; i++) {
        char name[16] = {0};
        (void) snprintf(name, sizeof name, "nx-%02d", i);
        const jf_board_spec_t *nx = jf_fleet_config_board(fleet, name);
        assert_non_null(jf_board_spec_storage(nx, "sd"));
        assert_non_null(jf_board_spec_storage(nx, "nvme"));
        assert_non_null(jf_board_spec_storage(nx, "usb-hdd"));
    }
    const jf_board_spec_t *nx5 = jf_fleet_config_board(fleet, "nx-05");
    assert_int_equal(nx5->n_modes, 2);
    assert_string_equal(nx5->modes[0].name, "MODE_15W_6CORE");
    assert_int_equal(nx5->modes[1].id, 4);
    assert_int_equal(jf_fleet_config_board(fleet, "orin-01")->type, JF_BOARD_ORIN_AGX);
    jf_fleet_config_destroy(&fleet);
    assert_null(fleet);
}

// The absolute directory of a fixture, as the loader resolves relative paths against it.
static void t_fixture_dir(const char *rel, char *out)
{
    char path[PATH_MAX] = {0};
    jft_fixture(rel, path);
    char cwd[PATH_MAX] = {0};
    assert_non_null(getcwd(cwd, sizeof cwd));
    int n = path[0] == '/' ? snprintf(out, PATH_MAX, "%s", path)
                           : snprintf(out, PATH_MAX, "%s/%s", cwd, path);
    assert_true(n > 0 && n < PATH_MAX);
}

static void test_defaults_and_relative_data_dir(void **state)
{
    (void) state;
    char dir[PATH_MAX] = {0};
    t_fixture_dir("yaml/good", dir);
    char expect[PATH_MAX + 64] = {0};
    jf_fleet_config_t *fleet = jft_fleet_fixture("yaml/good/fleet-minimal.yaml");
    const jf_coord_settings_t *c = &fleet->coord;
    (void) snprintf(expect, sizeof expect, "%s/jetfleet-data", dir);
    assert_string_equal(c->data_dir, expect);
    (void) snprintf(expect, sizeof expect, "%s/jetfleet-data/jetfleet.db", dir);
    assert_string_equal(c->store_path, expect);
    (void) snprintf(expect, sizeof expect, "ipc://%s/jetfleet-data/control.sock", dir);
    assert_string_equal(c->control_endpoint, expect);
    assert_string_equal(c->agent_endpoint, JF_DEFAULT_AGENT_ENDPOINT);
    assert_int_equal(c->telemetry_hz, JF_DEFAULT_TELEMETRY_HZ);
    assert_int_equal(c->heartbeat_interval_us, JF_DEFAULT_HEARTBEAT_US);
    assert_int_equal(c->heartbeat_timeout_us, JF_DEFAULT_HB_TIMEOUT_US);
    assert_int_equal(c->run_timeout_us, JF_DEFAULT_RUN_TIMEOUT_US);
    assert_int_equal(c->max_attempts, JF_DEFAULT_MAX_ATTEMPTS);
    assert_int_equal(c->handshake_timeout_us, JF_DEFAULT_HANDSHAKE_US);
    assert_int_equal(c->clock_offset_warn_us, JF_DEFAULT_CLOCK_WARN_US);
    assert_true(c->max_other_load_pct == 0.0); // not set: the analysis default
    assert_int_equal(c->telemetry_after, JF_RETENTION_KEEP); // no retention: kept for ever
    assert_int_equal(c->min_free_bytes, 0);                  // no floor
    const jf_board_spec_t *b = &fleet->boards[0];
    assert_int_equal(b->line, 2);
    assert_int_equal(b->n_labels, 0);
    assert_int_equal(b->n_modes, 2); // the nano family table
    jf_fleet_config_destroy(&fleet);
    fleet = jft_fleet_fixture("yaml/good/fleet-hosts.yaml");
    (void) snprintf(expect, sizeof expect, "%s/state", dir); // "./state/" normalised
    assert_string_equal(fleet->coord.data_dir, expect);
    assert_int_equal(fleet->coord.telemetry_hz, 5);
    assert_int_equal(fleet->coord.run_timeout_us, 600 * T_S);
    assert_int_equal(fleet->n_boards, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(fleet->boards[i].type, JF_BOARD_HOST);
        assert_int_equal(fleet->boards[i].n_modes, 1);
        assert_string_equal(fleet->boards[i].modes[0].name, "DEFAULT");
    }
    jf_fleet_config_destroy(&fleet);
}

static void test_parse_base_dir(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = t_parse("coordinator:\n  data_dir: ./state/./x//\n  store: "
                                       "db/../j.db\n" T_BOARD,
                                       "/srv//lab/", &err);
    assert_non_null(fleet);
    assert_string_equal(fleet->coord.data_dir, "/srv/lab/state/x");
    assert_string_equal(fleet->coord.store_path, "/srv/lab/state/x/db/../j.db");
    assert_string_equal(fleet->source, "t.yaml");
    jf_fleet_config_destroy(&fleet);
    fleet =
        t_parse("coordinator:\n  data_dir: /abs\n  store: /var/db.sqlite\n" T_BOARD, "/srv", &err);
    assert_string_equal(fleet->coord.data_dir, "/abs");
    assert_string_equal(fleet->coord.store_path, "/var/db.sqlite");
    jf_fleet_config_destroy(&fleet);
    // A PostgreSQL URI is kept as written, not joined to data_dir (docs/store.md §10).
    fleet = t_parse(
        "coordinator:\n  data_dir: /abs\n  store: postgresql://lab@db/jf?sslmode=require\n" T_BOARD,
        "/srv", &err);
    assert_non_null(fleet);
    assert_string_equal(fleet->coord.store_path, "postgresql://lab@db/jf?sslmode=require");
    jf_fleet_config_destroy(&fleet);
    fleet = t_parse("coordinator:\n  store: postgres:///jf\n" T_BOARD, "/srv", &err);
    assert_non_null(fleet);
    assert_string_equal(fleet->coord.store_path, "postgres:///jf");
    jf_fleet_config_destroy(&fleet);
    char cwd[PATH_MAX] = {0};
    assert_non_null(getcwd(cwd, sizeof cwd));
    char expect[PATH_MAX + 32] = {0};
    (void) snprintf(expect, sizeof expect, "%s/rel/jetfleet-data", strcmp(cwd, "/") ? cwd : "");
    fleet = t_parse(T_BOARD, "rel", &err);
    assert_string_equal(fleet->coord.data_dir, expect);
    jf_fleet_config_destroy(&fleet);
    (void) snprintf(expect, sizeof expect, "%s/jetfleet-data", strcmp(cwd, "/") ? cwd : "");
    fleet = jf_fleet_config_parse(T_BOARD, strlen(T_BOARD), NULL, NULL, &err);
    assert_string_equal(fleet->coord.data_dir, expect);
    assert_string_equal(fleet->source, "<input>");
    jf_fleet_config_destroy(&fleet);
}

static void test_sim_board_and_accessors(void **state)
{
    (void) state;
    jf_fleet_config_t *fleet = jft_fleet_fixture("yaml/good/fleet-lab.yaml");
    const jf_board_spec_t *sim = jf_fleet_config_board(fleet, "sim-nano-01");
    assert_int_equal(sim->type, JF_BOARD_SIM);
    assert_int_equal(sim->simulates, JF_BOARD_NANO);
    assert_int_equal(sim->n_modes, 1);
    assert_string_equal(sim->modes[0].name, "MAXN");
    const jf_board_spec_t *nx = jf_fleet_config_board(fleet, "nx-01");
    assert_ptr_equal(jf_board_spec_mode(nx, "MODE_10W_4CORE"), &nx->modes[1]);
    assert_ptr_equal(jf_board_spec_mode(nx, "2"), &nx->modes[0]); // MODE_15W_6CORE by id
    assert_null(jf_board_spec_mode(nx, "0"));                     // in the family, not listed
    assert_null(jf_board_spec_mode(nx, "999"));
    assert_null(jf_board_spec_mode(nx, ""));
    assert_null(jf_board_spec_mode(nx, "MAXN"));
    assert_true(jf_board_spec_has_label(nx, "rack-a"));
    assert_false(jf_board_spec_has_label(nx, "rack-b"));
    assert_string_equal(jf_board_spec_storage(nx, "nvme")->dataset_root, "/mnt/nvme/data");
    assert_null(jf_fleet_config_board(fleet, "nx-03"));
    assert_int_equal(jf_fleet_config_board(fleet, "agx-01")->n_modes, 1);
    jf_fleet_config_destroy(&fleet);
}

typedef struct t_bad_file {
    const char *file; // under tests/fixtures/yaml/bad/
    int code;
    const char *fragment; // must appear in err.msg
} t_bad_file_t;

static const t_bad_file_t t_bad_fleets[] = {
    {"fleet-indent.yaml", -EINVAL,
     "fleet-indent.yaml:4:12: mapping values are not allowed in this context"},
    {"fleet-tab.yaml", -EINVAL, "fleet-tab.yaml:3:1: found a tab character"},
    {"fleet-unknown-key.yaml", -EINVAL,
     "fleet-unknown-key.yaml:4:5: unknown key 'powr_modes' in board 'nx-01', expected one of: "
     "name, type, simulates, labels, power_modes, storage; did you mean 'power_modes'?"},
    {"fleet-unknown-top-key.yaml", -EINVAL,
     "fleet-unknown-top-key.yaml:1:1: unknown key 'coordinater' in the fleet file"},
    {"fleet-duplicate-key.yaml", -EINVAL,
     "fleet-duplicate-key.yaml:6:5: duplicate key 'type' (first at 3:5)"},
    {"fleet-alias.yaml", -EINVAL, "fleet-alias.yaml:4:14: aliases are not allowed"},
    {"fleet-anchor.yaml", -EINVAL, "fleet-anchor.yaml:4:14: anchors are not allowed"},
    {"fleet-tag.yaml", -EINVAL, "fleet-tag.yaml:2:17: explicit tags are not allowed"},
    {"fleet-wrong-type.yaml", -EINVAL,
     "fleet-wrong-type.yaml:4:13: 'labels' must be a sequence, got a scalar"},
    {"fleet-boards-mapping.yaml", -EINVAL,
     "fleet-boards-mapping.yaml:2:3: 'boards' must be a sequence, got a mapping"},
    {"fleet-out-of-range.yaml", -EINVAL,
     "fleet-out-of-range.yaml:2:17: 'telemetry_hz': 100 is out of range [1, 50]"},
    {"fleet-max-attempts.yaml", -EINVAL,
     "fleet-max-attempts.yaml:2:17: 'max_attempts': 0 is out of range [1, 10]"},
    {"fleet-handshake-timeout.yaml", -EINVAL,
     "fleet-handshake-timeout.yaml:2:22: 'handshake_timeout'"},
    {"fleet-clock-offset-warn.yaml", -EINVAL,
     "fleet-clock-offset-warn.yaml:2:22: 'clock_offset_warn'"},
    {"fleet-max-other-load.yaml", -EINVAL,
     "fleet-max-other-load.yaml:2:19: 'max_other_load': 0 is out of range"},
    {"fleet-retention-duration.yaml", -EINVAL,
     "fleet-retention-duration.yaml:3:20: 'telemetry_raw': expected a duration with a unit (us, "
     "ms, s, m, h), got '7d'"},
    {"fleet-retention-short.yaml", -EINVAL,
     "fleet-retention-short.yaml:3:20: 'telemetry_raw': duration '500ms' is out of range"},
    {"fleet-retention-after.yaml", -EINVAL,
     "fleet-retention-after.yaml:4:22: 'telemetry_after' must be 'drop' or 'means', got "
     "'average'"},
    {"fleet-retention-missing.yaml", -EINVAL,
     "fleet-retention-missing.yaml:3:5: missing required key 'telemetry_after' in retention"},
    {"fleet-retention-scalar.yaml", -EINVAL,
     "fleet-retention-scalar.yaml:2:14: 'retention' must be a mapping, got a scalar"},
    {"fleet-retention-unknown-key.yaml", -EINVAL,
     "fleet-retention-unknown-key.yaml:4:5: unknown key 'telemetry_afterwards' in retention"},
    {"fleet-min-free-space.yaml", -EINVAL,
     "fleet-min-free-space.yaml:2:19: 'min_free_space' must be a size such as '2G': a whole "
     "number up to 1048576 with a unit B, K, M, G or T (powers of 1024), got '2GB'"},
    {"fleet-min-free-space-big.yaml", -EINVAL,
     "fleet-min-free-space-big.yaml:2:19: 'min_free_space' must be a size such as '2G'"},
    {"fleet-not-a-number.yaml", -EINVAL,
     "fleet-not-a-number.yaml:2:17: 'telemetry_hz': expected an integer, got 'fast'"},
    {"fleet-duplicate-board.yaml", -EINVAL,
     "fleet-duplicate-board.yaml:6:11: duplicate board name 'nx-01' (first at line 2)"},
    {"fleet-unknown-type.yaml", -EINVAL,
     "fleet-unknown-type.yaml:3:11: unknown board type 'xavier_nx' (did you mean 'xavier-nx'?)"},
    {"fleet-unknown-medium.yaml", -EINVAL,
     "fleet-unknown-medium.yaml:5:18: unknown medium 'floppy', expected one of: sd, emmc"},
    {"fleet-duplicate-medium.yaml", -EINVAL,
     "fleet-duplicate-medium.yaml:7:18: medium 'sd' is listed twice for board 'nx-01'"},
    {"fleet-bad-power-mode.yaml", -EINVAL,
     "fleet-bad-power-mode.yaml:4:25: power mode 'MODE_15W_6CORE' is not valid for nano, "
     "expected one of (or its id): MAXN, 5W"},
    {"fleet-power-mode-typo.yaml", -EINVAL,
     "fleet-power-mode-typo.yaml:4:19: power mode 'MODE_15W_6CORES' is not valid for xavier-nx "
     "(did you mean 'MODE_15W_6CORE'?)"},
    {"fleet-duplicate-power-mode.yaml", -EINVAL,
     "fleet-duplicate-power-mode.yaml:4:35: power mode 'MODE_15W_6CORE' is listed twice"},
    {"fleet-empty.yaml", -EINVAL, "fleet-empty.yaml:1:1: empty document"},
    {"fleet-comments-only.yaml", -EINVAL, "fleet-comments-only.yaml:1:1: empty document"},
    {"fleet-missing-type.yaml", -EINVAL,
     "fleet-missing-type.yaml:2:5: missing required key 'type' in board 'nx-01'"},
    {"fleet-missing-boards.yaml", -EINVAL,
     "fleet-missing-boards.yaml:1:1: missing required key 'boards' in the fleet file"},
    {"fleet-no-boards.yaml", -EINVAL,
     "fleet-no-boards.yaml:1:9: 'boards' must list 1..4096 boards, got 0"},
    {"fleet-missing-storage.yaml", -EINVAL,
     "fleet-missing-storage.yaml:2:5: missing required key 'storage' in board 'nx-01'"},
    {"fleet-missing-dataset-root.yaml", -EINVAL,
     "fleet-missing-dataset-root.yaml:5:9: missing required key 'dataset_root' in storage of "
     "board 'nx-01'"},
    {"fleet-storage-empty.yaml", -EINVAL,
     "fleet-storage-empty.yaml:4:14: board 'nx-01' must list 1..8 storage media, got 0"},
    {"fleet-relative-mount.yaml", -EINVAL,
     "fleet-relative-mount.yaml:5:29: 'mount' must be an absolute path, got 'mnt/sd'"},
    {"fleet-sim-no-simulates.yaml", -EINVAL,
     "fleet-sim-no-simulates.yaml:2:5: board 'sim-01' has type sim but no 'simulates'"},
    {"fleet-simulates-host.yaml", -EINVAL,
     "fleet-simulates-host.yaml:4:16: 'simulates' must be a Jetson type"},
    {"fleet-simulates-not-sim.yaml", -EINVAL,
     "fleet-simulates-not-sim.yaml:4:16: 'simulates' is only allowed with type sim"},
    {"fleet-bad-name.yaml", -EINVAL, "fleet-bad-name.yaml:2:11: 'name' must be a name of 1..64"},
    {"fleet-heartbeat.yaml", -EINVAL,
     "fleet-heartbeat.yaml:3:22: heartbeat_timeout (5000 ms) must be more than 2 x "
     "heartbeat_interval (3000 ms)"},
    {"fleet-bad-duration.yaml", -EINVAL,
     "fleet-bad-duration.yaml:2:23: 'heartbeat_interval': expected a duration with a unit"},
    {"fleet-bad-endpoint.yaml", -EINVAL,
     "fleet-bad-endpoint.yaml:2:19: 'agent_endpoint' must be a ZeroMQ endpoint starting with "
     "tcp:// or ipc://, got 'http://lab:7700'"},
    {"fleet-two-documents.yaml", -EINVAL, "fleet-two-documents.yaml:6:1: more than one document"},
    {"fleet-nonscalar-key.yaml", -EINVAL,
     "fleet-nonscalar-key.yaml:4:7: mapping keys must be scalars"},
    {"fleet-not-mapping.yaml", -EINVAL,
     "fleet-not-mapping.yaml:1:1: the document must be a mapping, got a sequence"},
    {"fleet-too-deep.yaml", -EINVAL, "fleet-too-deep.yaml:3:42: nesting is deeper than 32 levels"},
    {"fleet-bad-utf8.yaml", -EINVAL,
     "fleet-bad-utf8.yaml:3:12: invalid leading UTF-8 octet (byte 0xff)"},
};

static const t_bad_file_t *t_find_row(const t_bad_file_t *rows, size_t n, const char *file)
{
    for (size_t i = 0; i < n; i++) {
        if (strcmp(rows[i].file, file) == 0) {
            return &rows[i];
        }
    }
    return NULL;
}

static void test_bad_fixtures(void **state)
{
    (void) state;
    size_t n = sizeof t_bad_fleets / sizeof t_bad_fleets[0];
    for (size_t i = 0; i < n; i++) {
        char rel[PATH_MAX] = {0};
        char path[PATH_MAX] = {0};
        (void) snprintf(rel, sizeof rel, "yaml/bad/%s", t_bad_fleets[i].file);
        jft_fixture(rel, path);
        jf_err_t err = {0};
        jf_fleet_config_t *fleet = jf_fleet_config_load(path, &err);
        if (fleet || err.code != t_bad_fleets[i].code ||
            !strstr(err.msg, t_bad_fleets[i].fragment)) {
            fail_msg("%s: code %d, message '%s', expected %d and '%s'", t_bad_fleets[i].file,
                     err.code, err.msg, t_bad_fleets[i].code, t_bad_fleets[i].fragment);
        }
    }
}

// Every fleet-*.yaml in the bad fixtures has a row in the table above (STYLE.md §9).
static void test_every_bad_fixture_has_a_row(void **state)
{
    (void) state;
    char dir[PATH_MAX] = {0};
    jft_fixture("yaml/bad", dir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t seen = 0;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (strncmp(e->d_name, "fleet-", 6) != 0) {
            continue;
        }
        if (!t_find_row(t_bad_fleets, sizeof t_bad_fleets / sizeof t_bad_fleets[0], e->d_name)) {
            fail_msg("bad fixture '%s' has no row in t_bad_fleets", e->d_name);
        }
        seen++;
    }
    closedir(d);
    assert_int_equal(seen, sizeof t_bad_fleets / sizeof t_bad_fleets[0]);
}

// Writes a valid fleet padded with comment lines to exactly size bytes.
static void t_write_padded(const char *path, size_t size)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    size_t used = strlen(T_BOARD);
    assert_int_equal(fputs(T_BOARD, f) >= 0, 1);
    while (used < size) {
        size_t n = size - used < 64 ? size - used : 64;
        char line[65] = {0};
        memset(line, ' ', n);
        line[0] = '#';
        line[n - 1] = '\n';
        assert_int_equal(fputs(line, f) >= 0, 1);
        used += n;
    }
    assert_int_equal(fclose(f), 0);
}

static void test_size_limit(void **state)
{
    (void) state;
    char dir[PATH_MAX] = {0};
    assert_int_equal(jft_tmpdir_new(dir), 0);
    char path[PATH_MAX + 16] = {0};
    (void) snprintf(path, sizeof path, "%s/big.yaml", dir);
    t_write_padded(path, T_MB);
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = jf_fleet_config_load(path, &err);
    assert_non_null(fleet);
    jf_fleet_config_destroy(&fleet);
    t_write_padded(path, T_MB + 1);
    fleet = jf_fleet_config_load(path, &err);
    assert_null(fleet);
    assert_int_equal(err.code, -EFBIG);
    assert_non_null(strstr(err.msg, "big.yaml:1:1: input is larger than the limit of 1048576"));
    (void) snprintf(path, sizeof path, "%s/none.yaml", dir);
    fleet = jf_fleet_config_load(path, &err);
    assert_null(fleet);
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "none.yaml: cannot read"));
    jft_tmpdir_remove(dir);
}

typedef struct t_bad_text {
    const char *text;
    const char *fragment;
} t_bad_text_t;

// Rules that need no fixture file of their own: defaults that clash with a given key, limits.
static void test_inline_errors(void **state)
{
    (void) state;
    static const t_bad_text_t rows[] = {
        {"coordinator:\n  heartbeat_interval: 5s\n" T_BOARD,
         "t.yaml:2:23: heartbeat_timeout (6000 ms) must be more than 2 x heartbeat_interval"},
        {"coordinator:\n  heartbeat_interval: 3s\n  heartbeat_timeout: 6s\n" T_BOARD,
         "t.yaml:3:22: heartbeat_timeout (6000 ms) must be more than 2 x heartbeat_interval"},
        {"coordinator: [1]\n" T_BOARD, "t.yaml:1:14: 'coordinator' must be a mapping"},
        {"coordinator:\n  data_dir: \"\"\n" T_BOARD, "t.yaml:2:13: 'data_dir' must not be empty"},
        {"coordinator:\n  control_endpoint: ipc://\n" T_BOARD,
         "t.yaml:2:21: 'control_endpoint' must be a ZeroMQ endpoint"},
        {"coordinator:\n  run_timeout: 169h\n" T_BOARD, "t.yaml:2:16: 'run_timeout': duration"},
        {"boards:\n  - {name: b, type: nano, labels: [a, b, a], storage: []}\n",
         "t.yaml:2:42: label 'a' is listed twice"},
        {"boards:\n  - {name: b, type: nano, power_modes: [], storage: []}\n",
         "t.yaml:2:40: 'power_modes' must list at least one mode"},
        {"boards:\n  - [b]\n", "t.yaml:2:5: 'boards'[0] must be a mapping, got a sequence"},
        {"boards:\n  - {type: nano}\n", "t.yaml:2:5: missing required key 'name' in board #1"},
        {"boards:\n  - {name: b, type: nano, storage: [{medium: sd, mount: /, dataset_root: d}]}"
         "\n",
         "t.yaml:2:74: 'dataset_root' must be an absolute path, got 'd'"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        jf_fleet_config_t *fleet = t_parse(rows[i].text, "/srv", &err);
        if (fleet || err.code != -EINVAL || !strstr(err.msg, rows[i].fragment)) {
            fail_msg("row %zu: code %d, message '%s', expected '%s'", i, err.code, err.msg,
                     rows[i].fragment);
        }
    }
}

// Retention and the free-space floor: the boundaries of what loads (1 s, 0B, every size unit).
static void test_retention_and_floor_values(void **state)
{
    (void) state;
    static const struct {
        const char *coord;
        int64_t raw_us;
        int64_t floor_bytes;
        jf_retention_after_t after;
    } rows[] = {
        {"{retention: {telemetry_raw: 1s, telemetry_after: drop}, min_free_space: 0B}", T_S, 0,
         JF_RETENTION_DROP},
        {"{retention: {telemetry_raw: 1m, telemetry_after: drop}, min_free_space: 512K}", 60 * T_S,
         512 * 1024, JF_RETENTION_DROP},
        {"{retention: {telemetry_raw: 2h, telemetry_after: means}}", 7200 * T_S, 0,
         JF_RETENTION_MEANS},
        {"{min_free_space: 3M}", 0, 3 * T_MB, JF_RETENTION_KEEP},
        {"{min_free_space: 1T}", 0, INT64_C(1) << 40, JF_RETENTION_KEEP},
        {"{min_free_space: 100B}", 0, 100, JF_RETENTION_KEEP},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[512] = {0};
        (void) snprintf(text, sizeof text, "coordinator: %s\n" T_BOARD, rows[i].coord);
        jf_err_t err = {0};
        jf_fleet_config_t *fleet = t_parse(text, "/", &err);
        assert_non_null(fleet);
        assert_int_equal(fleet->coord.telemetry_raw_us, rows[i].raw_us);
        assert_int_equal(fleet->coord.telemetry_after, rows[i].after);
        assert_int_equal(fleet->coord.min_free_bytes, rows[i].floor_bytes);
        jf_fleet_config_destroy(&fleet);
    }
}

static void test_max_other_load(void **state)
{
    (void) state;
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = t_parse("coordinator: {max_other_load: 12.5}\n" T_BOARD, "/", &err);
    assert_non_null(fleet);
    assert_true(fleet->coord.max_other_load_pct == 12.5);
    jf_fleet_config_destroy(&fleet);
    fleet = t_parse("coordinator: {max_other_load: 100.5}\n" T_BOARD, "/", &err);
    assert_null(fleet);
    assert_non_null(strstr(err.msg, "t.yaml:1:31: 'max_other_load'"));
}

static void test_long_default_control_endpoint(void **state)
{
    (void) state;
    char text[1024] = {0};
    char dir[301] = {0};
    memset(dir, 'd', sizeof dir - 1);
    (void) snprintf(text, sizeof text, "coordinator:\n  data_dir: /%s\n%s", dir, T_BOARD);
    jf_err_t err = {0};
    jf_fleet_config_t *fleet = t_parse(text, NULL, &err);
    assert_null(fleet);
    assert_non_null(strstr(err.msg, "t.yaml:2:13: the default control_endpoint"));
    (void) snprintf(text, sizeof text,
                    "coordinator:\n  data_dir: /%s\n  control_endpoint: ipc:///run/c.sock\n%s", dir,
                    T_BOARD);
    fleet = t_parse(text, NULL, &err);
    assert_non_null(fleet);
    assert_string_equal(fleet->coord.control_endpoint, "ipc:///run/c.sock");
    jf_fleet_config_destroy(&fleet);
    jf_fleet_config_destroy(&fleet);
    jf_fleet_config_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_loads),
        cmocka_unit_test(test_defaults_and_relative_data_dir),
        cmocka_unit_test(test_parse_base_dir),
        cmocka_unit_test(test_sim_board_and_accessors),
        cmocka_unit_test(test_bad_fixtures),
        cmocka_unit_test(test_every_bad_fixture_has_a_row),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_inline_errors),
        cmocka_unit_test(test_long_default_control_endpoint),
        cmocka_unit_test(test_retention_and_floor_values),
        cmocka_unit_test(test_max_other_load),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
