/* Test support: trainers and spool files from outside the agent. */
#include "jft_trainer.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long long jft_trainer_start_ticks(long long pid)
{
    char path[64], text[1024] = {0};
    (void) snprintf(path, sizeof path, "/proc/%lld/stat", pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
    if (f) {
        fclose(f);
    }
    text[n] = '\0';
    // The name in parentheses may hold anything: the fields start after the last ')'.
    char *p = strrchr(text, ')');
    char state = 0;
    unsigned long long ticks = 0;
    if (!p ||
        sscanf(p + 1,
               " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
               "%*s %*s %llu",
               &state, &ticks) != 2 ||
        state == 'Z' || state == 'X') {
        return 0;
    }
    return (long long) ticks;
}

long long jft_trainer_pid_by_stdout(const char *path)
{
    DIR *proc = opendir("/proc");
    struct dirent *e = NULL;
    long long found = 0;
    while (proc && !found && (e = readdir(proc)) != NULL) {
        char link[64], target[PATH_MAX];
        char *end = NULL;
        long long pid = strtoll(e->d_name, &end, 10);
        if (pid <= 0 || *end != '\0') {
            continue;
        }
        (void) snprintf(link, sizeof link, "/proc/%lld/fd/1", pid);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            found = strcmp(target, path) == 0 && jft_trainer_start_ticks(pid) > 0 ? pid : 0;
        }
    }
    if (proc) {
        (void) closedir(proc);
    }
    return found;
}

int jft_trainer_find_output(const char *dir, char *out)
{
    DIR *d = opendir(dir);
    struct dirent *e = NULL;
    int rc = -ENOENT;
    while (d && rc != 0 && (e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (strncmp(e->d_name, "trainer-", 8) == 0 && n > 6 &&
            strcmp(e->d_name + n - 6, ".jsonl") == 0) {
            (void) snprintf(out, PATH_MAX, "%s/%s", dir, e->d_name);
            rc = 0;
        }
    }
    if (d) {
        (void) closedir(d);
    }
    return rc;
}

static bool s_above(const json_t *line, const char *kind, const jft_trainer_mark_t *m)
{
    long long e = json_integer_value(json_object_get(line, "epoch"));
    long long i = json_integer_value(json_object_get(line, "index"));
    if (!m) {
        return true;
    }
    if (strcmp(kind, "epoch") == 0) {
        return e > m->epoch;
    }
    return e > m->mb_epoch || (e == m->mb_epoch && i > m->mb_index);
}

long long jft_trainer_records(const char *text, size_t len, const jft_trainer_mark_t *mark)
{
    long long n = 0;
    size_t at = 0;
    while (at < len) {
        const char *nl = memchr(text + at, '\n', len - at);
        if (!nl) {
            break; // a partial last line is not a record yet
        }
        json_t *line = json_loadb(text + at, (size_t) (nl - (text + at)), 0, NULL);
        const char *kind = json_string_value(json_object_get(line, "kind"));
        bool rec = kind && (strcmp(kind, "minibatch") == 0 || strcmp(kind, "epoch") == 0);
        n += rec && s_above(line, kind, mark);
        json_decref(line);
        at = (size_t) (nl - text) + 1;
    }
    return n;
}

long long jft_trainer_sqlite_int(const char *db_path, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    } else {
        fprintf(stderr, "'%s': %s: %s\n", db_path, sql, db ? sqlite3_errmsg(db) : "");
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

int jft_trainer_spool_mark(const char *path, long long attempt, jft_trainer_mark_t *ret_mark)
{
    static const char *const keys[] = {"$.epoch", "$.mb_epoch", "$.mb_index"};
    long long v[3] = {0};
    char sql[256];
    (void) snprintf(sql, sizeof sql, "SELECT count(*) FROM trainer WHERE attempt = %lld", attempt);
    if (jft_trainer_sqlite_int(path, sql) != 1) {
        return -1;
    }
    for (size_t k = 0; k < 3; k++) {
        (void) snprintf(sql, sizeof sql,
                        "SELECT json_extract(mark, '%s') FROM trainer WHERE attempt = %lld",
                        keys[k], attempt);
        v[k] = jft_trainer_sqlite_int(path, sql); // -1 is a key's "none"
    }
    *ret_mark = (jft_trainer_mark_t){.epoch = v[0], .mb_epoch = v[1], .mb_index = v[2]};
    return 0;
}

long long jft_trainer_boot_ms(void)
{
    struct timespec ts = {0};
    (void) clock_gettime(CLOCK_BOOTTIME, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long jft_trainer_ticks_ms(long long ticks)
{
    long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? ticks * 1000 / hz : 0;
}
