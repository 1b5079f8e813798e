#include "models/mac_array/compute_model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/errors.h"
#include "sim/core/math_util.h"

namespace npusim::models {

FoldTiming direct_timing(const GemmShape& s, std::uint32_t atomic_c, std::uint32_t atomic_k) {
  if (atomic_c == 0 || atomic_k == 0)
    throw InputError("npu.mac_array", "atomic-C and atomic-K (rows and cols) must be at least 1, found " +
                                          std::to_string(atomic_c) + " x " + std::to_string(atomic_k));
  if (s.m < 0 || s.k < 0 || s.n < 0 || s.repeats < 0 || s.taps < 1)
    throw InputError("gemm shape", "m, k, n, repeats must be >= 0 and taps >= 1, found m=" + std::to_string(s.m) +
                                       " k=" + std::to_string(s.k) + " n=" + std::to_string(s.n) +
                                       " repeats=" + std::to_string(s.repeats) + " taps=" + std::to_string(s.taps));
  FoldTiming t;
  if (s.m == 0 || s.k == 0 || s.n == 0 || s.repeats == 0) return t;
  // A K that is not whole taps of channels (a hand-made tile) is read as one tap.
  const auto taps = std::uint64_t(s.k % s.taps == 0 ? s.taps : 1);
  const auto channels = std::uint64_t(s.k) / taps;
  const auto m = std::uint64_t(s.m), n = std::uint64_t(s.n), repeats = std::uint64_t(s.repeats);
  const bool depthwise = repeats > 1 && n == 1 && channels == 1;
  // Channel extension: a layer with fewer channels than atomic-C (an image's 3) fills the rest
  // of an atomic operation's lanes with further kernel taps of the same channels.
  const std::uint64_t packed = depthwise || channels >= atomic_c ? 1 : std::min(taps, atomic_c / channels);
  const std::uint64_t tap_passes = ceil_div(taps, packed);
  t.folds = depthwise ? ceil_div(repeats, atomic_c) : repeats * ceil_div(channels, atomic_c) * ceil_div(n, atomic_k);
  t.cycles = t.folds * m * tap_passes;
  t.macs = m * std::uint64_t(s.k) * n * repeats;
  t.mapping_efficiency = double(t.macs) / (double(t.cycles) * double(atomic_c) * double(atomic_k));
  return t;
}

DType operand_dtype(const MacArrayConfig& c, std::uint32_t operand_bytes) {
  switch (operand_bytes) {
    case 1:
      return DType::Int8;
    case 2:
      return dtype_bytes(c.dtype) == 2 ? c.dtype : DType::Fp16;
    case 4:
      return DType::Fp32;
    default:
      return c.dtype;
  }
}

FoldTiming compute_timing(const GemmShape& s, const MacArrayConfig& c, Dataflow d, DType operands) {
  FoldTiming t = c.kind == MacArrayKind::Direct ? direct_timing(s, c.rows, c.cols)
                                                : fold_timing(s, c.rows, c.cols, d, c.fold_model);
  const double rate = c.sustained_rate(operands);
  if (rate == 1.0 || t.cycles == 0) return t;
  // Every cycle of the template, fill included, takes 1 / rate cycles: a half-rate type streams
  // each slice in two.
  const auto scaled = [rate](std::uint64_t v) { return std::uint64_t(std::ceil(double(v) / rate - 1e-9)); };
  const std::uint64_t streaming = t.cycles - t.fill_drain_cycles;
  t.cycles = scaled(t.cycles);
  t.fill_drain_cycles = t.cycles - std::min(t.cycles, scaled(streaming));
  return t;
}

PartialSumWords tile_partial_sums(const GemmShape& s, const MacArrayConfig& c, Dataflow d) {
  if (c.kind == MacArrayKind::Direct) return {};
  return partial_sum_words(s, c.rows, d);
}

}  // namespace npusim::models
