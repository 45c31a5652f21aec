/* Test support: damaged stores and SQL figures (jft_store.h). */
#include "jft_store.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cmocka.h>

#define S_LEAVES_MAX 4096

typedef struct s_leaves {
    size_t n;
    int64_t page_size;
    int64_t pageno[S_LEAVES_MAX];
    int64_t cells[S_LEAVES_MAX];
} s_leaves_t;

static void s_read_leaves(const char *path, s_leaves_t *l)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT pageno, ncell, pgsize FROM dbstat WHERE name = "
                                        "'runs' AND pagetype = 'leaf' ORDER BY pageno",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (l->n < S_LEAVES_MAX && sqlite3_step(st) == SQLITE_ROW) {
        l->pageno[l->n] = sqlite3_column_int64(st, 0);
        l->cells[l->n++] = sqlite3_column_int64(st, 1);
        l->page_size = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
}

// Garbage from a seeded xorshift; the first byte is never a b-tree page type, so SQLite cannot
// take the page for a valid one.
static void s_damage_page(const char *path, int64_t pageno, int64_t page_size, uint32_t *rng)
{
    unsigned char *page = malloc((size_t)page_size);
    assert_non_null(page);
    for (int64_t i = 0; i < page_size; i++) {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 17;
        *rng ^= *rng << 5;
        page[i] = (unsigned char)*rng;
    }
    page[0] = 0xff;
    int fd = open(path, O_WRONLY);
    assert_true(fd >= 0);
    assert_int_equal(pwrite(fd, page, (size_t)page_size, (off_t)((pageno - 1) * page_size)),
                     page_size);
    assert_int_equal(fsync(fd), 0);
    assert_int_equal(close(fd), 0);
    free(page);
}

int64_t jft_store_damage_runs(const char *path, int n_pages, uint32_t seed)
{
    static s_leaves_t l;
    l = (s_leaves_t){0};
    s_read_leaves(path, &l);
    assert_true(l.n >= (size_t)n_pages + 2); // the first and last leaves stay whole
    int64_t lost = 0;
    uint32_t rng = seed ? seed : 1;
    for (int i = 0; i < n_pages; i++) {
        size_t at = 1 + (size_t)(i + 1) * (l.n - 2) / (size_t)(n_pages + 1);
        s_damage_page(path, l.pageno[at], l.page_size, &rng);
        lost += l.cells[at];
    }
    print_message("runs_leaf_pages=%zu\nruns_damaged_pages=%d\nruns_on_damaged_pages=%" PRId64 "\n",
                  l.n, n_pages, lost);
    return lost;
}

int64_t jft_store_sql_int(const char *path, const char *attach, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int64_t v = -1;
    int flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
    if (sqlite3_open_v2(path, &db, flags, NULL) == SQLITE_OK) {
        char *q =
            attach ? sqlite3_mprintf("ATTACH 'file:' || %Q || '?mode=ro' AS orig", attach) : NULL;
        bool ok = !attach || (q && sqlite3_exec(db, q, NULL, NULL, NULL) == SQLITE_OK);
        sqlite3_free(q);
        if (ok && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_INTEGER) {
            v = sqlite3_column_int64(st, 0);
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}
