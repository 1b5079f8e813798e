#pragma once
// Structural checks of an ONNX graph, run before ONNX's own shape inference (which crashes or
// loops on some malformed graphs): one producer per value, every input defined, attribute
// ranges; then the nodes are put in a topological order, as ONNX Runtime accepts files whose
// nodes are not (fp16 converters append their Casts at the end).
#include <onnx/onnx_pb.h>

#include <string>

namespace npusim::workloads::onnx {

/// Largest value a size-like attribute (pads, kernel, stride, dilation) may take: anything
/// larger cannot index a real tensor and overflows ONNX's and npusim's shape arithmetic.
constexpr std::int64_t kMaxAttributeSize = std::int64_t{1} << 31;

/// Validates `model`'s main graph and reorders its nodes topologically (stable: file order among
/// nodes that are ready together). Throws InputError naming the file and the node: a value with
/// two producers (both nodes named), an input nothing defines, a cycle (a node on it, and the
/// cycle's path), a stride/dilation/kernel/group below 1, a negative or absurd pad, an attribute
/// ONNX's schema requires missing.
void validate_and_sort(::onnx::ModelProto& model, const std::string& path);

/// Checks the input ranks of every windowed op (Conv, ConvTranspose, pools) before ONNX's shape
/// inference, which crashes on a data input of rank < 3 or a kernel of another rank: declared
/// ranks, and those only ONNX's inference derives (found by running it on a copy of the model in
/// which each windowed op is an Identity, subgraphs included). Call after fix_input_shapes, on a
/// sorted graph. Throws InputError naming the node, the input and the ranks.
void check_window_ranks(const ::onnx::ModelProto& model, const std::string& path);

}  // namespace npusim::workloads::onnx
