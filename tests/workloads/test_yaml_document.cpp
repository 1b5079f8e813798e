// The YAML document tree every YAML input goes through (workloads/yaml_document.h): what it
// keeps (kinds, text, lines, aliases as shared nodes), what it refuses, and that scalars convert
// as yaml-cpp converts them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/core/errors.h"
#include "workloads/yaml_document.h"

namespace npusim::workloads {
namespace {

YamlNode parse(const std::string& text) {
  return parse_yaml_document(text, "t.yaml");
}

std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(YamlDocument, KindsTextAndLines) {
  const YamlNode root = parse(
      "# a comment on line 1\n"
      "name: t\n"                // line 2
      "list:\n"                  // 3
      "  - 1\n"                  // 4
      "  - {a: x, b: [2, 3]}\n"  // 5
      "empty:\n"                 // 6
      "quoted: \"~\"\n"          // 7
      "tilde: ~\n"               // 8
      "nested:\n"                // 9
      "  deeper: yes\n");        // 10
  ASSERT_TRUE(root.IsMap());
  EXPECT_EQ(root.size(), 6u);
  EXPECT_EQ(root.line(), 2);  // a block mapping starts at its first key
  EXPECT_EQ(root["name"].Scalar(), "t");
  EXPECT_EQ(root["name"].line(), 2);
  const YamlNode list = root["list"];
  ASSERT_TRUE(list.IsSequence());
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].Scalar(), "1");
  EXPECT_EQ(list[0].line(), 4);
  EXPECT_TRUE(list[1].IsMap());
  EXPECT_EQ(list[1].line(), 5);
  EXPECT_EQ(list[1]["b"][1].Scalar(), "3");
  EXPECT_FALSE(list[2].IsDefined());  // past the end
  EXPECT_EQ(list[2].line(), 0);
  // Unquoted nothing and ~ are null; a quoted "~" is the text ~.
  EXPECT_TRUE(root["empty"].IsNull());
  EXPECT_FALSE(root["empty"].IsScalar());
  EXPECT_TRUE(root["tilde"].IsNull());
  EXPECT_TRUE(root["quoted"].IsScalar());
  EXPECT_EQ(root["quoted"].Scalar(), "~");
  EXPECT_EQ(root["nested"]["deeper"].line(), 10);
  // A missing key is undefined: every Is...() is false, and it converts to false.
  const YamlNode missing = root["nope"];
  EXPECT_FALSE(missing.IsDefined() || missing.IsNull() || missing.IsScalar() || missing.IsMap() || missing);
  EXPECT_FALSE(root["name"]["x"].IsDefined());  // a key of a scalar
}

TEST(YamlDocument, IteratesPairsInFileOrder) {
  const YamlNode root = parse("b: 1\na: 2\nc: [x, y]\n");
  std::vector<std::string> keys;
  for (const auto& kv : root) keys.push_back(kv.first.Scalar() + "=" + std::to_string(kv.second.line()));
  EXPECT_EQ(keys, (std::vector<std::string>{"b=1", "a=2", "c=3"}));
  std::string items;
  for (const auto& item : root["c"]) items += item.Scalar();
  EXPECT_EQ(items, "xy");
}

TEST(YamlDocument, AliasesAreTheAnchoredNode) {
  const YamlNode root = parse("base: &b {rows: 8, cols: 4}\ncopy: *b\nlist: [*b, *b]\n");
  EXPECT_EQ(root["copy"]["cols"].Scalar(), "4");
  EXPECT_EQ(root["list"][1]["rows"].Scalar(), "8");
  EXPECT_EQ(root["copy"].line(), 1);  // the node itself, where it was written
  // An anchor defined again names the later node from there on.
  const YamlNode again = parse("a: &x 1\nb: *x\nc: &x 2\nd: *x\n");
  EXPECT_EQ(again["b"].Scalar(), "1");
  EXPECT_EQ(again["d"].Scalar(), "2");
}

TEST(YamlDocument, RefusesWhatReadersCannotUse) {
  EXPECT_EQ(parse_error("a: 1\nb: *nope\n"), "t.yaml:2: expected an anchor defined above for alias *nope, found none");
  // A node's alias inside itself would be a cycle: its anchor is not defined until it ends.
  EXPECT_EQ(parse_error("a: &x [1, *x]\n"), "t.yaml:1: expected an anchor defined above for alias *x, found none");
  EXPECT_EQ(parse_error("a: 1\n? [x]\n: 2\n"), "t.yaml:2: expected a plain key, found a list or mapping");
  EXPECT_EQ(parse_error("a: [1, 2\n"),
            "t.yaml:2: expected valid YAML, found a syntax error: did not find expected ',' or ']' (while parsing a "
            "flow sequence that starts on line 1)");
  EXPECT_EQ(parse_error("a: 1\n\xff: 2\n"), "t.yaml:2: expected UTF-8 text, found byte 0xFF at column 1");
}

TEST(YamlDocument, DuplicateKeysNameTheFirstRepeatInFileOrder) {
  // 'b' repeats on line 4 before 'a' repeats on line 5: line 4 is reported, with b's first line.
  EXPECT_EQ(parse_error("a: 1\nb: 2\nc: 3\nb: 4\na: 5\nb: 6\n"),
            "t.yaml:4: expected each key once in a mapping, found 'b' again (first at line 2)");
  EXPECT_EQ(parse_error("outer:\n  k: 1\n  k: 2\n"),
            "t.yaml:3: expected each key once in a mapping, found 'k' again (first at line 2)");
  EXPECT_TRUE(parse("a: {k: 1}\nb: {k: 2}\n").IsMap());  // the same key in two mappings is fine
}

TEST(YamlDocument, NestingIsCountedThroughAliases) {
  // 64 levels are allowed, 65 are not.
  EXPECT_TRUE(parse(std::string(64, '[') + std::string(64, ']')).IsSequence());
  EXPECT_EQ(parse_error(std::string(65, '[') + std::string(65, ']')),
            "t.yaml:1: expected nesting at most 64 levels deep, found more");
  // An anchored node 60 levels high, used 10 levels down: 69 levels once the alias stands there.
  const std::string tall = std::string(60, '[') + std::string(60, ']');
  EXPECT_TRUE(parse("a: &t " + tall + "\nb: *t\n").IsMap());  // 61 deep under the root map
  EXPECT_EQ(parse_error("a: &t " + tall + "\nb: [[[[[[[[[*t]]]]]]]]]\n"),
            "t.yaml:2: expected nesting at most 64 levels deep, found more");
}

TEST(YamlDocument, AliasExpansionIsBoundedByTheFileSize) {
  // Level k lists level k-1 twice: it stands for 1 + 2 * (level k-1) values: 3, 7, 15, 31, 63.
  // The root map stands for 1 + the sum of its values. A file may stand for its size + 16.
  std::string text = "l0: &l0 [x, x]\n";
  for (int i = 1; i <= 3; ++i)
    text += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [*l" + std::to_string(i - 1) + ", *l" +
            std::to_string(i - 1) + "]\n";
  ASSERT_EQ(text.size(), 72u);  // levels 0-3: 1 + 3 + 7 + 15 + 31 = 57 values <= 88
  EXPECT_EQ(parse(text)["l3"][0][1][0][1].Scalar(), "x");
  text += "l4: &l4 [*l3, *l3]\n";
  ASSERT_EQ(text.size(), 91u);  // levels 0-4: 57 + 63 = 120 values > 107
  EXPECT_EQ(parse_error(text),
            "t.yaml:1: expected at most 107 values (the file's size), found more: aliases (*name) expand beyond it");
}

TEST(YamlDocument, OnlyTheFirstDocumentAndEmptyIsNull) {
  EXPECT_EQ(parse("a: 1\n---\nb: [\n")["a"].Scalar(), "1");  // the second document is not read
  EXPECT_TRUE(parse("").IsNull());
  EXPECT_TRUE(parse("# only a comment\n").IsNull());
}

TEST(YamlDocument, ScalarsConvertAsYamlCpp) {
  const YamlNode r = parse(
      "dec: 42\nhex: 0x10\noct: 010\nneg: -7\nbad: 4x\nf: 2.5e3\ninf: .inf\n"
      "yes: yes\non: On\nno: n\nword: maybe\nlist: [1]\n");
  std::int64_t i = 0;
  EXPECT_TRUE(decode_integer(r["dec"], i) && i == 42);
  EXPECT_TRUE(decode_integer(r["hex"], i) && i == 16);
  EXPECT_TRUE(decode_integer(r["oct"], i) && i == 8);
  EXPECT_TRUE(decode_integer(r["neg"], i) && i == -7);
  EXPECT_FALSE(decode_integer(r["bad"], i));
  EXPECT_FALSE(decode_integer(r["list"], i));
  EXPECT_FALSE(decode_integer(r["missing"], i));
  double d = 0;
  EXPECT_TRUE(decode_real(r["f"], d) && d == 2500.0);
  EXPECT_TRUE(decode_real(r["inf"], d) && std::isinf(d));
  bool b = false;
  EXPECT_TRUE(decode_bool(r["yes"], b) && b);
  EXPECT_TRUE(decode_bool(r["on"], b) && b);
  EXPECT_TRUE(decode_bool(r["no"], b) && !b);
  EXPECT_FALSE(decode_bool(r["word"], b));
}

}  // namespace
}  // namespace npusim::workloads
