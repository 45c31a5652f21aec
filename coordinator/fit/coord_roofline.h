/* Time and energy rooflines of one board in one power setting (docs/roofline.md "Model"): peak
 * compute and bandwidth and the energy per FLOP and per byte from its roofline benchmarks, and
 * the predicted time and energy of a minibatch of known work. Pure arithmetic: no store, no
 * libtorch (the work comes from jf_torch_flops.h, the benchmarks from coord_store_roofline.h). */
#ifndef COORD_ROOFLINE_H
#define COORD_ROOFLINE_H

#include "coord_store_roofline.h"
#include "jf_err.h"

#include <stdbool.h>
#include <stddef.h>

#define COORD_ROOFLINE_DEVICE_MAX 7 // "cuda", "cpu"

// One roofline (plain value record).
typedef struct coord_roofline {
    char power[COORD_ROOFLINE_NAME_MAX + 1];    // power label
    char device[COORD_ROOFLINE_DEVICE_MAX + 1]; // "cuda" or "cpu": which benchmarks
    bool simulated;                             // from a sim board's model, not measured
    double peak_flop_per_s;                     // matmul-<device>: FLOPs / time
    double peak_bytes_per_s;                    // copy-<device>: bytes / time
    bool has_energy;                            // both benchmarks have their energy
    double j_per_flop;                          // matmul's energy / its FLOPs (board total)
    double j_per_byte;                          // copy's energy / its bytes (board total)
} coord_roofline_t;

// Where a minibatch of known work sits on a roofline (plain value record).
typedef struct coord_roofline_pred {
    double intensity;             // FLOPs per byte moved
    double attainable_flop_per_s; // min(peak, intensity x bandwidth)
    bool memory_bound;            // bytes / bandwidth > FLOPs / peak
    double time_s;                // max(FLOPs / peak, bytes / bandwidth)
    bool has_energy;              // the roofline has energy
    double energy_j;              // max(FLOPs x J/FLOP, bytes x J/byte)
} coord_roofline_pred_t;

// The roofline on device ("cuda" or "cpu") from the benchmarks of one power setting (n rows of
// one power label, as coord_store_roofline_benches gives them): matmul-<device> for the peak
// compute and J/FLOP, copy-<device> for the bandwidth and J/byte. Returns 0, or -ENOENT with err
// naming the benchmark that is missing or did no work.
int coord_roofline_from_benches(const coord_roofline_bench_t *b, size_t n, const char *device,
                                coord_roofline_t *ret_roof, jf_err_t *err);

// The benchmarks b[i..] of one power label (as coord_store_roofline_benches orders them) end at
// the returned index; *ret_device is "cuda" when they include a CUDA benchmark, else "cpu".
size_t coord_roofline_group(const coord_roofline_bench_t *b, size_t n, size_t i,
                            const char **ret_device);

// Predicts a minibatch of flop FLOPs and bytes bytes (both >= 0) on roof.
void coord_roofline_predict(const coord_roofline_t *roof, double flop, double bytes,
                            coord_roofline_pred_t *ret_pred);

// 100 x (predicted - measured) / measured; NaN when measured is not positive.
double coord_roofline_error_pct(double predicted, double measured);

#endif
