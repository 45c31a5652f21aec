/* Weight blobs' names (sha256) and wire text (base64), through libsodium (docs/protocol.md
 * §5.7). */
#include "jf_blob.h"

#include <errno.h>
#include <sodium.h>
#include <stdlib.h>
#include <string.h>

bool jf_blob_is_sha256(const char *text)
{
    if (!text || strlen(text) != JF_BLOB_SHA256_HEX_LEN) {
        return false;
    }
    for (size_t i = 0; i < JF_BLOB_SHA256_HEX_LEN; i++) {
        char c = text[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
            return false;
        }
    }
    return true;
}

// sodium_init is idempotent and thread-safe; it fails only when no random source opens, which
// sha256 and base64 do not need, but libsodium asks for it before any other call.
static int s_init(jf_err_t *err)
{
    return sodium_init() < 0 ? jf_err_set(err, -EIO, "blob: libsodium cannot be initialised") : 0;
}

int jf_blob_sha256(const void *data, size_t len, char *ret_hex, jf_err_t *err)
{
    int rc = s_init(err);
    if (rc) {
        return rc;
    }
    unsigned char digest[crypto_hash_sha256_BYTES];
    (void) crypto_hash_sha256(digest, data, len); // always 0
    (void) sodium_bin2hex(ret_hex, JF_BLOB_SHA256_HEX_LEN + 1, digest, sizeof digest);
    return 0;
}

char *jf_blob_base64(const void *data, size_t len)
{
    if (len > JF_BLOB_MAX_BYTES || s_init(NULL) != 0) {
        return NULL;
    }
    size_t size = sodium_base64_encoded_len(len, sodium_base64_VARIANT_ORIGINAL);
    char *text = malloc(size);
    if (text) {
        (void) sodium_bin2base64(text, size, data, len, sodium_base64_VARIANT_ORIGINAL);
    }
    return text;
}

int jf_blob_unbase64(const char *text, size_t max_len, void **ret_data, size_t *ret_len,
                     jf_err_t *err)
{
    int rc = s_init(err);
    if (rc) {
        return rc;
    }
    size_t text_len = strlen(text);
    // Padded base64 is 4 characters per 3 bytes: anything longer cannot fit max_len.
    if (text_len % 4 != 0 || text_len / 4 * 3 > max_len + 2) {
        return jf_err_set(err, -EINVAL,
                          "base64 text of %zu characters is not padded base64 of at most %zu "
                          "bytes",
                          text_len, max_len);
    }
    unsigned char *bin = malloc(text_len / 4 * 3 + 1);
    if (!bin) {
        return jf_err_set(err, -ENOMEM, "out of memory");
    }
    size_t bin_len = 0;
    const char *end = NULL;
    if (sodium_base642bin(bin, text_len / 4 * 3 + 1, text, text_len, NULL, &bin_len, &end,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        end != text + text_len) {
        free(bin);
        return jf_err_set(err, -EINVAL, "not base64 (RFC 4648, padded) at character %zu",
                          end ? (size_t) (end - text) : (size_t) 0);
    }
    if (bin_len > max_len) {
        free(bin);
        return jf_err_set(err, -EINVAL, "base64 text decodes to %zu bytes, more than %zu", bin_len,
                          max_len);
    }
    *ret_data = bin;
    *ret_len = bin_len;
    return 0;
}
