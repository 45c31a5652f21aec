/* Unit tests for the wire protocol (jf_msg*.h), the building side: every builder through
 * encode, decode and the typed parsers gives back what went in (hello, welcome, run messages,
 * progress and telemetry, heartbeat, errors, epoch and measure records, control messages). The
 * corpora and generated hostile messages are msg_test.c. */
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
                    .runs = {{TMSG_RUN, 2, 17, false}, {"r00000000000000ff", 1, 4, true}}};
    json_t *sw = json_pack("{s:s, s:s}", "jetpack", "4.6.4", "torch", "1.10.0");
    jf_msg_t m = tmsg_roundtrip(jf_msg_hello_new(42, &h, sw), JF_MSG_TO_COORD);
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
    assert_string_equal(tmsg_str(json_object_get(m.body, "software"), "torch"), "1.10.0");
    assert_false(b.has_clocks);
    assert_null(json_object_get(m.body, "clocks")); // sent only when the agent has them
    jf_msg_fini(&m);
    // With the board's own clock tables (§4.1.1): every step back, in order.
    h.has_clocks = true;
    h.clocks = (jf_board_clocks_t){.n_cpus = 4,
                                   .n_cpu_steps = 3,
                                   .cpu_steps_hz = {102000000, 921600000, 1479000000},
                                   .n_gpu_steps = 2,
                                   .gpu_steps_hz = {76800000, 921600000},
                                   .n_emc_steps = 1,
                                   .emc_steps_hz = {1600000000}};
    m = tmsg_roundtrip(jf_msg_hello_new(43, &h, NULL), JF_MSG_TO_COORD);
    assert_int_equal(jf_msg_hello_parse(m.body, &b, NULL), 0);
    assert_true(b.has_clocks);
    assert_int_equal(b.clocks.type, JF_BOARD_NANO);
    assert_int_equal(b.clocks.n_cpus, 4);
    assert_int_equal(b.clocks.n_cpu_steps, 3);
    assert_int_equal(b.clocks.cpu_steps_hz[2], 1479000000);
    assert_int_equal(b.clocks.n_gpu_steps, 2);
    assert_int_equal(b.clocks.gpu_steps_hz[0], 76800000);
    assert_int_equal(b.clocks.n_emc_steps, 1);
    assert_int_equal(b.clocks.emc_steps_hz[0], 1600000000);
    jf_msg_fini(&m);
    h.has_clocks = false;
    // Without software, and with no storage and no runs.
    h.n_storage = 0;
    h.n_runs = 0;
    m = tmsg_roundtrip(jf_msg_hello_new(0, &h, NULL), JF_MSG_TO_COORD);
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
                      .resume = {{TMSG_RUN, 3, 12, JF_RESUME_CONTINUE},
                                 {"r00000000000000ff", 1, 0, JF_RESUME_DROP}}};
    jf_msg_t m = tmsg_roundtrip(jf_msg_welcome_new(1, 9, &w), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_WELCOME);
    assert_int_equal(tmsg_int(m.body, "re"), 9);
    jf_welcome_t b = {0};
    assert_int_equal(jf_msg_welcome_parse(m.body, &b, NULL), 0);
    assert_string_equal(b.session, w.session);
    assert_int_equal(b.coordinator_epoch, 7);
    assert_int_equal(b.heartbeat_us, w.heartbeat_us);
    assert_int_equal(b.heartbeat_timeout_us, w.heartbeat_timeout_us);
    assert_int_equal(b.telemetry_hz, 5);
    assert_int_equal(b.n_resume, 2);
    assert_string_equal(b.resume[0].run, TMSG_RUN);
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
    jf_msg_t m = tmsg_roundtrip(jf_msg_run_assign_new(3, &s, 2), JF_MSG_TO_AGENT);
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
    // The decoder already left the typed form in the message: the agent takes it from there.
    assert_non_null(m.assign);
    assert_int_equal(m.assign->attempt, 2);
    jf_run_spec_t typed = m.assign->spec;
    assert_string_equal(typed.run_id, s.run_id);
    assert_int_equal(typed.batch_size, s.batch_size);
    jf_run_spec_compute_id(&typed); // every field that defines the run is in the id
    assert_string_equal(typed.run_id, s.run_id);
    jf_msg_fini(&m);
    assert_null(m.assign);
}

static void t_expect_ref(const json_t *body, int64_t attempt, int64_t seq)
{
    jf_msg_run_ref_t r = {0};
    assert_int_equal(jf_msg_run_ref_parse(body, &r, NULL), 0);
    assert_string_equal(r.run, TMSG_RUN);
    assert_int_equal(r.attempt, attempt);
    assert_int_equal(r.seq, seq);
}

static void test_run_ref_and_ack_roundtrip(void **state)
{
    (void) state;
    jf_msg_t m = tmsg_roundtrip(jf_msg_run_ref_new(JF_MSG_RUN_ACCEPT, 4, TMSG_RUN, 3), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_ACCEPT);
    t_expect_ref(m.body, 3, 0);
    jf_msg_fini(&m);
    m = tmsg_roundtrip(jf_msg_run_ref_new(JF_MSG_RUN_CANCEL, 5, TMSG_RUN, INT32_MAX), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_RUN_CANCEL);
    t_expect_ref(m.body, INT32_MAX, 0);
    jf_msg_fini(&m);
    m = tmsg_roundtrip(jf_msg_ack_new(6, TMSG_RUN, 1, JF_SEQ_MAX), JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_ACK);
    t_expect_ref(m.body, 1, JF_SEQ_MAX);
    jf_msg_fini(&m);
}

// Credit (docs/protocol.md §5.3.6): optional in welcome and ack, 1..JF_CREDIT_MAX, absent = 0.
static void test_credit_members(void **state)
{
    (void) state;
    json_t *ack = jf_msg_ack_new(6, TMSG_RUN, 1, 2);
    assert_int_equal(jf_msg_set_credit(ack, 4), 0);
    jf_msg_t m = tmsg_roundtrip(ack, JF_MSG_TO_AGENT);
    int64_t credit = -1;
    assert_int_equal(jf_msg_credit_parse(m.body, &credit, NULL), 0);
    assert_int_equal(credit, 4);
    jf_msg_fini(&m);
    m = tmsg_roundtrip(jf_msg_ack_new(7, TMSG_RUN, 1, 2), JF_MSG_TO_AGENT);
    assert_int_equal(jf_msg_credit_parse(m.body, &credit, NULL), 0);
    assert_int_equal(credit, 0);
    jf_msg_fini(&m);
    jf_welcome_t w = {.session = "00112233aabbccdd", .coordinator_epoch = 1,
                      .heartbeat_us = 2 * JF_US_PER_S, .heartbeat_timeout_us = 6 * JF_US_PER_S,
                      .telemetry_hz = 1, .credit = JF_CREDIT_MAX};
    m = tmsg_roundtrip(jf_msg_welcome_new(1, 9, &w), JF_MSG_TO_AGENT);
    jf_welcome_t b = {0};
    assert_int_equal(jf_msg_welcome_parse(m.body, &b, NULL), 0);
    assert_int_equal(b.credit, JF_CREDIT_MAX);
    jf_msg_fini(&m);
    json_t *bad = jf_msg_ack_new(8, TMSG_RUN, 1, 2);
    assert_int_equal(jf_msg_set_credit(bad, JF_CREDIT_MAX + 1), -EINVAL);
    const char *refused[] = {
        "{\"v\":1,\"type\":\"ack\",\"id\":3,\"run\":\"" TMSG_RUN "\",\"attempt\":1,\"seq\":2,"
        "\"credit\":0}",
        "{\"v\":1,\"type\":\"ack\",\"id\":3,\"run\":\"" TMSG_RUN "\",\"attempt\":1,\"seq\":2,"
        "\"credit\":33}",
        "{\"v\":1,\"type\":\"ack\",\"id\":3,\"run\":\"" TMSG_RUN "\",\"attempt\":1,\"seq\":2,"
        "\"credit\":\"4\"}"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        tmsg_decoded_t d = tmsg_decode(refused[i], strlen(refused[i]), JF_MSG_TO_AGENT);
        tmsg_expect_fail(refused[i], &d, -EPROTO, "bad_field", "credit", 3);
    }
    json_decref(bad);
}

static void test_run_failed_reject_done_roundtrip(void **state)
{
    (void) state;
    jf_msg_run_ref_t ref = {.run = TMSG_RUN, .attempt = 2, .seq = 9};
    jf_msg_t m = tmsg_roundtrip(jf_msg_run_failed_new(7, &ref, JF_FAIL_TIMEOUT, "killed after 2h"),
                             JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_FAILED);
    t_expect_ref(m.body, 2, 9);
    jf_fail_reason_t reason = JF_FAIL_OOM;
    char detail[JF_MSG_TEXT_MAX + 1];
    assert_int_equal(jf_msg_run_failure_parse(m.body, &reason, detail, sizeof detail, NULL), 0);
    assert_int_equal(reason, JF_FAIL_TIMEOUT);
    assert_string_equal(detail, "killed after 2h");
    jf_msg_fini(&m);

    m = tmsg_roundtrip(jf_msg_run_reject_new(8, TMSG_RUN, 2, JF_FAIL_BUSY, NULL), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_REJECT);
    t_expect_ref(m.body, 2, 0);
    assert_int_equal(jf_msg_run_failure_parse(m.body, &reason, detail, sizeof detail, NULL), 0);
    assert_int_equal(reason, JF_FAIL_BUSY);
    assert_string_equal(detail, "");
    jf_msg_fini(&m);

    m = tmsg_roundtrip(jf_msg_run_done_new(9, &ref, 4), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_RUN_DONE);
    t_expect_ref(m.body, 2, 9);
    assert_int_equal(tmsg_int(m.body, "epochs"), 4);
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
    jf_msg_run_ref_t ref = {.run = TMSG_RUN, .attempt = 1, .seq = 1};
    jf_msg_t m =
        tmsg_roundtrip(jf_msg_run_failed_new(1, &ref, JF_FAIL_CRASHED, hostile), JF_MSG_TO_COORD);
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
    jf_msg_run_ref_t ref = {.run = TMSG_RUN, .attempt = 1, .seq = 3};
    json_t *msg = jf_msg_run_progress_new(10, &ref, &items);
    assert_null(items);
    jf_msg_t m = tmsg_roundtrip(msg, JF_MSG_TO_COORD);
    t_expect_ref(m.body, 1, 3);
    json_t *recs = json_object_get(m.body, "records");
    jf_record_t r[3];
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(jf_record_parse(json_array_get(recs, i), &r[i], NULL), 0);
    }
    assert_int_equal(r[0].kind, JF_REC_START);
    assert_string_equal(tmsg_str(r[0].info, "device"), "cuda:0");
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
    m = tmsg_roundtrip(msg, JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_TELEMETRY);
    json_t *s0 = json_array_get(json_object_get(m.body, "samples"), 0);
    assert_int_equal(tmsg_int(s0, "t_us"), 1700000000000001);
    assert_true(json_real_value(json_object_get(s0, "power_mw")) == 5120.5);
    jf_msg_fini(&m);
}

static void test_heartbeat_roundtrip(void **state)
{
    (void) state;
    int64_t before = jf_clock_wall_us();
    jf_msg_t m = tmsg_roundtrip(jf_msg_heartbeat_new(12, TMSG_RUN), JF_MSG_TO_COORD);
    assert_int_equal(m.type, JF_MSG_HEARTBEAT);
    assert_in_range(tmsg_int(m.body, "t_us"), before, jf_clock_wall_us());
    assert_string_equal(tmsg_str(m.body, "run"), TMSG_RUN);
    jf_msg_fini(&m);
    m = tmsg_roundtrip(jf_msg_heartbeat_new(13, NULL), JF_MSG_TO_AGENT);
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
    jf_msg_t m = tmsg_roundtrip(jf_msg_error_new(14, 4, JF_MSG_E_BAD_FIELD, "'seq' must be >= 1"),
                             JF_MSG_TO_AGENT);
    assert_int_equal(m.type, JF_MSG_ERROR);
    assert_int_equal(tmsg_int(m.body, "re"), 4);
    assert_int_equal(jf_msg_error_parse(m.body, code, sizeof code, detail, sizeof detail, NULL), 0);
    assert_string_equal(code, "bad_field");
    assert_string_equal(detail, "'seq' must be >= 1");
    jf_msg_fini(&m);
    // No message to refer to: re is null. The CLI receives errors too.
    m = tmsg_roundtrip(jf_msg_error_new(15, -1, JF_MSG_E_BAD_JSON, ""), JF_MSG_TO_CLI);
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
        jf_msg_t m = tmsg_roundtrip(msg, JF_MSG_TO_COORD);
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
    jf_msg_t m = tmsg_roundtrip(jf_msg_error_new(17, 2, JF_MSG_E_TOO_LARGE, big), JF_MSG_TO_AGENT);
    assert_int_equal(strlen(tmsg_str(m.body, "detail")), JF_MSG_TEXT_MAX);
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

static void t_measure_fill(jf_measure_t *m, const json_t *power, const jf_measure_cache_t *cache,
                           size_t n_cache)
{
    *m = (jf_measure_t){.source = "sysfs",
                        .rate_hz = 10,
                        .achieved_rate_hz = 9.98,
                        .samples = 120,
                        .late = 1,
                        .missed = 2,
                        .max_gap_us = 250000,
                        .total = JF_MEASURE_TOTAL_INPUT_RAIL,
                        .input_rail = "VDD_IN",
                        .energy_mj = 114420.5,
                        .avg_power_mw = 9535.0,
                        .peak_power_mw = 9535.0,
                        .has_energy = true,
                        .covered_us = 12000000,
                        .n_rails = 2,
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
                        .n_cache = n_cache};
    memcpy(m->cache, cache, n_cache * sizeof *cache);
    assert_int_equal(jf_schema_decode(jf_measure_power_schema(), power, &m->power, NULL), 0);
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
    static jf_measure_t m; // ~40 kB
    t_measure_fill(&m, power, cache, 2);
    json_t *items = json_pack("[o]", jf_measure_to_json(&m));
    assert_non_null(items);
    jf_msg_run_ref_t ref = {.run = TMSG_RUN, .attempt = 2, .seq = 9};
    jf_msg_t msg = tmsg_roundtrip(jf_msg_run_progress_new(3, &ref, &items), JF_MSG_TO_COORD);
    const json_t *rec = json_array_get(json_object_get(msg.body, "records"), 0);
    jf_record_t r;
    assert_int_equal(jf_record_parse(rec, &r, NULL), 0);
    assert_int_equal(r.kind, JF_REC_MEASURE);
    assert_ptr_equal(r.measure, rec);
    const json_t *energy = json_object_get(rec, "energy");
    assert_string_equal(tmsg_str(energy, "total"), "input-rail");
    assert_string_equal(tmsg_str(energy, "input_rail"), "VDD_IN");
    assert_int_equal(json_array_size(json_object_get(energy, "rails")), 2);
    assert_int_equal(tmsg_int(json_object_get(rec, "telemetry"), "missed"), 2);
    assert_string_equal(tmsg_str(rec, "drop_caches"), "fadvise");
    assert_string_equal(tmsg_str(json_object_get(rec, "power_mode"), "mode_name"), "MODE_20W_6CORE");
    assert_int_equal(jf_measure_cache_count(rec), 2);
    jf_measure_cache_t c;
    assert_int_equal(jf_measure_cache_at(rec, 1, &c), 0);
    assert_true(c.epoch == 1 && !c.has_before && c.has_after && c.after == 0.5);
    assert_int_equal(jf_measure_cache_at(rec, 2, &c), -ENOENT);
    jf_msg_fini(&msg);

    // No power readable (a host without RAPL): the total says so and no figure is invented.
    m.total = JF_MEASURE_TOTAL_NONE;
    m.has_energy = false;
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
    m.n_rails = JF_MEASURE_RAILS_MAX + 1; // more rails than the array holds
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
    char *data = tmsg_read_fixture("good", "run-progress-measure.json", &len);
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
    jf_msg_t m = tmsg_roundtrip(jf_msg_ctl_submit_new(1, "sweeps/smoke.yaml", yaml), JF_MSG_TO_CTL);
    assert_int_equal(m.type, JF_MSG_CTL_SUBMIT);
    assert_string_equal(tmsg_str(m.body, "file"), "sweeps/smoke.yaml");
    assert_string_equal(tmsg_str(m.body, "yaml"), yaml);
    jf_msg_fini(&m);
    m = tmsg_roundtrip(jf_msg_ctl_cancel_new(2, "smoke-2"), JF_MSG_TO_CTL);
    assert_int_equal(m.type, JF_MSG_CTL_CANCEL);
    assert_string_equal(tmsg_str(m.body, "sweep"), "smoke-2");
    jf_msg_fini(&m);
    json_t *data = json_pack("{s:s, s:i}", "sweep", "smoke", "added", 12);
    json_t *msg = jf_msg_ctl_reply_new(3, 1, &data);
    assert_null(data);
    m = tmsg_roundtrip(msg, JF_MSG_TO_CLI);
    assert_int_equal(m.type, JF_MSG_CTL_REPLY);
    assert_int_equal(tmsg_int(m.body, "re"), 1);
    assert_int_equal(tmsg_int(json_object_get(m.body, "data"), "added"), 12);
    jf_msg_fini(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_roundtrip),
        cmocka_unit_test(test_welcome_roundtrip),
        cmocka_unit_test(test_run_assign_roundtrip),
        cmocka_unit_test(test_run_ref_and_ack_roundtrip),
        cmocka_unit_test(test_credit_members),
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

