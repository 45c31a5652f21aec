/* Unit tests for train_records: the exact line shapes of the output contract (start, minibatch,
 * epoch with sums, done, error), a simulated run's additions, the final document, and write
 * failures. */
#include "train_records.h"

#include "jf_msg_run.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#define T_LINES_MAX 16

static const train_records_params_t t_params = {.model = "lenet5",
                                                .dataset = "mnist",
                                                .device = "cpu",
                                                .blas = "generic",
                                                .torch_version = "1.13.0",
                                                .threads = 1,
                                                .workers = 2,
                                                .prefetch = 2,
                                                .batch = 16,
                                                .epochs = 2,
                                                .seed = 9,
                                                .drop_last = true,
                                                .samples = 24,
                                                .batches_per_epoch = 2};

// Splits the captured text into JSON lines; every line must parse.
static size_t t_parse_lines(char *text, json_t **lines)
{
    size_t n = 0;
    for (char *line = text, *nl = NULL; *line && n < T_LINES_MAX; line = nl + 1) {
        nl = strchr(line, '\n');
        assert_non_null(nl); // every record ends with a newline
        *nl = '\0';
        json_error_t jerr;
        lines[n] = json_loads(line, 0, &jerr);
        assert_non_null(lines[n]);
        n++;
    }
    return n;
}

static void t_assert_keys(const json_t *obj, const char *const *keys, size_t count)
{
    assert_int_equal(json_object_size(obj), count);
    size_t i = 0;
    const char *key = NULL;
    json_t *value = NULL;
    json_object_foreach((json_t *)obj, key, value)
    {
        assert_string_equal(key, keys[i++]); // the contract's order
    }
}

static double t_real(const json_t *obj, const char *key)
{
    return json_number_value(json_object_get(obj, key));
}

// Records two epochs: 16 + 8 samples with losses 2 and 1, then one NaN-loss minibatch.
static void t_record_run(train_records_t *r)
{
    train_minibatch_rec_t m1 = {
        .index = 0, .samples = 16, .fetch_stall_us = 1000, .compute_us = 10000, .loss = 2.0};
    train_minibatch_rec_t m2 = {
        .index = 1, .samples = 8, .fetch_stall_us = 2000, .compute_us = 20000, .loss = 1.0};
    train_minibatch_rec_t m3 = {.index = 0, .samples = 16, .loss = NAN};
    assert_int_equal(train_records_start(r, NULL), 0);
    train_records_epoch_begin(r, 0);
    assert_int_equal(train_records_minibatch(r, &m1, NULL), 0);
    assert_int_equal(train_records_minibatch(r, &m2, NULL), 0);
    assert_int_equal(train_records_epoch_end(r, 100000, NULL), 0);
    train_records_epoch_begin(r, 1);
    assert_int_equal(train_records_minibatch(r, &m3, NULL), 0);
    assert_int_equal(train_records_epoch_end(r, 0, NULL), 0);
    assert_int_equal(train_records_done(r, NULL), 0);
}

static int64_t t_int(const json_t *line, const char *key)
{
    const json_t *v = json_object_get(line, key);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

// A minibatch or epoch line, less the trainer's own samples_per_s, is a record the wire decoder
// takes as it is: the trainer writes what the coordinator reads, in the same units.
static void t_expect_wire_record(const json_t *line)
{
    json_t *rec = json_deep_copy(line);
    assert_non_null(rec);
    (void) json_object_del(rec, "samples_per_s"); // absent from a minibatch line
    jf_record_t parsed;
    jf_err_t err = {0};
    if (jf_record_parse(rec, &parsed, &err) != 0) {
        fail_msg("line is not a wire record: %s", err.msg);
    }
    json_decref(rec);
}

// The start, minibatch and epoch lines carry exactly the contract's keys, in its order.
static void t_check_key_order(json_t **lines)
{
    static const char *const start[] = {
        "kind",          "model",   "dataset",           "device",  "threads",  "blas",
        "torch_version", "samples", "batches_per_epoch", "workers", "prefetch", "batch",
        "epochs",        "seed"};
    // The minibatch and epoch lines are the wire records (docs/schema.md), in table order, in us.
    static const char *const mb[] = {"kind",           "epoch",      "index", "samples",
                                     "fetch_stall_us", "compute_us", "loss"};
    static const char *const ep[] = {"kind",    "epoch",          "warmup",
                                     "e2e_us",  "fetch_stall_us", "compute_us",
                                     "samples", "loss",           "samples_per_s"};
    t_assert_keys(lines[0], start, 14);
    t_assert_keys(lines[1], mb, 7);
    t_assert_keys(lines[3], ep, 9);
}

static void test_lines_follow_the_contract(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    train_records_t *r = train_records_new(&t_params, out, NULL);
    assert_non_null(r);
    t_record_run(r);
    assert_int_equal(fclose(out), 0);
    json_t *lines[T_LINES_MAX] = {0};
    assert_int_equal(t_parse_lines(text, lines), 7);
    t_check_key_order(lines);
    assert_int_equal(json_integer_value(json_object_get(lines[0], "seed")), 9);
    assert_int_equal(t_int(lines[2], "fetch_stall_us"), 2000);
    assert_true(json_is_true(json_object_get(lines[3], "warmup")));
    assert_int_equal(t_int(lines[3], "e2e_us"), 100000);
    assert_int_equal(t_int(lines[3], "fetch_stall_us"), 3000);
    assert_int_equal(t_int(lines[3], "compute_us"), 30000);
    t_expect_wire_record(lines[1]);
    t_expect_wire_record(lines[3]);
    assert_int_equal(json_integer_value(json_object_get(lines[3], "samples")), 24);
    assert_float_equal(t_real(lines[3], "samples_per_s"), 240.0, 1e-9);
    assert_float_equal(t_real(lines[3], "loss"), (2.0 * 16 + 1.0 * 8) / 24, 1e-9);
    assert_true(json_is_null(json_object_get(lines[4], "loss"))); // NaN is not JSON
    assert_true(json_is_false(json_object_get(lines[5], "warmup")));
    assert_true(json_is_null(json_object_get(lines[5], "samples_per_s")));
    assert_string_equal(json_string_value(json_object_get(lines[6], "kind")), "done");
    assert_int_equal(json_integer_value(json_object_get(lines[6], "epochs")), 2);
    for (size_t i = 0; i < 7; i++) {
        json_decref(lines[i]);
    }
    train_records_destroy(&r);
    assert_null(r);
    free(text);
}

static json_t *t_write_and_load(const train_records_t *r, const char *reason, const char *fail)
{
    char path[] = "/tmp/jf-train-records-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(close(fd), 0);
    assert_int_equal(train_records_write_file(r, path, reason, fail, NULL), 0);
    json_error_t jerr;
    json_t *doc = json_load_file(path, 0, &jerr);
    assert_non_null(doc);
    assert_int_equal(unlink(path), 0);
    return doc;
}

static void test_document_holds_params_epochs_and_error(void **state)
{
    (void)state;
    FILE *out = fopen("/dev/null", "w");
    train_records_t *r = train_records_new(&t_params, out, NULL);
    t_record_run(r);
    json_t *doc = t_write_and_load(r, NULL, NULL);
    json_t *params = json_object_get(doc, "params");
    assert_true(json_is_true(json_object_get(params, "drop_last")));
    assert_string_equal(json_string_value(json_object_get(params, "blas")), "generic");
    assert_null(json_object_get(params, "kind"));
    json_t *epochs = json_object_get(doc, "epochs");
    assert_int_equal(json_array_size(epochs), 2);
    json_t *mbs = json_object_get(json_array_get(epochs, 0), "minibatches");
    assert_int_equal(json_array_size(mbs), 2);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(mbs, 1), "samples")), 8);
    assert_int_equal(json_array_size(json_object_get(json_array_get(epochs, 1), "minibatches")), 1);
    assert_null(json_object_get(doc, "error"));
    json_decref(doc);
    doc = t_write_and_load(r, "oom", "out of memory");
    json_t *e = json_object_get(doc, "error");
    assert_string_equal(json_string_value(json_object_get(e, "reason")), "oom");
    json_decref(doc);
    jf_err_t err = {0};
    assert_int_equal(train_records_write_file(r, "/proc/no/such/file", NULL, NULL, &err), -EIO);
    assert_non_null(strstr(err.msg, "/proc/no/such/file"));
    train_records_destroy(&r);
    assert_int_equal(fclose(out), 0);
}

static void test_error_line_and_failures(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    assert_int_equal(train_records_emit_error(out, "invalid", "bad \"thing\""), 0);
    assert_int_equal(fclose(out), 0);
    assert_string_equal(text, "{\"kind\":\"error\",\"reason\":\"invalid\",\"detail\":"
                              "\"bad \\\"thing\\\"\"}\n");
    free(text);
    train_records_params_t p = t_params;
    p.seed = UINT64_MAX;
    jf_err_t err = {0};
    assert_null(train_records_new(&p, stdout, &err));
    assert_int_equal(err.code, -EINVAL);
    FILE *ro = fopen("/dev/null", "r"); // writes to it fail
    train_records_t *r = train_records_new(&t_params, ro, NULL);
    assert_int_equal(train_records_start(r, &err), -EIO);
    assert_non_null(strstr(err.msg, "writing a record line failed"));
    train_records_destroy(&r);
    assert_int_equal(fclose(ro), 0);
    train_records_destroy(NULL);
}

static const train_records_power_t t_power = {
    .n_rails = 2,
    .names = {"VDD_IN", "VDD_SOC"},
    .power_mw = {11200, 780},
    .gpu_load_pct = 87.5,
    .cpu_busy_cores = 1.75};

// A simulated run of one epoch of one minibatch, its lines parsed into lines (4).
static train_records_t *t_record_sim(FILE *out, train_records_sim_t *sim)
{
    *sim = (train_records_sim_t){.speed = 500.0,
                                 .board_type = "xavier-nx",
                                 .board = "sim-nx-01",
                                 .fleet_seed = 7,
                                 .power_mode_id = 2,
                                 .power_mode = "MODE_15W_6CORE",
                                 .medium = "nvme",
                                 .scale = 0.5,
                                 .power = t_power,
                                 .cache_resident = 0.25};
    train_records_params_t p = t_params;
    p.device = p.blas = p.torch_version = NULL; // no torch in a simulation
    p.sim = sim;
    train_records_t *r = train_records_new(&p, out, NULL);
    assert_non_null(r);
    train_minibatch_rec_t m = {
        .samples = 16, .fetch_stall_us = 1000, .compute_us = 3000, .loss = NAN};
    train_records_cache_t cache = {.resident_before = 0.25,
                                   .resident_after = 1.0,
                                   .hit_fraction = 0.25,
                                   .cache_bytes = 3000000,
                                   .dataset_bytes = 2000000};
    train_records_epoch_sim_t es = {
        .wall_us = 8, .power = &t_power, .next_power = &t_power, .cache = &cache};
    assert_int_equal(train_records_start(r, NULL), 0);
    train_records_epoch_begin(r, 0);
    assert_int_equal(train_records_minibatch(r, &m, NULL), 0);
    assert_int_equal(train_records_epoch_end_sim(r, 4000, &es, NULL), 0);
    assert_int_equal(train_records_done(r, NULL), 0);
    return r;
}

static void t_check_sim_lines(json_t **lines)
{
    static const char *const start[] = {"kind",
                                        "model",
                                        "dataset",
                                        "samples",
                                        "batches_per_epoch",
                                        "workers",
                                        "prefetch",
                                        "batch",
                                        "epochs",
                                        "seed",
                                        "platform",
                                        "sim_speed",
                                        "sim_board_type",
                                        "sim_board",
                                        "sim_seed",
                                        "sim_power_mode_id",
                                        "sim_power_mode",
                                        "sim_medium",
                                        "sim_scale",
                                        "sim_cache_resident",
                                        "sim_power_mw",
                                        "sim_load"};
    t_assert_keys(lines[0], start, 22);
    assert_float_equal(t_real(lines[0], "sim_cache_resident"), 0.25, 0.0);
    json_t *cache = json_object_get(lines[2], "sim_cache");
    assert_float_equal(t_real(cache, "resident_before"), 0.25, 0.0);
    assert_float_equal(t_real(cache, "resident_after"), 1.0, 0.0);
    assert_float_equal(t_real(cache, "hit_fraction"), 0.25, 0.0);
    assert_int_equal(json_integer_value(json_object_get(cache, "cache_bytes")), 3000000);
    assert_int_equal(json_integer_value(json_object_get(cache, "dataset_bytes")), 2000000);
    for (size_t i = 0; i < 4; i++) { // every line is marked
        assert_string_equal(json_string_value(json_object_get(lines[i], "platform")), "sim");
        assert_float_equal(t_real(lines[i], "sim_speed"), 500.0, 0.0);
    }
    json_t *power = json_object_get(lines[0], "sim_power_mw");
    assert_int_equal(json_integer_value(json_object_get(power, "VDD_IN")), 11200);
    assert_int_equal(json_integer_value(json_object_get(power, "VDD_SOC")), 780);
    assert_true(json_equal(power, json_object_get(lines[2], "sim_power_mw")));
    assert_true(json_equal(power, json_object_get(lines[2], "sim_next_power_mw")));
    // The load travels beside the rails: the start line's for epoch 0, the epoch line's next.
    json_t *load = json_object_get(lines[0], "sim_load");
    assert_float_equal(t_real(load, "gpu_pct"), 87.5, 0.0);
    assert_float_equal(t_real(load, "cpu_busy_cores"), 1.75, 0.0);
    assert_true(json_equal(load, json_object_get(lines[2], "sim_next_load")));
    assert_int_equal(t_int(lines[2], "sim_wall_us"), 8);
    assert_int_equal(t_int(lines[2], "e2e_us"), 4000);
}

static void test_simulated_run_lines(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    train_records_sim_t sim;
    train_records_t *r = t_record_sim(out, &sim);
    assert_int_equal(fflush(out), 0);
    json_t *lines[T_LINES_MAX] = {0};
    assert_int_equal(t_parse_lines(text, lines), 4);
    t_check_sim_lines(lines);
    for (size_t i = 0; i < 4; i++) {
        json_decref(lines[i]);
    }
    // The document says it once, in its params, not in every record.
    json_t *doc = t_write_and_load(r, NULL, NULL);
    json_t *ep = json_array_get(json_object_get(doc, "epochs"), 0);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "params"), "platform")), "sim");
    assert_null(json_object_get(ep, "platform"));
    assert_non_null(json_object_get(ep, "sim_power_mw"));
    assert_null(json_object_get(json_array_get(json_object_get(ep, "minibatches"), 0), "platform"));
    json_decref(doc);
    train_records_destroy(&r);
    assert_int_equal(fclose(out), 0);
    free(text);
}

static void test_simulated_run_failures(void **state)
{
    (void)state;
    FILE *out = fopen("/dev/null", "w");
    train_records_sim_t sim;
    train_records_t *r = t_record_sim(out, &sim);
    train_records_power_t many = {.n_rails = TRAIN_RECORDS_RAILS_MAX + 1};
    train_records_epoch_sim_t es = {.power = &many};
    jf_err_t err = {0};
    assert_int_equal(train_records_epoch_end_sim(r, 1, &es, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "power rails"));
    train_records_destroy(&r);
    train_records_params_t p = t_params;
    sim.power = many;
    p.sim = &sim;
    assert_null(train_records_new(&p, out, &err));
    assert_int_equal(err.code, -EINVAL);
    sim.power = t_power;
    sim.fleet_seed = UINT64_MAX;
    assert_null(train_records_new(&p, out, &err));
    assert_non_null(strstr(err.msg, "seed 18446744073709551615 above"));
    assert_int_equal(fclose(out), 0);
}

// The run's failure keeps precedence over a failure to write its document.
static void test_finish_file(void **state)
{
    (void)state;
    FILE *out = fopen("/dev/null", "w");
    train_records_t *r = train_records_new(&t_params, out, NULL);
    jf_err_t err = {0};
    assert_int_equal(train_records_finish_file(r, "/proc/no/such/file", 0, "crashed", &err), -EIO);
    assert_non_null(strstr(err.msg, "/proc/no/such/file"));
    (void)jf_err_set(&err, -ENOMEM, "out of memory");
    assert_int_equal(train_records_finish_file(r, "/proc/no/such/file", -ENOMEM, "oom", &err),
                     -ENOMEM);
    assert_string_equal(err.msg, "out of memory");
    char path[] = "/tmp/jf-train-records-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0 && close(fd) == 0);
    assert_int_equal(train_records_finish_file(r, path, -ENOMEM, "oom", &err), -ENOMEM);
    json_t *doc = json_load_file(path, 0, NULL);
    json_t *e = json_object_get(doc, "error");
    assert_string_equal(json_string_value(json_object_get(e, "detail")), "out of memory");
    json_decref(doc);
    assert_int_equal(unlink(path), 0);
    train_records_destroy(&r);
    assert_int_equal(fclose(out), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_follow_the_contract),
        cmocka_unit_test(test_document_holds_params_epochs_and_error),
        cmocka_unit_test(test_error_line_and_failures),
        cmocka_unit_test(test_simulated_run_lines),
        cmocka_unit_test(test_simulated_run_failures),
        cmocka_unit_test(test_finish_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
