#!/usr/bin/python3
"""CTest (label corpus): imports and simulates every model of the real-model corpus
(scripts/export_corpus.py) on edge-s, edge-m and edge-l under fusion none, greedy and search,
and checks the MACs npusim reports equal the independent count made in Python from ONNX's
shape inference (more, where the schedule recomputes halos: depth-first column strips or a
recomputed row halo; the `none` runs check every model's count exactly).

    test_corpus.py NPUSIM CORPUS_DIR [--jobs N] [--presets edge-s,...] [--policies none,...]

Writes CORPUS_DIR/corpus_table[.POLICIES].md (model, exporter, opset, MACs, cycles per preset
and policy, wall time of the runs) and exits 1 listing every mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

PRESETS = ("edge-s", "edge-m", "edge-l")
POLICIES = ("none", "greedy", "search")

# Runs that still stop outside the importer, each checked to fail with exactly that message
# (so a fix shows up here as "now runs": delete the entry then). Key: (model, preset, policy),
# policy None for every policy.
KNOWN_FAILURES = {}


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
    summary = schedule = None
    if p.returncode == 0:
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        with open(os.path.join(out, "schedule.json")) as f:
            schedule = json.load(f)
    return {"model": model, "preset": preset, "policy": policy, "rc": p.returncode, "stderr": p.stderr.strip(),
            "summary": summary, "schedule": schedule, "wall": wall}


def recomputing_groups(schedule):
    """Groups whose schedule computes some outputs twice: depth-first groups with column strips
    (the width halo is always recomputed) or a recomputed row halo (docs/scheduling.md)."""
    return [g["name"] for g in schedule["groups"]
            if "depth_first" in g and ("cols" in g["depth_first"] or g["depth_first"].get("halo") == "recompute")]


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
    # summary.json's macs are the MACs executed: the network's count, plus what a schedule that
    # recomputes halos computes again (and only then). The `none` runs check the count exactly.
    macs, expected_macs = r["summary"]["macs"], r["model"]["macs"]
    recompute = recomputing_groups(r["schedule"])
    if macs != expected_macs and not (recompute and macs > expected_macs):
        return (f"{name} on {preset} ({r['policy']}): npusim {macs} MACs, ONNX shape inference {expected_macs}"
                + (f" (groups recomputing halos: {', '.join(recompute[:3])})" if recompute else ""))
    return None


def table(results, models, presets, policies):
    by = {(r["model"]["name"], r["preset"], r["policy"]): r for r in results}
    runs = [(p, q) for p in presets for q in policies]
    head = " | ".join(f"{p} {q} cycles" for p, q in runs)
    lines = [f"| model | exporter | opset | MACs | {head} | wall s ({len(runs)} runs) |",
             "|---|---|---|---|" + "---|" * len(runs) + "---|"]
    for m in models:
        cyc = []
        for p, q in runs:
            r = by[(m["name"], p, q)]
            cyc.append(f"{r['summary']['cycles']:,}" if r["summary"] else f"fails: {known_failure(r) or 'exit ' + str(r['rc'])}")
        wall = sum(by[(m["name"], p, q)]["wall"] for p, q in runs)
        lines.append(f"| {m['name']} | {m['exporter']} | {m['opset']} | {m['macs']:,} | {' | '.join(cyc)} | {wall:.2f} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("npusim")
    ap.add_argument("corpus")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--presets", default=",".join(PRESETS), help="comma-separated config presets")
    ap.add_argument("--policies", default=",".join(POLICIES), help="comma-separated fusion policies")
    args = ap.parse_args()
    presets, policies = args.presets.split(","), args.policies.split(",")
    with open(os.path.join(args.corpus, "manifest.json")) as f:
        models = json.load(f)
    if len(models) < 15:
        print(f"test_corpus: expected at least 15 models in the manifest, found {len(models)}")
        return 1
    jobs = [(m, p, q) for m in models for p in presets for q in policies]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda j: run(args.npusim, *j, args.corpus), jobs))
    problems = [p for p in map(check, results) if p]
    text = table(results, models, presets, policies)
    with open(os.path.join(args.corpus, f"corpus_table.{'_'.join(policies)}.md"), "w") as f:
        f.write(text)
    print(text)
    for p in problems:
        print("FAIL:", p)
    print(f"test_corpus: {len(results)} runs of {len(models)} models, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
