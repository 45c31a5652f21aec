/* --shard K/N (train_shard.h). */
#include "train_shard.h"

#include "jf_parse.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#define S_PART_MAX 16 // characters of K or N

int train_shard_parse(const char *text, train_shard_t *ret_shard, jf_err_t *err)
{
    const char *slash = text ? strchr(text, '/') : NULL;
    size_t k_len = slash ? (size_t) (slash - text) : 0;
    char k_text[S_PART_MAX + 1] = "";
    if (!slash || k_len == 0 || k_len > S_PART_MAX) {
        return jf_err_set(err, -EINVAL, "--shard: expected K/N, got '%.64s'",
                          text ? text : "(null)");
    }
    memcpy(k_text, text, k_len);
    int64_t k = 0, n = 0;
    if (jf_parse_i64(slash + 1, 1, TRAIN_SHARD_COUNT_MAX, &n, err) < 0) {
        return jf_err_prefix(err, "--shard: N");
    }
    if (jf_parse_i64(k_text, 0, n - 1, &k, err) < 0) {
        return jf_err_prefix(err, "--shard: K (0..N-1)");
    }
    *ret_shard = (train_shard_t){.index = (int) k, .count = (int) n};
    return 0;
}

size_t train_shard_size(const train_shard_t *shard, size_t total)
{
    if (shard->count <= 0) {
        return total;
    }
    size_t k = (size_t) shard->index, n = (size_t) shard->count;
    return total > k ? (total - k + n - 1) / n : 0;
}

size_t train_shard_global(const train_shard_t *shard, size_t local)
{
    return shard->count <= 0 ? local : (size_t) shard->index + local * (size_t) shard->count;
}
