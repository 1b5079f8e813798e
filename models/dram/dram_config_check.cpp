#include "models/dram/dram_config_check.h"

#include <algorithm>

#include "models/dram/address_mapping.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

std::string cycles(std::uint64_t n) {
  return std::to_string(n) + " nCK";
}

}  // namespace

std::uint32_t refresh_units(const DramConfig& c) {
  return c.refresh == RefreshMode::AllBank ? 1 : std::min<std::uint32_t>(c.banks(), 8);
}

void check_dram_config(const DramConfig& c, const std::string& context) {
  const DramTiming& t = c.timing;
  auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(context + " (npu.dram." + key + ")", what);
  };
  if (!(c.clock.hz > 0)) fail("clock", "expected a positive clock, found " + std::to_string(c.clock.hz) + " Hz");
  if (c.data_rate < c.clock.hz) fail("data_rate", "expected a data rate of at least the clock rate");
  if (c.device_width == 0 || c.bus_width % 8 != 0 || c.bus_width % c.device_width != 0)
    fail("bus_width", "expected a multiple of 8 and of device_width (" + std::to_string(c.device_width) + "), found " +
                          std::to_string(c.bus_width));
  if (c.burst_cycles() == 0) fail("burst_length", "expected a burst of at least one clock cycle");
  if (t.tRC < t.tRAS + t.tRP)
    fail("timing.tRC", "expected tRC >= tRAS + tRP = " + cycles(t.tRAS + t.tRP) + ", found tRC = " + cycles(t.tRC));
  if (t.tREFI != 0 && t.tRFC >= t.tREFI)
    fail("timing.tRFC", "expected tRFC < tREFI, found tRFC = " + cycles(t.tRFC) + ", tREFI = " + cycles(t.tREFI));
  if (c.refresh == RefreshMode::PerBank) {
    if (c.standard == "DDR4") fail("refresh", "expected all_bank: DDR4 has no per-bank refresh");
    const std::uint32_t interval = t.tREFI / refresh_units(c);
    if (t.tREFI != 0 && (t.tRFCpb == 0 || t.tRFCpb >= interval))
      fail("timing.tRFCpb", "expected 0 < tRFCpb < tREFI / " + std::to_string(refresh_units(c)) + " = " +
                                cycles(interval) + " for per-bank refresh, found " + cycles(t.tRFCpb));
  }
  if (c.read_queue_depth == 0) fail("read_queue_depth", "expected at least 1 entry, found 0");
  if (c.write_queue_depth == 0) fail("write_queue_depth", "expected at least 1 entry, found 0");
  if (c.write_drain_high > c.write_queue_depth || c.write_drain_low >= c.write_drain_high)
    fail("write_drain_high", "expected 0 <= write_drain_low < write_drain_high <= write_queue_depth (" +
                                 std::to_string(c.write_queue_depth) + "), found low " +
                                 std::to_string(c.write_drain_low) + ", high " + std::to_string(c.write_drain_high));
  for (const DramRail& r : c.rails)
    if (!(r.voltage > 0))
      fail("energy." + r.name + ".voltage", "expected a positive voltage for rail '" + r.name + "'");
  AddressMapper mapper(c);  // throws for a bad mapping or organisation
}

}  // namespace npusim::models
