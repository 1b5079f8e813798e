// Golden outputs: what npusim answers, checked in. summary.json and schedule.json of every zoo
// network on every preset under the none, greedy and search policies are compared figure by
// figure, exactly, with tests/golden/<network>/<preset>.<policy>.{summary,schedule}.json; so are
// a few real exported models of the ONNX corpus (tests/golden/corpus/<model>/..., the Corpus/
// cases: CTest corpus_golden, which needs the corpus export, label corpus). A change
// that moves any cycle count, byte, energy or grouping fails here with a readable diff; when the
// move is intended, regenerate with scripts/update-golden.sh and say why in the commit message
// (docs/architecture.md, "Golden outputs").
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/engine/run_pipeline.h"
#include "sim/scheduler/schedule_file.h"
#include "tests/support/test_paths.h"

namespace npusim::engine {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

/// A run whose outputs are checked in. `corpus`: the workload is a model of the ONNX corpus
/// (scripts/export_corpus.py), read from $NPUSIM_CORPUS_DIR/<workload>.onnx.
struct Case {
  std::string workload, preset, fusion;
  bool corpus = false;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.workload << (c.corpus ? " (corpus)" : "") << " on " << c.preset << ", fusion " << c.fusion;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const char* w :
       {"small_cnn", "mobilenet_v2", "resnet18", "resnet50", "ds_cnn_kws", "bert_base_layer", "vit_s16_block"})
    for (const char* p : {"edge-s", "edge-m", "edge-l"})
      for (const char* f : {"none", "greedy", "search"}) out.push_back({w, p, f});
  return out;
}

/// Corpus models chosen for what the zoo lacks, each exported by torch as users export: an
/// SE/hardswish CNN, PyTorch's own int8 QDQ flow, a GPT-style decoder (Gather embeddings, Trilu
/// mask, attention as exported) and a Concat-heavy net of opset 8. Every preset under none and
/// greedy; the search on edge-m (each search simulates its finalists: the slow case).
std::vector<Case> corpus_cases() {
  std::vector<Case> out;
  for (const char* w :
       {"mobilenet_v3_small_op13", "mobilenet_v2_torch_int8_op13", "gpt_mini_op14", "squeezenet1_1_op8"}) {
    for (const char* p : {"edge-s", "edge-m", "edge-l"})
      for (const char* f : {"none", "greedy"}) out.push_back({w, p, f, true});
    out.push_back({w, "edge-m", "search", true});
  }
  return out;
}

fs::path golden_dir() {
  return fs::path(test_paths::source_dir()) / "tests" / "golden";
}

fs::path golden_file(const Case& c, const char* what) {
  return golden_dir() / (c.corpus ? "corpus/" + c.workload : c.workload) /
         (c.preset + "." + c.fusion + "." + what + ".json");
}

/// The workload argument of a case: a zoo name, or the corpus model's file.
std::string workload_of(const Case& c) {
  if (!c.corpus) return c.workload;
  const char* dir = std::getenv("NPUSIM_CORPUS_DIR");
  if (dir == nullptr || *dir == '\0') return "";
  return (fs::path(dir) / (c.workload + ".onnx")).string();
}

/// Wall-clock figures: the only parts of the outputs that differ between two identical runs.
void drop_wall_clock(json& schedule) {
  if (schedule.contains("search")) schedule["search"].erase("search_seconds");
}

/// Provenance (which build wrote the file, and the hash of its resolved config) changes with
/// every commit, or with any config key added: the golden figures are compared without it.
json without_provenance(json j) {
  j.erase("provenance");
  return j;
}

std::string show(const json& v) {
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

/// Every place where `now` differs from `golden`, as "path: golden G, now N (+x %)" lines.
void diff(const json& golden, const json& now, const std::string& path, std::vector<std::string>& out) {
  if (golden == now) return;
  if (golden.is_object() && now.is_object()) {
    for (auto it = golden.begin(); it != golden.end(); ++it) {
      const std::string p = path + "." + it.key();
      if (!now.contains(it.key()))
        out.push_back(p + ": in the golden file, missing now");
      else
        diff(*it, now.at(it.key()), p, out);
    }
    for (auto it = now.begin(); it != now.end(); ++it)
      if (!golden.contains(it.key())) out.push_back(path + "." + it.key() + ": new, " + show(*it));
    return;
  }
  if (golden.is_array() && now.is_array()) {
    if (golden.size() != now.size())
      out.push_back(path + ": " + std::to_string(golden.size()) + " entries in the golden file, " +
                    std::to_string(now.size()) + " now");
    for (std::size_t i = 0; i < std::min(golden.size(), now.size()); ++i) {
      const json& g = golden[i];
      // Ops and groups are named: a path with the name reads better than an index.
      const std::string name = g.is_object() && g.contains("name") && g["name"].is_string()
                                   ? "[" + g["name"].get<std::string>() + "]"
                                   : "[" + std::to_string(i) + "]";
      diff(g, now[i], path + name, out);
    }
    return;
  }
  std::string line = path + ": golden " + show(golden) + ", now " + show(now);
  if (golden.is_number() && now.is_number() && golden.get<double>() != 0) {
    char pct[48];
    std::snprintf(pct, sizeof pct, " (%+.3g %%)", 100.0 * (now.get<double>() / golden.get<double>() - 1));
    line += pct;
  }
  out.push_back(line);
}

json read_json(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return json::parse(ss.str());
}

void check_or_update(const fs::path& file, const json& now) {
  if (const char* update = std::getenv("NPUSIM_GOLDEN_UPDATE"); update && std::string(update) == "1") {
    fs::create_directories(file.parent_path());
    std::ofstream(file) << now.dump(1) << "\n";
    return;
  }
  ASSERT_TRUE(fs::exists(file)) << file << " is missing: run scripts/update-golden.sh";
  std::vector<std::string> lines;
  diff(read_json(file), now, "", lines);
  std::string text;
  for (std::size_t i = 0; i < lines.size() && i < 40; ++i) text += "  " + lines[i] + "\n";
  if (lines.size() > 40) text += "  ... and " + std::to_string(lines.size() - 40) + " more\n";
  EXPECT_TRUE(lines.empty()) << file.filename().string() << " differs from the golden file in " << lines.size()
                             << " places:\n"
                             << text
                             << "If the change is intended, run scripts/update-golden.sh and say why in the commit.";
}

class Golden : public ::testing::TestWithParam<Case> {};

TEST_P(Golden, SummaryAndScheduleAsCheckedIn) {
  const Case& c = GetParam();
  RunSpec spec;
  spec.config = c.preset;
  spec.workload = workload_of(c);
  ASSERT_FALSE(spec.workload.empty()) << "NPUSIM_CORPUS_DIR is not set: run the CTest corpus_golden, whose "
                                         "fixture exports the corpus (scripts/export_corpus.py)";
  spec.fusion = c.fusion;
  spec.out.clear();
  const LoadedRun run = load_run(spec);
  json schedule = sched::to_json(run.plan, run.graph);
  drop_wall_clock(schedule);
  const SimulatedRun sim = simulate_run(spec, run);
  check_or_update(golden_file(c, "schedule"), without_provenance(schedule));
  check_or_update(golden_file(c, "summary"), without_provenance(sim.summary));
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string n = info.param.workload + "_" + info.param.preset + "_" + info.param.fusion;
  for (char& ch : n)
    if (ch == '-') ch = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(Zoo, Golden, ::testing::ValuesIn(cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Corpus, Golden, ::testing::ValuesIn(corpus_cases()), case_name);

/// Search (objective cycles, the default) is never slower than greedy on any zoo network and
/// preset. Read from the golden summaries: Golden above pins every live run to them, so a search
/// that became slower than greedy fails there (its figures moved) or, once the golden files are
/// regenerated, here. It holds by construction (greedy is one of the search's simulated
/// finalists, docs/scheduling.md), so a failure means the finalists or their ranking broke.
TEST(SearchVersusGreedy, NeverSlowerOnTheZooInTheGoldenRuns) {
  std::size_t checked = 0;
  for (const Case& c : cases()) {
    if (c.fusion != "search") continue;
    const json search = read_json(golden_file(c, "summary"));
    const json greedy = read_json(golden_file({c.workload, c.preset, "greedy"}, "summary"));
    EXPECT_LE(search.at("cycles").get<std::uint64_t>(), greedy.at("cycles").get<std::uint64_t>())
        << c.workload << " on " << c.preset;
    ++checked;
  }
  EXPECT_EQ(checked, 21u);  // 7 networks x 3 presets
}

}  // namespace
}  // namespace npusim::engine
