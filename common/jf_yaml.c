/* YAML document tree over libyaml's event API (jf_yaml.h). libyaml marks are 0-based and are
 * printed 1-based. Rejects anchors, aliases, tags, duplicate and non-scalar keys, deep nesting and
 * extra documents (reliability-security.md §5.2). Not a YAML writer, not a schema checker. */
#include "jf_yaml.h"

#include "jf_parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yaml.h>

#define S_DEFAULT_SOURCE   "<input>"
#define S_SUGGEST_MAX_LEN  64 // longer words get no "did you mean"
#define S_SUGGEST_MAX_DIST 2
#define S_KEYSET_MIN_SLOTS 64
#define S_LABEL_MAX        96 // "'<key>'[<index>]" as used in messages

struct jf_yaml_node {
    jf_yaml_kind_t kind;
    int line;                     // 1-based
    int column;                   // 1-based, in characters
    size_t index;                 // item or pair index in the parent
    const char *source;           // borrowed; owned by the document
    const jf_yaml_node_t *parent; // borrowed; NULL for the root
    const jf_yaml_node_t *key;    // borrowed; the key node of a mapping value, else NULL
    char *text;                   // owned; scalars only
    size_t count;                 // entries used in children
    size_t cap;                   // entries allocated in children
    jf_yaml_node_t **children;    // owned; sequence items, or mapping key/value pairs flattened
};

struct jf_yaml {
    char *source;         // owned; name used in messages
    jf_yaml_node_t *root; // owned
};

// Open-addressing set of (mapping, key text) over the whole document, to find duplicate keys in
// O(1) per key: libyaml accepts duplicates silently.
typedef struct s_keyset {
    size_t n_slots; // 0 or a power of two
    size_t n_used;
    const jf_yaml_node_t **slots; // owned array of borrowed key nodes
} s_keyset_t;

typedef struct s_reader {
    yaml_parser_t parser;
    yaml_event_t event; // the current event, valid while has_event
    bool has_event;
    const char *source; // borrowed
    const char *text;   // borrowed input, for positions of reader errors
    size_t len;
    s_keyset_t keys;
    jf_err_t *err; // borrowed; may be NULL
} s_reader_t;

static void s_node_free(jf_yaml_node_t *node)
{
    if (!node) {
        return;
    }
    for (size_t i = 0; i < node->count; i++) {
        s_node_free(node->children[i]);
    }
    free(node->children);
    free(node->text);
    free(node);
}

static uint64_t s_key_hash(const jf_yaml_node_t *key)
{
    uint64_t h = UINT64_C(14695981039346656037); // FNV-1a 64
    for (const unsigned char *p = (const unsigned char *) key->text; *p; p++) {
        h = (h ^ *p) * UINT64_C(1099511628211);
    }
    return h ^ ((uint64_t) (uintptr_t) key->parent * UINT64_C(0x9e3779b97f4a7c15));
}

static int s_keyset_grow(s_keyset_t *set)
{
    size_t n_slots = set->n_slots ? 2 * set->n_slots : S_KEYSET_MIN_SLOTS;
    const jf_yaml_node_t **slots = calloc(n_slots, sizeof *slots);
    if (!slots) {
        return -ENOMEM;
    }
    for (size_t i = 0; i < set->n_slots; i++) {
        if (set->slots[i]) {
            size_t j = (size_t) s_key_hash(set->slots[i]) & (n_slots - 1);
            while (slots[j]) {
                j = (j + 1) & (n_slots - 1);
            }
            slots[j] = set->slots[i];
        }
    }
    free(set->slots);
    set->slots = slots;
    set->n_slots = n_slots;
    return 0;
}

// Adds key (its parent must be set). *ret_dup is the earlier equal key of the same mapping, or
// NULL when key was added. Returns 0 or -ENOMEM.
static int s_keyset_add(s_keyset_t *set, const jf_yaml_node_t *key, const jf_yaml_node_t **ret_dup)
{
    if (2 * (set->n_used + 1) > set->n_slots && s_keyset_grow(set) != 0) {
        return -ENOMEM;
    }
    size_t mask = set->n_slots - 1;
    size_t j = (size_t) s_key_hash(key) & mask;
    while (set->slots[j]) {
        const jf_yaml_node_t *other = set->slots[j];
        if (other->parent == key->parent && strcmp(other->text, key->text) == 0) {
            *ret_dup = other;
            return 0;
        }
        j = (j + 1) & mask;
    }
    set->slots[j] = key;
    set->n_used++;
    *ret_dup = NULL;
    return 0;
}

static int s_mark_error(const s_reader_t *r, yaml_mark_t mark, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int s_mark_error(const s_reader_t *r, yaml_mark_t mark, int code, const char *fmt, ...)
{
    char what[JF_ERR_MSG_MAX] = {0};
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(what, sizeof what, fmt, ap); // truncation is acceptable
    va_end(ap);
    return jf_err_set(r->err, code, "%s:%zu:%zu: %s", r->source, mark.line + 1, mark.column + 1,
                      what);
}

// Reader errors (bad UTF-8, control characters) carry a byte offset, not a mark: count lines and
// characters (UTF-8 lead bytes) up to it.
static int s_reader_error(const s_reader_t *r)
{
    yaml_mark_t mark = {0};
    for (size_t i = 0; i < r->parser.problem_offset && i < r->len; i++) {
        unsigned char c = (unsigned char) r->text[i];
        if (c == '\n') {
            mark.line++;
            mark.column = 0;
        } else if ((c & 0xC0) != 0x80) {
            mark.column++;
        }
    }
    if (r->parser.problem_value >= 0) {
        return s_mark_error(r, mark, -EINVAL, "%s (byte 0x%02x)", r->parser.problem,
                            (unsigned) r->parser.problem_value);
    }
    return s_mark_error(r, mark, -EINVAL, "%s", r->parser.problem);
}

static int s_syntax_error(const s_reader_t *r)
{
    const yaml_parser_t *p = &r->parser;
    if (p->error == YAML_MEMORY_ERROR) {
        return jf_err_set(r->err, -ENOMEM, "%s: out of memory while parsing YAML", r->source);
    }
    if (p->error == YAML_READER_ERROR && p->problem) {
        return s_reader_error(r);
    }
    const char *problem = p->problem ? p->problem : "invalid YAML";
    if (p->context) {
        return s_mark_error(r, p->problem_mark, -EINVAL, "%s (%s at %zu:%zu)", problem, p->context,
                            p->context_mark.line + 1, p->context_mark.column + 1);
    }
    return s_mark_error(r, p->problem_mark, -EINVAL, "%s", problem);
}

static int s_next(s_reader_t *r)
{
    if (r->has_event) {
        yaml_event_delete(&r->event);
        r->has_event = false;
    }
    if (!yaml_parser_parse(&r->parser, &r->event)) {
        return s_syntax_error(r);
    }
    r->has_event = true;
    return 0;
}

static int s_check_properties(const s_reader_t *r, const yaml_char_t *anchor,
                              const yaml_char_t *tag)
{
    if (anchor) {
        return s_mark_error(r, r->event.start_mark, -EINVAL,
                            "anchors are not allowed, found '&%.64s'", (const char *) anchor);
    }
    if (tag) {
        return s_mark_error(r, r->event.start_mark, -EINVAL,
                            "explicit tags are not allowed, found '%.64s'", (const char *) tag);
    }
    return 0;
}

static jf_yaml_node_t *s_node_new(const s_reader_t *r, jf_yaml_kind_t kind,
                                  const jf_yaml_node_t *parent)
{
    jf_yaml_node_t *node = calloc(1, sizeof *node);
    if (node) {
        node->kind = kind;
        node->line = (int) r->event.start_mark.line + 1;
        node->column = (int) r->event.start_mark.column + 1;
        node->source = r->source;
        node->parent = parent;
    }
    return node;
}

// Appends child to node, taking it over; on failure child is freed.
static int s_append(const s_reader_t *r, jf_yaml_node_t *node, jf_yaml_node_t *child)
{
    if (node->count == node->cap) {
        size_t cap = node->cap ? 2 * node->cap : 8;
        jf_yaml_node_t **children = realloc(node->children, cap * sizeof *children);
        if (!children) {
            s_node_free(child);
            return jf_err_set(r->err, -ENOMEM, "%s: out of memory while parsing YAML", r->source);
        }
        node->children = children;
        node->cap = cap;
    }
    child->index = node->kind == JF_YAML_MAPPING ? node->count / 2 : node->count;
    node->children[node->count++] = child;
    return 0;
}

static int s_parse_scalar(const s_reader_t *r, const jf_yaml_node_t *parent,
                          jf_yaml_node_t **ret_node)
{
    const yaml_event_t *e = &r->event;
    int rc = s_check_properties(r, e->data.scalar.anchor, e->data.scalar.tag);
    if (rc != 0) {
        return rc;
    }
    if (memchr(e->data.scalar.value, '\0', e->data.scalar.length)) {
        return s_mark_error(r, e->start_mark, -EINVAL, "scalar contains a NUL character");
    }
    jf_yaml_node_t *node = s_node_new(r, JF_YAML_SCALAR, parent);
    char *text = malloc(e->data.scalar.length + 1);
    if (!node || !text) {
        free(node);
        free(text);
        return jf_err_set(r->err, -ENOMEM, "%s: out of memory while parsing YAML", r->source);
    }
    memcpy(text, e->data.scalar.value, e->data.scalar.length);
    text[e->data.scalar.length] = '\0';
    node->text = text;
    *ret_node = node;
    return 0;
}

static int s_parse_node(s_reader_t *r, const jf_yaml_node_t *parent, int depth,
                        jf_yaml_node_t **ret_node);

static int s_parse_items(s_reader_t *r, jf_yaml_node_t *seq, int depth)
{
    for (;;) {
        int rc = s_next(r);
        if (rc != 0 || r->event.type == YAML_SEQUENCE_END_EVENT) {
            return rc;
        }
        jf_yaml_node_t *item = NULL;
        rc = s_parse_node(r, seq, depth + 1, &item);
        rc = rc ? rc : s_append(r, seq, item);
        if (rc != 0) {
            return rc;
        }
    }
}

static int s_parse_key(s_reader_t *r, const jf_yaml_node_t *map, jf_yaml_node_t **ret_key)
{
    if (r->event.type != YAML_SCALAR_EVENT && r->event.type != YAML_ALIAS_EVENT) {
        return s_mark_error(r, r->event.start_mark, -EINVAL,
                            "mapping keys must be scalars, found a sequence or mapping");
    }
    jf_yaml_node_t *key = NULL;
    int rc = s_parse_node(r, map, 0, &key);
    const jf_yaml_node_t *dup = NULL;
    if (rc == 0 && s_keyset_add(&r->keys, key, &dup) != 0) {
        rc = jf_err_set(r->err, -ENOMEM, "%s: out of memory while parsing YAML", r->source);
    } else if (rc == 0 && dup) {
        rc = s_mark_error(r, r->event.start_mark, -EINVAL, "duplicate key '%.64s' (first at %d:%d)",
                          key->text, dup->line, dup->column);
    }
    if (rc != 0) {
        s_node_free(key);
        return rc;
    }
    *ret_key = key;
    return 0;
}

static int s_parse_pairs(s_reader_t *r, jf_yaml_node_t *map, int depth)
{
    for (;;) {
        int rc = s_next(r);
        if (rc != 0 || r->event.type == YAML_MAPPING_END_EVENT) {
            return rc;
        }
        jf_yaml_node_t *key = NULL;
        rc = s_parse_key(r, map, &key);
        rc = rc ? rc : s_append(r, map, key);
        rc = rc ? rc : s_next(r);
        jf_yaml_node_t *value = NULL;
        rc = rc ? rc : s_parse_node(r, map, depth + 1, &value);
        if (rc != 0) {
            return rc;
        }
        value->key = key;
        rc = s_append(r, map, value);
        if (rc != 0) {
            return rc;
        }
    }
}

static int s_parse_collection(s_reader_t *r, const jf_yaml_node_t *parent, int depth,
                              jf_yaml_node_t **ret_node)
{
    bool is_map = r->event.type == YAML_MAPPING_START_EVENT;
    int rc = is_map ? s_check_properties(r, r->event.data.mapping_start.anchor,
                                         r->event.data.mapping_start.tag)
                    : s_check_properties(r, r->event.data.sequence_start.anchor,
                                         r->event.data.sequence_start.tag);
    if (rc != 0) {
        return rc;
    }
    if (depth > JF_YAML_DEPTH_MAX) {
        return s_mark_error(r, r->event.start_mark, -EINVAL, "nesting is deeper than %d levels",
                            JF_YAML_DEPTH_MAX);
    }
    jf_yaml_node_t *node = s_node_new(r, is_map ? JF_YAML_MAPPING : JF_YAML_SEQUENCE, parent);
    if (!node) {
        return jf_err_set(r->err, -ENOMEM, "%s: out of memory while parsing YAML", r->source);
    }
    rc = is_map ? s_parse_pairs(r, node, depth) : s_parse_items(r, node, depth);
    if (rc != 0) {
        s_node_free(node);
        return rc;
    }
    *ret_node = node;
    return 0;
}

static int s_parse_node(s_reader_t *r, const jf_yaml_node_t *parent, int depth,
                        jf_yaml_node_t **ret_node)
{
    switch (r->event.type) {
    case YAML_ALIAS_EVENT:
        return s_mark_error(r, r->event.start_mark, -EINVAL,
                            "aliases are not allowed, found '*%.64s'",
                            (const char *) r->event.data.alias.anchor);
    case YAML_SCALAR_EVENT:
        return s_parse_scalar(r, parent, ret_node);
    case YAML_SEQUENCE_START_EVENT:
    case YAML_MAPPING_START_EVENT:
        return s_parse_collection(r, parent, depth, ret_node);
    default:
        // libyaml's grammar only gives node events here; anything else is a libyaml bug.
        return s_mark_error(r, r->event.start_mark, -EINVAL, "unexpected YAML event %d",
                            (int) r->event.type);
    }
}

// After the root node: the document must end, and no second document may follow.
static int s_parse_end(s_reader_t *r, const jf_yaml_node_t *root)
{
    int rc = s_next(r); // DOCUMENT_END
    rc = rc ? rc : s_next(r);
    if (rc == 0 && r->event.type == YAML_DOCUMENT_START_EVENT) {
        return s_mark_error(r, r->event.start_mark, -EINVAL,
                            "more than one document, expected exactly one");
    }
    if (rc == 0 && root->kind == JF_YAML_SCALAR && root->text[0] == '\0') {
        return jf_err_set(r->err, -EINVAL, "%s:%d:%d: empty document", r->source, root->line,
                          root->column);
    }
    return rc;
}

static int s_parse_stream(s_reader_t *r, jf_yaml_node_t **ret_root)
{
    int rc = s_next(r); // STREAM_START
    rc = rc ? rc : s_next(r);
    if (rc != 0) {
        return rc;
    }
    if (r->event.type == YAML_STREAM_END_EVENT) {
        // No document at all (empty, or only comments): there is no better place than the start.
        return jf_err_set(r->err, -EINVAL, "%s:1:1: empty document", r->source);
    }
    jf_yaml_node_t *root = NULL;
    rc = s_next(r);
    rc = rc ? rc : s_parse_node(r, NULL, 1, &root);
    rc = rc ? rc : s_parse_end(r, root);
    if (rc != 0) {
        s_node_free(root);
        return rc;
    }
    *ret_root = root;
    return 0;
}

static int s_parse_text(jf_yaml_t *self, const char *text, size_t len, jf_err_t *err)
{
    s_reader_t r = {.source = self->source, .text = text, .len = len, .err = err};
    if (!yaml_parser_initialize(&r.parser)) {
        return jf_err_set(err, -ENOMEM, "%s: out of memory while parsing YAML", self->source);
    }
    yaml_parser_set_input_string(&r.parser, (const unsigned char *) text, len);
    int rc = s_parse_stream(&r, &self->root);
    if (r.has_event) {
        yaml_event_delete(&r.event);
    }
    yaml_parser_delete(&r.parser);
    free(r.keys.slots);
    return rc;
}

jf_yaml_t *jf_yaml_parse(const char *text, size_t len, const char *source, size_t max_bytes,
                         jf_err_t *err)
{
    source = source ? source : S_DEFAULT_SOURCE;
    if (len > max_bytes) {
        jf_err_set(err, -EFBIG, "%s:1:1: input is larger than the limit of %zu bytes", source,
                   max_bytes);
        return NULL;
    }
    jf_yaml_t *self = calloc(1, sizeof *self);
    if (!self || !(self->source = strdup(source))) {
        jf_err_set(err, -ENOMEM, "%s: out of memory while parsing YAML", source);
        goto fail_destroy;
    }
    if (s_parse_text(self, text ? text : "", text ? len : 0, err) != 0) {
        goto fail_destroy;
    }
    return self;
fail_destroy:
    jf_yaml_destroy(&self);
    return NULL;
}

// Reads at most max_bytes + 1 bytes, so an oversized file is detected without reading it all.
static int s_read_file(const char *path, size_t max_bytes, char **ret_buf, size_t *ret_len,
                       jf_err_t *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return jf_err_set(err, -errno, "%s: cannot read: %s", path, strerror(errno));
    }
    size_t len = 0;
    char *buf = max_bytes < SIZE_MAX ? malloc(max_bytes + 1) : NULL;
    int rc = buf ? 0 : jf_err_set(err, -ENOMEM, "%s: out of memory reading the file", path);
    while (rc == 0 && len <= max_bytes) {
        ssize_t n = read(fd, buf + len, max_bytes + 1 - len);
        if (n < 0 && errno != EINTR) {
            rc = jf_err_set(err, -errno, "%s: cannot read: %s", path, strerror(errno));
        } else if (n == 0) {
            break;
        } else if (n > 0) {
            len += (size_t) n;
        }
    }
    (void) close(fd); // read-only descriptor: nothing to flush, so a close error changes nothing
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *ret_buf = buf;
    *ret_len = len;
    return 0;
}

jf_yaml_t *jf_yaml_load(const char *path, size_t max_bytes, jf_err_t *err)
{
    char *buf = NULL;
    size_t len = 0;
    if (s_read_file(path, max_bytes, &buf, &len, err) != 0) {
        return NULL;
    }
    jf_yaml_t *self = jf_yaml_parse(buf, len, path, max_bytes, err);
    free(buf);
    return self;
}

void jf_yaml_destroy(jf_yaml_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    jf_yaml_t *self = *self_p;
    s_node_free(self->root);
    free(self->source);
    free(self);
    *self_p = NULL;
}

const jf_yaml_node_t *jf_yaml_root(const jf_yaml_t *self)
{
    return self->root;
}

jf_yaml_kind_t jf_yaml_node_kind(const jf_yaml_node_t *node)
{
    return node->kind;
}

int jf_yaml_node_line(const jf_yaml_node_t *node)
{
    return node->line;
}

int jf_yaml_node_column(const jf_yaml_node_t *node)
{
    return node->column;
}

const char *jf_yaml_node_text(const jf_yaml_node_t *node)
{
    return node->text;
}

size_t jf_yaml_node_size(const jf_yaml_node_t *node)
{
    return node->kind == JF_YAML_MAPPING ? node->count / 2 : node->count;
}

const jf_yaml_node_t *jf_yaml_node_item(const jf_yaml_node_t *seq, size_t i)
{
    return seq->kind == JF_YAML_SEQUENCE && i < seq->count ? seq->children[i] : NULL;
}

const jf_yaml_node_t *jf_yaml_node_key(const jf_yaml_node_t *map, size_t i)
{
    return map->kind == JF_YAML_MAPPING && i < map->count / 2 ? map->children[2 * i] : NULL;
}

const jf_yaml_node_t *jf_yaml_node_value(const jf_yaml_node_t *map, size_t i)
{
    return map->kind == JF_YAML_MAPPING && i < map->count / 2 ? map->children[2 * i + 1] : NULL;
}

const jf_yaml_node_t *jf_yaml_node_get(const jf_yaml_node_t *map, const char *key)
{
    for (size_t i = 0; map->kind == JF_YAML_MAPPING && i < map->count / 2; i++) {
        if (strcmp(map->children[2 * i]->text, key) == 0) {
            return map->children[2 * i + 1];
        }
    }
    return NULL;
}

int jf_yaml_error(jf_err_t *err, int code, const jf_yaml_node_t *node, const char *fmt, ...)
{
    char what[JF_ERR_MSG_MAX] = {0};
    va_list ap;
    va_start(ap, fmt);
    (void) vsnprintf(what, sizeof what, fmt, ap); // truncation is acceptable
    va_end(ap);
    return jf_err_set(err, code, "%s:%d:%d: %s", node->source, node->line, node->column, what);
}

int jf_yaml_node_require(const jf_yaml_node_t *map, const char *key, const char *context,
                         const jf_yaml_node_t **ret_value, jf_err_t *err)
{
    const jf_yaml_node_t *value = jf_yaml_node_get(map, key);
    if (!value) {
        return jf_yaml_error(err, -EINVAL, map, "missing required key '%s' in %s", key, context);
    }
    *ret_value = value;
    return 0;
}

// How messages name a node: the nearest mapping key above it, plus the item index when the node
// is a sequence item ("'workers'[2]").
static void s_node_label(const jf_yaml_node_t *node, char *buf, size_t size)
{
    const jf_yaml_node_t *p = node;
    while (p && !p->key) {
        p = p->parent;
    }
    if (!p) {
        (void) snprintf(buf, size, "the document");
        return;
    }
    const char *key = p->key->text;
    if (node->parent && node->parent->kind == JF_YAML_SEQUENCE) {
        (void) snprintf(buf, size, "'%.64s'[%zu]", key, node->index);
    } else {
        (void) snprintf(buf, size, "'%.64s'", key);
    }
}

static const char *s_kind_name(jf_yaml_kind_t kind)
{
    static const char *const names[] = {"scalar", "sequence", "mapping"};
    return names[kind];
}

int jf_yaml_node_expect(const jf_yaml_node_t *node, jf_yaml_kind_t kind, jf_err_t *err)
{
    if (node->kind == kind) {
        return 0;
    }
    char label[S_LABEL_MAX] = {0};
    s_node_label(node, label, sizeof label);
    return jf_yaml_error(err, -EINVAL, node, "%s must be a %s, got a %s", label, s_kind_name(kind),
                         s_kind_name(node->kind));
}

static size_t s_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a);
    size_t lb = strlen(b);
    size_t prev[S_SUGGEST_MAX_LEN + 1] = {0};
    size_t cur[S_SUGGEST_MAX_LEN + 1] = {0};
    for (size_t j = 0; j <= lb; j++) {
        prev[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t best = prev[j - 1] + (a[i - 1] != b[j - 1] ? 1 : 0);
            best = prev[j] + 1 < best ? prev[j] + 1 : best;
            cur[j] = cur[j - 1] + 1 < best ? cur[j - 1] + 1 : best;
        }
        memcpy(prev, cur, sizeof prev);
    }
    return prev[lb];
}

const char *jf_yaml_suggest(const char *word, const char *const *candidates, size_t n)
{
    size_t len = strlen(word);
    if (len > S_SUGGEST_MAX_LEN) {
        return NULL;
    }
    const char *best = NULL;
    size_t best_dist = S_SUGGEST_MAX_DIST + 1;
    for (size_t i = 0; i < n; i++) {
        if (strlen(candidates[i]) > S_SUGGEST_MAX_LEN) {
            continue;
        }
        size_t d = s_edit_distance(word, candidates[i]);
        if (d < best_dist && d < len) {
            best = candidates[i];
            best_dist = d;
        }
    }
    return best;
}

// Joins names with ", " into buf, using at most room characters; ends with "..." when they do
// not all fit.
static void s_join_names(const char *const *names, size_t n, size_t room, char *buf, size_t size)
{
    static const char more[] = ", ...";
    size_t used = 0;
    buf[0] = '\0';
    room = room < size ? room : size - 1;
    for (size_t i = 0; i < n; i++) {
        const char *sep = i ? ", " : "";
        size_t need = strlen(sep) + strlen(names[i]) + (i + 1 < n ? sizeof more - 1 : 0);
        if (used + need > room) {
            (void) snprintf(buf + used, size - used, "%s", i ? more : "...");
            return;
        }
        int w = snprintf(buf + used, size - used, "%s%s", sep, names[i]);
        used += w > 0 ? (size_t) w : 0;
    }
}

static int s_unknown_key(const jf_yaml_node_t *key, const char *const *allowed, size_t n,
                         const char *context, jf_err_t *err)
{
    char hint[S_LABEL_MAX] = {0};
    const char *guess = jf_yaml_suggest(key->text, allowed, n);
    if (guess) {
        (void) snprintf(hint, sizeof hint, "; did you mean '%.64s'?", guess);
    }
    char head[JF_ERR_MSG_MAX] = {0};
    (void) snprintf(head, sizeof head,
                    "%s:%d:%d: unknown key '%.64s' in %s, expected one of: ", key->source,
                    key->line, key->column, key->text, context);
    size_t fixed = strlen(head) + strlen(hint);
    size_t room = fixed < JF_ERR_MSG_MAX - 1 ? JF_ERR_MSG_MAX - 1 - fixed : 0;
    char list[JF_ERR_MSG_MAX] = {0};
    s_join_names(allowed, n, room, list, sizeof list);
    return jf_err_set(err, -EINVAL, "%s%s%s", head, list, hint);
}

int jf_yaml_check_keys(const jf_yaml_node_t *map, const char *const *allowed, size_t n_allowed,
                       const char *context, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(map, JF_YAML_MAPPING, err);
    for (size_t i = 0; rc == 0 && i < map->count / 2; i++) {
        const jf_yaml_node_t *key = map->children[2 * i];
        bool known = false;
        for (size_t j = 0; j < n_allowed && !known; j++) {
            known = strcmp(key->text, allowed[j]) == 0;
        }
        if (!known) {
            rc = s_unknown_key(key, allowed, n_allowed, context, err);
        }
    }
    return rc;
}

// Prefixes a jf_parse_* failure with the node's position and label.
static int s_wrap(const jf_yaml_node_t *node, int rc, const jf_err_t *inner, jf_err_t *err)
{
    char label[S_LABEL_MAX] = {0};
    s_node_label(node, label, sizeof label);
    return jf_yaml_error(err, rc, node, "%s: %s", label, inner->msg);
}

int jf_yaml_node_to_i64(const jf_yaml_node_t *node, int64_t min, int64_t max, int64_t *ret_value,
                        jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    jf_err_t inner = {0};
    int64_t v = 0;
    rc = jf_parse_i64(node->text, min, max, &v, &inner);
    if (rc != 0) {
        return s_wrap(node, rc, &inner, err);
    }
    *ret_value = v;
    return 0;
}

int jf_yaml_node_to_int(const jf_yaml_node_t *node, int min, int max, int *ret_value, jf_err_t *err)
{
    int64_t v = 0;
    int rc = jf_yaml_node_to_i64(node, min, max, &v, err);
    if (rc == 0) {
        *ret_value = (int) v; // in [min, max], so it fits
    }
    return rc;
}

int jf_yaml_node_to_double(const jf_yaml_node_t *node, double min, double max, double *ret_value,
                           jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    jf_err_t inner = {0};
    double v = 0;
    rc = jf_parse_double(node->text, min, max, &v, &inner);
    if (rc != 0) {
        return s_wrap(node, rc, &inner, err);
    }
    *ret_value = v;
    return 0;
}

int jf_yaml_node_to_bool(const jf_yaml_node_t *node, bool *ret_value, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    jf_err_t inner = {0};
    bool v = false;
    rc = jf_parse_bool(node->text, &v, &inner);
    if (rc != 0) {
        return s_wrap(node, rc, &inner, err);
    }
    *ret_value = v;
    return 0;
}

int jf_yaml_node_to_freq_hz(const jf_yaml_node_t *node, int64_t min_hz, int64_t max_hz,
                            int64_t *ret_hz, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    jf_err_t inner = {0};
    int64_t v = 0;
    rc = jf_parse_freq_hz(node->text, min_hz, max_hz, &v, &inner);
    if (rc != 0) {
        return s_wrap(node, rc, &inner, err);
    }
    *ret_hz = v;
    return 0;
}

int jf_yaml_node_to_duration_us(const jf_yaml_node_t *node, int64_t min_us, int64_t max_us,
                                int64_t *ret_us, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    jf_err_t inner = {0};
    int64_t v = 0;
    rc = jf_parse_duration_us(node->text, min_us, max_us, &v, &inner);
    if (rc != 0) {
        return s_wrap(node, rc, &inner, err);
    }
    *ret_us = v;
    return 0;
}

int jf_yaml_node_to_str(const jf_yaml_node_t *node, char *buf, size_t size, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    size_t len = strlen(node->text);
    if (len >= size) {
        char label[S_LABEL_MAX] = {0};
        s_node_label(node, label, sizeof label);
        return jf_yaml_error(err, -EINVAL, node, "%s is longer than %zu bytes", label, size - 1);
    }
    memcpy(buf, node->text, len + 1);
    return 0;
}

int jf_yaml_node_to_ident(const jf_yaml_node_t *node, char *buf, size_t size, jf_err_t *err)
{
    int rc = jf_yaml_node_expect(node, JF_YAML_SCALAR, err);
    if (rc != 0) {
        return rc;
    }
    if (!jf_parse_is_ident(node->text)) {
        char label[S_LABEL_MAX] = {0};
        s_node_label(node, label, sizeof label);
        return jf_yaml_error(err, -EINVAL, node,
                             "%s must be a name of 1..%d of [a-z0-9._-] starting with a letter or "
                             "digit, got '%.64s'",
                             label, JF_IDENT_MAX, node->text);
    }
    return jf_yaml_node_to_str(node, buf, size, err);
}
