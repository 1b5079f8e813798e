// The one JSON input parser (sim/core/json_input.h): a key written twice in one object is refused
// with the file, the line of its second spelling, the object's path and the key; every other
// document reads as nlohmann reads it.
#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/core/json_input.h"

using namespace npusim;

namespace {

std::string error_of(const std::string& text, const std::string& source = "config.json") {
  try {
    parse_json_input(text, source, "a Hugging Face config.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JsonInput, AKeyWrittenTwiceIsRefusedWithItsLineAndPath) {
  // A config.json with hidden_size on lines 2 and 4: the second spelling's line is named.
  EXPECT_EQ(error_of("{\n  \"hidden_size\": 2048,\n  \"num_hidden_layers\": 16,\n  \"hidden_size\": 4096\n}\n"),
            "config.json:4: duplicate key 'hidden_size' (JSON would keep only the last value; write each key once)");
  // In a nested object, the path in the document's own terms: groups[1].tiles.
  const std::string schedule =
      "{\"groups\": [\n"
      "  {\"ops\": [\"a\"]},\n"
      "  {\"ops\": [\"b\"], \"tiles\": {\"b\": {\"rows\": 4},\n"
      "                              \"b\": {\"rows\": 8}}}\n"
      "]}";
  EXPECT_EQ(error_of(schedule, "s.json"),
            "s.json:4: groups[1].tiles: duplicate key 'b' (JSON would keep only the last value; write each key once)");
  // A key spelled with an escape is the same key JSON reads ("\u0061" is "a").
  EXPECT_EQ(error_of("{\"a\": 1, \"\\u0061\": 2}"),
            "config.json:1: duplicate key 'a' (JSON would keep only the last value; write each key once)");
  // Beyond 32 keys the look-up changes; the 40th key repeating the 3rd is still found.
  std::string many = "{";
  for (int i = 0; i < 39; ++i) many += "\"k" + std::to_string(i) + "\": " + std::to_string(i) + ",";
  EXPECT_EQ(error_of(many + "\"k2\": 0}"),
            "config.json:1: duplicate key 'k2' (JSON would keep only the last value; write each key once)");
}

TEST(JsonInput, TheSameKeyInDifferentObjectsAndStringsThatLookLikeKeysAreFine) {
  // "name" in two sibling objects, a value equal to a key, braces and quotes inside strings.
  const std::string text =
      "{\"a\": {\"name\": 1}, \"b\": {\"name\": 2}, \"c\": \"a\", \"d\": [\"a\", {\"a\": \"{\\\"a\\\": 1}\"}],"
      " \"e\": [{\"x\": 1}, {\"x\": 2}]}";
  EXPECT_EQ(error_of(text), "");
  const nlohmann::json doc = parse_json_input(text, "t.json", "a test document");
  EXPECT_EQ(doc.at("b").at("name"), 2);
  EXPECT_EQ(doc.at("d").at(1).at("a"), "{\"a\": 1}");
}

TEST(JsonInput, SyntaxErrorsComeBeforeDuplicates) {
  // Invalid JSON is reported as invalid, whatever keys it repeats.
  const std::string e = error_of("{\"a\": 1, \"a\": ]}\n");
  EXPECT_NE(e.find("expected a Hugging Face config.json, found invalid JSON"), std::string::npos) << e;
}

TEST(JsonInput, ANulByteIsRefusedWhereverItIs) {
  // The parser would stop at the NUL and read "2" as the whole document; the bytes after it
  // (here a key with a broken escape) must not reach any later scan.
  const std::string text("2\0{\"at\\ueur", 11);
  EXPECT_EQ(error_of(text), "config.json:1: expected a Hugging Face config.json, found a NUL byte at byte 1");
  EXPECT_EQ(error_of(std::string("{\"a\": \"x\0y\"}", 12)),
            "config.json:1: expected a Hugging Face config.json, found a NUL byte at byte 8");
}
