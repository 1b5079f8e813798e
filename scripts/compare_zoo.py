#!/usr/bin/python3
"""Checks that a change keeps every zoo figure: runs each zoo network on edge-s/m/l under the
none and greedy policies with two npusim binaries and compares their summary.json field by field
(exact equality; nothing in a summary depends on the host).

  scripts/compare_zoo.py --save REF_DIR --binary OLD/npusim        # references, before the change
  scripts/compare_zoo.py --check REF_DIR --binary NEW/npusim       # after: exit 1 on any difference
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ZOO = ["small_cnn", "mobilenet_v2", "resnet18", "resnet50", "ds_cnn_kws", "bert_base_layer", "vit_s16_block"]
CONFIGS = ["edge-s", "edge-m", "edge-l"]
POLICIES = ["none", "greedy"]


def run(binary, workload, config, fusion, out):
    subprocess.run([binary, "run", "-w", workload, "-c", config, "-f", fusion, "--trace-level", "ops", "-o", out],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def differences(a, b, path=""):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k not in a or k not in b:
                yield f"{path}.{k}: only in {'reference' if k in a else 'new'}"
            else:
                yield from differences(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path}: {len(a)} entries, now {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {a!r} -> {b!r}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", metavar="DIR")
    mode.add_argument("--check", metavar="DIR")
    ap.add_argument("--binary", required=True)
    args = ap.parse_args()
    ref_dir = args.save or args.check
    os.makedirs(ref_dir, exist_ok=True)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for w in ZOO:
            for c in CONFIGS:
                for p in POLICIES:
                    name = f"{w}.{c}.{p}.json"
                    summary = run(args.binary, w, c, p, os.path.join(tmp, name))
                    ref = os.path.join(ref_dir, name)
                    if args.save:
                        with open(ref, "w") as f:
                            json.dump(summary, f)
                        continue
                    with open(ref) as f:
                        diffs = list(differences(json.load(f), summary))
                    if diffs:
                        failed += 1
                        print(f"{name}: {len(diffs)} differences, first: {diffs[:3]}")
    total = len(ZOO) * len(CONFIGS) * len(POLICIES)
    print(f"{'saved' if args.save else 'checked'} {total} runs" + ("" if args.save else f", {failed} differ"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
