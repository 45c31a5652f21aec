#!/usr/bin/env python3
"""Refits the simulated AGX Orin's parameters (docs/simulator.md, "AGX Orin against real power
modes") to a real one's power modes: a coordinate descent in log space, within stated physical
bounds, on the sum of the two scores bench/sim-orin-modes.sh prints (MAPE of time ratios and of
power). Prints the best values and scores; it does not edit the parameter file.
  bench/sim-orin-fit.py BENCH_BINARY SIM_PARAMS.yaml [ROUNDS [KEY,KEY,...]]
BENCH_BINARY is the program bench/sim-orin-modes.sh builds (set JFB_KEEP=DIR to keep it)."""
import math
import re
import subprocess
import sys
import tempfile

# key: (low, high) bounds, each the physical range the value may take (docs give the reasons).
BOUNDS = {
    "cpu_core_speed": (0.5, 3.0),        # A78AE work per cycle against a Carmel
    "gpu_efficiency_scale": (0.2, 3.77),  # at most 1 / the workloads' 0.265: efficiency <= 1
    "dram_efficiency": (0.1, 1.0),       # achieved share of the spec bandwidth
    "gpu_memory_stall_power": (0.05, 1.0),  # a stalled GPU draws less than a computing one
    "cpu_core_mw": (200.0, 3000.0),      # one busy core at the top clock
    "gpu_mw": (5000.0, 60000.0),         # the busy GPU at the top clock (60 W MAXN budget)
    "dram_mw": (500.0, 15000.0),         # DRAM at full bandwidth
}


def block_of(text):
    a = text.index("\n  orin-agx:")
    b = text.index("\n  orin-nano:")
    return a, b


def render(text, x):
    a, b = block_of(text)
    blk = text[a:b]
    for k, v in x.items():
        blk, n = re.subn(r"(\n\s+%s:\s*)([0-9.eE+-]+)" % k, lambda m: m.group(1) + "%.4g" % v,
                         blk, count=1)
        if n != 1:
            sys.exit("sim-orin-fit: no key '%s' in the orin-agx block" % k)
    return text[:a] + blk + text[b:]


def score(bench, text, x, path):
    with open(path, "w") as f:
        f.write(render(text, x))
    out = subprocess.run([bench, path], capture_output=True, text=True)
    if out.returncode != 0:
        return float("inf"), None
    d = dict(line.split("=", 1) for line in out.stdout.split())
    t, p = float(d["orin_time_ratio_mape_pct"]), float(d["orin_power_mape_pct"])
    return t + p, (t, p)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    bench, params = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    keys = sys.argv[4].split(",") if len(sys.argv) > 4 else list(BOUNDS)
    bounds = {k: BOUNDS[k] for k in keys}
    text = open(params).read()
    a, b = block_of(text)
    x = {k: float(re.search(r"\n\s+%s:\s*([0-9.eE+-]+)" % k, text[a:b]).group(1))
         for k in bounds}
    with tempfile.NamedTemporaryFile(suffix=".yaml") as tmp:
        best, tp = score(bench, text, x, tmp.name)
        print("start", x, "scores (time, power) =", tp, flush=True)
        step = {k: 0.5 for k in bounds}
        for r in range(rounds):
            for k, (lo, hi) in bounds.items():
                for sign in (1, -1):
                    y = dict(x)
                    y[k] = min(hi, max(lo, x[k] * math.exp(sign * step[k])))
                    s, t = score(bench, text, y, tmp.name)
                    if s < best:
                        best, tp, x = s, t, y
                        break
                else:
                    step[k] *= 0.5
            print(r, {k: float("%.4g" % v) for k, v in x.items()}, "scores =", tp, flush=True)
    for k, v in x.items():
        print("%s=%.4g" % (k, v))
    print("orin_time_ratio_mape_pct=%.2f\norin_power_mape_pct=%.2f" % tp)


if __name__ == "__main__":
    main()
