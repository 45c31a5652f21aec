/* tegrastats log importer: lines of a saved log -> agent_tegrastats_parse_line -> one compact
 * JSON sample per line. Bounded memory whatever the input: lines are read into a fixed buffer and
 * an overlong one is consumed and reported, not grown into. */
#include "agent_import.h"

#include "agent_tegrastats.h"

#include <assert.h>
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define S_BUF_SIZE (AGENT_TEGRASTATS_LINE_MAX + 2) // a line, a '\r' and the NUL

typedef enum s_line_status { S_LINE_EOF, S_LINE_OK, S_LINE_TOO_LONG, S_LINE_NUL } s_line_status_t;

// Reads one line into buf without its "\n" or "\r\n". A line longer than
// AGENT_TEGRASTATS_LINE_MAX is read to its end and reported, so one bad line costs only itself.
static s_line_status_t s_read_line(FILE *in, char buf[S_BUF_SIZE])
{
    size_t len = 0;
    bool nul = false;
    int ch = 0;
    while ((ch = getc(in)) != EOF && ch != '\n') {
        nul = nul || ch == '\0';
        if (len < S_BUF_SIZE - 1) {
            buf[len] = (char) ch;
        }
        len++;
    }
    if (ch == EOF && len == 0) {
        return S_LINE_EOF;
    }
    if (len >= S_BUF_SIZE) {
        return S_LINE_TOO_LONG;
    }
    buf[len] = '\0';
    if (len > 0 && buf[len - 1] == '\r') {
        buf[--len] = '\0';
    }
    if (len > AGENT_TEGRASTATS_LINE_MAX) {
        return S_LINE_TOO_LONG;
    }
    return nul ? S_LINE_NUL : S_LINE_OK;
}

static int s_write_sample(const agent_import_opts_t *o, const json_t *sample, jf_err_t *err)
{
    // Ten significant digits: a mean load needs no more, and %.17g shows binary noise.
    char *text = json_dumps(sample, JSON_COMPACT | JSON_REAL_PRECISION(10));
    if (!text) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory writing a sample", o->path);
    }
    bool failed = fputs(text, o->out) < 0 || fputc('\n', o->out) == EOF;
    int saved_errno = errno;
    free(text);
    return failed ? jf_err_set(err, -EIO, "%s: cannot write the samples: %s", o->path,
                               strerror(saved_errno))
                  : 0;
}

// Parses one line that was read and writes its sample, or its error on diag.
static int s_import_line(const agent_import_opts_t *o, s_line_status_t status, const char *line,
                         agent_import_result_t *r, jf_err_t *err)
{
    if (status == S_LINE_OK && line[strspn(line, " \t")] == '\0') {
        return 0; // an empty line carries no sample
    }
    jf_err_t line_err = {0};
    json_t *sample = json_object();
    int rc = !sample ? -ENOMEM
             : status == S_LINE_TOO_LONG
                 ? jf_err_set(&line_err, -EINVAL, "line is longer than %d bytes",
                              AGENT_TEGRASTATS_LINE_MAX)
             : status == S_LINE_NUL ? jf_err_set(&line_err, -EINVAL, "line holds a NUL byte")
                                    : agent_tegrastats_parse_line(line, sample, &line_err);
    if (rc == 0) {
        rc = s_write_sample(o, sample, err);
        r->n_samples += rc == 0;
    } else if (rc == -ENOMEM) {
        rc = jf_err_set(err, -ENOMEM, "%s:%zu: out of memory", o->path, r->n_lines);
    } else {
        r->n_failed++;
        rc = fprintf(o->diag, "%s:%zu: %s\n", o->path, r->n_lines, line_err.msg) < 0
                 ? jf_err_set(err, -EIO, "%s: cannot write a diagnostic", o->path)
                 : 0;
    }
    json_decref(sample);
    return rc;
}

static int s_import_stream(const agent_import_opts_t *o, FILE *in, agent_import_result_t *r,
                           jf_err_t *err)
{
    char buf[S_BUF_SIZE];
    int rc = 0;
    for (s_line_status_t st; rc == 0 && (st = s_read_line(in, buf)) != S_LINE_EOF;) {
        r->n_lines++;
        rc = s_import_line(o, st, buf, r, err);
    }
    if (rc == 0 && ferror(in)) {
        rc = jf_err_set(err, -EIO, "%s: read error after line %zu: %s", o->path, r->n_lines,
                        strerror(errno));
    }
    if (rc == 0 && fflush(o->out) != 0) {
        rc = jf_err_set(err, -EIO, "%s: cannot write the samples: %s", o->path, strerror(errno));
    }
    return rc;
}

int agent_import_tegrastats(const agent_import_opts_t *opts, agent_import_result_t *ret_result,
                            jf_err_t *err)
{
    assert(opts && opts->path && opts->out && opts->diag && ret_result);
    FILE *in = opts->in ? opts->in : fopen(opts->path, "r");
    if (!in) {
        int saved_errno = errno;
        return jf_err_set(err, -saved_errno, "%s: cannot open: %s", opts->path,
                          strerror(saved_errno));
    }
    agent_import_result_t r = {0};
    int rc = s_import_stream(opts, in, &r, err);
    if (!opts->in) {
        (void) fclose(in); // opened read-only: nothing to lose on close
    }
    if (rc == 0) {
        *ret_result = r;
    }
    return rc;
}
