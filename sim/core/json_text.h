#pragma once
// JSON text npusim writes, byte for byte what nlohmann's dump() writes, in a fraction of its
// instructions: dump() writes through a virtual call per character and decodes every string's
// UTF-8, which made it most of the cost of writing a run's output folder (ResNet-50: the
// summary, the roofline and the schedule, ~0.5 MB of text, over 20 M instructions). A run's largest
// documents go both into their own files, indented, and into report.html, compact: both texts
// are written in one pass. Parsing is sim/core/json_input.h.
#include <string>

#include <nlohmann/json.hpp>

namespace npusim {

/// `j.dump(indent)`: objects in key order, doubles in their shortest round-trip form (NaN and
/// infinities as null), strings escaped as dump() escapes them (and invalid UTF-8 thrown as
/// dump() throws it). Throws std::invalid_argument for binary or discarded values, which npusim's
/// documents never hold.
std::string dump_json(const nlohmann::json& j, int indent = -1);

/// The text of a JSON output file: `j.dump(2)` and a closing newline.
std::string json_file_text(const nlohmann::json& j);

/// A document's two texts, made in one pass: `file`, the text of its JSON file (`j.dump(2)` and a
/// closing newline), and `compact`, `j.dump()` (report.html inlines the run's documents compact).
struct JsonTexts {
  std::string file, compact;
};
JsonTexts json_texts(const nlohmann::json& j);

}  // namespace npusim
