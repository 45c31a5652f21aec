/* jetfleet status: the coordinator's live view of boards, runs and the queue. */
#include "cli_cmds.h"
#include "cli_table.h"
#include "jf_msg.h"

#include <stdio.h>

// The board's clock offset and rtt in µs, and "WARN" when the coordinator flags the offset
// (docs/protocol.md §4.2.1); "-" where a coordinator or agent has no estimate.
static void s_clock_cells(const json_t *b, char *offset, char *rtt, size_t size)
{
    json_t *off = json_object_get(b, "clock_offset_us");
    json_t *r = json_object_get(b, "clock_rtt_us");
    (void) snprintf(offset, size, "-");
    (void) snprintf(rtt, size, "-");
    if (json_is_integer(off) && json_is_integer(r)) {
        (void) snprintf(offset, size, "%lld%s", (long long) json_integer_value(off),
                        json_is_true(json_object_get(b, "clock_warn")) ? " WARN" : "");
        (void) snprintf(rtt, size, "%lld", (long long) json_integer_value(r));
    }
}

static void s_add_board(cli_table_t *t, const json_t *b)
{
    static const char *const names[] = {"board",           "type",         "online",
                                        "state",           "run",          "last_seen_s",
                                        "clock_offset_us", "clock_rtt_us", "violations"};
    char seen[32] = "-";
    json_t *ago = json_object_get(b, "last_seen_s_ago");
    if (json_is_number(ago)) {
        (void) snprintf(seen, sizeof seen, "%.1f", json_number_value(ago));
    }
    char offset[40] = "-", rtt[40] = "-";
    s_clock_cells(b, offset, rtt, sizeof offset);
    // Messages over its limits and messages the protocol refused (§1.9): what a quarantine
    // counts (older coordinators have no "refused": 0).
    char limited[32] = "-";
    json_t *lim = json_object_get(b, "limits");
    if (json_is_object(lim)) {
        (void) snprintf(limited, sizeof limited, "%lld",
                        (long long) (json_integer_value(json_object_get(lim, "dropped")) +
                                     json_integer_value(json_object_get(lim, "refused"))));
    }
    bool quarantined = json_is_true(json_object_get(b, "quarantined"));
    const char *run = json_string_value(json_object_get(b, "run"));
    const char *values[] = {json_string_value(json_object_get(b, "name")),
                            json_string_value(json_object_get(b, "type")),
                            quarantined                                ? "QUARANTINED"
                            : json_is_true(json_object_get(b, "online")) ? "yes"
                                                                         : "no",
                            json_string_value(json_object_get(b, "run_state")),
                            run ? run : "-",
                            seen,
                            offset,
                            rtt,
                            limited};
    (void) cli_table_add_text(t, 9, names, values);
}

static long long s_int(const json_t *o, const char *key)
{
    return json_integer_value(json_object_get(o, key));
}

// Quarantined boards with their reason and figures (docs/protocol.md §1.9); absent from older
// coordinators.
static void s_print_quarantined(const json_t *boards)
{
    size_t i = 0;
    json_t *b = NULL;
    json_array_foreach(boards, i, b) {
        if (!json_is_true(json_object_get(b, "quarantined"))) {
            continue;
        }
        const char *name = json_string_value(json_object_get(b, "name"));
        const json_t *l = json_object_get(b, "limits");
        printf("board %s QUARANTINED: %s; %lld messages ignored since; peak %lld messages/s, "
               "%lld bytes/s; release with 'jetfleet keys release %s'\n",
               name ? name : "?", json_string_value(json_object_get(b, "quarantine_reason")),
               s_int(l, "ignored_quarantined"), s_int(l, "peak_messages_per_s"),
               s_int(l, "peak_bytes_per_s"), name ? name : "BOARD");
    }
}

// The per-board limits in force and what peers outside fleet.yaml had dropped (§1.9).
static void s_print_limits(const json_t *l)
{
    if (!json_is_object(l)) {
        return;
    }
    printf("limits per board: %lld messages/s (burst %lld), %lld bytes/s (burst %lld), messages "
           "up to %lld bytes (run.progress, telemetry) or %lld (others); quarantine after %lld "
           "violations in %lld ms; unregistered peers: %lld messages dropped\n",
           s_int(l, "messages_per_s"), s_int(l, "message_burst"), s_int(l, "bytes_per_s"),
           s_int(l, "byte_burst"), s_int(l, "max_stream_bytes"), s_int(l, "max_other_bytes"),
           s_int(l, "quarantine_after"), s_int(l, "quarantine_window_ms"),
           s_int(l, "unregistered_dropped"));
}

// The coordinator's descriptor guard (docs/protocol.md §1.6); absent from older coordinators.
static void s_print_connections(const json_t *c)
{
    if (!json_is_object(c)) {
        return;
    }
    json_t *paused = json_object_get(c, "paused_s");
    if (json_is_number(paused)) {
        printf("connections: NOT accepting new agent connections for %.1f s: descriptors near "
               "the limit",
               json_number_value(paused));
    } else {
        printf("connections: accepting agent connections");
    }
    printf("; descriptors %lld of %lld in use; %lld closed before their handshake; %lld pauses\n",
           s_int(c, "fd_used"), s_int(c, "fd_limit"), s_int(c, "handshake_failures"),
           s_int(c, "pauses"));
}

// The free-space floor (docs/store.md); absent from older coordinators.
static void s_print_space(const json_t *s)
{
    if (!json_is_object(s)) {
        return;
    }
    const char *reason = json_string_value(json_object_get(s, "reason"));
    if (reason) {
        printf("new runs: REFUSED: %s\n", reason);
    } else if (s_int(s, "min_free_bytes") > 0) {
        printf("new runs: accepted; store free space %lld bytes, floor %lld bytes\n",
               s_int(s, "free_bytes"), s_int(s, "min_free_bytes"));
    }
}

int cli_cmd_status(cli_ctx_t *ctx, int argc, char **argv)
{
    (void) argv;
    if (argc != 0) {
        return cli_fail(CLI_EXIT_USAGE, "status takes no arguments");
    }
    json_t *data = NULL;
    jf_err_t err = {0};
    if (cli_ctx_request(ctx, jf_msg_new(JF_MSG_CTL_STATUS, 1), &data, &err) != 0) {
        return cli_fail(CLI_EXIT_ERROR, "%s", err.msg);
    }
    cli_table_t *t = cli_table_new(NULL);
    size_t i = 0;
    json_t *b = NULL;
    json_array_foreach(json_object_get(data, "boards"), i, b) {
        s_add_board(t, b);
    }
    (void) cli_table_write(t, CLI_FORMAT_TEXT, stdout);
    json_t *runs = json_object_get(data, "runs");
    printf("\nruns: %lld pending, %lld assigned, %lld running, %lld done, %lld failed\n",
           json_integer_value(json_object_get(runs, "pending")),
           json_integer_value(json_object_get(runs, "assigned")),
           json_integer_value(json_object_get(runs, "running")),
           json_integer_value(json_object_get(runs, "done")),
           json_integer_value(json_object_get(runs, "failed")));
    json_t *drops = json_object_get(data, "send_drops");
    printf("replies dropped: %lld to peers that do not read, %lld to peers gone, %lld other\n",
           json_integer_value(json_object_get(drops, "peer_full")),
           json_integer_value(json_object_get(drops, "peer_gone")),
           json_integer_value(json_object_get(drops, "other")));
    s_print_connections(json_object_get(data, "connections"));
    s_print_space(json_object_get(data, "store_space"));
    s_print_limits(json_object_get(data, "limits"));
    s_print_quarantined(json_object_get(data, "boards"));
    cli_table_destroy(&t);
    json_decref(data);
    return CLI_EXIT_OK;
}
