// npusim validate's engine: --rows lists, the CSV's rows as run and llm specs (paths against the
// CSV's folder), and the per-metric statistics worked on paper.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "sim/core/errors.h"
#include "sim/engine/calibration.h"
#include "sim/engine/validation.h"
#include "tests/support/cli_support.h"

namespace fs = std::filesystem;
using namespace npusim;
using namespace npusim::engine;
using npusim::test::scratch;

namespace {

std::string rows_error(const std::string& text, std::size_t count) {
  try {
    parse_row_list(text, count);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

/// A CSV written into a fresh folder; returns its path.
std::string csv_in(const std::string& folder, const std::string& text) {
  const fs::path dir = scratch(folder);
  fs::create_directories(dir);
  std::ofstream(dir / "m.csv") << text;
  return (dir / "m.csv").string();
}

}  // namespace

TEST(ValidationRows, ListsAndRangesAreOneBasedSortedAndUnique) {
  // 1,3,5-7 of 8 rows: rows 1, 3, 5, 6, 7 -> indices 0, 2, 4, 5, 6.
  EXPECT_EQ(parse_row_list("1,3,5-7", 8), (std::vector<std::size_t>{0, 2, 4, 5, 6}));
  // Out of order and repeated: each row once, in order.
  EXPECT_EQ(parse_row_list("7,5-6,6,1", 8), (std::vector<std::size_t>{0, 4, 5, 6}));
  EXPECT_EQ(parse_row_list("", 3), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_NE(rows_error("0", 3).find("--rows 0 (the CSV's data rows): expected a whole number from 1 to 3, found '0'"),
            std::string::npos);
  EXPECT_NE(rows_error("2-4", 3).find("found '4'"), std::string::npos);
  EXPECT_NE(rows_error("3-2", 3).find("expected a range from a lower to a higher row, found '3-2'"), std::string::npos);
  EXPECT_NE(rows_error("1,,2", 3).find("--rows: expected a comma-separated list without empty items, found an empty "
                                       "item 2 in '1,,2'"),
            std::string::npos);
  EXPECT_NE(rows_error("x", 3).find("--rows x"), std::string::npos);
}

TEST(ValidationRows, RowsBecomeTheSpecsRunAndLlmTake) {
  const std::string csv =
      csv_in("spec",
             "name,kind,workload,config,input_shape,latency_ms,ttft_ms,tokens_per_second,prompt,generate,"
             "batch,weight_dtype,set,source\n"
             "# a comment is not a row\n"
             ",run,nets/a.onnx,cfg/x.yaml,input=1,3,8,8;mask=1,8,1.5,,,,,,,npu.cores=2; npu.clock=1GHz,paper\n"
             "tiny,llm,Llama-3.2-1B,edge-m,,,12,40,64,8,2,int4,,\"vendor, 2024\"\n");
  // input_shape holds commas: the field above is not quoted, so that row has too many fields.
  try {
    read_validation_csv(csv, "");
    FAIL() << "a row with more fields than the header was read";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("(row 1): expected 14 fields (the header's columns), found 18"),
              std::string::npos)
        << e.what();
  }
  const std::string quoted =
      csv_in("spec2",
             "name,kind,workload,config,input_shape,latency_ms,ttft_ms,tokens_per_second,prompt,generate,"
             "batch,weight_dtype,set,source\n"
             "# a comment is not a row\n"
             ",run,nets/a.onnx,cfg/x.yaml,\"input=1,3,8,8;mask=1,8\",1.5,,,,,,,npu.cores=2; npu.clock=1GHz,paper\n"
             "tiny,llm,Llama-3.2-1B,,,,12,40,64,8,2,int4,,\"vendor, 2024\"\n");
  const ValidationSet set = read_validation_csv(quoted, "edge-s");
  ASSERT_EQ(set.rows.size(), 2u);
  const fs::path folder = fs::path(quoted).parent_path();
  const ValidationRow& run = set.rows[0];
  EXPECT_EQ(run.row, 1u);
  EXPECT_EQ(run.line, 3u);
  EXPECT_FALSE(run.llm);
  EXPECT_EQ(run.name, "a");  // the workload file's stem
  EXPECT_EQ(run.run.workload, (folder / "nets/a.onnx").string());
  EXPECT_EQ(run.run.config, (folder / "cfg/x.yaml").string());
  EXPECT_EQ(run.run.fusion, "greedy");
  EXPECT_EQ(run.run.overrides, (std::vector<std::string>{"npu.cores=2", "npu.clock=1GHz"}));
  ASSERT_EQ(run.run.load.input_shapes.size(), 2u);
  EXPECT_EQ(run.run.load.input_shapes.at("input"), (workloads::Shape{1, 3, 8, 8}));
  EXPECT_EQ(run.run.load.input_shapes.at("mask"), (workloads::Shape{1, 8}));
  EXPECT_DOUBLE_EQ(run.measured.at(Metric::LatencyMs), 1.5);

  const ValidationRow& llm = set.rows[1];
  EXPECT_TRUE(llm.llm);
  EXPECT_EQ(llm.name, "tiny");
  EXPECT_EQ(llm.llm_spec.model, "Llama-3.2-1B");  // a shipped name, not a path
  EXPECT_EQ(llm.llm_spec.config, "edge-s");       // empty config: the command's
  EXPECT_EQ(llm.llm_spec.prompt, 64);
  EXPECT_EQ(llm.llm_spec.generate, 8);
  EXPECT_EQ(llm.llm_spec.batch, 2);
  EXPECT_EQ(llm.llm_spec.weight_dtype, "int4");
  EXPECT_EQ(llm.llm_spec.group_size, 128u);  // empty: npusim llm's default
  EXPECT_EQ(llm.fields.at("source"), "vendor, 2024");
  EXPECT_DOUBLE_EQ(llm.measured.at(Metric::TtftMs), 12);
  EXPECT_DOUBLE_EQ(llm.measured.at(Metric::TokensPerSecond), 40);
}

TEST(ValidationStats, MedianAndLargestErrorAsWorkedOnPaper) {
  ValidationSet set;
  set.csv = "m.csv";
  for (std::size_t i = 0; i < 4; ++i) {
    ValidationRow r;
    r.row = i + 1;
    r.name = "r" + std::to_string(i + 1);
    set.rows.push_back(r);
  }
  set.rows[0].measured[Metric::LatencyMs] = 1.0;
  set.rows[1].measured[Metric::LatencyMs] = 2.0;
  set.rows[2].measured[Metric::LatencyMs] = 4.0;
  set.rows[3].skipped = "a model npusim does not read";
  std::vector<RowFigures> f(4);
  f[0] = {true, {{Metric::LatencyMs, 1.1}}, ""};  // +10 %
  f[1] = {true, {{Metric::LatencyMs, 1.5}}, ""};  // (1.5 - 2) / 2 = -25 %
  f[2] = {true, {{Metric::LatencyMs, 6.0}}, ""};  // (6 - 4) / 4 = +50 %
  const ValidationReport r = make_report(set, {0, 1, 2, 3}, f);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[3].skipped, "a model npusim does not read");
  EXPECT_TRUE(r.rows[3].figures.empty());
  ASSERT_EQ(r.stats.size(), 1u);
  const MetricStats& s = r.stats[0];
  EXPECT_EQ(s.count, 3u);
  // Errors -25, +10, +50: the median is the middle one, +10; |errors| 10, 25, 50: median 25, max 50 (row 3).
  EXPECT_NEAR(s.median_error, 10, 1e-9);
  EXPECT_NEAR(s.median_abs_error, 25, 1e-9);
  EXPECT_NEAR(s.max_abs_error, 50, 1e-9);
  EXPECT_EQ(s.max_row, 3u);
  EXPECT_NEAR(r.rows[1].figures[0].ratio(), 0.75, 1e-12);

  // The guard: 50 % is not above 50 %, 49 % is, and names row 3 alone (+50 %; -25 % is within).
  EXPECT_TRUE(exceeded_limits(r, {parse_error_limit("latency_ms=50")}).empty());
  const auto over = exceeded_limits(r, {parse_error_limit("latency_ms=20")});
  ASSERT_EQ(over.size(), 1u);
  EXPECT_NE(over[0].find("(rows 2 r2, 3 r3)"), std::string::npos) << over[0];
  // An even count takes the mean of the middle two: without row 3, errors -25 and +10 -> -7.5.
  const ValidationReport two = make_report(set, {0, 1}, {f[0], f[1]});
  EXPECT_NEAR(two.stats[0].median_error, -7.5, 1e-9);
  EXPECT_NEAR(two.stats[0].median_abs_error, 17.5, 1e-9);
}

TEST(ValidationStats, ScatterHasOneLabelledPointPerFigureOnLogAxes) {
  ValidationSet set;
  set.csv = "m.csv";
  for (std::size_t i = 0; i < 2; ++i) {
    ValidationRow r;
    r.row = i + 1;
    r.name = i ? "b<&>" : "a";
    r.measured[Metric::LatencyMs] = i ? 30.0 : 0.2;
    set.rows.push_back(r);
  }
  const std::vector<RowFigures> f = {{true, {{Metric::LatencyMs, 0.4}}, ""}, {true, {{Metric::LatencyMs, 20.0}}, ""}};
  const ValidationReport r = make_report(set, {0, 1}, f);
  const std::string svg = validation_scatter_svg(r, Metric::LatencyMs);
  std::size_t points = 0;
  for (auto p = svg.find("class=\"point\""); p != std::string::npos; p = svg.find("class=\"point\"", p + 1)) ++points;
  EXPECT_EQ(points, 2u);
  EXPECT_NE(svg.find(">a</text>"), std::string::npos);
  EXPECT_NE(svg.find(">b&lt;&amp;&gt;</text>"), std::string::npos);  // names escaped
  // Values 0.2 .. 30 span the decades 0.1 .. 100: those four decades are labelled.
  for (const char* tick : {">0.1<", ">1<", ">10<", ">100<"}) EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  EXPECT_NE(svg.find("measured latency (ms)"), std::string::npos);
  EXPECT_NE(svg.find("simulated latency (ms)"), std::string::npos);
  EXPECT_NE(svg.find("class=\"band\""), std::string::npos);
  EXPECT_NE(svg.find("class=\"identity\""), std::string::npos);
  EXPECT_EQ(validation_scatter_svg(r, Metric::TtftMs), "");  // no figure of that metric: no chart
}

TEST(CalibrationKeys, TableBoundsAndWrittenValues) {
  std::size_t defaults = 0;
  for (const auto& k : fittable_keys()) {
    EXPECT_LT(k.lower, k.upper) << k.key;
    EXPECT_FALSE(k.meaning.empty()) << k.key;
    defaults += k.default_set;
  }
  EXPECT_EQ(defaults, 4u);  // dispatch latency, host handoff, int8 and fp16 rates
  const auto key = [](const std::string& name) {
    for (const auto& k : fittable_keys())
      if (k.key == name) return k;
    return FitKey{};
  };
  // Written in the table's units: Hz as MHz, seconds as us, a rate as a plain number.
  EXPECT_EQ(fit_value_text(key("npu.clock"), 812.3456e6), "812.346 MHz");
  EXPECT_EQ(fit_value_text(key("npu.clock"), 3e9), "3000 MHz");
  EXPECT_EQ(fit_value_text(key("npu.runtime.dispatch_latency"), 12.5e-6), "12.5 us");
  EXPECT_EQ(fit_value_text(key("npu.host.op_rate"), 4e9), "4e9");
  EXPECT_EQ(fit_value_text(key("npu.mac_array.rate.fp16"), 0.25), "0.25");
  EXPECT_EQ(fit_value_text(key("npu.mac_array.rate.int8"), 0.625), "0.625");
}
