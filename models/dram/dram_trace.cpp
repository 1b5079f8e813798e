#include "models/dram/dram_trace.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

#include "models/dram/address_mapping.h"
#include "sim/core/errors.h"

namespace npusim::models {
namespace {

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

/// A whole unsigned number in `token` (base 10 or 16), or false.
bool parse_number(const std::string& token, int base, std::uint64_t& value) {
  if (token.empty() || token[0] == '-' || token[0] == '+') return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtoull(token.c_str(), &end, base);
  return errno == 0 && end == token.c_str() + token.size();
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

TraceReader::TraceReader(std::istream& in, std::string name, std::uint64_t capacity)
    : in_(in), name_(std::move(name)), capacity_(capacity) {}

DramRequestSource::Status TraceReader::next(DramRequest& request) {
  while (std::getline(in_, text_)) {
    ++line_;
    std::istringstream fields(text_);
    std::string addr, command, cycle, extra;
    if (!(fields >> addr) || addr[0] == '#') continue;  // blank or comment
    const std::string where = name_ + ":" + std::to_string(line_);
    auto bad = [&](const std::string& why) {
      return InputError(where, "expected '0xADDRESS READ|WRITE CYCLE', found '" + text_ + "' (" + why + ")");
    };
    fields >> command >> cycle;
    if (fields >> extra) throw bad("extra field '" + extra + "'");
    const std::string digits =
        addr.size() > 2 && (addr[1] == 'x' || addr[1] == 'X') && addr[0] == '0' ? addr.substr(2) : addr;
    if (!parse_number(digits, 16, request.addr)) throw bad("address '" + addr + "' is not a hexadecimal number");
    const std::string cmd = upper(command);
    if (cmd != "READ" && cmd != "WRITE") throw bad(command.empty() ? "no command" : "command '" + command + "'");
    if (!parse_number(cycle, 10, request.cycle))
      throw bad(cycle.empty() ? "no cycle" : "cycle '" + cycle + "' is not a whole number");
    if (request.cycle > DramEngine::kMaxCycle)
      throw bad("cycle " + cycle +
                " is beyond the last one a request may arrive at, 2^62 = " + std::to_string(DramEngine::kMaxCycle));
    if (request.addr >= capacity_)
      throw InputError(where, "expected an address below the device capacity " + std::to_string(capacity_) + " B (" +
                                  hex(capacity_) + "), found " + addr);
    request.is_write = cmd == "WRITE";
    ++requests_;
    return Status::Ready;
  }
  return Status::Done;
}

TracePattern parse_trace_pattern(const std::string& text, const std::string& where) {
  static const std::vector<std::pair<std::string, TracePattern>> names = {
      {"sequential", TracePattern::Sequential}, {"interleaved", TracePattern::Interleaved},
      {"read_write", TracePattern::ReadWrite},  {"random", TracePattern::Random},
      {"strided", TracePattern::Strided},       {"bank_groups", TracePattern::BankGroups}};
  std::string valid;
  for (const auto& [n, p] : names) {
    if (n == text) return p;
    valid += (valid.empty() ? "" : ", ") + n;
  }
  throw InputError(where, "expected one of " + valid + ", found '" + text + "'");
}

PatternSource::PatternSource(TracePattern pattern, const DramConfig& config, const TraceOptions& options)
    : pattern_(pattern),
      options_(options),
      capacity_(config.capacity_bytes()),
      burst_bytes_(config.bytes_per_burst()),
      bursts_(capacity_ / burst_bytes_),
      stride_(options.stride),
      random_(options.seed),
      mapper_(config),
      banks_(config.banks()),
      bank_groups_(config.bank_groups),
      rows_(config.rows),
      bursts_per_row_(config.columns / config.burst_length) {
  if (options_.requests == 0 || options_.requests > TraceOptions::kMaxRequests)
    throw InputError("--requests", "expected 1 to " + std::to_string(TraceOptions::kMaxRequests) + " requests, found " +
                                       std::to_string(options_.requests));
  if (options_.requests > 1 && options_.interval > DramEngine::kMaxCycle / (options_.requests - 1))
    throw InputError("--interval", "expected the last request's cycle (requests - 1) x interval to be at most 2^62 = " +
                                       std::to_string(DramEngine::kMaxCycle) + ", found " +
                                       std::to_string(options_.requests - 1) + " x " +
                                       std::to_string(options_.interval));
  if (stride_ == 0) {  // one row further in the same bank: the row field's lowest bit
    DramAddress next_row;
    next_row.row = 1;
    stride_ = mapper_.encode(next_row) - mapper_.encode(DramAddress{});
  }
  stride_ %= capacity_;  // the same addresses, and no overflow when they advance
}

std::uint64_t PatternSource::bank_groups_address(std::uint64_t i) const {
  // Stream s = i mod banks is bank group s mod G, bank s / G of it; its k-th request is burst k
  // of the bank's rows in order.
  const std::uint64_t s = i % banks_, k = i / banks_;
  DramAddress a;
  a.bank_group = static_cast<std::uint32_t>(s % bank_groups_);
  a.bank = static_cast<std::uint32_t>(s / bank_groups_);
  a.column = static_cast<std::uint32_t>(k % bursts_per_row_);
  a.row = static_cast<std::uint32_t>(k / bursts_per_row_ % rows_);
  return mapper_.encode(a);
}

namespace {
/// v mod n, by a mask when n is a power of two: a 64-bit division per request was a tenth of
/// the engine's time on a stream.
std::uint64_t wrap(std::uint64_t v, std::uint64_t n) {
  return (n & (n - 1)) == 0 ? v & (n - 1) : v % n;
}
}  // namespace

DramRequestSource::Status PatternSource::next(DramRequest& r) {
  if (index_ >= options_.requests) return Status::Done;
  const std::uint64_t i = index_++;
  const std::uint64_t half = capacity_ / 2;
  r.cycle = i * options_.interval;
  r.is_write = false;
  switch (pattern_) {
    case TracePattern::Sequential:
      r.addr = wrap(i * burst_bytes_, capacity_);
      break;
    case TracePattern::Interleaved:
    case TracePattern::ReadWrite:
      // Even requests walk the lower half, odd ones the upper half.
      r.addr = (i % 2) * half + wrap((i / 2) * burst_bytes_, half);
      r.is_write = pattern_ == TracePattern::ReadWrite && i % 2 == 1;
      break;
    case TracePattern::Random:
      r.addr = wrap(random_(), bursts_) * burst_bytes_;
      break;
    case TracePattern::Strided:
      r.addr = strided_;
      strided_ = strided_ >= capacity_ - stride_ ? strided_ - (capacity_ - stride_) : strided_ + stride_;
      break;
    case TracePattern::BankGroups:
      r.addr = bank_groups_address(i);
      break;
  }
  return Status::Ready;
}

std::uint64_t write_trace(DramRequestSource& source, std::ostream& out) {
  DramRequest r;
  std::uint64_t n = 0;
  while (source.next(r) == DramRequestSource::Status::Ready) {
    out << hex(r.addr) << (r.is_write ? " WRITE " : " READ ") << r.cycle << '\n';
    ++n;
  }
  return n;
}

}  // namespace npusim::models
