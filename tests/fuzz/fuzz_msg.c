/* libFuzzer target: the wire decoder (common/jf_msg.c) for every receiving direction, and the
 * typed payloads it leaves (run.assign for the agent; run.progress records and telemetry samples
 * for the coordinator). Hostile input must give an error code, never a crash, leak or
 * undefined behaviour (docs/protocol.md §3; reliability-security.md §5). */
#include "jf_msg.h"
#include "jf_msg_measure.h"
#include "jf_msg_run.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void s_parse_family(const jf_msg_t *msg)
{
    if (msg->type == JF_MSG_RUN_ASSIGN) {
        jf_run_spec_t spec;
        int64_t attempt = 0;
        (void) jf_msg_run_assign_parse(msg->body, &spec, &attempt, NULL); // only must not crash
    }
    // The typed payloads the decoder left: read every record and sample (ASan sees a bad one).
    size_t n = 0;
    for (size_t i = 0; msg->progress && i < msg->progress->n_records; i++) {
        const jf_msg_progress_rec_t *r = &msg->progress->records[i];
        n += r->rec.kind == JF_REC_MEASURE && r->measure ? r->measure->n_cache : 0;
        }
    for (size_t i = 0; msg->telemetry && i < msg->telemetry->n_samples; i++) {
        n += json_object_size(msg->telemetry->samples[i].json);
    }
    (void) n; // only must not crash
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned dirs[] = {JF_MSG_TO_COORD, JF_MSG_TO_AGENT, JF_MSG_TO_CTL,
                                    JF_MSG_TO_CLI};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        jf_msg_t msg = {0};
        const char *code = NULL;
        int64_t id = -1;
        jf_err_t err = {0};
        if (jf_msg_decode(data, size, dirs[d], JF_MSG_MAX_BYTES_COORD, &msg, &code, &id, &err) ==
            0) {
            s_parse_family(&msg);
        }
        jf_msg_fini(&msg);
    }
    return 0;
}
