#pragma once
// The compute time of one GEMM tile on a core's MAC cells, for either template the config picks
// (npu.mac_array.kind) and at the MAC rate of the type its operands are multiplied in. Plain
// C++ (no SystemC): the MAC array model and the planners call the same function, so a plan is
// costed with the timing it will run with. docs/compute-models.md sections 9 and 10.
#include <cstdint>

#include "models/mac_array/fold_model.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Cycles of `s` on a direct-convolution core of atomic_c x atomic_k cells (NVDLA's CMAC, the
/// RKNPU's CNA), one atomic operation a cycle, no fill between atomic operations:
///  - a convolution or GEMM: every output pixel (m), kernel tap (s.taps) and block of atomic_c
///    input channels (k / taps, padded up) meets every block of atomic_k output channels (n,
///    padded up): cycles = repeats x m x taps x ceil(k / taps / atomic_c) x ceil(n / atomic_k);
///    with fewer channels C than atomic_c, channel extension packs p = min(taps, atomic_c / C)
///    taps into one atomic operation (taps becomes ceil(taps / p));
///  - a depthwise convolution (repeats > 1 groups of one input and one output channel): the core's
///    channel-wise mode multiplies atomic_c channels of one pixel and tap by their own weights a
///    cycle, the atomic_k side idle: cycles = m x taps x ceil(repeats / atomic_c).
/// `folds` counts the channel-block passes; `fill_drain_cycles` is 0; partial sums stay in the
/// accumulator (no SRAM spill).
FoldTiming direct_timing(const GemmShape& s, std::uint32_t atomic_c, std::uint32_t atomic_k);

/// The type a GEMM's operands are multiplied in, from its activations' bytes per element:
/// 0 = the array's dtype; 1 = int8; 2 = the array's dtype when it is a 2-byte type, else fp16;
/// 4 = fp32.
DType operand_dtype(const MacArrayConfig& c, std::uint32_t operand_bytes);

/// `s` on the configured template and dataflow `d`, at the rate of `operands`
/// (npu.mac_array.rate x npu.mac_array.efficiency): the template's cycles (and fill) divided by
/// that sustained rate, rounded up.
FoldTiming compute_timing(const GemmShape& s, const MacArrayConfig& c, Dataflow d, DType operands);

/// Partial sums a tile spills to SRAM: the systolic array's (partial_sum_words); none on a
/// direct core, whose accumulator holds every output of the tile until its last channel block.
PartialSumWords tile_partial_sums(const GemmShape& s, const MacArrayConfig& c, Dataflow d);

}  // namespace npusim::models
