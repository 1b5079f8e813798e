#include "models/dram/address_mapping.h"

#include <string_view>

#include "sim/core/errors.h"

namespace npusim::models {
namespace {

std::string where_of(const DramConfig& c, const std::string& key) {
  return "dram (" + c.preset + ")." + key;
}

/// log2 of a count that must be a positive power of two; the error names the config key.
unsigned log2_exact(std::uint64_t value, const DramConfig& c, const std::string& key) {
  if (value == 0 || (value & (value - 1)) != 0)
    throw InputError(where_of(c, key), "expected a power of two, found " + std::to_string(value));
  unsigned bits = 0;
  while ((std::uint64_t{1} << bits) != value) ++bits;
  return bits;
}

}  // namespace

AddressMapper::AddressMapper(const DramConfig& c) : xor_hash_(c.xor_bank_hash) {
  const std::uint64_t burst_bytes = c.bytes_per_burst();
  if (burst_bytes == 0 || c.row_bytes() % burst_bytes != 0)
    throw InputError(where_of(c, "columns"), "expected a row of whole bursts: row " + std::to_string(c.row_bytes()) +
                                                 " B, burst " + std::to_string(burst_bytes) + " B");
  offset_bits_ = log2_exact(burst_bytes, c, "bus_width x burst_length / 8");

  struct Spec {
    std::string_view name;
    Field field;
    unsigned width;
  };
  const std::array<Spec, kFields> specs = {{
      {"ro", Field::Row, log2_exact(c.rows, c, "rows")},
      {"ch", Field::Channel, log2_exact(c.channels, c, "channels")},
      {"ra", Field::Rank, log2_exact(c.ranks, c, "ranks")},
      {"bg", Field::BankGroup, log2_exact(c.bank_groups, c, "bank_groups")},
      {"ba", Field::Bank, log2_exact(c.banks_per_group, c, "banks_per_group")},
      {"co", Field::Column, log2_exact(c.row_bytes() / burst_bytes, c, "columns / burst_length")},
  }};

  const std::string& m = c.mapping;
  auto bad = [&](const std::string& why) {
    return InputError(where_of(c, "mapping"),
                      "expected each of ro ch ra bg ba co exactly once, most significant "
                      "first (e.g. 'rochrabacobg'), found '" +
                          m + "': " + why);
  };
  if (m.size() % 2 != 0) throw bad("odd length " + std::to_string(m.size()));

  // Walk least significant first so each field's shift is the sum of the widths below it.
  std::array<bool, kFields> seen{};
  unsigned shift = offset_bits_;
  for (std::size_t i = m.size() / 2; i-- > 0;) {
    const std::string_view token = std::string_view(m).substr(2 * i, 2);
    const Spec* spec = nullptr;
    for (const Spec& s : specs)
      if (s.name == token) spec = &s;
    if (!spec) throw bad("unknown field '" + std::string(token) + "'");
    const auto index = static_cast<std::size_t>(spec->field);
    if (seen[index]) throw bad("field '" + std::string(token) + "' appears twice");
    seen[index] = true;
    slots_[index] = {shift, (std::uint64_t{1} << spec->width) - 1};
    if (spec->field == Field::BankGroup) bg_bits_ = spec->width;
    shift += spec->width;
  }
  std::string missing;
  for (const Spec& s : specs)
    if (!seen[static_cast<std::size_t>(s.field)])
      missing += (missing.empty() ? "'" : ", '") + std::string(s.name) + "'";
  if (!missing.empty()) throw bad("missing " + missing);
}

std::uint64_t AddressMapper::encode(const DramAddress& coordinates) const {
  DramAddress a = coordinates;
  if (xor_hash_) hash(a);
  auto place = [&](std::uint32_t value, Field f) {
    const Slot& s = slots_[static_cast<std::size_t>(f)];
    return (std::uint64_t{value} & s.mask) << s.shift;
  };
  return place(a.channel, Field::Channel) | place(a.rank, Field::Rank) | place(a.bank_group, Field::BankGroup) |
         place(a.bank, Field::Bank) | place(a.row, Field::Row) | place(a.column, Field::Column);
}

}  // namespace npusim::models
