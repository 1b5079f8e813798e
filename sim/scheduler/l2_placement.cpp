#include "sim/scheduler/l2_placement.h"

#include <algorithm>
#include <bitset>

#include "sim/core/errors.h"

namespace npusim::sched {
namespace {

bool is_dma(const Command& c) {
  return c.kind == CommandKind::DmaLoad || c.kind == CommandKind::DmaStore;
}

/// One intermediate of copy 0 and the DMA commands (of copy 0) that move it.
struct Shared {
  TensorSpan span;
  std::vector<std::uint32_t> commands;
  std::bitset<64> cores;
  std::uint64_t largest_transfer = 0;
  std::int64_t l2_offset = -1;  // -1: stays in DRAM
};

/// The tensor of `c`: the span whose region holds its address while the span is live (regions
/// are reused only by tensors whose lifetimes do not overlap, so at most one matches).
int span_of(const Command& c, const std::vector<Shared>& spans) {
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const TensorSpan& s = spans[i].span;
    if (c.dram.addr >= s.addr && c.dram.addr < s.addr + s.bytes && c.group >= s.first_group && c.group <= s.last_group)
      return int(i);
  }
  return -1;
}

/// First fit in lifetime order (spans are sorted by first group) within `capacity`; returns
/// the peak bytes allocated.
std::uint64_t first_fit(std::vector<Shared*>& order, std::uint64_t capacity) {
  struct Block {
    std::uint64_t addr, bytes;
    int last;
  };
  std::vector<Block> taken;  // by address
  std::uint64_t peak = 0;
  for (Shared* s : order) {
    taken.erase(
        std::remove_if(taken.begin(), taken.end(), [&](const Block& b) { return b.last < s->span.first_group; }),
        taken.end());
    std::uint64_t at = 0;
    for (const Block& b : taken) {
      if (b.addr >= at + s->span.bytes) break;
      at = std::max(at, b.addr + b.bytes);
    }
    if (at + s->span.bytes > capacity) continue;
    s->l2_offset = std::int64_t(at);
    taken.insert(
        std::upper_bound(taken.begin(), taken.end(), at, [](std::uint64_t a, const Block& b) { return a < b.addr; }),
        Block{at, s->span.bytes, s->span.last_group});
    peak = std::max(peak, at + s->span.bytes);
  }
  return peak;
}

}  // namespace

void place_in_l2(Program& program, const std::vector<TensorSpan>& one_copy, const ParallelPlan& pp,
                 const HardwareConfig& hw) {
  program.l2 = {};
  if (!hw.l2.enabled() || one_copy.empty()) return;
  const std::uint32_t copies = std::max(pp.replicas, 1u);
  const std::size_t per_copy = program.commands.size() / copies;
  const std::uint64_t stride = program.dram_footprint / copies;  // replicate_program's
  std::vector<Shared> spans;
  for (const TensorSpan& s : one_copy) spans.push_back({s, {}, {}, 0, -1});
  for (std::size_t i = 0; i < per_copy; ++i) {
    const Command& c = program.commands[i];
    if (!is_dma(c)) continue;
    const int s = span_of(c, spans);
    if (s < 0) continue;
    spans[s].commands.push_back(std::uint32_t(i));
    spans[s].cores.set(c.core % 64);
    spans[s].largest_transfer = std::max(spans[s].largest_transfer, c.dram.bytes());
  }
  std::vector<Shared*> shared;
  for (Shared& s : spans)
    if (s.cores.count() > 1) shared.push_back(&s);
  if (shared.empty()) return;
  // A tile: the largest single transfer of a shared tensor. An L2 that cannot hold one is a
  // config error, not a silent "everything in DRAM".
  const Shared* widest = *std::max_element(shared.begin(), shared.end(), [](const Shared* a, const Shared* b) {
    return a->largest_transfer < b->largest_transfer;
  });
  if (hw.l2.capacity_bytes < widest->largest_transfer)
    throw InputError(hw.source + " (npu.l2.capacity)",
                     "expected an L2 that holds one tile (the largest DMA transfer of a tensor shared by cores, " +
                         std::to_string(widest->largest_transfer) + " B), found " +
                         std::to_string(hw.l2.capacity_bytes) + " B");
  std::stable_sort(shared.begin(), shared.end(),
                   [](const Shared* a, const Shared* b) { return a->span.first_group < b->span.first_group; });
  const std::uint64_t slice = first_fit(shared, hw.l2.capacity_bytes);
  const std::uint32_t in_l2 =
      slice == 0 ? 0 : std::uint32_t(std::min<std::uint64_t>(copies, hw.l2.capacity_bytes / slice));
  for (const Shared* s : shared) {
    for (std::uint32_t r = 0; r < copies; ++r) {
      if (s->l2_offset < 0 || r >= in_l2) {
        ++program.l2.left_in_dram;
        continue;
      }
      const std::uint64_t dram_base = s->span.addr + r * stride;
      const std::uint64_t l2_base = kL2WindowBase + r * slice + std::uint64_t(s->l2_offset);
      for (std::uint32_t i : s->commands) {
        DramRegion& reg = program.commands[i + r * per_copy].dram;
        reg.addr = l2_base + (reg.addr - dram_base);
      }
      ++program.l2.tensors;
      program.l2.bytes += s->span.bytes;
      program.l2.largest_transfer = std::max(program.l2.largest_transfer, s->largest_transfer);
    }
  }
  program.l2.peak_bytes = slice * in_l2;
}

}  // namespace npusim::sched
