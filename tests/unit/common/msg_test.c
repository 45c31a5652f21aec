/* Unit tests for the wire protocol (jf_msg*.h), the refusing side: the hostile corpus in
 * tests/fixtures/messages/bad/ (one table row per file), the good corpus (one message of every
 * type, checked against every direction), generated messages (deep nesting, huge arrays,
 * oversize frames), names and small tables, and the sample and record checkers. The builders'
 * round trips are msg_roundtrip_test.c. */
#include "jf_msg.h"
#include "jf_msg_ctl.h"
#include "jf_msg_measure.h"
#include "jf_msg_run.h"
#include "jf_msg_session.h"
#include "jf_units.h"
#include "msg_support.h"

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

#define T_NESTING 3000

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
    {"hello-clocks-descending.json", C, P, BF, "'clocks.cpu_hz[1]' must be an integer 1..", 1},
    {"hello-clocks-cores-13.json", C, P, BF, "clocks: 'cores' must be in [1, 12]", 1},
    {"hello-clocks-unknown-member.json", C, P, BF, "'clocks' must be {cores, cpu_hz, gpu_hz", 1},
    {"hello-clocks-hz-string.json", C, P, BF, "'clocks.cpu_hz[0]' must be an integer", 1},
    {"hello-clocks-no-cpu-step.json", C, P, BF, "'clocks.cpu_hz' must be an array of 1..32", 1},
    {"hello-clocks-33-steps.json", C, P, BF, "'clocks.gpu_hz' must be an array of 0..32", 1},
    {"hello-clocks-hz-zero.json", C, P, BF, "'clocks.gpu_hz[0]' must be an integer 1..", 1},
    {"hello-clocks-array.json", C, P, BF, "'clocks' must be {cores, cpu_hz, gpu_hz, emc_hz}", 1},
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
    // weight blobs (protocol §5.7)
    {"blob-get-sha-upper.json", C, P, BF, "'blob' must be 64 lowercase hex digits", 10},
    {"blob-get-offset-negative.json", C, P, BF, "'offset' must be in [0, 67108863], got -1", 11},
    {"blob-get-unknown-member.json", C, P, BF, "blob.get: unknown member 'path'", 12},
    {"blob-data-not-base64.json", A, P, BF, "'data': not base64", 13},
    {"blob-data-past-size.json", A, P, BF, "chunk [8, 24) ends past the blob's 'size_bytes' 16",
     14},
    {"blob-data-chunk-too-long.json", A, P, BF, "not padded base64 of at most 98304 bytes", 15},
    {"blob-data-no-re.json", A, P, BF, "'re'", 16},
    {"weights-seq-missing.json", C, P, BF, "run.weights: 'seq' must be an integer", 17},
    {"weights-size-over-max.json", C, P, BF, "'size_bytes' must be in [1, 67108864]", 18},
    {"weights-data-empty.json", C, P, BF, "'data' is empty", 19},
    {"weights-data-number.json", C, P, BF, "'data' must be a string", 20},
    {"weights-blob-short.json", C, P, BF, "'blob' must be 64 lowercase hex digits", 21},
    {"type-wrong-dir-blob-data-to-coord.json", C, P, UT, "type 'blob.data'", 22},
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
    {"heartbeat-echo-alone.json", C, P, BF, "'echo_t_us' and 'recv_t_us' must come together", 5},
    {"heartbeat-echo-negative.json", C, P, BF, "'echo_t_us' must be in [0, ", 5},
    {"heartbeat-recv-after-send.json", C, P, BF, "'recv_t_us' 1700000000000001 is after 't_us'", 5},
    {"heartbeat-recv-string.json", C, P, BF, "'recv_t_us'", 5},
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
        char *data = tmsg_read_fixture("bad", s_bad[i].file, &len);
        tmsg_decoded_t d = tmsg_decode(data, len, s_bad[i].dir);
        failed += !tmsg_check_fail(s_bad[i].file, &d, s_bad[i].rc, s_bad[i].code, s_bad[i].frag,
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
    {"heartbeat-echo.json", JF_MSG_HEARTBEAT, JF_MSG_TO_COORD | JF_MSG_TO_AGENT},
    {"error.json", JF_MSG_ERROR, JF_MSG_TO_COORD | JF_MSG_TO_AGENT | JF_MSG_TO_CLI},
    {"ctl-status.json", JF_MSG_CTL_STATUS, JF_MSG_TO_CTL},
    {"ctl-submit.json", JF_MSG_CTL_SUBMIT, JF_MSG_TO_CTL},
    {"ctl-cancel.json", JF_MSG_CTL_CANCEL, JF_MSG_TO_CTL},
    {"ctl-reply.json", JF_MSG_CTL_REPLY, JF_MSG_TO_CLI},
    {"blob-get.json", JF_MSG_BLOB_GET, JF_MSG_TO_COORD},
    {"run-weights.json", JF_MSG_RUN_WEIGHTS, JF_MSG_TO_COORD},
    {"blob-data.json", JF_MSG_BLOB_DATA, JF_MSG_TO_AGENT},
};

static void t_good_one(const t_good_t *g, const char *data, size_t len, unsigned dir, int64_t id)
{
    tmsg_decoded_t d = tmsg_decode(data, len, dir);
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
    tmsg_expect_fail(what, &d, -EPROTO, JF_MSG_E_UNKNOWN_TYPE, "is not a message this receiver", id);
}

static void test_good_corpus(void **state)
{
    (void) state;
    bool seen[JF_MSG_TYPE_COUNT] = {false};
    for (size_t i = 0; i < sizeof s_good / sizeof s_good[0]; i++) {
        size_t len = 0;
        char *data = tmsg_read_fixture("good", s_good[i].file, &len);
        json_t *plain = json_loadb(data, len, 0, NULL);
        assert_non_null(plain);
        int64_t id = tmsg_int(plain, "id");
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
    tmsg_decoded_t d = tmsg_decode(buf, hl + 2 * T_NESTING + 1, JF_MSG_TO_COORD);
    tmsg_expect_fail("nesting 3000", &d, -EPROTO, JF_MSG_E_BAD_JSON, "maximum parsing depth", -1);
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
    jf_msg_run_ref_t ref = {.run = TMSG_RUN, .attempt = 1, .seq = 1};
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
        tmsg_decoded_t d = tmsg_decode(text, len, JF_MSG_TO_COORD);
        if (rows[i].frag) {
            tmsg_expect_fail("array limit", &d, -EPROTO, JF_MSG_E_BAD_FIELD, rows[i].frag, 11);
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
        size_t max = tmsg_max_bytes(dirs[i]);
        char *buf = malloc(max + 1);
        assert_non_null(buf);
        memset(buf, ' ', max + 1); // JSON allows trailing white space
        memcpy(buf, hb, strlen(hb));
        tmsg_decoded_t d = tmsg_decode(buf, max, dirs[i]); // exactly at the limit: accepted
        assert_int_equal(d.rc, 0);
        jf_msg_fini(&d.msg);
        d = tmsg_decode(buf, max + 1, dirs[i]);
        char frag[64];
        (void) snprintf(frag, sizeof frag, "of %zu bytes exceeds the limit of %zu", max + 1, max);
        tmsg_expect_fail("oversize", &d, -EMSGSIZE, JF_MSG_E_TOO_LARGE, frag, -1);
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
        "error",      "ctl.status", "ctl.submit", "ctl.cancel",   "ctl.reply", "blob.get",
        "run.weights", "blob.data",
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

// The hello retry steps (docs/protocol.md §4.1.1): 1 s, then 4, 8, 16 s and 30 s from then on,
// whatever the count (no shift overflows).
static void test_hello_backoff(void **state)
{
    (void) state;
    const int64_t want_s[] = {1, 4, 8, 16, 30, 30, 30};
    for (int tries = 0; tries < 7; tries++) {
        assert_int_equal(jf_hello_backoff_us(tries), want_s[tries] * JF_US_PER_S);
    }
    assert_int_equal(jf_hello_backoff_us(-1), JF_HELLO_RETRY_FIRST_US);
    assert_int_equal(jf_hello_backoff_us(1000000), JF_HELLO_RETRY_MAX_US);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_corpus),
        cmocka_unit_test(test_hello_backoff),
        cmocka_unit_test(test_bad_corpus_every_file_has_a_row),
        cmocka_unit_test(test_good_corpus),
        cmocka_unit_test(test_nesting_3000_deep),
        cmocka_unit_test(test_array_limits),
        cmocka_unit_test(test_size_limit),
        cmocka_unit_test(test_type_and_reason_names),
        cmocka_unit_test(test_telemetry_sample_check),
        cmocka_unit_test(test_telemetry_sample_limits),
        cmocka_unit_test(test_record_parse_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

