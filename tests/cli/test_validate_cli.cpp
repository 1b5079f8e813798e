// npusim validate and npusim calibrate end to end: measured figures made by npusim itself (so the
// expected ratios and fitted values are known), the outputs, bad input, and the fit's guards.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include <gtest/gtest.h>

#include "tests/support/cli_support.h"
#include "traces/report_page.h"
#include "tests/support/test_paths.h"

namespace fs = std::filesystem;
using npusim::test::read_json;
using npusim::test::run_npusim;
using npusim::test::run_summary;
using npusim::test::scratch;

namespace {

/// The simulated latency in ms of `workload` on edge-s (greedy), with `sets` (" --set K=V"...).
double latency_ms(const std::string& workload, const std::string& sets = "") {
  const auto s = run_summary("lat_" + fs::path(workload).stem().string(),
                             "--config edge-s --workload " + workload + sets + " --trace-level ops");
  return s.at("seconds").get<double>() * 1e3;
}

/// A folder holding `name` with `text`; returns the file's path.
std::string file_in(const fs::path& dir, const std::string& name, const std::string& text) {
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return (dir / name).string();
}

/// %.17g: a measured value written so that it reads back as the same double.
std::string exact(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

/// The data report.html inlines for the front end (its <script type="application/json"> element).
nlohmann::json inlined_data(const std::string& html) {
  const std::string open = R"(<script type="application/json" id="npusim-data">)";
  const std::size_t begin = html.find(open);
  if (begin == std::string::npos) return nullptr;
  const std::size_t end = html.find("</script>", begin + open.size());
  return nlohmann::json::parse(html.substr(begin + open.size(), end - begin - open.size()));
}

/// NPUSIM_WEB_DIR set to an empty folder while it lives: npusim finds no built front end.
class NoFrontEnd {
 public:
  explicit NoFrontEnd(const fs::path& dir) {
    fs::create_directories(dir);
    setenv("NPUSIM_WEB_DIR", dir.c_str(), 1);
  }
  ~NoFrontEnd() { unsetenv("NPUSIM_WEB_DIR"); }
};

}  // namespace

TEST(ValidationCli, HalfTheSimulatedLatencyIsARatioOfTwo) {
  const double L = latency_ms("small_cnn");
  ASSERT_GT(L, 0);
  const fs::path dir = scratch("val_ratio");
  const std::string csv =
      file_in(dir, "m.csv", "kind,workload,latency_ms,source\nrun,small_cnn," + exact(L / 2) + ",half of npusim's\n");
  const fs::path out = dir / "out";
  std::string log;
  ASSERT_EQ(run_npusim("validate " + csv + " --config edge-s --quiet --out " + out.string(), &log), 0) << log;
  // simulated L against measured L/2: ratio L / (L/2) = 2, error (L - L/2) / (L/2) x 100 = +100 %.
  EXPECT_NE(log.find("2.000"), std::string::npos) << log;
  EXPECT_NE(log.find("+100.0 %"), std::string::npos) << log;
  const auto j = read_json(out / "validation.json");
  const auto& fig = j.at("rows").at(0).at("figures").at(0);
  EXPECT_EQ(fig.at("metric"), "latency_ms");
  EXPECT_EQ(fig.at("unit"), "ms");
  EXPECT_NEAR(fig.at("ratio").get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(fig.at("error_percent").get<double>(), 100.0, 1e-9);
  EXPECT_NEAR(fig.at("simulated").get<double>(), L, L * 1e-12);
  EXPECT_EQ(j.at("rows").at(0).at("status"), "ok");
  EXPECT_EQ(j.at("rows").at(0).at("source"), "half of npusim's");
  EXPECT_EQ(j.at("rows").at(0).at("inputs").at("workload"), "small_cnn");
  EXPECT_TRUE(j.at("provenance").at("version").is_string());
  EXPECT_TRUE(j.at("provenance").at("config_hash").is_string());  // every row on one resolved config
}

TEST(ValidationCli, ThreeRowsStatisticsMaxErrorGuardAndReport) {
  const double L = latency_ms("small_cnn");
  const fs::path dir = scratch("val_three");
  // Measured L/2, L x 1.25 and L / 1.1: errors +100 %, (L - 1.25 L) / 1.25 L = -20 %, +10 %.
  // Sorted -20, +10, +100: median +10 %; |errors| 10, 20, 100: median 20 %, max 100 % (row 1).
  const std::string csv = file_in(dir, "m.csv",
                                  "name,kind,workload,latency_ms,source\n"
                                  "# three measurements of one network\n"
                                  "fast,run,small_cnn," +
                                      exact(L / 2) +
                                      ",a\n"
                                      "slow,run,small_cnn," +
                                      exact(L * 1.25) +
                                      ",b\n"
                                      "\"near, by\",run,small_cnn," +
                                      exact(L / 1.1) + ",c\n");
  const fs::path out = dir / "out";
  std::string log;
  // The guard: the largest |error| (100 %) exceeds 50 %: exit 1, after writing, naming row 1.
  EXPECT_EQ(
      run_npusim("validate " + csv + " --config edge-s -j 2 --quiet --max-error latency_ms=50 --out " + out.string(),
                 &log),
      1)
      << log;
  EXPECT_NE(log.find("--max-error exceeded: latency_ms: max |error| 100.0 % > 50 % (rows 1 fast)"), std::string::npos)
      << log;
  const auto j = read_json(out / "validation.json");
  ASSERT_EQ(j.at("metrics").size(), 1u);
  const auto& m = j.at("metrics").at(0);
  EXPECT_EQ(m.at("metric"), "latency_ms");
  EXPECT_EQ(m.at("count"), 3);
  EXPECT_NEAR(m.at("median_error_percent").get<double>(), 10.0, 1e-6);
  EXPECT_NEAR(m.at("median_abs_error_percent").get<double>(), 20.0, 1e-6);
  EXPECT_NEAR(m.at("max_abs_error_percent").get<double>(), 100.0, 1e-6);
  EXPECT_EQ(m.at("max_abs_error_row"), 1);
  EXPECT_EQ(j.at("rows").at(2).at("name"), "near, by");

  // report.html: the web front end with validation.json inlined, which draws one scatter (one
  // metric) with a point per figure named by its row (browser.validate_report checks the drawing);
  // no external asset.
  const std::string html = npusim::read_file((out / "report.html").string());
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  if (npusim::traces::report_page::load_template()) {
    const auto data = inlined_data(html);
    ASSERT_TRUE(data.is_object()) << html.substr(0, 300);
    EXPECT_EQ(data.at("validation"), j);
    EXPECT_EQ(data.at("title"), "npusim validate: " + csv);
    EXPECT_NE(html.find("<title>npusim validate: "), std::string::npos);
  }
  // Without the built front end: the plain page, one scatter with a labelled point per row, no
  // script, and a warning that names the build command.
  {
    NoFrontEnd none(dir / "no_web");
    ASSERT_EQ(run_npusim("validate " + csv + " --config edge-s --quiet --out " + (dir / "plain").string(), &log), 0)
        << log;
  }
  EXPECT_NE(log.find("warning: report.html is the plain page"), std::string::npos) << log;
  EXPECT_NE(log.find(npusim::traces::report_page::kBuildCommand), std::string::npos) << log;
  const std::string plain = npusim::read_file((dir / "plain" / "report.html").string());
  EXPECT_EQ(count_of(plain, "<svg"), 1u);
  EXPECT_EQ(count_of(plain, "class=\"point\""), 3u);
  for (const char* label : {">fast</text>", ">slow</text>", ">near, by</text>"})
    EXPECT_NE(plain.find(label), std::string::npos) << label;
  EXPECT_EQ(plain.find("<script"), std::string::npos);

  // A limit above the largest error passes; --rows 2,3 leaves row 1 (+100 %) out, so 25 % passes too.
  EXPECT_EQ(
      run_npusim("validate " + csv + " --config edge-s --quiet --max-error latency_ms=150 --out " + out.string(), &log),
      0)
      << log;
  EXPECT_EQ(run_npusim("validate " + csv + " --config edge-s --quiet --rows 2,3 --max-error latency_ms=25 --out " +
                           out.string(),
                       &log),
            0)
      << log;
  EXPECT_EQ(read_json(out / "validation.json").at("rows_selected"), nlohmann::json::array({2, 3}));
}

TEST(ValidationCli, AnLlmRowComparesTtftAndTokensPerSecond) {
  // npusim llm's own figures for a tiny Llama (prompt 32, generate 8, batch 2, int8 weights):
  // measured TTFT = its ttft x 1.25 and tokens/s = its tokens/s / 2 give errors
  // (1 - 1.25) / 1.25 = -20 % and (1 - 0.5) / 0.5 = +100 %.
  const fs::path dir = scratch("val_llm");
  fs::create_directories(dir);
  fs::copy_file(std::string(test_paths::data_dir()) + "/llm_tiny.json", dir / "tiny.json");
  const fs::path llm_out = dir / "llm";
  std::string log;
  ASSERT_EQ(run_npusim("llm --model " + (dir / "tiny.json").string() +
                           " --config edge-s --prompt 32 --generate 8 "
                           "--batch 2 --weight-dtype int8 --quiet --out " +
                           llm_out.string(),
                       &log),
            0)
      << log;
  const auto l = read_json(llm_out / "summary.json").at("llm");
  const double ttft = l.at("ttft_seconds").get<double>() * 1e3,
               tps = l.at("decode").at("tokens_per_second").get<double>();
  const std::string csv = file_in(dir, "m.csv",
                                  "kind,workload,config,ttft_ms,tokens_per_second,prompt,generate,batch,weight_dtype,"
                                  "source\nllm,tiny.json,edge-s," +
                                      exact(ttft * 1.25) + "," + exact(tps / 2) + ",32,8,2,int8,npusim llm\n");
  const fs::path out = dir / "out";
  ASSERT_EQ(run_npusim("validate " + csv + " --quiet --out " + out.string(), &log), 0) << log;
  const auto j = read_json(out / "validation.json");
  const auto& figs = j.at("rows").at(0).at("figures");
  ASSERT_EQ(figs.size(), 2u);
  EXPECT_EQ(figs.at(0).at("metric"), "ttft_ms");
  EXPECT_NEAR(figs.at(0).at("simulated").get<double>(), ttft, ttft * 1e-9);
  EXPECT_NEAR(figs.at(0).at("error_percent").get<double>(), -20, 1e-6);
  EXPECT_EQ(figs.at(1).at("metric"), "tokens_per_second");
  EXPECT_EQ(figs.at(1).at("unit"), "tokens/s");
  EXPECT_NEAR(figs.at(1).at("ratio").get<double>(), 2, 1e-9);
  EXPECT_EQ(j.at("rows").at(0).at("llm").at("batch"), 2);
  EXPECT_EQ(j.at("metrics").size(), 2u);  // one per metric measured

  // The memory footprint as a third figure: measured as 4x npusim's total gives -75 %.
  const double mb = l.at("memory_bytes").at("total").get<double>() / 1e6;
  const std::string mem_csv = file_in(dir, "mem.csv",
                                      "kind,workload,config,memory_mb,prompt,generate,batch,weight_dtype,"
                                      "source\nllm,tiny.json,edge-s," +
                                          exact(mb * 4) + ",32,8,2,int8,npusim llm\n");
  const fs::path mem_out = dir / "mem_out";
  ASSERT_EQ(run_npusim("validate " + mem_csv + " --quiet --out " + mem_out.string(), &log), 0) << log;
  const auto m = read_json(mem_out / "validation.json").at("rows").at(0).at("figures");
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at(0).at("metric"), "memory_mb");
  EXPECT_EQ(m.at(0).at("unit"), "MB");
  EXPECT_NEAR(m.at(0).at("simulated").get<double>(), mb, mb * 1e-9);
  EXPECT_NEAR(m.at(0).at("error_percent").get<double>(), -75, 1e-6);
}

TEST(ValidationCli, AnUnsupportedModelIsListedAsSkipped) {
  const double L = latency_ms("small_cnn");
  const fs::path dir = scratch("val_skip");
  file_in(dir, "bloom.json", R"({"model_type": "bloom", "hidden_size": 1024, "n_layer": 24, "vocab_size": 250880})");
  const std::string csv = file_in(dir, "m.csv",
                                  "kind,workload,config,latency_ms,ttft_ms,source\n"
                                  "run,small_cnn,edge-s," +
                                      exact(L) +
                                      ",,npusim\n"
                                      "llm,bloom.json,edge-s,,120,a BLOOM on the board\n");
  const fs::path out = dir / "out";
  std::string log;
  ASSERT_EQ(run_npusim("validate " + csv + " --quiet --out " + out.string(), &log), 0) << log;
  EXPECT_NE(log.find("skipped: "), std::string::npos) << log;
  EXPECT_NE(log.find("(model_type): expected one of llama"), std::string::npos) << log;
  const auto j = read_json(out / "validation.json");
  ASSERT_EQ(j.at("rows").size(), 2u);
  const auto& row = j.at("rows").at(1);
  EXPECT_EQ(row.at("status"), "skipped");
  EXPECT_NE(row.at("skipped").get<std::string>().find("found 'bloom'"), std::string::npos);
  EXPECT_TRUE(row.at("figures").empty());
  EXPECT_EQ(j.at("rows_skipped"), 1);
  // The skipped row is in the table, not in the scatter: one point (the front end draws from
  // the inlined validation.json; the plain page without it).
  if (npusim::traces::report_page::load_template())
    EXPECT_EQ(inlined_data(npusim::read_file((out / "report.html").string())).at("validation"), j);
  {
    NoFrontEnd none(dir / "no_web");
    ASSERT_EQ(run_npusim("validate " + csv + " --quiet --out " + out.string(), &log), 0) << log;
  }
  const std::string html = npusim::read_file((out / "report.html").string());
  EXPECT_EQ(count_of(html, "class=\"point\""), 1u);
  EXPECT_NE(html.find("skipped: "), std::string::npos);
}

TEST(ValidationCli, BadInputIsExitTwoAndWritesNothing) {
  const fs::path dir = scratch("val_bad");
  fs::create_directories(dir);
  file_in(dir, "gpt.json", R"({"model_type": "llama"})");  // hidden_size missing: a broken file, not a skip
  struct Case {
    std::string csv, fragment, flags = "";
  };
  const std::string head = "kind,workload,config,latency_ms,ttft_ms,tokens_per_second,prompt,set,source\n";
  const std::string ok = "run,small_cnn,edge-s,0.1,,,,,x\n";
  const std::vector<Case> cases = {
      {"", "m.csv: expected a header row (kind,workload,...,source) and measured rows, found an empty file"},
      {"kind,workload,source\n", "expected at least one measured row after the header, found none"},
      {"kind,latency_ms,source\nrun,0.1,x\n", "m.csv:1 (header): expected a column 'workload'"},
      {"kind,workload,latncy_ms,source\nrun,small_cnn,0.1,x\n",
       "m.csv:1 (header): unknown column 'latncy_ms'; known: kind"},
      // Row 4: comments are not counted.
      {head + ok + "# a comment\n" + ok + ok + "llm,Llama-3.2-1B,edge-s,,-3,,,,x\n",
       "m.csv row 4 (ttft_ms): expected a positive number of milliseconds, found '-3'"},
      {head + "run,small_cnn,edge-s,0,,,,,x\n",
       "m.csv row 1 (latency_ms): expected a positive number of milliseconds, found '0'"},
      {head + "run,small_cnn,edge-s,nan,,,,,x\n",
       "row 1 (latency_ms): expected a positive number of milliseconds, found 'nan'"},
      {head + "run,small_cnn,edge-s,inf,,,,,x\n", "found 'inf'"},
      {head + "run,small_cnn,edge-s,1e999,,,,,x\n", "found '1e999'"},
      {head + "run,small_cnn,edge-s,fast,,,,,x\n", "found 'fast'"},
      {head + "llm,Llama-3.2-1B,edge-s,,,-1,,,x\n",
       "row 1 (tokens_per_second): expected a positive number of tokens per second, found '-1'"},
      {head + "train,small_cnn,edge-s,0.1,,,,,x\n", "m.csv row 1 (kind): expected run or llm, found 'train'"},
      {head + "llm,Llama-3.2-1B,edge-s,,,,,,x\n",
       "m.csv row 1 (ttft_ms, tokens_per_second, memory_mb): expected a measured"},
      {head + "run,small_cnn,edge-s,,,,,,x\n", "m.csv row 1 (latency_ms): expected the measured latency"},
      {head + "run,small_cnn,edge-s,0.1,5,,,,x\n", "m.csv row 1 (ttft_ms): expected only on llm rows"},
      {head + "run,no_such_net,edge-s,0.1,,,,,x\n", "m.csv row 1 (workload): "},
      {head + "run,nets/missing.onnx,edge-s,0.1,,,,,x\n", "m.csv row 1 (workload): "},
      {head + "llm,NoSuchModel,edge-s,,10,,,,x\n", "m.csv row 1 (workload): --model"},
      {head + "llm,gpt.json,edge-s,,10,,,,x\n", "m.csv row 1 (workload): "},
      {head + "run,small_cnn,edge-x,0.1,,,,,x\n", "m.csv row 1 (config): "},
      {head + "run,small_cnn,,0.1,,,,,x\n", "m.csv row 1 (config): expected a preset name or a YAML path"},
      {head + "run,small_cnn,edge-s,0.1,,,,npu.mac_array.rows=0,x\n", "m.csv row 1 (set): "},
      {head + "llm,Llama-3.2-1B,edge-s,,10,,1e12,,x\n",
       "m.csv row 1 (prompt): expected a whole number from 1 to 1000000, found '1e12'"},
      {head + "llm,Llama-3.2-1B,edge-s,,10,,999999999999999999999,,x\n", "m.csv row 1 (prompt)"},
      {head + ok, "--rows 2 (the CSV's data rows): expected a whole number from 1 to 1, found '2'", " --rows 2"},
      {head + ok, "--max-error latncy=3: expected METRIC=PERCENT", " --max-error latncy=3"},
  };
  for (const auto& c : cases) {
    const std::string csv = file_in(dir, "m.csv", c.csv);
    const fs::path out = dir / "out";
    std::string log;
    EXPECT_EQ(run_npusim("validate " + csv + " --quiet --out " + out.string() + c.flags, &log), 2) << c.csv << log;
    EXPECT_NE(log.find(c.fragment), std::string::npos) << "expected '" << c.fragment << "' in: " << log;
    EXPECT_FALSE(fs::exists(out)) << c.csv;  // nothing written on bad input
    // No temporary sibling left either.
    for (const auto& e : fs::directory_iterator(dir))
      EXPECT_EQ(e.path().filename().string().find(".out.tmp"), std::string::npos) << e.path();
  }
}

// ---------------------------------------------------------------------------------------------
// calibrate

namespace {

/// Rows measured by npusim itself at `clock` on edge-s: small_cnn, ds_cnn_kws and a YAML
/// workload named by a path relative to the CSV's folder.
/// Three rows measured as npusim runs them on edge-s with `--set KEY=VALUE` (times `scale`).
std::string rows_with(const fs::path& dir, const std::string& key_value, double scale = 1) {
  file_in(dir, "conv_chain2.yaml", npusim::read_file(std::string(test_paths::data_dir()) + "/conv_chain2.yaml"));
  const std::string set = " --set " + key_value;
  return file_in(dir, "m.csv",
                 "kind,workload,latency_ms,source\n"
                 "run,small_cnn," +
                     exact(latency_ms("small_cnn", set) * scale) + ",npusim at " + key_value +
                     "\n"
                     "run,ds_cnn_kws," +
                     exact(latency_ms("ds_cnn_kws", set) * scale) + ",npusim at " + key_value +
                     "\n"
                     "run,conv_chain2.yaml," +
                     exact(latency_ms((dir / "conv_chain2.yaml").string(), set) * scale) + ",npusim at " + key_value +
                     "\n");
}

std::string clock_rows(const fs::path& dir, const std::string& clock, double scale = 1) {
  return rows_with(dir, "npu.clock=" + clock, scale);
}

/// The value of `key: VALUE` lines' numbers in text (the first match of `pattern`'s group 1).
double number_after(const std::string& text, const std::string& pattern) {
  std::smatch m;
  if (!std::regex_search(text, m, std::regex(pattern))) return NAN;
  return std::stod(m[1]);
}

}  // namespace

TEST(CalibrationCli, FitsTheClockTheRowsWereMeasuredAt) {
  // The rows are npusim's own figures at 640 MHz; the fit starts from edge-s's 800 MHz (the
  // preset's clock) and must find 640 MHz again: then every row's error is ~0.
  const fs::path dir = scratch("cal_clock");
  const std::string csv = clock_rows(dir, "640MHz");
  const fs::path fitted = dir / "fitted.yaml";
  std::string log;
  ASSERT_EQ(run_npusim("calibrate " + csv + " --config edge-s --fit npu.clock -j 2 --max-evals 25 --quiet --out " +
                           fitted.string(),
                       &log),
            0)
      << log;
  const std::string yaml = npusim::read_file(fitted.string());
  const double mhz = number_after(yaml, "\n  clock: ([0-9.e+-]+) MHz\n");
  EXPECT_NEAR(mhz, 640, 640 * 0.02) << yaml;  // within 2 %
  // Before: at 800 MHz the rows ran faster than measured (error below 0); after: max |error| < 2 %.
  EXPECT_LT(number_after(yaml, "# error before: latency_ms median \\|error\\| [0-9.]+ %, max \\|error\\| ([0-9.]+) %"),
            100);
  EXPECT_LT(number_after(yaml, "# error after:  latency_ms median \\|error\\| [0-9.]+ %, max \\|error\\| ([0-9.]+) %"),
            2)
      << yaml;
  // The comment block: the CSV, the rows, the key's start and bounds, the evaluations; then the keys.
  EXPECT_NE(yaml.find("# csv: " + csv + "\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("# rows: 1, 2, 3 (3 rows, 3 measured figures)"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("start 800 MHz, bounds 100 MHz .. 3000 MHz"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("NLopt LN_BOBYQA"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\nbase: edge-s\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("\nname: fitted\n"), std::string::npos) << yaml;
  EXPECT_NE(log.find("npu.clock: "), std::string::npos) << log;

  // npusim run reads the fitted file: edge-s with the fitted clock, small_cnn within 2 % of its row.
  const auto s =
      run_summary("cal_clock_run", "--config " + fitted.string() + " --workload small_cnn --trace-level ops");
  ASSERT_TRUE(s.contains("seconds"));
  const double measured = latency_ms("small_cnn", " --set npu.clock=640MHz");
  EXPECT_NEAR(s.at("seconds").get<double>() * 1e3, measured, measured * 0.02);
  EXPECT_EQ(s.at("config_name"), "fitted");
}

TEST(CalibrationCli, FitsAKeyOfAPatternTheConfigDoesNotList) {
  // npu.mac_array.rate.int8 is an instance of the pattern npu.mac_array.rate.<dtype>; edge-s lists
  // no rate, so the fit starts at the documented default 1 and must find the rows' 0.5 again.
  const fs::path dir = scratch("cal_rate");
  const std::string csv = rows_with(dir, "npu.mac_array.rate.int8=0.5");
  const fs::path fitted = dir / "fitted.yaml";
  std::string log;
  ASSERT_EQ(run_npusim("calibrate " + csv + " --config edge-s --fit npu.mac_array.rate.int8 -j 2 --max-evals 25 " +
                           "--quiet --out " + fitted.string(),
                       &log),
            0)
      << log;
  const std::string yaml = npusim::read_file(fitted.string());
  EXPECT_NE(yaml.find("npu.mac_array.rate.int8: fitted "), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("start 1, bounds 0.0625 .. 1"), std::string::npos) << yaml;
  EXPECT_NEAR(number_after(yaml, "\n    rate:\n      int8: ([0-9.e+-]+)\n"), 0.5, 0.5 * 0.05) << yaml;
  EXPECT_LT(number_after(yaml, "# error after:  latency_ms median \\|error\\| [0-9.]+ %, max \\|error\\| ([0-9.]+) %"),
            2)
      << yaml;
}

TEST(CalibrationCli, AnExistingOutIsNeverReplaced) {
  const fs::path dir = scratch("cal_exists");
  const std::string csv = file_in(dir, "m.csv", "kind,workload,latency_ms,source\nrun,small_cnn,0.1,x\n");
  const std::string fitted = file_in(dir, "fitted.yaml", "keep me\n");
  std::string log;
  EXPECT_EQ(run_npusim("calibrate " + csv + " --config edge-s --fit npu.clock --quiet --out " + fitted, &log), 2)
      << log;
  EXPECT_NE(log.find("--out " + fitted + ": expected a file that does not exist yet"), std::string::npos) << log;
  EXPECT_EQ(npusim::read_file(fitted), "keep me\n");
  EXPECT_EQ(log.find("before"), std::string::npos) << log;  // refused before any simulation: no table
  // A symbolic link in its place (even a dangling one) is refused too.
  const fs::path link = dir / "link.yaml";
  fs::create_symlink(dir / "nowhere.yaml", link);
  EXPECT_EQ(run_npusim("calibrate " + csv + " --config edge-s --fit npu.clock --quiet --out " + link.string(), &log), 2)
      << log;
  EXPECT_FALSE(fs::exists(dir / "nowhere.yaml"));
}

TEST(CalibrationCli, AFitAgainstABoundWritesNothing) {
  // Latencies 16 x those at 800 MHz would ask for a 50 MHz clock (if every cycle scaled), below
  // npu.clock's 100 MHz bound: the fit ends on the bound, exit 1, no file.
  const fs::path dir = scratch("cal_bound");
  const double L = latency_ms("small_cnn"), K = latency_ms("ds_cnn_kws");
  const std::string csv = file_in(dir, "m.csv",
                                  "kind,workload,latency_ms,source\nrun,small_cnn," + exact(16 * L) +
                                      ",x\nrun,ds_cnn_kws," + exact(16 * K) + ",x\n");
  const fs::path fitted = dir / "fitted.yaml";
  std::string log;
  EXPECT_EQ(run_npusim(
                "calibrate " + csv + " --config edge-s --fit npu.clock --max-evals 20 --quiet --out " + fitted.string(),
                &log),
            1)
      << log;
  EXPECT_NE(log.find("npu.clock hit its lower bound 100 MHz"), std::string::npos) << log;
  EXPECT_NE(log.find("the rows ask for more than the physical range; check the config"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(fitted));
  EXPECT_NE(log.find("error before"), std::string::npos) << log;  // the rows are still shown
}

TEST(CalibrationCli, UnknownOrTooManyKeysAreExitTwo) {
  const fs::path dir = scratch("cal_keys");
  const std::string csv = file_in(dir, "m.csv", "kind,workload,latency_ms,source\nrun,small_cnn,0.1,x\n");
  const fs::path fitted = dir / "fitted.yaml";
  std::string log;
  EXPECT_EQ(
      run_npusim("calibrate " + csv + " --config edge-s --fit npu.clock,npu.mac_array.rows --out " + fitted.string(),
                 &log),
      2);
  EXPECT_NE(log.find("--fit npu.mac_array.rows: expected a fittable key (npu.runtime.dispatch_latency, "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("npu.clock)"), std::string::npos) << log;  // the list names every fittable key
  EXPECT_EQ(run_npusim("calibrate " + csv +
                           " --config edge-s --fit npu.clock,npu.runtime.dispatch_latency,npu.runtime.core_sync,"
                           "npu.host.handoff_latency,npu.host.op_rate,npu.mac_array.rate.fp16,npu.host.bandwidth"
                           " --out " +
                           fitted.string(),
                       &log),
            2);
  EXPECT_NE(log.find("expected at most 6 keys in one fit, found 7"), std::string::npos) << log;
  // A row that sets a fitted key itself contradicts the fit.
  const std::string sets =
      file_in(dir, "s.csv", "kind,workload,latency_ms,set,source\nrun,small_cnn,0.1,npu.clock=1GHz,x\n");
  EXPECT_EQ(run_npusim("calibrate " + sets + " --config edge-s --fit npu.clock --out " + fitted.string(), &log), 2);
  EXPECT_NE(log.find("s.csv row 1 (set): expected no override of a fitted key, found 'npu.clock=1GHz'"),
            std::string::npos)
      << log;
  EXPECT_FALSE(fs::exists(fitted));
}
