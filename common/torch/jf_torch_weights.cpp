/* Weight sets of the libtorch shim (issue 14, STYLE.md §8): a session's named tensors serialised
 * with libtorch's pickle format (torch::pickle_save of a Dict name -> CPU tensor) inside a small
 * envelope that catches truncation and corruption before libtorch parses anything; loading with
 * strict name/shape/dtype checks, FedAvg and flattening, behind jf_torch.h. Not for moving or
 * storing blobs: that is the agent's and the coordinator's job (docs/simulator.md "Weights"). */
#include "jf_torch.h"
#include "jf_torch_internal.h"

#include <torch/serialize.h>
#include <torch/torch.h>
#include <zlib.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// The envelope: magic (4 bytes), CRC-32 (zlib) of the payload and the payload's length, both
// little-endian (4 and 8 bytes), then the payload: torch::pickle_save's bytes.
#define S_MAGIC        "JFW1"
#define S_MAGIC_BYTES  4
#define S_HEADER_BYTES 16
#define S_TENSORS_MAX  100000 // more named tensors than any model here has, by far
#define S_NAME_SHOWN   80     // longest tensor name copied into a message

namespace
{

using named_tensors = std::vector<std::pair<std::string, torch::Tensor>>;

void s_put_le(unsigned char *at, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++) {
        at[i] = static_cast<unsigned char>(v >> (8 * i));
    }
}

uint64_t s_get_le(const unsigned char *at, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++) {
        v |= static_cast<uint64_t>(at[i]) << (8 * i);
    }
    return v;
}

uint32_t s_crc32(const unsigned char *bytes, size_t len)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    while (len > 0) { // zlib takes uInt lengths
        uInt part = len > UINT32_MAX ? UINT32_MAX : static_cast<uInt>(len);
        crc = crc32(crc, bytes, part);
        bytes += part;
        len -= part;
    }
    return static_cast<uint32_t>(crc);
}

// "[120, 400] float" for messages.
std::string s_describe(const torch::Tensor &t)
{
    std::string text = "[";
    for (int64_t i = 0; i < t.dim(); i++) {
        text += (i ? ", " : "") + std::to_string(t.size(i));
    }
    return text + "] " + std::string(c10::toString(t.scalar_type()));
}

// The session's parameters, then its buffers, each in the model's registration order: the order
// libtorch's own torch::save of a module writes them.
named_tensors s_session_tensors(const jf_torch_session_t *self)
{
    named_tensors all;
    for (const auto &item : self->net->named_parameters(true)) {
        all.emplace_back(item.key(), item.value());
    }
    for (const auto &item : self->net->named_buffers(true)) {
        all.emplace_back(item.key(), item.value());
    }
    return all;
}

// Serialises tensors (copied to the CPU) into a malloc'ed envelope.
int s_encode(const named_tensors &tensors, void **ret_bytes, size_t *ret_len, jf_err_t *err)
{
    c10::Dict<std::string, torch::Tensor> dict;
    for (const auto &item : tensors) {
        dict.insert(item.first, item.second.detach().to(torch::kCPU).contiguous().clone());
    }
    std::vector<char> payload = torch::pickle_save(dict);
    size_t len = S_HEADER_BYTES + payload.size();
    auto *out = static_cast<unsigned char *>(malloc(len));
    if (!out) {
        return jf_err_set(err, -ENOMEM, "torch: weights: out of memory (%zu bytes)", len);
    }
    const auto *data = reinterpret_cast<const unsigned char *>(payload.data());
    memcpy(out, S_MAGIC, S_MAGIC_BYTES);
    s_put_le(out + S_MAGIC_BYTES, s_crc32(data, payload.size()), 4);
    s_put_le(out + S_MAGIC_BYTES + 4, payload.size(), 8);
    memcpy(out + S_HEADER_BYTES, data, payload.size());
    *ret_bytes = out;
    *ret_len = len;
    return 0;
}

// Checks the envelope of a blob: magic, length and CRC-32.
int s_check_envelope(const void *bytes, size_t len, const char *what, jf_err_t *err)
{
    const auto *b = static_cast<const unsigned char *>(bytes);
    if (!b || len < S_HEADER_BYTES || memcmp(b, S_MAGIC, S_MAGIC_BYTES) != 0) {
        return jf_err_set(err, -EINVAL, "torch: %s: not a jetfleet weight set (%zu bytes, %s)",
                          what, len, b && len >= S_MAGIC_BYTES ? "bad magic" : "too short");
    }
    uint64_t payload = s_get_le(b + S_MAGIC_BYTES + 4, 8);
    if (payload != len - S_HEADER_BYTES) {
        return jf_err_set(err, -EINVAL,
                          "torch: %s: truncated or padded: %zu payload bytes, header says %llu",
                          what, len - S_HEADER_BYTES, static_cast<unsigned long long>(payload));
    }
    uint32_t want = static_cast<uint32_t>(s_get_le(b + S_MAGIC_BYTES, 4));
    if (s_crc32(b + S_HEADER_BYTES, len - S_HEADER_BYTES) != want) {
        return jf_err_set(err, -EINVAL, "torch: %s: corrupted (CRC-32 mismatch)", what);
    }
    return 0;
}

// The named tensors of a decoded payload: a Dict of string keys and tensor values, in order.
int s_from_ivalue(const c10::IValue &value, const char *what, named_tensors *ret, jf_err_t *err)
{
    if (!value.isGenericDict()) {
        return jf_err_set(err, -EINVAL, "torch: %s: payload is %s, expected a dict of tensors",
                          what, value.tagKind().c_str());
    }
    c10::impl::GenericDict dict = value.toGenericDict();
    if (dict.size() == 0 || dict.size() > S_TENSORS_MAX) {
        return jf_err_set(err, -EINVAL, "torch: %s: %zu tensors, expected 1..%d", what, dict.size(),
                          S_TENSORS_MAX);
    }
    named_tensors out;
    for (const auto &entry : dict) {
        if (!entry.key().isString() || !entry.value().isTensor()) {
            return jf_err_set(err, -EINVAL, "torch: %s: entry %zu is not a name and a tensor", what,
                              out.size());
        }
        const torch::Tensor &t = entry.value().toTensor();
        if (t.layout() != torch::kStrided || !t.device().is_cpu()) {
            return jf_err_set(err, -EINVAL, "torch: %s: entry %zu is not a dense CPU tensor", what,
                              out.size());
        }
        out.emplace_back(entry.key().toStringRef(), entry.value().toTensor());
    }
    *ret = std::move(out);
    return 0;
}

// Decodes a blob into its named tensors; every failure is -EINVAL (the blob is bad input).
int s_decode(const void *bytes, size_t len, const char *what, named_tensors *ret, jf_err_t *err)
{
    int rc = s_check_envelope(bytes, len, what, err);
    if (rc < 0) {
        return rc;
    }
    const char *payload = static_cast<const char *>(bytes) + S_HEADER_BYTES;
    c10::IValue value;
    try {
        value = torch::pickle_load(std::vector<char>(payload, payload + (len - S_HEADER_BYTES)));
    } catch (const std::bad_alloc &) {
        return jf_err_set(err, -ENOMEM, "torch: %s: out of memory while decoding", what);
    } catch (const std::exception &e) {
        std::string line(e.what(), strcspn(e.what(), "\n"));
        return jf_err_set(err, -EINVAL, "torch: %s: does not decode: %.160s", what, line.c_str());
    }
    return s_from_ivalue(value, what, ret, err);
}

// Whether two tensors can stand for one another: same shape and dtype.
bool s_same_kind(const torch::Tensor &a, const torch::Tensor &b)
{
    return a.sizes() == b.sizes() && a.scalar_type() == b.scalar_type();
}

// Checks that have (a blob's tensors) matches want (the reference) name by name, in order.
int s_match(const named_tensors &want, const named_tensors &have, const char *what, jf_err_t *err)
{
    size_t n = std::min(want.size(), have.size());
    for (size_t i = 0; i < n; i++) {
        const auto &w = want[i], &h = have[i];
        if (w.first != h.first || !s_same_kind(w.second, h.second)) {
            return jf_err_set(err, -EINVAL,
                              "torch: %s: tensor %zu is '%.*s' %s, expected '%.*s' %s", what, i,
                              S_NAME_SHOWN, h.first.c_str(), s_describe(h.second).c_str(),
                              S_NAME_SHOWN, w.first.c_str(), s_describe(w.second).c_str());
        }
    }
    if (want.size() != have.size()) {
        const auto &extra = want.size() > have.size() ? want[n] : have[n];
        return jf_err_set(err, -EINVAL, "torch: %s: %zu tensors, expected %zu; first %s: '%.*s'",
                          what, have.size(), want.size(),
                          want.size() > have.size() ? "missing" : "extra", S_NAME_SHOWN,
                          extra.first.c_str());
    }
    return 0;
}

// Copies the loaded tensors into the session's and starts a fresh optimiser (no momentum).
void s_assign(jf_torch_session_t *self, const named_tensors &mine, const named_tensors &loaded)
{
    {
        torch::NoGradGuard no_grad;
        for (size_t i = 0; i < mine.size(); i++) {
            torch::Tensor dst = mine[i].second; // shares the module's storage
            dst.copy_(loaded[i].second);
        }
    }
    self->optimizer = std::make_unique<torch::optim::SGD>(
        self->net->parameters(), torch::optim::SGDOptions(JF_TORCH_LR).momentum(JF_TORCH_MOMENTUM));
}

int s_check_average_args(const void *const *blobs, const size_t *lens, const double *w, size_t n,
                         jf_err_t *err)
{
    if (!blobs || !lens || !w || n < 1) {
        return jf_err_set(err, -EINVAL,
                          "torch: average: blobs, lengths and weights required, n >= 1");
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (!std::isfinite(w[i]) || w[i] < 0.0) {
            return jf_err_set(err, -EINVAL, "torch: average: weight %zu is %g, expected >= 0", i,
                              w[i]);
        }
        sum += w[i];
    }
    if (!(sum > 0.0) || !std::isfinite(sum)) {
        return jf_err_set(err, -EINVAL, "torch: average: the weights add up to %g, expected > 0",
                          sum);
    }
    return 0;
}

// Decodes every blob, checking each against the first.
int s_decode_all(const void *const *blobs, const size_t *lens, size_t n,
                 std::vector<named_tensors> *ret, jf_err_t *err)
{
    std::vector<named_tensors> sets(n);
    for (size_t i = 0; i < n; i++) {
        std::string what = "average: blob " + std::to_string(i);
        int rc = s_decode(blobs[i], lens[i], what.c_str(), &sets[i], err);
        rc = rc < 0 || i == 0 ? rc : s_match(sets[0], sets[i], what.c_str(), err);
        if (rc < 0) {
            return rc;
        }
    }
    *ret = std::move(sets);
    return 0;
}

// Tensor k of the average: floating tensors the weighted mean (accumulated in double), others
// (integer counters such as BatchNorm's num_batches_tracked) the maximum.
torch::Tensor s_average_one(const std::vector<named_tensors> &sets, size_t k, const double *w,
                            double sum)
{
    const torch::Tensor &first = sets[0][k].second;
    if (!first.is_floating_point()) {
        torch::Tensor out = first.clone();
        for (size_t i = 1; i < sets.size(); i++) {
            out = torch::maximum(out, sets[i][k].second);
        }
        return out;
    }
    torch::Tensor acc = torch::zeros(first.sizes(), torch::kFloat64);
    for (size_t i = 0; i < sets.size(); i++) {
        acc.add_(sets[i][k].second.to(torch::kFloat64), w[i] / sum);
    }
    return acc.to(first.scalar_type());
}

int s_average(const void *const *blobs, const size_t *lens, const double *w, size_t n,
              void **ret_bytes, size_t *ret_len, jf_err_t *err)
{
    std::vector<named_tensors> sets;
    int rc = s_decode_all(blobs, lens, n, &sets, err);
    if (rc < 0) {
        return rc;
    }
    double sum = 0.0;
    for (size_t i = 0; i < n; i++) {
        sum += w[i];
    }
    torch::NoGradGuard no_grad;
    named_tensors mean;
    for (size_t k = 0; k < sets[0].size(); k++) {
        mean.emplace_back(sets[0][k].first, s_average_one(sets, k, w, sum));
    }
    return s_encode(mean, ret_bytes, ret_len, err);
}

int s_flatten(const named_tensors &tensors, double **ret_values, size_t *ret_n, jf_err_t *err)
{
    size_t total = 0;
    for (const auto &item : tensors) {
        total += item.second.is_floating_point() ? static_cast<size_t>(item.second.numel()) : 0;
    }
    double *values = total ? static_cast<double *>(malloc(total * sizeof *values)) : nullptr;
    if (total && !values) {
        return jf_err_set(err, -ENOMEM, "torch: flatten: out of memory (%zu values)", total);
    }
    size_t at = 0;
    for (const auto &item : tensors) {
        if (!item.second.is_floating_point()) {
            continue;
        }
        torch::Tensor d = item.second.to(torch::kFloat64).contiguous();
        memcpy(values + at, d.data_ptr<double>(), static_cast<size_t>(d.numel()) * sizeof *values);
        at += static_cast<size_t>(d.numel());
    }
    *ret_values = values;
    *ret_n = total;
    return 0;
}

} // namespace

extern "C" int jf_torch_session_weights_save(jf_torch_session_t *self, void **ret_bytes,
                                             size_t *ret_len, jf_err_t *err)
{
    if (!self || !ret_bytes || !ret_len) {
        return jf_err_set(err, -EINVAL, "torch: weights_save: session and outputs are required");
    }
    try {
        return s_encode(s_session_tensors(self), ret_bytes, ret_len, err);
    } catch (...) {
        return jf_torch_internal::fail(err, "weights_save");
    }
}

extern "C" int jf_torch_session_weights_load(jf_torch_session_t *self, const void *bytes,
                                             size_t len, jf_err_t *err)
{
    if (!self) {
        return jf_err_set(err, -EINVAL, "torch: weights_load: session is required");
    }
    try {
        named_tensors loaded;
        int rc = s_decode(bytes, len, "weights_load", &loaded, err);
        named_tensors mine = s_session_tensors(self);
        rc = rc < 0 ? rc : s_match(mine, loaded, "weights_load", err);
        if (rc == 0) {
            s_assign(self, mine, loaded);
        }
        return rc;
    } catch (...) {
        return jf_torch_internal::fail(err, "weights_load");
    }
}

extern "C" int jf_torch_weights_average(const void *const *blobs, const size_t *lens,
                                        const double *w, size_t n, void **ret_bytes,
                                        size_t *ret_len, jf_err_t *err)
{
    int rc = s_check_average_args(blobs, lens, w, n, err);
    if (rc < 0) {
        return rc;
    }
    if (!ret_bytes || !ret_len) {
        return jf_err_set(err, -EINVAL, "torch: average: outputs are required");
    }
    try {
        return s_average(blobs, lens, w, n, ret_bytes, ret_len, err);
    } catch (...) {
        return jf_torch_internal::fail(err, "weights_average");
    }
}

extern "C" int jf_torch_weights_flatten(const void *bytes, size_t len, double **ret_values,
                                        size_t *ret_n, jf_err_t *err)
{
    if (!ret_values || !ret_n) {
        return jf_err_set(err, -EINVAL, "torch: flatten: outputs are required");
    }
    try {
        named_tensors tensors;
        int rc = s_decode(bytes, len, "flatten", &tensors, err);
        return rc < 0 ? rc : s_flatten(tensors, ret_values, ret_n, err);
    } catch (...) {
        return jf_torch_internal::fail(err, "weights_flatten");
    }
}
