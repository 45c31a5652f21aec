/* The run worker: a czmq actor (its own thread) for the blocking steps around a run, so that the
 * event loop never waits on them (STYLE.md §7). Before a run it checks that the dataset lives on
 * the medium's configured mount, stores the board's clock state and puts it in the run's power
 * mode, custom point and DVFS setting (through jetfleet-privhelper, then reads it back), drops
 * the page cache when asked, and
 * measures the dataset's page-cache residency; during the run it measures residency after each
 * epoch; after it, and when the agent exits, it restores the stored state. It owns the power
 * handle alone and talks to the loop only through its pipe; it never logs: results and notes
 * come back to the loop. docs/protocol.md §5.2.1, docs/privileges.md. */
#ifndef AGENT_WORKER_H
#define AGENT_WORKER_H

#include "agent_power.h"
#include "agent_residency.h"
#include "agent_storage.h"
#include "jf_err.h"
#include "jf_msg_measure.h"
#include "jf_msg_run.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#define AGENT_WORKER_FILES_MAX       200000 // dataset files walked for residency (GLD-23k: 23k)
#define AGENT_WORKER_POWER_JSON_MAX  2047   // agent_power_state_json text
#define AGENT_WORKER_TEXT_MAX        511
#define AGENT_WORKER_HELPER_ARGS_MAX AGENT_POWER_HELPER_ARGS_MAX

typedef struct agent_worker agent_worker_t;

typedef struct agent_worker_opts {
    agent_power_t **power_p;        // the power handle, taken over (*power_p set to NULL) on
                                    // success; *power_p NULL: the platform has none (host)
    const char *const *helper_argv; // jetfleet-privhelper's command, NULL-terminated; NULL:
                                    // none configured; copied
    const char *proc_root;          // for mountinfo; copied
    const char *sysfs_root;         // for block device names; copied
} agent_worker_opts_t;

// What to prepare for a run (a plain value record).
typedef struct agent_worker_prepare {
    char run[JF_RUN_ID_LEN + 1];
    int64_t attempt;
    char dataset_dir[PATH_MAX];    // <dataset_root>/<dataset>, known to exist
    char medium[JF_IDENT_MAX + 1]; // the run's medium
    char mount[PATH_MAX];          // its configured mount point; "" when not configured
    int power_mode_id;             // the run's nvpmodel mode (ignored without a power handle)
    jf_run_custom_t custom;        // custom point set after the mode; n_cores 0: none
    bool dvfs_off;                 // DVFS off after the mode and the point (needs the helper)
    bool drop_caches;              // drop the page cache before the run
} agent_worker_prepare_t;

typedef enum agent_worker_reply_kind {
    AGENT_WORKER_PREPARED = 0, // answer to agent_worker_prepare
    AGENT_WORKER_RESIDENCY,    // answer to agent_worker_residency
    AGENT_WORKER_RESTORED,     // answer to agent_worker_restore
    AGENT_WORKER_ADOPTED,      // answer to agent_worker_adopt
} agent_worker_reply_kind_t;

// A reply (a plain value record; which fields are set depends on kind).
typedef struct agent_worker_reply {
    agent_worker_reply_kind_t kind;
    char run[JF_RUN_ID_LEN + 1];            // PREPARED, RESIDENCY: the run it was for
    int64_t attempt;                        // and its attempt
    bool ok;                                // PREPARED: the run can start; RESIDENCY: measured;
                                            // RESTORED: restored, or nothing was stored
    jf_fail_reason_t reason;                // PREPARED and !ok: why the run is refused
    char detail[AGENT_WORKER_TEXT_MAX + 1]; // !ok: what failed; ok: notes worth a log line
    bool has_mount;                         // PREPARED: mount is where the dataset lives
    agent_storage_mount_t mount;            // its mount point, source and whole disk
    bool storage_checked;                   // the mount was checked against the medium's
    bool has_power;                         // PREPARED: power_json is the state in force
    char power_json[AGENT_WORKER_POWER_JSON_MAX + 1]; // agent_power_state_json text
    bool power_changed;                     // PREPARED: a state was stored and a mode set;
                                            // RESTORED: a stored state was written back
    jf_measure_drop_t drop;                 // PREPARED: how the cache was dropped
    int epoch;                              // RESIDENCY: after this epoch; -1: before epoch 0
    bool has_residency;                     // PREPARED (before epoch 0), RESIDENCY
    agent_residency_t residency;            // the dataset's files and resident bytes
    // PREPARED with power_changed: the stored state's record (agent_power_stored_json), for
    // agent_worker_adopt after an agent restart, and whether DVFS was turned off; "" if none.
    char stored_json[AGENT_WORKER_POWER_JSON_MAX + 1];
    bool dvfs_off;
} agent_worker_reply_t;

// Starts the actor. Caller owns the result; release with agent_worker_destroy. NULL with err
// (-ENOMEM, -EINVAL for a bad helper command).
agent_worker_t *agent_worker_new(const agent_worker_opts_t *opts, jf_err_t *err);

// Stops the actor and frees everything. A stored power state is restored first (blocks up to
// the helper's timeout); call agent_worker_restore_wait before it to learn how that went.
void agent_worker_destroy(agent_worker_t **self_p);

// The pipe's ZeroMQ socket handle, for zmq_poll in the loop (borrowed).
void *agent_worker_handle(agent_worker_t *self);

// Queues the preparation of a run; an AGENT_WORKER_PREPARED reply follows. On any refusal after
// the power state was stored, the worker restores it before replying. 0 or -EIO.
int agent_worker_prepare(agent_worker_t *self, const agent_worker_prepare_t *job);

// Queues a residency measurement of dir after epoch (-1: before epoch 0). 0 or -EIO.
int agent_worker_residency(agent_worker_t *self, const char *run, int64_t attempt, int epoch,
                           const char *dir);

// Queues the restore of a stored power state; an AGENT_WORKER_RESTORED reply follows. 0 or -EIO.
int agent_worker_restore(agent_worker_t *self);

// An agent restarted during a run: queues the take-over of the clock state the earlier agent
// process stored before it (stored_json, a PREPARED reply's; dvfs_off, whether DVFS was off), so
// that the restore after the re-attached run writes it back (agent_power_adopt). An
// AGENT_WORKER_ADOPTED reply follows (ok, or detail saying why not). 0 or -EIO.
int agent_worker_adopt(agent_worker_t *self, const char *stored_json, bool dvfs_off);

// Reads one reply without blocking: 0, -EAGAIN when none waits, -EPROTO for garbage (dropped).
int agent_worker_recv(agent_worker_t *self, agent_worker_reply_t *ret_reply);

// At shutdown: queues a restore and waits up to timeout_us for its reply, dropping the replies
// before it. 0 with *ret_reply, or -ETIMEDOUT.
int agent_worker_restore_wait(agent_worker_t *self, int64_t timeout_us,
                              agent_worker_reply_t *ret_reply);

#endif
