#!/usr/bin/python3
"""Runs jetfleet-train and the PyTorch baseline (bench/pytorch_train.py) on the same files,
alternately (A B A B ...), and prints a Markdown table of medians and per-pair ratios.

Each process is timed as a whole from outside; its peak RSS comes from wait4() (the largest
process of its tree that it waited for: for PyTorch with workers, the main process or a worker).
Throughput is the median over pairs of each side's samples/s in the epochs after the warm-up.

  compare.py --bin DIR --data ROOT [--pairs N] [--threads N] [--quick] [--only WORKLOAD]
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# workload: model, dataset directory name, minibatches per epoch (bounds each run's time)
WORKLOADS = {
    "lenet5-mnist": ("lenet5", "mnist", 300),
    "resnet18-cifar10": ("resnet18", "cifar10", 20),
    "vgg11-cifar10": ("vgg11", "cifar10", 30),
    "mobilenetv3-gld23k": ("mobilenetv3", "gld23k", 8),
}


def rss_kb(cmd, out_json=None):
    """Runs cmd through wait4 to get its peak RSS; returns (doc, wall_s, maxrss_kb)."""
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        if out_json:
            os.dup2(devnull, 1)
        else:
            fd = os.open(out_json_stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 1)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("bench: %s exited %d" % (" ".join(cmd), os.waitstatus_to_exitcode(status)))
    path = out_json or out_json_stdout_path
    with open(path) as f:
        text = f.read().strip()
    doc = json.loads(text) if out_json else json.loads(text.splitlines()[-1])
    return doc, wall, ru.ru_maxrss


out_json_stdout_path = None


def seconds(epoch, name):
    """A duration of an epoch record: jetfleet-train writes microseconds (NAME_us), the PyTorch
    reference seconds (NAME_s)."""
    if name + "_us" in epoch:
        return epoch[name + "_us"] / 1e6
    return epoch[name + "_s"]


def measured(doc):
    """samples/s and fetch stall (s) over the epochs after the warm-up."""
    eps = [e for e in doc["epochs"] if not e.get("warmup")] or doc["epochs"]
    samples = sum(e["samples"] for e in eps)
    e2e = sum(seconds(e, "e2e") for e in eps)
    return samples / e2e, sum(seconds(e, "fetch_stall") for e in eps)


def sides(a, model, data, workers, batches, loader_only, tmp):
    jf_json = os.path.join(tmp, "jf.json")
    common = ["--workers", str(workers), "--batch", str(a.batch), "--epochs", "2",
              "--threads", str(a.threads), "--seed", "1", "--max-batches", str(batches)]
    jf = [os.path.join(a.bin, "jetfleet-train"), "--model", model, "--data", data,
          "--json-out", jf_json] + common + (["--loader-only"] if loader_only else [])
    py = ["/usr/bin/python3", os.path.join(HERE, "pytorch_train.py"), "--model", model,
          "--data", data] + common + (["--loader-only"] if loader_only else [])
    return (jf, jf_json), (py, None)


def compare(a, name, workers, loader_only, tmp):
    model, ds, batches = WORKLOADS[name]
    if loader_only:
        batches *= 4
    data = os.path.join(a.data, ds)
    (jf, jf_json), (py, _) = sides(a, model, data, workers, batches, loader_only, tmp)
    rows = {"jf": [], "py": []}
    for _ in range(a.pairs):
        for side, cmd, js in (("jf", jf, jf_json), ("py", py, None)):
            doc, wall, rss = rss_kb(cmd, js)
            sps, stall = measured(doc)
            rows[side].append((sps, stall, rss, wall))
    med = {s: [statistics.median(v[i] for v in rows[s]) for i in range(4)] for s in rows}
    ratios = [j[0] / p[0] for j, p in zip(rows["jf"], rows["py"])]
    return med, statistics.median(ratios), min(ratios), max(ratios)


def main():
    global out_json_stdout_path
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--only", action="append")
    ap.add_argument("--workers", default="0,1,2")
    ap.add_argument("--no-loader-only", action="store_true")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="jf-bench-")
    out_json_stdout_path = os.path.join(tmp, "py.json")
    workers = [int(w) for w in a.workers.split(",")]
    names = a.only or list(WORKLOADS)
    print("| workload | workers | jetfleet samples/s | PyTorch samples/s | ratio (min-max) "
          "| jetfleet stall s | PyTorch stall s | jetfleet peak RSS MB | PyTorch peak RSS MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in names:
        for w in workers:
            med, r, lo, hi = compare(a, name, w, False, tmp)
            print("| %s | %d | %.1f | %.1f | %.2f (%.2f-%.2f) | %.3f | %.3f | %.0f | %.0f |" % (
                name, w, med["jf"][0], med["py"][0], r, lo, hi, med["jf"][1], med["py"][1],
                med["jf"][2] / 1024, med["py"][2] / 1024), flush=True)
    if a.no_loader_only or "mobilenetv3-gld23k" not in names:
        return
    print()
    print("Loader alone (--loader-only: fetch, decode, preprocess, batch; no model), GLD-23k JPEGs")
    print()
    print("| workers | jetfleet images/s | PyTorch images/s | ratio (min-max) |")
    print("|---|---|---|---|")
    for w in workers:
        med, r, lo, hi = compare(a, "mobilenetv3-gld23k", w, True, tmp)
        print("| %d | %.1f | %.1f | %.2f (%.2f-%.2f) |" % (w, med["jf"][0], med["py"][0], r, lo, hi),
              flush=True)


if __name__ == "__main__":
    main()
