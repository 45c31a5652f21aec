/* Importer of saved tegrastats logs (`jetfleet-agent --parse-tegrastats FILE`): each line through
 * agent_tegrastats_parse_line into one compact JSON sample per line (docs/telemetry.md). Reads
 * files, writes to the streams it is given; decides no exit code and does not log. */
#ifndef AGENT_IMPORT_H
#define AGENT_IMPORT_H

#include "jf_err.h"

#include <stddef.h>
#include <stdio.h>

typedef struct agent_import_opts {
    const char *path; // the log; opened unless `in` is set, and named in messages; borrowed
    FILE *in;         // NULL, or the already open log to read instead of path; borrowed
    FILE *out;        // receives one compact JSON sample per parsed line; borrowed
    FILE *diag;       // receives "PATH:LINENO: reason" per line that fails; borrowed
} agent_import_opts_t;

typedef struct agent_import_result {
    size_t n_lines;   // lines read, empty ones included
    size_t n_samples; // samples written to out
    size_t n_failed;  // lines reported to diag (malformed, too long, containing NUL bytes)
} agent_import_result_t;

// Reads the tegrastats log opts->path (or opts->in) line by line. Empty and blank lines are
// skipped. A line that does not parse, is longer than AGENT_TEGRASTATS_LINE_MAX bytes or holds a
// NUL byte gets one "PATH:LINENO: ..." line on opts->diag, and the import goes on. Samples carry
// no board_type: a tegrastats line does not name its board.
// Returns 0 when the whole log was read (check ret_result->n_failed), or a negative errno with err
// naming the path: -ENOENT/-EACCES/... when it cannot be opened, -EIO on a read or write error.
// *ret_result is written on success.
int agent_import_tegrastats(const agent_import_opts_t *opts, agent_import_result_t *ret_result,
                            jf_err_t *err);

#endif
