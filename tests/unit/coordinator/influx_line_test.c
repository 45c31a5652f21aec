/* Unit tests for the InfluxDB line protocol writer (coord_influx_line) and the exporter's points
 * (coord_influx_points): escaping against the examples of InfluxDB's line protocol reference
 * (docs.influxdata.com, influxdb/v1 "Line protocol reference", "Special characters"), refused
 * points, the byte limit, and the points of a telemetry sample (docs/metrics.md). */
#include "coord_influx.h"
#include "coord_influx_line.h"
#include "coord_influx_points.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

static void test_escaping_reference_examples(void **state)
{
    (void) state;
    coord_influx_line_t *l = coord_influx_line_new(4096);
    assert_non_null(l);
    jf_err_t err = {0};
    // Measurement with a space and a comma.
    coord_influx_line_begin(l, "wea ther,s");
    coord_influx_line_tag(l, "location", "us-midwest");
    coord_influx_line_field_i64(l, "temperature", 82);
    assert_int_equal(coord_influx_line_end(l, 1465839830100400200, &err), 0);
    // Tag key with a space, tag value with a comma, field key with an equals sign.
    coord_influx_line_begin(l, "weather");
    coord_influx_line_tag(l, "location place", "us,midwest");
    coord_influx_line_field_f64(l, "temp=rature", 82.5);
    assert_int_equal(coord_influx_line_end(l, 1465839830100400200, &err), 0);
    // String field value with double quotes and a backslash; a tag value with '='.
    coord_influx_line_begin(l, "weather");
    coord_influx_line_tag(l, "loc", "a=b");
    coord_influx_line_field_str(l, "temperature", "too\"hot\\cold");
    coord_influx_line_field_bool(l, "ok", true);
    assert_int_equal(coord_influx_line_end(l, 1, &err), 0);
    assert_string_equal(coord_influx_line_text(l),
                        "wea\\ ther\\,s,location=us-midwest temperature=82i 1465839830100400200\n"
                        "weather,location\\ place=us\\,midwest temp\\=rature=82.5 "
                        "1465839830100400200\n"
                        "weather,loc=a\\=b temperature=\"too\\\"hot\\\\cold\",ok=true 1\n");
    assert_int_equal(coord_influx_line_points(l), 3);
    coord_influx_line_destroy(&l);
    assert_null(l);
}

static void test_empty_tag_and_nan_left_out(void **state)
{
    (void) state;
    coord_influx_line_t *l = coord_influx_line_new(4096);
    jf_err_t err = {0};
    coord_influx_line_begin(l, "m");
    coord_influx_line_tag(l, "empty", "");
    coord_influx_line_field_f64(l, "nan", 0.0 / 0.0);
    coord_influx_line_field_f64(l, "x", 0.1);
    assert_int_equal(coord_influx_line_end(l, 5, &err), 0);
    assert_string_equal(coord_influx_line_text(l), "m x=0.10000000000000001 5\n");
    coord_influx_line_destroy(&l);
}

static void test_refused_points_roll_back(void **state)
{
    (void) state;
    coord_influx_line_t *l = coord_influx_line_new(64);
    jf_err_t err = {0};
    coord_influx_line_begin(l, "m");
    coord_influx_line_field_i64(l, "a", 1);
    assert_int_equal(coord_influx_line_end(l, 1, &err), 0);
    // No field.
    coord_influx_line_begin(l, "m");
    coord_influx_line_tag(l, "t", "v");
    assert_int_equal(coord_influx_line_end(l, 2, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "no field"));
    // A newline in a tag value and in a string field.
    coord_influx_line_begin(l, "m");
    coord_influx_line_tag(l, "t", "a\nb");
    coord_influx_line_field_i64(l, "a", 1);
    assert_int_equal(coord_influx_line_end(l, 3, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "control character"));
    coord_influx_line_begin(l, "m");
    coord_influx_line_field_str(l, "s", "x\ny");
    assert_int_equal(coord_influx_line_end(l, 3, &err), -EINVAL);
    // Over the 64-byte limit.
    coord_influx_line_begin(l, "a_rather_long_measurement_name");
    coord_influx_line_field_str(l, "s", "a string that does not fit in what is left");
    assert_int_equal(coord_influx_line_end(l, 4, &err), -ENOSPC);
    assert_string_equal(coord_influx_line_text(l), "m a=1i 1\n");
    assert_int_equal(coord_influx_line_points(l), 1);
    coord_influx_line_destroy(&l);
}

static void test_telemetry_points(void **state)
{
    (void) state;
    coord_influx_line_t *l = coord_influx_line_new(1 << 16);
    jf_err_t err = {0};
    coord_influx_run_tags_t tags = {.board = "nx-01",
                                    .board_type = "xavier-nx",
                                    .run = "r1",
                                    .workload = "w",
                                    .attempt = 2,
                                    .simulated = true};
    const char *sample =
        "{\"t_us\": 1000, \"mono_us\": 5, \"source\": \"sysfs\", \"cpu_load_pct\": 41,"
        " \"cpu_core_load_pct\": [80.5, null], \"cpu_core_freq_hz\": [1190400000, null],"
        " \"temps_mc\": {\"CPU\": 45500}, \"rails\": [{\"name\": \"VDD IN\", \"power_mw\": 9535}]}";
    assert_int_equal(coord_influx_points_telemetry(l, &tags, 1000, sample, &err), 0);
    const char *tg = "board=nx-01,board_type=xavier-nx,run=r1,attempt=2,workload=w,simulated=true";
    char want[2048];
    (void) snprintf(want, sizeof want,
                    "jetfleet_telemetry,%s,source=sysfs cpu_load_pct=41 1000000\n"
                    "jetfleet_cpu_core,%s,core=0 load_pct=80.5,freq_hz=1190400000 1000000\n"
                    "jetfleet_temp,%s,zone=CPU temp_mc=45500 1000000\n"
                    "jetfleet_rail,%s,rail=VDD\\ IN power_mw=9535 1000000\n",
                    tg, tg, tg, tg);
    assert_string_equal(coord_influx_line_text(l), want);
    // A stored sample that is not a JSON object adds nothing.
    size_t before = coord_influx_line_len(l);
    assert_int_equal(coord_influx_points_telemetry(l, &tags, 1000, "[1]", &err), -EPROTO);
    assert_non_null(strstr(err.msg, "run 'r1' attempt 2"));
    assert_int_equal(coord_influx_line_len(l), before);
    coord_influx_line_destroy(&l);
}

static void test_telemetry_full_rolls_back_whole_sample(void **state)
{
    (void) state;
    coord_influx_line_t *l = coord_influx_line_new(200);
    jf_err_t err = {0};
    coord_influx_run_tags_t tags = {.board = "b", .run = "r", .attempt = 1};
    const char *sample = "{\"cpu_load_pct\": 1, \"temps_mc\": {\"A\": 1, \"B\": 2, \"C\": 3}}";
    assert_int_equal(coord_influx_points_telemetry(l, &tags, 1, sample, &err), -ENOSPC);
    assert_int_equal(coord_influx_line_len(l), 0);
    assert_int_equal(coord_influx_line_points(l), 0);
    coord_influx_line_destroy(&l);
}

// The exporter does not start without its token: a missing or an empty token_file is an error
// naming the file, and the token itself is never in a message.
static void test_exporter_token_file(void **state)
{
    (void) state;
    char dir[] = "/tmp/jf-influx-token-XXXXXX";
    assert_non_null(mkdtemp(dir));
    jf_influx_config_t cfg = {.enabled = true,
                              .url = "http://127.0.0.1:9",
                              .db = "d",
                              .batch = 10,
                              .flush_interval_us = 1000000,
                              .timeout_us = 1000000};
    (void) snprintf(cfg.token_file, sizeof cfg.token_file, "%s/missing", dir);
    jf_err_t err = {0};
    coord_influx_t *x = coord_influx_new(&cfg, "/nonexistent.db", dir, &err);
    assert_null(x);
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, "missing"));
    (void) snprintf(cfg.token_file, sizeof cfg.token_file, "%s/empty", dir);
    FILE *f = fopen(cfg.token_file, "w");
    assert_non_null(f);
    assert_int_equal(fputs("\n", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    x = coord_influx_new(&cfg, "/nonexistent.db", dir, &err);
    assert_null(x);
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "is empty"));
    // With a token it starts (the store and InfluxDB are looked for later, in its thread).
    f = fopen(cfg.token_file, "w");
    assert_non_null(f);
    assert_int_equal(fputs("s3cret-token\n", f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
    x = coord_influx_new(&cfg, "/nonexistent.db", dir, &err);
    assert_non_null(x);
    coord_influx_destroy(&x);
    assert_null(x);
    assert_int_equal(unlink(cfg.token_file), 0);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaping_reference_examples),
        cmocka_unit_test(test_empty_tag_and_nan_left_out),
        cmocka_unit_test(test_refused_points_roll_back),
        cmocka_unit_test(test_telemetry_points),
        cmocka_unit_test(test_telemetry_full_rolls_back_whole_sample),
        cmocka_unit_test(test_exporter_token_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
