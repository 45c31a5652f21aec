/* JPEG region decoding with libjpeg-turbo: every libjpeg call runs under s_guarded, whose setjmp
 * catches error_exit (and corrupt-data warnings, which we make fatal) and aborts the decompression
 * so that the object can be reused. The file bytes and the decoded pixels live in buffers that
 * grow to the largest image seen and are reused, so steady-state decoding does not allocate. */
#include "train_jpeg.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h> // before jpeglib.h, which needs FILE and size_t
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jpeglib.h>

#define S_ROWS_PER_READ 16 // rows handed to jpeg_read_scanlines at once

typedef struct s_error_mgr {
    struct jpeg_error_mgr pub; // libjpeg's; first, so cinfo->err can be cast back
    jmp_buf jump;              // set by s_guarded; error_exit returns there
    char msg[JMSG_LENGTH_MAX]; // the last error or warning, formatted
} s_error_mgr_t;

struct train_jpeg {
    struct jpeg_decompress_struct cinfo; // created in train_jpeg_new when created is true
    s_error_mgr_t jerr;
    bool created;          // jpeg_create_decompress succeeded
    bool loaded;           // file and info hold a JPEG whose header parsed
    unsigned char *file;   // owned; the loaded file's bytes
    size_t file_size;      // bytes loaded
    size_t file_cap;       // bytes allocated
    unsigned char *pixels; // owned; the last decoded window, RGB
    size_t pixels_cap;     // bytes allocated
    train_jpeg_info_t info;
    char path[PATH_MAX]; // the loaded file, for messages
};

// A step run under s_guarded: any libjpeg error longjmps out of it.
typedef int s_step_fn(train_jpeg_t *self, const void *arg, void *ret, jf_err_t *err);

// Scaled-pixel rectangles of one decode: what the caller asked for, and what is decoded.
typedef struct s_window {
    int x0, y0, x1, y1; // the requested region, rounded and clipped; [x0, x1) x [y0, y1)
    int dx0, dy0;       // decoded window's top-left, margin included
    int dx1, dy1;       // decoded window's bottom-right (exclusive)
} s_window_t;

static void s_error_exit(j_common_ptr cinfo)
{
    s_error_mgr_t *e = (s_error_mgr_t *)cinfo->err;
    (*cinfo->err->format_message)(cinfo, e->msg);
    longjmp(e->jump, 1);
}

// libjpeg only warns about corrupt data (and decodes grey in its place); we fail instead, as
// TurboJPEG's TJFLAG_STOPONWARNING does. Trace messages (level >= 0) are dropped.
static void s_emit_message(j_common_ptr cinfo, int msg_level)
{
    if (msg_level < 0) {
        s_error_exit(cinfo);
    }
}

static void s_output_message(j_common_ptr cinfo)
{
    (void)cinfo; // nothing of ours goes to stderr; errors reach the caller through err
}

static int s_guarded(train_jpeg_t *self, s_step_fn *step, const void *arg, void *ret, jf_err_t *err)
{
    if (setjmp(self->jerr.jump) != 0) {
        jpeg_abort_decompress(&self->cinfo);
        return jf_err_set(err, -EPROTO, "%.200s: corrupt JPEG: %s", self->path, self->jerr.msg);
    }
    return step(self, arg, ret, err);
}

static int s_create(train_jpeg_t *self, const void *arg, void *ret, jf_err_t *err)
{
    (void)arg, (void)ret, (void)err;
    jpeg_create_decompress(&self->cinfo);
    self->created = true;
    return 0;
}

train_jpeg_t *train_jpeg_new(jf_err_t *err)
{
    train_jpeg_t *self = calloc(1, sizeof *self);
    if (!self) {
        (void)jf_err_set(err, -ENOMEM, "jpeg: out of memory");
        return NULL;
    }
    self->cinfo.err = jpeg_std_error(&self->jerr.pub);
    self->jerr.pub.error_exit = s_error_exit;
    self->jerr.pub.emit_message = s_emit_message;
    self->jerr.pub.output_message = s_output_message;
    (void)snprintf(self->path, sizeof self->path, "jpeg decoder");
    if (s_guarded(self, s_create, NULL, NULL, err) < 0) {
        train_jpeg_destroy(&self);
    }
    return self;
}

void train_jpeg_destroy(train_jpeg_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    train_jpeg_t *self = *self_p;
    if (self->created) {
        jpeg_destroy_decompress(&self->cinfo);
    }
    free(self->file);
    free(self->pixels);
    free(self);
    *self_p = NULL;
}

// Makes *buf hold at least size bytes, keeping nothing of its contents.
static int s_reserve(unsigned char **buf, size_t *cap, size_t size, jf_err_t *err)
{
    if (size <= *cap) {
        return 0;
    }
    unsigned char *grown = malloc(size);
    if (!grown) {
        return jf_err_set(err, -ENOMEM, "jpeg: out of memory for %zu bytes", size);
    }
    free(*buf);
    *buf = grown;
    *cap = size;
    return 0;
}

static int s_read_fd(train_jpeg_t *self, int fd, size_t size, jf_err_t *err)
{
    int rc = s_reserve(&self->file, &self->file_cap, size, err);
    for (size_t done = 0; rc == 0 && done < size;) {
        ssize_t n = pread(fd, self->file + done, size - done, (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return jf_err_set(err, -EIO, "%.200s: read failed at byte %zu: %s", self->path, done,
                              n < 0 ? strerror(errno) : "file shrank");
        }
        done += (size_t)n;
    }
    self->file_size = rc == 0 ? size : 0;
    return rc;
}

static int s_read_file(train_jpeg_t *self, const char *path, jf_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int code = errno == ENOENT ? -ENOENT : -EIO;
        return jf_err_set(err, code, "%.200s: cannot open: %s", path, strerror(errno));
    }
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) < 0) {
        rc = jf_err_set(err, -EIO, "%.200s: cannot stat: %s", path, strerror(errno));
    } else if (st.st_size <= 0 || st.st_size > TRAIN_JPEG_BYTES_MAX) {
        rc = jf_err_set(err, -EPROTO, "%.200s: %lld bytes, expected a JPEG of 1..%d bytes", path,
                        (long long)st.st_size, TRAIN_JPEG_BYTES_MAX);
    } else {
        rc = s_read_fd(self, fd, (size_t)st.st_size, err);
    }
    (void)close(fd); // read-only: nothing to lose on close
    return rc;
}

static int s_header(train_jpeg_t *self, const void *arg, void *ret, jf_err_t *err)
{
    (void)arg, (void)ret, (void)err;
    jpeg_mem_src(&self->cinfo, self->file, (unsigned long)self->file_size);
    (void)jpeg_read_header(&self->cinfo, TRUE); // TRUE: anything but an image is an error
    return 0;
}

static int s_check_header(train_jpeg_t *self, jf_err_t *err)
{
    const struct jpeg_decompress_struct *ci = &self->cinfo;
    J_COLOR_SPACE cs = ci->jpeg_color_space;
    if (cs != JCS_GRAYSCALE && cs != JCS_YCbCr && cs != JCS_RGB) {
        return jf_err_set(err, -EPROTO,
                          "%.200s: colour space %d (CMYK or unknown) cannot be converted to RGB",
                          self->path, (int)cs);
    }
    if (ci->image_width > TRAIN_JPEG_SIDE_MAX || ci->image_height > TRAIN_JPEG_SIDE_MAX) {
        return jf_err_set(err, -EPROTO, "%.200s: %ux%u pixels, at most %d on a side", self->path,
                          ci->image_width, ci->image_height, TRAIN_JPEG_SIDE_MAX);
    }
    self->info = (train_jpeg_info_t){(int)ci->image_width, (int)ci->image_height};
    return 0;
}

int train_jpeg_load(train_jpeg_t *self, const char *path, train_jpeg_info_t *ret_info,
                    jf_err_t *err)
{
    self->loaded = false;
    (void)snprintf(self->path, sizeof self->path, "%s", path); // a cut path only shortens messages
    int rc = s_read_file(self, path, err);
    rc = rc < 0 ? rc : s_guarded(self, s_header, NULL, NULL, err);
    rc = rc < 0 ? rc : s_check_header(self, err);
    jpeg_abort_decompress(&self->cinfo); // the header is parsed again by train_jpeg_decode
    if (rc == 0) {
        self->loaded = true;
        *ret_info = self->info;
    }
    return rc;
}

static int s_check_region(const train_jpeg_t *self, const train_jpeg_region_t *r, jf_err_t *err)
{
    if (!self->loaded) {
        return jf_err_set(err, -EINVAL, "jpeg: no image loaded");
    }
    int s = r->scale_denom;
    if (s != 1 && s != 2 && s != 4 && s != 8) {
        return jf_err_set(err, -EINVAL, "jpeg: scale 1/%d, expected 1/1, 1/2, 1/4 or 1/8", s);
    }
    if (r->left < 0 || r->top < 0 || r->width < 1 || r->height < 1 ||
        r->width > self->info.width - r->left || r->height > self->info.height - r->top) {
        return jf_err_set(err, -EINVAL, "%.200s: region %dx%d at (%d, %d) outside %dx%d",
                          self->path, r->width, r->height, r->left, r->top, self->info.width,
                          self->info.height);
    }
    return 0;
}

// Rounds start and end (full resolution) to scaled pixels in [0, size), at least one wide.
static void s_scale_span(int start, int len, int denom, int size, int *ret_0, int *ret_1)
{
    int a = (2 * start + denom) / (2 * denom); // nearest, halves up
    int b = (2 * (start + len) + denom) / (2 * denom);
    a = a < size - 1 ? a : size - 1;
    b = b < size ? b : size;
    *ret_0 = a;
    *ret_1 = b > a ? b : a + 1;
}

static s_window_t s_window(const train_jpeg_region_t *r, int out_w, int out_h)
{
    s_window_t w = {0};
    s_scale_span(r->left, r->width, r->scale_denom, out_w, &w.x0, &w.x1);
    s_scale_span(r->top, r->height, r->scale_denom, out_h, &w.y0, &w.y1);
    w.dx0 = w.x0 > TRAIN_JPEG_MARGIN ? w.x0 - TRAIN_JPEG_MARGIN : 0;
    w.dy0 = w.y0 > TRAIN_JPEG_MARGIN ? w.y0 - TRAIN_JPEG_MARGIN : 0;
    w.dx1 = w.x1 + TRAIN_JPEG_MARGIN < out_w ? w.x1 + TRAIN_JPEG_MARGIN : out_w;
    w.dy1 = w.y1 + TRAIN_JPEG_MARGIN < out_h ? w.y1 + TRAIN_JPEG_MARGIN : out_h;
    return w;
}

// Reads rows [output_scanline, end) into pixels, stride bytes apart, row first at pixels.
static int s_read_rows(train_jpeg_t *self, unsigned char *pixels, size_t stride, JDIMENSION end,
                       jf_err_t *err)
{
    struct jpeg_decompress_struct *ci = &self->cinfo;
    for (JDIMENSION row = 0; ci->output_scanline < end;) {
        JSAMPROW rows[S_ROWS_PER_READ];
        JDIMENSION want = end - ci->output_scanline;
        want = want < S_ROWS_PER_READ ? want : S_ROWS_PER_READ;
        for (JDIMENSION k = 0; k < want; k++) {
            rows[k] = pixels + (size_t)(row + k) * stride;
        }
        JDIMENSION got = jpeg_read_scanlines(ci, rows, want);
        if (got == 0) {
            return jf_err_set(err, -EPROTO, "%.200s: decoder stopped at row %u", self->path,
                              ci->output_scanline);
        }
        row += got;
    }
    return 0;
}

static int s_decode(train_jpeg_t *self, const void *arg, void *ret, jf_err_t *err)
{
    const train_jpeg_region_t *r = arg;
    struct jpeg_decompress_struct *ci = &self->cinfo;
    jpeg_mem_src(ci, self->file, (unsigned long)self->file_size);
    (void)jpeg_read_header(ci, TRUE);
    ci->out_color_space = JCS_RGB;
    ci->scale_num = 1;
    ci->scale_denom = (unsigned int)r->scale_denom;
    (void)jpeg_start_decompress(ci); // FALSE only for suspending sources; ours is memory
    s_window_t w = s_window(r, (int)ci->output_width, (int)ci->output_height);
    JDIMENSION xoff = (JDIMENSION)w.dx0, width = (JDIMENSION)(w.dx1 - w.dx0);
    jpeg_crop_scanline(ci, &xoff, &width);        // moves xoff left to an iMCU boundary
    size_t stride = (size_t)ci->output_width * 3; // output_width is now the cropped width
    size_t size = stride * (size_t)(w.dy1 - w.dy0) + TRAIN_JPEG_PAD_BYTES;
    int rc = s_reserve(&self->pixels, &self->pixels_cap, size, err);
    if (rc == 0 && w.dy0 > 0) {
        (void)jpeg_skip_scanlines(ci, (JDIMENSION)w.dy0); // valid count: skips them all
    }
    rc = rc < 0 ? rc : s_read_rows(self, self->pixels, stride, (JDIMENSION)w.dy1, err);
    jpeg_abort_decompress(ci); // the rows below are not needed
    if (rc == 0) {
        size_t first = (size_t)(w.y0 - w.dy0) * stride + (size_t)(w.x0 - (int)xoff) * 3;
        *(train_jpeg_pixels_t *)ret =
            (train_jpeg_pixels_t){self->pixels + first, stride, w.x1 - w.x0, w.y1 - w.y0};
    }
    return rc;
}

int train_jpeg_decode(train_jpeg_t *self, const train_jpeg_region_t *region,
                      train_jpeg_pixels_t *ret_pixels, jf_err_t *err)
{
    int rc = s_check_region(self, region, err);
    return rc < 0 ? rc : s_guarded(self, s_decode, region, ret_pixels, err);
}
