/* agent_nvpmodel_t's body, the parser state and the helpers that agent_nvpmodel.c (the file,
 * the section headers, the accessors) and agent_nvpmodel_lines.c (the lines inside sections)
 * share. Not for use outside them. */
#ifndef AGENT_NVPMODEL_INTERNAL_H
#define AGENT_NVPMODEL_INTERNAL_H

#include "agent_nvpmodel.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AGENT_NVPMODEL_TOKENS_MAX 8 // fields kept per line; more is always an error

struct agent_nvpmodel {
    int default_id;                                           // PM_CONFIG DEFAULT
    int default_line;                                         // line of PM_CONFIG; 0 until seen
    size_t n_params;                                          // entries used in params
    agent_nvpmodel_param_t params[AGENT_NVPMODEL_PARAMS_MAX]; // in file order
    size_t n_modes;                                           // entries used in modes
    agent_nvpmodel_mode_t modes[AGENT_NVPMODEL_MODES_MAX];    // in file order
};

typedef enum agent_nvpmodel_section {
    AGENT_NVPMODEL_SECTION_NONE = 0,
    AGENT_NVPMODEL_SECTION_PARAM,
    AGENT_NVPMODEL_SECTION_MODE,
    AGENT_NVPMODEL_SECTION_CONFIG,
} agent_nvpmodel_section_t;

typedef struct agent_nvpmodel_parser {
    agent_nvpmodel_t *conf;           // being filled
    const char *name;                 // file name for messages
    int line;                         // current line, 1-based
    agent_nvpmodel_section_t section; // the open section
    jf_err_t *err;                    // borrowed; may be NULL
} agent_nvpmodel_parser_t;

// Fills p->err with "<file>:<line>: <message>" and returns -EINVAL.
int agent_nvpmodel_fail(agent_nvpmodel_parser_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

// True if s is 1..max of [A-Za-z0-9_].
bool agent_nvpmodel_is_name(const char *s, size_t max);

// True if tok is a decimal integer in [min, max]: an optional '-' and digits only (no '+',
// blanks or hex); the value goes to *ret.
bool agent_nvpmodel_is_int(const char *tok, int64_t min, int64_t max, int64_t *ret);

// The index of word in words, or n.
size_t agent_nvpmodel_index(const char *word, const char *const *words, size_t n);

// The index of the PARAM named name, or -1.
int agent_nvpmodel_find_param(const agent_nvpmodel_t *conf, const char *name);

// The index of par's argument named name, or -1.
int agent_nvpmodel_find_arg(const agent_nvpmodel_param_t *par, const char *name);

// A line below a PARAM header: "<ARG> <path>", or "<ARG> <dir> <attribute>" for HWMON.
int agent_nvpmodel_param_line(agent_nvpmodel_parser_t *p, char **toks, size_t n);

// A line below a POWER_MODEL header: "<PARAM> <ARG> <VALUE>".
int agent_nvpmodel_mode_line(agent_nvpmodel_parser_t *p, char **toks, size_t n);

#endif
