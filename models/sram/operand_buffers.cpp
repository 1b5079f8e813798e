#include "models/sram/operand_buffers.h"

#include "sim/core/errors.h"

namespace npusim::models {

std::string to_string(Operand o) {
  switch (o) {
    case Operand::Ifmap:
      return "ifmap";
    case Operand::Filter:
      return "filter";
    case Operand::Ofmap:
      return "ofmap";
  }
  return "?";
}

OperandBuffers::OperandBuffers(Sram& scratchpad) : scratchpad_(&scratchpad) {}

OperandBuffers::OperandBuffers(std::uint64_t ifmap_bytes, std::uint64_t filter_bytes, std::uint64_t ofmap_bytes)
    : separate_{CapacityPool(ifmap_bytes), CapacityPool(filter_bytes), CapacityPool(ofmap_bytes)} {
  for (Operand o : {Operand::Ifmap, Operand::Filter, Operand::Ofmap}) {
    if (separate_[index(o)].capacity() == 0) {
      throw InputError(to_string(o) + " buffer", "expected a capacity > 0 bytes, found 0");
    }
  }
}

bool OperandBuffers::try_allocate(Operand o, std::uint64_t bytes) {
  const bool ok = shared() ? scratchpad_->try_allocate(bytes) : separate_[index(o)].try_allocate(bytes);
  if (ok) held_[index(o)] += bytes;
  return ok;
}

void OperandBuffers::release(Operand o, std::uint64_t bytes) {
  // Checked per operand even when shared, so one operand cannot free another's bytes.
  if (bytes > held_[index(o)]) {
    throw SimulationError(to_string(o) + " buffer: release of " + std::to_string(bytes) + " bytes but only " +
                          std::to_string(held_[index(o)]) + " are allocated");
  }
  if (shared()) {
    scratchpad_->release(bytes);
  } else {
    separate_[index(o)].release(bytes, to_string(o) + " buffer");
  }
  held_[index(o)] -= bytes;
}

std::uint64_t OperandBuffers::available(Operand o) const {
  if (shared()) return scratchpad_->capacity() - scratchpad_->used();
  const CapacityPool& p = separate_[index(o)];
  return p.capacity() - p.used();
}

}  // namespace npusim::models
