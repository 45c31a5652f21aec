/* jetfleet-privhelper's request language: one line of at most 256 bytes, a closed vocabulary of
 * verbs, and canonical decimal arguments (docs/privileges.md §3). Syntax and static ranges only:
 * whether a cpu, frequency, mode or state exists on this board is checked against the root by
 * privhelper.c. The agent formats its requests through the same table. */
#ifndef PRIVHELPER_REQUEST_H
#define PRIVHELPER_REQUEST_H

#include "jf_err.h"

#include <stddef.h>
#include <stdint.h>

#define PRIVHELPER_LINE_MAX   256 // longest request in bytes, the newline included
#define PRIVHELPER_ARGS_MAX   2   // arguments of the longest verb
#define PRIVHELPER_CPUS_MAX   64  // cpu numbers are 0..63
#define PRIVHELPER_MODE_MAX   255 // nvpmodel ids are 0..255
#define PRIVHELPER_STATES_MAX 16  // clocks-store slots are 1..16; slot 0 belongs to dvfs off
#define PRIVHELPER_KHZ_MAX    INT64_C(100000000)    // 100 GHz in kHz: larger is not a clock
#define PRIVHELPER_HZ_MAX     INT64_C(100000000000) // 100 GHz

typedef enum privhelper_verb {
    PRIVHELPER_NVPMODEL = 0, // nvpmodel <mode>: run `nvpmodel -m <mode>`
    PRIVHELPER_CPU_ONLINE,   // cpu-online <cpu> <0|1>
    PRIVHELPER_CPU_FREQ,     // cpu-freq <cpu> <khz>: pin the policy whose first core is cpu
    PRIVHELPER_GPU_FREQ,     // gpu-freq <hz>: pin the GPU devfreq node
    PRIVHELPER_EMC_FREQ,     // emc-freq <hz>: cap and lock the memory clock
    PRIVHELPER_DVFS_OFF,     // dvfs off: store once (slot 0), then pin everything at its cap
    PRIVHELPER_DVFS_RESTORE, // dvfs restore: write slot 0 back and forget it
    PRIVHELPER_CLOCKS_STORE, // clocks-store: save the state in a free slot; replies "state=N"
    PRIVHELPER_RESTORE,      // restore <state>: write slot N back and forget it
    PRIVHELPER_DROP_CACHES,  // drop-caches: sync, then 3 to /proc/sys/vm/drop_caches
    PRIVHELPER_VERB_COUNT,
} privhelper_verb_t;

// A parsed request (a plain value record).
typedef struct privhelper_request {
    privhelper_verb_t verb;            // what is asked
    size_t n_args;                     // the verb's argument count
    int64_t args[PRIVHELPER_ARGS_MAX]; // in the order of the verb's syntax
} privhelper_request_t;

// Parses len bytes (one line, optionally ending with '\n') into *ret_req. Returns 0, or -EINVAL
// with err saying what is wrong: empty, too long, a NUL or other byte outside [a-z0-9 -], a
// path, bytes after the line, an unknown verb, a wrong argument count, a number that is not
// canonical decimal (sign, leading zero, hex) or out of range, cpu0 in cpu-online.
int privhelper_request_parse(const char *buf, size_t len, privhelper_request_t *ret_req,
                             jf_err_t *err);

// Formats req as a request line without the newline into buf (size bytes) and checks that it
// parses back to req. Returns 0, -EINVAL (req is not a valid request) or -ENAMETOOLONG.
int privhelper_request_format(const privhelper_request_t *req, char *buf, size_t size,
                              jf_err_t *err);

// The syntax of a verb for messages and usage ("cpu-freq <cpu> <khz>"); "?" if out of range.
const char *privhelper_verb_syntax(privhelper_verb_t verb);

#endif
