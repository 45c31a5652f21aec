/* Coordinator descriptor guard: keeps the coordinator up when connections use up its open-file
 * limit (docs/protocol.md §1.6). It raises the soft RLIMIT_NOFILE, counts descriptors each tick,
 * stops accepting agent connections near the limit (with hysteresis), counts connections closed
 * before their ZeroMQ handshake, and keeps spare descriptors for the control socket's accepts
 * (coord_fdguard_accept.c). It does not decide who may connect: that is for CURVE (§9). */
#ifndef COORD_FDGUARD_H
#define COORD_FDGUARD_H

#include "jf_err.h"

#include <czmq.h>
#include <dirent.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define COORD_FDGUARD_SPARES       8   // descriptors held for the control socket's accepts
#define COORD_FDGUARD_HEADROOM_MIN 16  // descriptors kept free below the limit, at least
#define COORD_FDGUARD_HEADROOM_MAX 256 // and at most (limit / 8 in between)
#define COORD_FDGUARD_HOLD_US      (INT64_C(5) * 1000000) // shortest pause of agent accepts
#define COORD_FDGUARD_EVENTS_MAX   4096                   // monitor events read per tick
#define COORD_FDGUARD_PROC_ROOT    "/proc" // where <root>/self/fd lists our descriptors

// The two thresholds derived from the open-file limit (a plain value record).
typedef struct coord_fdguard_levels {
    long high_fds; // descriptors in use at which agent accepts stop
    long low_fds;  // descriptors in use at or below which they start again
} coord_fdguard_levels_t;

typedef enum coord_fdguard_action {
    COORD_FDGUARD_KEEP,   // nothing changes
    COORD_FDGUARD_PAUSE,  // stop accepting agent connections
    COORD_FDGUARD_RESUME, // accept them again
} coord_fdguard_action_t;

typedef struct coord_fdguard coord_fdguard_t;

// Thresholds for an open-file limit of limit_fds: headroom = limit / 8 clamped to
// [COORD_FDGUARD_HEADROOM_MIN, COORD_FDGUARD_HEADROOM_MAX]; high = limit - headroom, low = limit
// - 2 x headroom (never below 0). Pure.
coord_fdguard_levels_t coord_fdguard_levels(long limit_fds);

// Hysteresis: while accepting, PAUSE once used_fds >= high; while paused (since paused_since_us),
// RESUME once used_fds <= low and COORD_FDGUARD_HOLD_US has passed; otherwise KEEP. Pure.
coord_fdguard_action_t coord_fdguard_decide(bool paused, int64_t paused_since_us, long used_fds,
                                            const coord_fdguard_levels_t *levels, int64_t now_us);

// True for the monitor events that mean a connection closed before completing its ZeroMQ
// handshake (timeout, peer gone, protocol or authentication failure). Pure.
bool coord_fdguard_is_handshake_failure(uint16_t event);

// Counts the entries of an open directory other than "." and ".." from its start (it rewinds
// first, so one DIR serves every tick). Returns 0 and *ret_n, or -errno.
int coord_fdguard_count_entries(DIR *dir, long *ret_n, jf_err_t *err);

// Raises the soft RLIMIT_NOFILE to the hard limit. Returns 0 with the soft limit before in
// *ret_old_soft and the hard limit in *ret_hard, or -errno.
int coord_fdguard_raise_nofile(long *ret_old_soft, long *ret_hard, jf_err_t *err);

// Starts guarding agents (borrowed; owned by coord_server, which must destroy the guard first):
// opens <proc_root>/self/fd, fills the spare descriptors, attaches a monitor to the socket and
// keeps a duplicate of its listening socket. agents must already be bound to exactly one
// endpoint. Warns when the limit leaves too little room for n_boards agents. Caller owns the
// result; release with coord_fdguard_destroy. NULL on failure with err.
coord_fdguard_t *coord_fdguard_new(zsock_t *agents, const char *proc_root, size_t n_boards,
                                   jf_err_t *err);

// Once per loop tick, in the socket's thread: reads monitor events, counts descriptors, and
// unbinds or rebinds the agents' endpoint as coord_fdguard_decide says, logging each change.
// Never fails: a count it cannot take is logged (rate-limited) and the state is kept.
void coord_fdguard_tick(coord_fdguard_t *self, int64_t now_us);

// The guard's state for ctl.status (docs/protocol.md §6.2). Caller owns; NULL on ENOMEM.
json_t *coord_fdguard_status_json(const coord_fdguard_t *self, int64_t now_us);

// Releases the spare descriptors and the monitor, and sets *self_p to NULL. Accepts NULL.
void coord_fdguard_destroy(coord_fdguard_t **self_p);

// Spare descriptors (coord_fdguard_accept.c), shared with libzmq's I/O thread. Fills every
// empty slot (as far as descriptors allow) and returns how many are held.
int coord_fdguard_spares_fill(void);
// How many spare descriptors are held now.
int coord_fdguard_spares_held(void);
// Control-socket accepts that hit the limit: served by releasing a spare, and put off (the
// connection waits in the listen queue until a descriptor is free). Totals since start.
uint64_t coord_fdguard_spares_used(void);
uint64_t coord_fdguard_accepts_deferred(void);
// Closes every spare descriptor.
void coord_fdguard_spares_release(void);

#endif
