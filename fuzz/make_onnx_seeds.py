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


def main():
    out = sys.argv[1]
    for name, graph in (("conv", conv_net()), ("matmul", matmul_net())):
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        onnx.save(model, f"{out}/{name}.onnx")


if __name__ == "__main__":
    main()
