#!/usr/bin/python3
"""Valid models through every planner: properties that must hold on any input npusim accepts.

Exports small networks with torch.onnx (the operator mix of real exports: hardswish and SE
blocks, grouped and dilated convolutions, ConvTranspose and bilinear resize, a YOLO head's
reshape/permute/split, ViT and ConvNeXt blocks, a causal decoder, a GRU, Conv1d and einsum),
then runs `npusim run` over presets x fusion policies x overrides and checks, per run:

  - the exit code is 0, or 2 with npusim's own message (no library text, no crash, no 1);
  - a model's MACs are the same under every preset, policy and override;
  - the schedule.json a run writes reads back (`--fusion file:`) to the same cycles and DRAM bytes;
  - no group moves more than 2.5x the DRAM bytes its plan counted (reported, not failed: the
    planner counts elements, the DMA whole bursts).

Takes about 10 minutes on 2 cores (`--quick`: 2 minutes). Needs Debian's python3-torch and
python3-onnx. Usage: fuzz/model_matrix.py [--npusim build/npusim] [--quick] [--keep DIR]
Exit 0 when every property held, 1 otherwise (each failure printed with its command).
"""
import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

LIBRARY_TEXT = ("what()", "std::", "terminate called", "Assertion", "json.exception", "Segmentation")


def export_models(out):
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    warnings.filterwarnings("ignore")

    class SE(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.f1, self.f2 = nn.Conv2d(c, c // 4, 1), nn.Conv2d(c // 4, c, 1)

        def forward(self, x):
            return x * F.hardsigmoid(self.f2(F.relu(self.f1(F.adaptive_avg_pool2d(x, 1)))))

    class MobileV3(nn.Module):
        def __init__(self):
            super().__init__()
            self.c0, self.bn = nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16)
            self.dw, self.se, self.pw = nn.Conv2d(16, 16, 5, 1, 2, groups=16), SE(16), nn.Conv2d(16, 24, 1)
            self.g, self.dil = nn.Conv2d(24, 48, 3, 1, 1, groups=4), nn.Conv2d(48, 48, 3, 1, 2, dilation=2)

        def forward(self, x):
            x = F.hardswish(self.bn(self.c0(x)))
            return self.dil(F.relu6(self.g(self.pw(self.se(F.hardswish(self.dw(x)))))))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.e1, self.e2 = nn.Conv2d(3, 16, 3, 1, 1), nn.Conv2d(16, 32, 3, 2, 1)
            self.up, self.d = nn.ConvTranspose2d(32, 16, 2, 2), nn.Conv2d(32, 8, 3, 1, 1)

        def forward(self, x):
            a = F.relu(self.e1(x))
            y = self.d(torch.cat([a, self.up(F.relu(self.e2(a)))], 1))
            return F.interpolate(y, scale_factor=2, mode="bilinear", align_corners=False)

    class YoloHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.b = nn.ModuleList([nn.Conv2d(3, 32, 3, 2, 1), nn.Conv2d(32, 64, 3, 2, 1), nn.Conv2d(64, 128, 3, 2, 1)])
            self.h = nn.ModuleList([nn.Conv2d(c, 27, 1) for c in (32, 64, 128)])

        def forward(self, x):
            outs = []
            for b, h in zip(self.b, self.h):
                x = F.silu(b(x))
                y = h(x)
                n, _, hh, ww = y.shape
                y = y.view(n, 3, 9, hh, ww).permute(0, 1, 3, 4, 2).reshape(n, -1, 9)
                xy, wh, conf = y.split([2, 2, 5], -1)
                outs.append(torch.cat([xy.sigmoid() * 2, wh.exp(), conf.sigmoid()], -1))
            return torch.cat(outs, 1)

    class ViT(nn.Module):
        def __init__(self, d=192):
            super().__init__()
            self.pe = nn.Conv2d(3, d, 16, 16)
            self.cls, self.pos = nn.Parameter(torch.zeros(1, 1, d)), nn.Parameter(torch.zeros(1, 197, d))
            self.ln1, self.att = nn.LayerNorm(d), nn.MultiheadAttention(d, 3, batch_first=True)
            self.ln2, self.mlp = nn.LayerNorm(d), nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.head = nn.Linear(d, 10)

        def forward(self, x):
            x = self.pe(x).flatten(2).transpose(1, 2)
            x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
            y = self.ln1(x)
            x = x + self.att(y, y, y, need_weights=False)[0]
            return self.head((x + self.mlp(self.ln2(x)))[:, 0])

    class ConvNeXt(nn.Module):
        def __init__(self, d=96):
            super().__init__()
            self.stem, self.dw, self.ln = nn.Conv2d(3, d, 4, 4), nn.Conv2d(d, d, 7, padding=3, groups=d), nn.LayerNorm(d)
            self.p1, self.p2 = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

        def forward(self, x):
            x = self.stem(x)
            y = self.p2(F.gelu(self.p1(self.ln(self.dw(x).permute(0, 2, 3, 1)))))
            return x + y.permute(0, 3, 1, 2)

    class Decoder(nn.Module):
        def __init__(self, d=128, heads=4):
            super().__init__()
            self.emb, self.ln, self.qkv, self.o = nn.Embedding(1000, d), nn.LayerNorm(d), nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.f1, self.f2, self.lm, self.heads = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.Linear(d, 1000), heads

        def forward(self, ids):
            x = self.emb(ids)
            b, t, d = x.shape
            q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in self.qkv(self.ln(x)).split(d, -1))
            att = (q @ k.transpose(-2, -1)) / 8.0
            att = att.masked_fill(torch.triu(torch.ones(t, t), 1).bool(), -1e9).softmax(-1)
            x = x + self.o((att @ v).transpose(1, 2).reshape(b, t, d))
            return self.lm(x + self.f2(F.gelu(self.f1(self.ln(x)), approximate="tanh")))

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.c, self.r, self.l = nn.Conv1d(8, 16, 5, padding=2), nn.GRU(16, 16, batch_first=True), nn.Linear(16, 4)

        def forward(self, x):
            y = self.c(F.pad(x, (1, 1), mode="reflect")[:, :, 1:-1])
            z = self.r(y.transpose(1, 2))[0]
            return self.l(z).amax(1), torch.einsum("bij,bkj->bik", y, y)

    models = {
        "mobile_v3": (MobileV3(), torch.randn(1, 3, 224, 224), 13),
        "unet": (UNet(), torch.randn(1, 3, 128, 128), 13),
        "yolo_head": (YoloHead(), torch.randn(1, 3, 256, 256), 13),
        "vit": (ViT(), torch.randn(1, 3, 224, 224), 14),
        "convnext": (ConvNeXt(), torch.randn(1, 3, 224, 224), 17),
        "decoder": (Decoder(), torch.randint(0, 1000, (1, 64)), 14),
        "sequence": (Sequence(), torch.randn(2, 8, 40), 13),
    }
    paths = []
    for name, (net, example, opset) in models.items():
        path = os.path.join(out, name + ".onnx")
        torch.onnx.export(net.eval(), example, path, opset_version=opset, input_names=["x"])
        paths.append(path)
    return paths


def run(npusim, args, out):
    shutil.rmtree(out, ignore_errors=True)
    try:
        p = subprocess.run([npusim, "run"] + args + ["--out", out], capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return None, "timed out after 600 s"
    return p.returncode, p.stderr.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--npusim", default="build/npusim")
    ap.add_argument("--quick", action="store_true", help="edge-s and rk3588-core, greedy and search, no overrides")
    ap.add_argument("--keep", help="keep the exported models and run folders here")
    opts = ap.parse_args()
    npusim = os.path.abspath(opts.npusim)
    if not os.access(npusim, os.X_OK):
        sys.exit(f"model_matrix: {npusim} is not an executable npusim (build first: scripts/build.sh)")
    work = opts.keep or tempfile.mkdtemp(prefix="model-matrix-")
    os.makedirs(work, exist_ok=True)
    models = export_models(work) + ["resnet18", "bert_base_layer"]
    configs = ["edge-s", "rk3588-core"] if opts.quick else ["edge-s", "edge-m", "edge-l", "rk3588-core"]
    policies = ["greedy", "search"] if opts.quick else ["none", "epilogue", "greedy", "search"]
    overrides = [[]] if opts.quick else [[], ["--set", "npu.sram.capacity=16KiB"], ["--set", "npu.mac_array.dtype=fp16"],
                                         ["--set", "npu.mac_array.dataflow=os"], ["--set", "npu.clock=1.7 GHz"]]
    failures, notes, macs = [], [], {}
    a, b = os.path.join(work, "a"), os.path.join(work, "b")
    for model, config, policy, extra in itertools.product(models, configs, policies, overrides):
        base = ["-c", config, "-w", model, "-f", policy] + extra
        shown = " ".join(["npusim", "run"] + base)
        rc, err = run(npusim, base, a)
        if rc != 0:
            bad = rc != 2 or any(t in err for t in LIBRARY_TEXT) or not err.startswith("npusim")
            if bad:
                failures.append(f"{shown}: exit {rc}: {err[-300:]}")
            continue
        s = json.load(open(os.path.join(a, "summary.json")))
        key = os.path.basename(model)
        if macs.setdefault(key, s["model_macs"]) != s["model_macs"]:
            failures.append(f"{shown}: {s['model_macs']} MACs, other runs of {key} {macs[key]}")
        plan = {g["name"]: g["dram_bytes"] for g in json.load(open(os.path.join(a, "schedule.json")))["groups"]}
        for g in s["groups"]:
            moved, planned = g["dram_read_bytes"] + g["dram_write_bytes"], plan.get(g["name"], 0)
            if planned and moved > 2.5 * planned and moved - planned > 65536:
                notes.append(f"{shown}: group {g['name']} moved {moved} B, planned {planned} B")
        rc2, err2 = run(npusim, ["-c", config, "-w", model, "-f", "file:" + os.path.join(a, "schedule.json")] + extra, b)
        if rc2 != 0:
            failures.append(f"{shown}: its schedule.json does not read back: {err2[-300:]}")
            continue
        s2 = json.load(open(os.path.join(b, "summary.json")))
        if (s2["cycles"], s2["dram_read_bytes"], s2["dram_write_bytes"]) != (
                s["cycles"], s["dram_read_bytes"], s["dram_write_bytes"]):
            failures.append(f"{shown}: read back, {s2['cycles']} cycles and {s2['dram_read_bytes']} B read "
                            f"against {s['cycles']} and {s['dram_read_bytes']}")
    for n in notes:
        print("note:", n)
    for f in failures:
        print("FAILED:", f)
    print(f"model_matrix: {len(models)} models x {len(configs)} presets x {len(policies)} policies x "
          f"{len(overrides)} overrides: {len(failures)} failures, {len(notes)} notes")
    if not opts.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
