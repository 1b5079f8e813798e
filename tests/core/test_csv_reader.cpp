// The CSV reader of npusim validate's measured figures (sim/core/csv_reader.h): RFC 4180 quoting,
// comments, line ends, and the place of each error.
#include <gtest/gtest.h>

#include "sim/core/csv_reader.h"
#include "sim/core/errors.h"

using namespace npusim;

namespace {

std::string error_of(const std::string& text) {
  try {
    parse_csv(text, "m.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ValidationCsvReader, QuotedFieldsHoldCommasDoubledQuotesAndLineBreaks) {
  const auto r = parse_csv("a,b,c\n\"x, y\",\"say \"\"hi\"\"\",\"two\nlines\"\nplain,,last\n", "m.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].fields, (std::vector<std::string>{"a", "b", "c"}));
  // A comma inside quotes is text; "" inside quotes is one quote; a line break inside quotes is text.
  EXPECT_EQ(r[1].fields, (std::vector<std::string>{"x, y", "say \"hi\"", "two\nlines"}));
  EXPECT_EQ(r[1].line, 2u);
  // The record after a quoted line break starts on line 4, and an empty field stays empty.
  EXPECT_EQ(r[2].fields, (std::vector<std::string>{"plain", "", "last"}));
  EXPECT_EQ(r[2].line, 4u);
}

TEST(ValidationCsvReader, CommentsBlankLinesAndCrLfAreSkipped) {
  const auto r = parse_csv(
      "# measured on the board\r\nkind,workload\r\n\r\n   \n# a note, with a comma\nrun,small_cnn\r\n"
      "run,\"#not a comment\"",
      "m.csv");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].line, 2u);
  EXPECT_EQ(r[1].fields, (std::vector<std::string>{"run", "small_cnn"}));  // no '\r' left on the last field
  EXPECT_EQ(r[1].line, 6u);
  // A '#' inside a quoted field is text, and a last line without a line end is a record.
  EXPECT_EQ(r[2].fields, (std::vector<std::string>{"run", "#not a comment"}));
}

TEST(ValidationCsvReader, SpacesAroundQuotesAreDroppedAndBareFieldsKept) {
  const auto r = parse_csv("  \"a\" , b \n", "m.csv");
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].fields, (std::vector<std::string>{"a", " b "}));
}

TEST(ValidationCsvReader, BrokenQuotingIsAnErrorWithItsLine) {
  EXPECT_NE(error_of("a,b\n\"open,b\nc,d\n").find("m.csv:2: expected a closing double quote"), std::string::npos)
      << error_of("a,b\n\"open,b\nc,d\n");
  EXPECT_NE(error_of("a,b\n\"x\"y,b\n")
                .find("m.csv:2: expected a comma or the end of the line after a quoted field, "
                      "found 'y'"),
            std::string::npos);
  EXPECT_NE(error_of("a,b\nx\"y,b\n").find("m.csv:2: expected a double quote only around a whole field"),
            std::string::npos);
  EXPECT_NE(error_of("a,\xff\n").find("m.csv:1: expected UTF-8 text"), std::string::npos) << error_of("a,\xff\n");
}

TEST(ValidationCsvReader, EmptyTextHasNoRecords) {
  EXPECT_TRUE(parse_csv("", "m.csv").empty());
  EXPECT_TRUE(parse_csv("# only a comment\n\n", "m.csv").empty());
}
