/* A run's trainer inside a container (docs/containers.md): the agent's configured container
 * command (--container: the engine, `run`, its options, the image) wrapped around the
 * platform's trainer command, so that the trainer writes the same record lines through the
 * engine's stdout. Not the engine itself, and no image building (scripts/container-rootfs.sh). */
#ifndef AGENT_CONTAINER_H
#define AGENT_CONTAINER_H

#include "agent_platform_run.h"
#include "jf_err.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_CONTAINER_WORDS_MAX 24 // words of --container
#define AGENT_CONTAINER_NAME_MAX  96 // a run's container name, with its NUL

// The parsed --container command (a plain value record; words point into buf).
typedef struct agent_container {
    size_t n_words;                                   // 0: no container engine configured
    const char *words[AGENT_CONTAINER_WORDS_MAX + 1]; // engine path, "run", options..., image
    char buf[PATH_MAX];                               // the words' text
} agent_container_t;

// Parses text (words split on spaces) into *ret: the first word an absolute path (the engine),
// the second "run", at least one more (the image, or --rootfs DIR). "" or NULL: none configured
// (n_words 0). Returns 0, or -EINVAL with err "--container '...': ...".
int agent_container_parse(const char *text, agent_container_t *ret, jf_err_t *err);

// The name of a run attempt's container, the same in every agent process of the board (so that
// a restarted agent that re-attaches to the engine knows it): "jf-" BOARD "-" a 64-bit FNV-1a
// hash of run_id in hex "-" ATTEMPT, the board's characters outside [A-Za-z0-9_.-] as '_' and
// the board cut to 48 characters. buf holds AGENT_CONTAINER_NAME_MAX.
void agent_container_name(const char *board, const char *run_id, int64_t attempt,
                          char buf[AGENT_CONTAINER_NAME_MAX]);

// Fills *ret_out with the container command around in (the platform's trainer): the engine
// and "run", then "--name NAME" (NULL: none), "-v DIR:DIR:ro" for dataset_dir (NULL or "":
// none), the configured options and image, then in's program and arguments. Returns 0; -ENOENT with
// err when no engine is configured; -ENOSPC with err when the words do not fit. ret_out's strings
// point into its own buffer, so it must not be copied.
int agent_container_wrap(const agent_container_t *self, const char *name, const char *dataset_dir,
                         const agent_platform_trainer_t *in, agent_platform_trainer_t *ret_out,
                         jf_err_t *err);

// Starts `ENGINE kill NAME`, then `ENGINE rm -f NAME`, in the background (their output
// discarded, nobody waits for them: a grandchild the agent does not keep), so that a container
// whose engine process was killed or died does not keep running after its run ended (SIGKILL at
// once: podman's `rm -f` alone first waits out the container's 10 s stop timeout). Returns 0, or a
// negative errno when it could not be started (err says why).
int agent_container_remove(const agent_container_t *self, const char *name, jf_err_t *err);

// True when name is one of board's run container names (as agent_container_name makes them:
// exactly "jf-" BOARD "-", 16 lowercase hex digits, "-", an attempt), so that a board whose name
// starts with another's ("nx-1" and "nx-1-b") never claims the other's containers.
bool agent_container_is_boards(const char *board, const char *name);

// Lists the engine's containers, running or stopped, named as board's run containers
// (agent_container_is_boards), by running `ENGINE ps -a --filter name=jf-BOARD- --format
// {{.Names}}` and reading its output for at most timeout_ms. Up to max names into names;
// *ret_n says how many. Returns 0; -ENOENT when no engine is configured; -ETIMEDOUT (the engine
// is killed); -EIO when it fails or cannot be started (err says why, with its output's start).
int agent_container_list(const agent_container_t *self, const char *board,
                         char (*names)[AGENT_CONTAINER_NAME_MAX], size_t max, size_t *ret_n,
                         int timeout_ms, jf_err_t *err);

#endif
