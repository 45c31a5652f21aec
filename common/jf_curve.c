/* CURVE key files: zcert keypairs with a 0600 secret part, and pinned public keys. The file
 * format is czmq's zcert (ZPL text); docs/protocol.md §1.7 says where each program keeps them. */
#include "jf_curve.h"
#include "jf_fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void s_secret_path(const char *path, char *out, size_t size)
{
    if (snprintf(out, size, "%s_secret", path) >= (int) (size)) {
        (out)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
}

int jf_curve_keygen(const char *path, const char *board, jf_err_t *err)
{
    char secret[PATH_MAX + 16] = {0};
    s_secret_path(path, secret, sizeof secret);
    struct stat st;
    if (stat(secret, &st) == 0) {
        return jf_err_set(err, -EEXIST, "%s: a key already exists; remove it first to replace it",
                          secret);
    }
    char dir[PATH_MAX] = {0};
    if (snprintf(dir, sizeof dir, "%s", path) >= (int) (sizeof dir)) {
        (dir)[0] = '\0'; // too long: an empty path fails to open, visibly
    }
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        int mrc = jf_fs_mkdir_p(dir, 0700, err); // the agent's state directory on first use
        if (mrc < 0) {
            return mrc;
        }
    }
    zcert_t *cert = zcert_new();
    if (!cert) {
        return jf_err_set(err, -EIO, "%s: cannot generate a keypair (is libzmq built with CURVE?)",
                          path);
    }
    if (board) {
        zcert_set_meta(cert, "board", "%s", board);
    }
    // The secret never exists with wider permissions, not even between creation and a chmod.
    mode_t old = umask(S_IRWXG | S_IRWXO);
    int rc = zcert_save_secret(cert, secret);
    (void) umask(old);
    rc = rc == 0 ? zcert_save_public(cert, path) : rc;
    zcert_destroy(&cert);
    if (rc != 0) {
        return jf_err_set(err, -EIO, "%s: cannot write the keypair: %s", path, strerror(errno));
    }
    return 0;
}

zcert_t *jf_curve_load_pair(const char *path, jf_err_t *err)
{
    char secret[PATH_MAX + 16] = {0};
    s_secret_path(path, secret, sizeof secret);
    struct stat st;
    if (stat(secret, &st) != 0) {
        jf_err_set(err, -ENOENT, "%s: no secret key: %s", secret, strerror(errno));
        return NULL;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        jf_err_set(err, -EPERM,
                   "%s: the secret key is readable by others (mode %03o); chmod 600 it", secret,
                   (unsigned) (st.st_mode & 0777));
        return NULL;
    }
    zcert_t *cert = zcert_load(path);
    if (!cert || strcmp(zcert_secret_txt(cert), "0000000000000000000000000000000000000000") == 0) {
        jf_err_set(err, -EINVAL, "%s: not a keypair written by --keygen", path);
        zcert_destroy(&cert);
    }
    return cert;
}

zcert_t *jf_curve_load_public(const char *path, jf_err_t *err)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        jf_err_set(err, -ENOENT, "%s: %s", path, strerror(errno));
        return NULL;
    }
    zcert_t *cert = zcert_load(path);
    if (!cert || strlen(zcert_public_txt(cert)) != JF_CURVE_KEY_TXT) {
        jf_err_set(err, -EINVAL, "%s: not a public key certificate (zcert text with public-key)",
                   path);
        zcert_destroy(&cert);
    }
    return cert;
}
