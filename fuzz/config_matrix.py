#!/usr/bin/python3
"""Valid hardware configs through the whole pipeline: random points of the config space.

Each trial takes a preset and sets one to five config keys to values a user might write (odd
clocks, tiny or odd-sized arrays and SRAMs, several cores, DMA and DRAM-controller choices, host
ops), then runs `npusim run` on a zoo network under a fusion policy (one trial in five: `npusim
llm` on a small language model, a short prompt and a few decode steps) and checks:

  - the exit code is 0, or 2 with npusim's own message (no library text, no crash, no 1: a
    simulation error on a config npusim accepted is a bug, as a roofline point above its roof);
  - a run that exits 0 wrote a summary with a positive, finite time (an llm run: its TTFT and
    tokens/s).

Trials are drawn from a seeded generator, so a failure prints the command that reproduces it.
Usage: fuzz/config_matrix.py [--npusim build/npusim] [--trials N] [--seed S] [-j N] [--timeout S]
Exit 0 when every trial held, 1 otherwise (each failure printed with its command).
"""
import argparse
import concurrent.futures
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile

LIBRARY_TEXT = ("what()", "std::", "terminate called", "Assertion", "json.exception", "Segmentation")
PRESETS = ["edge-s", "edge-m", "edge-l", "rk3588", "rk3588-core"]
WORKLOADS = ["small_cnn", "ds_cnn_kws", "mobilenet_v2", "resnet18", "bert_base_layer", "vit_s16_block"]
POLICIES = ["none", "epilogue", "greedy", "search"]
LLMS = ["SmolLM2-360M", "Qwen2.5-0.5B", "Qwen3-0.6B"]
DRAM_PRESETS = ["LPDDR4-3200-x32", "LPDDR4X-4266-x32", "LPDDR5-6400-x32", "DDR4-3200-8Gb-x16", "LPDDR4X-4224-x64",
                "LPDDR5-6400-x64"]


def keys(r):
    """Each key with a generator of a value as --set takes it."""
    pick = r.choice
    return {
        "npu.clock": lambda: f"{r.uniform(0.2, 3.6):.4g}GHz",
        "npu.mac_array.kind": lambda: pick(["systolic", "direct"]),
        "npu.mac_array.rows": lambda: str(pick([1, 2, 3, 7, 8, 12, 16, 24, 32, 48, 64, 128])),
        "npu.mac_array.cols": lambda: str(pick([1, 2, 5, 8, 16, 20, 32, 64, 128])),
        "npu.mac_array.dataflow": lambda: pick(["ws", "os", "is"]),
        "npu.mac_array.dtype": lambda: pick(["int8", "int16", "fp16", "bf16", "fp32"]),
        "npu.mac_array.fold_model": lambda: pick(["reference", "overlapped"]),
        "npu.mac_array.efficiency": lambda: f"{r.uniform(0.1, 1):.3g}",
        "npu.mac_array.rate.fp16": lambda: f"{r.uniform(0.1, 2):.3g}",
        "npu.mac_array.accumulator_bytes": lambda: str(pick([1, 2, 4, 8])),
        "npu.vector_unit.lanes": lambda: str(pick([1, 3, 8, 16, 32, 64, 256])),
        "npu.sram.capacity": lambda: pick(["16KiB", "48KiB", "100KiB", "256KiB", "1MiB", "3MiB", "8MiB"]),
        "npu.sram.banks": lambda: str(pick([1, 2, 3, 4, 8, 16, 32])),
        "npu.sram.bank_width": lambda: pick(["4B", "8B", "16B", "32B", "64B", "128B"]),
        "npu.sram.ports": lambda: str(pick([1, 2])),
        "npu.sram.tile_layout": lambda: pick(["row_major", "streamed"]),
        "npu.sram.stream_buffer": lambda: str(pick([1, 2, 4, 16])),
        "npu.dma.channels": lambda: str(pick([1, 2, 3, 8])),
        "npu.dma.max_outstanding_bursts": lambda: str(pick([1, 2, 4, 16, 64, 256])),
        "npu.dma.burst_size": lambda: pick(["16B", "32B", "64B", "128B", "256B"]),
        "npu.cores": lambda: str(pick([1, 2, 3, 4, 5])),
        "npu.noc.bandwidth": lambda: str(pick([0, 16, 64, 256])),
        "npu.noc.latency": lambda: str(pick([0, 5, 50])),
        "npu.l2.capacity": lambda: pick(["0B", "512KiB", "2MiB"]),
        "npu.runtime.dispatch_latency": lambda: pick(["0us", "1us", "20us"]),
        "npu.runtime.core_sync": lambda: pick(["0us", "3us"]),
        "npu.host.ops": lambda: ",".join(r.sample(["softmax", "gelu", "layer_norm", "add", "mul", "relu"], r.randint(1, 3))),
        "npu.dram.preset": lambda: pick(DRAM_PRESETS),
        "npu.dram.channels": lambda: str(pick([1, 2, 4])),
        "npu.dram.ranks": lambda: str(pick([1, 2])),
        "npu.dram.page_policy": lambda: pick(["open", "closed", "adaptive", "open_adaptive"]),
        "npu.dram.refresh": lambda: pick(["all_bank", "per_bank"]),
        "npu.dram.scheduler": lambda: pick(["fr_fcfs", "fcfs"]),
        "npu.dram.write_policy": lambda: pick(["shared", "watermarks"]),
        "npu.dram.xor_bank_hash": lambda: pick(["true", "false"]),
        "npu.dram.bank_queue_depth": lambda: str(pick([1, 2, 8, 32])),
        "npu.dram.read_queue_depth": lambda: str(pick([1, 4, 32])),
        "npu.dram.row_hit_cap": lambda: str(pick([0, 1, 4, 16])),
    }


def trial(npusim, seed, out, timeout):
    r = random.Random(seed)
    table = keys(r)
    chosen = r.sample(sorted(table), r.randint(1, 5))
    # The DRAM preset first: a later DRAM key then edits the preset's values.
    chosen.sort(key=lambda k: k != "npu.dram.preset")
    out_dir = os.path.join(out, f"t{seed}")
    if r.random() < 0.2:
        cmd = [npusim, "llm", "-q", "--config", r.choice(PRESETS), "--model", r.choice(LLMS), "--prompt",
               str(r.choice([1, 16, 100, 256])), "--generate", str(r.choice([1, 3, 8])), "--weight-dtype",
               r.choice(["int4", "int8", "fp16"]), "--fusion", r.choice(["none", "greedy"]), "--out", out_dir]
    else:
        cmd = [npusim, "run", "-q", "-c", r.choice(PRESETS), "-w", r.choice(WORKLOADS), "-f", r.choice(POLICIES),
               "--trace-level", "ops", "--out", out_dir]
    for k in chosen:
        cmd += ["--set", f"{k}={table[k]()}"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "slow", cmd, f"no answer within {timeout} s"
    if p.returncode:
        shutil.rmtree(out_dir, ignore_errors=True)
    err = p.stderr.strip()
    if p.returncode == 2 and err.startswith("npusim") and not any(t in err for t in LIBRARY_TEXT):
        return "input", cmd, err.splitlines()[0] if err else ""
    if p.returncode != 0:
        return "fail", cmd, f"exit {p.returncode}: {err[:600]}"
    try:
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
        figures = [summary["llm"]["ttft_seconds"], summary["llm"]["decode"]["tokens_per_second"]] \
            if "llm" in summary else [summary["seconds"]]
    except (OSError, KeyError, TypeError, ValueError) as e:
        return "fail", cmd, f"exit 0 but no summary figures: {e!r}"
    finally:
        shutil.rmtree(out_dir, ignore_errors=True)
    if not all(isinstance(x, (int, float)) and math.isfinite(x) and x > 0 for x in figures):
        return "fail", cmd, f"summary figures {figures!r}"
    return "ok", cmd, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--npusim", default="build/npusim")
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    npusim = os.path.realpath(a.npusim)
    counts = {"ok": 0, "input": 0, "slow": 0, "fail": 0}
    inputs = {}
    with tempfile.TemporaryDirectory() as out, concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        seeds = range(a.seed, a.seed + a.trials)
        for seed, (kind, cmd, msg) in zip(seeds, pool.map(lambda s: trial(npusim, s, out, a.timeout), seeds)):
            counts[kind] += 1
            if kind == "input":
                inputs.setdefault(msg.split(":")[2] if msg.count(":") > 2 else msg, seed)
            if kind in ("fail", "slow"):
                print(f"{kind.upper()} (seed {seed}): {' '.join(cmd)}\n  {msg}", flush=True)
    print(f"{a.trials} trials: {counts['ok']} ran, {counts['input']} refused as input errors, "
          f"{counts['slow']} slower than {a.timeout:g} s, {counts['fail']} failed")
    for msg, seed in sorted(inputs.items())[:20]:
        print(f"  refused (first seed {seed}):{msg}")
    return 1 if counts["fail"] else 0


if __name__ == "__main__":
    sys.exit(main())
