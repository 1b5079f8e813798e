#include "models/vector_unit/vector_unit.h"

#include <cmath>
#include <limits>
#include <string>

#include "sim/core/errors.h"

namespace npusim::models {
namespace {

void check_lanes(const VectorUnitConfig& config) {
  if (config.lanes == 0) throw InputError("npu.vector_unit.lanes", "expected > 0, found 0");
}

void check_cost(const std::string& field, double cost) {
  if (!(cost >= 0)) {
    throw InputError("npu.vector_unit." + field, "expected >= 0, found " + std::to_string(cost));
  }
}

}  // namespace

std::uint64_t vector_compute_cycles(const VectorUnitConfig& config, const std::string& kind, std::uint64_t ops) {
  check_lanes(config);
  const double cost = config.cost_of(kind);
  check_cost("cost." + kind, cost);
  const double cycles = double(ops) * cost / double(config.lanes);
  // A fractional cost (0.1 * 30 / 1) can land a rounding error above a whole number; that
  // error is a few ulps, and must not cost an extra cycle.
  const double nearest = std::nearbyint(cycles);
  const double ulps = 4 * std::numeric_limits<double>::epsilon() * cycles;
  return std::uint64_t(std::abs(cycles - nearest) <= ulps ? nearest : std::ceil(cycles));
}

VectorUnit::VectorUnit(sc_core::sc_module_name name, const VectorUnitConfig& config, Frequency core_clock, Sram& sram)
    : sc_module(name), config_(config), clock_(checked_clock(core_clock, "npu.core_clock")), sram_(sram) {
  // Validate the whole table now, so a bad entry fails at construction, not mid-simulation.
  check_lanes(config);
  check_cost("default_cost", config.default_cost);
  for (const auto& [kind, cost] : config.cost) check_cost("cost." + kind, cost);
}

VectorResult VectorUnit::timing(const VectorTile& t) const {
  const std::uint64_t compute = vector_compute_cycles(config_, t.kind, t.ops);
  const SramBound bound = bound_by_sram(compute, sram_.access_cycles(t.sram_read_bytes, t.sram_write_bytes));
  return {bound.cycles, compute, bound.stall_cycles};
}

VectorResult VectorUnit::run(const VectorTile& t) {
  VectorResult r = timing(t);
  // As for the MAC array: earlier traffic of the shared banks delays this tile's operands.
  const std::uint64_t served = sram_.record_access(t.sram_read_bytes, t.sram_write_bytes, r.cycles);
  if (served > r.cycles) {
    r.stall_cycles += served - r.cycles;
    r.cycles = served;
  }
  busy_cycles_ += r.cycles;
  compute_cycles_ += r.compute_cycles;
  stall_cycles_ += r.stall_cycles;
  ops_ += t.ops;
  elements_ += t.elements;
  ++tiles_;
  if (r.cycles > 0) sc_core::wait(cycles_time(clock_, r.cycles));
  return r;
}

}  // namespace npusim::models
