/* libFuzzer target: the wire decoder (common/jf_msg.c) for every receiving direction, and the
 * family parsers the daemons run on a decoded body (run.assign on the agent, run.progress
 * records on the coordinator). Hostile input must give an error code, never a crash, leak or
 * undefined behaviour (docs/protocol.md §3; reliability-security.md §5). */
#include "jf_msg.h"
#include "jf_msg_run.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void s_parse_family(const jf_msg_t *msg)
{
    if (msg->type == JF_MSG_RUN_ASSIGN) {
        jf_run_spec_t spec;
        int64_t attempt = 0;
        (void) jf_msg_run_assign_parse(msg->body, &spec, &attempt, NULL); // only must not crash
    }
    if (msg->type == JF_MSG_RUN_PROGRESS) {
        size_t i = 0;
        json_t *rec = NULL;
        json_array_foreach(json_object_get(msg->body, "records"), i, rec) {
            jf_record_t r;
            (void) jf_record_parse(rec, &r, NULL); // only must not crash
        }
    }
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
