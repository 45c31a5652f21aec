/* torchvision's RandomResizedCrop / RandomHorizontalFlip / ToTensor / Normalize in C. The resize
 * runs in libswscale from packed RGB to planar RGB (GBRP) with full-chroma input and accurate
 * rounding, which keeps it in the RGB domain (no YUV round trip) and within one level of PIL's
 * antialiased bilinear; flip and normalisation are one table lookup per output value. */
#include "train_transform.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include <libavutil/pixfmt.h>
#include <libswscale/swscale.h>

#define S_PLANE      (TRAIN_TRANSFORM_SIDE * TRAIN_TRANSFORM_SIDE) // values per output plane
#define S_PIXEL_MAX  255.0f
#define S_SWS_FLAGS  (SWS_BILINEAR | SWS_FULL_CHR_H_INP | SWS_ACCURATE_RND)

static const float s_mean[TRAIN_TRANSFORM_CHANNELS] = {0.485f, 0.456f, 0.406f};
static const float s_std[TRAIN_TRANSFORM_CHANNELS] = {0.229f, 0.224f, 0.225f};

struct train_transform {
    struct SwsContext *sws; // owned; for the last source size (sws_getCachedContext)
    unsigned char *planes;  // owned; R, G, B planes of S_PLANE bytes each
    float table[TRAIN_TRANSFORM_CHANNELS][256]; // normalised value of each 8-bit level
};

// Uniform in [lo, hi), as torch's uniform_.
static double s_uniform(jf_rng_t *rng, double lo, double hi)
{
    return lo + (hi - lo) * jf_rng_uniform(rng);
}

// One attempt of get_params' loop; false if the drawn crop does not fit the image.
static bool s_try_crop(jf_rng_t *rng, int width, int height, train_transform_crop_t *ret_crop)
{
    double area = (double)width * (double)height;
    double target = area * s_uniform(rng, TRAIN_TRANSFORM_SCALE_MIN, TRAIN_TRANSFORM_SCALE_MAX);
    double ratio =
        exp(s_uniform(rng, log(TRAIN_TRANSFORM_RATIO_MIN), log(TRAIN_TRANSFORM_RATIO_MAX)));
    // nearbyint rounds half to even in the default rounding mode, as Python's round does.
    double w = nearbyint(sqrt(target * ratio));
    double h = nearbyint(sqrt(target / ratio));
    if (!(w > 0 && w <= width && h > 0 && h <= height)) {
        return false;
    }
    int top = (int)jf_rng_below(rng, (uint64_t)(height - (int)h + 1));
    int left = (int)jf_rng_below(rng, (uint64_t)(width - (int)w + 1));
    *ret_crop = (train_transform_crop_t){top, left, (int)h, (int)w};
    return true;
}

// get_params' fallback: the whole image, cut to the nearest allowed ratio, centred.
static train_transform_crop_t s_centre_crop(int width, int height)
{
    double in_ratio = (double)width / (double)height;
    int w = width, h = height;
    if (in_ratio < TRAIN_TRANSFORM_RATIO_MIN) {
        h = (int)nearbyint(w / TRAIN_TRANSFORM_RATIO_MIN);
    } else if (in_ratio > TRAIN_TRANSFORM_RATIO_MAX) {
        w = (int)nearbyint(h * TRAIN_TRANSFORM_RATIO_MAX);
    }
    return (train_transform_crop_t){(height - h) / 2, (width - w) / 2, h, w};
}

void train_transform_draw(jf_rng_t *rng, int width, int height,
                          train_transform_params_t *ret_params)
{
    train_transform_crop_t crop = {0};
    bool found = false;
    for (int i = 0; i < TRAIN_TRANSFORM_ATTEMPTS && !found; i++) {
        found = s_try_crop(rng, width, height, &crop);
    }
    if (!found) {
        crop = s_centre_crop(width, height);
    }
    bool flip = s_uniform(rng, 0.0, 1.0) < TRAIN_TRANSFORM_FLIP_P;
    *ret_params = (train_transform_params_t){.crop = crop, .flip = flip};
}

int train_transform_dct_denom(const train_transform_crop_t *crop)
{
    // One scaled pixel more than the output side leaves room for train_jpeg's rounding of both
    // edges, so the scaled crop is never smaller than the output (the resize only shrinks).
    for (int s = TRAIN_TRANSFORM_DCT_MAX; s > 1; s /= 2) {
        if (crop->width >= s * (TRAIN_TRANSFORM_SIDE + 1) &&
            crop->height >= s * (TRAIN_TRANSFORM_SIDE + 1)) {
            return s;
        }
    }
    return 1;
}

train_transform_t *train_transform_new(jf_err_t *err)
{
    train_transform_t *self = calloc(1, sizeof *self);
    unsigned char *planes = malloc((size_t)TRAIN_TRANSFORM_CHANNELS * S_PLANE);
    if (!self || !planes) {
        free(self);
        free(planes);
        (void)jf_err_set(err, -ENOMEM, "transform: out of memory");
        return NULL;
    }
    self->planes = planes;
    // ToTensor divides by 255 and Normalize subtracts and divides, all in float32: the same here.
    for (int c = 0; c < TRAIN_TRANSFORM_CHANNELS; c++) {
        for (int v = 0; v < 256; v++) {
            self->table[c][v] = ((float)v / S_PIXEL_MAX - s_mean[c]) / s_std[c];
        }
    }
    return self;
}

void train_transform_destroy(train_transform_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_transform_t *self = *self_p;
    sws_freeContext(self->sws); // accepts NULL
    free(self->planes);
    free(self);
    *self_p = NULL;
}

static int s_resize(train_transform_t *self, const train_jpeg_pixels_t *src, jf_err_t *err)
{
    self->sws = sws_getCachedContext(self->sws, src->width, src->height, AV_PIX_FMT_RGB24,
                                     TRAIN_TRANSFORM_SIDE, TRAIN_TRANSFORM_SIDE, AV_PIX_FMT_GBRP,
                                     S_SWS_FLAGS, NULL, NULL, NULL);
    if (!self->sws) {
        return jf_err_set(err, -EPROTO, "transform: libswscale cannot resize %dx%d to %dx%d",
                          src->width, src->height, TRAIN_TRANSFORM_SIDE, TRAIN_TRANSFORM_SIDE);
    }
    const uint8_t *in[4] = {src->data, NULL, NULL, NULL};
    const int in_stride[4] = {(int)src->stride_bytes, 0, 0, 0};
    // GBRP keeps its planes in the order G, B, R; ours are R, G, B.
    uint8_t *out[4] = {self->planes + S_PLANE, self->planes + 2 * S_PLANE, self->planes, NULL};
    const int out_stride[4] = {TRAIN_TRANSFORM_SIDE, TRAIN_TRANSFORM_SIDE, TRAIN_TRANSFORM_SIDE, 0};
    int rows = sws_scale(self->sws, in, in_stride, 0, src->height, out, out_stride);
    if (rows != TRAIN_TRANSFORM_SIDE) {
        return jf_err_set(err, -EPROTO, "transform: libswscale produced %d of %d rows", rows,
                          TRAIN_TRANSFORM_SIDE);
    }
    return 0;
}

// Writes one plane through its channel's table, mirrored left-right if flip.
static void s_normalise_plane(const unsigned char *plane, const float *table, bool flip, float *out)
{
    enum { SIDE = TRAIN_TRANSFORM_SIDE };
    for (int y = 0; y < SIDE; y++) {
        const unsigned char *row = plane + y * SIDE;
        float *o = out + y * SIDE;
        if (flip) {
            for (int x = 0; x < SIDE; x++) {
                o[x] = table[row[SIDE - 1 - x]];
            }
        } else {
            for (int x = 0; x < SIDE; x++) {
                o[x] = table[row[x]];
            }
        }
    }
}

int train_transform_apply(train_transform_t *self, const train_jpeg_pixels_t *src, bool flip,
                          float *ret_x, jf_err_t *err)
{
    if (!src->data || src->width < 1 || src->height < 1) {
        return jf_err_set(err, -EPROTO, "transform: empty source image %dx%d", src->width,
                          src->height);
    }
    int rc = s_resize(self, src, err);
    if (rc < 0) {
        return rc;
    }
    for (int c = 0; c < TRAIN_TRANSFORM_CHANNELS; c++) {
        s_normalise_plane(self->planes + c * S_PLANE, self->table[c], flip, ret_x + c * S_PLANE);
    }
    return 0;
}
