/* Unit tests for the wire protocol (jf_msg*.h): the hostile corpus in tests/fixtures/messages/bad/
 * (one table row per file), the good corpus (one message of every type, checked against every
 * direction), generated messages (deep nesting, huge arrays, oversize frames) and a round trip
 * of every builder through encode, decode and the typed parsers. */
#include "jf_msg.h"
#include "jf_msg_ctl.h"
#include "jf_msg_measure.h"
#include "jf_msg_run.h"
#include "jf_msg_session.h"
#include "jf_units.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_RUN      "r0123456789abcdef"
#define T_DIRS_ALL (JF_MSG_TO_COORD | JF_MSG_TO_AGENT | JF_MSG_TO_CTL | JF_MSG_TO_CLI)
#define T_NESTING  3000
#define T_FILE_MAX (64 * 1024)

// ---------------------------------------------------------------------------------------------
// Helpers

static size_t t_max_bytes(unsigned dir)
{
    return dir == JF_MSG_TO_AGENT ? JF_MSG_MAX_BYTES_AGENT : JF_MSG_MAX_BYTES_COORD;
}

// Reads messages/<sub>/<name> from JF_FIXTURES (may hold NUL bytes: the length is returned).
static char *t_read_fixture(const char *sub, const char *name, size_t *ret_len)
{
    const char *root = getenv("JF_FIXTURES");
    assert_non_null(root);
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/messages/%s/%s", root, sub, name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail_msg("cannot open fixture %s", path);
    }
    char *buf = malloc(T_FILE_MAX);
    assert_non_null(buf);
    *ret_len = fread(buf, 1, T_FILE_MAX, f);
    assert_int_equal(fclose(f), 0);
    assert_true(*ret_len < T_FILE_MAX);
    return buf;
}

typedef struct t_decoded {
    int rc;
    const char *code;
    int64_t id;
    jf_msg_t msg;
    jf_err_t err;
} t_decoded_t;

static t_decoded_t t_decode(const void *data, size_t len, unsigned dir)
{
    t_decoded_t d = {.code = "unset", .id = -99};
    d.rc = jf_msg_decode(data, len, dir, t_max_bytes(dir), &d.msg, &d.code, &d.id, &d.err);
    return d;
}

// Checks a failed decode: return code, error code, message fragment, reported id, no body.
// Prints the mismatch and returns false, so a table run reports every bad row at once.
static bool t_check_fail(const char *what, const t_decoded_t *d, int rc, const char *code,
                         const char *frag, int64_t id)
{
    if (d->rc != rc || !d->code || strcmp(d->code, code) != 0 || !strstr(d->err.msg, frag) ||
        d->id != id || d->msg.body) {
        print_error("%s: got rc %d code '%s' id %lld msg '%s'; expected rc %d code '%s' id %lld "
                    "and a message containing '%s'\n",
                    what, d->rc, d->code ? d->code : "(null)", (long long) d->id, d->err.msg, rc,
                    code, (long long) id, frag);
        return false;
    }
    return true;
}

static void t_expect_fail(const char *what, const t_decoded_t *d, int rc, const char *code,
                          const char *frag, int64_t id)
{
    if (!t_check_fail(what, d, rc, code, frag, id)) {
        fail_msg("%s: unexpected decode result", what);
    }
}

// Encodes msg (consumed), decodes it for dir and returns the decoded message (caller: fini).
static jf_msg_t t_roundtrip(json_t *msg, unsigned dir)
{
    assert_non_null(msg);
    size_t len = 0;
    char *text = jf_msg_encode(msg, &len);
    json_decref(msg);
    assert_non_null(text);
    assert_int_equal(len, strlen(text));
    t_decoded_t d = t_decode(text, len, dir);
    if (d.rc != 0) {
        fail_msg("decode of '%.200s' failed: %s (%s)", text, d.err.msg, d.code);
    }
    free(text);
    assert_null(d.code);
    return d.msg;
}

static const char *t_str(const json_t *body, const char *key)
{
    const char *s = json_string_value(json_object_get(body, key));
    assert_non_null(s);
    return s;
}

static int64_t t_int(const json_t *body, const char *key)
{
    const json_t *v = json_object_get(body, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

// ---------------------------------------------------------------------------------------------
// The hostile corpus: one row per file in tests/fixtures/messages/bad/.

typedef struct t_bad {
    const char *file;
    unsigned dir;     // receiver
    int rc;           // jf_msg_decode's return
    const char *code; // JF_MSG_E_*
    const char *frag; // part of err.msg
    int64_t id;       // *ret_id: the message id when it could be read, else -1
} t_bad_t;

#define C  JF_MSG_TO_COORD
#define A  JF_MSG_TO_AGENT
#define L  JF_MSG_TO_CTL
#define BJ JF_MSG_E_BAD_JSON
#define BV JF_MSG_E_BAD_VERSION
#define UT JF_MSG_E_UNKNOWN_TYPE
#define BF JF_MSG_E_BAD_FIELD
#define P  (-EPROTO)

static const t_bad_t s_bad[] = {
    // JSON syntax and encoding
    {"json-truncated.json", C, P, BJ, "expected near end of file", -1},
    {"json-trailing-garbage.json", C, P, BJ, "end of file expected", -1},
    {"json-top-array.json", C, P, BJ, "must be a JSON object", -1},
    {"json-top-scalar.json", C, P, BJ, "'[' or '{' expected", -1},
    {"json-top-string.json", L, P, BJ, "'[' or '{' expected", -1},
    {"json-empty.json", A, P, BJ, "'[' or '{' expected", -1},
    {"json-duplicate-key.json", C, P, BJ, "duplicate object key", -1},
    {"json-invalid-utf8.json", A, P, BJ, "unable to decode byte 0xe9", -1},
    {"json-overlong-utf8.json", A, P, BJ, "unable to decode byte 0xc0", -1},
    {"json-surrogate-utf8.json", C, P, BJ, "unable to decode byte 0xed", -1},
    {"json-nul-escape.json", L, P, BJ, "\\u0000 is not allowed", -1},
    {"json-raw-nul-byte.json", L, P, BJ, "control character 0x0", -1},
    {"json-lone-surrogate.json", L, P, BJ, "invalid Unicode", -1},
    {"json-int-over-2p63.json", C, P, BJ, "too big integer", -1},
    {"json-single-quotes.json", C, P, BJ, "string or '}' expected", -1},
    // Envelope: protocol version
    {"v-missing.json", C, P, BV, "'v' must be the integer 1", 5},
    {"v-zero.json", C, P, BV, "'v' must be the integer 1", 5},
    {"v-two.json", A, P, BV, "'v' must be the integer 1", 5},
    {"v-string.json", C, P, BV, "'v' must be the integer 1", 5},
    {"v-real.json", A, P, BV, "'v' must be the integer 1", 5},
    {"v-null.json", C, P, BV, "'v' must be the integer 1", 5},
    // Envelope: type and direction
    {"type-missing.json", C, P, UT, "'type' must be a string", 5},
    {"type-unknown.json", C, P, UT, "type 'run.explode' is not a message this receiver", 5},
    {"type-number.json", A, P, UT, "'type' must be a string", 5},
    {"type-case.json", C, P, UT, "type 'Heartbeat'", 5},
    {"type-wrong-dir-assign-to-coord.json", C, P, UT, "type 'run.assign' is not", 2},
    {"type-wrong-dir-hello-to-agent.json", A, P, UT, "type 'hello' is not", 1},
    {"type-wrong-dir-submit-to-agent-endpoint.json", C, P, UT, "type 'ctl.submit' is not", 3},
    {"type-wrong-dir-reply-to-ctl.json", L, P, UT, "type 'ctl.reply' is not", 3},
    // Envelope: id
    {"id-missing.json", C, P, BF, "'id' must be a non-negative integer", -1},
    {"id-negative.json", C, P, BF, "'id' must be a non-negative integer", -1},
    {"id-string.json", A, P, BF, "'id' must be a non-negative integer", -1},
    {"id-real.json", C, P, BF, "'id' must be a non-negative integer", -1},
    // Commands are strict
    {"cancel-unknown-member.json", A, P, BF, "run.cancel: unknown member 'force'", 3},
    {"welcome-unknown-member.json", A, P, BF, "welcome: unknown member 'debug_shell'", 1},
    {"welcome-heartbeat-too-fast.json", A, P, BF, "'heartbeat_ms' must be in [100, 60000], got 1",
     1},
    // hello
    {"hello-name-path.json", C, P, BF, "hello: 'name' is not a valid board name", 1},
    {"hello-name-uppercase.json", C, P, BF, "hello: 'name' is not a valid board name", 1},
    {"hello-name-65.json", C, P, BF, "hello: 'name' is longer than 64 bytes", 1},
    {"hello-board-type-unknown.json", C, P, BF, "'board_type' must be one of agx-xavier", 1},
    {"hello-33-power-modes.json", C, P, BF, "'power_modes' must be an array of 1..32 modes", 1},
    {"hello-no-power-modes.json", C, P, BF, "'power_modes' must be an array of 1..32 modes", 1},
    {"hello-power-mode-repeated-id.json", C, P, BF,
     "power_modes[1]: repeats the id or name of power_modes[0]", 1},
    {"hello-power-mode-repeated-name.json", C, P, BF,
     "power_modes[1]: repeats the id or name of power_modes[0]", 1},
    {"hello-power-mode-name-33.json", C, P, BF, "power_modes[0]: 'name' is longer than 32", 1},
    {"hello-power-mode-name-shell.json", C, P, BF, "power_modes[0]: power mode must be", 1},
    {"hello-power-mode-id-256.json", C, P, BF, "power_modes[0]: 'id' must be in [0, 255]", 1},
    {"hello-storage-medium.json", C, P, BF, "storage[0]: must be", 1},
    {"hello-platform.json", C, P, BF, "'platform' must be one of jetson, host, sim", 1},
    {"hello-board-type-sim.json", C, P, BF, "'board_type' sim with platform sim: a simulated", 1},
    {"hello-sim-host.json", C, P, BF, "'board_type' host with platform sim", 1},
    {"hello-inventory-bad-run.json", C, P, BF, "runs[0]: must be {run, attempt", 1},
    // run.assign
    {"assign-params-run-differs.json", A, P, BF, "'params.run' differs from 'run'", 2},
    {"assign-workers-17.json", A, P, BF, "'workers' must be in [0, 16], got 17", 2},
    {"assign-batch-0.json", A, P, BF, "'batch_size' must be in [1, 4096], got 0", 2},
    {"assign-model-shell.json", A, P, BF, "'model' must be one of lenet5", 2},
    {"assign-storage-path.json", A, P, BF, "'storage' must be one of sd", 2},
    {"assign-params-unknown-member.json", A, P, BF, "left unpacked: gpu_clock_hz", 2},
    {"assign-params-missing-member.json", A, P, BF, "run parameters: Object item not found: seed",
     2},
    {"assign-attempt-zero.json", A, P, BF, "'attempt' must be in [1, 2147483647], got 0", 2},
    {"assign-timeout-too-short.json", A, P, BF, "'timeout_ms' must be in [1000, ", 2},
    {"assign-custom-unknown-member.json", A, P, BF,
     "'custom': 1 object item(s) left unpacked: gpu_mhz", 2},
    {"assign-custom-cores-0.json", A, P, BF, "'custom.cores' must be in [1, 64], got 0", 2},
    {"assign-dvfs-off-string.json", A, P, BF, "run parameters:", 2},
    // Stream positions
    {"progress-seq-zero.json", C, P, BF, "'seq' must be in [1, 9007199254740992], got 0", 4},
    {"telemetry-seq-negative.json", C, P, BF, "'seq' must be in [1, 9007199254740992], got -3", 4},
    {"ack-seq-2p60.json", A, P, BF, "got 1152921504606846976", 4},
    {"done-seq-missing.json", C, P, BF, "run.done: 'seq' must be an integer", 4},
    // Telemetry
    {"telemetry-no-t_us.json", C, P, BF, "samples[0]: 't_us' must be an integer", 4},
    {"telemetry-nested-3.json", C, P, BF, "samples[0]: member 'rails' is not", 4},
    {"telemetry-long-string.json", C, P, BF, "member 'note' is not", 4},
    {"telemetry-empty.json", C, P, BF, "'samples' must be an array of 1..1000 items", 4},
    // run.failed and progress records
    {"failed-unknown-reason.json", C, P, BF, "'reason' must be one of oom, crashed", 7},
    // jf_msg_run.h: JF_FAIL_BUSY is for run.reject only.
    {"failed-reason-busy.json", C, P, BF, "'reason'", 7},
    {"progress-unknown-kind.json", C, P, BF, "records[0]: record kind 'batch' is not start", 4},
    {"progress-epoch-unknown-member.json", C, P, BF, "records[0]: unknown member 'gpu_temp_c'", 4},
    {"progress-epoch-nan-loss.json", C, P, BF, "'loss' must be a number or null", 4},
    // Energy on epoch records and the measure record
    {"progress-epoch-energy-partial.json", C, P, BF,
     "'energy_mj' and 'avg_power_mw' come together, and 'peak_power_mw' only with them", 4},
    {"progress-epoch-energy-negative.json", C, P, BF, "'energy_mj' must be in [0, 1e+15], got -1",
     4},
    {"progress-measure-unknown-member.json", C, P, BF, "records[0]: unknown member 'gpu_temp_c'",
     4},
    {"progress-measure-bad-total.json", C, P, BF,
     "measure.energy: 'total' must be one of input-rail, sum-of-rails, rapl, none", 4},
    {"progress-measure-bad-source.json", C, P, BF,
     "measure.energy: 'source' must be one of power-monitor, tegrastats, rapl, simulated", 4},
    {"progress-measure-wall-rate.json", C, P, BF,
     "measure.telemetry: 'wall_rate_hz' must be in [1, 50], got 200", 4},
    {"progress-measure-cache-fraction.json", C, P, BF,
     "measure.cache[1]: 'resident_after' must be in [0, 1], got 1.5", 4},
    {"progress-measure-no-power-mode.json", C, P, BF,
     "measure.power_mode: 'power_mode' must be an object", 4},
    {"progress-measure-rate-51.json", C, P, BF,
     "measure.telemetry: 'rate_hz' must be in [1, 50], got 51", 4},
    {"progress-measure-rail-power.json", C, P, BF,
     "measure.energy: rails[2]: 'peak_power_mw' must be in [0, 1e+07], got 2e+07", 4},
    {"progress-measure-relative-mount.json", C, P, BF,
     "measure.storage: 'mount' must be an absolute path", 4},
    {"progress-measure-none-with-energy.json", C, P, BF,
     "measure.energy: unknown member 'energy_mj'", 4},
    {"progress-measure-interval-without-tegrastats.json", C, P, BF,
     "measure.energy: 'tegrastats_interval_ms' needs source 'tegrastats'", 4},
    {"heartbeat-bad-run.json", C, P, BF, "'run' must be null or a run id", 5},
    // Control endpoint
    {"submit-no-yaml.json", L, P, BF, "ctl.submit: 'yaml' must be a string", 2},
    {"cancel-bad-sweep.json", L, P, BF, "ctl.cancel: 'sweep' must be a sweep name", 3},
    {"error-code-number.json", A, P, BF, "error: 'code' must be a string", 9},
};

#undef C
#undef A
#undef L
#undef BJ
#undef BV
#undef UT
#undef BF
#undef P

#define T_N_BAD (sizeof s_bad / sizeof s_bad[0])

static void test_bad_corpus(void **state)
{
    (void) state;
    size_t failed = 0;
    for (size_t i = 0; i < T_N_BAD; i++) {
        size_t len = 0;
        char *data = t_read_fixture("bad", s_bad[i].file, &len);
        t_decoded_t d = t_decode(data, len, s_bad[i].dir);
        failed += !t_check_fail(s_bad[i].file, &d, s_bad[i].rc, s_bad[i].code, s_bad[i].frag,
                                s_bad[i].id);
        jf_msg_fini(&d.msg);
        free(data);
    }
    assert_int_equal(failed, 0);
}

static bool t_bad_has_row(const char *file)
{
    for (size_t i = 0; i < T_N_BAD; i++) {
        if (strcmp(s_bad[i].file, file) == 0) {
            return true;
        }
    }
    return false;
}

static void test_bad_corpus_every_file_has_a_row(void **state)
{
    (void) state;
    const char *root = getenv("JF_FIXTURES");
    assert_non_null(root);
    char path[PATH_MAX];
    (void) snprintf(path, sizeof path, "%s/messages/bad", root);
    DIR *dir = opendir(path);
    assert_non_null(dir);
    size_t files = 0;
    for (struct dirent *e = readdir(dir); e; e = readdir(dir)) {
        if (e->d_name[0] == '.') {
            continue;
        }
        files++;
        if (!t_bad_has_row(e->d_name)) {
            (void) closedir(dir);
            fail_msg("fixture messages/bad/%s has no row in s_bad", e->d_name);
        }
    }
    assert_int_equal(closedir(dir), 0);
    assert_int_equal(files, T_N_BAD); // and no row without a file (rows are unique)
    assert_true(files >= 40);
}

// ---------------------------------------------------------------------------------------------
// The good corpus: one message of every type; decoded by its directions, refused by the others.

typedef struct t_good {
    const char *file;
    jf_msg_type_t type;
    unsigned dirs; // the receivers that accept it
} t_good_t;

static const t_good_t s_good[] = {
    {"hello.json", JF_MSG_HELLO, JF_MSG_TO_COORD},
    {"run-accept.json", JF_MSG_RUN_ACCEPT, JF_MSG_TO_COORD},
    {"run-reject.json", JF_MSG_RUN_REJECT, JF_MSG_TO_COORD},
    {"run-progress.json", JF_MSG_RUN_PROGRESS, JF_MSG_TO_COORD},
    {"run-progress-measure.json", JF_MSG_RUN_PROGRESS, JF_MSG_TO_COORD},
    {"run-progress-measure-tegrastats.json", JF_MSG_RUN_PROGRESS, JF_MSG_TO_COORD},
    {"telemetry.json", JF_MSG_TELEMETRY, JF_MSG_TO_COORD},
    {"run-done.json", JF_MSG_RUN_DONE, JF_MSG_TO_COORD},
    {"run-failed.json", JF_MSG_RUN_FAILED, JF_MSG_TO_COORD},
    {"welcome.json", JF_MSG_WELCOME, JF_MSG_TO_AGENT},
    {"run-assign.json", JF_MSG_RUN_ASSIGN, JF_MSG_TO_AGENT},
    {"run-cancel.json", JF_MSG_RUN_CANCEL, JF_MSG_TO_AGENT},
    {"ack.json", JF_MSG_ACK, JF_MSG_TO_AGENT},
    {"heartbeat.json", JF_MSG_HEARTBEAT, JF_MSG_TO_COORD | JF_MSG_TO_AGENT},
    {"error.json", JF_MSG_ERROR, JF_MSG_TO_COORD | JF_MSG_TO_AGENT | JF_MSG_TO_CLI},
    {"ctl-status.json", JF_MSG_CTL_STATUS, JF_MSG_TO_CTL},
    {"ctl-submit.json", JF_MSG_CTL_SUBMIT, JF_MSG_TO_CTL},
    {"ctl-cancel.json", JF_MSG_CTL_CANCEL, JF_MSG_TO_CTL},
    {"ctl-reply.json", JF_MSG_CTL_REPLY, JF_MSG_TO_CLI},
};

static void t_good_one(const t_good_t *g, const char *data, size_t len, unsigned dir, int64_t id)
{
    t_decoded_t d = t_decode(data, len, dir);
    if (g->dirs & dir) {
        if (d.rc != 0) {
            fail_msg("%s for direction %u: %s (%s)", g->file, dir, d.err.msg, d.code);
        }
        assert_int_equal(d.msg.type, g->type);
        assert_true(json_is_object(d.msg.body));
        assert_int_equal(d.msg.id, id);
        assert_int_equal(d.id, id);
        jf_msg_fini(&d.msg);
        assert_null(d.msg.body);
        return;
    }
    char what[128];
    (void) snprintf(what, sizeof what, "%s for direction %u", g->file, dir);
    t_expect_fail(what, &d, -EPROTO, JF_MSG_E_UNKNOWN_TYPE, "is not a message this receiver", id);
}

static void test_good_corpus(void **state)
{
    (void) state;
    bool seen[JF_MSG_TYPE_COUNT] = {false};
    for (size_t i = 0; i < sizeof s_good / sizeof s_good[0]; i++) {
        size_t len = 0;
        char *data = t_read_fixture("good", s_good[i].file, &len);
        json_t *plain = json_loadb(data, len, 0, NULL);
        assert_non_null(plain);
        int64_t id = t_int(plain, "id");
        json_decref(plain);
        for (unsigned dir = JF_MSG_TO_COORD; dir <= JF_MSG_TO_CLI; dir <<= 1) {
            t_good_one(&s_good[i], data, len, dir, id);
        }
        seen[s_good[i].type] = true;
        free(data);
    }
    for (int t = 0; t < JF_MSG_TYPE_COUNT; t++) {
        if (!seen[t]) {
            fail_msg("no good fixture for type %s", jf_msg_type_name((jf_msg_type_t) t));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Generated hostile messages

static void test_nesting_3000_deep(void **state)
{
    (void) state;
    const char *head = "{\"v\":1,\"type\":\"heartbeat\",\"id\":5,\"t_us\":1,\"x\":";
    size_t hl = strlen(head);
    char *buf = malloc(hl + 2 * T_NESTING + 2);
    assert_non_null(buf);
    memcpy(buf, head, hl);
    memset(buf + hl, '[', T_NESTING);
    memset(buf + hl + T_NESTING, ']', T_NESTING);
    buf[hl + 2 * T_NESTING] = '}';
    t_decoded_t d = t_decode(buf, hl + 2 * T_NESTING + 1, JF_MSG_TO_COORD);
    t_expect_fail("nesting 3000", &d, -EPROTO, JF_MSG_E_BAD_JSON, "maximum parsing depth", -1);
    free(buf);
}

// A telemetry or progress message with n items, encoded.
static char *t_stream_text(jf_msg_type_t type, size_t n, size_t *ret_len)
{
    json_t *items = json_array();
    for (size_t i = 0; i < n; i++) {
        json_t *item = type == JF_MSG_TELEMETRY
                           ? json_pack("{s:I, s:i}", "t_us", (json_int_t) (1000 + i), "gpu_pct", 5)
                           : jf_record_minibatch_to_json(&(jf_minibatch_rec_t){
                                 .epoch = 1, .index = (int64_t) i, .samples = 8});
        assert_int_equal(json_array_append_new(items, item), 0);
    }
    jf_msg_run_ref_t ref = {.run = T_RUN, .attempt = 1, .seq = 1};
    json_t *msg = type == JF_MSG_TELEMETRY ? jf_msg_telemetry_new(11, &ref, &items)
                                           : jf_msg_run_progress_new(11, &ref, &items);
    assert_non_null(msg);
    char *text = jf_msg_encode(msg, ret_len);
    json_decref(msg);
    assert_non_null(text);
    return text;
}

static void test_array_limits(void **state)
{
    (void) state;
    static const struct {
        jf_msg_type_t type;
        size_t n;
        const char *frag; // NULL: accepted
    } rows[] = {
        {JF_MSG_TELEMETRY, JF_MSG_ARRAY_MAX, NULL},
        {JF_MSG_TELEMETRY, JF_MSG_ARRAY_MAX + 1, "'samples' must be an array of 1..1000 items"},
        {JF_MSG_RUN_PROGRESS, JF_MSG_ARRAY_MAX, NULL},
        {JF_MSG_RUN_PROGRESS, JF_MSG_ARRAY_MAX + 1, "'records' must be an array of 1..1000 items"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t len = 0;
        char *text = t_stream_text(rows[i].type, rows[i].n, &len);
        t_decoded_t d = t_decode(text, len, JF_MSG_TO_COORD);
        if (rows[i].frag) {
            t_expect_fail("array limit", &d, -EPROTO, JF_MSG_E_BAD_FIELD, rows[i].frag, 11);
        } else {
            assert_int_equal(d.rc, 0);
            assert_int_equal(
                json_array_size(json_object_get(
                    d.msg.body, rows[i].type == JF_MSG_TELEMETRY ? "samples" : "records")),
                rows[i].n);
        }
        jf_msg_fini(&d.msg);
        free(text);
    }
}

static void test_size_limit(void **state)
{
    (void) state;
    static const unsigned dirs[] = {JF_MSG_TO_COORD, JF_MSG_TO_AGENT};
    const char *hb = "{\"v\":1,\"type\":\"heartbeat\",\"id\":5,\"t_us\":1}";
    for (size_t i = 0; i < 2; i++) {
        size_t max = t_max_bytes(dirs[i]);
        char *buf = malloc(max + 1);
        assert_non_null(buf);
        memset(buf, ' ', max + 1); // JSON allows trailing white space
        memcpy(buf, hb, strlen(hb));
        t_decoded_t d = t_decode(buf, max, dirs[i]); // exactly at the limit: accepted
        assert_int_equal(d.rc, 0);
        jf_msg_fini(&d.msg);
        d = t_decode(buf, max + 1, dirs[i]);
        char frag[64];
        (void) snprintf(frag, sizeof frag, "of %zu bytes exceeds the limit of %zu", max + 1, max);
        t_expect_fail("oversize", &d, -EMSGSIZE, JF_MSG_E_TOO_LARGE, frag, -1);
        free(buf);
    }
}

// ---------------------------------------------------------------------------------------------
// Names and small tables

static void test_type_and_reason_names(void **state)
{
    (void) state;
    static const char *const names[JF_MSG_TYPE_COUNT] = {
        "hello",      "run.accept", "run.reject", "run.progress", "telemetry", "run.done",
        "run.failed", "welcome",    "run.assign", "run.cancel",   "ack",       "heartbeat",
        "error",      "ctl.status", "ctl.submit", "ctl.cancel",   "ctl.reply",
    };
    for (int t = 0; t < JF_MSG_TYPE_COUNT; t++) {
        assert_string_equal(jf_msg_type_name((jf_msg_type_t) t), names[t]);
    }
    assert_string_equal(jf_msg_type_name(JF_MSG_TYPE_COUNT), "?");
    assert_string_equal(jf_msg_type_name((jf_msg_type_t) -1), "?");
    for (int r = 0; r < JF_FAIL_REASON_COUNT; r++) {
        jf_fail_reason_t back = JF_FAIL_REASON_COUNT;
        assert_true(jf_fail_reason_parse(jf_fail_reason_name((jf_fail_reason_t) r), &back));
        assert_int_equal(back, r);
    }
    jf_fail_reason_t untouched = JF_FAIL_OOM;
    assert_false(jf_fail_reason_parse("OOM", &untouched));
    assert_false(jf_fail_reason_parse(NULL, &untouched));
    assert_int_equal(untouched, JF_FAIL_OOM);
    assert_string_equal(jf_fail_reason_name(JF_FAIL_REASON_COUNT), "?");
    assert_string_equal(jf_resume_action_name(JF_RESUME_DROP), "drop");
    assert_string_equal(jf_resume_action_name((jf_resume_action_t) 7), "?");
    jf_msg_t zero = {0};
    jf_msg_fini(&zero);
    jf_msg_fini(NULL);
}

// Telemetry samples: tolerant of unknown members, strict about shape and size.
static void test_telemetry_sample_check(void **state)
{
    (void) state;
    static const struct {
        const char *json;
        int rc;
        const char *frag;
    } rows[] = {
        {"{\"t_us\":1}", 0, ""},
        {"{\"t_us\":5,\"vendor_x\":[1,2.5,true,null,\"s\"]}", 0, ""},
        {"{\"t_us\":5,\"rails\":[{\"name\":\"VDD_IN\",\"power_mw\":5000}]}", 0, ""},
        {"{\"t_us\":5,\"temp_c\":{\"cpu\":40,\"gpu\":[1,2]}}", 0, ""},
        {"{\"t_us\":0}", -EINVAL, "'t_us' must be in [1, "},
        {"{\"t_us\":\"5\"}", -EPROTO, "'t_us' must be an integer"},
        {"{\"t_us\":5,\"a\":[[[1]]]}", -EPROTO, "member 'a' is not"},
        {"{\"t_us\":5,\"a\":{\"b\":{\"c\":{}}}}", -EPROTO, "member 'a' is not"},
        {"[{\"t_us\":5}]", -EPROTO, "a sample must be an object"},
        {"{\"t_us\":5,\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\":1}",
         -EPROTO, "is not a number"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_error_t jerr;
        json_t *s = json_loads(rows[i].json, 0, &jerr);
        assert_non_null(s);
        jf_err_t err = {0};
        int rc = jf_telemetry_sample_check(s, &err);
        if (rc != rows[i].rc || !strstr(err.msg, rows[i].frag)) {
            fail_msg("%s: rc %d msg '%s'", rows[i].json, rc, err.msg);
        }
        json_decref(s);
    }
}

static void test_telemetry_sample_limits(void **state)
{
    (void) state;
    char key[16];
    json_t *s = json_pack("{s:i}", "t_us", 1);
    for (int i = 0; i < 127; i++) {
        (void) snprintf(key, sizeof key, "m%d", i);
        assert_int_equal(json_object_set_new(s, key, json_integer(i)), 0);
    }
    assert_int_equal(jf_telemetry_sample_check(s, NULL), 0); // 128 members
    assert_int_equal(json_object_set_new(s, "one_more", json_integer(1)), 0);
    jf_err_t err = {0};
    assert_int_equal(jf_telemetry_sample_check(s, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "at most 128 members"));
    json_decref(s);
    json_t *arr = json_array();
    for (int i = 0; i < 257; i++) {
        assert_int_equal(json_array_append_new(arr, json_integer(i)), 0);
    }
    s = json_pack("{s:i, s:o}", "t_us", 1, "big", arr);
    assert_int_equal(jf_telemetry_sample_check(s, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "member 'big'"));
    assert_int_equal(json_array_remove(arr, 0), 0);
    assert_int_equal(jf_telemetry_sample_check(s, NULL), 0); // 256 elements
    json_decref(s);
}

// Progress records: each kind's shape.
static void test_record_parse_failures(void **state)
{
    (void) state;
    static const struct {
        const char *json;
        const char *frag;
    } rows[] = {
        {"{\"kind\":\"start\",\"info\":{\"nested\":{\"a\":1}}}", "'info.nested' must be a scalar"},
        {"{\"kind\":\"start\",\"info\":{},\"extra\":1}", "start record: {kind, info}"},
        {"{\"kind\":\"start\",\"info\":[]}", "'info' must be an object"},
        {"{\"kind\":\"epoch\",\"epoch\":0,\"e2e_us\":1,\"fetch_stall_us\":0,\"compute_us\":1,"
         "\"samples\":1}",
         "'warmup' must be a boolean"},
        {"{\"kind\":\"epoch\",\"epoch\":1000,\"warmup\":false,\"e2e_us\":1,\"fetch_stall_us\":0,"
         "\"compute_us\":1,\"samples\":1}",
         "'epoch' must be in [0, 999]"},
        {"{\"kind\":\"epoch\",\"epoch\":1,\"warmup\":false,\"e2e_us\":-1,\"fetch_stall_us\":0,"
         "\"compute_us\":1,\"samples\":1}",
         "'e2e_us' must be in [0, "},
        {"{\"kind\":\"minibatch\",\"epoch\":1,\"index\":0,\"samples\":4097,\"fetch_stall_us\":0,"
         "\"compute_us\":1}",
         "'samples' must be in [0, 4096]"},
        {"{\"kind\":\"minibatch\",\"epoch\":1,\"index\":0,\"samples\":1,\"fetch_stall_us\":0,"
         "\"compute_us\":1,\"loss\":\"low\"}",
         "'loss' must be a number or null"},
        {"{\"kind\":7}", "a record must be an object with a string 'kind'"},
        {"[1]", "a record must be an object with a string 'kind'"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *rec = json_loads(rows[i].json, 0, NULL);
        assert_non_null(rec);
        jf_record_t r = {.kind = JF_REC_MINIBATCH};
        jf_err_t err = {0};
        int rc = jf_record_parse(rec, &r, &err);
        if (rc >= 0 || !strstr(err.msg, rows[i].frag)) {
            fail_msg("%s: rc %d msg '%s'", rows[i].json, rc, err.msg);
        }
        assert_int_equal(r.kind, JF_REC_MINIBATCH); // not written on failure
        json_decref(rec);
    }
}

// ---------------------------------------------------------------------------------------------
// Builders: encode + decode + typed parser give back what went in.

static void test_hello_roundtrip(void **state)
{
    (void) state;
    jf_hello_t h = {.name = "nano-03",
                    .board_type = JF_BOARD_NANO,
                    .platform = "jetson",
                    .n_modes = 2,
                    .modes = {{0, "MAXN"}, {1, "5W"}},
                    .n_storage = 1,
                    .storage = {{.medium = "usb-ssd", .dataset_root = "/mnt/ssd/data"}},
                    .started_us = INT64_C(1700000000123456),
                    .n_runs = 2,
                    .runs = {{T_RUN, 2, 17, false}, {"r00000000000000ff", 1, 4, true}}};
    json_t *sw = json_pack("{s:s, s:s}", "jetpack", "4.6.4", "torch", "1.10.0");
    jf_msg_t m = t_roundtrip(jf_msg_hello_new(42, &h, sw), JF_MSG_TO_COORD);
    json_decref(sw);
    assert_int_equal(m.type, JF_MSG_HELLO);
    assert_int_equal(m.id, 42);
    jf_hello_t b = {0};
    assert_int_equal(jf_msg_hello_parse(m.body, &b, NULL), 0);
    assert_string_equal(b.name, "nano-03");
    assert_int_equal(b.board_type, JF_BOARD_NANO);
    assert_string_equal(b.platform, "jetson");
    assert_int_equal(b.n_modes, 2);
    assert_int_equal(b.modes[1].id, 1);
    assert_string_equal(b.modes[1].name, "5W");
    assert_int_equal(b.n_storage, 1);
    assert_string_equal(b.storage[0].medium, "usb-ssd");
    assert_string_equal(b.storage[0].dataset_root, "/mnt/ssd/data");
    assert_int_equal(b.started_us, h.started_us);
    assert_int_equal(b.n_runs, 2);
    assert_string_equal(b.runs[1].run, "r00000000000000ff");
    assert_int_equal(b.runs[0].attempt * 1000 + b.runs[0].next_seq, 2017);
    assert_false(b.runs[0].finished);
    assert_true(b.runs[1].finished);
    assert_string_equal(t_str(json_object_get(m.body, "software"), "torch"), "1.10.0");
    jf_msg_fini(&m);
    // Without software, and with no storage and no runs.
    h.n_storage = 0;
    h.n_runs = 0;
    m = t_roundtrip(jf_msg_hello_new(0, &h, NULL), JF_MSG_TO_COORD);
    assert_int_equal(jf_msg_hello_parse(m.body, &b, NULL), 0);
    assert_int_equal(b.n_storage + b.n_runs, 0);
    jf_msg_fini(&m);
}

static void test_welcome_roundtrip(void **state)
{
    (void) state;
    jf_welcome_t w = {.session = "00112233aabbccdd",
                      .coordinator_epoch = 7,
                      .heartbeat_us = 2 * JF_US_PER_S,
                      .heartbeat_timeout_us = 6 * JF_US_PER_S,
                      .telemetry_hz = 5,
                      .n_resume = 2,
                      .resume = {{T_RUN, 3, 12, JF_RESUME_CONTINUE},
                                 {"r00000000000000ff", 1, 0, JF_RESUME_DROP}}};
    jf_msg_t m = t_roundtrip(jf_msg_welcome_new(1, 9, &w), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_WELCOME);
    assert_int_equal(t_int(m.body, "re"), 9);
    jf_welcome_t b = {0};
    assert_int_equal(jf_msg_welcome_parse(m.body, &b, NULL), 0);
    assert_string_equal(b.session, w.session);
    assert_int_equal(b.coordinator_epoch, 7);
    assert_int_equal(b.heartbeat_us, w.heartbeat_us);
    assert_int_equal(b.heartbeat_timeout_us, w.heartbeat_timeout_us);
    assert_int_equal(b.telemetry_hz, 5);
    assert_int_equal(b.n_resume, 2);
    assert_string_equal(b.resume[0].run, T_RUN);
    assert_int_equal(b.resume[0].attempt * 100 + b.resume[0].acked_seq, 312);
    assert_int_equal(b.resume[0].action, JF_RESUME_CONTINUE);
    assert_int_equal(b.resume[1].action, JF_RESUME_DROP);
    jf_msg_fini(&m);
}

static jf_run_spec_t t_spec(void)
{
    jf_run_spec_t s = {.board = "agx-01",
                       .workload = "resnet18-cifar10",
                       .model = "resnet18",
                       .dataset = "cifar10",
                       .epochs = 4,
                       .power_mode_id = 3,
                       .power_mode = "MODE_30W_ALL",
                       .storage = "emmc",
                       .workers = 16,
                       .prefetch = 3,
                       .batch_size = 4096,
                       .repeat = 2,
                       .threads = 6,
                       .seed = (UINT64_C(1) << 53),
                       .drop_caches = true,
                       .telemetry_hz = 50,
                       .timeout_us = JF_RUN_TIMEOUT_MAX_US};
    jf_run_spec_compute_id(&s);
    return s;
}

static void test_run_assign_roundtrip(void **state)
{
    (void) state;
    jf_run_spec_t s = t_spec();
    jf_msg_t m = t_roundtrip(jf_msg_run_assign_new(3, &s, 2), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_RUN_ASSIGN);
    jf_run_spec_t b = {0};
    int64_t attempt = 0;
    assert_int_equal(jf_msg_run_assign_parse(m.body, &b, &attempt, NULL), 0);
    assert_int_equal(attempt, 2);
    assert_string_equal(b.run_id, s.run_id);
    assert_string_equal(b.board, s.board);
    assert_string_equal(b.workload, s.workload);
    assert_string_equal(b.model, s.model);
    assert_string_equal(b.dataset, s.dataset);
    assert_string_equal(b.power_mode, s.power_mode);
    assert_string_equal(b.storage, s.storage);
    assert_int_equal(b.epochs * 100 + b.power_mode_id, 403);
    assert_int_equal(b.workers * 100 + b.prefetch, 1603);
    assert_int_equal(b.batch_size, 4096);
    assert_int_equal(b.repeat * 100 + b.threads, 206);
    assert_int_equal(b.seed, s.seed);
    assert_true(b.drop_caches);
    assert_int_equal(b.telemetry_hz, 50);
    assert_int_equal(b.timeout_us, s.timeout_us);
    jf_run_spec_compute_id(&b);
    assert_string_equal(b.run_id, s.run_id);
    jf_msg_fini(&m);
}

static void t_expect_ref(const json_t *body, int64_t attempt, int64_t seq)
{
    jf_msg_run_ref_t r = {0};
    assert_int_equal(jf_msg_run_ref_parse(body, &r, NULL), 0);
    assert_string_equal(r.run, T_RUN);
    assert_int_equal(r.attempt, attempt);
    assert_int_equal(r.seq, seq);
}

static void test_run_ref_and_ack_roundtrip(void **state)
{
    (void) state;
    jf_msg_t m = t_roundtrip(jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, 4, T_RUN, 3), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_ACCEPT);
    t_expect_ref(m.body, 3, 0);
    jf_msg_fini(&m);
    m = t_roundtrip(jf_msg_run_ref_new(JF_MSG_RUN_CANCEL, 5, T_RUN, INT32_MAX), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_RUN_CANCEL);
    t_expect_ref(m.body, INT32_MAX, 0);
    jf_msg_fini(&m);
    m = t_roundtrip(jf_msg_ack_new(6, T_RUN, 1, JF_SEQ_MAX), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_ACK);
    t_expect_ref(m.body, 1, JF_SEQ_MAX);
    jf_msg_fini(&m);
}

static void test_run_failed_reject_done_roundtrip(void **state)
{
    (void) state;
    jf_msg_run_ref_t ref = {.run = T_RUN, .attempt = 2, .seq = 9};
    jf_msg_t m = t_roundtrip(jf_msg_run_failed_new(7, &ref, JF_FAIL_TIMEOUT, "killed after 2h"),
                             JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_FAILED);
    t_expect_ref(m.body, 2, 9);
    jf_fail_reason_t reason = JF_FAIL_OOM;
    char detail[JF_MSG_TEXT_MAX + 1];
    assert_int_equal(jf_msg_run_failure_parse(m.body, &reason, detail, sizeof detail, NULL), 0);
    assert_int_equal(reason, JF_FAIL_TIMEOUT);
    assert_string_equal(detail, "killed after 2h");
    jf_msg_fini(&m);

    m = t_roundtrip(jf_msg_run_reject_new(8, T_RUN, 2, JF_FAIL_BUSY, NULL), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_REJECT);
    t_expect_ref(m.body, 2, 0);
    assert_int_equal(jf_msg_run_failure_parse(m.body, &reason, detail, sizeof detail, NULL), 0);
    assert_int_equal(reason, JF_FAIL_BUSY);
    assert_string_equal(detail, "");
    jf_msg_fini(&m);

    m = t_roundtrip(jf_msg_run_done_new(9, &ref, 4), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_DONE);
    t_expect_ref(m.body, 2, 9);
    assert_int_equal(t_int(m.body, "epochs"), 4);
    jf_msg_fini(&m);
}

// Failure details quote child output: hostile bytes are cut and replaced, never break the JSON.
static void test_failure_detail_is_sanitised(void **state)
{
    (void) state;
    char hostile[2 * JF_MSG_TEXT_MAX];
    memset(hostile, 'a', sizeof hostile - 1);
    hostile[sizeof hostile - 1] = '\0';
    memcpy(hostile, "\xff\xfe\x01\n\x7f\"", 6);
    jf_msg_run_ref_t ref = {.run = T_RUN, .attempt = 1, .seq = 1};
    jf_msg_t m =
        t_roundtrip(jf_msg_run_failed_new(1, &ref, JF_FAIL_CRASHED, hostile), JF_MSG_TO_COORD);
    jf_fail_reason_t reason = JF_FAIL_OOM;
    char detail[JF_MSG_TEXT_MAX + 1];
    assert_int_equal(jf_msg_run_failure_parse(m.body, &reason, detail, sizeof detail, NULL), 0);
    assert_int_equal(strlen(detail), JF_MSG_TEXT_MAX);
    assert_memory_equal(detail, "?????\"aaa", 9);
    jf_msg_fini(&m);
}

static void test_progress_and_telemetry_roundtrip(void **state)
{
    (void) state;
    json_t *info = json_pack("{s:s, s:i, s:b}", "device", "cuda:0", "threads", 6, "cudnn", 1);
    jf_epoch_rec_t e = {.epoch = 0,
                        .warmup = true,
                        .e2e_us = 12500000,
                        .fetch_stall_us = 40,
                        .compute_us = 11000000,
                        .samples = 60000,
                        .has_loss = true,
                        .loss = 0.5};
    jf_minibatch_rec_t mb = {.epoch = 1,
                             .index = 937,
                             .samples = 32,
                             .fetch_stall_us = 7,
                             .compute_us = 900,
                             .has_loss = false};
    json_t *items = json_pack("[o, o, o]", jf_record_start_to_json(info),
                              jf_record_epoch_to_json(&e), jf_record_minibatch_to_json(&mb));
    json_decref(info);
    jf_msg_run_ref_t ref = {.run = T_RUN, .attempt = 1, .seq = 3};
    json_t *msg = jf_msg_run_progress_new(10, &ref, &items);
    assert_null(items);
    jf_msg_t m = t_roundtrip(msg, JF_MSG_TO_COORD);
    t_expect_ref(m.body, 1, 3);
    json_t *recs = json_object_get(m.body, "records");
    jf_record_t r[3];
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(jf_record_parse(json_array_get(recs, i), &r[i], NULL), 0);
    }
    assert_int_equal(r[0].kind, JF_REC_START);
    assert_string_equal(t_str(r[0].info, "device"), "cuda:0");
    assert_int_equal(r[1].kind, JF_REC_EPOCH);
    assert_true(r[1].epoch.warmup && r[1].epoch.has_loss);
    assert_int_equal(r[1].epoch.e2e_us + r[1].epoch.fetch_stall_us, 12500040);
    assert_int_equal(r[1].epoch.compute_us, 11000000);
    assert_int_equal(r[1].epoch.samples, 60000);
    assert_true(r[1].epoch.loss == 0.5);
    assert_int_equal(r[2].kind, JF_REC_MINIBATCH);
    assert_int_equal(r[2].minibatch.index * 100 + r[2].minibatch.samples, 93732);
    assert_int_equal(r[2].minibatch.fetch_stall_us + r[2].minibatch.compute_us, 907);
    assert_false(r[2].minibatch.has_loss);
    jf_msg_fini(&m);

    items = json_pack("[{s:I, s:f}]", "t_us", (json_int_t) 1700000000000001, "power_mw", 5120.5);
    msg = jf_msg_telemetry_new(11, &ref, &items);
    assert_null(items);
    m = t_roundtrip(msg, JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_TELEMETRY);
    json_t *s0 = json_array_get(json_object_get(m.body, "samples"), 0);
    assert_int_equal(t_int(s0, "t_us"), 1700000000000001);
    assert_true(json_real_value(json_object_get(s0, "power_mw")) == 5120.5);
    jf_msg_fini(&m);
}

static void test_heartbeat_roundtrip(void **state)
{
    (void) state;
    int64_t before = jf_clock_wall_us();
    jf_msg_t m = t_roundtrip(jf_msg_heartbeat_new(12, T_RUN), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_HEARTBEAT);
    assert_in_range(t_int(m.body, "t_us"), before, jf_clock_wall_us());
    assert_string_equal(t_str(m.body, "run"), T_RUN);
    jf_msg_fini(&m);
    m = t_roundtrip(jf_msg_heartbeat_new(13, NULL), JF_MSG_TO_AGENT);
    assert_int_equal(m.id, 13);
    json_t *run = json_object_get(m.body, "run");
    assert_true(!run || json_is_null(run));
    jf_msg_fini(&m);
}

static void test_error_roundtrip(void **state)
{
    (void) state;
    char code[JF_IDENT_MAX + 1];
    char detail[JF_MSG_TEXT_MAX + 1];
    jf_msg_t m = t_roundtrip(jf_msg_error_new(14, 4, JF_MSG_E_BAD_FIELD, "'seq' must be >= 1"),
                             JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_ERROR);
    assert_int_equal(t_int(m.body, "re"), 4);
    assert_int_equal(jf_msg_error_parse(m.body, code, sizeof code, detail, sizeof detail, NULL), 0);
    assert_string_equal(code, "bad_field");
    assert_string_equal(detail, "'seq' must be >= 1");
    jf_msg_fini(&m);
    // No message to refer to: re is null. The CLI receives errors too.
    m = t_roundtrip(jf_msg_error_new(15, -1, JF_MSG_E_BAD_JSON, ""), JF_MSG_TO_CLI);
    assert_true(json_is_null(json_object_get(m.body, "re")));
    jf_msg_fini(&m);
}

// The detail of an error reply often quotes the hostile input it answers.
static void test_error_detail_hostile_bytes(void **state)
{
    (void) state;
    static const char *const details[] = {
        "caf\xe9 \xff\xfe",          // invalid UTF-8
        "\xc0\xaf\xed\xa0\x80",      // overlong and surrogate encodings
        "a\x01\x1b[31mred\x7f\tb\n", // control bytes and an ANSI escape
        "\xe2\x82",                  // truncated sequence at the end
    };
    for (size_t i = 0; i < sizeof details / sizeof details[0]; i++) {
        json_t *msg = jf_msg_error_new(16, 2, JF_MSG_E_BAD_JSON, details[i]);
        assert_non_null(msg);
        jf_msg_t m = t_roundtrip(msg, JF_MSG_TO_COORD);
        char code[JF_IDENT_MAX + 1];
        char detail[JF_MSG_TEXT_MAX + 1];
        assert_int_equal(jf_msg_error_parse(m.body, code, sizeof code, detail, sizeof detail, NULL),
                         0);
        assert_int_equal(strlen(detail), strlen(details[i]));
        for (const char *p = detail; *p; p++) {
            assert_true(*p >= 0x20 && *p < 0x7f);
        }
        jf_msg_fini(&m);
    }
    char big[3 * JF_MSG_TEXT_MAX];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    jf_msg_t m = t_roundtrip(jf_msg_error_new(17, 2, JF_MSG_E_TOO_LARGE, big), JF_MSG_TO_AGENT);
    assert_int_equal(strlen(t_str(m.body, "detail")), JF_MSG_TEXT_MAX);
    jf_msg_fini(&m);
}

// Epoch records: the energy figures travel together, and only when measured.
static void test_epoch_energy_roundtrip(void **state)
{
    (void) state;
    jf_epoch_rec_t e = {.epoch = 2,
                        .e2e_us = 1000000,
                        .samples = 10,
                        .has_energy = true,
                        .energy_mj = 9535.25,
                        .avg_power_mw = 9535.25,
                        .has_peak = true,
                        .peak_power_mw = 9600};
    json_t *rec = jf_record_epoch_to_json(&e);
    jf_record_t r;
    jf_err_t err = {0};
    assert_int_equal(jf_record_parse(rec, &r, &err), 0);
    assert_true(r.epoch.has_energy);
    assert_true(r.epoch.energy_mj == 9535.25 && r.epoch.peak_power_mw == 9600);
    json_decref(rec);
    e.has_energy = false; // not measured: absent, never 0
    rec = jf_record_epoch_to_json(&e);
    assert_null(json_object_get(rec, "energy_mj"));
    assert_null(json_object_get(rec, "avg_power_mw"));
    assert_int_equal(jf_record_parse(rec, &r, &err), 0);
    assert_false(r.epoch.has_energy);
    // Added afterwards, as the agent does once the epoch's closing sample is in. An epoch
    // shorter than a sampling period has no sample inside it, so no peak.
    e.energy_mj = 1;
    e.has_peak = false;
    assert_int_equal(jf_record_epoch_set_energy(rec, &e), 0);
    assert_int_equal(jf_record_parse(rec, &r, &err), 0);
    assert_true(r.epoch.has_energy && r.epoch.energy_mj == 1 && !r.epoch.has_peak);
    assert_null(json_object_get(rec, "peak_power_mw"));
    (void) json_object_set_new(rec, "peak_power_mw", json_real(3));
    assert_int_equal(jf_record_parse(rec, &r, &err), 0);
    assert_true(r.epoch.has_peak && r.epoch.peak_power_mw == 3);
    (void) json_object_del(rec, "energy_mj");
    assert_int_equal(jf_record_parse(rec, &r, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "'energy_mj' and 'avg_power_mw' come together"));
    (void) json_object_set_new(rec, "energy_mj", json_real(1));
    (void) json_object_set_new(rec, "avg_power_mw", json_string("high"));
    assert_int_equal(jf_record_parse(rec, &r, &err), -EPROTO);
    assert_non_null(strstr(err.msg, "'avg_power_mw' must be a finite number"));
    json_decref(rec);
}

static void t_measure_fill(jf_measure_t *m, json_t *power, const jf_measure_cache_t *cache,
                           size_t n_cache)
{
    *m = (jf_measure_t){.source = "sysfs",
                        .rate_hz = 10,
                        .achieved_rate_hz = 9.98,
                        .samples = 120,
                        .late = 1,
                        .missed = 2,
                        .max_gap_us = 250000,
                        .total = JF_ENERGY_TOTAL_INPUT_RAIL,
                        .input_rail = "VDD_IN",
                        .energy_mj = 114420.5,
                        .avg_power_mw = 9535.0,
                        .peak_power_mw = 9535.0,
                        .covered_us = 12000000,
                        .n_rails = 2,
                        .power_mode = power,
                        .has_storage = true,
                        .medium = "nvme",
                        .mount = "/mnt/nvme",
                        .device = "nvme0n1",
                        .storage_checked = true,
                        .drop_caches = JF_MEASURE_DROP_FADVISE,
                        .has_disk = true,
                        .disk_device = "nvme0n1",
                        .disk_reads = 12,
                        .disk_read_bytes = 49152,
                        .disk_read_time_us = 3000,
                        .dataset_bytes = 47341568,
                        .n_cache = n_cache,
                        .cache = cache};
    m->rails[0] = (jf_measure_rail_t){"VDD_IN", 114420.5, 9535.0, 9535.0};
    m->rails[1] = (jf_measure_rail_t){"VDD_SOC", 19200.0, 1600.0, 1600.0};
}

static void test_measure_roundtrip(void **state)
{
    (void) state;
    json_t *power = json_pack("{s:i, s:s, s:[i, i], s:b}", "mode_id", 8, "mode_name",
                              "MODE_20W_6CORE", "online_cpus", 0, 1, "dvfs_off", 0);
    jf_measure_cache_t cache[2] = {
        {.epoch = 0, .has_before = true, .before = 0.0, .has_after = true, .after = 1.0},
        {.epoch = 1, .has_after = true, .after = 0.5}};
    jf_measure_t m;
    t_measure_fill(&m, power, cache, 2);
    json_t *items = json_pack("[o]", jf_measure_to_json(&m));
    assert_non_null(items);
    jf_msg_run_ref_t ref = {.run = T_RUN, .attempt = 2, .seq = 9};
    jf_msg_t msg = t_roundtrip(jf_msg_run_progress_new(3, &ref, &items), JF_MSG_TO_COORD);
    const json_t *rec = json_array_get(json_object_get(msg.body, "records"), 0);
    jf_record_t r;
    assert_int_equal(jf_record_parse(rec, &r, NULL), 0);
    assert_int_equal(r.kind, JF_REC_MEASURE);
    assert_ptr_equal(r.measure, rec);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(t_str(energy, "total"), "input-rail");
    assert_string_equal(t_str(energy, "input_rail"), "VDD_IN");
    assert_int_equal(json_array_size(json_object_get(energy, "rails")), 2);
    assert_int_equal(t_int(json_object_get(rec, "telemetry"), "missed"), 2);
    assert_string_equal(t_str(rec, "drop_caches"), "fadvise");
    assert_string_equal(t_str(json_object_get(rec, "power_mode"), "mode_name"), "MODE_20W_6CORE");
    assert_int_equal(jf_measure_cache_count(rec), 2);
    jf_measure_cache_t c;
    assert_int_equal(jf_measure_cache_at(rec, 1, &c), 0);
    assert_true(c.epoch == 1 && !c.has_before && c.has_after && c.after == 0.5);
    assert_int_equal(jf_measure_cache_at(rec, 2, &c), -ENOENT);
    jf_msg_fini(&msg);

    // No power readable (a host without RAPL): the total says so and no figure is invented.
    m.total = JF_ENERGY_TOTAL_NONE;
    m.n_rails = 0;
    m.has_storage = m.has_disk = false;
    m.n_cache = 0;
    json_t *j = jf_measure_to_json(&m);
    assert_non_null(j);
    assert_null(json_object_get(json_object_get(j, "energy"), "energy_mj"));
    assert_null(json_object_get(j, "storage"));
    assert_null(json_object_get(j, "cache"));
    assert_int_equal(jf_measure_cache_count(j), 0);
    json_decref(j);
    // The builder refuses what the checker would refuse.
    m.achieved_rate_hz = 1e9;
    assert_null(jf_measure_to_json(&m));
    m.achieved_rate_hz = 1;
    m.power_mode = NULL;
    assert_null(jf_measure_to_json(&m));
    json_decref(power);
}

// The measure record's checker, member by member (the fixtures cover one failure each too).
static void test_measure_check_failures(void **state)
{
    (void) state;
    static const struct {
        const char *path; // member to replace, "a" or "a.b"
        const char *json; // its new value; NULL removes it
        const char *frag;
    } rows[] = {
        {"telemetry.source", NULL, "measure.telemetry: 'source' must be a string"},
        {"telemetry.samples", "-1", "'samples' must be in [0, 1099511627776], got -1"},
        {"telemetry.achieved_rate_hz", "\"fast\"", "'achieved_rate_hz' must be a finite number"},
        {"telemetry.extra", "1", "measure.telemetry: unknown member 'extra'"},
        {"energy.covered_us", NULL, "'covered_us' must be an integer"},
        {"energy.rails",
         "[{\"name\":\"\",\"energy_mj\":1,\"avg_power_mw\":1,"
         "\"peak_power_mw\":1}]",
         "rails[0]: 'name' must not be empty"},
        {"energy.input_rail", "\"\"", "'input_rail' must not be empty"},
        {"power_mode.mode_name", "\"MODE 20W\"", "'mode_name' must be a mode name"},
        {"power_mode.mode_id", "256", "'mode_id' must be in [0, 255], got 256"},
        {"power_mode.online_cpus", "[64]", "'online_cpus[0]' must be an integer in [0, 63]"},
        {"power_mode.cpu_clusters", "[{\"first_core\":0,\"min_hz\":1}]",
         "cpu_clusters[0]: 'max_hz' must be an integer"},
        {"power_mode.gpu_max_hz", "-5", "'gpu_max_hz' must be in [0, 100000000000], got -5"},
        {"power_mode.shell", "\"rm\"", "measure.power_mode: unknown member 'shell'"},
        {"storage.medium", "\"tape\"", "measure.storage: 'medium' must be one of sd"},
        {"storage.checked", "1", "'checked' must be a boolean"},
        {"drop_caches", "\"sudo\"", "'drop_caches' must be one of none, helper, fadvise"},
        {"drop_caches", NULL, "'drop_caches' must be one of none, helper, fadvise"},
        {"disk.device", "\"\"", "measure.disk: 'device' must not be empty"},
        {"disk.read_bytes", "1.5", "'read_bytes' must be an integer"},
        {"dataset_bytes", "-1", "'dataset_bytes' must be in [0, "},
        {"cache", "{}", "measure: 'cache' must be an array of at most 1000 items"},
        {"telemetry", NULL, "measure.telemetry: 'telemetry' must be an object"},
    };
    size_t len = 0;
    char *data = t_read_fixture("good", "run-progress-measure.json", &len);
    json_t *msg = json_loadb(data, len, 0, NULL);
    free(data);
    const json_t *good = json_array_get(json_object_get(msg, "records"), 1);
    assert_int_equal(jf_measure_check(good, NULL), 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *rec = json_deep_copy(good);
        char key[64];
        (void) snprintf(key, sizeof key, "%s", rows[i].path);
        char *dot = strchr(key, '.');
        json_t *parent = rec;
        if (dot) {
            *dot = '\0';
            parent = json_object_get(rec, key);
        }
        const char *member = dot ? dot + 1 : key;
        if (rows[i].json) {
            (void) json_object_set_new(parent, member,
                                       json_loads(rows[i].json, JSON_DECODE_ANY, NULL));
        } else {
            (void) json_object_del(parent, member);
        }
        jf_err_t err = {0};
        int rc = jf_measure_check(rec, &err);
        if (rc >= 0 || !strstr(err.msg, rows[i].frag)) {
            fail_msg("%s: rc %d msg '%s'", rows[i].path, rc, err.msg);
        }
        json_decref(rec);
    }
    json_decref(msg);
}

static void test_ctl_roundtrip(void **state)
{
    (void) state;
    const char *yaml = "name: smoke\ndescription: \"quote \\\" and \xc3\xa9\"\n";
    jf_msg_t m = t_roundtrip(jf_msg_ctl_submit_new(1, "sweeps/smoke.yaml", yaml), JF_MSG_TO_CTL);
    assert_int_equal(m.type, JF_MSG_CTL_SUBMIT);
    assert_string_equal(t_str(m.body, "file"), "sweeps/smoke.yaml");
    assert_string_equal(t_str(m.body, "yaml"), yaml);
    jf_msg_fini(&m);
    m = t_roundtrip(jf_msg_ctl_cancel_new(2, "smoke-2"), JF_MSG_TO_CTL);
    assert_int_equal(m.type, JF_MSG_CTL_CANCEL);
    assert_string_equal(t_str(m.body, "sweep"), "smoke-2");
    jf_msg_fini(&m);
    json_t *data = json_pack("{s:s, s:i}", "sweep", "smoke", "added", 12);
    json_t *msg = jf_msg_ctl_reply_new(3, 1, &data);
    assert_null(data);
    m = t_roundtrip(msg, JF_MSG_TO_CLI);
    assert_int_equal(m.type, JF_MSG_CTL_REPLY);
    assert_int_equal(t_int(m.body, "re"), 1);
    assert_int_equal(t_int(json_object_get(m.body, "data"), "added"), 12);
    jf_msg_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_bad_corpus_every_file_has_a_row),
        cmocka_unit_test(test_good_corpus),
        cmocka_unit_test(test_nesting_3000_deep),
        cmocka_unit_test(test_array_limits),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_type_and_reason_names),
        cmocka_unit_test(test_telemetry_sample_check),
        cmocka_unit_test(test_telemetry_sample_limits),
        cmocka_unit_test(test_record_parse_failures),
        cmocka_unit_test(test_hello_roundtrip),
        cmocka_unit_test(test_welcome_roundtrip),
        cmocka_unit_test(test_run_assign_roundtrip),
        cmocka_unit_test(test_run_ref_and_ack_roundtrip),
        cmocka_unit_test(test_run_failed_reject_done_roundtrip),
        cmocka_unit_test(test_failure_detail_is_sanitised),
        cmocka_unit_test(test_progress_and_telemetry_roundtrip),
        cmocka_unit_test(test_heartbeat_roundtrip),
        cmocka_unit_test(test_error_roundtrip),
        cmocka_unit_test(test_error_detail_hostile_bytes),
        cmocka_unit_test(test_ctl_roundtrip),
        cmocka_unit_test(test_epoch_energy_roundtrip),
        cmocka_unit_test(test_measure_roundtrip),
        cmocka_unit_test(test_measure_check_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
