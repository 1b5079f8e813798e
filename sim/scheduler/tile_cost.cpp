// What a GEMM tile costs: its cycles on the MAC array (the fold model) or the SRAM's ports,
// whichever is slower, its SRAM traffic, and a tiling's sum over its (at most two) block sizes
// a dimension; and the planners' estimate of a group's seconds from its traffic and work.
#include <algorithm>
#include <array>
#include <utility>

#include "models/mac_array/compute_model.h"
#include "models/mac_array/fold_model.h"
#include "sim/scheduler/lowering.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {

double estimate_seconds(const HardwareConfig& hw, std::uint64_t traffic, double ops, std::uint64_t first_tile_bytes,
                        std::uint64_t tiles, double peak_ops) {
  const double bw = hw.dram.peak_bandwidth().bytes_per_second;
  const double per_tile_overhead = 64.0 / hw.core_clock.hz;  // command issue, fill: ~64 cycles
  return std::max(double(traffic) / bw, ops / peak_ops) + double(first_tile_bytes) / bw +
         double(tiles) * per_tile_overhead;
}

GemmTileCost gemm_tile_cost(const GemmWork& w, const HardwareConfig& hw) {
  const auto& mac = hw.mac_array;
  const GemmSramTraffic tr = gemm_sram_traffic(w, mac);
  const auto fold = models::compute_timing(w.shape(), mac, w.dataflow.value_or(mac.dataflow),
                                           models::operand_dtype(mac, w.operand_bytes));
  const double sram_cycles = double(tr.read_bytes + tr.write_bytes) / double(hw.sram.bytes_per_cycle());
  return {std::max(double(fold.cycles), sram_cycles), tr.read_bytes, tr.write_bytes};
}

const GemmTileCost& GemmTileCosts::operator()(const GemmWork& w) {
  const int dataflow = w.dataflow ? static_cast<int>(*w.dataflow) : -1;
  const Shape shape{w.m, w.k, w.n, w.repeats, dataflow, w.taps, w.operand_bytes};
  const auto mix = std::uint64_t(w.m) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(w.k) * 0xC2B2AE3D27D4EB4Full ^
                   std::uint64_t(w.n) * 0x165667B19E3779F9ull ^ std::uint64_t(w.repeats + dataflow) ^
                   std::uint64_t(w.taps) << 40 ^ std::uint64_t(w.operand_bytes) << 56;
  Recent& slot = recent_[(mix ^ mix >> 29) % recent_.size()];
  if (slot.cost && slot.shape == shape) return *slot.cost;
  auto found = costs_.find(shape);
  if (found == costs_.end()) found = costs_.emplace(shape, gemm_tile_cost(w, hw_)).first;
  slot = {shape, &found->second};
  return found->second;
}

namespace {

/// The (size, count) block sizes of one dimension of a GEMM tiling: at most two.
class BlockSizes {
 public:
  void push(std::pair<std::int64_t, std::int64_t> s) { sizes_[n_++] = s; }
  const std::pair<std::int64_t, std::int64_t>* begin() const { return sizes_.data(); }
  const std::pair<std::int64_t, std::int64_t>* end() const { return sizes_.data() + n_; }

 private:
  std::array<std::pair<std::int64_t, std::int64_t>, 2> sizes_{};
  std::size_t n_ = 0;
};

}  // namespace

GemmTileCost gemm_tiling_cost(const GemmGeometry& geo, std::int64_t rows, std::int64_t cols, std::int64_t chans,
                              std::optional<Dataflow> dataflow, const HardwareConfig& hw, std::int64_t width) {
  // Every dimension has at most two block sizes, the full one and the remainder at the edge
  // (held in place: the planners cost thousands of tile shapes).
  auto sizes = [](std::int64_t total, std::int64_t block) {
    BlockSizes s;
    s.push({block, total / block});  // (size, count)
    if (total % block) s.push({total % block, 1});
    return s;
  };
  GemmTileCost sum;
  BlockSizes whole_width;
  whole_width.push({0, 1});
  const BlockSizes widths = width > 0 ? sizes(geo.out_cols_px, width) : whole_width;
  for (const auto& [r, nr] : sizes(geo.out_rows, rows))
    for (const auto& [c, nc] : sizes(geo.n_total, cols))
      for (const auto& [k, nk] : sizes(geo.c_total, chans))
        for (const auto& [px, npx] : widths) {
          GemmWork w = geo.work(GemmBlock{0, 0, r, 0, c, 0, k, 0, px});
          w.dataflow = dataflow;
          const GemmTileCost one = gemm_tile_cost(w, hw);
          const std::uint64_t n = std::uint64_t(nr * nc * nk * npx * geo.batch);
          sum.cycles += one.cycles * double(n);
          sum.sram_read_bytes += one.sram_read_bytes * n;
          sum.sram_write_bytes += one.sram_write_bytes * n;
        }
  return sum;
}

}  // namespace npusim::sched
