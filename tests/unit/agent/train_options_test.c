/* Unit tests for train_options: defaults, every option, --help, a simulated run's options, and
 * tables of bad command lines (real and simulated) and JF_TRAIN_FAULT values with the message
 * each must give. */
#include "train_options.h"
#include "train_shard.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define T_ARGS_MAX 64

// Splits a space-separated command line (no quoting needed here) and parses it.
static int t_parse(const char *line, train_run_opts_t *opts, bool *help, jf_err_t *err)
{
    static char buf[512];
    char *argv[T_ARGS_MAX] = {"jetfleet-train"};
    int argc = 1;
    (void)snprintf(buf, sizeof buf, "%s", line);
    for (char *p = buf; *p && argc < T_ARGS_MAX - 1;) {
        argv[argc++] = p;
        p += strcspn(p, " ");
        if (*p) {
            *p++ = '\0';
        }
    }
    argv[argc] = NULL;
    return train_options_parse(argc, argv, opts, help, err);
}

#define T_REQUIRED "--model lenet5 --data /d --workers 0 --batch 16 --epochs 2"

static void test_defaults_and_all_options(void **state)
{
    (void)state;
    assert_int_equal(unsetenv(TRAIN_RUN_FAULT_ENV), 0);
    train_run_opts_t o = {0};
    bool help = true;
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, NULL), 0);
    assert_false(help);
    assert_string_equal(o.run.model, "lenet5");
    assert_string_equal(o.data_dir, "/d");
    assert_string_equal(o.device, "cpu");
    assert_int_equal(o.prefetch, 2);
    assert_int_equal(o.threads, 0);
    assert_false(o.drop_last);
    assert_null(o.json_out);
    assert_int_equal(o.fault, TRAIN_FAULT_NONE);
    assert_int_equal(t_parse(T_REQUIRED
                             " --prefetch 3 --threads 2 --device auto --seed 77 "
                             "--drop-last --json-out /o.json --max-batches 5 --workers 4",
                             &o, &help, NULL),
                     0);
    assert_int_equal(o.prefetch * 1000 + o.threads * 100 + o.workers, 3204);
    assert_int_equal(o.seed, 77);
    assert_int_equal(o.max_batches, 5);
    assert_int_equal(o.batch * 10 + (size_t)o.epochs, 162);
    assert_true(o.drop_last);
    assert_string_equal(o.device, "auto");
    assert_string_equal(o.json_out, "/o.json");
    assert_int_equal(t_parse(T_REQUIRED " --drop-last --no-drop-last", &o, &help, NULL), 0);
    assert_false(o.drop_last);
    assert_int_equal(t_parse("--help", &o, &help, NULL), 0);
    assert_true(help);
}

// --loader-only runs the data pipeline alone, so it needs no --model; without it --model stays
// required.
static void test_loader_only(void **state)
{
    (void)state;
    train_run_opts_t o = {0};
    bool help = false;
    jf_err_t err = {0};
    assert_int_equal(t_parse("--loader-only --data /d --workers 2 --batch 16 --epochs 1", &o, &help,
                             &err),
                     0);
    assert_true(o.loader_only);
    assert_string_equal(o.run.model, "");
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, NULL), 0);
    assert_false(o.loader_only);
    assert_int_equal(t_parse("--data /d --workers 2 --batch 16 --epochs 1", &o, &help, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "missing required option --model"));
}

#define T_SIM                                                                                      \
    "--simulate --sim-params /p.yaml --sim-board-type xavier-nx --sim-board sim-nx-01 "            \
    "--sim-seed 7 --sim-mode MODE_15W_6CORE --sim-medium nvme --model mobilenetv3 --workers 1 "    \
    "--batch 16 --epochs 3"

static void test_simulate_options(void **state)
{
    (void)state;
    train_run_opts_t o = {0};
    bool help = false;
    jf_err_t err = {0};
    assert_int_equal(t_parse(T_SIM, &o, &help, &err), 0);
    assert_true(o.simulate);
    assert_null(o.data_dir);
    assert_string_equal(o.sim.params_path, "/p.yaml");
    assert_string_equal(o.sim.board_type, "xavier-nx");
    assert_string_equal(o.sim.board, "sim-nx-01");
    assert_int_equal(o.sim.fleet_seed, 7);
    assert_string_equal(o.sim.mode, "MODE_15W_6CORE");
    assert_string_equal(o.sim.medium, "nvme");
    assert_float_equal(o.sim.scale, 1.0, 0.0);
    assert_float_equal(o.sim.speed, 1.0, 0.0);
    assert_float_equal(o.sim.cache_resident, 0.0, 0.0); // cold unless the agent says otherwise
    assert_int_equal(t_parse(T_SIM " --sim-cache-resident 0.5", &o, &help, &err), 0);
    assert_float_equal(o.sim.cache_resident, 0.5, 0.0);
    assert_int_equal(t_parse(T_SIM " --sim-scale 0.25 --sim-speed 600 --seed 5 --max-batches 4 "
                                   "--json-out /o.json --prefetch 3 --no-drop-last",
                             &o, &help, &err),
                     0);
    assert_float_equal(o.sim.scale, 0.25, 0.0);
    assert_float_equal(o.sim.speed, 600.0, 0.0);
    assert_int_equal(o.seed * 100 + o.max_batches * 10 + (uint64_t)o.prefetch, 543);
    assert_string_equal(o.json_out, "/o.json");
    assert_int_equal(o.sim.point_cores, 0); // no --sim-point: the mode's operating point
    assert_int_equal(t_parse(T_SIM " --sim-point 4,1497600000,510000000,0", &o, &help, &err), 0);
    assert_int_equal(o.sim.point_cores, 4);
    assert_int_equal(o.sim.point_cpu_hz, 1497600000);
    assert_int_equal(o.sim.point_gpu_hz, 510000000);
    assert_int_equal(o.sim.point_emc_hz, 0);
    // A real run's command line leaves the simulation off.
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, &err), 0);
    assert_false(o.simulate);
}

static void test_bad_simulate_command_lines(void **state)
{
    (void)state;
    const struct {
        const char *line;
        const char *fragment;
    } rows[] = {
        {"--simulate --model lenet5 --workers 0 --batch 16 --epochs 2",
         "missing required option --sim-params for --simulate"},
        {"--simulate --sim-params /p --model lenet5 --workers 0 --batch 16 --epochs 2",
         "missing required option --sim-board-type for --simulate"},
        {"--simulate --sim-params /p --sim-board-type nano --model lenet5 --workers 0 --batch 16 "
         "--epochs 2",
         "missing required option --sim-board for --simulate"},
        {"--simulate --sim-params /p --sim-board-type nano --sim-board b --model lenet5 "
         "--workers 0 --batch 16 --epochs 2",
         "missing required option --sim-seed for --simulate"},
        {"--simulate --sim-params /p --sim-board-type nano --sim-board b --sim-seed 0 "
         "--model lenet5 --workers 0 --batch 16 --epochs 2",
         "missing required option --sim-mode for --simulate"},
        {"--simulate --sim-params /p --sim-board-type nano --sim-board b --sim-seed 0 --sim-mode 0 "
         "--model lenet5 --workers 0 --batch 16 --epochs 2",
         "missing required option --sim-medium for --simulate"},
        {"--simulate --sim-params /p --sim-board-type nano --sim-board b --sim-seed 0 --sim-mode 0 "
         "--sim-medium sd --workers 0 --batch 16 --epochs 2",
         "missing required option --model for --simulate"},
        {T_SIM " --data /d", "--data does not apply to --simulate"},
        {T_SIM " --device cuda", "--device does not apply to --simulate"},
        {T_SIM " --threads 2", "--threads does not apply to --simulate"},
        {T_SIM " --drop-last", "--drop-last does not apply to --simulate"},
        {"--loader-only " T_SIM, "--loader-only does not apply to --simulate"},
        {T_REQUIRED " --sim-board nx-01", "--sim-board needs --simulate"},
        {T_REQUIRED " --sim-speed 10", "--sim-speed needs --simulate"},
        {T_SIM " --sim-speed 0.5", "--sim-speed"},
        {T_SIM " --sim-speed 100001", "--sim-speed"},
        {T_SIM " --sim-speed fast", "--sim-speed"},
        {T_SIM " --sim-scale 0", "--sim-scale"},
        {T_SIM " --sim-scale 1001", "--sim-scale"},
        {T_SIM " --sim-cache-resident 1.5", "--sim-cache-resident"},
        {T_SIM " --sim-cache-resident -0.1", "--sim-cache-resident"},
        {T_REQUIRED " --sim-cache-resident 0", "--sim-cache-resident needs --simulate"},
        {T_SIM " --sim-seed -1", "--sim-seed"},
        {T_SIM " --sim-mode", "missing value for '--sim-mode'"},
        {T_REQUIRED " --sim-point 4,1,0,0", "--sim-point needs --simulate"},
        {T_SIM " --sim-point 4,1497600000", "--sim-point: expected C,CPU,GPU,EMC, got"},
        {T_SIM " --sim-point 4,1497600000,0,0,0", "--sim-point: EMC Hz"},
        {T_SIM " --sim-point 0,1497600000,0,0", "--sim-point: cores"},
        {T_SIM " --sim-point 4,0,0,0", "--sim-point: CPU Hz"},
        {T_SIM " --sim-point 4,1.4GHz,0,0", "--sim-point: CPU Hz"},
        {T_SIM " --sim-point 4,1497600000,-1,0", "--sim-point: GPU Hz"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        train_run_opts_t o = {0};
        bool help = false;
        jf_err_t err = {0};
        assert_int_equal(t_parse(rows[i].line, &o, &help, &err), -EINVAL);
        print_message("row %zu: %s\n", i, err.msg);
        assert_non_null(strstr(err.msg, rows[i].fragment));
    }
}

// The local-round options (issue 14): weights files and --minibatches, real and simulated.
static void test_weights_options(void **state)
{
    (void)state;
    train_run_opts_t o = {0};
    bool help = false;
    jf_err_t err = {0};
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, &err), 0);
    assert_null(o.init_weights);
    assert_null(o.out_weights);
    assert_int_equal(o.max_batches, 0);
    assert_int_equal(t_parse(T_REQUIRED " --init-weights /a --out-weights /b --minibatches 7", &o,
                             &help, &err),
                     0);
    assert_string_equal(o.init_weights, "/a");
    assert_string_equal(o.out_weights, "/b");
    assert_int_equal(o.max_batches, 7);
    // A simulated run with a weights option trains for real: --data is then required.
    assert_int_equal(t_parse(T_SIM " --out-weights /b --data /d --minibatches 3", &o, &help, &err),
                     0);
    assert_true(o.simulate);
    assert_string_equal(o.data_dir, "/d");
    assert_int_equal(o.max_batches, 3);
    assert_int_equal(o.shard.count, 0); // no --shard: the whole dataset
    assert_int_equal(t_parse(T_SIM " --shard 2/5", &o, &help, &err), 0);
    assert_int_equal(o.shard.index * 10 + o.shard.count, 25);
    const struct {
        const char *line;
        const char *fragment;
    } rows[] = {
        {T_SIM " --out-weights /b", "missing required option --data for --simulate with --out-"},
        {T_SIM " --init-weights /a", "missing required option --data for --simulate with --init-"},
        {"--loader-only --data /d --workers 0 --batch 16 --epochs 2 --out-weights /b",
         "--out-weights needs a model"},
        {T_REQUIRED " --minibatches -1", "--minibatches"},
        {T_REQUIRED " --minibatches 1000000001", "--minibatches"},
        {T_REQUIRED " --init-weights", "missing value for '--init-weights'"},
        {T_REQUIRED " --shard 3/3", "--shard: K (0..N-1): 3 is out of range [0, 2]"},
        {T_REQUIRED " --shard 0/0", "--shard: N"},
        {T_REQUIRED " --shard 1", "--shard: expected K/N, got '1'"},
        {T_REQUIRED " --shard /2", "--shard: expected K/N"},
        {T_REQUIRED " --shard a/2", "--shard: K"},
        {T_REQUIRED " --shard 0/4097", "--shard: N"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        err = (jf_err_t){0};
        assert_int_equal(t_parse(rows[i].line, &o, &help, &err), -EINVAL);
        print_message("row %zu: %s\n", i, err.msg);
        assert_non_null(strstr(err.msg, rows[i].fragment));
    }
}

// Shard K of N: the samples i with i mod N = K.
static void test_shard_samples(void **state)
{
    (void)state;
    train_shard_t all = {0}, s13 = {.index = 1, .count = 3}, s03 = {.index = 0, .count = 3};
    train_shard_t s23 = {.index = 2, .count = 3};
    assert_int_equal(train_shard_size(&all, 601), 601);
    assert_int_equal(train_shard_global(&all, 7), 7);
    assert_int_equal(train_shard_size(&s03, 601), 201); // 0, 3, ..., 600
    assert_int_equal(train_shard_size(&s13, 601), 200); // 1, 4, ..., 598
    assert_int_equal(train_shard_size(&s23, 601), 200); // 2, 5, ..., 599
    assert_int_equal(train_shard_size(&s23, 2), 0);
    assert_int_equal(train_shard_global(&s13, 0), 1);
    assert_int_equal(train_shard_global(&s13, 199), 598);
    assert_int_equal(train_shard_global(&s23, 5), 17);
}

static void test_fault_hook(void **state)
{
    (void)state;
    train_run_opts_t o = {0};
    bool help = false;
    jf_err_t err = {0};
    assert_int_equal(setenv(TRAIN_RUN_FAULT_ENV, "crash", 1), 0);
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, NULL), 0);
    assert_int_equal(o.fault, TRAIN_FAULT_CRASH);
    assert_int_equal(setenv(TRAIN_RUN_FAULT_ENV, "oom", 1), 0);
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, NULL), 0);
    assert_int_equal(o.fault, TRAIN_FAULT_OOM);
    assert_int_equal(setenv(TRAIN_RUN_FAULT_ENV, "explode", 1), 0);
    assert_int_equal(t_parse(T_REQUIRED, &o, &help, &err), -EINVAL);
    assert_non_null(strstr(err.msg, "JF_TRAIN_FAULT must be crash or oom, got 'explode'"));
    assert_int_equal(unsetenv(TRAIN_RUN_FAULT_ENV), 0);
}

static void test_bad_command_lines(void **state)
{
    (void)state;
    const struct {
        const char *line;
        const char *fragment;
    } rows[] = {
        {"--data /d --workers 0 --batch 16 --epochs 2", "missing required option --model"},
        {"--model lenet5 --workers 0 --batch 16 --epochs 2", "missing required option --data"},
        {"--model lenet5 --data /d --batch 16 --epochs 2", "missing required option --workers"},
        {"--model lenet5 --data /d --workers 0 --epochs 2", "missing required option --batch"},
        {"--model lenet5 --data /d --workers 0 --batch 16", "missing required option --epochs"},
        {T_REQUIRED " --workers 17", "--workers"},
        {T_REQUIRED " --batch 0", "--batch"},
        {T_REQUIRED " --batch 16x", "--batch"},
        {T_REQUIRED " --prefetch 0", "--prefetch"},
        {T_REQUIRED " --threads -1", "--threads"},
        {T_REQUIRED " --seed -5", "--seed"},
        // The run's options are checked by the schema table: vocabulary and range.
        {"--model alexnet --data /d --workers 0 --batch 16 --epochs 2",
         "--model: 'model' must be one of lenet5, resnet18, vgg11, mobilenetv3"},
        {T_REQUIRED " --workers 17", "--workers: 17 is out of range [0, 16]"},
        {T_REQUIRED " --max-batches many", "--max-batches"},
        {T_REQUIRED " --bogus", "unknown option '--bogus'"},
        {T_REQUIRED " --seed", "missing value for '--seed'"},
        {T_REQUIRED " stray", "unexpected argument 'stray'"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        train_run_opts_t o = {0};
        bool help = false;
        jf_err_t err = {0};
        assert_int_equal(t_parse(rows[i].line, &o, &help, &err), -EINVAL);
        print_message("row %zu: %s\n", i, err.msg);
        assert_non_null(strstr(err.msg, rows[i].fragment));
    }
}

static void test_usage_documents_the_test_hook(void **state)
{
    (void)state;
    char *text = NULL;
    size_t size = 0;
    FILE *out = open_memstream(&text, &size);
    train_options_usage(out);
    assert_int_equal(fclose(out), 0);
    assert_non_null(strstr(text, "JF_TRAIN_FAULT=crash"));
    assert_non_null(strstr(text, "--max-batches"));
    assert_non_null(strstr(text, "--simulate --sim-params FILE"));
    assert_non_null(strstr(text, "--sim-speed X"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_and_all_options),
        cmocka_unit_test(test_loader_only),
        cmocka_unit_test(test_simulate_options),
        cmocka_unit_test(test_bad_simulate_command_lines),
        cmocka_unit_test(test_weights_options),
        cmocka_unit_test(test_shard_samples),
        cmocka_unit_test(test_fault_hook),
        cmocka_unit_test(test_bad_command_lines),
        cmocka_unit_test(test_usage_documents_the_test_hook),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
