/* train.csv of GLD-23k: splits lines and fields by hand, checks each field's characters and range,
 * then finds duplicate image ids by sorting. Fields are never unquoted or trimmed: anything but
 * the documented characters is an error, so an id can always be used as a file name. */
#include "train_gld_csv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define S_FIELDS       3
#define S_WHERE_MAX    320 // "path:line" in messages; longer paths are cut
#define S_CLASS_DIGITS 9   // more digits than this is out of range before conversion
#define S_ROWS_INITIAL 1024

typedef struct s_field {
    const char *text; // borrowed; not NUL-terminated
    size_t len;       // bytes
} s_field_t;

static bool s_is_id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
}

// Checks an id field and copies it NUL-terminated into out (TRAIN_GLD_ID_MAX + 1 bytes).
static int s_parse_id(const s_field_t *f, const char *name, const char *where, char *out,
                      jf_err_t *err)
{
    if (f->len == 0) {
        return jf_err_set(err, -EPROTO, "%s: empty %s", where, name);
    }
    if (f->len > TRAIN_GLD_ID_MAX) {
        return jf_err_set(err, -EPROTO, "%s: %s of %zu bytes, at most %d", where, name, f->len,
                          TRAIN_GLD_ID_MAX);
    }
    for (size_t i = 0; i < f->len; i++) {
        if (!s_is_id_char(f->text[i])) {
            return jf_err_set(err, -EPROTO,
                              "%s: %s '%.*s' has byte 0x%02x at %zu; ids hold only letters, "
                              "digits, '-', '_' and '.'",
                              where, name, (int)f->len, f->text, (unsigned char)f->text[i], i + 1);
        }
    }
    if (f->text[0] == '.') {
        return jf_err_set(err, -EPROTO, "%s: %s '%.*s' must not start with '.'", where, name,
                          (int)f->len, f->text);
    }
    memcpy(out, f->text, f->len);
    out[f->len] = '\0';
    return 0;
}

static int s_parse_class(const s_field_t *f, const char *where, int *ret_label, jf_err_t *err)
{
    bool digits = f->len > 0 && f->len <= S_CLASS_DIGITS;
    long value = 0;
    for (size_t i = 0; digits && i < f->len; i++) {
        digits = f->text[i] >= '0' && f->text[i] <= '9';
        value = value * 10 + (f->text[i] - '0');
    }
    if (!digits || value >= TRAIN_GLD_CLASSES) {
        return jf_err_set(err, -EPROTO, "%s: class '%.*s' is not an integer in 0..%d", where,
                          (int)(f->len < TRAIN_GLD_ID_MAX ? f->len : TRAIN_GLD_ID_MAX), f->text,
                          TRAIN_GLD_CLASSES - 1);
    }
    *ret_label = (int)value;
    return 0;
}

// Splits line into exactly S_FIELDS comma-separated fields.
static int s_split(const char *line, size_t len, const char *where, s_field_t *ret_fields,
                   jf_err_t *err)
{
    size_t n = 0, start = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i < len && line[i] != ',') {
            continue;
        }
        if (n < S_FIELDS) {
            ret_fields[n] = (s_field_t){line + start, i - start};
        }
        n++;
        start = i + 1;
    }
    if (n != S_FIELDS) {
        return jf_err_set(err, -EPROTO, "%s: %zu fields, expected %d (%s)", where, n, S_FIELDS,
                          TRAIN_GLD_CSV_HEADER);
    }
    return 0;
}

int train_gld_csv_parse_line(const char *line, size_t len, const char *where,
                             train_gld_row_t *ret_row, jf_err_t *err)
{
    if (len == 0) {
        return jf_err_set(err, -EPROTO, "%s: empty line", where);
    }
    if (len > TRAIN_GLD_CSV_LINE_MAX) {
        return jf_err_set(err, -EPROTO, "%s: line of %zu bytes, at most %d", where, len,
                          TRAIN_GLD_CSV_LINE_MAX);
    }
    s_field_t f[S_FIELDS] = {{0}};
    train_gld_row_t row = {0};
    int rc = s_split(line, len, where, f, err);
    rc = rc < 0 ? rc : s_parse_id(&f[0], "user_id", where, row.user_id, err);
    rc = rc < 0 ? rc : s_parse_id(&f[1], "image_id", where, row.image_id, err);
    rc = rc < 0 ? rc : s_parse_class(&f[2], where, &row.label, err);
    if (rc == 0) {
        *ret_row = row;
    }
    return rc;
}

// The next line of text from *at: its start and length without "\n" or "\r\n"; advances *at.
// Returns false at the end of text.
static bool s_next_line(const char *text, size_t size, size_t *at, s_field_t *ret_line)
{
    if (*at >= size) {
        return false;
    }
    const char *start = text + *at;
    const char *nl = memchr(start, '\n', size - *at);
    size_t len = nl ? (size_t)(nl - start) : size - *at;
    *at += len + (nl ? 1 : 0);
    if (len > 0 && start[len - 1] == '\r') {
        len--;
    }
    *ret_line = (s_field_t){start, len};
    return true;
}

static int s_check_header(const char *text, size_t size, size_t *at, const char *path,
                          jf_err_t *err)
{
    s_field_t line = {0};
    bool have = s_next_line(text, size, at, &line);
    size_t want = strlen(TRAIN_GLD_CSV_HEADER);
    if (!have || line.len != want || memcmp(line.text, TRAIN_GLD_CSV_HEADER, want) != 0) {
        int shown = have ? (int)(line.len < 64 ? line.len : 64) : 0;
        return jf_err_set(err, -EPROTO, "%.200s:1: header must be '%s', got '%.*s'", path,
                          TRAIN_GLD_CSV_HEADER, shown, have ? line.text : "");
    }
    return 0;
}

static int s_append(train_gld_csv_t *csv, size_t *cap, const train_gld_row_t *row, jf_err_t *err)
{
    if (csv->count == *cap) {
        size_t grown = *cap ? 2 * *cap : S_ROWS_INITIAL;
        train_gld_row_t *rows = realloc(csv->rows, grown * sizeof *rows);
        if (!rows) {
            return jf_err_set(err, -ENOMEM, "gld: out of memory for %zu rows", grown);
        }
        csv->rows = rows;
        *cap = grown;
    }
    csv->rows[csv->count++] = *row;
    return 0;
}

static int s_compare_image_ids(const void *a, const void *b, void *rows)
{
    const train_gld_row_t *r = rows;
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    int c = strcmp(r[i].image_id, r[j].image_id);
    return c != 0 ? c : (i > j) - (i < j); // ties in file order: the first listing comes first
}

// Finds the first line (in file order) whose image is listed on an earlier line, and names both
// (line = row + 2: the header is line 1).
static int s_check_duplicates(const train_gld_csv_t *csv, const char *path, jf_err_t *err)
{
    size_t *order = malloc(csv->count * sizeof *order);
    if (!order) {
        return jf_err_set(err, -ENOMEM, "gld: out of memory checking %zu rows", csv->count);
    }
    for (size_t i = 0; i < csv->count; i++) {
        order[i] = i;
    }
    qsort_r(order, csv->count, sizeof *order, s_compare_image_ids, csv->rows);
    size_t dup = csv->count, first = 0; // the earliest repeat and its first listing
    for (size_t k = 1; k < csv->count; k++) {
        bool same = strcmp(csv->rows[order[k - 1]].image_id, csv->rows[order[k]].image_id) == 0;
        if (same && order[k] < dup) {
            dup = order[k];
            first = order[k - 1];
        }
    }
    free(order);
    if (dup < csv->count) {
        // Equal ids sort in file order, so the earliest repeat follows its id's first listing.
        return jf_err_set(err, -EPROTO, "%.200s:%zu: image_id '%s' already listed at line %zu",
                          path, dup + 2, csv->rows[dup].image_id, first + 2);
    }
    return 0;
}

static int s_parse_rows(const char *text, size_t size, size_t at, const char *path,
                        train_gld_csv_t *csv, jf_err_t *err)
{
    size_t cap = 0;
    s_field_t line = {0};
    for (size_t number = 2; s_next_line(text, size, &at, &line); number++) {
        char where[S_WHERE_MAX];
        (void)snprintf(where, sizeof where, "%.200s:%zu", path, number); // may cut the path
        train_gld_row_t row = {0};
        int rc = train_gld_csv_parse_line(line.text, line.len, where, &row, err);
        rc = rc < 0 ? rc : s_append(csv, &cap, &row, err);
        if (rc < 0) {
            return rc;
        }
    }
    if (csv->count == 0) {
        return jf_err_set(err, -EPROTO, "%.200s: no images listed after the header", path);
    }
    return 0;
}

int train_gld_csv_parse(const char *text, size_t size, const char *path, train_gld_csv_t *ret_csv,
                        jf_err_t *err)
{
    train_gld_csv_t csv = {0};
    size_t at = 0;
    int rc = s_check_header(text, size, &at, path, err);
    rc = rc < 0 ? rc : s_parse_rows(text, size, at, path, &csv, err);
    rc = rc < 0 ? rc : s_check_duplicates(&csv, path, err);
    if (rc < 0) {
        train_gld_csv_fini(&csv);
        return rc;
    }
    *ret_csv = csv;
    return 0;
}

// Reads all of an open file into a new NUL-terminated buffer (caller frees).
static int s_read_stream(FILE *f, const char *path, char **ret_text, size_t *ret_size,
                         jf_err_t *err)
{
    struct stat st;
    if (fstat(fileno(f), &st) < 0) {
        return jf_err_set(err, -EIO, "%.200s: cannot stat: %s", path, strerror(errno));
    }
    if (st.st_size > TRAIN_GLD_CSV_BYTES_MAX) {
        return jf_err_set(err, -EPROTO, "%.200s: %lld bytes, at most %d", path,
                          (long long)st.st_size, TRAIN_GLD_CSV_BYTES_MAX);
    }
    char *text = malloc((size_t)st.st_size + 1);
    if (!text) {
        return jf_err_set(err, -ENOMEM, "gld: out of memory for %.200s", path);
    }
    size_t n = fread(text, 1, (size_t)st.st_size, f);
    if (n != (size_t)st.st_size || ferror(f)) {
        free(text);
        return jf_err_set(err, -EIO, "%.200s: read %zu of %lld bytes", path, n,
                          (long long)st.st_size);
    }
    text[n] = '\0';
    *ret_text = text;
    *ret_size = n;
    return 0;
}

int train_gld_csv_load(const char *path, train_gld_csv_t *ret_csv, jf_err_t *err)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        int code = errno == ENOENT ? -ENOENT : -EIO;
        return jf_err_set(err, code, "%.200s: cannot open: %s", path, strerror(errno));
    }
    char *text = NULL;
    size_t size = 0;
    int rc = s_read_stream(f, path, &text, &size, err);
    (void)fclose(f); // read-only: nothing to lose on close
    if (rc < 0) {
        return rc;
    }
    rc = train_gld_csv_parse(text, size, path, ret_csv, err);
    free(text);
    return rc;
}

void train_gld_csv_fini(train_gld_csv_t *csv)
{
    free(csv->rows);
    *csv = (train_gld_csv_t){0};
}
