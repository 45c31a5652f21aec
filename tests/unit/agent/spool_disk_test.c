/* Unit tests for what the agent spool's file adds (agent_spool.h, agent_spool_db.h): closing and
 * reopening gives back every unacknowledged message with its seq and bytes, acknowledged rows
 * are gone, orphaned streams get their crash report once, and a damaged, foreign, locked or
 * unreachable file is refused with an error naming the path (never a crash, never an empty
 * spool in its place). Each test works in its own mkdtemp directory. */
#include "agent_options.h"
#include "agent_spool.h"
#include "jf_msg.h"

#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#define T_RUN      "r0123456789abcdef"
#define T_RUN2     "r00000000000000ff"
#define T_T0       (INT64_C(1000) * 1000000)
#define T_SENT_MAX 64
#define T_TEXT_MAX 512

typedef struct t_ctx {
    char dir[64];
    char path[128];
} t_ctx_t;

typedef struct t_sink {
    size_t n;
    char sent[T_SENT_MAX][T_TEXT_MAX];
} t_sink_t;

static int t_send(const char *text, size_t len, void *arg)
{
    t_sink_t *s = arg;
    assert_true(s->n < T_SENT_MAX && len < T_TEXT_MAX);
    memcpy(s->sent[s->n], text, len);
    s->sent[s->n][len] = '\0';
    s->n++;
    return 0;
}

// A message body that differs per stream and seq, with bytes a text copy could mangle.
static char *t_text(const char *run, int64_t attempt, int64_t seq)
{
    char *t = malloc(T_TEXT_MAX);
    assert_non_null(t);
    (void)snprintf(t, T_TEXT_MAX,
                   "{\"run\":\"%s\",\"attempt\":%lld,\"seq\":%lld,\"x\":\"\xc3\xa9\"}", run,
                   (long long)attempt, (long long)seq);
    return t;
}

static void t_append(agent_spool_t *sp, const char *run, int64_t attempt, int n, bool final)
{
    for (int i = 0; i < n; i++) {
        int64_t seq = agent_spool_next_seq(sp, run, attempt);
        char *text = t_text(run, attempt, seq);
        jf_err_t err = {0};
        if (agent_spool_append(sp, run, attempt, seq, text, strlen(text), final && i == n - 1,
                               &err) != 0) {
            free(text);
            fail_msg("append seq %lld: %s", (long long)seq, err.msg);
        }
    }
}

static agent_spool_t *t_open(const t_ctx_t *c, jf_err_t *err)
{
    agent_spool_opts_t o = {.state_dir = c->dir, .max_bytes = AGENT_SPOOL_BYTES_MAX};
    return agent_spool_new(&o, err);
}

static agent_spool_t *t_open_ok(const t_ctx_t *c)
{
    jf_err_t err = {0};
    agent_spool_t *sp = t_open(c, &err);
    if (!sp) {
        fail_msg("agent_spool_new: %s", err.msg);
    }
    return sp;
}

static long long t_sql_int(const t_ctx_t *c, const char *sql)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long v = -1;
    if (sqlite3_open(c->path, &db) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        v = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

static void t_sql_exec(const t_ctx_t *c, const char *sql)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(c->path, &db), SQLITE_OK);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        fail_msg("%s: %s", sql, msg);
    }
    sqlite3_close(db);
}

static void t_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static int t_setup(void **state)
{
    t_ctx_t *c = calloc(1, sizeof *c);
    assert_non_null(c);
    (void)snprintf(c->dir, sizeof c->dir, "/tmp/jf-spool-disk-XXXXXX");
    assert_non_null(mkdtemp(c->dir));
    (void)snprintf(c->path, sizeof c->path, "%s/%s", c->dir, AGENT_SPOOL_FILE_NAME);
    *state = c;
    return 0;
}

static int t_teardown(void **state)
{
    t_ctx_t *c = *state;
    static const char *const suffixes[] = {"", "-wal", "-shm", "-journal"};
    char path[160];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        (void)snprintf(path, sizeof path, "%s%s", c->path, suffixes[i]);
        (void)unlink(path); // most of them do not exist
    }
    (void)rmdir(path); // a test may have made the spool path a directory
    (void)rmdir(c->path);
    int rc = rmdir(c->dir);
    free(c);
    return rc;
}

// Pumps the two reopened streams of test_reopen_keeps_unacked: T_RUN 3..5 and T_RUN2 1..3.
// Streams may come back in any order; each one's messages come in seq order, once.
static void t_pump_reopened(agent_spool_t *sp)
{
    t_sink_t *sink = calloc(1, sizeof *sink);
    assert_non_null(sink);
    assert_int_equal(agent_spool_pump(sp, T_T0, t_send, sink), 6);
    bool run_first = strstr(sink->sent[0], T_RUN) != NULL;
    size_t k = run_first ? 0 : 3;
    for (int64_t seq = 3; seq <= 5; seq++) {
        char *exp = t_text(T_RUN, 1, seq);
        assert_string_equal(sink->sent[k++], exp);
        free(exp);
    }
    k = run_first ? 3 : 0;
    for (int64_t seq = 1; seq <= 3; seq++) {
        char *exp = t_text(T_RUN2, 3, seq);
        assert_string_equal(sink->sent[k++], exp);
        free(exp);
    }
    assert_int_equal(agent_spool_pump(sp, T_T0 + 1, t_send, sink), 0); // none twice
    free(sink);
}

// Streams come back after a close with their positions, unacked messages byte-identical and in
// seq order; acknowledged rows are gone from the file.
static void test_reopen_keeps_unacked(void **state)
{
    t_ctx_t *c = *state;
    agent_spool_t *sp = t_open_ok(c);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 3, NULL), 0);
    t_append(sp, T_RUN, 1, 5, false);
    t_append(sp, T_RUN2, 3, 3, true);
    agent_spool_ack(sp, T_RUN, 1, 2);
    size_t bytes = agent_spool_bytes(sp);
    agent_spool_destroy(&sp);
    assert_int_equal(t_sql_int(c, "SELECT count(*) FROM message"), 6);
    assert_int_equal(t_sql_int(c, "SELECT min(seq) FROM message WHERE run = '" T_RUN "'"), 3);

    sp = t_open_ok(c);
    assert_int_equal(agent_spool_bytes(sp), bytes);
    jf_hello_run_t inv[AGENT_SPOOL_STREAMS_MAX];
    assert_int_equal(agent_spool_inventory(sp, inv, AGENT_SPOOL_STREAMS_MAX), 2);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 6);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN2, 3), 4);
    // The welcome's acked_seq: the coordinator has 2 of T_RUN and nothing of T_RUN2.
    agent_spool_rewind(sp, T_RUN, 1, 2);
    agent_spool_rewind(sp, T_RUN2, 3, 0);
    t_pump_reopened(sp);
    // The final message acknowledged: the stream leaves the file too.
    agent_spool_ack(sp, T_RUN2, 3, 3);
    assert_false(agent_spool_has(sp, T_RUN2, 3));
    t_append(sp, T_RUN, 1, 1, false); // appends continue at the reopened position
    agent_spool_destroy(&sp);
    assert_int_equal(t_sql_int(c, "SELECT count(*) FROM stream"), 1);
    assert_int_equal(t_sql_int(c, "SELECT count(*) FROM message"), 4);
    assert_int_equal(t_sql_int(c, "SELECT max(seq) FROM message"), 6);
}

// A stream whose every message was acknowledged but is not final keeps its position.
static void test_reopen_fully_acked_stream(void **state)
{
    t_ctx_t *c = *state;
    agent_spool_t *sp = t_open_ok(c);
    assert_int_equal(agent_spool_open(sp, T_RUN, 2, NULL), 0);
    t_append(sp, T_RUN, 2, 4, false);
    agent_spool_ack(sp, T_RUN, 2, 4);
    agent_spool_destroy(&sp);
    sp = t_open_ok(c);
    assert_int_equal(agent_spool_bytes(sp), 0);
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 2), 5);
    t_sink_t sink = {0};
    assert_int_equal(agent_spool_pump(sp, T_T0, t_send, &sink), 0);
    agent_spool_drop(sp, T_RUN, 2);
    agent_spool_destroy(&sp);
    sp = t_open_ok(c);
    jf_hello_run_t inv[1];
    assert_int_equal(agent_spool_inventory(sp, inv, 1), 0); // dropped: gone from the file
    agent_spool_destroy(&sp);
}

// A stream that was still producing when the agent stopped gets exactly one run.failed
// (crashed) after what it holds; finished streams are left alone.
static void test_end_orphans(void **state)
{
    t_ctx_t *c = *state;
    agent_spool_t *sp = t_open_ok(c);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 3, false);
    t_append(sp, T_RUN2, 1, 2, true);
    agent_spool_destroy(&sp);

    sp = t_open_ok(c);
    int64_t next_id = 40;
    assert_int_equal(agent_spool_end_orphans(sp, &next_id, NULL), 1);
    assert_int_equal(next_id, 41);
    assert_int_equal(agent_spool_end_orphans(sp, &next_id, NULL), 0); // once only
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 5);
    agent_spool_destroy(&sp);

    sp = t_open_ok(c);
    assert_int_equal(agent_spool_end_orphans(sp, &next_id, NULL), 0); // not again after a restart
    agent_spool_rewind(sp, T_RUN, 1, 3);
    agent_spool_rewind(sp, T_RUN2, 1, 2);
    t_sink_t sink = {0};
    assert_int_equal(agent_spool_pump(sp, T_T0, t_send, &sink), 1);
    jf_err_t err = {0};
    jf_msg_t msg = {0};
    const char *code = NULL;
    int64_t id = -1;
    if (jf_msg_decode(sink.sent[0], strlen(sink.sent[0]), JF_MSG_TO_COORD, JF_MSG_MAX_BYTES_COORD,
                      &msg, &code, &id, &err) != 0) {
        fail_msg("the crash report does not decode: %s: %s", err.msg, sink.sent[0]);
    }
    assert_int_equal(msg.type, JF_MSG_RUN_FAILED);
    assert_string_equal(json_string_value(json_object_get(msg.body, "reason")), "crashed");
    assert_int_equal(json_integer_value(json_object_get(msg.body, "seq")), 4);
    assert_string_equal(json_string_value(json_object_get(msg.body, "detail")),
                        AGENT_SPOOL_RESTART_DETAIL);
    assert_int_equal(msg.id, 40);
    jf_msg_fini(&msg);
    jf_hello_run_t inv[AGENT_SPOOL_STREAMS_MAX];
    size_t n = agent_spool_inventory(sp, inv, AGENT_SPOOL_STREAMS_MAX);
    assert_int_equal(n, 1); // T_RUN2 was acked up to its final message: closed
    assert_true(inv[0].finished);
    agent_spool_destroy(&sp);
}

// The trainer row of a stream: recorded, its mark moved only together with an appended message
// (one transaction), kept across a reopen, spared by agent_spool_end_orphans once kept, and
// gone with the stream when its final message is acknowledged.
static void test_trainer_row(void **state)
{
    t_ctx_t *c = *state;
    agent_spool_t *sp = t_open_ok(c);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    assert_int_equal(agent_spool_open(sp, T_RUN2, 1, NULL), 0);
    agent_spool_db_trainer_t t = {.pid = 4242, .start_ticks = 77, .out_path = "/x/trainer.jsonl",
                                  .spec = "{\"run\":1}", .mark = "m0"};
    jf_err_t err = {0};
    assert_int_equal(agent_spool_set_trainer(sp, T_RUN, 1, &t, &err), 0);
    assert_int_equal(agent_spool_set_trainer(sp, "rnotopen", 1, &t, &err), -EINVAL);
    assert_int_equal(agent_spool_set_mark(sp, T_RUN, 1, "m1"), 0);
    t_append(sp, T_RUN, 1, 2, false); // the first append takes m1, the second none
    assert_int_equal(agent_spool_set_mark(sp, T_RUN, 1, "m2"), 0); // pending, never appended
    // A stream without a trainer row stores its messages all the same (no mark to move).
    assert_int_equal(agent_spool_set_mark(sp, T_RUN2, 1, "mx"), 0);
    t_append(sp, T_RUN2, 1, 1, false);
    agent_spool_destroy(&sp);

    sp = t_open_ok(c);
    agent_spool_db_trainer_t got = {0};
    assert_int_equal(agent_spool_trainer(sp, T_RUN, 1, &got, &err), 0);
    assert_int_equal(got.pid, 4242);
    assert_int_equal(got.start_ticks, 77);
    assert_string_equal(got.out_path, "/x/trainer.jsonl");
    assert_string_equal(got.mark, "m1"); // m2 was never stored: no message went with it
    assert_null(got.power);
    agent_spool_db_trainer_fini(&got);
    assert_int_equal(agent_spool_trainer(sp, T_RUN2, 1, &got, &err), -ENOENT);
    agent_spool_keep(sp, T_RUN, 1);
    int64_t next_id = 1;
    assert_int_equal(agent_spool_end_orphans(sp, &next_id, NULL), 1); // T_RUN2 only
    assert_int_equal(agent_spool_next_seq(sp, T_RUN, 1), 3);
    t_append(sp, T_RUN, 1, 1, true);
    agent_spool_ack(sp, T_RUN, 1, 3);
    assert_int_equal(agent_spool_trainer(sp, T_RUN, 1, &got, &err), -ENOENT);
    agent_spool_destroy(&sp);
    assert_int_equal(t_sql_int(c, "SELECT count(*) FROM trainer"), 0);
}

// A spool of schema 1 (before the trainer table) is opened and upgraded in place: its streams
// have no trainer row, so an unfinished one is ended as crashed, as that agent would have.
static void test_schema1_upgraded(void **state)
{
    t_ctx_t *c = *state;
    t_sql_exec(c, "CREATE TABLE stream(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
                  " next_seq INTEGER NOT NULL, final INTEGER NOT NULL, PRIMARY KEY(run, attempt))"
                  " WITHOUT ROWID;"
                  "CREATE TABLE message(run TEXT NOT NULL, attempt INTEGER NOT NULL,"
                  " seq INTEGER NOT NULL, final INTEGER NOT NULL, body BLOB NOT NULL,"
                  " PRIMARY KEY(run, attempt, seq)) WITHOUT ROWID;"
                  "INSERT INTO stream VALUES('" T_RUN "', 1, 2, 0);"
                  "INSERT INTO message VALUES('" T_RUN "', 1, 1, 0, '{}');"
                  "PRAGMA user_version = 1;");
    agent_spool_t *sp = t_open_ok(c);
    agent_spool_db_trainer_t got = {0};
    assert_int_equal(agent_spool_trainer(sp, T_RUN, 1, &got, NULL), -ENOENT);
    int64_t next_id = 1;
    assert_int_equal(agent_spool_end_orphans(sp, &next_id, NULL), 1);
    agent_spool_destroy(&sp);
    assert_int_equal(t_sql_int(c, "PRAGMA user_version"), AGENT_SPOOL_DB_SCHEMA);
    assert_int_equal(t_sql_int(c, "SELECT count(*) FROM trainer"), 0);
}

static void t_expect_refused(const t_ctx_t *c, int code, const char *fragment)
{
    jf_err_t err = {0};
    agent_spool_t *sp = t_open(c, &err);
    if (sp || err.code != code || !strstr(err.msg, c->dir) || !strstr(err.msg, fragment)) {
        agent_spool_destroy(&sp);
        fail_msg("expected %d with '%s' and the path, got %d: '%s'", code, fragment, err.code,
                 err.msg);
    }
}

// A damaged file is refused with what to do, and left in place for the operator.
static void test_garbage_file_refused(void **state)
{
    t_ctx_t *c = *state;
    static const char garbage[] = "this is not a database, but 512 bytes of something else. "
                                  "................................................................"
                                  "................................................................"
                                  "................................................................"
                                  "................................................................"
                                  "................................................................"
                                  "...............................................................";
    t_write_file(c->path, garbage);
    t_expect_refused(c, -EIO, "move the file");
    t_expect_refused(c, -EIO, "not a database");
    struct stat st;
    assert_int_equal(stat(c->path, &st), 0);
    assert_int_equal((size_t)st.st_size, strlen(garbage)); // not replaced
}

static void test_foreign_database_refused(void **state)
{
    t_ctx_t *c = *state;
    t_sql_exec(c, "CREATE TABLE notes(x TEXT)");
    t_expect_refused(c, -EIO, "is not a spool of this agent");
}

static void test_newer_schema_refused(void **state)
{
    t_ctx_t *c = *state;
    t_sql_exec(c, "PRAGMA user_version = 99");
    t_expect_refused(c, -EIO, "schema 99");
}

// Rows that do not make a whole stream (a row deleted by hand) are refused, not skipped.
static void test_gap_refused(void **state)
{
    t_ctx_t *c = *state;
    agent_spool_t *sp = t_open_ok(c);
    assert_int_equal(agent_spool_open(sp, T_RUN, 1, NULL), 0);
    t_append(sp, T_RUN, 1, 4, false);
    agent_spool_destroy(&sp);
    t_sql_exec(c, "DELETE FROM message WHERE seq = 2");
    t_expect_refused(c, -EIO, "run " T_RUN " attempt 1: rows are not one consecutive stream");
    t_sql_exec(c, "DELETE FROM message WHERE seq = 1");
    t_sql_exec(c, "UPDATE stream SET next_seq = 9");
    t_expect_refused(c, -EIO, "the last row does not match");
    t_sql_exec(c, "DELETE FROM stream");
    t_expect_refused(c, -EIO, "2 rows belong to no stream");
}

static void test_second_agent_refused(void **state)
{
    t_ctx_t *c = *state;
    agent_spool_t *first = t_open_ok(c);
    t_expect_refused(c, -EBUSY, "in use by another process");
    agent_spool_destroy(&first);
    agent_spool_t *again = t_open_ok(c); // the lock went with the first
    agent_spool_destroy(&again);
}

static void test_unusable_paths_refused(void **state)
{
    t_ctx_t *c = *state;
    assert_int_equal(mkdir(c->path, 0700), 0); // spool.db is a directory
    t_expect_refused(c, -ENOENT, "cannot open it");
    assert_int_equal(rmdir(c->path), 0);
    char missing[160];
    (void)snprintf(missing, sizeof missing, "%s/no/such", c->dir);
    agent_spool_opts_t o = {.state_dir = missing, .max_bytes = 1};
    jf_err_t err = {0};
    assert_null(agent_spool_new(&o, &err));
    assert_int_equal(err.code, -ENOENT);
    assert_non_null(strstr(err.msg, missing));
    assert_non_null(strstr(err.msg, "--state-dir"));
    o = (agent_spool_opts_t){.state_dir = NULL, .max_bytes = 0};
    assert_null(agent_spool_new(&o, &err));
    assert_int_equal(err.code, -EINVAL);
    assert_non_null(strstr(err.msg, "max_bytes must be > 0, got 0"));
}

// --state-dir, --spool-max-bytes and --spool-in-memory: defaults, values and refusals.
static void test_options(void **state)
{
    (void)state;
    static const struct {
        const char *args[3];
        int code;
        const char *frag;      // in err.msg when code != 0
        const char *state_dir; // when code == 0
        int64_t max_bytes;
        bool in_memory;
    } rows[] = {
        {{NULL}, 0, NULL, AGENT_OPTIONS_STATE_DIR, AGENT_SPOOL_BYTES_MAX, false},
        {{"--state-dir", "/srv/jf"}, 0, NULL, "/srv/jf", AGENT_SPOOL_BYTES_MAX, false},
        {{"--spool-max-bytes", "1048576"}, 0, NULL, AGENT_OPTIONS_STATE_DIR, 1048576, false},
        {{"--spool-in-memory"}, 0, NULL, AGENT_OPTIONS_STATE_DIR, AGENT_SPOOL_BYTES_MAX, true},
        {{"--state-dir", "relative"},
         -EINVAL,
         "--state-dir 'relative': expected an absolute",
         NULL,
         0,
         false},
        {{"--spool-max-bytes", "0"}, -EINVAL, "--spool-max-bytes", NULL, 0, false},
        {{"--spool-max-bytes", "12MB"}, -EINVAL, "--spool-max-bytes", NULL, 0, false},
        {{"--spool-max-bytes", "-5"}, -EINVAL, "--spool-max-bytes", NULL, 0, false},
    };
    agent_options_t *o = malloc(sizeof *o);
    assert_non_null(o);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *argv[8] = {"jetfleet-agent", "--coordinator", "tcp://127.0.0.1:1", "--name", "nx-01"};
        int argc = 5;
        for (size_t k = 0; k < 3 && rows[i].args[k]; k++) {
            argv[argc++] = (char *)rows[i].args[k];
        }
        jf_err_t err = {0};
        optind = 0; // glibc: start a fresh scan
        opterr = 0;
        int rc = agent_options_parse(argc, argv, o, &err);
        if (rc != rows[i].code || (rc != 0 && !strstr(err.msg, rows[i].frag))) {
            fail_msg("row %zu: rc %d '%s'", i, rc, err.msg);
        }
        if (rc == 0) {
            assert_string_equal(o->state_dir, rows[i].state_dir);
            assert_int_equal(o->spool_max_bytes, rows[i].max_bytes);
            assert_int_equal(o->spool_in_memory, rows[i].in_memory);
        }
    }
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reopen_keeps_unacked, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_reopen_fully_acked_stream, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_trainer_row, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_schema1_upgraded, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_end_orphans, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_garbage_file_refused, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_foreign_database_refused, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_newer_schema_refused, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_gap_refused, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_second_agent_refused, t_setup, t_teardown),
        cmocka_unit_test_setup_teardown(test_unusable_paths_refused, t_setup, t_teardown),
        cmocka_unit_test(test_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
