#pragma once
// The TLM extension that spreads one SRAM payload's bank time over a span (a DMA transfer
// writes the banks as DRAM delivers, not all at once).
#include <tlm>

namespace npusim::models {

/// Attached to an Sram payload: the bank time of the payload is spread evenly over `span`
/// from its start (alone it is served after max(bank time, span)). Without it the payload
/// takes the whole banks until served.
class SramSpreadExtension : public tlm::tlm_extension<SramSpreadExtension> {
 public:
  SramSpreadExtension() = default;
  explicit SramSpreadExtension(const sc_core::sc_time& span_) : span(span_) {}

  tlm::tlm_extension_base* clone() const override { return new SramSpreadExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const SramSpreadExtension&>(other);
  }

  sc_core::sc_time span = sc_core::SC_ZERO_TIME;
};

}  // namespace npusim::models
