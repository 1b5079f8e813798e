#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "sim/core/json_text.h"

using namespace npusim;
using nlohmann::json;

namespace {

/// Values whose text is awkward: shortest round-trip doubles, exponents, negative zero, NaN and
/// infinity (dump() writes null), integers of both signs and both extremes, escapes, control
/// characters, multi-byte UTF-8, empty containers and keys that need escaping.
json awkward() {
  return {{"doubles", {0.1, 1e-7, 1e21, -0.0, 1.0, -2.5, 123456789.125, 5e-324, 1.7976931348623157e308, 1e15, 1e16}},
          {"not finite", {std::nan(""), std::numeric_limits<double>::infinity()}},
          {"integers", {0, -1, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::uint64_t>::max()}},
          {"strings",
           {"", " ", "tab\there", "line\nbreak", "quote \" and \\ backslash", "</script>", "\x01 control",
            "\x7f delete", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"}},
          {"nested",
           {{"empty object", json::object()},
            {"empty array", json::array()},
            {"null", nullptr},
            {"bools", {true, false}},
            {"deep", {{{"x", {{"y", {1, {2, {3}}}}}}}}}}},
          {"key with \"quotes\" and spaces ", 1},
          {"caf\xc3\xa9", "key in UTF-8"}};
}

}  // namespace

TEST(JsonText, DumpWritesNumbersAsTheLibrary) {
  // Written by hand: what dump() writes for these.
  EXPECT_EQ(
      dump_json(json::array({0.1, 1e-7, 1e21, -0.0, 1.0, std::nan(""), -std::numeric_limits<double>::infinity()})),
      "[0.1,1e-07,1e+21,-0.0,1.0,null,null]");
  EXPECT_EQ(dump_json(json::array({-1, 18446744073709551615u, 0})), "[-1,18446744073709551615,0]");
}

TEST(JsonText, DumpWritesStringsAsTheLibrary) {
  EXPECT_EQ(dump_json("a \"b\" \\ \n\t\x01 \xc3\xa9"), R"("a \"b\" \\ \n\t\u0001 é")");
  EXPECT_EQ(dump_json({{"b", 1}, {"a", "x y"}}, 2), "{\n  \"a\": \"x y\",\n  \"b\": 1\n}");
}

TEST(JsonText, DumpIsTheLibrarysDumpAtEveryIndent) {
  const json j = awkward();
  for (int indent : {-1, 0, 2, 4}) EXPECT_EQ(dump_json(j, indent), j.dump(indent)) << "indent " << indent;
  for (const json& scalar : {json(nullptr), json(true), json(3), json(-0.5), json("s"), json::object(), json::array()})
    EXPECT_EQ(dump_json(scalar, 2), scalar.dump(2));
}

TEST(JsonText, DumpRefusesWhatTheLibraryRefuses) {
  EXPECT_THROW(dump_json(json("bad \xff byte")), json::type_error);  // invalid UTF-8, as dump()
  EXPECT_THROW(dump_json(json::binary({1, 2})), std::invalid_argument);
}

TEST(JsonText, FileTextIsTheIndentedDumpAndANewline) {
  const json j = {{"b", {1, 2}}, {"a", json::object()}};
  EXPECT_EQ(json_file_text(j), "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2\n  ]\n}\n");
  EXPECT_EQ(json_file_text(awkward()), awkward().dump(2) + "\n");
}

TEST(JsonText, TextsAreTheFileTextAndTheCompactDump) {
  const JsonTexts small = json_texts({{"b", {1, "x y"}}, {"a", json::object()}});
  EXPECT_EQ(small.file, "{\n  \"a\": {},\n  \"b\": [\n    1,\n    \"x y\"\n  ]\n}\n");
  EXPECT_EQ(small.compact, R"({"a":{},"b":[1,"x y"]})");
  const json j = awkward();
  const JsonTexts texts = json_texts(j);
  EXPECT_EQ(texts.file, j.dump(2) + "\n");
  EXPECT_EQ(texts.compact, j.dump());
  const JsonTexts scalar = json_texts(-0.0);
  EXPECT_EQ(scalar.file, "-0.0\n");
  EXPECT_EQ(scalar.compact, "-0.0");
}
