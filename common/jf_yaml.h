/* A small YAML layer over libyaml's event API: parses one document into a tree of scalars,
 * sequences and mappings that keeps every node's 1-based line and column, and rejects what our
 * config files never need (anchors, aliases, tags, duplicate keys, deep nesting, several
 * documents). Not a general YAML library. Implements reliability-security.md §5.2. */
#ifndef JF_YAML_H
#define JF_YAML_H

#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JF_YAML_DEPTH_MAX 32 // deepest nesting of sequences and mappings (the root is level 1)

typedef enum jf_yaml_kind {
    JF_YAML_SCALAR = 0,
    JF_YAML_SEQUENCE,
    JF_YAML_MAPPING,
} jf_yaml_kind_t;

typedef struct jf_yaml jf_yaml_t;           // a parsed document; owns every node
typedef struct jf_yaml_node jf_yaml_node_t; // one node; always borrowed from its document

// Parses text (len bytes, need not be NUL-terminated) as one YAML document. source names the
// input in messages ("fleet.yaml"; NULL means "<input>") and is copied. Caller owns the result;
// release with jf_yaml_destroy. NULL on failure with err "<source>:<line>:<col>: <what>", code
// -EINVAL (syntax, anchor, alias, tag, duplicate or non-scalar key, nesting deeper than
// JF_YAML_DEPTH_MAX, more than one document, empty document), -EFBIG (len > max_bytes) or
// -ENOMEM.
jf_yaml_t *jf_yaml_parse(const char *text, size_t len, const char *source, size_t max_bytes,
                         jf_err_t *err);

// Reads the file at path (at most max_bytes) and parses it as jf_yaml_parse does, with path as
// the source name. Also fails with -errno and "<path>: cannot read: <reason>" when the file
// cannot be opened or read. Caller owns the result; release with jf_yaml_destroy.
jf_yaml_t *jf_yaml_load(const char *path, size_t max_bytes, jf_err_t *err);

// Frees the document and all its nodes and sets *self_p to NULL. Accepts NULL and *self_p == NULL.
void jf_yaml_destroy(jf_yaml_t **self_p);

// The document's root node (never NULL). Borrowed; valid until the document is destroyed.
const jf_yaml_node_t *jf_yaml_root(const jf_yaml_t *self);

// The node's kind, and its 1-based line and column in the source.
jf_yaml_kind_t jf_yaml_node_kind(const jf_yaml_node_t *node);
int jf_yaml_node_line(const jf_yaml_node_t *node);
int jf_yaml_node_column(const jf_yaml_node_t *node);

// A scalar's text (NUL-terminated, never containing NUL); NULL for a sequence or mapping.
// Borrowed; valid until the document is destroyed.
const char *jf_yaml_node_text(const jf_yaml_node_t *node);

// Number of items of a sequence or of key/value pairs of a mapping; 0 for a scalar.
size_t jf_yaml_node_size(const jf_yaml_node_t *node);

// Item i of a sequence (NULL if out of range or not a sequence). Borrowed.
const jf_yaml_node_t *jf_yaml_node_item(const jf_yaml_node_t *seq, size_t i);

// Key node (always a scalar) and value node of pair i of a mapping, in file order; NULL if out
// of range or not a mapping. Borrowed.
const jf_yaml_node_t *jf_yaml_node_key(const jf_yaml_node_t *map, size_t i);
const jf_yaml_node_t *jf_yaml_node_value(const jf_yaml_node_t *map, size_t i);

// The value for key in a mapping, or NULL if the key is absent or map is not a mapping. Borrowed.
const jf_yaml_node_t *jf_yaml_node_get(const jf_yaml_node_t *map, const char *key);

// Like jf_yaml_node_get, but a missing key is an error: returns 0 and writes *ret_value, or
// -EINVAL with err "<pos of map>: missing required key '<key>' in <context>".
int jf_yaml_node_require(const jf_yaml_node_t *map, const char *key, const char *context,
                         const jf_yaml_node_t **ret_value, jf_err_t *err);

// Returns 0 if node has the given kind, else -EINVAL with err "<pos>: '<key>' must be a <kind>,
// got a <kind>" (the key is the nearest mapping key above the node).
int jf_yaml_node_expect(const jf_yaml_node_t *node, jf_yaml_kind_t kind, jf_err_t *err);

// Checks that every key of the mapping is one of allowed[0..n_allowed). Returns 0, or -EINVAL
// for the first other key, with err "<pos of key>: unknown key '<key>' in <context>, expected
// one of: <allowed>; did you mean '<closest>'?" (the suggestion only when one is within edit
// distance 2). Also -EINVAL if map is not a mapping.
int jf_yaml_check_keys(const jf_yaml_node_t *map, const char *const *allowed, size_t n_allowed,
                       const char *context, jf_err_t *err);

// Fills err with "<source>:<line>:<col>: " and the printf-style message, and returns code.
// err may be NULL. For loaders' own checks, so every message carries the node's position.
int jf_yaml_error(jf_err_t *err, int code, const jf_yaml_node_t *node, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

// The candidate closest to word by edit distance, if that distance is at most 2 and shorter
// than word; else NULL. Returns one of the candidates (borrowed). Cheap "did you mean".
const char *jf_yaml_suggest(const char *word, const char *const *candidates, size_t n);

// Scalar conversions through jf_parse_* (same syntax and ranges). Each returns 0 and writes
// *ret_* only on success; else -EINVAL with err "<pos>: '<key>': <jf_parse reason>", or
// "'<key>' must be a scalar" for a sequence or mapping.
int jf_yaml_node_to_i64(const jf_yaml_node_t *node, int64_t min, int64_t max, int64_t *ret_value,
                        jf_err_t *err);
int jf_yaml_node_to_int(const jf_yaml_node_t *node, int min, int max, int *ret_value,
                        jf_err_t *err);
int jf_yaml_node_to_double(const jf_yaml_node_t *node, double min, double max, double *ret_value,
                           jf_err_t *err);
int jf_yaml_node_to_bool(const jf_yaml_node_t *node, bool *ret_value, jf_err_t *err);
int jf_yaml_node_to_freq_hz(const jf_yaml_node_t *node, int64_t min_hz, int64_t max_hz,
                            int64_t *ret_hz, jf_err_t *err);
int jf_yaml_node_to_duration_us(const jf_yaml_node_t *node, int64_t min_us, int64_t max_us,
                                int64_t *ret_us, jf_err_t *err);

// Copies a scalar into buf (size bytes with the NUL). Returns 0, or -EINVAL if the node is not a
// scalar or the text does not fit ("'<key>' is longer than <size - 1> bytes").
int jf_yaml_node_to_str(const jf_yaml_node_t *node, char *buf, size_t size, jf_err_t *err);

// Like jf_yaml_node_to_str, and the text must pass jf_parse_is_ident.
int jf_yaml_node_to_ident(const jf_yaml_node_t *node, char *buf, size_t size, jf_err_t *err);

#endif
