/* A reusable JPEG region decoder over libjpeg-turbo's libjpeg API: loads a file, then decodes only
 * a crop region, optionally at 1/2, 1/4 or 1/8 scale in the DCT domain (jpeg_crop_scanline,
 * jpeg_skip_scanlines, scale_denom), to RGB. Errors and corrupt-data warnings are returned, never
 * printed and never fatal (a setjmp error manager replaces libjpeg's exit()). Not an encoder: the
 * generator uses TurboJPEG. Reference: libjpeg.txt, "Partial image decompression". */
#ifndef TRAIN_JPEG_H
#define TRAIN_JPEG_H

#include "jf_err.h"

#include <stddef.h>

#define TRAIN_JPEG_BYTES_MAX (32 * 1024 * 1024) // largest file accepted
#define TRAIN_JPEG_SIDE_MAX  8192               // largest width or height accepted, pixels
#define TRAIN_JPEG_MARGIN    16 // pixels decoded beyond each side of a crop (see train_jpeg_decode)
#define TRAIN_JPEG_PAD_BYTES 64 // readable bytes after the last decoded pixel (libswscale's SIMD)

// Size of the loaded image (plain value record).
typedef struct train_jpeg_info {
    int width;  // pixels
    int height; // pixels
} train_jpeg_info_t;

// A crop to decode, in full-resolution pixels, and the DCT scale to decode it at (plain record).
typedef struct train_jpeg_region {
    int left;        // first column, 0..width-1
    int top;         // first row, 0..height-1
    int width;       // columns, >= 1, left + width <= image width
    int height;      // rows, >= 1, top + height <= image height
    int scale_denom; // 1, 2, 4 or 8: decode at 1/scale_denom of full size
} train_jpeg_region_t;

// Decoded RGB pixels, borrowed from the decoder (plain value record): valid until its next load,
// decode or destroy. The buffer stays readable TRAIN_JPEG_PAD_BYTES past the last pixel.
typedef struct train_jpeg_pixels {
    const unsigned char *data; // first pixel of the region, 3 bytes (R, G, B) per pixel
    size_t stride_bytes;       // bytes from one row to the next
    int width;                 // pixels in a row
    int height;                // rows
} train_jpeg_pixels_t;

typedef struct train_jpeg train_jpeg_t;

// Creates a decoder with empty buffers. Returns it, or NULL with err (-ENOMEM).
// Caller owns the result; release with train_jpeg_destroy. Use from one thread at a time.
train_jpeg_t *train_jpeg_new(jf_err_t *err);

// Frees the decoder and its buffers; sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void train_jpeg_destroy(train_jpeg_t **self_p);

// Reads the file at path into the decoder's buffer (reused across calls) and parses its header
// into *ret_info. Returns 0, -ENOENT (no such file), -EIO (read failure), or -EPROTO (not a JPEG,
// corrupt header, larger than TRAIN_JPEG_BYTES_MAX or TRAIN_JPEG_SIDE_MAX, or a colour space
// that cannot be converted to RGB), with err naming path.
int train_jpeg_load(train_jpeg_t *self, const char *path, train_jpeg_info_t *ret_info,
                    jf_err_t *err);

// Decodes region of the loaded image to RGB. At scale_denom s the region's edges are rounded to
// the nearest scaled pixel (each within s/2 full-resolution pixels of the requested ones) and
// clipped to the scaled image, and *ret_pixels covers exactly that. Only the rows down to the
// region's bottom are entropy-decoded and only the columns around it are transformed; the decoder
// adds TRAIN_JPEG_MARGIN pixels around the region so that the pixels returned equal those of a
// full decode at the same scale (libjpeg's fancy upsampling treats a partial row's ends as image
// edges). Returns 0, -EINVAL (region outside the image, bad scale, nothing loaded) or -EPROTO
// (corrupt data, including what libjpeg only warns about), with err naming the file.
int train_jpeg_decode(train_jpeg_t *self, const train_jpeg_region_t *region,
                      train_jpeg_pixels_t *ret_pixels, jf_err_t *err);

#endif
