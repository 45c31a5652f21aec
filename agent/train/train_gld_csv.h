/* The federated split file of GLD-23k, train.csv: a header `user_id,image_id,class`, then one
 * line per image. Parsed by hand (no library reads this format, STYLE.md §12) and strictly:
 * unquoted fields only, ids safe as file names, classes in range, no duplicate images; every error
 * names file:line. Not a general CSV reader. Format: TensorFlow Federated's gldv2 split files. */
#ifndef TRAIN_GLD_CSV_H
#define TRAIN_GLD_CSV_H

#include "jf_err.h"

#include <stddef.h>

#define TRAIN_GLD_CSV_HEADER    "user_id,image_id,class"
#define TRAIN_GLD_CLASSES       203      // landmarks in GLD-23k; a class is 0..202
#define TRAIN_GLD_ID_MAX        64       // bytes in a user_id or image_id, at most
#define TRAIN_GLD_CSV_LINE_MAX  256      // bytes in one line without its newline, at most
#define TRAIN_GLD_CSV_BYTES_MAX 67108864 // 64 MiB: far above 16x the real split (~1 MiB)

// One line of train.csv (plain value record).
typedef struct train_gld_row {
    char user_id[TRAIN_GLD_ID_MAX + 1];  // NUL-terminated; [A-Za-z0-9_.-], not starting with '.'
    char image_id[TRAIN_GLD_ID_MAX + 1]; // same rules: the image is images/<image_id>.jpg
    int label;                           // class, 0..TRAIN_GLD_CLASSES-1
} train_gld_row_t;

// The rows of one train.csv (plain value record; free rows with train_gld_csv_fini).
typedef struct train_gld_csv {
    train_gld_row_t *rows; // owned; count entries in file order
    size_t count;          // rows, >= 1 after a successful load
} train_gld_csv_t;

// Parses one data line of len bytes (without its line ending; need not be NUL-terminated) into
// *ret_row. where ("path:line") starts every message. Returns 0, or -EPROTO with err saying which
// field is wrong and what was expected.
int train_gld_csv_parse_line(const char *line, size_t len, const char *where,
                             train_gld_row_t *ret_row, jf_err_t *err);

// Parses a whole file's text (size bytes; "\n" or "\r\n" line endings, the last line's ending
// optional) named path in messages: the header, every line, then duplicate image ids. Returns 0
// with *ret_csv filled, or -EPROTO (err names path:line), -ENOMEM.
int train_gld_csv_parse(const char *text, size_t size, const char *path, train_gld_csv_t *ret_csv,
                        jf_err_t *err);

// Reads and parses the file at path. Returns 0, -ENOENT (no such file), -EIO (read failure),
// -EPROTO (bad content or over TRAIN_GLD_CSV_BYTES_MAX) or -ENOMEM, with err naming path.
int train_gld_csv_load(const char *path, train_gld_csv_t *ret_csv, jf_err_t *err);

// Frees the rows and empties csv. Accepts an empty csv.
void train_gld_csv_fini(train_gld_csv_t *csv);

#endif
