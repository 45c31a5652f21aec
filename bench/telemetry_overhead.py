#!/usr/bin/env python3
"""Slowdown of a training run with the agent's telemetry at N Hz beside it, against none.

Runs jetfleet-train three ways, rotating their order in every round so that drift cancels:
alone (absent), beside jf-bench-telemetry-load --rate 0 (off: the agent's process, platform and
sampler actor there, not sampling) and beside jf-bench-telemetry-load --rate N (on: the agent's
own sampler actor at N Hz and the per-sample JSON encoding of its event loop, in a separate
process as the agent is). Reports, per workload, the median samples/s of the epochs after the
warm-up, the per-round ratios on/off (the cost of telemetry: the issue's figure) and off/absent
(the cost of the idle process being there at all), each as median (min-max), and the sampler's
own CPU use and sampling quality.

  telemetry_overhead.py --bin DIR --data ROOT [--pairs N] [--rate HZ] [--threads N]
                        [--platform-args "..."] [--only WORKLOAD]
"""
import argparse
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time

# workload: model, dataset directory, minibatches per epoch (about 10-20 s per run here)
WORKLOADS = {
    "lenet5-mnist": ("lenet5", "mnist", 600),
    "resnet18-cifar10": ("resnet18", "cifar10", 12),
}


def train(a, model, data, batches, out_json):
    cmd = [os.path.join(a.bin, "jetfleet-train"), "--model", model, "--data", data,
           "--json-out", out_json, "--workers", "1", "--batch", "16", "--epochs", "2",
           "--threads", str(a.threads), "--seed", "1", "--max-batches", str(batches)]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out_json) as f:
        doc = json.load(f)
    eps = [e for e in doc["epochs"] if not e.get("warmup")] or doc["epochs"]
    return sum(e["samples"] for e in eps) / (sum(e["e2e_us"] for e in eps) / 1e6)


def one(a, rate, model, data, batches, tmp):
    """rate None: training alone; 0: the load process idle; N: sampling at N Hz."""
    out = os.path.join(tmp, "train.json")
    if rate is None:
        return train(a, model, data, batches, out), None
    load = subprocess.Popen([os.path.join(a.bin, "jf-bench-telemetry-load"), "--rate",
                             str(rate)] + shlex.split(a.platform_args),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    time.sleep(0.5)  # the sampler is running before training starts
    try:
        rate = train(a, model, data, batches, out)
    finally:
        load.send_signal(signal.SIGTERM)
        text, _ = load.communicate(timeout=30)
    if load.returncode != 0:
        sys.exit("bench: jf-bench-telemetry-load exited %d" % load.returncode)
    return rate, json.loads(text.strip().splitlines()[-1])


def fmt_ratio(r):
    return "%.4f (%.4f-%.4f)" % (statistics.median(r), min(r), max(r))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--pairs", type=int, default=9, help="rounds of the three runs")
    ap.add_argument("--rate", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--platform-args", default="--platform host")
    ap.add_argument("--only", action="append")
    a = ap.parse_args()
    print("| workload | rounds | absent samples/s | off samples/s | on samples/s | on/off "
          "median (min-max) | off/absent median (min-max) | sampler CPU % of a core | "
          "sampler us/sample | samples late/missed |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    modes = (None, 0, a.rate)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (model, dset, batches) in WORKLOADS.items():
            if a.only and name not in a.only:
                continue
            data = os.path.join(a.data, dset)
            got = {m: [] for m in modes}
            loads = []
            one(a, None, model, data, batches, tmp)  # warm-up: page cache, CPU frequency
            for i in range(a.pairs):
                order = modes[i % 3:] + modes[:i % 3]
                for m in order:
                    rate, load = one(a, m, model, data, batches, tmp)
                    got[m].append(rate)
                    if m == a.rate:
                        loads.append(load)
            on_off = [x / y for x, y in zip(got[a.rate], got[0])]
            off_abs = [x / y for x, y in zip(got[0], got[None])]
            late = sum(l["late"] for l in loads)
            missed = sum(l["missed"] for l in loads)
            print("| %s | %d | %.1f | %.1f | %.1f | %s | %s | %.3f | %.0f | %d/%d |" % (
                name, a.pairs, statistics.median(got[None]), statistics.median(got[0]),
                statistics.median(got[a.rate]), fmt_ratio(on_off), fmt_ratio(off_abs),
                statistics.median(l["cpu_pct_of_core"] for l in loads),
                statistics.median(l["cpu_us_per_sample"] for l in loads), late, missed))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
