#include "models/mac_array/fold_model.h"

#include <algorithm>
#include <string>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"

namespace npusim::models {
namespace {

void check_inputs(const GemmShape& s, std::uint32_t rows, std::uint32_t cols) {
  if (rows == 0 || cols == 0) {
    throw InputError("mac_array",
                     "rows and cols must be at least 1, found " + std::to_string(rows) + " x " + std::to_string(cols));
  }
  if (s.m < 0 || s.k < 0 || s.n < 0 || s.repeats < 0) {
    throw InputError("gemm shape", "m, k, n and repeats must be >= 0, found m=" + std::to_string(s.m) +
                                       " k=" + std::to_string(s.k) + " n=" + std::to_string(s.n) +
                                       " repeats=" + std::to_string(s.repeats));
  }
}

/// Cycles per fold spent moving the stationary operand: every dataflow shifts it through the
/// R rows, one row per cycle (WS weights in, IS inputs in, OS finished outputs out).
std::uint64_t stationary_shift_cycles(std::uint32_t rows) {
  return rows;
}

/// Steady-state cost of every fold after the first in the overlapped model: the next fold's
/// operands follow the current ones without a gap, unless shifting the (double-buffered)
/// stationary operand takes longer than streaming T.
std::uint64_t overlapped_fold_cycles(std::uint32_t rows, std::uint64_t temporal) {
  return std::max(temporal, stationary_shift_cycles(rows));
}

}  // namespace

FoldMapping fold_mapping(const GemmShape& s, Dataflow d) {
  switch (d) {
    case Dataflow::WS:
      return {s.k, s.n, s.m};
    case Dataflow::IS:
      return {s.k, s.m, s.n};
    case Dataflow::OS:
      return {s.m, s.n, s.k};
  }
  return {};
}

std::uint64_t reference_fold_cycles(std::uint32_t rows, std::uint32_t cols, std::uint64_t temporal, Dataflow d) {
  // Pipeline skew: the last operand reaches the far corner R - 1 + C - 1 cycles after it enters.
  const std::uint64_t fill_drain = std::uint64_t(rows) + cols - 2;
  // WS/IS first shift the stationary operand in; OS drains its outputs under the skew.
  const std::uint64_t preload = d == Dataflow::OS ? 0 : stationary_shift_cycles(rows);
  return preload + temporal + fill_drain;
}

FoldTiming fold_timing(const GemmShape& s, std::uint32_t rows, std::uint32_t cols, Dataflow d, FoldModel f) {
  check_inputs(s, rows, cols);
  FoldTiming t;
  const FoldMapping map = fold_mapping(s, d);
  if (map.spatial_rows == 0 || map.spatial_cols == 0 || map.temporal == 0 || s.repeats == 0) {
    return t;  // nothing to compute
  }
  const auto temporal = std::uint64_t(map.temporal);
  t.folds = ceil_div(std::uint64_t(map.spatial_rows), rows) * ceil_div(std::uint64_t(map.spatial_cols), cols) *
            std::uint64_t(s.repeats);
  t.macs = std::uint64_t(s.m) * std::uint64_t(s.k) * std::uint64_t(s.n) * std::uint64_t(s.repeats);

  const std::uint64_t first = reference_fold_cycles(rows, cols, temporal, d);
  const std::uint64_t later = f == FoldModel::Reference ? first : overlapped_fold_cycles(rows, temporal);
  t.cycles = first + (t.folds - 1) * later;
  t.fill_drain_cycles = t.cycles - t.folds * temporal;
  // Every fold streams for T cycles, so weighting by fold time is a plain ratio of MACs.
  t.mapping_efficiency = double(t.macs) / (double(t.folds) * double(rows) * double(cols) * double(temporal));
  return t;
}

PartialSumWords partial_sum_words(const GemmShape& s, std::uint32_t rows, Dataflow d) {
  check_inputs(s, rows, 1);
  if (d == Dataflow::OS || s.k == 0) return {};
  const std::uint64_t spills = ceil_div(std::uint64_t(s.k), rows) - 1;
  const std::uint64_t words = std::uint64_t(s.m) * std::uint64_t(s.n) * spills * std::uint64_t(s.repeats);
  return {words, words};
}

double array_utilisation(std::uint64_t macs, std::uint64_t cycles, std::uint32_t rows, std::uint32_t cols) {
  if (cycles == 0 || rows == 0 || cols == 0) return 0.0;
  return double(macs) / (double(cycles) * double(rows) * double(cols));
}

}  // namespace npusim::models
