#include "models/clock.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/core/errors.h"

namespace npusim::models {

sc_core::sc_time clock_period(Frequency clock, const char* where) {
  if (!(clock.hz > 0)) {
    throw InputError(where, "clock frequency must be positive, found " + std::to_string(clock.hz) + " Hz");
  }
  const sc_core::sc_time period(clock.period_seconds(), sc_core::SC_SEC);
  if (period == sc_core::SC_ZERO_TIME) {
    throw InputError(where, "clock period " + std::to_string(clock.period_seconds()) +
                                " s is below the SystemC time resolution " +
                                sc_core::sc_get_time_resolution().to_string());
  }
  return period;
}

Frequency checked_clock(Frequency clock, const char* where) {
  clock_period(clock, where);
  return clock;
}

sc_core::sc_time cycles_time(Frequency clock, std::uint64_t cycles) {
  return sc_core::sc_time(double(cycles) / clock.hz, sc_core::SC_SEC);
}

std::uint64_t cycles_covering(const sc_core::sc_time& t, Frequency clock) {
  // A period that is a whole number of resolution steps (1.25 ns at 800 MHz) makes every
  // cycles_time value exact; otherwise each is within half a step of its exact time, and a
  // duration of two (a start and an end) within a step: so much of a cycle is rounding, not time.
  const double step = sc_core::sc_get_time_resolution().to_seconds();
  const double steps = clock.period_seconds() / step;
  const double rounding = std::abs(steps - std::nearbyint(steps)) < 1e-6 ? 0 : step * clock.hz;
  return static_cast<std::uint64_t>(std::max(0.0, std::ceil(t.to_seconds() * clock.hz - rounding - 1e-9)));
}

}  // namespace npusim::models
