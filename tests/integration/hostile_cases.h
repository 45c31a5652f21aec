/* The tables of integration.hostile (STYLE.md §9): what every receiver must refuse, what only
 * the coordinator's agent endpoint, its control endpoint or the agent refuses, and run.assign
 * messages host-1 must reject. Data only (hostile_cases.c); hostile_test.c sends them. */
#ifndef HOSTILE_CASES_H
#define HOSTILE_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HOSTILE_OTHER_RUN "r0123456789abcdef" // a run id the store does not know

// One hostile frame and the error it must get.
typedef struct hostile_text_case {
    const char *what;
    const char *text; // sent without its NUL
    const char *code; // JF_MSG_E_*
    int64_t re;       // expected "re": the message id, or -1 for null
} hostile_text_case_t;

// A run.assign the decoder accepts but host-1 cannot run: run.reject, never a child.
typedef struct hostile_reject_case {
    const char *what;
    const char *board, *model, *dataset, *storage;
    int mode_id;
    const char *mode;
    const char *reason;
    int custom_cores; // a custom point with this many cores (CPU 1190.4 MHz); 0: none
    bool dvfs_off;
} hostile_reject_case_t;

extern const hostile_text_case_t hostile_any_cases[];   // every receiver
extern const hostile_text_case_t hostile_coord_cases[]; // the coordinator's agent endpoint
extern const hostile_text_case_t hostile_ctl_cases[];   // its control endpoint
extern const hostile_text_case_t hostile_agent_cases[]; // the agent
extern const hostile_reject_case_t hostile_reject_cases[];
extern const size_t hostile_n_any_cases, hostile_n_coord_cases, hostile_n_ctl_cases,
    hostile_n_agent_cases, hostile_n_reject_cases;

#endif
