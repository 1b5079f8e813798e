#include "models/sram/double_buffer.h"

#include <string>

#include "sim/core/errors.h"

namespace npusim::models {

void DoubleBuffer::wait_for(int half, State wanted, sc_core::sc_time& total) {
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  while (state_[half] != wanted) sc_core::wait(changed_);
  total += sc_core::sc_time_stamp() - start;
}

void DoubleBuffer::set(int half, State from, State to) {
  if (half < 0 || half > 1 || state_[half] != from) {
    throw SimulationError("double buffer: half " + std::to_string(half) +
                          " is not in the state this call expects (fill/use out of order)");
  }
  state_[half] = to;
  changed_.notify(sc_core::SC_ZERO_TIME);
}

int DoubleBuffer::begin_fill() {
  const int half = int(next_fill_ % 2);
  wait_for(half, State::Free, fill_wait_);
  set(half, State::Free, State::Filling);
  ++next_fill_;
  return half;
}

void DoubleBuffer::end_fill(int half) {
  set(half, State::Filling, State::Ready);
}

int DoubleBuffer::begin_use() {
  const int half = int(next_use_ % 2);
  wait_for(half, State::Ready, use_wait_);
  set(half, State::Ready, State::InUse);
  ++next_use_;
  return half;
}

void DoubleBuffer::end_use(int half) {
  set(half, State::InUse, State::Free);
}

}  // namespace npusim::models
