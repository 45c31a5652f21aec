/* CURVE allow-list for the agent endpoint (docs/protocol.md §1.7): a ZAP handler answered from
 * the event loop, key states as files, and the per-message User-Id check. The design follows
 * /work/shared/reference/reliability-security.md §2.3 shape (b): our own handler, one owner. */
#include "coord_auth.h"

#include "jf_curve.h"
#include "jf_fs.h"
#include "jf_log.h"
#include "jf_parse.h"
#include "jf_units.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct coord_auth {
    char keys_dir[PATH_MAX];      // <data_dir>/keys
    zcert_t *cert;                // owned: the coordinator's keypair
    zsock_t *zap;                 // owned: REP bound at COORD_AUTH_ZAP_ENDPOINT
    zhashx_t *accepted;           // owned: Z85 public key -> board name (owned strings)
    zhashx_t *quarantined;        // owned: board name -> reason (owned strings), from quarantined/
    uint64_t generation;          // key loads since start
    struct timespec seen[3];      // mtimes of accepted/, revoked/, quarantined/ at the last load
    int64_t next_refresh_us;      // monotonic time of the next look at the directories
    size_t n_pending;             // files in pending/ (capped at COORD_AUTH_PENDING_MAX)
    uint64_t refused;             // messages refused (coord_auth_board, coord_auth_refuse_as)
    uint64_t denied;              // handshakes answered 400
    jf_log_ratelimit_t rl_refuse; // refusal log lines
    jf_log_ratelimit_t rl_deny;   // denied handshake log lines
};

static const char *const s_states[] = {"accepted", "pending", "rejected", "revoked", "quarantined"};

static void s_path(const coord_auth_t *self, const char *sub, const char *name, char *out,
                   size_t size)
{
    if (snprintf(out, size, "%s/%s%s%s", self->keys_dir, sub, name ? "/" : "", name ? name : "") >=
        (int) (size)) {
        (out)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
}

int coord_auth_keygen(const char *data_dir, jf_err_t *err)
{
    char dir[PATH_MAX + 16] = {0}, path[PATH_MAX + 32] = {0};
    for (size_t i = 0; i < sizeof s_states / sizeof s_states[0]; i++) {
        if (snprintf(dir, sizeof dir, "%s/keys/%s", data_dir, s_states[i]) >= (int) (sizeof dir)) {
            (dir)[0] = '\0'; // too long: an empty path fails to open, visibly
        }
        int rc = jf_fs_mkdir_p(dir, 0700, err);
        if (rc < 0) {
            return rc;
        }
    }
    if (snprintf(path, sizeof path, "%s/keys/coordinator", data_dir) >= (int) (sizeof path)) {
        (path)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
    return jf_curve_keygen(path, NULL, err);
}

static void s_free_str(void **item)
{
    free(*item);
    *item = NULL;
}

// Adds keys/accepted/<name> to map. A file whose board metadata disagrees with its name is
// skipped: the name is what the operator accepted.
static void s_load_one(const coord_auth_t *self, zhashx_t *map, const char *name)
{
    char path[PATH_MAX + 80] = {0};
    s_path(self, "accepted", name, path, sizeof path);
    jf_err_t err = {0};
    zcert_t *cert = jf_curve_load_public(path, &err);
    const char *meta = cert ? zcert_meta(cert, "board") : NULL;
    if (!cert || (meta && strcmp(meta, name) != 0)) {
        jf_log_warn("auth: %s: skipped: %s", path,
                    cert ? "its board metadata differs from its file name" : err.msg);
    } else if (zhashx_insert(map, zcert_public_txt(cert), strdup(name)) != 0) {
        jf_log_warn("auth: %s: skipped: the same key is accepted under another name", path);
    }
    zcert_destroy(&cert);
}

static int s_load_accepted(coord_auth_t *self, jf_err_t *err)
{
    char dir[PATH_MAX + 16] = {0};
    s_path(self, "accepted", NULL, dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d) {
        return jf_err_set(err, -errno, "%s: %s", dir, strerror(errno));
    }
    zhashx_t *map = zhashx_new();
    zhashx_set_destructor(map, s_free_str);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (jf_parse_is_ident(e->d_name)) {
            s_load_one(self, map, e->d_name);
        }
    }
    closedir(d);
    size_t before = self->accepted ? zhashx_size(self->accepted) : SIZE_MAX;
    zhashx_destroy(&self->accepted);
    self->accepted = map;
    // Reloads repeat while the directories' times settle; only a change is worth a notice.
    if (zhashx_size(map) != before) {
        jf_log_notice("auth: %zu accepted agent keys loaded from %s", zhashx_size(map), dir);
    } else {
        jf_log_debug("auth: %zu accepted agent keys reloaded from %s", zhashx_size(map), dir);
    }
    return 0;
}

// keys/quarantined/<board> -> its reason (metadata written by coord_auth_quarantine).
static int s_load_quarantined(coord_auth_t *self, jf_err_t *err)
{
    char dir[PATH_MAX + 16] = {0}, path[PATH_MAX + 80] = {0};
    s_path(self, "quarantined", NULL, dir, sizeof dir);
    DIR *d = opendir(dir);
    if (!d) {
        return jf_err_set(err, -errno, "%s: %s", dir, strerror(errno));
    }
    zhashx_t *map = zhashx_new();
    zhashx_set_destructor(map, s_free_str);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (!jf_parse_is_ident(e->d_name)) {
            continue;
        }
        s_path(self, "quarantined", e->d_name, path, sizeof path);
        zcert_t *cert = jf_curve_load_public(path, NULL);
        const char *reason = cert ? zcert_meta(cert, "reason") : NULL;
        (void) zhashx_insert(map, e->d_name, strdup(reason ? reason : "(no reason recorded)"));
        zcert_destroy(&cert);
    }
    closedir(d);
    zhashx_destroy(&self->quarantined);
    self->quarantined = map;
    self->generation++;
    return 0;
}

static size_t s_count_files(const char *dir)
{
    size_t n = 0;
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        n += e->d_name[0] != '.';
    }
    if (d) {
        closedir(d);
    }
    return n;
}

static bool s_stat_states(const coord_auth_t *self, struct timespec ret_mtime[3])
{
    static const char *const watched[3] = {"accepted", "revoked", "quarantined"};
    for (int i = 0; i < 3; i++) {
        char dir[PATH_MAX + 16] = {0};
        s_path(self, watched[i], NULL, dir, sizeof dir);
        struct stat st;
        if (stat(dir, &st) != 0) {
            return false;
        }
        ret_mtime[i] = st.st_mtim;
    }
    return true;
}

int coord_auth_refresh(coord_auth_t *self, jf_err_t *err)
{
    int64_t mono_us = jf_clock_mono_us();
    if (mono_us < self->next_refresh_us) {
        return 0;
    }
    self->next_refresh_us = mono_us + COORD_AUTH_REFRESH_US;
    struct timespec now[3] = {{0}};
    if (!s_stat_states(self, now)) {
        return jf_err_set(err, -ENOENT,
                          "auth: %s/accepted, /revoked or /quarantined is missing; keeping %zu "
                          "accepted keys",
                          self->keys_dir, zhashx_size(self->accepted));
    }
    if (memcmp(now, self->seen, sizeof now) == 0) {
        return 0;
    }
    memcpy(self->seen, now, sizeof now);
    // Directory times are coarse (a clock tick): a second move in the same tick as the one just
    // loaded leaves them unchanged, so a recent time is not trusted and looked at again.
    int64_t wall_us = jf_clock_wall_us();
    for (int i = 0; i < 3; i++) {
        int64_t t_us = (int64_t) now[i].tv_sec * JF_US_PER_S + now[i].tv_nsec / 1000;
        if (wall_us - t_us < COORD_AUTH_SETTLE_US) {
            memset(self->seen, 0, sizeof self->seen);
        }
    }
    int rc = s_load_accepted(self, err);
    return rc ? rc : s_load_quarantined(self, err);
}

static int s_open_keys(coord_auth_t *self, const char *data_dir, jf_err_t *err)
{
    if (snprintf(self->keys_dir, sizeof self->keys_dir, "%s/keys", data_dir) >=
        (int) (sizeof self->keys_dir)) {
        (self->keys_dir)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
    char path[PATH_MAX + 32] = {0};
    s_path(self, "coordinator", NULL, path, sizeof path);
    self->cert = jf_curve_load_pair(path, err);
    if (!self->cert) {
        return jf_err_prefix(err, "no usable coordinator key (create one with "
                                  "'jetfleet-coordinator --config FLEET.yaml --keygen')");
    }
    for (size_t i = 0; i < sizeof s_states / sizeof s_states[0]; i++) {
        s_path(self, s_states[i], NULL, path, sizeof path);
        int rc = jf_fs_mkdir_p(path, 0700, err);
        if (rc < 0) {
            return rc;
        }
    }
    s_path(self, "pending", NULL, path, sizeof path);
    self->n_pending = s_count_files(path);
    return coord_auth_refresh(self, err);
}

coord_auth_t *coord_auth_new(const char *data_dir, jf_err_t *err)
{
    coord_auth_t *self = calloc(1, sizeof *self);
    if (!self) {
        jf_err_set(err, -ENOMEM, "out of memory");
        return NULL;
    }
    if (s_open_keys(self, data_dir, err) != 0) {
        goto fail_destroy;
    }
    self->zap = zsock_new(ZMQ_REP);
    if (!self->zap || zsock_bind(self->zap, COORD_AUTH_ZAP_ENDPOINT) != 0) {
        jf_err_set(err, -EADDRINUSE, "auth: cannot bind the ZAP handler at %s: %s",
                   COORD_AUTH_ZAP_ENDPOINT, zmq_strerror(zmq_errno()));
        goto fail_destroy;
    }
    return self;
fail_destroy:
    coord_auth_destroy(&self);
    return NULL;
}

// Records an unknown key as keys/pending/<fingerprint> so that an operator can accept it.
// Existing files are kept: a second attempt must not replace what the operator is comparing.
static void s_record_pending(coord_auth_t *self, const byte *key, const char *key_txt,
                             const char *address)
{
    char fp[COORD_AUTH_FP_CHARS + 1] = {0}, path[PATH_MAX + 80] = {0};
    for (int i = 0; i < COORD_AUTH_FP_CHARS / 2; i++) {
        (void) snprintf(fp + 2 * i, 3, "%02x", key[i]);
    }
    s_path(self, "pending", fp, path, sizeof path);
    struct stat st;
    if (stat(path, &st) == 0 || self->n_pending >= COORD_AUTH_PENDING_MAX) {
        return;
    }
    byte no_secret[32] = {0};
    zcert_t *cert = zcert_new_from((byte *) key, no_secret);
    if (cert) {
        zcert_set_meta(cert, "address", "%s", address);
        if (zcert_save_public(cert, path) == 0) {
            self->n_pending++;
            jf_log_notice("auth: unknown key %s from %s recorded as pending '%s'", key_txt, address,
                          fp);
        }
    }
    zcert_destroy(&cert);
}

// RFC 27 request: version, request id, domain, address, routing id, mechanism, credentials.
static const char *s_decide(coord_auth_t *self, zmsg_t *req, char *key_txt)
{
    if (zmsg_size(req) != 7) {
        return NULL;
    }
    zframe_t *f[7] = {0};
    for (int i = 0; i < 7; i++) {
        f[i] = i == 0 ? zmsg_first(req) : zmsg_next(req);
    }
    if (!zframe_streq(f[5], "CURVE") || zframe_size(f[6]) != 32) {
        return NULL;
    }
    zmq_z85_encode(key_txt, zframe_data(f[6]), 32);
    const char *board = zhashx_lookup(self->accepted, key_txt);
    if (!board) {
        char *address = zframe_strdup(f[3]);
        s_record_pending(self, zframe_data(f[6]), key_txt, address ? address : "?");
        free(address);
    }
    return board;
}

static void s_answer(coord_auth_t *self, zmsg_t *req)
{
    char key_txt[JF_CURVE_KEY_TXT + 1] = {0};
    const char *board = s_decide(self, req, key_txt);
    zframe_t *version = zmsg_first(req);
    zframe_t *request_id = version ? zmsg_next(req) : NULL;
    zmsg_t *rep = zmsg_new();
    zmsg_addstr(rep, "1.0");
    if (request_id) {
        zmsg_addmem(rep, zframe_data(request_id), zframe_size(request_id));
    } else {
        zmsg_addmem(rep, "", 0);
    }
    zmsg_addstr(rep, board ? "200" : "400");
    zmsg_addstr(rep, board ? "OK" : "key not accepted");
    // User-Id is the key, not the board: the per-message check looks the key up in the list in
    // force now, so a revoked key stops at once even on a connection made before.
    zmsg_addstr(rep, board ? key_txt : "");
    zmsg_addmem(rep, "", 0);
    if (zmsg_send(&rep, self->zap) != 0) {
        zmsg_destroy(&rep);
    }
    if (!board) {
        self->denied++;
        uint64_t n = 0;
        if (jf_log_ratelimit_allow(&self->rl_deny, &n)) {
            jf_log_warn("auth: handshake denied for key %s: not accepted (%llu more suppressed)",
                        key_txt[0] ? key_txt : "(not CURVE)", (unsigned long long) n);
        }
    }
}

void coord_auth_serve(coord_auth_t *self)
{
    while (zsock_events(self->zap) & ZMQ_POLLIN) {
        zmsg_t *req = zmsg_recv(self->zap);
        if (!req) {
            return;
        }
        s_answer(self, req);
        zmsg_destroy(&req);
    }
}

static void s_refuse(coord_auth_t *self, const char *key, const char *board, const char *claimed)
{
    self->refused++;
    uint64_t n = 0;
    if (jf_log_ratelimit_allow(&self->rl_refuse, &n)) {
        char q[256] = {0}, qc[256] = {0};
        jf_log_warn("auth: message refused: key %s %s%s%s%s%s; dropped (%llu more suppressed, "
                    "%llu in all)",
                    key ? key : "(none)", board ? "belongs to '" : "is not accepted now",
                    board ? jf_log_quote(board, q, sizeof q) : "", board ? "' but spoke as '" : "",
                    board ? jf_log_quote(claimed, qc, sizeof qc) : "", board ? "'" : "",
                    (unsigned long long) n, (unsigned long long) self->refused);
    }
}

const char *coord_auth_board(coord_auth_t *self, zframe_t *frame)
{
    const char *key = zframe_meta(frame, "User-Id");
    const char *board = key ? zhashx_lookup(self->accepted, key) : NULL;
    if (!board) {
        s_refuse(self, key, NULL, NULL);
    }
    return board;
}

void coord_auth_refuse_as(coord_auth_t *self, const char *key, const char *board,
                          const char *claimed)
{
    s_refuse(self, key, board, claimed ? claimed : "?");
}

// The accepted key of board (Z85, borrowed from the map), or NULL.
static const char *s_key_of(coord_auth_t *self, const char *board)
{
    for (const char *name = zhashx_first(self->accepted); name;
         name = zhashx_next(self->accepted)) {
        if (strcmp(name, board) == 0) {
            return zhashx_cursor(self->accepted);
        }
    }
    return NULL;
}

int coord_auth_quarantine(coord_auth_t *self, const char *board, const char *reason, jf_err_t *err)
{
    char src[PATH_MAX + 80] = {0}, dst[PATH_MAX + 80] = {0}, tmp[PATH_MAX + 96] = {0};
    s_path(self, "accepted", board, src, sizeof src);
    s_path(self, "quarantined", board, dst, sizeof dst);
    (void) snprintf(tmp, sizeof tmp, "%s/quarantined/.%s.tmp", self->keys_dir, board);
    const char *key = s_key_of(self, board);
    if (key) {
        zhashx_delete(self->accepted, key); // refused from the next message on
    }
    zhashx_update(self->quarantined, board, strdup(reason)); // frees a previous reason
    zcert_t *cert = jf_curve_load_public(src, err);
    if (!cert) {
        return jf_err_prefix(err, "auth: cannot quarantine the key of '%s'", board);
    }
    zcert_set_meta(cert, "board", "%s", board);
    zcert_set_meta(cert, "reason", "%s", reason);
    // Written whole under another name, then renamed, as the CLI moves keys (cli_cmd_keys.c).
    int rc = zcert_save_public(cert, tmp);
    zcert_destroy(&cert);
    if (rc != 0 || rename(tmp, dst) != 0 || unlink(src) != 0) {
        (void) unlink(tmp);
        return jf_err_set(err, -EIO, "auth: cannot move %s to %s: %s", src, dst, strerror(errno));
    }
    return 0;
}

const char *coord_auth_quarantine_reason(const coord_auth_t *self, const char *board)
{
    return self->quarantined ? zhashx_lookup(self->quarantined, board) : NULL;
}

uint64_t coord_auth_generation(const coord_auth_t *self)
{
    return self->generation;
}

uint64_t coord_auth_refused(const coord_auth_t *self)
{
    return self->refused;
}

zsock_t *coord_auth_zap(const coord_auth_t *self)
{
    return self->zap;
}

void coord_auth_apply(const coord_auth_t *self, zsock_t *sock)
{
    zsock_set_zap_domain(sock, COORD_AUTH_DOMAIN);
    zcert_apply(self->cert, sock);
    zsock_set_curve_server(sock, 1);
    // ZMQ_ZAP_ENFORCE_DOMAIN (DRAFT, so not in Debian's header; the library accepts it): with no
    // handler bound a handshake fails instead of passing unauthenticated (reference §2.2 row 4b).
    int on = 1;
    (void) zmq_setsockopt(zsock_resolve(sock), 93, &on, sizeof on);
}

void coord_auth_destroy(coord_auth_t **self_p)
{
    if (!self_p || !*self_p) {
        return;
    }
    coord_auth_t *self = *self_p;
    zsock_destroy(&self->zap);
    zhashx_destroy(&self->accepted);
    zhashx_destroy(&self->quarantined);
    zcert_destroy(&self->cert);
    free(self);
    *self_p = NULL;
}
