#pragma once
// Internal to the scheduler: depth-first fusion (depth_first.cpp), a chain of segments walked
// tile by tile down the image (and across it in column strips), intermediates never whole.
#include <cstdint>
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

/// The blocks layer `l` of a depth-first tile computes one after another: depth_first_block cut
/// into blocks of `channels` output channels (0, or at least the layer's: one block; a grouped
/// conv's blocks are whole groups, at least one). Only with whole rows (DepthFirst::channels).
std::vector<GemmBlock> depth_first_blocks(const GemmGeometry& geo, const DepthFirstTile& t, std::size_t l,
                                          std::int64_t channels);
/// Output channels of layer `geo`'s largest block when cut into blocks of `channels`.
std::int64_t depth_first_block_channels(const GemmGeometry& geo, std::int64_t channels);

/// Why `segs` cannot be fused depth-first ("" when it can).
std::string depth_first_obstacle(const workloads::Graph& g, const std::vector<Segment>& segs);
/// The tiles of a depth-first group (`df`'s rows, cols and halo), in order: column strips
/// outermost, each walked down its rows.
std::vector<DepthFirstTile> depth_first_tiles(const workloads::Graph& g, const std::vector<Segment>& segs,
                                              const DepthFirst& df);
/// Evaluates `segs` fused depth-first. rows = 0: choose the best tile height, and when no
/// height fits with whole rows of every channel, the best of height x width (column strips)
/// and height x output-channel blocks; rows > 0: that height, `cols` output columns per tile
/// (0: the whole width) and `channels` output channels per block (0: all).
GroupEval evaluate_depth_first(const workloads::Graph& g, const HardwareConfig& hw, const std::vector<Segment>& segs,
                               Halo halo, std::int64_t rows, std::int64_t cols = 0, std::int64_t channels = 0);

}  // namespace npusim::sched
