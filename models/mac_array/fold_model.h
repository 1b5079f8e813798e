#pragma once
// Fold timing of a systolic MAC array, plain C++ (no SystemC) so planners and tests can call it.
// The mapping and the per-fold formulas follow SCALE-Sim v2 (scalesim/compute/systolic_compute_*.py);
// the derivations, the overlapped model and what is approximate are in docs/compute-models.md.
#include <cstdint>

#include "sim/core/hardware_config.h"

namespace npusim::models {

/// A GEMM C[m x n] = A[m x k] * B[k x n], run `repeats` times with the same shape
/// (e.g. the groups of a grouped or depthwise convolution, one after another). A convolution's
/// k is `taps` kernel positions of k / taps input channels each (a direct-convolution core maps
/// the channels, not k, onto its cells; the systolic folds read k alone).
struct GemmShape {
  std::int64_t m = 0, k = 0, n = 0, repeats = 1;
  std::int64_t taps = 1;
};

/// How a GEMM maps onto a rows x cols array and how long it takes.
struct FoldTiming {
  /// Folds executed, over all repeats: ceil(Sr / R) * ceil(Sc / C) * repeats.
  std::uint64_t folds = 0;
  /// Core cycles from the first operand entering the array to the last result leaving it.
  std::uint64_t cycles = 0;
  /// Cycles not spent streaming the temporal dimension: cycles - folds * T
  /// (stationary preload, pipeline fill and drain, and waits for a preload longer than T).
  std::uint64_t fill_drain_cycles = 0;
  /// m * k * n * repeats.
  std::uint64_t macs = 0;
  /// Average fraction of the array mapped, weighted by fold streaming time:
  /// macs / (folds * R * C * T). 1.0 when every fold fills the array.
  double mapping_efficiency = 0;
};

/// How a GEMM's dimensions land on the array for one dataflow (SCALE-Sim's Sr, Sc, T).
struct FoldMapping {
  std::int64_t spatial_rows = 0;  ///< Sr: mapped across the array rows
  std::int64_t spatial_cols = 0;  ///< Sc: mapped across the array columns
  std::int64_t temporal = 0;      ///< T: streamed through the array, one slice per cycle
};

/// WS: Sr = K, Sc = N, T = M; IS: Sr = K, Sc = M, T = N; OS: Sr = M, Sc = N, T = K.
FoldMapping fold_mapping(const GemmShape& s, Dataflow d);

/// Cycles of one fold in SCALE-Sim's reference model: WS/IS 2R + C + T - 2, OS R + C + T - 2.
std::uint64_t reference_fold_cycles(std::uint32_t rows, std::uint32_t cols, std::uint64_t temporal, Dataflow d);

/// Fold count, cycles and mapping efficiency of `s` on a rows x cols array.
/// Throws InputError for a zero-sized array or a negative dimension; an empty GEMM takes 0 cycles.
FoldTiming fold_timing(const GemmShape& s, std::uint32_t rows, std::uint32_t cols, Dataflow d, FoldModel f);

/// Partial sums that leave the array because K is split across row folds (WS and IS map K onto
/// the rows; OS keeps K temporal and accumulates in place, so it spills none). Every output but
/// its last contribution is written out once and read back once to be accumulated:
/// words_written = words_read = m * n * (ceil(k / rows) - 1) * repeats. SCALE-Sim does not count
/// this traffic; npusim reports it (docs/compute-models.md section 4).
struct PartialSumWords {
  std::uint64_t written = 0;
  std::uint64_t read = 0;
};
PartialSumWords partial_sum_words(const GemmShape& s, std::uint32_t rows, Dataflow d);

/// MAC-array utilisation: macs / (cycles * rows * cols); 0 when no cycle elapsed.
double array_utilisation(std::uint64_t macs, std::uint64_t cycles, std::uint32_t rows, std::uint32_t cols);

}  // namespace npusim::models
