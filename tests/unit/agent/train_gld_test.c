/* Unit tests of the GLD-23k parts below the dataset: train.csv lines and files (table-driven, with
 * file:line in every message), the JPEG region decoder (partial and DCT-scaled decodes against a
 * full decode, bad regions), and the torchvision transforms (crop parameters as
 * RandomResizedCrop.get_params draws them, resize, flip and normalisation). The dataset as a whole
 * is tested in train_dataset_test. */
#include "jf_rng.h"
#include "train_datagen.h"
#include "train_gld.h"
#include "train_gld_csv.h"
#include "train_jpeg.h"
#include "train_transform.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jft_fs.h"

#define T_PATH_MAX   PATH_MAX // what jft_fs expects
#define T_GLD_TINY   0.0001   // two images
#define T_GLD_FLOATS (3 * 224 * 224)

// Generates a two-image GLD-23k set into dir and writes the path of image index into path.
static void t_tiny_set(char *dir, size_t index, char *path)
{
    assert_int_equal(jft_tmpdir_new(dir), 0);
    train_datagen_opts_t o = {
        .kind = TRAIN_DATASET_GLD23K, .scale = T_GLD_TINY, .seed = 3, .out_dir = dir};
    jf_err_t err = {0};
    assert_int_equal(train_datagen_write(&o, &err), 0);
    train_gld_t *gld = train_gld_open(dir, &err);
    assert_non_null(gld);
    const train_gld_row_t *row = train_gld_row(gld, index);
    assert_non_null(row);
    (void)snprintf(path, T_PATH_MAX, "%s/images/%s.jpg", dir, row->image_id);
    assert_null(train_gld_row(gld, 2));
    train_gld_destroy(&gld);
}

static void test_gld_csv_lines(void **state)
{
    (void)state;
    static char long_line[300], id64[65], id65[66];
    memset(long_line, 'a', sizeof long_line - 1);
    memset(id64, 'b', sizeof id64 - 1);
    memset(id65, 'c', sizeof id65 - 1);
    char ok64[96], bad65[96];
    (void)snprintf(ok64, sizeof ok64, "1,%s,2", id64);
    (void)snprintf(bad65, sizeof bad65, "1,%s,2", id65);
    const struct {
        const char *line;
        int code;
        const char *fragment; // or, when code is 0, the expected "user image class"
    } rows[] = {
        {"12,5b9ec5f6b3b0b1c7,7", 0, "12 5b9ec5f6b3b0b1c7 7"},
        {"u-1,Img_2.v,202", 0, "u-1 Img_2.v 202"},
        {"0,a,000", 0, "0 a 0"},
        {ok64, 0, NULL},
        {"", -EPROTO, "train.csv:5: empty line"},
        {"1,abc", -EPROTO, "train.csv:5: 2 fields, expected 3"},
        {"1,abc,3,4", -EPROTO, "4 fields, expected 3"},
        {"1,a/b,3", -EPROTO, "train.csv:5: image_id 'a/b' has byte 0x2f at 2"},
        {"1,.hidden,3", -EPROTO, "image_id '.hidden' must not start with '.'"},
        {"1,..,3", -EPROTO, "image_id '..' must not start with '.'"},
        {".1,a,3", -EPROTO, "user_id '.1' must not start with '.'"},
        {"1,,3", -EPROTO, "train.csv:5: empty image_id"},
        {",abc,3", -EPROTO, "empty user_id"},
        {"1,\"abc\",3", -EPROTO, "has byte 0x22 at 1"},
        {"1,a b,3", -EPROTO, "has byte 0x20 at 2"},
        {"1,ab\t,3", -EPROTO, "has byte 0x09 at 3"},
        {bad65, -EPROTO, "image_id of 65 bytes, at most 64"},
        {"1,abc,203", -EPROTO, "class '203' is not an integer in 0..202"},
        {"1,abc,-1", -EPROTO, "class '-1' is not"},
        {"1,abc, 3", -EPROTO, "class ' 3' is not"},
        {"1,abc,3x", -EPROTO, "class '3x' is not"},
        {"1,abc,", -EPROTO, "class '' is not"},
        {"1,abc,99999999999", -EPROTO, "class '99999999999' is not"},
        {long_line, -EPROTO, "train.csv:5: line of 299 bytes, at most 256"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        train_gld_row_t row = {.label = -1};
        int rc =
            train_gld_csv_parse_line(rows[i].line, strlen(rows[i].line), "train.csv:5", &row, &err);
        print_message("row %zu: %s\n", i, err.msg);
        assert_int_equal(rc, rows[i].code);
        if (rc < 0) {
            assert_non_null(strstr(err.msg, rows[i].fragment));
            assert_int_equal(row.label, -1); // untouched on failure
        } else if (rows[i].fragment) {
            char got[200];
            (void)snprintf(got, sizeof got, "%s %s %d", row.user_id, row.image_id, row.label);
            assert_string_equal(got, rows[i].fragment);
        }
    }
}

static void test_gld_csv_files(void **state)
{
    (void)state;
    static const char nul_text[] = "user_id,image_id,class\n1,a\0b,3\n";
    const struct {
        const char *text;
        size_t size; // 0: strlen(text)
        int code;
        size_t count;
        const char *fragment;
    } rows[] = {
        {"user_id,image_id,class\n1,a,0\n2,b,1\n", 0, 0, 2, NULL},
        {"user_id,image_id,class\r\n1,a,0\r\n2,b,1\r\n", 0, 0, 2, NULL},
        {"user_id,image_id,class\n1,a,0", 0, 0, 1, NULL},
        {"", 0, -EPROTO, 0, "g/train.csv:1: header must be 'user_id,image_id,class', got ''"},
        {"user,image,class\n1,a,0\n", 0, -EPROTO, 0, "train.csv:1: header must be"},
        {"\xef\xbb\xbfuser_id,image_id,class\n1,a,0\n", 0, -EPROTO, 0, "train.csv:1: header"},
        {"user_id,image_id,class\n", 0, -EPROTO, 0, "train.csv: no images listed"},
        {"user_id,image_id,class\n1,a,0\n\n2,b,1\n", 0, -EPROTO, 0, "train.csv:3: empty line"},
        {"user_id,image_id,class\n1,a,0\n2,b,1\n3,a,2\n", 0, -EPROTO, 0,
         "train.csv:4: image_id 'a' already listed at line 2"},
        {"user_id,image_id,class\n1,a,0\n2,b,1\n3,b,2\n4,a,2\n", 0, -EPROTO, 0,
         "train.csv:4: image_id 'b' already listed at line 3"},
        {"user_id,image_id,class\n1,a,0\n2,b,250\n", 0, -EPROTO, 0, "train.csv:3: class '250'"},
        {nul_text, sizeof nul_text - 1, -EPROTO, 0, "train.csv:2: image_id 'a' has byte 0x00"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        jf_err_t err = {0};
        train_gld_csv_t csv = {0};
        size_t size = rows[i].size ? rows[i].size : strlen(rows[i].text);
        int rc = train_gld_csv_parse(rows[i].text, size, "/data/g/train.csv", &csv, &err);
        print_message("row %zu: %s\n", i, err.msg);
        assert_int_equal(rc, rows[i].code);
        assert_int_equal(csv.count, rows[i].count);
        if (rc < 0) {
            assert_non_null(strstr(err.msg, rows[i].fragment));
        }
        train_gld_csv_fini(&csv);
    }
    jf_err_t err = {0};
    train_gld_csv_t csv = {0};
    assert_int_equal(train_gld_csv_load("/no/such/train.csv", &csv, &err), -ENOENT);
    assert_non_null(strstr(err.msg, "/no/such/train.csv: cannot open"));
}

// Decodes the whole image at scale s into a new contiguous buffer (caller frees).
static unsigned char *t_decode_full(train_jpeg_t *jpeg, int s, int *ret_w, int *ret_h)
{
    train_jpeg_region_t all = {0, 0, 800, 600, s};
    train_jpeg_pixels_t px = {0};
    assert_int_equal(train_jpeg_decode(jpeg, &all, &px, NULL), 0);
    unsigned char *copy = malloc((size_t)px.width * (size_t)px.height * 3);
    assert_non_null(copy);
    for (int r = 0; r < px.height; r++) {
        memcpy(copy + (size_t)r * (size_t)px.width * 3, px.data + (size_t)r * px.stride_bytes,
               (size_t)px.width * 3);
    }
    *ret_w = px.width;
    *ret_h = px.height;
    return copy;
}

static void t_expect_region(train_jpeg_t *jpeg, const train_jpeg_region_t *r,
                            const unsigned char *full, int full_w)
{
    int s = r->scale_denom;
    int x0 = (2 * r->left + s) / (2 * s), y0 = (2 * r->top + s) / (2 * s);
    train_jpeg_pixels_t px = {0};
    jf_err_t err = {0};
    assert_int_equal(train_jpeg_decode(jpeg, r, &px, &err), 0);
    assert_int_equal(px.width, (2 * (r->left + r->width) + s) / (2 * s) - x0);
    assert_int_equal(px.height, (2 * (r->top + r->height) + s) / (2 * s) - y0);
    for (int row = 0; row < px.height; row++) {
        const unsigned char *want = full + ((size_t)(y0 + row) * (size_t)full_w + (size_t)x0) * 3;
        assert_memory_equal(px.data + (size_t)row * px.stride_bytes, want, (size_t)px.width * 3);
    }
}

static void test_jpeg_region_equals_full_decode(void **state)
{
    (void)state;
    char dir[T_PATH_MAX], path[T_PATH_MAX];
    t_tiny_set(dir, 0, path);
    jf_err_t err = {0};
    train_jpeg_t *jpeg = train_jpeg_new(&err);
    train_jpeg_info_t info = {0};
    assert_int_equal(train_jpeg_decode(jpeg, &(train_jpeg_region_t){0, 0, 1, 1, 1}, NULL, &err),
                     -EINVAL);
    assert_non_null(strstr(err.msg, "no image loaded"));
    assert_int_equal(train_jpeg_load(jpeg, path, &info, &err), 0);
    const train_jpeg_region_t regions[] = {
        {101, 57, 333, 222, 1}, {500, 400, 300, 200, 1}, {0, 0, 37, 600, 1},
        {101, 57, 333, 222, 2}, {3, 5, 797, 595, 2},     {90, 80, 500, 500, 4},
        {1, 1, 799, 599, 8},
    };
    for (int s = 1; s <= 8; s *= 2) {
        int w = 0, h = 0;
        unsigned char *full = t_decode_full(jpeg, s, &w, &h);
        assert_int_equal(w, (800 + s - 1) / s);
        for (size_t i = 0; i < sizeof regions / sizeof regions[0]; i++) {
            if (regions[i].scale_denom == s) {
                t_expect_region(jpeg, &regions[i], full, w);
            }
        }
        free(full);
    }
    const train_jpeg_region_t bad[] = {{0, 0, 801, 600, 1}, {-1, 0, 10, 10, 1}, {0, 0, 10, 10, 3}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        train_jpeg_pixels_t px = {0};
        assert_int_equal(train_jpeg_decode(jpeg, &bad[i], &px, &err), -EINVAL);
    }
    train_jpeg_destroy(&jpeg);
    assert_null(jpeg);
    jft_tmpdir_remove(dir);
}

// The transform's output for crop decoded at DCT scale s.
static void t_transform_at(train_jpeg_t *jpeg, const train_transform_crop_t *c, int s, float *out)
{
    train_transform_t *t = train_transform_new(NULL);
    assert_non_null(t);
    train_jpeg_region_t r = {c->left, c->top, c->width, c->height, s};
    train_jpeg_pixels_t px = {0};
    assert_int_equal(train_jpeg_decode(jpeg, &r, &px, NULL), 0);
    assert_int_equal(train_transform_apply(t, &px, false, out, NULL), 0);
    train_transform_destroy(&t);
}

static void test_dct_scaled_decode_is_close_to_full(void **state)
{
    (void)state;
    static float full[T_GLD_FLOATS], scaled[T_GLD_FLOATS];
    const train_transform_crop_t c = {.top = 30, .left = 41, .height = 520, .width = 700};
    assert_int_equal(train_transform_dct_denom(&c), 2);
    assert_int_equal(train_transform_dct_denom(&(train_transform_crop_t){0, 0, 449, 800}), 1);
    assert_int_equal(train_transform_dct_denom(&(train_transform_crop_t){0, 0, 1800, 1800}), 8);
    assert_int_equal(train_transform_dct_denom(&(train_transform_crop_t){0, 0, 1799, 1800}), 4);
    char dir[T_PATH_MAX], path[T_PATH_MAX];
    t_tiny_set(dir, 1, path);
    train_jpeg_t *jpeg = train_jpeg_new(NULL);
    train_jpeg_info_t info = {0};
    assert_int_equal(train_jpeg_load(jpeg, path, &info, NULL), 0);
    t_transform_at(jpeg, &c, 1, full);
    t_transform_at(jpeg, &c, 2, scaled);
    double sum = 0.0;
    for (size_t i = 0; i < T_GLD_FLOATS; i++) {
        sum += fabs((double)full[i] - (double)scaled[i]);
    }
    double levels = sum / T_GLD_FLOATS / (1.0 / 255.0 / 0.226); // mean difference in 8-bit levels
    print_message("dct 1/2 vs full decode: mean difference %.2f levels\n", levels);
    assert_true(levels > 0.0 && levels < 4.0);
    train_jpeg_destroy(&jpeg);
    jft_tmpdir_remove(dir);
}

static void test_transform_draw_follows_torchvision(void **state)
{
    (void)state;
    jf_rng_t rng;
    jf_rng_seed(&rng, 5, 0);
    int flips = 0, moved = 0;
    train_transform_crop_t prev = {0};
    for (int i = 0; i < 2000; i++) {
        train_transform_params_t p = {0};
        train_transform_draw(&rng, 800, 600, &p);
        const train_transform_crop_t *c = &p.crop;
        assert_true(c->top >= 0 && c->left >= 0 && c->height >= 1 && c->width >= 1);
        assert_true(c->top + c->height <= 600 && c->left + c->width <= 800);
        double area = (double)c->width * c->height / 480000.0, ratio = (double)c->width / c->height;
        assert_true(area > 0.079 && area <= 1.0);
        assert_true(ratio > 0.74 && ratio < 1.34);
        flips += p.flip ? 1 : 0;
        moved += memcmp(c, &prev, sizeof prev) != 0 ? 1 : 0;
        prev = *c;
    }
    assert_in_range(flips, 900, 1100);
    assert_int_equal(moved, 2000);
    // No attempt fits a 10x1000 image (the smallest crop is 24 wide): centre crop at ratio 3/4,
    // height round(10 / 0.75) = 13; and at ratio 4/3 for a 1000x10 one.
    train_transform_params_t p = {0};
    train_transform_draw(&rng, 10, 1000, &p);
    assert_memory_equal(&p.crop, &((train_transform_crop_t){493, 0, 13, 10}), sizeof p.crop);
    train_transform_draw(&rng, 1000, 10, &p);
    assert_memory_equal(&p.crop, &((train_transform_crop_t){0, 493, 10, 13}), sizeof p.crop);
    train_transform_draw(&rng, 1, 1, &p);
    assert_memory_equal(&p.crop, &((train_transform_crop_t){0, 0, 1, 1}), sizeof p.crop);
}

static void test_transform_resize_flip_normalise(void **state)
{
    (void)state;
    enum { W = 301, H = 203 };
    static unsigned char img[H + 1][W][3]; // a spare row: libswscale reads past the last one
    static float out[T_GLD_FLOATS], flipped[T_GLD_FLOATS];
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            img[y][x][0] = 255;
            img[y][x][1] = 0;
            img[y][x][2] = 128;
        }
    }
    train_jpeg_pixels_t src = {&img[0][0][0], W * 3, W, H};
    jf_err_t err = {0};
    train_transform_t *t = train_transform_new(&err);
    assert_int_equal(train_transform_apply(t, &src, false, out, &err), 0);
    const float want[3] = {(1.0f - 0.485f) / 0.229f, (0.0f - 0.456f) / 0.224f,
                           (128.0f / 255.0f - 0.406f) / 0.225f};
    for (size_t i = 0; i < T_GLD_FLOATS; i++) {
        assert_true(out[i] == want[i / (224 * 224)]); // a flat image stays exactly flat
    }
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            img[y][x][0] = (unsigned char)(x * 255 / W);
            img[y][x][1] = (unsigned char)(y * 255 / H);
            img[y][x][2] = (unsigned char)((x * y) & 0xff);
        }
    }
    assert_int_equal(train_transform_apply(t, &src, false, out, &err), 0);
    assert_int_equal(train_transform_apply(t, &src, true, flipped, &err), 0);
    for (size_t i = 0; i < T_GLD_FLOATS; i++) {
        size_t x = i % 224;
        assert_true(flipped[i] == out[i - x + (223 - x)]);
    }
    assert_true(out[200] > out[20] && out[223] > out[100]); // red grows left to right
    src.width = 0;
    assert_int_equal(train_transform_apply(t, &src, false, out, &err), -EPROTO);
    train_transform_destroy(&t);
    assert_null(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gld_csv_lines),
        cmocka_unit_test(test_gld_csv_files),
        cmocka_unit_test(test_jpeg_region_equals_full_decode),
        cmocka_unit_test(test_dct_scaled_decode_is_close_to_full),
        cmocka_unit_test(test_transform_draw_follows_torchvision),
        cmocka_unit_test(test_transform_resize_flip_normalise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
