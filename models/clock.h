#pragma once
// A clocked model's cycles as SystemC time, the one conversion every model shares.
#include <cstdint>

#include <systemc>

#include "sim/core/units.h"

namespace npusim::models {

/// One period of `clock` as an sc_time; throws InputError unless the frequency is positive and
/// the period at least SystemC's time resolution (1 ps). Every clocked model checks its clock here.
sc_core::sc_time clock_period(Frequency clock, const char* where);

/// `clock` once clock_period has checked it: what a clocked model keeps.
Frequency checked_clock(Frequency clock, const char* where);

/// `cycles` of `clock` as an sc_time: cycles / f rounded once to the time resolution. Every
/// clocked model converts cycles to time through this, never as cycles times a rounded period:
/// at 2.7 GHz the period rounds from 370.37 to 370 ps, and a unit timed by it would run 0.1 %
/// faster than its clock (its roofline points above their roof).
sc_core::sc_time cycles_time(Frequency clock, std::uint64_t cycles);

/// The whole cycles of `clock` that cover `t`, a duration made of cycles_time values: the
/// rounding of a few of them to the resolution (a fraction of a cycle) does not add a cycle.
std::uint64_t cycles_covering(const sc_core::sc_time& t, Frequency clock);

}  // namespace npusim::models
