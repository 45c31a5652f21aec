/* A run's trainer inside a container (docs/containers.md): the agent's configured container
 * command (--container: the engine, `run`, its options, the image) wrapped around the
 * platform's trainer command, so that the trainer writes the same record lines through the
 * engine's stdout. Not the engine itself, and no image building (scripts/container-rootfs.sh). */
#ifndef AGENT_CONTAINER_H
#define AGENT_CONTAINER_H

#include "agent_platform_run.h"
#include "jf_err.h"

#include <limits.h>
#include <stddef.h>

#define AGENT_CONTAINER_WORDS_MAX 24 // words of --container

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

// Fills *ret_out with the container command around in (the platform's trainer): the engine
// and "run", then "-v DIR:DIR:ro" for dataset_dir (NULL or "": none), the configured options and
// image, then in's program and arguments. Returns 0; -ENOENT with err when no engine is
// configured; -ENOSPC with err when the words do not fit. ret_out's strings point into its own
// buffer, so it must not be copied.
int agent_container_wrap(const agent_container_t *self, const char *dataset_dir,
                         const agent_platform_trainer_t *in, agent_platform_trainer_t *ret_out,
                         jf_err_t *err);

#endif
