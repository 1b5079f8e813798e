// Output folders are npusim's only by npusim's marker, and a rerun replaces only the files the
// marker lists: the user's files beside them, and inside npusim's folders, stay.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sim/core/errors.h"
#include "sim/core/file_util.h"
#include "sim/engine/output_dir.h"
#include "tests/support/scratch.h"

namespace fs = std::filesystem;
using npusim::InputError;
using npusim::engine::kOutputMarker;
using npusim::engine::OutputDir;

namespace {

fs::path fresh(const std::string& name) {
  const fs::path p = npusim::test::scratch_path("npusim_outdir", name);
  fs::create_directories(p);
  return p;
}

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

std::string text_of(const fs::path& p) {
  return npusim::read_file(p.string());
}

/// Every path under `dir`, relative, sorted (the hidden lock and temporaries included).
std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.push_back(fs::relative(e.path(), dir).string());
  std::sort(names.begin(), names.end());
  return names;
}

/// A run that writes `files` (relative path -> content) into `out`.
void run_writing(const fs::path& out, const std::vector<std::pair<std::string, std::string>>& files) {
  OutputDir dir(out.string());
  for (const auto& [rel, text] : files) put(dir.path() / rel, text);
  dir.commit();
}

}  // namespace

TEST(OutputDir, TheMarkerListsEveryFileAndFolderTheRunWrote) {
  const fs::path root = fresh("marker");
  run_writing(root / "out", {{"summary.json", "{}"}, {"plots/a.svg", "<svg/>"}});
  const auto marker = nlohmann::json::parse(text_of(root / "out" / kOutputMarker));
  EXPECT_EQ(marker.at("format"), "npusim output folder");
  EXPECT_EQ(marker.at("files"), nlohmann::json::array({"plots", "plots/a.svg", "summary.json"}));
  fs::remove_all(root);
}

TEST(OutputDir, AFolderWithoutTheMarkerIsNeverReplacedEvenWithASummaryJson) {
  // A summary.json among the user's files does not make the folder npusim's.
  const fs::path root = fresh("users");
  put(root / "out" / "summary.json", "mine");
  put(root / "out" / "thesis.tex", "\\documentclass{article}");
  try {
    OutputDir dir((root / "out").string());
    FAIL() << "a folder of the user's was accepted";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--out"), std::string::npos) << what;
    EXPECT_NE(what.find("summary.json, thesis.tex"), std::string::npos) << what;
    EXPECT_NE(what.find("never replaces files it did not write"), std::string::npos) << what;
  }
  EXPECT_EQ(text_of(root / "out" / "thesis.tex"), "\\documentclass{article}");
  EXPECT_EQ(text_of(root / "out" / "summary.json"), "mine");
  EXPECT_EQ(tree(root),
            (std::vector<std::string>{"out", "out/summary.json", "out/thesis.tex"}));  // no lock, no temporary
  fs::remove_all(root);
}

TEST(OutputDir, AnEmptyFolderIsTaken) {
  const fs::path root = fresh("empty");
  fs::create_directories(root / "out");
  run_writing(root / "out", {{"summary.json", "{}"}});
  EXPECT_EQ(tree(root), (std::vector<std::string>{"out", "out/" + std::string(kOutputMarker), "out/summary.json"}));
  fs::remove_all(root);
}

TEST(OutputDir, ARerunReplacesNpusimsFilesAndKeepsTheUsers) {
  const fs::path root = fresh("rerun");
  const fs::path out = root / "out";
  run_writing(out, {{"summary.json", "first"}, {"old_plot.svg", "first"}, {"plots/a.svg", "first"}});
  put(out / "notes.txt", "mine");           // beside npusim's files
  put(out / "plots" / "mine.png", "mine");  // inside one of npusim's folders
  put(out / "data" / "x.csv", "mine");      // a folder of the user's
  run_writing(out, {{"summary.json", "second"}, {"plots/a.svg", "second"}});
  // The earlier run's old_plot.svg is gone (npusim's, not rewritten); the user's three stay.
  EXPECT_EQ(tree(out), (std::vector<std::string>{std::string(kOutputMarker), "data", "data/x.csv", "notes.txt", "plots",
                                                 "plots/a.svg", "plots/mine.png", "summary.json"}));
  EXPECT_EQ(text_of(out / "summary.json"), "second");
  EXPECT_EQ(text_of(out / "plots" / "a.svg"), "second");
  EXPECT_EQ(text_of(out / "notes.txt"), "mine");
  EXPECT_EQ(text_of(out / "plots" / "mine.png"), "mine");
  EXPECT_EQ(text_of(out / "data" / "x.csv"), "mine");
  // The new marker claims only what the second run wrote.
  const auto marker = nlohmann::json::parse(text_of(out / kOutputMarker));
  EXPECT_EQ(marker.at("files"), nlohmann::json::array({"plots", "plots/a.svg", "summary.json"}));
  EXPECT_EQ(tree(root).size(), tree(out).size() + 1);  // nothing left beside: no lock, temporary or old folder
  // A third run keeps them again: they are still not npusim's.
  run_writing(out, {{"summary.json", "third"}});
  EXPECT_EQ(text_of(out / "notes.txt"), "mine");
  EXPECT_EQ(text_of(out / "plots" / "mine.png"), "mine");
  fs::remove_all(root);
}

TEST(OutputDir, AUsersFileUnderANameTheRunWritesStopsTheRunWithEverythingInPlace) {
  const fs::path root = fresh("clash");
  const fs::path out = root / "out";
  run_writing(out, {{"summary.json", "first"}});
  put(out / "trace.json", "mine");  // not the first run's: the user's
  OutputDir dir(out.string());
  put(dir.path() / "summary.json", "second");
  put(dir.path() / "trace.json", "second");
  try {
    dir.commit();
    FAIL() << "the user's trace.json was about to be replaced";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("found trace.json where this run writes its own trace.json"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(text_of(out / "trace.json"), "mine");
  EXPECT_EQ(text_of(out / "summary.json"), "first");
  fs::remove_all(root);
}

TEST(OutputDir, AMarkerThatIsNotNpusimsDoesNotClaimTheFolder) {
  const fs::path root = fresh("forged");
  for (const std::string marker : {"not json", R"({"format": "something else", "files": []})",
                                   R"({"format": "npusim output folder", "files": ["../x"]})",
                                   R"({"format": "npusim output folder", "files": ["/etc/passwd"]})"}) {
    fs::remove_all(root / "out");
    put(root / "out" / kOutputMarker, marker);
    put(root / "out" / "thesis.tex", "mine");
    EXPECT_THROW(OutputDir((root / "out").string()), InputError) << marker;
    EXPECT_EQ(text_of(root / "out" / "thesis.tex"), "mine");
  }
  fs::remove_all(root);
}
