#pragma once
// Double buffering of one operand: the DMA prefetches tile i + 1 into one half while the compute
// unit reads tile i from the other. Tile i lives in half i % 2, so the prefetch of tile i + 2
// must wait until tile i has been consumed: that wait is the DMA's, and it is counted.
#include <array>
#include <cstdint>

#include <systemc>

namespace npusim::models {

class DoubleBuffer {
 public:
  DoubleBuffer() = default;

  /// Producer side (an SC_THREAD): waits until the half of the next tile is free, marks it
  /// filling and returns its index (0 or 1).
  int begin_fill();
  /// The half's data has arrived; a consumer waiting for it resumes.
  void end_fill(int half);
  /// Consumer side (an SC_THREAD): waits until the next tile in order is filled, marks it in use
  /// and returns its half.
  int begin_use();
  /// The consumer is done with the half; a producer waiting for it resumes.
  void end_use(int half);

  /// Simulated time the producer spent waiting for a half still in use.
  const sc_core::sc_time& fill_wait() const { return fill_wait_; }
  /// Simulated time the consumer spent waiting for a half still being filled.
  const sc_core::sc_time& use_wait() const { return use_wait_; }
  std::uint64_t tiles_filled() const { return next_fill_; }

 private:
  enum class State { Free, Filling, Ready, InUse };
  /// Waits on `changed_` until `half` is in state `wanted`; adds the time waited to `total`.
  void wait_for(int half, State wanted, sc_core::sc_time& total);
  void set(int half, State from, State to);

  std::array<State, 2> state_{State::Free, State::Free};
  std::uint64_t next_fill_ = 0, next_use_ = 0;
  sc_core::sc_event changed_;
  sc_core::sc_time fill_wait_ = sc_core::SC_ZERO_TIME, use_wait_ = sc_core::SC_ZERO_TIME;
};

}  // namespace npusim::models
