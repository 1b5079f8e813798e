// The run options' table (sim/engine/run_options.h) is well formed, and the docs that list run
// options (docs/run-options.md, docs/serve.md's `llm` keys) are generated from it.
// (tests/cli/test_run_options_table.cpp checks the front ends against it.)
#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/engine/run_options.h"
#include "tests/support/text_support.h"
#include "tests/support/test_paths.h"

namespace npusim::test {
namespace {

using engine::OptionKind;
using engine::RunCommand;

/// "draft_tokens" as the CLI spells it: "--draft-tokens".
std::string flag_of(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return "--" + key;
}

TEST(RunOptions, EachOptionHasOneKeyItsFlagAndADescription) {
  std::set<std::pair<RunCommand, std::string>> seen;
  for (const auto& o : engine::run_options()) {
    SCOPED_TRACE(o.key);
    EXPECT_TRUE(seen.insert({o.command, o.key}).second) << "declared twice";
    EXPECT_EQ(o.flag, flag_of(o.key));  // one naming scheme: the key is the flag with '_' for '-'
    EXPECT_FALSE(o.description.empty());
    EXPECT_FALSE(o.default_text.empty());
    EXPECT_EQ(o.help().find("{values}"), std::string::npos);
    EXPECT_EQ(&engine::run_option(o.command, o.key), &o);
    if (o.kind == OptionKind::Choice) {
      EXPECT_FALSE(o.choices().empty());
    }
    if (o.kind == OptionKind::Integer || o.kind == OptionKind::Number) {
      EXPECT_LT(o.min, o.max);
      EXPECT_FALSE(o.unit.empty());
      EXPECT_LE(o.serve_limit(), o.max);
      EXPECT_GE(o.serve_limit(), o.min);
    }
  }
  EXPECT_THROW(engine::run_option(RunCommand::Llm, "temperature"), std::logic_error);
}

TEST(RunOptions, ValuesComeFromTheirTables) {
  // Shipped models and fusion policies are read from their own tables, never listed here.
  EXPECT_NE(engine::run_option(RunCommand::Llm, "model").choices().size(), 0u);
  const auto llm_fusion = engine::run_option(RunCommand::Llm, "fusion").choices();
  EXPECT_EQ(std::count(llm_fusion.begin(), llm_fusion.end(), "as-is"), 0);
  const auto run_fusion = engine::run_option(RunCommand::Run, "fusion").choices();
  EXPECT_EQ(std::count(run_fusion.begin(), run_fusion.end(), "as-is"), 1);
}

TEST(RunOptions, ChecksNameTheFlagWithExpectedAndFound) {
  const auto& kv = engine::run_option(RunCommand::Run, "kv_cache");
  EXPECT_EQ(kv.or_list(), "append or copy");
  try {
    kv.check("rewrite", "--kv-cache");
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--kv-cache: expected append or copy, found 'rewrite'");
  }
  const auto& a = engine::run_option(RunCommand::Llm, "acceptance");
  EXPECT_EQ(a.parse_number("0.25", "--acceptance"), 0.25);
  for (const char* bad : {"1.5", "0.5x", "", "-0.1"}) EXPECT_THROW(a.parse_number(bad, "--acceptance"), InputError);
  EXPECT_EQ(engine::run_option(RunCommand::Llm, "draft_tokens").range_text(true), "1 to 16");
  EXPECT_EQ(engine::run_option(RunCommand::Llm, "draft_tokens").range_text(), "1 to 64");
}

TEST(RunOptions, JsonGivesEveryOptionWithItsRangeOrValues) {
  const auto j = engine::run_options_json();
  ASSERT_EQ(j.size(), engine::run_options().size());
  for (const auto& o : j) {
    if (o.at("kind") == "integer") {
      EXPECT_TRUE(o.at("max").is_number_integer()) << o.dump();
    }
    if (o.at("kind") == "choice") {
      EXPECT_FALSE(o.at("values").empty()) << o.dump();
    }
  }
}

// The docs that list run options hold the tables the code generates, between their markers.
TEST(RunOptions, DocTablesAreGenerated) {
  for (const char* name : {"docs/run-options.md", "docs/serve.md"}) {
    const std::string path = std::string(test_paths::source_dir()) + "/" + name;
    const std::string doc = read_file(path);
    EXPECT_TRUE(engine::has_generated_option_tables(doc)) << name;
    const std::string generated = engine::with_generated_option_tables(doc, path);
    EXPECT_TRUE(doc == generated) << name << "'s run option tables differ from sim/engine/run_options.cpp:\n"
                                  << doc_diff(doc, generated) << "regenerate with: " << engine::kRegenerateOptionsDoc
                                  << " (from the source folder, with the built npusim)";
  }
}

}  // namespace
}  // namespace npusim::test
