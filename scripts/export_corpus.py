#!/usr/bin/python3
"""Exports npusim's real-model ONNX corpus into a build folder (never into git).

    /usr/bin/python3 scripts/export_corpus.py OUT_DIR [--only NAME,NAME] [--cache DIR | --no-cache]

Writes OUT_DIR/<name>.onnx for each model and OUT_DIR/manifest.json: per model its exporter,
opset, input shape and an independent MAC count made from ONNX's own shape inference
(`count_macs`). Weights are random: npusim never reads weight values. Needs Debian's
python3-torch, python3-torchvision and python3-onnx (scripts/install-deps.sh).

The corpus stresses what exporters really write (docs/onnx.md, "Real-model corpus"):
torchvision classifiers, segmentation and detection networks at 512-1024 px, opsets 7 to 17,
an fp16 conversion with its Casts appended out of order, QDQ and QOperator int8 variants and
tf2onnx-style NHWC graphs, the last three written with the onnx helper.

An export takes about two minutes, so a finished one is kept in a cache folder
(${XDG_CACHE_HOME:-~/.cache}/npusim/corpus/KEY) and copied from there the next time: KEY hashes
this script, the model selection and the versions of Python, torch, torchvision, onnx and numpy,
so any change to what would be exported exports again. A cache entry appears whole or not at all
(written beside it, then renamed into place).
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

# ---- the independent MAC count --------------------------------------------------------------


def _dims(vi):
    t = vi.type.tensor_type
    if not t.HasField("shape"):
        return None
    d = [x.dim_value if x.HasField("dim_value") else None for x in t.shape.dim]
    return None if any(v is None for v in d) else d


def _prod(v):
    p = 1
    for x in v:
        p *= x
    return p


def _fold_constant_params(model):
    """Evaluates the few constant-only nodes ONNX's data propagation does not (Split, and Concat
    of its parts: tf2onnx's pads) with numpy, as initializers, so shape inference sees the pads."""
    g = model.graph
    known = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    keep = []
    for n in g.node:
        ins = [known.get(i) for i in n.input]
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        out = None
        if n.input and all(v is not None for v in ins) and n.op_type in ("Split", "Concat"):
            if n.op_type == "Split":
                axis = attrs.get("axis", 0)
                sizes = attrs.get("split") or (list(ins[1]) if len(ins) > 1 else None)
                cuts = np.cumsum(sizes)[:-1] if sizes else len(n.output)
                out = np.split(ins[0], cuts, axis=axis)
            else:
                out = [np.concatenate(ins, axis=attrs.get("axis", 0))]
        if out is None:
            keep.append(n)
            continue
        for name, v in zip(n.output, out):
            known[name] = v
            g.initializer.append(numpy_helper.from_array(v, name))
    del g.node[:]
    g.node.extend(keep)
    return model


class ShapesUnknown(Exception):
    """ONNX's shape inference left a MAC-bearing node's shapes unknown."""


def _batch_one(model):
    """The model with batch 1 where an input's only symbolic dim is its first (a dynamic batch,
    which npusim also takes as 1)."""
    for vi in model.graph.input:
        dims = vi.type.tensor_type.shape.dim
        if len(dims) >= 2 and not dims[0].HasField("dim_value") and all(d.HasField("dim_value") for d in dims[1:]):
            dims[0].dim_value = 1
    return model


def count_macs(model):
    """MACs of the model as an NPU runs it, from ONNX's shape inference: Conv
    N*OH*OW*Cout*(Cin/group)*KH*KW, ConvTranspose N*H*W*Cin*(Cout/group)*KH*KW (no inserted zeros),
    Gemm/MatMul batch*M*K*N, and their quantized forms. Nodes whose inputs are all constants
    (weight preprocessing) are computed at import time and cost nothing; so do nodes no output
    depends on."""
    inferred = shape_inference.infer_shapes(_fold_constant_params(_batch_one(model)), data_prop=True)
    g = inferred.graph
    shapes = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        d = _dims(vi)
        if d is not None:
            shapes[vi.name] = d
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    const = {t.name for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant" or (n.input and all(i in const or i == "" for i in n.input)):
            const.update(n.output)
    # Nodes an output depends on.
    producer = {o: n for n in g.node for o in n.output}
    live, stack = set(), [o.name for o in g.output]
    while stack:
        v = stack.pop()
        n = producer.get(v)
        if n is None or id(n) in live:
            continue
        live.add(id(n))
        stack.extend(i for i in n.input if i)
    total = 0
    for n in g.node:
        if id(n) not in live or all(i in const or i == "" for i in n.input):
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        t = n.op_type
        needed = [i for i in n.input[:4] if i] + list(n.output[:1])
        if t in ("Conv", "ConvInteger", "QLinearConv", "FusedConv", "ConvTranspose", "Gemm", "FusedGemm", "MatMul",
                 "MatMulInteger", "QLinearMatMul") and any(v not in shapes for v in needed):
            raise ShapesUnknown(f"{t} node '{n.name}'")
        if t in ("Conv", "ConvInteger", "QLinearConv", "FusedConv"):
            w = shapes[n.input[3] if t == "QLinearConv" else n.input[1]]
            y = shapes[n.output[0]]
            total += _prod(y) * w[1] * _prod(w[2:])
        elif t == "ConvTranspose":
            # weight [Cin, Cout/group, KH, KW]: each input value meets Cout/group * KH*KW weights
            x, w = shapes[n.input[0]], shapes[n.input[1]]
            total += _prod(x) * w[1] * _prod(w[2:])
        elif t in ("Gemm", "FusedGemm"):
            a, b = shapes[n.input[0]], shapes[n.input[1]]
            m = a[1] if attrs.get("transA", 0) else a[0]
            k = a[0] if attrs.get("transA", 0) else a[1]
            nn = b[0] if attrs.get("transB", 0) else b[1]
            total += m * k * nn
        elif t in ("MatMul", "MatMulInteger", "QLinearMatMul"):
            a = shapes[n.input[0]]
            b = shapes[n.input[3] if t == "QLinearMatMul" else n.input[1]]
            y = shapes[n.output[0]]
            k = a[-1]
            total += _prod(y) * k
    return total


# ---- torchvision exports --------------------------------------------------------------------


def export_torch(module, shape, path, opset, autograd=False, token_ids=False):
    """Exports `module` and returns a function that counts its MACs in PyTorch, the reference
    where ONNX's shape inference leaves gaps: every convolution, linear and matrix product the
    forward pass calls, seen through a TorchFunctionMode (functional calls included: Swin's
    attention calls F.linear and matmul directly, which module hooks miss). The count runs a
    forward pass of its own, so it is run only when asked: most models are counted from ONNX,
    and a forward pass of the U-Net at 1024 px took as long as its export.
    `autograd` exports with gradients enabled: torch 1.13's nn.MultiheadAttention takes its
    fused fast path (aten::_native_multi_head_attention, which has no ONNX export) under
    no_grad, and the exported graph is the same either way. `token_ids`: the input is int64 token
    ids (below 100), not floats."""
    import torch

    module.eval()
    x = torch.randint(0, 100, shape) if token_ids else torch.randn(*shape)
    with torch.set_grad_enabled(autograd):
        torch.onnx.export(module, x, path, opset_version=opset, input_names=["input"], do_constant_folding=True)

    def count():
        counter = torch_macs_counter()
        with torch.no_grad(), counter:
            module(x)
        return counter.macs

    return count


def torch_macs_counter():
    """A TorchFunctionMode that sums the MACs of the conv, linear and matmul calls under it."""
    import torch
    import torch.nn.functional as F
    from torch.overrides import TorchFunctionMode

    matmuls = (torch.matmul, torch.Tensor.matmul, torch.Tensor.__matmul__, torch.bmm, torch.mm, torch.Tensor.bmm,
               torch.Tensor.mm)

    class Count(TorchFunctionMode):
        macs = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            if func is F.linear:
                self.macs += out.numel() * args[1].shape[-1]
            elif func in matmuls:
                self.macs += out.numel() * args[0].shape[-1]
            elif func in (F.conv1d, F.conv2d):  # weight [Cout, Cin/groups, k...]
                self.macs += out.numel() * args[1][0].numel()
            elif func in (F.conv_transpose1d, F.conv_transpose2d):  # weight [Cin, Cout/groups, k...]
                self.macs += args[0].numel() * args[1][0].numel()
            return out

    return Count()


class Heads:
    """Detection networks without their data-dependent post-processing (box decoding, NMS),
    which an NPU deployment runs on the host: backbone + FPN + heads, as vendors' model zoos
    ship them."""

    @staticmethod
    def retinanet(model):
        import torch

        class M(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                feats = list(self.m.backbone(x).values())
                out = self.m.head(feats)
                return out["cls_logits"], out["bbox_regression"]

        return M(model)

    @staticmethod
    def ssdlite(model):
        import torch

        class M(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                feats = list(self.m.backbone(x).values())
                out = self.m.head(feats)
                return out["cls_logits"], out["bbox_regression"]

        return M(model)

    @staticmethod
    def segmentation(model):
        import torch

        class M(torch.nn.Module):
            def __init__(self, m):
                super().__init__()
                self.m = m

            def forward(self, x):
                return self.m(x)["out"]

        return M(model)


def torch_int8(model, shape):
    """`model` quantized to int8 by PyTorch's FX graph mode (qnnpack config, one calibration
    batch of random data): what `torch.onnx.export` writes for a model quantized in PyTorch."""
    import torch
    from torch.ao.quantization import get_default_qconfig_mapping
    from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx

    model.eval()
    x = torch.randn(*shape)
    prepared = prepare_fx(model, get_default_qconfig_mapping("qnnpack"), (x,))
    with torch.no_grad():
        prepared(x)
    return convert_fx(prepared)


def gpt_mini(vocab=5000, tokens=128, width=256, heads=4, layers=2):
    """A GPT-2-style decoder as minGPT writes it: pre-LayerNorm blocks, one qkv projection split
    in three, scores masked by a lower-triangular matrix, GELU MLP, a tied-size LM head."""
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
            self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
            self.fc, self.fc2 = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = (p.view(b, t, heads, c // heads).transpose(1, 2) for p in self.qkv(self.ln1(x)).split(c, dim=2))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (c // heads) ** 0.5)
            mask = torch.tril(torch.ones(t, t)).view(1, 1, t, t)
            att = torch.softmax(att.masked_fill(mask == 0, float("-inf")), -1)
            x = x + self.proj((att @ v).transpose(1, 2).contiguous().view(b, t, c))
            return x + self.fc2(nn.functional.gelu(self.fc(self.ln2(x))))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = nn.Embedding(vocab, width), nn.Embedding(tokens, width)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln, self.head = nn.LayerNorm(width), nn.Linear(width, vocab, bias=False)

        def forward(self, idx):
            pos = torch.arange(0, idx.shape[1], dtype=torch.long).unsqueeze(0)
            x = self.wte(idx) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.head(self.ln(x))

    return Gpt()


def unet(widths=(32, 64, 128, 256), classes=2):
    """A U-Net (Ronneberger et al.) of four levels, as segmentation repositories write it: two
    3x3 conv + BN + ReLU per level, max-pool down, ConvTranspose 2x2 up, skip Concats."""
    import torch
    import torch.nn as nn

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True),
                             nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            w = widths
            self.down = nn.ModuleList([block(3, w[0])] + [block(w[i], w[i + 1]) for i in range(len(w) - 1)])
            self.up = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, stride=2) for i in range(len(w) - 1)])
            self.merge = nn.ModuleList([block(2 * w[i], w[i]) for i in range(len(w) - 1)])
            self.head = nn.Conv2d(w[0], classes, 1)

        def forward(self, x):
            skips = []
            for i, b in enumerate(self.down):
                x = b(x)
                if i + 1 < len(self.down):
                    skips.append(x)
                    x = nn.functional.max_pool2d(x, 2)
            for i in reversed(range(len(self.up))):
                x = self.merge[i](torch.cat([self.up[i](x), skips[i]], 1))
            return self.head(x)

    return UNet()


def torchvision_models():
    """(name, constructor, input shape, opset[, export with autograd[, token-id input]]):
    torchvision 0.14 architectures and a few written here, random weights."""
    import torchvision.models as tv
    import torchvision.models.detection as det
    import torchvision.models.segmentation as seg

    return [
        ("resnet18_op7", lambda: tv.resnet18(), [1, 3, 224, 224], 7),
        ("resnet50_op17", lambda: tv.resnet50(), [1, 3, 224, 224], 17),
        ("squeezenet1_1_op8", lambda: tv.squeezenet1_1(), [1, 3, 224, 224], 8),
        ("alexnet_op9", lambda: tv.alexnet(), [1, 3, 224, 224], 9),
        ("shufflenet_v2_op10", lambda: tv.shufflenet_v2_x1_0(), [1, 3, 224, 224], 10),
        ("mobilenet_v2_op11", lambda: tv.mobilenet_v2(), [1, 3, 224, 224], 11),
        ("googlenet_op12", lambda: tv.googlenet(aux_logits=False, init_weights=True), [1, 3, 224, 224], 12),
        ("mobilenet_v3_small_op13", lambda: tv.mobilenet_v3_small(), [1, 3, 224, 224], 13),
        ("mnasnet0_5_op14", lambda: tv.mnasnet0_5(), [1, 3, 224, 224], 14),
        ("regnet_y_400mf_op15", lambda: tv.regnet_y_400mf(), [1, 3, 224, 224], 15),
        ("densenet121_op16", lambda: tv.densenet121(), [1, 3, 224, 224], 16),
        ("efficientnet_b0_op17", lambda: tv.efficientnet_b0(), [1, 3, 224, 224], 17),
        ("convnext_tiny_op17", lambda: tv.convnext_tiny(), [1, 3, 224, 224], 17),
        # Swin-T: shifted-window attention; its masks are built with ScatterND from shapes.
        ("swin_t_op17", lambda: tv.swin_t(), [1, 3, 224, 224], 17),
        # PyTorch's own int8 flow (FX static quantization, qnnpack): QDQ with a Cast between
        # each QuantizeLinear and its DequantizeLinear.
        ("mobilenet_v2_torch_int8_op13", lambda: torch_int8(tv.mobilenet_v2(), [1, 3, 224, 224]), [1, 3, 224, 224], 13),
        # A GPT-style decoder (2 blocks, width 256, 128 tokens of a 5000-word vocabulary): token
        # and position embeddings (Gather), a causal mask from Trilu, Where on the scores.
        ("gpt_mini_op14", lambda: gpt_mini(), [1, 128], 14, False, True),
        # A U-Net at 1024 x 1024 (148 GMAC): skip Concats and ConvTranspose upsampling.
        ("unet_1024_op13", lambda: unet(), [1, 3, 1024, 1024], 13),
        # ViT-S/16 (DeiT-S's shape: 12 layers, 6 heads, width 384): attention as PyTorch writes
        # it, projections on [seq, batch, embed], LayerNorm decomposed below opset 17.
        (
            "vit_s16_op14",
            lambda: tv.VisionTransformer(image_size=224, patch_size=16, num_layers=12, num_heads=6,
                                         hidden_dim=384, mlp_dim=1536),
            [1, 3, 224, 224],
            14,
            True,
        ),
        (
            "deeplabv3_mobilenet_512_op11",
            lambda: Heads.segmentation(seg.deeplabv3_mobilenet_v3_large(weights_backbone=None, num_classes=21)),
            [1, 3, 512, 512],
            11,
        ),
        (
            "lraspp_mobilenet_1024_op12",
            lambda: Heads.segmentation(seg.lraspp_mobilenet_v3_large(weights_backbone=None, num_classes=21)),
            [1, 3, 1024, 1024],
            12,
        ),
        (
            "fcn_resnet50_512_op13",
            lambda: Heads.segmentation(seg.fcn_resnet50(weights_backbone=None, num_classes=21)),
            [1, 3, 512, 512],
            13,
        ),
        (
            "ssdlite320_heads_op13",
            lambda: Heads.ssdlite(det.ssdlite320_mobilenet_v3_large(weights_backbone=None, num_classes=91)),
            [1, 3, 320, 320],
            13,
        ),
        (
            "retinanet_resnet50_heads_512_op11",
            lambda: Heads.retinanet(det.retinanet_resnet50_fpn(weights_backbone=None, num_classes=91)),
            [1, 3, 512, 512],
            11,
        ),
    ]


# ---- graphs written with the onnx helper ----------------------------------------------------


def append_fp16_casts(src, dst):
    """An fp16 conversion as onnxconverter-common writes it: float initializers become fp16, and
    the Casts at the graph's input and output are appended at the end of the node list, after
    the nodes that read them."""
    m = onnx.load(src)
    g = m.graph
    for t in g.initializer:
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                    a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16)))
    inp, out = g.input[0].name, g.output[0].name
    for n in g.node:
        for i, name in enumerate(n.input):
            if name == inp:
                n.input[i] = inp + "_fp16"
        for i, name in enumerate(n.output):
            if name == out:
                n.output[i] = out + "_fp16"
    g.node.append(helper.make_node("Cast", [inp], [inp + "_fp16"], to=TensorProto.FLOAT16, name="graph_input_cast0"))
    g.node.append(helper.make_node("Cast", [out + "_fp16"], [out], to=TensorProto.FLOAT, name="graph_output_cast0"))
    del g.value_info[:]
    onnx.save(m, dst)


def _q_init(name, dims, dtype=np.int8):
    return numpy_helper.from_array(np.zeros(dims, dtype=dtype), name)


def _f_scalar(name, v=0.02):
    return numpy_helper.from_array(np.array(v, dtype=np.float32), name)


def qdq_variant(src, dst):
    """The QDQ form ONNX Runtime's static quantizer writes: every Conv/Gemm/MatMul reads
    DequantizeLinear(QuantizeLinear(activation)) and DequantizeLinear(int8 weight)."""
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    nodes = []
    g.initializer.extend([_f_scalar("qdq_scale"), _q_init("qdq_zero", [], np.uint8), _q_init("qdq_wzero", [])])
    annotated = set()  # one Q/DQ pair per activation, however many ops read it
    for n in g.node:
        if n.op_type in ("Conv", "Gemm", "MatMul") and n.input[0] not in inits:
            x = n.input[0]
            if x not in annotated:
                annotated.add(x)
                nodes.append(helper.make_node("QuantizeLinear", [x, "qdq_scale", "qdq_zero"], [x + "_q"]))
                nodes.append(helper.make_node("DequantizeLinear", [x + "_q", "qdq_scale", "qdq_zero"], [x + "_dq"]))
            n.input[0] = x + "_dq"
            w = n.input[1]
            if w in inits and inits[w].data_type == TensorProto.FLOAT:
                q = _q_init(w + "_int8", list(inits[w].dims))
                g.initializer.append(q)
                nodes.append(helper.make_node("DequantizeLinear", [q.name, "qdq_scale", "qdq_wzero"], [w + "_dqw"]))
                n.input[1] = w + "_dqw"
        nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    onnx.save(m, dst)


def qoperator_variant(src, dst):
    """The QOperator form: Conv -> QLinearConv (uint8 activations, int8 weights, int32 bias),
    MatMul-like Gemm -> QLinearMatMul, a QuantizeLinear at the input and a DequantizeLinear at the
    output; everything else (Relu fused away by the quantizer is kept here: it is cheap) runs
    between them."""
    m = onnx.load(src)
    g = m.graph
    inits = {t.name: t for t in g.initializer}
    g.initializer.extend([_f_scalar("qo_s"), _q_init("qo_z", [], np.uint8), _q_init("qo_wz", [])])
    nodes = []
    inp, out = g.input[0].name, g.output[0].name
    nodes.append(helper.make_node("QuantizeLinear", [inp, "qo_s", "qo_z"], [inp + "_u8"]))
    for n in g.node:
        n.input[:] = [inp + "_u8" if i == inp else i for i in n.input]
        n.output[:] = [out + "_u8" if o == out else o for o in n.output]
        if n.op_type == "Conv":
            w = inits[n.input[1]]
            q = _q_init(w.name + "_int8", list(w.dims))
            g.initializer.append(q)
            ins = [n.input[0], "qo_s", "qo_z", q.name, "qo_s", "qo_wz", "qo_s", "qo_z"]
            if len(n.input) > 2 and n.input[2]:
                b = _q_init(n.input[2] + "_int32", [w.dims[0]], np.int32)  # one per out-channel
                g.initializer.append(b)
                ins.append(b.name)
            q_node = helper.make_node("QLinearConv", ins, list(n.output), name=n.name)
            q_node.attribute.extend(n.attribute)
            nodes.append(q_node)
        elif n.op_type == "Gemm" and n.input[1] in inits:
            w = inits[n.input[1]]
            dims = list(w.dims)
            if any(a.name == "transB" and a.i for a in n.attribute):
                dims = dims[::-1]
            q = _q_init(w.name + "_int8_kn", dims)
            g.initializer.append(q)
            nodes.append(
                helper.make_node(
                    "QLinearMatMul",
                    [n.input[0], "qo_s", "qo_z", q.name, "qo_s", "qo_wz", "qo_s", "qo_z"],
                    list(n.output),
                    name=n.name,
                )
            )
        else:
            nodes.append(n)
    nodes.append(helper.make_node("DequantizeLinear", [out + "_u8", "qo_s", "qo_z"], [out]))
    del g.node[:]
    g.node.extend(nodes)
    del g.value_info[:]
    onnx.save(m, dst)


def tf2onnx_style(path, size, opset=13, batch=1):
    """An NHWC MobileNet-like network as tf2onnx writes one: Transposes at the boundaries, pads
    from Split/Concat of a TF paddings constant, Clip bounds as tensors, a [-1, C] Reshape and
    the classifier as MatMul + Add. `batch` may be a name: tf2onnx's symbolic `unk__N` batch."""
    nodes, inits = [], []
    rng = np.random.default_rng(0)

    def w(name, dims):
        inits.append(numpy_helper.from_array(rng.standard_normal(dims).astype(np.float32) * 0.01, name))
        return name

    def i64(name, values):
        inits.append(numpy_helper.from_array(np.array(values, dtype=np.int64), name))
        return name

    zero = numpy_helper.from_array(np.array(0, dtype=np.float32), "clip_min")
    six = numpy_helper.from_array(np.array(6, dtype=np.float32), "clip_max")
    inits += [zero, six]
    nodes.append(helper.make_node("Transpose", ["input"], ["x_nchw"], perm=[0, 3, 1, 2], name="to_nchw"))
    x, c = "x_nchw", 3
    blocks = [(32, 2), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2)]
    for b, (cout, stride) in enumerate(blocks):
        # TF's SAME padding for a stride-2 3x3 conv, [[0,0],[0,0],[0,1],[0,1]] in NCHW begin/end
        # order, split and concatenated as tf2onnx emits it.
        pads_tf = i64(f"b{b}_paddings", [0, 0, 0, 0, 0, 0, 1, 1] if stride == 2 else [0, 0, 1, 1, 0, 0, 1, 1])
        nodes.append(helper.make_node("Split", [pads_tf], [f"b{b}_pb", f"b{b}_pe"], axis=0, name=f"b{b}_split"))
        nodes.append(helper.make_node("Concat", [f"b{b}_pb", f"b{b}_pe"], [f"b{b}_pads"], axis=0, name=f"b{b}_concat"))
        nodes.append(helper.make_node("Pad", [x, f"b{b}_pads"], [f"b{b}_padded"], mode="constant", name=f"b{b}_pad"))
        nodes.append(
            helper.make_node(
                "Conv", [f"b{b}_padded", w(f"b{b}_dw", [c, 1, 3, 3]), w(f"b{b}_dwb", [c])], [f"b{b}_d"],
                group=c, strides=[stride, stride], kernel_shape=[3, 3], name=f"b{b}_depthwise",
            )
        )
        nodes.append(helper.make_node("Clip", [f"b{b}_d", "clip_min", "clip_max"], [f"b{b}_d6"], name=f"b{b}_relu6a"))
        nodes.append(
            helper.make_node(
                "Conv", [f"b{b}_d6", w(f"b{b}_pw", [cout, c, 1, 1]), w(f"b{b}_pwb", [cout])], [f"b{b}_p"],
                kernel_shape=[1, 1], name=f"b{b}_pointwise",
            )
        )
        nodes.append(helper.make_node("Clip", [f"b{b}_p", "clip_min", "clip_max"], [f"b{b}_out"], name=f"b{b}_relu6b"))
        x, c = f"b{b}_out", cout
    # Back to NHWC for the mean over H, W, as TF computes it.
    nodes.append(helper.make_node("Transpose", [x], ["feat_nhwc"], perm=[0, 2, 3, 1], name="to_nhwc"))
    nodes.append(helper.make_node("ReduceMean", ["feat_nhwc"], ["pooled"], axes=[1, 2], keepdims=1, name="mean"))
    nodes.append(helper.make_node("Reshape", ["pooled", i64("flat_shape", [-1, c])], ["flat"], name="flatten"))
    nodes.append(helper.make_node("MatMul", ["flat", w("fc_w", [c, 1000])], ["logits_mm"], name="fc"))
    nodes.append(helper.make_node("Add", ["logits_mm", w("fc_b", [1000])], ["logits"], name="fc_bias"))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"))
    graph = helper.make_graph(
        nodes,
        "tf2onnx_mobilenet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [batch, size, size, 3])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, None)],
        inits,
    )
    model = helper.make_model(graph, producer_name="tf2onnx", opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.save(model, path)


# ---- main -----------------------------------------------------------------------------------


def export_all(out, only):
    """Exports the selected models (all when `only` is empty) into `out`; returns the manifest."""
    manifest = []

    def record(name, exporter, opset, shape, torch_macs=None):
        path = os.path.join(out, name + ".onnx")
        try:
            macs, source = count_macs(onnx.load(path)), "onnx shape inference"
        except ShapesUnknown as e:
            if torch_macs is None:
                raise
            macs, source = torch_macs(), f"PyTorch (ONNX inference left {e} unshaped)"
        manifest.append({"name": name, "file": path, "exporter": exporter, "opset": opset, "input": shape,
                         "macs": macs, "macs_from": source})
        print(f"export_corpus: {name}: {macs} MACs ({source})", flush=True)

    def wanted(name):
        return not only or name in only

    import torch

    torch.manual_seed(0)
    for name, make, shape, opset, *options in torchvision_models():
        if not wanted(name):
            continue
        torch_macs = export_torch(make(), shape, os.path.join(out, name + ".onnx"), opset, *options)
        record(name, "torch.onnx " + torch.__version__, opset, shape, torch_macs)
    derived = [
        ("mobilenet_v2_fp16", append_fp16_casts, "mobilenet_v2_op11", "fp16 conversion, Casts appended"),
        ("resnet18_qdq_int8", qdq_variant, "resnet18_op13_src", "QDQ int8 (onnx helper)"),
        ("resnet18_qoperator_int8", qoperator_variant, "resnet18_op13_src", "QOperator int8 (onnx helper)"),
    ]
    if any(wanted(d[0]) for d in derived[1:]):
        export_torch(
            __import__("torchvision").models.resnet18(), [1, 3, 224, 224],
            os.path.join(out, "resnet18_op13_src.onnx"), 13,
        )
    for name, fn, src, exporter in derived:
        if not wanted(name):
            continue
        src_path = os.path.join(out, src + ".onnx")
        if not os.path.exists(src_path):
            export_torch(__import__("torchvision").models.mobilenet_v2(), [1, 3, 224, 224], src_path, 11)
        fn(src_path, os.path.join(out, name + ".onnx"))
        # The integer forms compute what their float source does: its count is the reference.
        path = os.path.join(out, name + ".onnx")
        macs = count_macs(onnx.load(src_path))
        opset = [o.version for o in onnx.load(path).opset_import if o.domain in ("", "ai.onnx")][0]
        manifest.append({"name": name, "file": path, "exporter": exporter, "opset": opset,
                         "input": [1, 3, 224, 224], "macs": macs, "macs_from": "onnx shape inference of " + src})
        print(f"export_corpus: {name}: {macs} MACs", flush=True)
    for name, size, opset, batch in (("tf2onnx_mobilenet_224_op13", 224, 13, 1),
                                     ("tf2onnx_mobilenet_640_op11", 640, 11, "unk__0")):
        if wanted(name):
            tf2onnx_style(os.path.join(out, name + ".onnx"), size, opset, batch)
            record(name, "tf2onnx style (onnx helper)", opset, [1, size, size, 3])
    return manifest


def cache_key(only):
    """What decides the export's bytes: this script, the selection and the exporters' versions."""
    import torch
    import torchvision

    h = hashlib.sha256()
    with open(__file__, "rb") as f:
        h.update(f.read())
    for part in (",".join(sorted(only)), sys.version, torch.__version__, torchvision.__version__, onnx.__version__,
                 np.__version__):
        h.update(b"\0" + part.encode())
    return h.hexdigest()[:32]


def copy_models(manifest, src, dst):
    """Copies the manifest's models from folder `src` to `dst`; returns the manifest naming `dst`'s files."""
    copied = []
    for entry in manifest:
        name = os.path.basename(entry["file"])
        shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))
        copied.append(dict(entry, file=os.path.join(dst, name)))
    return copied


def store_in_cache(manifest, out, entry):
    """Adds the export to the cache as `entry`, whole or not at all."""
    os.makedirs(os.path.dirname(entry), exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".staging-", dir=os.path.dirname(entry))
    try:
        kept = copy_models(manifest, out, staging)
        with open(os.path.join(staging, "manifest.json"), "w") as f:
            json.dump(kept, f, indent=1)
        os.rename(staging, entry)  # fails when another export stored the same key first: theirs stays
    except OSError:
        shutil.rmtree(staging, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", default="", help="comma-separated model names")
    default_cache = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "npusim", "corpus")
    ap.add_argument("--cache", default=default_cache, help=f"the cache folder (default {default_cache})")
    ap.add_argument("--no-cache", action="store_true", help="export without reading or filling the cache")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = set(filter(None, args.only.split(",")))
    entry = None if args.no_cache else os.path.join(args.cache, cache_key(only))
    if entry and os.path.isfile(os.path.join(entry, "manifest.json")):
        with open(os.path.join(entry, "manifest.json")) as f:
            manifest = copy_models(json.load(f), entry, args.out)
        for m in manifest:
            print(f"export_corpus: {m['name']}: {m['macs']} MACs ({m['macs_from']})", flush=True)
        print(f"export_corpus: copied from the cache {entry}")
    else:
        manifest = export_all(args.out, only)
        if entry:
            store_in_cache(manifest, args.out, entry)
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"export_corpus: {len(manifest)} models in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
