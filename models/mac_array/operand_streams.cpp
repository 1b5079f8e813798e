#include "models/mac_array/operand_streams.h"

#include <numeric>

namespace npusim::models {

OperandLayout staggered_layout(const SramConfig& sram, const MacArrayConfig& mac) {
  OperandLayout l;
  const std::uint64_t width = sram.bank_width_bytes;
  l.ifmap_base = 0;
  l.filter_base = std::uint64_t(sram.banks / 4) * width;
  l.output_base = std::uint64_t(sram.banks / 2) * width;
  l.element_bytes = dtype_bytes(mac.dtype);
  l.accumulator_bytes = mac.accumulator_bytes;
  l.order = sram.tile_layout;
  return l;
}

std::vector<OperandStream> operand_streams(const GemmShape& s, std::uint32_t rows, std::uint32_t cols, Dataflow d,
                                           const OperandLayout& l) {
  const FoldMapping map = fold_mapping(s, d);
  if (map.spatial_rows <= 0 || map.spatial_cols <= 0 || map.temporal <= 0 || s.repeats <= 0) return {};
  const std::uint64_t r = std::min<std::uint64_t>(rows, std::uint64_t(map.spatial_rows));
  const std::uint64_t c = std::min<std::uint64_t>(cols, std::uint64_t(map.spatial_cols));
  const std::uint64_t b = l.element_bytes, a = l.accumulator_bytes;
  const std::uint64_t K = std::uint64_t(s.k), N = std::uint64_t(s.n);
  const bool streamed = l.order == TileLayout::Streamed;
  // A contiguous run is one access of its whole length; a column is `count` element accesses.
  auto run = [](std::uint64_t base, std::uint64_t bytes) {
    return StridedAccess{base, 0, 1, static_cast<std::uint32_t>(bytes)};
  };
  auto column = [](std::uint64_t base, std::uint64_t pitch, std::uint64_t count, std::uint64_t elem) {
    return StridedAccess{base, pitch, count, static_cast<std::uint32_t>(elem)};
  };
  // Streamed: the tile is stored in the order the dataflow consumes it (fold slice by fold
  // slice), so each stream's next vector follows its last one in memory.
  switch (d) {
    case Dataflow::WS:
      if (streamed) return {{run(l.ifmap_base, r * b), r * b, false}, {run(l.output_base, c * a), c * a, true}};
      return {{run(l.ifmap_base, r * b), K * b, false}, {run(l.output_base, c * a), N * a, true}};
    case Dataflow::OS:
      if (streamed) return {{run(l.ifmap_base, r * b), r * b, false}, {run(l.filter_base, c * b), c * b, false}};
      return {{column(l.ifmap_base, K * b, r, b), b, false}, {run(l.filter_base, c * b), N * b, false}};
    case Dataflow::IS:
      if (streamed) return {{run(l.filter_base, r * b), r * b, false}, {run(l.output_base, c * a), c * a, true}};
      return {{column(l.filter_base, N * b, r, b), b, false}, {column(l.output_base, N * a, c, a), a, true}};
  }
  return {};
}

CycleVectors cycle_vectors(const std::vector<OperandStream>& streams, std::uint64_t t) {
  return window_vectors(streams, t, 1);
}

CycleVectors window_vectors(const std::vector<OperandStream>& streams, std::uint64_t t, std::uint64_t n) {
  CycleVectors v;
  for (std::uint64_t i = t; i < t + n; ++i) {
    for (const OperandStream& s : streams) {
      // A stream whose vectors follow each other in memory is one run for the whole window: the
      // staging buffer gathers it into whole bank words (four 4-byte depthwise outputs are one
      // 16-byte word, not four accesses to it).
      const bool sequential = s.first.count == 1 && s.step == s.first.access_bytes;
      if (sequential && i > t) continue;
      StridedAccess a = s.first;
      a.start += i * s.step;
      if (sequential) a.access_bytes = static_cast<std::uint32_t>(n * s.step);
      (s.write ? v.writes : v.reads).push_back(a);
    }
  }
  return v;
}

std::uint64_t stream_period(const std::vector<OperandStream>& streams, std::uint64_t span) {
  std::uint64_t period = 1;
  for (const OperandStream& s : streams) {
    period = std::lcm(period, span / std::gcd(s.step % span, span));
  }
  return period;
}

}  // namespace npusim::models
