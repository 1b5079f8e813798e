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

/// `sequential`: one read stream; `interleaved`: two read streams (at 0 and half the capacity)
/// taking turns; `read_write`: a read stream and a write stream taking turns; `random`: reads of
/// uniformly random bursts; `strided`: reads `stride` bytes apart (by default the distance
/// between two rows of one bank, so every read is a row conflict).
enum class TracePattern { Sequential, Interleaved, ReadWrite, Random, Strided };

/// Parses a pattern name; InputError(where, ...) lists the valid names.
TracePattern parse_trace_pattern(const std::string& text, const std::string& where);

struct TraceOptions {
  std::uint64_t requests = 100000;
  std::uint64_t interval = 1;  ///< cycles between consecutive requests' issue cycles
  std::uint64_t stride = 0;    ///< strided: bytes between requests; 0 = one row of one bank
  std::uint64_t seed = 1;      ///< random: the generator's seed
};

/// Generates a pattern's requests for a device (addresses wrap at its capacity).
class PatternSource : public DramRequestSource {
 public:
  PatternSource(TracePattern pattern, const DramConfig& config, const TraceOptions& options);
  Status next(DramRequest& request) override;
  /// The stride in bytes the strided pattern uses.
  std::uint64_t stride() const { return stride_; }

 private:
  TracePattern pattern_;
  TraceOptions options_;
  std::uint64_t capacity_, burst_bytes_, stride_;
  std::uint64_t index_ = 0;
  std::mt19937_64 random_;
};

/// Writes every request of `source` as a DRAMsim3 trace line; returns how many.
std::uint64_t write_trace(DramRequestSource& source, std::ostream& out);

}  // namespace npusim::models
