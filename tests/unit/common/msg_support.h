/* Helpers shared by the wire-protocol unit tests (msg_test.c: the corpora and generated
 * messages; msg_roundtrip_test.c: every builder through encode, decode and the typed parsers):
 * reading message fixtures, decoding for a direction, checking a refusal, round trips. */
#ifndef MSG_SUPPORT_H
#define MSG_SUPPORT_H

#include "jf_msg.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TMSG_RUN      "r0123456789abcdef"
#define TMSG_DIRS_ALL (JF_MSG_TO_COORD | JF_MSG_TO_AGENT | JF_MSG_TO_CTL | JF_MSG_TO_CLI)
#define TMSG_FILE_MAX (256 * 1024) // the largest fixture is a blob chunk over its limit (131 KB)

// What jf_msg_decode gave (a plain value record; msg.body is the caller's: jf_msg_fini).
typedef struct tmsg_decoded {
    int rc;
    const char *code;
    int64_t id;
    jf_msg_t msg;
    jf_err_t err;
} tmsg_decoded_t;

// The largest frame a receiver in direction dir accepts.
size_t tmsg_max_bytes(unsigned dir);

// Reads messages/<sub>/<name> from JF_FIXTURES (may hold NUL bytes: the length is returned).
// Caller frees.
char *tmsg_read_fixture(const char *sub, const char *name, size_t *ret_len);

// Decodes data for a receiver in direction dir.
tmsg_decoded_t tmsg_decode(const void *data, size_t len, unsigned dir);

// Checks a failed decode: return code, error code, message fragment, reported id, no body.
// Prints the mismatch and returns false, so a table run reports every bad row at once.
bool tmsg_check_fail(const char *what, const tmsg_decoded_t *d, int rc, const char *code,
                     const char *frag, int64_t id);

// As tmsg_check_fail, failing the test on a mismatch.
void tmsg_expect_fail(const char *what, const tmsg_decoded_t *d, int rc, const char *code,
                      const char *frag, int64_t id);

// Encodes msg (consumed), decodes it for dir and returns the decoded message (caller: fini).
jf_msg_t tmsg_roundtrip(json_t *msg, unsigned dir);

// A member that must be a string / an integer (fails the test otherwise).
const char *tmsg_str(const json_t *body, const char *key);
int64_t tmsg_int(const json_t *body, const char *key);

#endif
