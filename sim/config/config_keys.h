#pragma once
// Every key of a hardware config, declared once (as gem5's and Ramulator 2's parameters are):
// its dotted name, kind, valid range, unit, default, where to_json writes it and what it means.
// The loader takes each key's kind and range from here, `npusim keys` prints the table,
// docs/config.md's "Keys" and "Valid ranges" tables are generated from it
// (scripts/update-config-doc.sh, through `npusim keys --doc`), /api/options serves it to the live page, and tests check
// that the loader, to_json and web/src/app.js agree with it (tests/config/test_config_keys.cpp).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace npusim::config {

/// What a key's value is, which decides its parser.
enum class KeyKind {
  Text,           // any text (a name)
  Count,          // a whole number in [min, max]
  Size,           // bytes with a unit ("256 KiB"), in [min, max] bytes
  Frequency,      // "800 MHz", in [min, max] Hz
  Enum,           // one of `values`
  Bool,           // true or false
  DataRate,       // "4266 MT/s", at most max transfers/s per pin
  Cost,           // cycles per element per lane, in (0, max]
  Time,           // DRAM timing: "18 ns" or "29 nCK"
  Electrical,     // a voltage ("1.1 V") or a current ("45 mA")
  Energy,         // "0.2 pJ"
  EnergyPerByte,  // "1.5 pJ/B"
  Power,          // "50 mW"
  Length,         // a technology node in nm, in [min, max]
  Duration,       // a time with its unit ("20 us"), in [min, max] seconds
  Ratio,          // a plain number, in (min, max] (min 0) or [min, max]
  Bandwidth,      // bytes per second with a unit ("8 GB/s"), in (0, max]
};

/// One key, or one key pattern: a pattern's last segments are placeholders in angle brackets
/// ("npu.vector_unit.cost.<kind>"), and the loader reads every key under its prefix.
struct ConfigKey {
  std::string name;
  KeyKind kind = KeyKind::Text;
  double min = 0, max = 0;          // counts, sizes (B), frequencies (Hz), costs, lengths (nm)
  std::vector<std::string> values;  // an Enum's or a Bool's names
  std::string unit;                 // unit text ("count", "size", "cycles/op/lane", ...)
  std::string default_text;         // as docs/config.md shows it; "preset" for npu.dram.*
  std::string json;                 // its path in to_json's output ("mac_array/rows")
  std::string description;          // one line, markdown (docs/config.md's "meaning")
  std::string range_note;           // more of the range ("Valid ranges"), empty when none
  std::string doc;                  // the docs page that explains it

  bool pattern() const { return name.find('<') != std::string::npos; }
  /// The dotted prefix before a pattern's first placeholder ("npu.vector_unit.cost").
  std::string prefix() const;
  /// The valid range as docs/config.md's "Valid ranges" states it; empty when the key has none.
  std::string range_text() const;
};

/// Every key the loader accepts, in docs/config.md's order.
const std::vector<ConfigKey>& config_keys();

/// The entry named `name` (a key, or a pattern by its full name). A name without an entry is a
/// programming error (std::logic_error): every key the loader reads is declared in the table.
const ConfigKey& config_key(const std::string& name);

/// The pattern whose prefix is `prefix` ("npu.dram.timing"); std::logic_error when none.
const ConfigKey& config_pattern(const std::string& prefix);

/// Fields of to_json's output that no key sets (derived figures and provenance), each with why.
const std::vector<std::pair<std::string, std::string>>& derived_json_fields();

/// The table as JSON (`npusim keys --json`, /api/options "keys").
nlohmann::json config_keys_json();

/// docs/config.md's "Keys" table and its "Valid ranges" table, as markdown.
std::string config_keys_markdown();
std::string config_ranges_markdown();

/// The command that rewrites docs/config.md's generated tables.
inline constexpr const char* kRegenerateDoc = "scripts/update-config-doc.sh";

/// `doc` (docs/config.md's text, read from `where`) with the two tables between their
/// "<!-- BEGIN generated keys table ... -->" and "<!-- END generated keys table -->" lines (and
/// the same for "ranges") rewritten from the key table; InputError when a marker is missing.
std::string with_generated_tables(const std::string& doc, const std::string& where);

/// A plain-text listing for the terminal (`npusim keys`).
std::string config_keys_text();

}  // namespace npusim::config
