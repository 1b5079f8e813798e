#include "models/sram/sram.h"

#include <cmath>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "models/sram/sram_spread_extension.h"
#include "sim/core/errors.h"
#include "sim/core/math_util.h"

namespace npusim::models {
namespace {

void require_positive(std::uint64_t value, const char* field) {
  if (value == 0) throw InputError(std::string("npu.sram.") + field, "expected > 0, found 0");
}

/// The default bank: `ports_per_bank` read/write ports.
BankPorts shared_ports(const SramConfig& c) {
  require_positive(c.ports_per_bank, "ports_per_bank");
  return {0, 0, c.ports_per_bank};
}

/// Adds `weight` to `length` consecutive banks starting at `first`, wrapping past the last bank
/// (length < banks). `diff` is a difference array of banks + 1 entries.
void add_circular(std::vector<std::int64_t>& diff, std::uint64_t first, std::uint64_t length, std::int64_t weight) {
  const std::uint64_t banks = diff.size() - 1;
  if (length == 0) return;
  const std::uint64_t end = first + length;
  diff[first] += weight;
  if (end <= banks) {
    diff[end] -= weight;
  } else {
    diff[banks] -= weight;
    diff[0] += weight;
    diff[end - banks] -= weight;
  }
}

}  // namespace

SramBound bound_by_sram(std::uint64_t compute_cycles, std::uint64_t sram_cycles) {
  const std::uint64_t cycles = std::max(compute_cycles, sram_cycles);
  return {cycles, cycles - compute_cycles};
}

std::uint64_t port_limited_cycles(std::uint64_t reads, std::uint64_t writes, const BankPorts& ports,
                                  std::uint64_t scale) {
  const std::uint64_t for_reads = std::uint64_t(ports.read + ports.read_write) * scale;
  const std::uint64_t for_writes = std::uint64_t(ports.write + ports.read_write) * scale;
  if ((reads > 0 && for_reads == 0) || (writes > 0 && for_writes == 0)) {
    throw InputError("npu.sram", "expected a port for every access kind, found " + std::to_string(ports.read) +
                                     " read, " + std::to_string(ports.write) + " write and " +
                                     std::to_string(ports.read_write) + " read/write ports");
  }
  std::uint64_t cycles = 0;
  if (reads > 0) cycles = std::max(cycles, ceil_div(reads, for_reads));
  if (writes > 0) cycles = std::max(cycles, ceil_div(writes, for_writes));
  // Read/write ports are shared: together the two kinds cannot exceed all ports of the bank.
  const std::uint64_t all = std::uint64_t(ports.read + ports.write + ports.read_write) * scale;
  if (reads + writes > 0) cycles = std::max(cycles, ceil_div(reads + writes, all));
  return cycles;
}

bool CapacityPool::try_allocate(std::uint64_t bytes) {
  if (bytes > capacity_ - used_) return false;
  used_ += bytes;
  peak_used_ = std::max(peak_used_, used_);
  return true;
}

void CapacityPool::release(std::uint64_t bytes, const std::string& who) {
  if (bytes > used_) {
    throw SimulationError(who + ": release of " + std::to_string(bytes) + " bytes but only " + std::to_string(used_) +
                          " are allocated");
  }
  used_ -= bytes;
}

Sram::Sram(sc_core::sc_module_name name, const SramConfig& config, Frequency core_clock)
    : Sram(name, config, core_clock, shared_ports(config)) {}

Sram::Sram(sc_core::sc_module_name name, const SramConfig& config, Frequency core_clock, const BankPorts& ports)
    : sc_module(name),
      socket("socket"),
      config_(config),
      ports_(ports),
      clock_(checked_clock(core_clock, "npu.core_clock")),
      pool_(config.capacity_bytes) {
  require_positive(config.capacity_bytes, "capacity");
  require_positive(config.banks, "banks");
  require_positive(config.bank_width_bytes, "bank_width");
  require_positive(std::uint64_t(ports.read) + ports.read_write, "read ports");
  require_positive(std::uint64_t(ports.write) + ports.read_write, "write ports");
  socket.register_b_transport(this, &Sram::b_transport);
}

bool Sram::try_allocate(std::uint64_t bytes) {
  return pool_.try_allocate(bytes);
}

void Sram::release(std::uint64_t bytes) {
  pool_.release(bytes, name());
}

std::uint64_t Sram::access_cycles(std::uint64_t read_bytes, std::uint64_t write_bytes) const {
  return port_limited_cycles(read_bytes, write_bytes, ports_, std::uint64_t(config_.banks) * config_.bank_width_bytes);
}

std::vector<std::uint64_t> Sram::bank_words(const StridedAccess& a) const {
  const std::uint64_t banks = config_.banks;
  std::vector<std::uint64_t> words_per_bank(banks, 0);
  if (a.count == 0 || a.access_bytes == 0) return words_per_bank;
  const std::uint64_t width = config_.bank_width_bytes;
  // Banks repeat every `span` bytes, so only addresses modulo span matter; those visit
  // span / gcd(stride, span) distinct offsets and then repeat in the same order.
  const std::uint64_t span = banks * width;
  const std::uint64_t step = a.stride % span;
  const std::uint64_t period = span / std::gcd(step, span);
  const std::uint64_t full_rounds = a.count / period;
  const std::uint64_t extra = a.count % period;  // the first `extra` offsets occur once more

  std::vector<std::int64_t> diff(banks + 1, 0);
  std::uint64_t on_every_bank = 0;  // words from accesses long enough to wrap all banks
  std::uint64_t offset = a.start % span;
  for (std::uint64_t i = 0; i < std::min(period, a.count); ++i) {
    const std::uint64_t weight = full_rounds + (i < extra ? 1 : 0);
    const std::uint64_t words = (offset % width + a.access_bytes - 1) / width + 1;
    on_every_bank += weight * (words / banks);
    add_circular(diff, offset / width, words % banks, std::int64_t(weight));
    offset = (offset + step) % span;
  }
  std::int64_t running = 0;
  for (std::uint64_t b = 0; b < banks; ++b) {
    running += diff[b];
    words_per_bank[b] = on_every_bank + std::uint64_t(running);
  }
  return words_per_bank;
}

std::uint64_t Sram::strided_access_cycles(std::uint64_t start, std::uint64_t stride, std::uint64_t count,
                                          std::uint32_t access_bytes) const {
  return conflict_cycles({start, stride, count, access_bytes}, {});
}

std::uint64_t Sram::conflict_cycles(const StridedAccess& reads, const StridedAccess& writes) const {
  return conflict_cycles(std::vector<StridedAccess>{reads}, std::vector<StridedAccess>{writes});
}

std::uint64_t Sram::conflict_cycles(const std::vector<StridedAccess>& reads,
                                    const std::vector<StridedAccess>& writes) const {
  auto words = [this](const std::vector<StridedAccess>& accesses) {
    std::vector<std::uint64_t> sum(config_.banks, 0);
    for (const StridedAccess& a : accesses) {
      const std::vector<std::uint64_t> w = bank_words(a);
      for (std::size_t b = 0; b < sum.size(); ++b) sum[b] += w[b];
    }
    return sum;
  };
  const std::vector<std::uint64_t> r = words(reads), w = words(writes);
  std::uint64_t busiest = 0;
  for (std::size_t b = 0; b < r.size(); ++b) {
    busiest = std::max(busiest, port_limited_cycles(r[b], w[b], ports_));
  }
  return busiest;
}

sc_core::sc_time Sram::serve(const sc_core::sc_time& at, std::uint64_t cycles, const sc_core::sc_time& spread) {
  const std::uint64_t done = timeline_.reserve(sc_core::sc_time_stamp().value(), at.value(),
                                               cycles_time(clock_, cycles).value(), spread.value());
  return sc_core::sc_time::from_value(done) - at;
}

std::uint64_t Sram::record_access(std::uint64_t read_bytes, std::uint64_t write_bytes, std::uint64_t spread_cycles) {
  read_bytes_ += read_bytes;
  write_bytes_ += write_bytes;
  const sc_core::sc_time wait =
      serve(sc_core::sc_time_stamp(), access_cycles(read_bytes, write_bytes), cycles_time(clock_, spread_cycles));
  return cycles_covering(wait, clock_);
}

void Sram::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const std::uint64_t address = payload.get_address();
  const std::uint64_t length = payload.get_data_length();
  const tlm::tlm_command command = payload.get_command();
  if (command == tlm::TLM_IGNORE_COMMAND) {
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    return;
  }
  // Addresses are scratchpad offsets; an access past the end is an initiator bug.
  if (length > capacity() || address > capacity() - length) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  const bool is_read = command == tlm::TLM_READ_COMMAND;
  (is_read ? read_bytes_ : write_bytes_) += length;
  const auto* spread = payload.get_extension<SramSpreadExtension>();
  delay += serve(sc_core::sc_time_stamp() + delay, access_cycles(is_read ? length : 0, is_read ? 0 : length),
                 spread ? spread->span : sc_core::SC_ZERO_TIME);
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace npusim::models
