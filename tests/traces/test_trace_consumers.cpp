// What other trace consumers need. DevTools-model parsers (@tracerbench/trace-model,
// devtools-timeline-model) index every event by its category and fail on one without `cat`; a flow
// arrow is more use with the commands it joins in its `args`.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "tests/traces/sample_trace.h"
#include "traces/trace_io.h"

namespace npusim::traces {
namespace {

using nlohmann::json;

json written_events() {
  const std::string path = sample::temp_path("consumers.json");
  write_trace_json(sample::sample_trace(), path);
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return json::parse(s.str()).at("traceEvents");
}

TEST(TraceConsumers, EveryEventHasACategory) {
  std::set<std::string> phases;
  for (const json& e : written_events()) {
    phases.insert(e.at("ph").get<std::string>());
    ASSERT_TRUE(e.contains("cat") && e["cat"].is_string() && !e["cat"].get<std::string>().empty()) << e.dump();
    if (e["ph"] == "M") {
      EXPECT_EQ(e["cat"], "__metadata") << e.dump();
    }
    if (e["ph"] == "C") {
      EXPECT_EQ(e["cat"], "counter") << e.dump();
    }
  }
  // The sample has every kind of event: metadata, slices, counters and flow ends.
  EXPECT_EQ(phases, (std::set<std::string>{"M", "X", "C", "s", "f"}));
}

TEST(TraceConsumers, FlowsNameTheLoadAndTheCommandThatWaitedForIt) {
  // sample_trace: command 1 (GEMM) depends on load 0, command 4 (vector) on load 3; the DMA
  // stores 2 and 5 are not computations, so two arrows, ids 1 and 2, each with two ends.
  std::vector<json> flows;
  for (const json& e : written_events())
    if (e["ph"] == "s" || e["ph"] == "f") flows.push_back(e);
  ASSERT_EQ(flows.size(), 4u);
  const json want[] = {{{"load", 0}, {"consumer", 1}}, {{"load", 3}, {"consumer", 4}}};
  for (const json& f : flows) {
    const std::size_t id = f.at("id").get<std::size_t>();
    ASSERT_TRUE(id == 1 || id == 2) << f.dump();
    EXPECT_EQ(f.at("args"), want[id - 1]) << f.dump();
  }
}

TEST(TraceConsumers, TheReaderStillReadsTheTraceBack) {
  const std::string path = sample::temp_path("consumers_back.json");
  write_trace_json(sample::sample_trace(), path);
  EXPECT_EQ(read_trace_json(path).commands.size(), 6u);
}

}  // namespace
}  // namespace npusim::traces
