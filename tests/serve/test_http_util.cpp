// The socket-free parts of `npusim serve`: request targets, static paths that must stay inside
// the asset folder, query numbers, and the run-folder tar.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/core/errors.h"
#include "sim/serve/http_util.h"
#include "sim/serve/tar_writer.h"
#include "tests/support/cli_support.h"

namespace npusim::serve {
namespace {

namespace fs = std::filesystem;

TEST(HttpUtil, TargetsAreDecodedOrRefused) {
  const auto t = parse_target("/api/uploads?name=my%20net.onnx&x=a+b&flag");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->path, "/api/uploads");
  EXPECT_EQ(t->query.at("name"), "my net.onnx");
  EXPECT_EQ(t->query.at("x"), "a b");
  EXPECT_EQ(t->query.at("flag"), "");
  EXPECT_EQ(parse_target("/a%2e%2e/b")->path, "/a../b");
  for (const char* bad : {"", "api", "/%", "/%4", "/%zz", "/a%00b", "/?k=%g1"}) EXPECT_FALSE(parse_target(bad)) << bad;
}

TEST(HttpUtil, AQueryParameterGivenTwiceIsRefusedByName) {
  // Whichever value a map kept (the last, or the first) would be a silent choice.
  for (const char* target : {"/x?bins=10&bins=20", "/x?a=1&bins=10&bins=10", "/x?b%69ns=1&bins=2"}) {
    try {
      parse_target(target);
      ADD_FAILURE() << target << " accepted";
    } catch (const InputError& e) {
      EXPECT_STREQ(e.what(),
                   "query parameter 'bins': expected once, found it given twice (each query parameter takes one value)")
          << target;
    }
  }
  EXPECT_EQ(parse_target("/x?bins=10&begin_ps=20")->query.size(), 2u);
}

TEST(HttpUtil, StaticPathsStayInsideTheAssetFolder) {
  const fs::path root = test::scratch("assets"), outside = test::scratch("outside");
  fs::create_directories(root / "assets");
  fs::create_directories(outside);
  std::ofstream(root / "index.html") << "page";
  std::ofstream(root / "assets" / "app.js") << "js";
  std::ofstream(outside / "secret.txt") << "secret";
  fs::create_symlink(outside / "secret.txt", root / "assets" / "link.txt");  // a symlink out of the folder
  EXPECT_EQ(static_file(root, "/"), fs::canonical(root / "index.html"));
  EXPECT_EQ(static_file(root, "/assets/app.js"), fs::canonical(root / "assets" / "app.js"));
  for (const char* bad : {"/../outside/secret.txt", "/assets/../../outside/secret.txt", "/assets/link.txt", "/assets/",
                          "/assets", "/missing.js", "/assets/..\\..\\x", "/./index.html", "relative"})
    EXPECT_FALSE(static_file(root, bad)) << bad;
  fs::remove_all(root);
  fs::remove_all(outside);
}

TEST(HttpUtil, QueryNumbersAreCheckedAgainstTheirRange) {
  const auto t = parse_target("/x?bins=400&neg=-1&big=18446744073709551616&word=ten&max=4000");
  EXPECT_EQ(query_uint(*t, "bins", 1, 1, 4000), 400u);
  EXPECT_EQ(query_uint(*t, "absent", 7, 1, 10), 7u);
  EXPECT_EQ(query_uint(*t, "max", 1, 1, 4000), 4000u);
  for (const char* bad : {"neg", "big", "word"}) EXPECT_THROW(query_uint(*t, bad, 0, 0, ~0ull), InputError) << bad;
  EXPECT_THROW(query_uint(*parse_target("/x?bins=4001"), "bins", 0, 1, 4000), InputError);
  // The range said is the range checked: 0 is below 1 and named with it.
  try {
    query_uint(*parse_target("/x?bins=0"), "bins", 400, 1, 4000);
    ADD_FAILURE() << "bins=0 accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "query parameter 'bins': expected a whole number from 1 to 4000, found '0'");
  }
}

TEST(TarWriter, TheSystemTarReadsTheArchiveBack) {
  const fs::path dir = test::scratch("tar_in"), out = test::scratch("tar_out");
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "summary.json") << "{\"cycles\": 1}\n";
  std::ofstream(dir / "empty.txt");
  std::ofstream(dir / "block.bin") << std::string(512, 'x');  // exactly one block: no padding
  const std::string tar = tar_folder(dir, "npusim-r1");
  // Headers + data rounded up to 512 B + two zero blocks: 3 x 512 + 512 (summary) + 0 + 512, + 1024.
  EXPECT_EQ(tar.size(), 3u * 512 + 512 + 0 + 512 + 1024);
  fs::create_directories(out);
  std::ofstream(out / "a.tar", std::ios::binary) << tar;
  ASSERT_EQ(std::system(("tar -xf " + (out / "a.tar").string() + " -C " + out.string()).c_str()), 0);
  EXPECT_EQ(read_file((out / "npusim-r1" / "summary.json").string()), "{\"cycles\": 1}\n");
  EXPECT_EQ(fs::file_size(out / "npusim-r1" / "block.bin"), 512u);
  EXPECT_TRUE(fs::exists(out / "npusim-r1" / "empty.txt"));
  EXPECT_FALSE(fs::exists(out / "npusim-r1" / "sub"));  // only the folder's files
  fs::remove_all(dir);
  fs::remove_all(out);
}

TEST(TarWriter, SubfoldersKeepTheirPath) {
  // An LLM run's folder: summary.json beside prefill/ and decode/, each a run folder.
  const fs::path dir = test::scratch("tar_sub_in"), out = test::scratch("tar_sub_out");
  fs::create_directories(dir / "prefill");
  std::ofstream(dir / "summary.json") << "{}\n";
  std::ofstream(dir / "prefill" / "summary.json") << "{\"cycles\": 2}\n";
  const std::string tar = tar_folder(dir, "npusim-r2");
  // Two headers, two one-block bodies, two zero blocks.
  EXPECT_EQ(tar.size(), 2u * 512 + 2 * 512 + 1024);
  EXPECT_EQ(tar.substr(512 * 2, 30).c_str(), std::string("npusim-r2/summary.json"));  // sorted by path
  fs::create_directories(out);
  std::ofstream(out / "a.tar", std::ios::binary) << tar;
  ASSERT_EQ(std::system(("tar -xf " + (out / "a.tar").string() + " -C " + out.string()).c_str()), 0);
  EXPECT_EQ(read_file((out / "npusim-r2" / "prefill" / "summary.json").string()), "{\"cycles\": 2}\n");
  fs::remove_all(dir);
  fs::remove_all(out);
}

}  // namespace
}  // namespace npusim::serve
