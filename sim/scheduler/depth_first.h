#pragma once
// Internal to the scheduler: depth-first fusion (depth_first.cpp), a chain of segments walked
// tile by tile down the image (and across it in column strips), intermediates never whole.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/scheduler/fusion.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {

/// Windows of one depth-first tile: for every layer, the output rows it needs [need_a, need_b),
/// the rows it computes [comp_a, need_b) (= need with recompute; only new rows with cache) and
/// the output columns it computes [col_a, col_b) (its whole width unless the group is cut into
/// column strips); for the group input, the rows [load_a, load_b) and columns [load_col_a,
/// load_col_b) loaded.
struct DepthFirstTile {
  std::vector<std::int64_t> need_a, need_b, comp_a;
  std::vector<std::int64_t> col_a, col_b;
  std::int64_t load_a = 0, load_b = 0;
  std::int64_t load_col_a = 0, load_col_b = 0;
  std::int64_t columns(std::size_t l) const { return col_b[l] - col_a[l]; }
};

/// The block layer `l` of a depth-first tile computes: rows [comp_a, need_b), columns
/// [col_a, col_b), every output channel (whole groups), all input channels.
GemmBlock depth_first_block(const GemmGeometry& geo, const DepthFirstTile& t, std::size_t l);

/// Output-channel blocks of a depth-first layer (DepthFirst::channels; only with whole rows):
/// the block size in GemmBlock column units (output channels, or whole groups of a grouped conv,
/// at least one); every column at once when `channels` is 0 or at least the layer's.
std::int64_t depth_first_block_units(const GemmGeometry& geo, std::int64_t channels);
/// The most output channels of a layer of `segs`: channel blocks are 1 to this many.
std::int64_t depth_first_widest_layer(const workloads::Graph& g, const std::vector<Segment>& segs);
/// Output channels of layer `geo`'s largest block when cut into blocks of `channels`.
std::int64_t depth_first_block_channels(const GemmGeometry& geo, std::int64_t channels);
/// Calls `visit` for each block layer `l` of a depth-first tile computes, one after another:
/// depth_first_block cut into blocks of `channels` output channels, the last narrower.
template <class Visit>
void for_each_depth_first_block(const GemmGeometry& geo, const DepthFirstTile& t, std::size_t l, std::int64_t channels,
                                Visit&& visit) {
  GemmBlock b = depth_first_block(geo, t, l);
  const std::int64_t units = depth_first_block_units(geo, channels);
  for (std::int64_t n0 = 0; n0 < geo.n_total; n0 += units) {
    b.col0 = n0;
    b.cols = std::min(units, geo.n_total - n0);
    visit(b);
  }
}

/// Why `segs` cannot be fused depth-first ("" when it can).
std::string depth_first_obstacle(const workloads::Graph& g, const std::vector<Segment>& segs);
/// Calls `visit` with each tile of a depth-first group (`df`'s rows, cols and halo), in order:
/// column strips outermost, each walked down its rows. The tile is one object rewritten for
/// each call: copy what must outlive the call.
void for_each_depth_first_tile(const workloads::Graph& g, const std::vector<Segment>& segs, const DepthFirst& df,
                               const std::function<void(const DepthFirstTile&)>& visit);
/// Evaluates `segs` fused depth-first. rows = 0: choose the best tile height, and when no
/// height fits with whole rows of every channel, the best of height x width (column strips)
/// and height x output-channel blocks; rows > 0: that height, `cols` output columns per tile
/// (0: the whole width) and `channels` output channels per block (0: all).
GroupEval evaluate_depth_first(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                               Halo halo, std::int64_t rows, std::int64_t cols = 0, std::int64_t channels = 0);

}  // namespace npusim::sched
