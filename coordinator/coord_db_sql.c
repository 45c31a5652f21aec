/* The SQLite-to-PostgreSQL statement rewriter (coord_db_sql.h says what it rewrites and what
 * it refuses). Tokens first, so that literals, quoted identifiers and comments are never
 * touched; then one pass over the tokens with a little lookahead. */
#include "coord_db_sql.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum s_kind {
    S_SPACE, // whitespace and comments
    S_WORD,  // keyword or bare identifier
    S_NUMBER,
    S_STRING, // '...'
    S_QIDENT, // "..."
    S_PARAM,  // ? or ?N
    S_PUNCT,
    S_BAD, // a construct the rewriter refuses at the tokenizer level
} s_kind_t;

typedef struct s_tok {
    s_kind_t kind;
    size_t off; // bytes from the statement's start
    size_t len;
} s_tok_t;

// Scans a quoted run starting at p (p[0] is the quote; a doubled quote is one character).
// Returns its length, or 0 when it is not terminated.
static size_t s_scan_quoted(const char *p, const char *end)
{
    for (const char *q = p + 1; q < end; q++) {
        if (*q == *p) {
            if (q + 1 < end && q[1] == *p) {
                q++;
                continue;
            }
            return (size_t) (q + 1 - p);
        }
    }
    return 0;
}

static size_t s_scan_comment(const char *p, const char *end)
{
    if (p[0] == '-') {
        const char *nl = memchr(p, '\n', (size_t) (end - p));
        return nl ? (size_t) (nl + 1 - p) : (size_t) (end - p);
    }
    for (const char *q = p + 2; q + 1 < end; q++) {
        if (q[0] == '*' && q[1] == '/') {
            return (size_t) (q + 2 - p);
        }
    }
    return 0;
}

static bool s_is_word_char(char c)
{
    return isalnum((unsigned char) c) || c == '_' || c == '$';
}

static size_t s_scan_run(const char *p, const char *end, bool number)
{
    const char *q = p + 1;
    while (q < end && (s_is_word_char(*q) || (number && *q == '.') ||
                       (number && (*q == '+' || *q == '-') && (q[-1] == 'e' || q[-1] == 'E')))) {
        q++;
    }
    return (size_t) (q - p);
}

static size_t s_scan_punct(const char *p, const char *end)
{
    static const char *const multi[] = {"->>", "->", "==", "!=", "<>",
                                        "<=",  ">=", "||", "<<", ">>"};
    for (size_t i = 0; i < sizeof multi / sizeof multi[0]; i++) {
        size_t n = strlen(multi[i]);
        if ((size_t) (end - p) >= n && memcmp(p, multi[i], n) == 0) {
            return n;
        }
    }
    return 1;
}

// Scans one token at p (p < end): its kind and length (at least 1).
static size_t s_scan(const char *p, const char *end, s_kind_t *kind)
{
    unsigned char c = (unsigned char) *p;
    bool two = p + 1 < end;
    size_t n = 0;
    if (isspace(c)) {
        *kind = S_SPACE;
        for (n = 1; p + n < end && isspace((unsigned char) p[n]); n++) {
        }
        return n;
    }
    if ((c == '-' && two && p[1] == '-') || (c == '/' && two && p[1] == '*')) {
        n = s_scan_comment(p, end);
        *kind = n ? S_SPACE : S_BAD;
        return n ? n : (size_t) (end - p);
    }
    if (c == '\'' || c == '"') {
        n = s_scan_quoted(p, end);
        *kind = n ? (c == '\'' ? S_STRING : S_QIDENT) : S_BAD;
        return n ? n : (size_t) (end - p);
    }
    if (c == '?') {
        *kind = S_PARAM;
        for (n = 1; p + n < end && isdigit((unsigned char) p[n]); n++) {
        }
        return n;
    }
    if (c == '[' || c == '`' ||
        ((c == ':' || c == '@' || c == '$') && two && s_is_word_char(p[1]))) {
        *kind = S_BAD;
        return c == '[' || c == '`' ? 1 : s_scan_run(p, end, false);
    }
    if (isalpha(c) || c == '_') {
        *kind = S_WORD;
        return s_scan_run(p, end, false);
    }
    if (isdigit(c) || (c == '.' && two && isdigit((unsigned char) p[1]))) {
        *kind = S_NUMBER;
        return s_scan_run(p, end, true);
    }
    *kind = S_PUNCT;
    return s_scan_punct(p, end);
}

typedef struct s_buf {
    char *p;
    size_t len;
    size_t cap;
    bool oom;
} s_buf_t;

static void s_put(s_buf_t *b, const char *s, size_t n)
{
    if (b->oom) {
        return;
    }
    if (b->len + n + 1 > b->cap) {
        size_t cap = (b->len + n + 1) * 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = '\0';
}

static void s_puts(s_buf_t *b, const char *s)
{
    s_put(b, s, strlen(s));
}

typedef struct s_rw {
    const char *sql;
    size_t sql_len;
    s_tok_t *toks; // owned
    size_t n;
    s_buf_t out;
    int max_param;
    bool table_ddl;      // CREATE TABLE or ALTER TABLE: column types are rewritten
    bool pending_ignore; // INSERT OR IGNORE seen: ON CONFLICT DO NOTHING still to be written
    size_t ignore_at;    // the token the ON CONFLICT clause goes before (the final ';', or n)
    int depth;           // parentheses
    jf_err_t *err;
} s_rw_t;

static int s_tokenize(s_rw_t *rw)
{
    size_t cap = 16;
    rw->toks = malloc(cap * sizeof *rw->toks);
    for (size_t off = 0; rw->toks && off < rw->sql_len;) {
        if (rw->n == cap) {
            cap *= 2;
            s_tok_t *t = realloc(rw->toks, cap * sizeof *t);
            if (!t) {
                return -ENOMEM;
            }
            rw->toks = t;
        }
        s_tok_t *t = &rw->toks[rw->n++];
        t->off = off;
        t->len = s_scan(rw->sql + off, rw->sql + rw->sql_len, &t->kind);
        off += t->len;
    }
    return rw->toks ? 0 : -ENOMEM;
}

// The index of the first token after i that is not space (n when none).
static size_t s_next(const s_rw_t *rw, size_t i)
{
    for (i++; i < rw->n && rw->toks[i].kind == S_SPACE; i++) {
    }
    return i;
}

// The index of the last token before i that is not space (SIZE_MAX when none).
static size_t s_prev(const s_rw_t *rw, size_t i)
{
    while (i-- > 0) {
        if (rw->toks[i].kind != S_SPACE) {
            return i;
        }
    }
    return SIZE_MAX;
}

static bool s_is(const s_rw_t *rw, size_t i, const char *word)
{
    if (i >= rw->n) {
        return false;
    }
    const s_tok_t *t = &rw->toks[i];
    return (t->kind == S_WORD || t->kind == S_PUNCT) && t->len == strlen(word) &&
           strncasecmp(rw->sql + t->off, word, t->len) == 0;
}

static int s_refuse(s_rw_t *rw, size_t i, const char *what)
{
    size_t off = i < rw->n ? rw->toks[i].off : rw->sql_len;
    return jf_err_set(rw->err, -EINVAL,
                      "SQL for PostgreSQL: cannot rewrite %s at byte %zu of '%.100s'", what, off,
                      rw->sql);
}

typedef struct s_banned {
    const char *word;
    bool call; // refused only when followed by '('
    const char *what;
} s_banned_t;

static const s_banned_t s_banned[] = {
    {"PRAGMA", false, "PRAGMA (SQLite only)"},
    {"ATTACH", false, "ATTACH (SQLite only)"},
    {"DETACH", false, "DETACH (SQLite only)"},
    {"ROWID", false, "rowid (PostgreSQL has no rowid)"},
    {"_ROWID_", false, "rowid (PostgreSQL has no rowid)"},
    {"OID", false, "rowid (PostgreSQL has no rowid)"},
    {"AUTOINCREMENT", false, "AUTOINCREMENT"},
    {"SQLITE_SCHEMA", false, "sqlite_schema (SQLite's catalog)"},
    {"SQLITE_MASTER", false, "sqlite_master (SQLite's catalog)"},
    {"SQLITE_SEQUENCE", false, "sqlite_sequence (SQLite's catalog)"},
    {"GLOB", false, "GLOB"},
    {"REGEXP", false, "REGEXP"},
    {"COLLATE", false, "COLLATE (collation names differ)"},
    {"LAST_INSERT_ROWID", true, "last_insert_rowid() (use RETURNING)"},
    {"RANDOM", true, "random() (an integer in SQLite, a fraction in PostgreSQL)"},
    {"STRFTIME", true, "strftime()"},
    {"JULIANDAY", true, "julianday()"},
    {"DATETIME", true, "datetime()"},
    {"UNIXEPOCH", true, "unixepoch()"},
    {"IFNULL", true, "ifnull() (use coalesce)"},
    {"IIF", true, "iif() (use CASE)"},
    {"INSTR", true, "instr()"},
    {"PRINTF", true, "printf()"},
    {"TYPEOF", true, "typeof()"},
    {"ZEROBLOB", true, "zeroblob()"},
    {"RANDOMBLOB", true, "randomblob()"},
};

static int s_check_banned(s_rw_t *rw, size_t i)
{
    for (size_t b = 0; b < sizeof s_banned / sizeof s_banned[0]; b++) {
        if (s_is(rw, i, s_banned[b].word) && (!s_banned[b].call || s_is(rw, s_next(rw, i), "("))) {
            return s_refuse(rw, i, s_banned[b].what);
        }
    }
    return 0;
}

static int s_param(s_rw_t *rw, size_t i)
{
    const s_tok_t *t = &rw->toks[i];
    long n = 0;
    if (t->len == 1) {
        n = rw->max_param + 1;
    }
    for (size_t k = 1; k < t->len && n <= COORD_DB_SQL_MAX_PARAM; k++) {
        n = n * 10 + (rw->sql[t->off + k] - '0');
    }
    if (n < 1 || n > COORD_DB_SQL_MAX_PARAM) {
        return s_refuse(rw, i, "a parameter number outside 1..32766");
    }
    rw->max_param = n > rw->max_param ? (int) n : rw->max_param;
    char text[16] = {0};
    int len = 0;
    for (long v = n; v > 0; v /= 10) {
        text[len++] = (char) ('0' + v % 10);
    }
    s_puts(&rw->out, "$");
    while (len > 0) {
        s_put(&rw->out, &text[--len], 1);
    }
    return 0;
}

// True when word token i stands where a column's type does: after the column's name in a
// CREATE/ALTER TABLE column definition, or in CAST(x AS type).
static bool s_in_type_position(const s_rw_t *rw, size_t i)
{
    size_t p = s_prev(rw, i);
    if (p != SIZE_MAX && s_is(rw, p, "AS") && s_is(rw, s_next(rw, i), ")")) {
        return true;
    }
    if (!rw->table_ddl || p == SIZE_MAX ||
        (rw->toks[p].kind != S_WORD && rw->toks[p].kind != S_QIDENT)) {
        return false;
    }
    size_t pp = s_prev(rw, p);
    return pp != SIZE_MAX && (s_is(rw, pp, "(") || s_is(rw, pp, ",") || s_is(rw, pp, "COLUMN") ||
                              s_is(rw, pp, "ADD"));
}

// Rewrites a type word in type position; *ret_next is the last token consumed.
static bool s_type(s_rw_t *rw, size_t i, size_t *ret_last)
{
    *ret_last = i;
    if (!s_in_type_position(rw, i)) {
        return false;
    }
    if (s_is(rw, i, "INTEGER")) {
        size_t pk = s_next(rw, i), key = s_next(rw, pk);
        if (rw->table_ddl && s_is(rw, pk, "PRIMARY") && s_is(rw, key, "KEY") &&
            !s_is(rw, s_next(rw, key), "(")) {
            s_puts(&rw->out, "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY");
            *ret_last = key;
            return true;
        }
        s_puts(&rw->out, "BIGINT");
        return true;
    }
    if (s_is(rw, i, "REAL")) {
        s_puts(&rw->out, "DOUBLE PRECISION");
        return true;
    }
    if (s_is(rw, i, "BLOB")) {
        s_puts(&rw->out, "BYTEA");
        return true;
    }
    return false;
}

// True when the join whose JOIN keyword is token i has an ON clause: an ON at the same depth
// before the next join, clause or the end of the enclosing parentheses.
static bool s_join_has_on(const s_rw_t *rw, size_t i)
{
    static const char *const stops[] = {"JOIN",  "CROSS", "LEFT",  "INNER", "NATURAL", "WHERE",
                                        "GROUP", "ORDER", "LIMIT", "UNION", ",",       ";"};
    int depth = 0;
    for (i = s_next(rw, i); i < rw->n; i = s_next(rw, i)) {
        depth += s_is(rw, i, "(") ? 1 : s_is(rw, i, ")") ? -1 : 0;
        if (depth < 0) {
            return false;
        }
        if (depth > 0) {
            continue;
        }
        if (s_is(rw, i, "ON")) {
            return true;
        }
        for (size_t k = 0; k < sizeof stops / sizeof stops[0]; k++) {
            if (s_is(rw, i, stops[k])) {
                return false;
            }
        }
    }
    return false;
}

// INSERT OR <x>, BEGIN <mode>, WITHOUT ROWID, REPLACE INTO, CROSS JOIN ... ON: *ret_last is the
// last token used.
static int s_statement_word(s_rw_t *rw, size_t i, size_t *ret_last, bool *ret_done)
{
    size_t a = s_next(rw, i), b = s_next(rw, a);
    *ret_done = true;
    *ret_last = i;
    if (s_is(rw, i, "INSERT") && s_is(rw, a, "OR")) {
        if (!s_is(rw, b, "IGNORE")) {
            char what[64] = {0};
            int n = b < rw->n ? (int) rw->toks[b].len : 0;
            (void) snprintf(what, sizeof what, "INSERT OR %.*s (write ON CONFLICT)",
                            n > 20 ? 20 : n, b < rw->n ? rw->sql + rw->toks[b].off : "");
            return s_refuse(rw, b, what);
        }
        s_put(&rw->out, rw->sql + rw->toks[i].off, rw->toks[i].len);
        rw->pending_ignore = true;
        *ret_last = b;
        return 0;
    }
    if (s_is(rw, i, "BEGIN") &&
        (s_is(rw, a, "IMMEDIATE") || s_is(rw, a, "EXCLUSIVE") || s_is(rw, a, "DEFERRED"))) {
        s_puts(&rw->out, "BEGIN");
        *ret_last = a;
        return 0;
    }
    if (s_is(rw, i, "WITHOUT") && s_is(rw, a, "ROWID")) {
        *ret_last = a;
        return 0;
    }
    // SQLite's CROSS JOIN with an ON clause is an inner join whose table order the planner
    // keeps; PostgreSQL allows no ON after CROSS JOIN.
    if (s_is(rw, i, "CROSS") && s_is(rw, a, "JOIN") && s_join_has_on(rw, a)) {
        s_puts(&rw->out, "JOIN");
        *ret_last = a;
        return 0;
    }
    if (s_is(rw, i, "REPLACE") && s_prev(rw, i) == SIZE_MAX) {
        return s_refuse(rw, i, "REPLACE INTO (write ON CONFLICT)");
    }
    if (rw->pending_ignore && s_is(rw, i, "ON") && s_is(rw, a, "CONFLICT")) {
        return s_refuse(rw, i, "INSERT OR IGNORE with its own ON CONFLICT clause");
    }
    *ret_done = false;
    return 0;
}

// True when token i ends the statement (the end, or a final ';').
static bool s_at_end(const s_rw_t *rw, size_t i)
{
    return i >= rw->n || (s_is(rw, i, ";") && s_next(rw, i) >= rw->n);
}

// The two PRAGMAs the store reads and writes on every back end, as statements on the table and
// snapshot of coord_db_pg's compat script (coord_db_sql.h). *ret_done: i was one of them.
static int s_pragma(s_rw_t *rw, size_t i, size_t *ret_last, bool *ret_done)
{
    size_t a = s_next(rw, i), b = s_next(rw, a), c = s_next(rw, b);
    *ret_done = true;
    if (s_is(rw, a, "USER_VERSION") && s_at_end(rw, b)) {
        s_puts(&rw->out, COORD_DB_SQL_USER_VERSION_GET);
        *ret_last = a;
        return 0;
    }
    if (s_is(rw, a, "USER_VERSION") && s_is(rw, b, "=") && c < rw->n &&
        rw->toks[c].kind == S_NUMBER && s_at_end(rw, s_next(rw, c)) &&
        strspn(rw->sql + rw->toks[c].off, "0123456789") == rw->toks[c].len) {
        s_puts(&rw->out, COORD_DB_SQL_USER_VERSION_SET_HEAD);
        s_put(&rw->out, rw->sql + rw->toks[c].off, rw->toks[c].len);
        s_puts(&rw->out, COORD_DB_SQL_USER_VERSION_SET_TAIL);
        *ret_last = c;
        return 0;
    }
    if (s_is(rw, a, "DATA_VERSION") && s_at_end(rw, b)) {
        s_puts(&rw->out, COORD_DB_SQL_DATA_VERSION);
        *ret_last = a;
        return 0;
    }
    *ret_done = false;
    return 0;
}

static int s_word(s_rw_t *rw, size_t i, size_t *ret_last)
{
    bool done = false;
    if (s_is(rw, i, "PRAGMA") && s_prev(rw, i) == SIZE_MAX) {
        int rc = s_pragma(rw, i, ret_last, &done);
        if (rc != 0 || done) {
            return rc;
        }
    }
    int rc = s_check_banned(rw, i);
    rc = rc ? rc : s_statement_word(rw, i, ret_last, &done);
    if (rc != 0 || done) {
        return rc;
    }
    if (rw->pending_ignore && rw->depth == 0 && s_is(rw, i, "RETURNING")) {
        s_puts(&rw->out, "ON CONFLICT DO NOTHING ");
        rw->pending_ignore = false;
    }
    if (!s_type(rw, i, ret_last)) {
        s_put(&rw->out, rw->sql + rw->toks[i].off, rw->toks[i].len);
    }
    return 0;
}

static int s_punct(s_rw_t *rw, size_t i)
{
    if (s_is(rw, i, "==")) {
        return s_refuse(rw, i, "the == operator (write =)");
    }
    if (s_is(rw, i, "->") || s_is(rw, i, "->>")) {
        return s_refuse(rw, i, "the -> and ->> JSON operators (use json_extract)");
    }
    rw->depth += s_is(rw, i, "(") ? 1 : s_is(rw, i, ")") ? -1 : 0;
    s_put(&rw->out, rw->sql + rw->toks[i].off, rw->toks[i].len);
    return 0;
}

static int s_token(s_rw_t *rw, size_t i, size_t *ret_last)
{
    const s_tok_t *t = &rw->toks[i];
    *ret_last = i;
    if (rw->pending_ignore && i == rw->ignore_at) {
        s_puts(&rw->out, " ON CONFLICT DO NOTHING");
        rw->pending_ignore = false;
    }
    switch (t->kind) {
    case S_BAD:
        return s_refuse(rw, i,
                        "an unterminated literal or comment, a [bracketed] or `backquoted` "
                        "identifier, or a named parameter");
    case S_PARAM:
        return s_param(rw, i);
    case S_WORD:
        return s_word(rw, i, ret_last);
    case S_PUNCT:
        return s_punct(rw, i);
    default:
        s_put(&rw->out, rw->sql + t->off, t->len);
        return 0;
    }
}

static void s_classify(s_rw_t *rw)
{
    size_t first = s_next(rw, SIZE_MAX);
    size_t second = s_next(rw, first);
    rw->table_ddl = (s_is(rw, first, "CREATE") || s_is(rw, first, "ALTER")) &&
                    (s_is(rw, second, "TABLE") ||
                     ((s_is(rw, second, "TEMP") || s_is(rw, second, "TEMPORARY")) &&
                      s_is(rw, s_next(rw, second), "TABLE")));
    size_t last = s_prev(rw, rw->n);
    rw->ignore_at = last != SIZE_MAX && s_is(rw, last, ";") ? last : rw->n;
}

int coord_db_sql_to_pg(const char *sql, size_t len, char **ret_pg, int *ret_n_params, jf_err_t *err)
{
    s_rw_t rw = {.sql = sql, .sql_len = len, .err = err};
    int rc = s_tokenize(&rw);
    if (rc == 0) {
        s_classify(&rw);
    }
    for (size_t i = 0; rc == 0 && i < rw.n; i++) {
        rc = s_token(&rw, i, &i);
    }
    if (rc == 0 && rw.pending_ignore) {
        s_puts(&rw.out, " ON CONFLICT DO NOTHING");
    }
    s_put(&rw.out, "", 0); // an empty statement still gets a buffer
    free(rw.toks);
    if (rc == 0 && rw.out.oom) {
        rc = jf_err_set(err, -ENOMEM, "SQL for PostgreSQL: out of memory");
    }
    if (rc != 0) {
        free(rw.out.p);
        return rc == -ENOMEM ? jf_err_set(err, rc, "SQL for PostgreSQL: out of memory") : rc;
    }
    *ret_pg = rw.out.p;
    *ret_n_params = rw.max_param;
    return 0;
}

size_t coord_db_sql_statement_len(const char *script)
{
    const char *end = script + strlen(script);
    for (const char *p = script; p < end;) {
        s_kind_t kind = S_SPACE;
        size_t n = s_scan(p, end, &kind);
        p += n;
        if (kind == S_PUNCT && p[-1] == ';' && n == 1) {
            return (size_t) (p - script);
        }
    }
    return (size_t) (end - script);
}

bool coord_db_sql_is_blank(const char *sql, size_t len)
{
    for (const char *p = sql, *end = sql + len; p < end;) {
        s_kind_t kind = S_SPACE;
        size_t n = s_scan(p, end, &kind);
        if (kind != S_SPACE && !(kind == S_PUNCT && *p == ';')) {
            return false;
        }
        p += n;
    }
    return true;
}
