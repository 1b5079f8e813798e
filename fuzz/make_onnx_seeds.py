#!/usr/bin/env python3
"""Writes a few small ONNX models (conv, pool, matmul, elementwise) as seeds for fuzz_onnx.

Usage: make_onnx_seeds.py DIR. Needs Debian's python3-onnx; built here, not committed.
"""
import sys

import onnx
from onnx import TensorProto, helper


def conv_net():
    w = helper.make_tensor("w", TensorProto.FLOAT, [8, 3, 3, 3], [0.1] * 8 * 3 * 3 * 3)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["y"]),
    ]
    return helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])


def matmul_net():
    b = helper.make_tensor("b", TensorProto.FLOAT, [16, 4], [0.5] * 64)
    nodes = [
        helper.make_node("MatMul", ["x", "b"], ["m"]),
        helper.make_node("Add", ["m", "m"], ["a"]),
        helper.make_node("Softmax", ["a"], ["y"], axis=-1),
    ]
    return helper.make_graph(nodes, "mm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 16])],
                             [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [b])


def decoder_step():
    """An ORT-optimised decoder layer: RMSNorm, RoPE, GroupQueryAttention over an empty cache."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [32, 64], [0.1] * 2048)
    g = helper.make_tensor("g", TensorProto.FLOAT, [32], [1.0] * 32)
    cos = helper.make_tensor("cos", TensorProto.FLOAT, [16, 4], [0.5] * 64)
    nodes = [
        helper.make_node("SimplifiedLayerNormalization", ["x", "g"], ["n"], axis=-1),
        helper.make_node("MatMul", ["n", "w"], ["qkv"]),
        helper.make_node("GroupQueryAttention", ["qkv", "", "", "pk", "pv", "seqlens", "total", "cos", "cos"],
                         ["y", "present_k", "present_v"], domain="com.microsoft", num_heads=4, kv_num_heads=2,
                         do_rotary=1),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32]),
              helper.make_tensor_value_info("pk", TensorProto.FLOAT, [1, 2, 0, 8]),
              helper.make_tensor_value_info("pv", TensorProto.FLOAT, [1, 2, 0, 8]),
              helper.make_tensor_value_info("seqlens", TensorProto.INT32, [1]),
              helper.make_tensor_value_info("total", TensorProto.INT32, [])]
    outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in ("y", "present_k", "present_v")]
    return helper.make_graph(nodes, "decoder", inputs, outputs, [w, g, cos])


def loop_net():
    """A Loop of 4 trips: h = Relu(h + x)."""
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["h_in", "x"], ["s"]),
         helper.make_node("Relu", ["s"], ["h_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("h_in", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("h_out", TensorProto.FLOAT, [1, 8])])
    trips = helper.make_tensor("trips", TensorProto.INT64, [], [4])
    go = helper.make_tensor("go", TensorProto.BOOL, [], [1])
    return helper.make_graph([helper.make_node("Loop", ["trips", "go", "x"], ["h"], body=body)], "loop",
                             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                             [helper.make_tensor_value_info("h", TensorProto.FLOAT, None)], [trips, go])


def main():
    out = sys.argv[1]
    for name, graph in (("conv", conv_net()), ("matmul", matmul_net()), ("decoder", decoder_step()), ("loop", loop_net())):
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
        onnx.save(model, f"{out}/{name}.onnx")


if __name__ == "__main__":
    main()
