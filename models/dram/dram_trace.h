#pragma once
// Request traces for the standalone controller: a reader of DRAMsim3's text format
// (`0xADDRESS READ|WRITE CYCLE`, one request per line) and a generator of synthetic patterns.
// Both are DramRequestSources, so the engine pulls requests one at a time (no trace is held in
// memory). Plain C++.
#include <cstdint>
#include <istream>
#include <ostream>
#include <random>
#include <string>

#include "models/dram/address_mapping.h"
#include "models/dram/dram_engine.h"
#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Reads a DRAMsim3 trace. Blank lines and lines starting with '#' are skipped. A line that does
/// not parse, or an address at or beyond `capacity`, throws InputError naming `name:line`.
class TraceReader : public DramRequestSource {
 public:
  TraceReader(std::istream& in, std::string name, std::uint64_t capacity);
  Status next(DramRequest& request) override;
  /// Requests read so far.
  std::uint64_t requests() const { return requests_; }

 private:
  std::istream& in_;
  std::string name_;
  std::uint64_t capacity_;
  std::uint64_t line_ = 0, requests_ = 0;
  std::string text_;
};

/// `sequential`: one read stream; `interleaved`: two read streams (at 0 and half the capacity,
/// one bank at different rows) taking turns; `read_write`: a read stream and a write stream
/// taking turns; `random`: reads of uniformly random bursts; `strided`: reads `stride` bytes
/// apart (by default the distance between two rows of one bank, so every read is a row
/// conflict); `bank_groups`: one read stream per bank, request i to bank group i mod G (so
/// consecutive requests alternate groups), each stream walking its bank's rows.
enum class TracePattern { Sequential, Interleaved, ReadWrite, Random, Strided, BankGroups };

/// Parses a pattern name; InputError(where, ...) lists the valid names.
TracePattern parse_trace_pattern(const std::string& text, const std::string& where);

struct TraceOptions {
  static constexpr std::uint64_t kMaxRequests = 100000000;  ///< 10^8: a 2.5 GB trace file
  std::uint64_t requests = 100000;
  std::uint64_t interval = 1;  ///< cycles between consecutive requests' issue cycles
  std::uint64_t stride = 0;    ///< strided: bytes between requests; 0 = one row of one bank
  std::uint64_t seed = 1;      ///< random: the generator's seed
};

/// Generates a pattern's requests for a device (addresses wrap at its capacity). Throws
/// InputError (naming --requests or --interval) for more than kMaxRequests requests or a last
/// request beyond DramEngine::kMaxCycle.
class PatternSource : public DramRequestSource {
 public:
  PatternSource(TracePattern pattern, const DramConfig& config, const TraceOptions& options);
  Status next(DramRequest& request) override;
  /// The stride in bytes the strided pattern uses.
  std::uint64_t stride() const { return stride_; }

 private:
  std::uint64_t bank_groups_address(std::uint64_t i) const;

  TracePattern pattern_;
  TraceOptions options_;
  std::uint64_t capacity_, burst_bytes_, bursts_, stride_;  // bursts_: the bursts the capacity holds
  std::uint64_t index_ = 0;
  std::uint64_t strided_ = 0;  // the strided pattern's next address
  std::mt19937_64 random_;
  AddressMapper mapper_;
  std::uint64_t banks_, bank_groups_, rows_, bursts_per_row_;  // bank_groups: the device's shape
};

/// Writes every request of `source` as a DRAMsim3 trace line; returns how many.
std::uint64_t write_trace(DramRequestSource& source, std::ostream& out);

}  // namespace npusim::models
