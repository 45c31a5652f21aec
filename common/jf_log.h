/* Logging front end and sinks (STYLE.md §6): stderr with timestamps, syslog, or an in-memory
 * capture that tests read. stdout is never a log sink. The configuration is process-global. */
#ifndef JF_LOG_H
#define JF_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum jf_log_level {
    JF_LOG_ERROR = 0,
    JF_LOG_WARN,
    JF_LOG_NOTICE,
    JF_LOG_INFO,
    JF_LOG_DEBUG,
} jf_log_level_t;

typedef enum jf_log_sink {
    JF_LOG_SINK_STDERR = 0,
    JF_LOG_SINK_SYSLOG,
    JF_LOG_SINK_CAPTURE,
} jf_log_sink_t;

// Chooses the sink, the lowest level written and the program name shown in each line.
// Call once at start-up, before any thread starts. ident is copied.
void jf_log_open(const char *ident, jf_log_sink_t sink, jf_log_level_t level);

// Releases the capture buffer and closes syslog. Safe to call more than once.
void jf_log_close(void);

// Parses "error|warn|notice|info|debug"; returns false for anything else.
bool jf_log_level_parse(const char *text, jf_log_level_t *ret_level);

void jf_log_write(jf_log_level_t level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define jf_log_error(...)  jf_log_write(JF_LOG_ERROR, __VA_ARGS__)
#define jf_log_warn(...)   jf_log_write(JF_LOG_WARN, __VA_ARGS__)
#define jf_log_notice(...) jf_log_write(JF_LOG_NOTICE, __VA_ARGS__)
#define jf_log_info(...)   jf_log_write(JF_LOG_INFO, __VA_ARGS__)
#define jf_log_debug(...)  jf_log_write(JF_LOG_DEBUG, __VA_ARGS__)

// With the capture sink: the text logged so far (lines joined by '\n'). Borrowed; valid until
// the next log call or jf_log_capture_reset. Empty string with other sinks.
const char *jf_log_capture(void);
void jf_log_capture_reset(void);

// Rate limiter for repeated failures: the first occurrence is logged, then at most one line per
// interval with the count of suppressed ones. Embed in a context object; zero-initialise.
typedef struct jf_log_ratelimit {
    int64_t interval_us; // minimum time between two lines; 0 means 10 s
    int64_t last_us;     // monotonic time of the last line written
    uint64_t suppressed; // occurrences not written since last_us
} jf_log_ratelimit_t;

// Returns true when the caller should log now; *ret_suppressed gets how many were skipped since
// the previous line (for "... (N more)").
bool jf_log_ratelimit_allow(jf_log_ratelimit_t *rl, uint64_t *ret_suppressed);

// Truncates a user-controlled string for logging: copies at most 200 bytes into buf (size
// >= 204), replacing control bytes with '?', and appends "..." if cut. Returns buf.
const char *jf_log_quote(const char *text, char *buf, size_t size);

#endif
