#!/usr/bin/python3
"""CTest (label corpus): imports and simulates every model of the real-model corpus
(scripts/export_corpus.py) on edge-s and edge-m under fusion none and greedy, and checks the
MACs npusim reports equal the independent count made in Python from ONNX's shape inference.

    test_corpus.py NPUSIM CORPUS_DIR [--jobs N]

Writes CORPUS_DIR/corpus_table.md (model, exporter, opset, MACs, edge-m cycles none/greedy,
wall time of each run) and exits 1 listing every mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

PRESETS = ("edge-s", "edge-m")
POLICIES = ("none", "greedy")

# Runs that still stop outside the importer, each checked to fail with exactly that message
# (so a fix shows up here as "now runs": delete the entry then). Key: (model, preset, policy),
# policy None for every policy.
KNOWN_FAILURES = {
    # regnet_y_400mf_op15 on edge-s (greedy) ran into the roofline self-check (grouped 1x1 convs
    # 0.14 % above the SRAM roof) until its squeeze-excitation Mul became the next conv's input
    # prologue: that plan no longer shows it (the underlying count was not found).
}


def known_failure(r):
    name, preset, policy = r["model"]["name"], r["preset"], r["policy"]
    return KNOWN_FAILURES.get((name, preset, policy)) or KNOWN_FAILURES.get((name, preset, None))


def run(npusim, model, preset, policy, out_root):
    out = os.path.join(out_root, "runs", f"{model['name']}.{preset}.{policy}")
    cmd = [npusim, "run", "--workload", model["file"], "--config", preset, "--fusion", policy,
           "--trace-level", "ops", "--out", out]
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - start
    summary = None
    if p.returncode == 0:
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
    return {"model": model, "preset": preset, "policy": policy, "rc": p.returncode, "stderr": p.stderr.strip(),
            "summary": summary, "wall": wall}


def check(r):
    """The problem with one run, or None."""
    name, preset = r["model"]["name"], r["preset"]
    expected = known_failure(r)
    if expected:
        if r["rc"] == 0:
            return f"{name} on {preset} ({r['policy']}) now runs: remove it from KNOWN_FAILURES"
        if expected not in r["stderr"]:
            return f"{name} on {preset} ({r['policy']}) was expected to fail with '{expected}', got: {r['stderr']}"
        return None
    if r["rc"] != 0:
        return f"{name} on {preset} ({r['policy']}): exit {r['rc']}: {r['stderr']}"
    macs = r["summary"]["macs"]
    if macs != r["model"]["macs"]:
        return f"{name} on {preset} ({r['policy']}): npusim {macs} MACs, ONNX shape inference {r['model']['macs']}"
    return None


def table(results, models):
    by = {(r["model"]["name"], r["preset"], r["policy"]): r for r in results}
    lines = ["| model | exporter | opset | MACs | edge-m cycles none | edge-m cycles greedy | wall s (4 runs) |",
             "|---|---|---|---|---|---|---|"]
    for m in models:
        cyc = []
        for policy in POLICIES:
            r = by[(m["name"], "edge-m", policy)]
            cyc.append(f"{r['summary']['cycles']:,}" if r["summary"] else f"fails: {known_failure(r) or 'exit ' + str(r['rc'])}")
        wall = sum(by[(m["name"], p, q)]["wall"] for p in PRESETS for q in POLICIES)
        lines.append(f"| {m['name']} | {m['exporter']} | {m['opset']} | {m['macs']:,} | {cyc[0]} | {cyc[1]} | {wall:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("npusim")
    ap.add_argument("corpus")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    with open(os.path.join(args.corpus, "manifest.json")) as f:
        models = json.load(f)
    if len(models) < 15:
        print(f"test_corpus: expected at least 15 models in the manifest, found {len(models)}")
        return 1
    jobs = [(m, p, q) for m in models for p in PRESETS for q in POLICIES]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda j: run(args.npusim, *j, args.corpus), jobs))
    problems = [p for p in map(check, results) if p]
    with open(os.path.join(args.corpus, "corpus_table.md"), "w") as f:
        f.write(table(results, models))
    print(table(results, models))
    for p in problems:
        print("FAIL:", p)
    print(f"test_corpus: {len(results)} runs of {len(models)} models, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
