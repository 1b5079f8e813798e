#pragma once
// Where a GEMM's three operands live: allocations in one shared scratchpad (npusim's default),
// or three separate buffers (SCALE-Sim's ifmap, filter and ofmap SRAMs).
#include <array>
#include <cstdint>
#include <string>

#include "models/sram/sram.h"

namespace npusim::models {

enum class Operand { Ifmap, Filter, Ofmap };
std::string to_string(Operand o);

class OperandBuffers {
 public:
  /// All three operands allocate from `scratchpad`'s capacity.
  explicit OperandBuffers(Sram& scratchpad);
  /// Separate buffers of these capacities in bytes; throws InputError for a zero capacity.
  OperandBuffers(std::uint64_t ifmap_bytes, std::uint64_t filter_bytes, std::uint64_t ofmap_bytes);

  /// Reserves `bytes` for `o` if they fit in its buffer; returns false and changes nothing if not.
  bool try_allocate(Operand o, std::uint64_t bytes);
  /// Returns `bytes` of `o`; throws SimulationError when more than `o` holds.
  void release(Operand o, std::uint64_t bytes);
  /// Bytes `o` holds now (not what others hold in a shared scratchpad).
  std::uint64_t used(Operand o) const { return held_[index(o)]; }
  /// Bytes still free for `o`: in a shared scratchpad the others' allocations count too.
  std::uint64_t available(Operand o) const;
  bool shared() const { return scratchpad_ != nullptr; }

 private:
  static std::size_t index(Operand o) { return static_cast<std::size_t>(o); }

  Sram* scratchpad_ = nullptr;
  std::array<CapacityPool, 3> separate_;
  std::array<std::uint64_t, 3> held_{0, 0, 0};
};

}  // namespace npusim::models
