/* Token buckets and violation history per peer (coord_limits.h, docs/protocol.md §1.9). The
 * buckets refill continuously at their rate up to their depth; a message that does not pass takes
 * nothing, so a flood cannot push an honest peer's next message further out. */
#include "coord_limits.h"

#include "jf_units.h"

#include <string.h>

static const char *const s_verdict_names[COORD_LIMITS_VERDICT_COUNT] = {
    [COORD_LIMITS_PASS] = "passed",
    [COORD_LIMITS_OVER_RATE] = "over_rate",
    [COORD_LIMITS_OVER_BYTES] = "over_bytes",
    [COORD_LIMITS_OVER_SIZE] = "over_size",
    [COORD_LIMITS_INVALID] = "invalid",
    [COORD_LIMITS_OTHER_BOARD_RUN] = "other_board_run",
};

const char *coord_limits_verdict_name(coord_limits_verdict_t v)
{
    return v < COORD_LIMITS_VERDICT_COUNT ? s_verdict_names[v] : "?";
}

static void s_refill(coord_limits_bucket_t *b, int64_t per_s, int64_t depth, int64_t now_us)
{
    if (now_us > b->last_us) {
        b->tokens += (double) per_s * (double) (now_us - b->last_us) / (double) JF_US_PER_S;
        b->last_us = now_us;
    }
    if (b->tokens > (double) depth) {
        b->tokens = (double) depth;
    }
}

void coord_limits_peer_init(coord_limits_peer_t *p, const jf_limits_t *cfg, int64_t now_us)
{
    *p = (coord_limits_peer_t){
        .msgs = {.tokens = (double) cfg->message_burst, .last_us = now_us},
        .bytes = {.tokens = (double) cfg->byte_burst, .last_us = now_us},
        .peak_start_us = now_us,
    };
}

static coord_limits_verdict_t s_violation(coord_limits_peer_t *p, coord_limits_verdict_t v,
                                          int64_t now_us)
{
    p->violation_us[p->n_violations % JF_LIMITS_VIOLATIONS_MAX] = now_us;
    p->n_violations++;
    p->dropped[v]++;
    p->limited = true;
    return v;
}

void coord_limits_peer_refused(coord_limits_peer_t *p, coord_limits_verdict_t v, int64_t now_us)
{
    if (v != COORD_LIMITS_INVALID && v != COORD_LIMITS_OTHER_BOARD_RUN) {
        return;
    }
    bool limited = p->limited;
    (void) s_violation(p, v, now_us);
    p->limited = limited;
}

coord_limits_class_t coord_limits_class_of(jf_msg_type_t type)
{
    return type == JF_MSG_RUN_PROGRESS || type == JF_MSG_TELEMETRY || type == JF_MSG_RUN_WEIGHTS
               ? COORD_LIMITS_STREAM
               : COORD_LIMITS_OTHER;
}

int64_t coord_limits_max_bytes(const jf_limits_t *cfg, coord_limits_class_t cls)
{
    return cls == COORD_LIMITS_STREAM ? cfg->max_stream_bytes : cfg->max_other_bytes;
}

coord_limits_verdict_t coord_limits_peer_admit(coord_limits_peer_t *p, const jf_limits_t *cfg,
                                               size_t size_bytes, int64_t now_us)
{
    int64_t size = (int64_t) size_bytes;
    int64_t largest =
        cfg->max_stream_bytes > cfg->max_other_bytes ? cfg->max_stream_bytes : cfg->max_other_bytes;
    if (size > largest) {
        return s_violation(p, COORD_LIMITS_OVER_SIZE, now_us);
    }
    s_refill(&p->msgs, cfg->messages_per_s, cfg->message_burst, now_us);
    s_refill(&p->bytes, cfg->bytes_per_s, cfg->byte_burst, now_us);
    if (p->msgs.tokens < 1.0) {
        return s_violation(p, COORD_LIMITS_OVER_RATE, now_us);
    }
    if (p->bytes.tokens < (double) size) {
        return s_violation(p, COORD_LIMITS_OVER_BYTES, now_us);
    }
    p->msgs.tokens -= 1.0;
    p->bytes.tokens -= (double) size;
    return COORD_LIMITS_PASS;
}

// The per-second peaks: a window that ended is closed before this message is counted.
static void s_count_figures(coord_limits_peer_t *p, coord_limits_class_t cls, int64_t size,
                            int64_t now_us)
{
    if (now_us - p->peak_start_us >= COORD_LIMITS_PEAK_WINDOW_US) {
        p->peak_start_us = now_us;
        p->window_msgs = 0;
        p->window_bytes = 0;
    }
    p->window_msgs++;
    p->window_bytes += size;
    p->peak_msgs_per_s = p->window_msgs > p->peak_msgs_per_s ? p->window_msgs : p->peak_msgs_per_s;
    p->peak_bytes_per_s =
        p->window_bytes > p->peak_bytes_per_s ? p->window_bytes : p->peak_bytes_per_s;
    p->largest_bytes[cls] = size > p->largest_bytes[cls] ? size : p->largest_bytes[cls];
}

coord_limits_verdict_t coord_limits_peer_check_type(coord_limits_peer_t *p, const jf_limits_t *cfg,
                                                    jf_msg_type_t type, size_t size_bytes,
                                                    int64_t now_us)
{
    coord_limits_class_t cls = coord_limits_class_of(type);
    if ((int64_t) size_bytes > coord_limits_max_bytes(cfg, cls)) {
        return s_violation(p, COORD_LIMITS_OVER_SIZE, now_us);
    }
    p->passed++;
    p->limited = false;
    s_count_figures(p, cls, (int64_t) size_bytes, now_us);
    return COORD_LIMITS_PASS;
}

// Without CURVE every board's new connection is anonymous until its hello is welcomed, and after a
// coordinator restart the whole fleet's are at once: a hello and what was in flight, 3.1 messages
// per board at 1,000 loopback sessions (bench/fleet-scale.sh), which the defaults alone cut by a
// tenth (bench/README.md, "Routes instead of board names").
void coord_limits_anonymous(const jf_limits_t *cfg, size_t n_boards, bool anonymous_boards,
                            int64_t *ret_per_s, int64_t *ret_burst)
{
    int64_t n = anonymous_boards ? (int64_t) n_boards : 0;
    int64_t per_s = n * COORD_LIMITS_ANON_PER_BOARD_S,
            burst = n * COORD_LIMITS_ANON_BURST_PER_BOARD;
    *ret_per_s = cfg->unregistered_per_s > per_s ? cfg->unregistered_per_s : per_s;
    *ret_burst = cfg->unregistered_burst > burst ? cfg->unregistered_burst : burst;
}

bool coord_limits_peer_admit_anonymous(coord_limits_peer_t *p, int64_t per_s, int64_t burst,
                                       int64_t now_us)
{
    s_refill(&p->msgs, per_s, burst, now_us);
    if (p->msgs.tokens < 1.0) {
        p->dropped[COORD_LIMITS_OVER_RATE]++;
        return false;
    }
    p->msgs.tokens -= 1.0;
    p->passed++;
    return true;
}

bool coord_limits_peer_is_offender(const coord_limits_peer_t *p, const jf_limits_t *cfg,
                                   int64_t now_us)
{
    size_t n = (size_t) cfg->quarantine_after;
    if (n == 0 || n > JF_LIMITS_VIOLATIONS_MAX || p->n_violations < n) {
        return false;
    }
    // The n-th latest violation: n violations happened since then.
    int64_t oldest_us = p->violation_us[(p->n_violations - n) % JF_LIMITS_VIOLATIONS_MAX];
    return now_us - oldest_us <= cfg->quarantine_window_us;
}

uint64_t coord_limits_peer_dropped(const coord_limits_peer_t *p)
{
    uint64_t n = 0;
    for (int v = COORD_LIMITS_OVER_RATE; v <= COORD_LIMITS_OVER_SIZE; v++) {
        n += p->dropped[v];
    }
    return n;
}

uint64_t coord_limits_peer_refused_count(const coord_limits_peer_t *p)
{
    return p->dropped[COORD_LIMITS_INVALID] + p->dropped[COORD_LIMITS_OTHER_BOARD_RUN];
}

json_t *coord_limits_peer_json(const coord_limits_peer_t *p)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "passed",
                     (json_int_t) p->passed, "ignored_quarantined", (json_int_t) p->ignored,
                     "dropped", (json_int_t) coord_limits_peer_dropped(p), "over_rate",
                     (json_int_t) p->dropped[COORD_LIMITS_OVER_RATE], "over_bytes",
                     (json_int_t) p->dropped[COORD_LIMITS_OVER_BYTES], "over_size",
                     (json_int_t) p->dropped[COORD_LIMITS_OVER_SIZE], "refused",
                     (json_int_t) coord_limits_peer_refused_count(p), "invalid",
                     (json_int_t) p->dropped[COORD_LIMITS_INVALID], "other_board_run",
                     (json_int_t) p->dropped[COORD_LIMITS_OTHER_BOARD_RUN], "peak_messages_per_s",
                     (json_int_t) p->peak_msgs_per_s, "peak_bytes_per_s",
                     (json_int_t) p->peak_bytes_per_s, "largest_stream_bytes",
                     (json_int_t) p->largest_bytes[COORD_LIMITS_STREAM], "largest_other_bytes",
                     (json_int_t) p->largest_bytes[COORD_LIMITS_OTHER]);
}
