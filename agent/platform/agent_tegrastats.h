/* tegrastats line parser: one line of `tegrastats` output from any Jetson (L4T R24 through
 * JetPack 7) into a telemetry sample in the shape of docs/telemetry.md. Text in, JSON out: no
 * files and no processes (agent_import.h reads whole logs). Implements the formats of
 * jetson-platforms.md §3, checked against tests/fixtures/tegrastats/real-lines.jsonl. */
#ifndef AGENT_TEGRASTATS_H
#define AGENT_TEGRASTATS_H

#include "jf_err.h"

#include <jansson.h>

#define AGENT_TEGRASTATS_LINE_MAX 4096 // longest line accepted, in bytes without the newline
#define AGENT_TEGRASTATS_CPUS_MAX 64   // most entries in one `CPU [...]` list
#define AGENT_TEGRASTATS_GPCS_MAX 16   // most clocks in one `GR3D_FREQ L%@[F0,F1,...]` list
#define AGENT_TEGRASTATS_NAME_MAX 63   // longest thermal zone or rail name, in bytes

// Parses one tegrastats line (a trailing newline is allowed) and adds what it carries to sample,
// a JSON object the caller owns (docs/telemetry.md; a quantity the line lacks is left out):
//   `t_us`        the leading "MM-DD-YYYY HH:MM:SS" of JetPack 5 and later, read as UTC (tegrastats
//                 prints the board's local time without a zone); left out on older lines
//   `source`      "tegrastats"
//   RAM, SWAP     `ram_used_bytes`, `ram_total_bytes`, `swap_used_bytes`, `swap_total_bytes`
//                 (tegrastats MB are MiB: x 1048576)
//   CPU [...]     `cpu_core_load_pct`, `cpu_core_freq_hz`, `cpu_online` per printed entry (an
//                 `off` core is null / null / false), `cpu_load_pct` = mean over online cores;
//                 the L4T R24 form `cpu [a%,b%]@F` gives every core the clock F
//   EMC_FREQ      `emc_load_pct`, `emc_freq_hz` (also the old `EMC` key)
//   GR3D_FREQ     `gpu_load_pct`, `gpu_freq_hz` (first GPC) and, when several clocks are
//                 printed (`@[F0,F1]`, or JetPack 5.0's separate GR3D2_FREQ), `gpu_gpc_freq_hz`
//   NAME@T C      `temps_mc` {NAME: milli-degC}; offline sensors (-256C) left out. JetPack 7's
//                 `NAME@aC/bC` keeps a (the meaning of b is unconfirmed)
//   NAME cur/avg  `rails` [{name, power_mw, avg_power_mw}] in printed order, with or without `mW`;
//                 JetPack 7's `amW/bmW/cmW` keeps a and b (c is unconfirmed). A rail printed twice
//                 with the same values (AGX Orin's `NC`) is listed once; `input_power_mw` is the
//                 VDD_IN or POM_5V_IN rail's current power.
// Other tokens (NVDEC 716, VIC 36%@115, APE, MTS fg 0% bg 0%, lfb, IRAM, EDP limit ...) are
// skipped. Returns 0; or -EINVAL with err naming the field ("field 'CPU': ...") when a field it
// knows is malformed or repeated, the line has no RAM field or is longer than
// AGENT_TEGRASTATS_LINE_MAX; or -ENOMEM. On failure sample is unchanged. line is borrowed.
// Thread-safe (no shared state).
int agent_tegrastats_parse_line(const char *line, json_t *sample, jf_err_t *err);

#endif
