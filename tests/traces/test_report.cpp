// report.html and `npusim inspect`'s text for the hand-made trace (tests/traces/sample_trace.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/traces/sample_trace.h"
#include "traces/analysis.h"
#include "traces/inspect.h"
#include "traces/report.h"
#include "traces/report_page.h"
#include "traces/summary.h"

namespace npusim::traces {
namespace {

using nlohmann::json;
using sample::sample_trace;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The JSON the page embeds, parsed back.
json embedded_data(const std::string& html) {
  const std::string open = R"(<script type="application/json" id="npusim-data">)";
  const std::size_t begin = html.find(open) + open.size();
  const std::size_t end = html.find("</script>", begin);
  return json::parse(html.substr(begin, end - begin));
}

/// report.html is the built web front end (web/, `npm run build`); without it there is no page to test.
#define SKIP_UNLESS_THE_PAGE_IS_BUILT() \
  if (!report_page::load_template())    \
  GTEST_SKIP() << report_page::template_path() << " is not built: " << report_page::kBuildCommand

TEST(Report, OneSelfContainedPageWithTheRunsData) {
  SKIP_UNLESS_THE_PAGE_IS_BUILT();
  const Trace t = sample_trace();
  const Roofline r = make_roofline(t);
  const json s = make_summary(t, r);
  const std::string html = make_report_html({{"none", &r, &s}}, {}, "tiny <on> test-npu");
  EXPECT_EQ(html.rfind("<!doctype html>", 0), 0u);
  EXPECT_NE(html.find("<title>tiny &lt;on&gt; test-npu</title>"), std::string::npos);
  // Nothing to fetch: no external script, style sheet, image or font.
  for (const char* fetch :
       {"<script src", "<script type=\"module\" src", "<link", "<img", "@import", "url(http", "crossorigin"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  // The app itself is inline: the page's one module script (the live page's code, web/src/).
  EXPECT_EQ(count(html, "<script type=\"module\">"), 1u);
  EXPECT_NE(html.find("npusim-data"), std::string::npos);
  // The data travels inside: the summary and the roofline points, hover details come from them.
  const json data = embedded_data(html);
  ASSERT_EQ(data["runs"].size(), 1u);
  EXPECT_EQ(data["runs"][0]["summary"]["ops"][0]["name"], "gemm0");
  EXPECT_EQ(data["runs"][0]["roofline"]["points"].size(), 10u);
  EXPECT_NEAR(data["runs"][0]["summary"]["energy_j"].get<double>(), 3.025e-6, 1e-18);
  for (const char* section : {"Every layer", "Stall breakdown", "Energy roofline", "Unit utilisation"}) {
    EXPECT_NE(html.find(section), std::string::npos) << section;
  }
}

TEST(Report, NamesCannotEndTheScript) {
  SKIP_UNLESS_THE_PAGE_IS_BUILT();
  // An op named like a closing tag stays data: the page keeps exactly its two script elements.
  Trace t = sample_trace();
  t.ops[0].name = "</script><script>alert(1)//";
  const Roofline r = make_roofline(t);
  const json s = make_summary(t, r);
  const std::string html = make_report_html({{"none", &r, &s}}, {}, "x");
  EXPECT_EQ(count(html, "</script>"), 2u);
  EXPECT_EQ(embedded_data(html)["runs"][0]["summary"]["ops"][0]["name"], t.ops[0].name);
}

TEST(Report, CompareCarriesBothRunsAndTheArrows) {
  SKIP_UNLESS_THE_PAGE_IS_BUILT();
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.groups = {{"gemm0+relu1", "epilogue", {0, 1}, 327680}, {"flatten2", "none", {2}, 0}};
  b.ops[0].group = 0;
  b.ops[1].group = 0;
  b.ops[2].group = 1;
  for (CommandEvent& c : b.commands) c.group = 0;
  b.sram_allocations = {{0, 327680, 0, 1500000}};
  const Roofline ra = make_roofline(a), rb = make_roofline(b);
  const json sa = make_summary(a, ra), sb = make_summary(b, rb);
  const json data =
      embedded_data(make_report_html({{"none", &ra, &sa}, {"fused", &rb, &sb}}, compare_arrows(a, b), "cmp"));
  ASSERT_EQ(data["runs"].size(), 2u);
  EXPECT_EQ(data["runs"][1]["label"], "fused");
  EXPECT_EQ(data["arrows"][0], json({{"from", "gemm0"}, {"to", "gemm0+relu1"}}));
}

TEST(Report, WritesEveryFileOfARun) {
  if (std::system("command -v gnuplot >/dev/null 2>&1") != 0) GTEST_SKIP() << "no gnuplot";
  const Trace t = sample_trace();
  const Roofline r = make_roofline(t);
  const json s = make_summary(t, r);
  const std::string dir = sample::temp_path("report_dir");
  std::filesystem::create_directories(dir);
  write_run_report({"none", &r, &s}, dir, "tiny");
  for (const char* f :
       {"roofline.json", "roofline.svg", "roofline.png", "energy_roofline.svg", "energy_roofline.png"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(dir) / f)) << f;
  }
  EXPECT_EQ(std::filesystem::exists(std::filesystem::path(dir) / "report.html"),
            report_page::load_template().has_value());
  std::filesystem::remove_all(dir);
}

TEST(Report, WithoutTheBuiltPageReportHtmlIsSkippedAndTheRestWritten) {
  const std::string empty = sample::temp_path("no_web");
  std::filesystem::create_directories(empty);
  setenv("NPUSIM_WEB_DIR", empty.c_str(), 1);  // this test's own process (one per test)
  const Trace t = sample_trace();
  const Roofline r = make_roofline(t);
  const json s = make_summary(t, r);
  EXPECT_EQ(make_report_html({{"none", &r, &s}}, {}, "x"), "");
  EXPECT_EQ(report_page::template_path(), (std::filesystem::path(empty) / "report-template.html").string());
  // A template without the data element is not a template.
  std::ofstream(std::filesystem::path(empty) / "report-template.html") << "<html><title>x</title></html>";
  EXPECT_FALSE(report_page::load_template().has_value());
  // One that has it gets the title (escaped) and the data (safe inside the script element).
  std::ofstream(std::filesystem::path(empty) / "report-template.html")
      << "<title>npusim report</title><script type=\"application/json\" id=\"npusim-data\">__NPUSIM_DATA__</script>";
  const std::string html = make_report_html({{"none", &r, &s}}, {}, "a <b>");
  EXPECT_NE(html.find("<title>a &lt;b&gt;</title>"), std::string::npos) << html.substr(0, 200);
  EXPECT_EQ(embedded_data(html)["runs"][0]["summary"]["workload"], s["workload"]);
  EXPECT_EQ(html.find("__NPUSIM_DATA__"), std::string::npos);
  unsetenv("NPUSIM_WEB_DIR");
  std::filesystem::remove_all(empty);
}

TEST(Report, PageDataIsTheDumpOfOneDocument) {
  // make_report_html writes the page's data member by member; the text must be what dump() of
  // the whole document writes (keys in order, compact, bad UTF-8 replaced, "</" escaped).
  const std::string dir = sample::temp_path("page_data");
  std::filesystem::create_directories(dir);
  setenv("NPUSIM_WEB_DIR", dir.c_str(), 1);  // this test's own process (one per test)
  std::ofstream(std::filesystem::path(dir) / "report-template.html")
      << "<title>t</title><script type=\"application/json\" id=\"npusim-data\">__NPUSIM_DATA__</script>";
  const Trace a = sample_trace();
  Trace b = sample_trace();
  b.ops[0].name = "gemm</script>\xff";
  const Roofline ra = make_roofline(a), rb = make_roofline(b);
  const json sa = make_summary(a, ra), sb = make_summary(b, rb);
  const json timeline = {{"units", json::array({"mac", "dma"})}};
  const json groups = json::array({{{"group", "g0"}, {"saved_bytes", 12}}});
  const json pairs = json::array({{{"run", 1}, {"arrows", json::array()}}});
  const std::vector<PlotArrow> arrows = {{"gemm0", "gemm0+relu1"}};
  ReportRun second{"fused", &rb, &sb, &timeline};
  const std::string html = make_report_html({{"none", &ra, &sa}, second}, arrows, "cmp", groups, pairs);
  const json expected = {
      {"title", "cmp"},
      {"arrows", json::array({{{"from", "gemm0"}, {"to", "gemm0+relu1"}}})},
      {"compare_groups", groups},
      {"pairs", pairs},
      {"runs",
       json::array({{{"label", "none"}, {"roofline", to_json(ra)}, {"summary", sa}, {"timeline", nullptr}},
                    {{"label", "fused"}, {"roofline", to_json(rb)}, {"summary", sb}, {"timeline", timeline}}})}};
  std::string text = expected.dump(-1, ' ', false, json::error_handler_t::replace);
  for (std::size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 3))
    text.insert(at + 1, "\\");
  const std::string open = R"(<script type="application/json" id="npusim-data">)";
  const std::size_t begin = html.find(open) + open.size();
  EXPECT_EQ(html.substr(begin, html.rfind("</script>") - begin), text);
  EXPECT_NE(text.find("gemm<\\/script>\xef\xbf\xbd"), std::string::npos);  // escaped, U+FFFD
  unsetenv("NPUSIM_WEB_DIR");
  std::filesystem::remove_all(dir);
}

// ---- npusim inspect ----------------------------------------------------------------------

TEST(Inspect, TerminalReportOfTheSampleTrace) {
  InspectOptions o;
  o.source = "trace.json";
  const std::string text = inspect_report(sample_trace(), o);
  EXPECT_EQ(text.rfind("tiny on test-npu, fusion none  (trace.json)\n", 0), 0u) << text;
  // Headline: 1500 cycles; 1e6 MACs; 140 kB of DRAM traffic at 14.4 ops/B.
  EXPECT_NE(text.find("1,500 cycles"), std::string::npos) << text;
  EXPECT_NE(text.find("intensity 14.4 ops/B"), std::string::npos) << text;
  // The network's bound in words, as summary.json's bound_text: latency at 1.4 / 2.4 of the DRAM roof.
  EXPECT_NE(text.find("bound      latency: 58.3 % of the DRAM roof ("), std::string::npos) << text;
  EXPECT_NE(text.find("; dominant loss: DMA wait; bottleneck level dram"), std::string::npos) << text;
  // Units: the MAC array is busy 0.5 of 1.5 us.
  EXPECT_NE(text.find("MAC array       33.3 %"), std::string::npos) << text;
  // Stalls: the MAC array waits on DMA 1 us of 1.5 (66.7 %).
  EXPECT_NE(text.find("DMA wait        66.7 %"), std::string::npos) << text;
  // Top table: gemm0 (2/3 of the time) before relu1 (1/3); the view has no time.
  const std::size_t gemm = text.find("    1  gemm0"), relu = text.find("    2  relu1");
  EXPECT_NE(gemm, std::string::npos) << text;
  EXPECT_NE(relu, std::string::npos) << text;
  EXPECT_EQ(text.find("flatten2"), std::string::npos) << text;
}

TEST(Inspect, GroupsAndTop) {
  InspectOptions o;
  o.groups = true;
  o.top = 1;
  const std::string text = inspect_report(sample_trace(), o);
  EXPECT_NE(text.find("Top 1 groups by time share"), std::string::npos) << text;
  EXPECT_NE(text.find("    1  gemm0"), std::string::npos) << text;
  EXPECT_EQ(text.find("relu1_chain"), std::string::npos) << text;
}

}  // namespace
}  // namespace npusim::traces
