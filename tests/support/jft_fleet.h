/* Test support: a whole fleet on one machine — a temporary directory with a tiny generated MNIST
 * dataset, a fleet.yaml of host boards and simulated boards, a coordinator on an ipc endpoint in
 * that directory (or, when the test asks, an ephemeral 127.0.0.1 port), agents, the CLI — and a
 * teardown that stops every process and removes the directory even after a failure.
 * Fleets of concurrent tests never talk to each other: an ipc endpoint is in the test's own
 * directory, and a fleet on TCP names its boards with a prefix unique to it (jft_fleet_board), so
 * an agent that reaches another test's coordinator on a reused port is refused there. */
#ifndef JFT_FLEET_H
#define JFT_FLEET_H

#include "jft_proc.h"

#include <stdbool.h>
#include <stddef.h>

#define JFT_FLEET_ENV_MAX               16 // entries of agent_env (or env_extra) passed on to an agent
#define JFT_FLEET_AGENTS_MAX 64
#define JFT_FLEET_SIM_HEARTBEAT_TIMEOUT "30s" // fleets with sim boards (many trainers at once)
#define JFT_FLEET_DIR_MAX    1024 // short enough that every path built inside it fits PATH_MAX
#define JFT_FLEET_AGENT_STATE_FMT "%s/agent-state-%s" // each agent's --state-dir: dir, name
// The default agent endpoint is ipc://<dir>/agents.sock; a longer path than this does not fit a
// socket address (sun_path), and such a fleet uses TCP.
#define JFT_FLEET_IPC_NAME     "agents.sock"
#define JFT_FLEET_IPC_PATH_MAX 100
#define JFT_FLEET_NAME_MAX     48 // a board name, with the prefix of a TCP fleet

typedef struct jft_fleet {
    char dir[JFT_FLEET_DIR_MAX]; // temporary directory (removed at teardown)
    char config[PATH_MAX];    // <dir>/fleet.yaml
    char data_dir[PATH_MAX];  // <dir>/state: the coordinator's data directory
    char endpoint[256];       // the coordinator's bound agent endpoint
    size_t n_boards;          // host-1 .. host-N in fleet.yaml (jft_fleet_board: their names)
    size_t n_sims;            // then sim-1 .. sim-M (type sim, medium nvme)
    char tag[24];             // unique to this fleet on the machine (pid and a counter)
    char names[JFT_FLEET_AGENTS_MAX][JFT_FLEET_NAME_MAX]; // board names by slot: hosts, sims
    const char *sim_types[JFT_FLEET_AGENTS_MAX]; // what each simulates ("xavier-nx"); borrowed
    char hb_interval[16];     // heartbeat_interval in fleet.yaml if set ("": the default)
    char hb_timeout[16];      // heartbeat_timeout in fleet.yaml if set ("": the default)
    char agent_endpoint[128]; // coordinator.agent_endpoint if set ("": ipc://<dir>/agents.sock,
                              // or tcp://127.0.0.1:* when that path is too long)
    char coord_extra[512];    // more lines of the coordinator section ("  key: value\n"...)
    bool curve;               // set before starting: the coordinator without --insecure-loopback,
                              // agents with --coordinator-key <data_dir>/keys/coordinator and
                              // their key in their state directory (the test makes the keys)
    char curve_arg[PATH_MAX]; // internal: the coordinator key path passed to agents
    char *const *agent_env;   // extra environment of the agents started from now on (NULL:
                              // none); borrowed, it must outlive those starts. Agents also get
                              // TMPDIR=<dir> unless it sets TMPDIR, so that what a sim agent
                              // killed with SIGKILL leaves (its fake sysfs tree) goes at teardown
    char *env_buf[JFT_FLEET_ENV_MAX + 2]; // internal: an agent's extra environment
    char tmpdir_env[PATH_MAX + 8];        // internal: "TMPDIR=<dir>"
    jft_proc_t coord;
    jft_proc_t agents[JFT_FLEET_AGENTS_MAX];
} jft_fleet_t;

// Creates the directory, the dataset and fleet.yaml with n_boards host boards. 0 or -errno.
int jft_fleet_setup(jft_fleet_t *f, size_t n_boards);

// The same with n_sims simulated boards sim-1.. after the hosts, sim-<i+1> simulating
// sim_types[i] (static strings, borrowed) with storage medium nvme. 0 or -errno.
int jft_fleet_setup_sims(jft_fleet_t *f, size_t n_boards, const char *const *sim_types,
                         size_t n_sims);

// Starts the agent of sim-<i+1> in slot n_boards + i with --platform sim:<type> and extra
// arguments (NULL-terminated, may be NULL: --sim-speed and the like). 0 or -errno.
int jft_fleet_start_sim_agent(jft_fleet_t *f, size_t i, const char *const *extra_args);

// Sets the coordinator's agent endpoint (NULL: the default, ipc://<dir>/agents.sock) and extra
// lines of its section (NULL: none), and rewrites fleet.yaml. An ipc:// endpoint keeps its path
// across a coordinator restart, so the agents reconnect by themselves. A tcp:// endpoint gives the
// boards names prefixed with the fleet's tag (jft_fleet_board). 0 or -errno.
int jft_fleet_set_coord(jft_fleet_t *f, const char *agent_endpoint, const char *extra_lines);

// Rewrites fleet.yaml with the given heartbeat_interval and heartbeat_timeout (fleet.yaml
// durations such as "500ms", "3s"), before the coordinator starts. 0 or -errno.
int jft_fleet_set_heartbeat(jft_fleet_t *f, const char *interval, const char *timeout);

// The name of board base ("host-1", "sim-2") in this fleet: base itself on an ipc endpoint, the
// fleet's tag, '-' and base on TCP. Borrowed from the fleet (valid until its next rewrite of
// fleet.yaml); base itself when the fleet has no such board.
const char *jft_fleet_board(const jft_fleet_t *f, const char *base);

// Starts the coordinator and waits for its endpoint file. 0 or -errno.
int jft_fleet_start_coordinator(jft_fleet_t *f);

// The two halves of jft_fleet_start_coordinator, for tests that start several coordinators at
// once: start the process (0 or -errno), then wait for its endpoint file (0 or -ETIMEDOUT).
int jft_fleet_spawn_coordinator(jft_fleet_t *f);
int jft_fleet_wait_coordinator(jft_fleet_t *f);

// SIGKILLs the coordinator (kill -9: no shutdown code runs), waits for it and removes its
// endpoint file, so that the next jft_fleet_start_coordinator waits for the new one. The data
// directory stays for that restart. 0 or -errno.
int jft_fleet_kill_coordinator(jft_fleet_t *f);

// The same under `prlimit --nofile=soft:hard` (util-linux), so the coordinator starts with that
// open-file limit. 0 or -errno (-ENOENT without /usr/bin/prlimit).
int jft_fleet_start_coordinator_nofile(jft_fleet_t *f, long soft, long hard);

// Starts the agent of board host-<i+1> (jft_fleet_board) with extra environment (may be NULL).
// 0 or -errno.
int jft_fleet_start_agent(jft_fleet_t *f, size_t i, char *const env_extra[]);

// The same, connecting to endpoint instead of the fleet's coordinator (for a test posing as the
// coordinator with a ROUTER). endpoint is borrowed for the call. 0 or -errno.
int jft_fleet_start_agent_at(jft_fleet_t *f, size_t i, const char *endpoint,
                             char *const env_extra[]);

// Starts the agent of a board named name (slot i of agents[]) with --config and extra
// arguments (NULL-terminated, may be NULL), e.g. a platform and its fixture roots. 0 or -errno.
int jft_fleet_start_agent_named(jft_fleet_t *f, size_t i, const char *name,
                                const char *const *extra_args);
// The same, connecting to endpoint (borrowed for the call) instead of the fleet's coordinator.
int jft_fleet_start_agent_named_at(jft_fleet_t *f, size_t i, const char *name, const char *endpoint,
                                   const char *const *extra_args);

// Waits until n boards are online in the store. True if they are.
bool jft_fleet_wait_online(jft_fleet_t *f, size_t n, int timeout_ms);

// Runs `jetfleet --config <fleet.yaml> args...` (NULL-terminated) with output into out_path;
// returns its exit code (see jft_run).
int jft_fleet_cli(jft_fleet_t *f, const char *out_path, int timeout_ms, const char *const *args);

// Runs one SQL query expecting an integer, against the store (read-only). -1 on failure.
// An integer result that is not an integer (text, NULL, no row) gives -1 too.
long long jft_fleet_sql_int(jft_fleet_t *f, const char *sql);

// Runs one SQL query expecting text; caller frees. NULL on failure or a non-text result.
char *jft_fleet_sql_text(jft_fleet_t *f, const char *sql);

// Writes a file inside the fleet directory; returns its path in out (PATH_MAX).
int jft_fleet_write(jft_fleet_t *f, const char *name, const char *text, char *out);

// Stops every process (SIGTERM, then SIGKILL) and removes the directory, unless
// JF_KEEP_TEST_DIR is set or a daemon did not stop cleanly (then it prints where it is).
// Returns 0, or -1 when a daemon that was running did not exit 0 on SIGTERM (a crash or a
// sanitizer report at shutdown): return it from the test's teardown so that the test fails.
int jft_fleet_teardown(jft_fleet_t *f);

#endif
