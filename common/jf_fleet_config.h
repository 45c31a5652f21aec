/* fleet.yaml loader (libyaml event API): the lab's boards and the coordinator's settings.
 * Errors name file:line:column (1-based) and what was expected; unknown keys, duplicate keys,
 * anchors/aliases and tags are errors. Format: fleet.yaml.example and docs/fleet-yaml.md. */
#ifndef JF_FLEET_CONFIG_H
#define JF_FLEET_CONFIG_H

#include "jf_board.h"
#include "jf_err.h"
#include "jf_influx_config.h"
#include "jf_limits.h"
#include "jf_parse.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_FLEET_BOARDS_MAX     4096
#define JF_FLEET_LABELS_MAX     16
#define JF_FLEET_STORAGE_MAX    8
#define JF_FLEET_FILE_MAX_BYTES (1024 * 1024)
#define JF_ENDPOINT_MAX         255

// Defaults for the coordinator settings when fleet.yaml leaves them out.
#define JF_DEFAULT_AGENT_ENDPOINT   "tcp://127.0.0.1:7700"
#define JF_DEFAULT_DATA_DIR         "jetfleet-data" // relative to the fleet.yaml's directory
#define JF_DEFAULT_STORE            "jetfleet.db"   // relative to data_dir
#define JF_DEFAULT_TELEMETRY_HZ     1
#define JF_DEFAULT_HEARTBEAT_US     (INT64_C(2) * 1000000)
#define JF_DEFAULT_HB_TIMEOUT_US    (INT64_C(6) * 1000000)
#define JF_DEFAULT_RUN_TIMEOUT_US   (INT64_C(2) * 3600 * 1000000)
#define JF_DEFAULT_MAX_ATTEMPTS     3
#define JF_DEFAULT_HANDSHAKE_US     (INT64_C(10) * 1000000)
#define JF_DEFAULT_CLOCK_WARN_US    (INT64_C(5) * 1000) // 5 ms: docs/protocol.md §4.2.1
#define JF_DEFAULT_MIN_FREE_BYTES   0 // no free-space floor unless fleet.yaml sets one

// What happens to a finished run's telemetry samples once coordinator.retention.telemetry_raw
// has passed since the run finished (docs/store.md, "Retention and free space").
typedef enum jf_retention_after {
    JF_RETENTION_KEEP = 0, // no retention configured: raw samples are kept for ever
    JF_RETENTION_DROP,     // the raw samples are deleted
    JF_RETENTION_MEANS,    // the raw samples are replaced by per-second means
} jf_retention_after_t;

typedef struct jf_storage_spec {
    char medium[JF_IDENT_MAX + 1];   // jf_run_spec_is_medium: sd, emmc, nvme, usb-hdd, ...
    char mount[PATH_MAX];            // mount point of the medium (absolute)
    char dataset_root[PATH_MAX];     // where datasets live on it (absolute); <root>/<dataset>/
} jf_storage_spec_t;

typedef struct jf_board_spec {
    char name[JF_IDENT_MAX + 1];     // unique board name; also the agent's ZeroMQ identity
    jf_board_type_t type;            // board type
    jf_board_type_t simulates;       // for type JF_BOARD_SIM: the type simulated; else == type
    size_t n_labels;
    char labels[JF_FLEET_LABELS_MAX][JF_IDENT_MAX + 1];
    size_t n_storage;
    jf_storage_spec_t storage[JF_FLEET_STORAGE_MAX]; // media names are unique per board
    size_t n_modes;                  // power modes: the board's `power_modes` list if given,
    jf_power_mode_t modes[JF_POWER_MODES_MAX]; // else the family table of `simulates`
    int line;                        // 1-based line of the board entry in fleet.yaml
} jf_board_spec_t;

typedef struct jf_coord_settings {
    char agent_endpoint[JF_ENDPOINT_MAX + 1];   // ZeroMQ endpoint the coordinator binds for agents
    char control_endpoint[JF_ENDPOINT_MAX + 1]; // for the CLI; default ipc://<data_dir>/control.sock
    char data_dir[PATH_MAX];         // absolute (relative paths resolve against fleet.yaml's dir)
    char store_path[PATH_MAX];       // absolute SQLite path (relative resolves against data_dir),
                                     // or a postgresql:// URI as written
    int telemetry_hz;                // default telemetry rate, 1..50
    int64_t heartbeat_interval_us;   // 100 ms .. 60 s
    int64_t heartbeat_timeout_us;    // > 2 x interval, <= 10 min: board offline after this
    int64_t run_timeout_us;          // default per-run timeout, 1 s .. one week
    int max_attempts;                // attempts per run before it fails, 1..10
    int64_t handshake_timeout_us;    // 100 ms .. 10 min: a connection that has not completed
                                     // its ZeroMQ handshake by then is closed
    int64_t clock_offset_warn_us;    // 1 us .. 60 s: warn when an agent's |clock offset| is above
    double max_other_load_pct;       // (0, 100]: a run with more other load is left out of the
                                     // analysis on every board; 0: not set (the analysis default)
    jf_retention_after_t telemetry_after; // JF_RETENTION_KEEP when fleet.yaml has no retention
    int64_t telemetry_raw_us;        // keep a finished run's samples this long (>= 1 s); 0: KEEP
    int64_t min_free_bytes;          // free-space floor of the store's filesystem; 0: none
    jf_limits_t limits;              // per-board message limits and quarantine (jf_limits.h)
    jf_influx_config_t influx;       // InfluxDB exporter; .enabled false without the key
} jf_coord_settings_t;

typedef struct jf_fleet_config {
    char source[PATH_MAX];           // file name used in error messages
    jf_coord_settings_t coord;
    size_t n_boards;
    jf_board_spec_t *boards;         // owned; n_boards entries in file order
} jf_fleet_config_t;

// Loads and validates a fleet.yaml file. Caller owns the result; release with
// jf_fleet_config_destroy. NULL on failure with err "<file>:<line>:<col>: <what>, expected <...>".
jf_fleet_config_t *jf_fleet_config_load(const char *path, jf_err_t *err);

// Same from memory; source_name is used in messages and base_dir resolves relative paths
// (NULL means the current directory).
jf_fleet_config_t *jf_fleet_config_parse(const char *text, size_t len, const char *source_name,
                                         const char *base_dir, jf_err_t *err);

// Frees the config and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void jf_fleet_config_destroy(jf_fleet_config_t **self_p);

// The board named name, or NULL. Borrowed; valid until the config is destroyed.
const jf_board_spec_t *jf_fleet_config_board(const jf_fleet_config_t *self, const char *name);

// The board's storage spec for a medium, or NULL.
const jf_storage_spec_t *jf_board_spec_storage(const jf_board_spec_t *board, const char *medium);

// The board's power mode by name or, if the text is all digits, by id; NULL if absent.
const jf_power_mode_t *jf_board_spec_mode(const jf_board_spec_t *board, const char *name_or_id);

// True if the board has the label.
bool jf_board_spec_has_label(const jf_board_spec_t *board, const char *label);

#endif
