#include "sim/scheduler/sram_pinning.h"

#include <algorithm>
#include <string>

#include "sim/core/errors.h"
#include "sim/scheduler/tiling.h"

namespace npusim::sched {

SramPinning sram_pinning(const workloads::Graph& g, const HardwareConfig& hw) {
  SramPinning p;
  if (hw.sram.kv_cache != KvCacheHome::Sram) return p;
  const std::uint32_t eb = dtype_bytes(hw.mac_array.dtype);
  std::uint64_t input_bytes = 0, result_bytes = 0;
  for (std::size_t t = 0; t < g.tensors().size(); ++t) {
    if (!g.tensor(int(t)).persistent) continue;
    const int b = base_tensor(g, int(t));
    if (std::find(p.tensors.begin(), p.tensors.end(), b) != p.tensors.end()) continue;
    p.tensors.push_back(b);
    (g.tensor(b).producer < 0 ? input_bytes : result_bytes) += workloads::tensor_bytes(g, b, eb);
  }
  if (p.tensors.empty()) return p;
  p.bytes = std::max(input_bytes > 0 ? input_bytes : result_bytes, hw.sram.kv_reserve_bytes);
  return p;
}

void check_pinned_fits(std::uint64_t bytes, const HardwareConfig& hw) {
  if (bytes < hw.sram.capacity_bytes) return;
  throw InputError(hw.source + " (npu.sram.kv_cache)",
                   "expected a KV cache smaller than the SRAM to pin it there (npu.sram.capacity " +
                       std::to_string(hw.sram.capacity_bytes) + " B), found " + std::to_string(bytes) +
                       " B of cache; set npu.sram.kv_cache: dram or a larger npu.sram.capacity");
}

HardwareConfig planning_config(const workloads::Graph& g, const HardwareConfig& hw) {
  const SramPinning p = sram_pinning(g, hw);
  HardwareConfig h = hw;
  h.sram.kv_cache = KvCacheHome::Dram;  // applied: the tiles plan around it
  h.sram.kv_reserve_bytes = 0;
  if (p.tensors.empty()) return h;
  check_pinned_fits(p.bytes, hw);
  h.sram.capacity_bytes -= p.bytes;
  return h;
}

}  // namespace npusim::sched
