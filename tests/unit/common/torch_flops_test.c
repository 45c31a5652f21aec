/* Unit tests for the work counting of the libtorch shim (jf_torch_flops.h, docs/roofline.md
 * "Counting"): a convolution and a linear layer against the formulas, LeNet-5's total against
 * this test's own layer-by-layer sum, every model's graph fully covered by the rules, the
 * minibatch totals, and bad layers refused. */
#include "jf_torch_flops.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define T_B 4.0 // bytes per FP32 element

// One layer as this test counts it: forward FLOPs and activation elements read plus written.
typedef struct t_layer {
    double flop;
    double elems;
} t_layer_t;

// Conv2d(in, out, k, stride, pad) with bias on in x side x side: returns the output side.
static int t_conv(int in, int out, int k, int stride, int pad, int side, bool input_has_grad,
                  t_layer_t *l)
{
    int o = (side + 2 * pad - k) / stride + 1;
    double outs = (double) out * o * o;
    l->flop = 2.0 * outs * in * k * k + outs;
    l->elems = outs + (input_has_grad ? (double) in * side * side : 0);
    return o;
}

static void t_linear(int in, int out, t_layer_t *l)
{
    l->flop = 2.0 * in * out + out;
    l->elems = (double) in + out;
}

static void t_relu(double n, t_layer_t *l)
{
    l->flop = n;
    l->elems = 2 * n;
}

static void t_maxpool(double in, double out, t_layer_t *l)
{
    l->flop = in;
    l->elems = in + out;
}

static void test_conv_layer_by_formula(void **state)
{
    (void) state;
    jf_torch_layer_t layer = {.kind = JF_TORCH_LAYER_CONV2D,
                              .in = 3,
                              .out = 8,
                              .kernel = 3,
                              .stride = 2,
                              .padding = 1,
                              .height = 16,
                              .width = 16,
                              .bias = true};
    jf_torch_cost_t c = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_layer_cost(&layer, &c, &err), 0);
    t_layer_t want;
    (void) t_conv(3, 8, 3, 2, 1, 16, false, &want); // output 8 x 8 x 8
    assert_true(want.flop == 2.0 * 512 * 27 + 512);
    assert_true(c.fwd_flop_per_sample == want.flop);
    assert_true(c.bwd_flop_per_sample == 2 * want.flop);
    assert_true(c.fwd_bytes_per_sample == (want.elems + 3 * 16 * 16) * T_B);
    assert_int_equal(c.params, 8 * 27 + 8);
    assert_int_equal(c.ops_unknown, 0);
    printf("conv_fwd_flop=%.0f\n", c.fwd_flop_per_sample);
}

static void test_linear_layer_by_formula(void **state)
{
    (void) state;
    jf_torch_layer_t layer = {.kind = JF_TORCH_LAYER_LINEAR, .in = 100, .out = 30, .bias = true};
    jf_torch_cost_t c = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_layer_cost(&layer, &c, &err), 0);
    assert_true(c.fwd_flop_per_sample == 2.0 * 100 * 30 + 30);
    assert_true(c.bwd_flop_per_sample == 2 * c.fwd_flop_per_sample);
    assert_int_equal(c.params, 100 * 30 + 30);
    layer.bias = false;
    assert_int_equal(jf_torch_layer_cost(&layer, &c, &err), 0);
    assert_true(c.fwd_flop_per_sample == 2.0 * 100 * 30);
    printf("linear_fwd_flop=%.0f\n", c.fwd_flop_per_sample);
}

// LeNet-5 (jf_torch.cpp): conv 1->6 k5 pad 2, relu, pool, conv 6->16 k5, relu, pool, flatten,
// 400->120, relu, 120->84, relu, 84->10.
static void test_lenet5_total_by_layers(void **state)
{
    (void) state;
    t_layer_t l[11];
    int side = t_conv(1, 6, 5, 1, 2, 28, false, &l[0]);
    t_relu(6.0 * side * side, &l[1]);
    t_maxpool(6.0 * side * side, 6.0 * (side / 2) * (side / 2), &l[2]);
    side = t_conv(6, 16, 5, 1, 0, side / 2, true, &l[3]);
    t_relu(16.0 * side * side, &l[4]);
    t_maxpool(16.0 * side * side, 16.0 * (side / 2) * (side / 2), &l[5]);
    t_linear(400, 120, &l[6]);
    t_relu(120, &l[7]);
    t_linear(120, 84, &l[8]);
    t_relu(84, &l[9]);
    t_linear(84, 10, &l[10]);
    double flop = 0, elems = 28 * 28, heavy = 0;
    for (int i = 0; i < 11; i++) {
        flop += l[i].flop;
        elems += l[i].elems;
        heavy += (i == 0 || i == 3 || i == 6 || i == 8 || i == 10) ? l[i].flop : 0;
    }
    jf_torch_cost_t c = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_model_cost(JF_TORCH_MODEL_LENET5, &c, &err), 0);
    assert_true(c.fwd_flop_per_sample == flop);
    assert_true(c.bwd_flop_per_sample == flop + heavy); // 2x for conv and linear, 1x the rest
    assert_true(c.fwd_bytes_per_sample == elems * T_B);
    assert_int_equal(c.params, 156 + 2416 + 48120 + 10164 + 850);
    assert_int_equal(c.ops_unknown, 0);
    printf("lenet5_fwd_flop_per_sample=%.0f\nlenet5_fwd_bytes_per_sample=%.0f\n", flop,
           elems * T_B);
}

// Every operation of every model has a rule (none falls back to the 1-FLOP guess), and the
// totals are plausible: FLOPs grow from LeNet-5 to MobileNetV3 as the literature has it.
static void test_every_model_covered(void **state)
{
    (void) state;
    const jf_torch_model_kind_t kinds[] = {JF_TORCH_MODEL_LENET5, JF_TORCH_MODEL_RESNET18,
                                           JF_TORCH_MODEL_VGG11, JF_TORCH_MODEL_MOBILENETV3};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        jf_torch_cost_t c = {0};
        jf_err_t err = {0};
        assert_int_equal(jf_torch_model_cost(kinds[i], &c, &err), 0);
        assert_int_equal(c.ops_unknown, 0);
        assert_true(c.fwd_flop_per_sample > 0 && c.bwd_flop_per_sample > c.fwd_flop_per_sample);
        printf("%s_fwd_flop_per_sample=%.4g\n%s_params=%lld\n", jf_torch_model_name(kinds[i]),
               c.fwd_flop_per_sample, jf_torch_model_name(kinds[i]), (long long) c.params);
    }
}

static void test_minibatch_totals(void **state)
{
    (void) state;
    jf_torch_cost_t c = {.fwd_flop_per_sample = 10,
                         .bwd_flop_per_sample = 20,
                         .fwd_bytes_per_sample = 100,
                         .bwd_bytes_per_sample = 200,
                         .param_bytes = 1000};
    jf_torch_work_t w;
    jf_torch_cost_minibatch(&c, 8, &w);
    assert_true(w.flop == 8 * 30.0);
    assert_true(w.fwd_bytes == 1000 + 800.0 && w.bwd_bytes == 2000 + 1600.0);
    assert_true(w.bytes == w.fwd_bytes + w.bwd_bytes);
}

static void test_bad_layers_refused(void **state)
{
    (void) state;
    const jf_torch_layer_t bad[] = {
        {.kind = JF_TORCH_LAYER_LINEAR, .in = 0, .out = 3},
        {.kind = JF_TORCH_LAYER_CONV2D,
         .in = 3,
         .out = 3,
         .kernel = 5,
         .stride = 1,
         .height = 4,
         .width = 4},
        {.kind = JF_TORCH_LAYER_CONV2D,
         .in = 3,
         .out = 3,
         .kernel = 3,
         .stride = 1,
         .padding = 3,
         .height = 8,
         .width = 8},
        {.kind = (jf_torch_layer_kind_t) 7, .in = 1, .out = 1},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        jf_torch_cost_t c = {0};
        jf_err_t err = {0};
        assert_int_equal(jf_torch_layer_cost(&bad[i], &c, &err), -EINVAL);
        assert_non_null(strstr(err.msg, "layer"));
    }
    jf_torch_cost_t c = {0};
    jf_err_t err = {0};
    assert_int_equal(jf_torch_model_cost((jf_torch_model_kind_t) 9, &c, &err), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_layer_by_formula),
        cmocka_unit_test(test_linear_layer_by_formula),
        cmocka_unit_test(test_lenet5_total_by_layers),
        cmocka_unit_test(test_every_model_covered),
        cmocka_unit_test(test_minibatch_totals),
        cmocka_unit_test(test_bad_layers_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
