#pragma once
// The TLM extension that makes one generic payload a strided (tile) DRAM transfer.
#include <cstdint>

#include <tlm>

namespace npusim::models {

/// Attached to a DramController payload: `runs` runs of `run_bytes` bytes, run r starting at
/// payload address + r * stride; data_length must equal run_bytes * runs. Without it a payload
/// is one contiguous run of data_length bytes.
class DramStrideExtension : public tlm::tlm_extension<DramStrideExtension> {
 public:
  DramStrideExtension() = default;
  DramStrideExtension(std::uint64_t run_bytes_, std::uint64_t stride_, std::uint64_t runs_,
                      std::uint64_t max_outstanding_bytes_)
      : run_bytes(run_bytes_), stride(stride_), runs(runs_), max_outstanding_bytes(max_outstanding_bytes_) {}

  tlm::tlm_extension_base* clone() const override { return new DramStrideExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const DramStrideExtension&>(other);
  }

  std::uint64_t run_bytes = 0;
  std::uint64_t stride = 0;
  std::uint64_t runs = 1;
  /// Bytes the initiator keeps in flight (its bursts x its burst size); 0 = as many as the
  /// controller's queue holds. In bytes, not bursts: an initiator's burst (a DMA's 64 B) need not
  /// be the DRAM's (16 beats of a x16 channel: 32 B), and what limits a stream is the data in flight.
  std::uint64_t max_outstanding_bytes = 0;
};

}  // namespace npusim::models
