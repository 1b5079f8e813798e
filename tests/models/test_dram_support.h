#pragma once
// Shared by the DRAM and DMA tests: hand-built device configs (so the tests need no config
// loader) and a module that runs a test body as an SC_THREAD.
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "models/dram/address_mapping.h"
#include "models/dram/dram_activity.h"
#include "models/dram/dram_engine.h"
#include "sim/core/hardware_config.h"

namespace npusim::models::test {

/// LPDDR4-3200, one 32-bit channel of two x16 8 Gb dies (JESD209-4 values at tCK = 0.625 ns):
/// 8 banks, 4 KiB rows = 64 bursts of 64 B, burst = 8 cycles, read latency CL + tDQSCK = 34.
inline DramConfig lpddr4_3200() {
  DramConfig c;
  c.preset = "test-LPDDR4-3200";
  c.standard = "LPDDR4";
  c.clock = Frequency{1600e6};
  c.data_rate = 3200e6;
  c.channels = 1;
  c.ranks = 1;
  c.bank_groups = 1;
  c.banks_per_group = 8;
  c.rows = 65536;
  c.columns = 1024;
  c.device_width = 16;
  c.bus_width = 32;
  c.burst_length = 16;
  c.mapping = "rochrabacobg";
  DramTiming& t = c.timing;
  t.CL = 28, t.CWL = 14, t.tRCD = 29, t.tRP = 29, t.tRPab = 34, t.tRAS = 68, t.tRC = 97;
  t.tCCD_S = t.tCCD_L = 8, t.tRRD_S = t.tRRD_L = 16, t.tFAW = 64;
  t.tWR = 29, t.tWTR_S = t.tWTR_L = 16, t.tRTP = 12, t.tRTW = 30;
  t.tRFC = 448, t.tRFCpb = 224, t.tREFI = 6246, t.tDQSCK = 6, t.tPPD = 4;
  return c;
}

/// DDR4-3200AA (22-22-22), 64-bit channel of eight x8 8 Gb devices (JESD79-4 at tCK = 0.625 ns):
/// 4 bank groups x 4 banks, 8 KiB rows = 128 bursts of 64 B, burst = 4 cycles.
inline DramConfig ddr4_3200_x8() {
  DramConfig c;
  c.preset = "test-DDR4-3200-x8";
  c.standard = "DDR4";
  c.clock = Frequency{1600e6};
  c.data_rate = 3200e6;
  c.channels = 1;
  c.ranks = 1;
  c.bank_groups = 4;
  c.banks_per_group = 4;
  c.rows = 65536;
  c.columns = 1024;
  c.device_width = 8;
  c.bus_width = 64;
  c.burst_length = 8;
  c.mapping = "rochrabacobg";
  DramTiming& t = c.timing;
  t.CL = 22, t.CWL = 16, t.tRCD = 22, t.tRP = 22, t.tRPab = 22, t.tRAS = 52, t.tRC = 74;
  t.tCCD_S = 4, t.tCCD_L = 8, t.tRRD_S = 4, t.tRRD_L = 8, t.tFAW = 34;
  t.tWR = 24, t.tWTR_S = 4, t.tWTR_L = 12, t.tRTP = 12, t.tRTW = 12;
  t.tRFC = 560, t.tRFCpb = 0, t.tREFI = 12480, t.tDQSCK = 0, t.tPPD = 0;
  return c;
}

/// `n` requests over a few banks and rows of `c` (so hits, misses and conflicts mix), about a
/// third of them writes, arriving 0-15 cycles apart (bursts of arrivals and idle gaps); channel
/// and rank drawn too when `c` has several. With `long_gaps`, about one request in 400 comes
/// 3 tREFI after the previous one (an idle rank's refresh ticks served in one step).
inline std::vector<DramRequest> random_trace(const DramConfig& c, std::uint32_t seed, std::uint32_t n,
                                             bool long_gaps = false) {
  const AddressMapper mapper(c);
  std::mt19937 rng(seed);
  std::vector<DramRequest> r;
  std::uint64_t cycle = 0;
  for (std::uint32_t i = 0; i < n; ++i) {
    DramAddress a;
    if (c.channels > 1) a.channel = static_cast<std::uint32_t>(rng() % c.channels);
    if (c.ranks > 1) a.rank = static_cast<std::uint32_t>(rng() % c.ranks);
    a.bank_group = static_cast<std::uint32_t>(rng() % c.bank_groups);
    a.bank = static_cast<std::uint32_t>(rng() % c.banks_per_group);
    a.row = static_cast<std::uint32_t>(rng() % 3);
    a.column = static_cast<std::uint32_t>(rng() % 16);
    cycle += rng() % 4 == 0 ? rng() % 16 : 0;
    if (long_gaps && rng() % 400 == 0) cycle += 3 * std::uint64_t{c.timing.tREFI};
    r.push_back({mapper.encode(a), cycle, rng() % 3 == 0});
  }
  return r;
}

/// Streams as the scheduler's stream shortcut sees them (DramEngine::choose, step 0): runs of 4-64
/// bursts along one row of one bank (a third of them writes), each run arriving one burst per
/// cycle so queues fill up, runs of two banks interleaved at times, a request to another bank
/// now and then, gaps between runs of 0 to 3,000 cycles (refresh falls inside and between runs).
inline std::vector<DramRequest> stream_trace(const DramConfig& c, std::uint32_t seed, std::uint32_t n) {
  const AddressMapper mapper(c);
  std::mt19937 rng(seed);
  const auto random_address = [&] {
    DramAddress a;
    if (c.channels > 1) a.channel = static_cast<std::uint32_t>(rng() % c.channels);
    if (c.ranks > 1) a.rank = static_cast<std::uint32_t>(rng() % c.ranks);
    a.bank_group = static_cast<std::uint32_t>(rng() % c.bank_groups);
    a.bank = static_cast<std::uint32_t>(rng() % c.banks_per_group);
    a.row = static_cast<std::uint32_t>(rng() % 4);
    return a;
  };
  std::vector<DramRequest> r;
  std::uint64_t cycle = 0;
  while (r.size() < n) {
    DramAddress run[2] = {random_address(), random_address()};
    const bool two = rng() % 3 == 0;
    const bool write[2] = {rng() % 3 == 0, rng() % 3 == 0};
    const std::uint32_t length = 4 + static_cast<std::uint32_t>(rng() % 61);
    for (std::uint32_t i = 0; i < length && r.size() < n; ++i) {
      const std::uint32_t k = two ? i % 2 : 0;
      run[k].column = (run[k].column + 1) % c.columns;
      if (rng() % 16 == 0) {  // a competing request
        DramAddress other = random_address();
        r.push_back({mapper.encode(other), cycle++, rng() % 2 == 0});
      }
      r.push_back({mapper.encode(run[k]), cycle++, write[k]});
    }
    cycle += rng() % 2 == 0 ? 0 : rng() % 3000;
  }
  r.resize(n);
  return r;
}

/// What a controller did, as text to compare: each request's data end, every row interval of
/// every bank (ACT, PRE, bursts), the data-bus intervals and the refreshes.
inline std::string render_commands(const std::vector<std::uint64_t>& ends, const DramActivity& a) {
  std::string out;
  for (std::uint64_t end : ends) out += std::to_string(end) + ' ';
  for (std::uint32_t b = 0; b < a.ranks() * a.banks_per_rank(); ++b)
    for (const DramRowInterval& r : a.rows(b).to_vector())
      out += "\nbank " + std::to_string(b) + " row " + std::to_string(r.row) + " act " + std::to_string(r.act) +
             " pre " + std::to_string(r.pre) + " bursts " + std::to_string(r.bursts);
  for (std::uint32_t ch = 0; ch < a.channels(); ++ch)
    for (const DramBusInterval& i : a.bus(ch).to_vector())
      out += "\nbus " + std::to_string(i.write) + ' ' + std::to_string(i.begin) + ' ' + std::to_string(i.end) + " x" +
             std::to_string(i.bursts);
  for (std::uint32_t rank = 0; rank < a.ranks(); ++rank)
    for (const DramRefreshInterval& r : a.refreshes(rank))
      out += "\nref " + std::to_string(rank) + ' ' + std::to_string(r.unit) + ' ' + std::to_string(r.begin);
  return out;
}

/// A fixed list of requests; records each one's completion cycle.
class VectorSource : public DramRequestSource {
 public:
  explicit VectorSource(std::vector<DramRequest> requests)
      : requests_(std::move(requests)), ends(requests_.size(), 0) {}
  Status next(DramRequest& r) override {
    if (next_ == requests_.size()) return Status::Done;
    r = requests_[next_++];
    return Status::Ready;
  }
  void completed(std::uint64_t index, std::uint64_t data_end) override { ends[index] = data_end; }

 private:
  std::vector<DramRequest> requests_;
  std::size_t next_ = 0;

 public:
  std::vector<std::uint64_t> ends;  ///< data end of request i
};

/// Runs `body` as an SC_THREAD from time zero.
class ThreadRunner : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ThreadRunner);
  ThreadRunner(sc_core::sc_module_name name, std::function<void()> body)
      : sc_core::sc_module(name), body_(std::move(body)) {
    SC_THREAD(run);
  }

 private:
  void run() { body_(); }
  std::function<void()> body_;
};

}  // namespace npusim::models::test
