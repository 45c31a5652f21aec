/* The GLD-23k training transforms of the study, as torchvision composes them on a PIL image:
 * RandomResizedCrop(224, scale=(0.08, 1.0), ratio=(3/4, 4/3)), RandomHorizontalFlip(0.5),
 * ToTensor, Normalize(ImageNet mean, std). The random choices are drawn from our seeded generator
 * by torchvision's algorithm (so the distribution is the same, not torch's exact numbers); the
 * resize is libswscale's bilinear filter, which widens with the shrink factor as PIL's does.
 * Not a decoder: train_jpeg decodes the crop, at a DCT scale chosen here. */
#ifndef TRAIN_TRANSFORM_H
#define TRAIN_TRANSFORM_H

#include "jf_err.h"
#include "jf_rng.h"
#include "train_jpeg.h"

#include <stdbool.h>

#define TRAIN_TRANSFORM_SIDE      224  // output height and width, pixels
#define TRAIN_TRANSFORM_CHANNELS  3    // R, G, B planes in the output
#define TRAIN_TRANSFORM_SCALE_MIN 0.08 // RandomResizedCrop scale: crop area / image area
#define TRAIN_TRANSFORM_SCALE_MAX 1.0
#define TRAIN_TRANSFORM_RATIO_MIN (3.0 / 4.0) // crop aspect ratio (width / height)
#define TRAIN_TRANSFORM_RATIO_MAX (4.0 / 3.0)
#define TRAIN_TRANSFORM_ATTEMPTS  10  // random crops tried before the centre-crop fallback
#define TRAIN_TRANSFORM_FLIP_P    0.5 // probability of a horizontal flip
#define TRAIN_TRANSFORM_DCT_MAX   8   // largest DCT scale denominator used

// A crop in full-resolution pixels, torchvision's (i, j, h, w) (plain value record).
typedef struct train_transform_crop {
    int top;    // i: first row
    int left;   // j: first column
    int height; // h: rows
    int width;  // w: columns
} train_transform_crop_t;

// The random choices for one sample (plain value record).
typedef struct train_transform_params {
    train_transform_crop_t crop; // RandomResizedCrop.get_params
    bool flip;                   // RandomHorizontalFlip fired
} train_transform_params_t;

typedef struct train_transform train_transform_t;

// Draws the crop as torchvision's RandomResizedCrop.get_params does for an image of width x
// height (>= 1): up to TRAIN_TRANSFORM_ATTEMPTS tries of a uniform area fraction and log-uniform
// aspect ratio (sides rounded half to even, as Python's round), a uniform position for the first
// that fits, else a centre crop of the whole image clamped to the ratio range. Then draws the flip.
void train_transform_draw(jf_rng_t *rng, int width, int height,
                          train_transform_params_t *ret_params);

// The DCT scale denominator to decode crop at: the largest of 8, 4, 2 at which the crop is still
// at least TRAIN_TRANSFORM_SIDE pixels both ways after rounding to scaled pixels, else 1. Decoding
// at 1/s applies libjpeg's DCT-domain reduction (each 8x8 block's low frequencies) before the
// bilinear shrink: pixel values differ from a full-resolution decode by a few levels in detailed
// areas, and crop edges move by at most s/2 full-resolution pixels.
int train_transform_dct_denom(const train_transform_crop_t *crop);

// Creates the resizer's state (a libswscale context cached per source size, output planes, the
// normalisation tables). Returns it, or NULL with err (-ENOMEM).
// Caller owns the result; release with train_transform_destroy. Use from one thread at a time.
train_transform_t *train_transform_new(jf_err_t *err);

// Frees everything; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_transform_destroy(train_transform_t **self_p);

// Resizes src (the decoded crop, any size >= 1x1) to TRAIN_TRANSFORM_SIDE squared with 8-bit
// results as PIL's resize has, mirrors it left-right if flip, and writes ((v / 255) - mean[c]) /
// std[c] with the ImageNet mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225) into ret_x
// as 3 x 224 x 224 floats in CHW order. src's buffer must be readable TRAIN_JPEG_PAD_BYTES past
// its last pixel: libswscale's SIMD row readers load up to 32 bytes beyond a row's end (valgrind
// shows it), and train_jpeg_decode's buffers are padded so. Returns 0, or -EPROTO (libswscale
// refused the sizes) or -ENOMEM.
int train_transform_apply(train_transform_t *self, const train_jpeg_pixels_t *src, bool flip,
                          float *ret_x, jf_err_t *err);

#endif
