/* Time and energy rooflines (coord_roofline.h, docs/roofline.md "Model"). */
#include "coord_roofline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const coord_roofline_bench_t *s_find(const coord_roofline_bench_t *b, size_t n,
                                            const char *kind, const char *device)
{
    char name[COORD_ROOFLINE_NAME_MAX + 1];
    (void) snprintf(name, sizeof name, "%s-%s", kind, device);
    for (size_t i = 0; i < n; i++) {
        if (strcmp(b[i].bench, name) == 0) {
            return &b[i];
        }
    }
    return NULL;
}

int coord_roofline_from_benches(const coord_roofline_bench_t *b, size_t n, const char *device,
                                coord_roofline_t *ret_roof, jf_err_t *err)
{
    const coord_roofline_bench_t *mm = s_find(b, n, "matmul", device);
    const coord_roofline_bench_t *cp = s_find(b, n, "copy", device);
    if (!mm || !(mm->flop > 0) || mm->time_us <= 0) {
        return jf_err_set(err, -ENOENT, "no matmul-%s benchmark with work in '%s'", device,
                          n ? b[0].power : "");
    }
    if (!cp || !(cp->bytes > 0) || cp->time_us <= 0) {
        return jf_err_set(err, -ENOENT, "no copy-%s benchmark with work in '%s'", device,
                          b[0].power);
    }
    coord_roofline_t r = {0};
    (void) snprintf(r.power, sizeof r.power, "%s", mm->power);
    (void) snprintf(r.device, sizeof r.device, "%s", device);
    r.simulated = strcmp(mm->platform, "sim") == 0;
    r.peak_flop_per_s = mm->flop / ((double) mm->time_us / 1e6);
    r.peak_bytes_per_s = cp->bytes / ((double) cp->time_us / 1e6);
    r.has_energy = mm->has_energy && cp->has_energy;
    if (r.has_energy) {
        r.j_per_flop = mm->energy_mj / 1e3 / mm->flop;
        r.j_per_byte = cp->energy_mj / 1e3 / cp->bytes;
    }
    *ret_roof = r;
    return 0;
}

size_t coord_roofline_group(const coord_roofline_bench_t *b, size_t n, size_t i,
                            const char **ret_device)
{
    size_t j = i;
    bool cuda = false;
    while (j < n && strcmp(b[j].power, b[i].power) == 0) {
        cuda = cuda || strstr(b[j].bench, "-cuda") != NULL;
        j++;
    }
    *ret_device = cuda ? "cuda" : "cpu";
    return j;
}

void coord_roofline_predict(const coord_roofline_t *roof, double flop, double bytes,
                            coord_roofline_pred_t *ret_pred)
{
    coord_roofline_pred_t p = {0};
    double t_flop = flop / roof->peak_flop_per_s, t_bytes = bytes / roof->peak_bytes_per_s;
    p.intensity = bytes > 0 ? flop / bytes : INFINITY;
    p.attainable_flop_per_s = fmin(roof->peak_flop_per_s, p.intensity * roof->peak_bytes_per_s);
    p.memory_bound = t_bytes > t_flop;
    p.time_s = fmax(t_flop, t_bytes);
    p.has_energy = roof->has_energy;
    if (p.has_energy) {
        p.energy_j = fmax(flop * roof->j_per_flop, bytes * roof->j_per_byte);
    }
    *ret_pred = p;
}

double coord_roofline_error_pct(double predicted, double measured)
{
    return measured > 0 ? 100.0 * (predicted - measured) / measured : NAN;
}
