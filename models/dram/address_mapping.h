#pragma once
// Physical address -> DRAM coordinates, as a DRAMsim3-style mapping string. Plain C++ (no SystemC)
// so the timing engine and its tests need no simulation kernel.
#include <array>
#include <cstdint>
#include <string>

#include "sim/core/hardware_config.h"

namespace npusim::models {

/// Where one burst lives in the DRAM. `bank` is the index inside its bank group; `column` is the
/// burst index inside the row (0 .. row_bytes / bytes_per_burst - 1), not a device column address.
struct DramAddress {
  std::uint32_t channel = 0;
  std::uint32_t rank = 0;
  std::uint32_t bank_group = 0;
  std::uint32_t bank = 0;
  std::uint32_t row = 0;
  std::uint32_t column = 0;

  bool operator==(const DramAddress& o) const {
    return channel == o.channel && rank == o.rank && bank_group == o.bank_group && bank == o.bank && row == o.row &&
           column == o.column;
  }
};

/// Splits a byte address into DRAM fields following `DramConfig::mapping`, which lists the fields
/// most to least significant as two-letter names: `ro` row, `ch` channel, `ra` rank, `bg` bank
/// group, `ba` bank, `co` column (e.g. "rochrabacobg"). Below the fields sit the byte-offset bits
/// of one burst, which are ignored. Field widths are log2 of the config's counts; a count of 1
/// gives a zero-width field. With `xor_bank_hash` the bank group is XORed with the lowest row
/// bits and the bank with the row bits above those, so rows of one bank spread over all banks.
class AddressMapper {
 public:
  /// Throws InputError naming `mapping` and the string for an unknown, missing or repeated field,
  /// and naming the field for a count that is zero or not a power of two.
  explicit AddressMapper(const DramConfig& config);

  /// The burst's coordinates. Bits above the mapped fields are ignored (the caller checks capacity).
  DramAddress decode(std::uint64_t addr) const {
    DramAddress a;
    a.channel = field(addr, Field::Channel);
    a.rank = field(addr, Field::Rank);
    a.bank_group = field(addr, Field::BankGroup);
    a.bank = field(addr, Field::Bank);
    a.row = field(addr, Field::Row);
    a.column = field(addr, Field::Column);
    if (xor_hash_) hash(a);
    return a;
  }

  /// The first byte of the burst at `a` (the inverse of decode for in-range coordinates).
  std::uint64_t encode(const DramAddress& a) const;

  /// Bits of the byte offset inside one burst (log2 of bytes_per_burst).
  unsigned offset_bits() const { return offset_bits_; }
  /// The address bits that select only the column or the byte: two in-range addresses that
  /// differ in no other bit decode to the same channel, rank, bank group, bank and row.
  std::uint64_t column_bits() const {
    const Slot& c = slots_[static_cast<std::size_t>(Field::Column)];
    return c.mask << c.shift | ((std::uint64_t{1} << offset_bits_) - 1);
  }

 private:
  enum class Field { Row, Channel, Rank, BankGroup, Bank, Column };
  static constexpr std::size_t kFields = 6;

  struct Slot {
    unsigned shift = 0;
    std::uint64_t mask = 0;  // (1 << width) - 1
  };

  /// XOR is its own inverse, so decode and encode share it.
  void hash(DramAddress& a) const {
    const Slot& bg = slots_[static_cast<std::size_t>(Field::BankGroup)];
    const Slot& ba = slots_[static_cast<std::size_t>(Field::Bank)];
    a.bank_group ^= static_cast<std::uint32_t>(a.row & bg.mask);
    a.bank ^= static_cast<std::uint32_t>((a.row >> bg_bits_) & ba.mask);
  }

  std::uint32_t field(std::uint64_t addr, Field f) const {
    const Slot& s = slots_[static_cast<std::size_t>(f)];
    return static_cast<std::uint32_t>((addr >> s.shift) & s.mask);
  }

  std::array<Slot, kFields> slots_{};
  unsigned offset_bits_ = 0;
  unsigned bg_bits_ = 0;
  bool xor_hash_ = false;
};

}  // namespace npusim::models
