/* Logging sinks. The only global mutable state allowed besides the signal flag (STYLE.md §12). */
#include "jf_log.h"

#include "jf_units.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#define JF_LOG_CAPTURE_MAX (1024 * 1024)
#define JF_LOG_LINE_MAX    1024
#define JF_LOG_QUOTE_MAX   200

static struct {
    char ident[64];
    jf_log_sink_t sink;
    jf_log_level_t level;
    char *capture;
    size_t capture_len;
} s_log = {.ident = "jetfleet", .sink = JF_LOG_SINK_STDERR, .level = JF_LOG_NOTICE};

static const char *const s_level_names[] = {"error", "warn", "notice", "info", "debug"};
static const int s_syslog_prio[] = {LOG_ERR, LOG_WARNING, LOG_NOTICE, LOG_INFO, LOG_DEBUG};

void jf_log_open(const char *ident, jf_log_sink_t sink, jf_log_level_t level)
{
    (void) snprintf(s_log.ident, sizeof s_log.ident, "%s", ident ? ident : "jetfleet");
    s_log.sink = sink;
    s_log.level = level;
    if (sink == JF_LOG_SINK_SYSLOG) {
        openlog(s_log.ident, LOG_PID, LOG_DAEMON);
    }
}

void jf_log_close(void)
{
    if (s_log.sink == JF_LOG_SINK_SYSLOG) {
        closelog();
    }
    free(s_log.capture);
    s_log.capture = NULL;
    s_log.capture_len = 0;
    s_log.sink = JF_LOG_SINK_STDERR;
}

bool jf_log_level_parse(const char *text, jf_log_level_t *ret_level)
{
    for (size_t i = 0; text && i < sizeof s_level_names / sizeof s_level_names[0]; i++) {
        if (strcmp(text, s_level_names[i]) == 0) {
            *ret_level = (jf_log_level_t) i;
            return true;
        }
    }
    return false;
}

static void s_capture_append(const char *line)
{
    size_t n = strlen(line);
    if (s_log.capture_len + n + 2 > JF_LOG_CAPTURE_MAX) {
        return; // a test that logs a megabyte has bigger problems; keep the start
    }
    char *grown = realloc(s_log.capture, s_log.capture_len + n + 2);
    if (!grown) {
        return;
    }
    s_log.capture = grown;
    memcpy(s_log.capture + s_log.capture_len, line, n);
    s_log.capture_len += n;
    s_log.capture[s_log.capture_len++] = '\n';
    s_log.capture[s_log.capture_len] = '\0';
}

static void s_stderr_write(jf_log_level_t level, const char *text)
{
    struct timespec ts = {0};
    (void) clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm = {0};
    (void) localtime_r(&ts.tv_sec, &tm);
    char stamp[32] = {0};
    (void) strftime(stamp, sizeof stamp, "%Y-%m-%d %H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ld %s %s: %s\n", stamp, ts.tv_nsec / 1000000L, s_log.ident,
            s_level_names[level], text);
}

void jf_log_write(jf_log_level_t level, const char *fmt, ...)
{
    if (level > s_log.level) {
        return;
    }
    char text[JF_LOG_LINE_MAX] = {0};
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(text, sizeof text, fmt, ap); // long lines are cut, by design
    va_end(ap);
    switch (s_log.sink) {
    case JF_LOG_SINK_SYSLOG:
        syslog(s_syslog_prio[level], "%s", text);
        break;
    case JF_LOG_SINK_CAPTURE: {
        char line[JF_LOG_LINE_MAX + 16] = {0};
        (void) snprintf(line, sizeof line, "%s: %s", s_level_names[level], text);
        s_capture_append(line);
        break;
    }
    case JF_LOG_SINK_STDERR:
    default:
        s_stderr_write(level, text);
        break;
    }
}

const char *jf_log_capture(void)
{
    return s_log.capture ? s_log.capture : "";
}

void jf_log_capture_reset(void)
{
    free(s_log.capture);
    s_log.capture = NULL;
    s_log.capture_len = 0;
}

bool jf_log_ratelimit_allow(jf_log_ratelimit_t *rl, uint64_t *ret_suppressed)
{
    int64_t now_us = jf_clock_mono_us();
    int64_t interval_us = rl->interval_us > 0 ? rl->interval_us : 10 * JF_US_PER_S;
    if (rl->last_us != 0 && now_us - rl->last_us < interval_us) {
        rl->suppressed++;
        return false;
    }
    if (ret_suppressed) {
        *ret_suppressed = rl->suppressed;
    }
    rl->suppressed = 0;
    rl->last_us = now_us;
    return true;
}

const char *jf_log_quote(const char *text, char *buf, size_t size)
{
    if (!buf || size < 8) {
        return "";
    }
    size_t limit = size - 4 < JF_LOG_QUOTE_MAX ? size - 4 : JF_LOG_QUOTE_MAX;
    size_t i = 0;
    for (; text && text[i] && i < limit; i++) {
        unsigned char c = (unsigned char) text[i];
        buf[i] = (c < 0x20 || c == 0x7f) ? '?' : (char) c;
    }
    buf[i] = '\0';
    if (text && text[i]) {
        memcpy(buf + i, "...", 4);
    }
    return buf;
}
