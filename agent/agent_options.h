/* jetfleet-agent's command line: parsed and checked into a plain record. */
#ifndef AGENT_OPTIONS_H
#define AGENT_OPTIONS_H

#include "agent_platform.h"
#include "agent_spool.h"
#include "jf_err.h"
#include "jf_log.h"
#include "jf_msg_session.h"

#include <limits.h>
#include <stdint.h>

typedef struct agent_options {
    char endpoint[256];                             // --coordinator
    char name[JF_IDENT_MAX + 1];                    // --name
    char train_bin[PATH_MAX];                       // --train-bin, default beside the agent
    agent_platform_kind_t platform;                 // --platform, default auto
    jf_board_type_t sim_type;                       // the type of --platform sim:<type>
    char sysfs_root[PATH_MAX];                      // --sysfs-root, default /sys
    char proc_root[PATH_MAX];                       // --proc-root, default /proc
    char etc_root[PATH_MAX];                        // --etc-root, default /etc
    char var_root[PATH_MAX];                        // --var-root, default /var
    char tegrastats[PATH_MAX];                      // --tegrastats: the rails' fallback,
                                                    // default /usr/bin/tegrastats; "none": off
    size_t n_storage;
    jf_hello_storage_t storage[JF_HELLO_STORAGE_MAX]; // --storage MEDIUM=DIR or --config's board
    char storage_mount[JF_HELLO_STORAGE_MAX][PATH_MAX]; // each medium's mount from --config;
                                                        // "" from --storage (not checked)
    char container[PATH_MAX];                           // --container CMD: the container command
                                                        // (docs/containers.md); "" if none
    char privhelper[PATH_MAX];                          // --privhelper CMD: words split on spaces,
                                                        // the first an absolute path; "" if none
    jf_log_level_t log_level;                       // --log-level
    char parse_tegrastats[PATH_MAX];                // --parse-tegrastats FILE: import mode if set
    bool sample_once;                               // --sample-once: print one sample and exit
    char sim_params[PATH_MAX];                      // --sim-params, default: the installed or
                                                    // build tree's sim_params.yaml
    char sim_train_bin[PATH_MAX];                   // --sim-train-bin, default
                                                    // jetfleet-train-sim beside the agent
    uint64_t sim_seed;                              // --sim-seed, default 1
    double sim_speed;                               // --sim-speed, default 1
    double sim_scale;                               // --sim-scale, default 1
    bool sim_option;                                // one of the --sim-* options was given
    char state_dir[PATH_MAX];                       // --state-dir, default
                                                    // AGENT_OPTIONS_STATE_DIR: holds the spool
    int64_t spool_max_bytes;                        // --spool-max-bytes, default
                                                    // AGENT_SPOOL_BYTES_MAX
    bool spool_in_memory;                           // --spool-in-memory: no file (tests only)
    bool spool_forget_on_send;                      // --spool-forget-on-send: sent counts as
                                                    // acknowledged (tests only: the control
                                                    // that shows what acks save)
    char key[PATH_MAX];                             // --key: this board's keypair, default
                                                    // <state_dir>/AGENT_OPTIONS_KEY_NAME
    char coordinator_key[PATH_MAX];                 // --coordinator-key: pinned public key
    bool insecure_loopback;                         // --insecure-loopback: plaintext, loopback
    bool keygen;                                    // --keygen: write the keypair and exit
    bool help;                                      // --help: print the usage and exit
    bool version;                                   // --version: print the version and exit
} agent_options_t;

#define AGENT_OPTIONS_STATE_DIR "/var/lib/jetfleet-agent"
#define AGENT_OPTIONS_KEY_NAME  "agent.key" // in the state directory; the secret in agent.key_secret


#define AGENT_OPTIONS_SIM_PARAMS_NAME "sim_params.yaml"
#define AGENT_OPTIONS_SIM_SEED_MAX    INT64_MAX // as jetfleet-train's --sim-seed
#define AGENT_OPTIONS_SIM_SPEED_MIN   1.0       // and its --sim-speed range (train_sim.h)
#define AGENT_OPTIONS_SIM_SPEED_MAX   100000.0
#define AGENT_OPTIONS_SIM_SCALE_MIN   0.0001    // and its --sim-scale range
#define AGENT_OPTIONS_SIM_SCALE_MAX   1000.0

#define AGENT_OPTIONS_HELPER_WORDS_MAX 12 // words of --privhelper (AGENT_POWER_HELPER_ARGS_MAX)

// Parses argv. --tegrastats takes an absolute path or "none". --sim-params, --sim-train-bin,
// --sim-seed, --sim-speed and --sim-scale need --platform sim:TYPE. With --parse-tegrastats FILE
// only --log-level may accompany it (import mode, no
// coordinator). --state-dir must be absolute; --spool-max-bytes takes bytes (1 .. 2^62).
// --keygen writes --key (default <state-dir>/agent.key) and takes --name (the board metadata).
// --insecure-loopback is refused unless --coordinator is tcp://127.0.0.1:PORT or ipc://.
// --sample-once takes the platform options (--platform, --sysfs-root, --proc-root,
// --etc-root) and --log-level but no coordinator. Otherwise --coordinator and --name are
// required. --help or --version ends the parse where it stands: nothing else is then checked.
// Returns 0, or -EINVAL with err saying what is wrong (main prints usage, exit 2).
int agent_options_parse(int argc, char **argv, agent_options_t *ret_opts, jf_err_t *err);

const char *agent_options_usage(void);

// Splits a --privhelper command into words at spaces (no quoting: paths with spaces are not
// supported), writing NUL-terminated words into buf (size bytes, at least strlen(text) + 1) and
// pointers to them into argv (max + 1 entries, NULL-terminated). Returns the number of words, or
// -EINVAL with err when there are none, more than max, or the first is not an absolute path.
int agent_options_split_command(const char *text, char *buf, size_t size, const char **argv,
                                size_t max, jf_err_t *err);

#endif
