#pragma once
// SCALE-Sim's per-layer model, reproduced arithmetically: the reference fold model run back to
// back, the demand matrices' row counts and first/last valid rows, and the counts SCALE-Sim puts
// in its three reports. Every quirk kept, and every deviation, is listed in docs/scalesim.md.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/scalesim/buffer_model.h"
#include "sim/scalesim/scalesim_config.h"
#include "workloads/graph.h"

namespace npusim::scalesim {

/// SCALE-Sim's output size of one conv dimension: ceil((in - filter + stride) / stride). Not the
/// floor((in - filter) / stride) + 1 of ONNX and of `npusim run`: one more when the stride does
/// not divide (in - filter).
std::int64_t scalesim_ofmap_size(std::int64_t in, std::int64_t filter, std::int64_t stride);

/// One SCALE-Sim layer: a GEMM of ifmap (m x k) by filter (k x n). For a conv, m = output
/// pixels, k = filter window x channels, n = filters; a depthwise (DP) layer is one such layer
/// per channel, as SCALE-Sim expands it.
struct Layer {
  std::string name;
  std::int64_t m = 0, k = 0, n = 0;
  std::uint64_t ifmap_words = 0;   ///< distinct ifmap words the layer touches (stride gaps excluded)
  std::optional<ConvWindow> conv;  ///< conv rows only: every GEMM operand entry is inside
  std::string where;               ///< "file.csv:LINE (layer 'name')" for messages; may be empty
};

/// SCALE-Sim's layers of a graph read from a topology CSV (load_scalesim_topology), in file
/// order; a conv with G groups becomes G layers, each sized by SCALE-Sim's ofmap rule
/// (scalesim_ofmap_size), not by the graph's shape inference. Throws InputError for an op that
/// is not a conv2d or matmul, or a layer whose M x K x N overflows 64 bits.
std::vector<Layer> layers_from_graph(const workloads::Graph& g, const std::string& source = "");

/// Start cycle, stop cycle and word count of one operand's traffic, as the detailed report has.
struct Access {
  std::int64_t start = 0, stop = 0;
  std::uint64_t words = 0;
};

enum OperandIndex { kIfmap = 0, kFilter = 1, kOfmap = 2 };

/// One row of each report, with SCALE-Sim's units: cycles, percent, words per cycle, words.
struct LayerReport {
  std::uint64_t total_cycles = 0, stall_cycles = 0;
  double overall_util = 0, mapping_efficiency = 0, compute_util = 0;  // percent
  std::array<Access, 3> sram{}, dram{};                               // ifmap reads, filter reads, ofmap writes
  std::array<double, 3> sram_bw{}, dram_bw{};
  // npusim's own figures for the same layer, beyond SCALE-Sim's columns
  std::uint64_t folds = 0, macs = 0;
  std::uint64_t overlapped_cycles = 0;  ///< npusim's overlapped fold model
  std::uint64_t psum_words = 0;         ///< partial sums spilled and read back (each way)
};

/// Runs one layer in SCALE-Sim's model (1-byte words, reference folds, three SRAMs). Throws
/// InputError naming the layer when one of its counts would overflow 64 bits.
LayerReport simulate_layer(const Layer& layer, const ScaleSimConfig& config);

}  // namespace npusim::scalesim
