#include "traces/report_page.h"
#include "sim/core/source_tree.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace npusim::traces::report_page {

namespace {

namespace fs = std::filesystem;

const std::string kDataElement = R"(<script type="application/json" id="npusim-data">)";
const std::string kPlaceholder = "__NPUSIM_DATA__";

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

const char* const kBuildCommand = "scripts/build.sh (or: npm --prefix web ci && npm --prefix web run build)";

std::string template_path() {
  if (const std::string d = env("NPUSIM_WEB_DIR"); !d.empty()) return (fs::path(d) / "report-template.html").string();
  if (const std::string d = env("NPUSIM_DATA_DIR"); !d.empty())
    return (fs::path(d) / "web" / "dist" / "report-template.html").string();
  return (fs::path(built_source_dir()) / "web" / "dist" / "report-template.html").string();
}

std::optional<std::string> load_template() {
  std::ifstream in(template_path(), std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = s.str();
  if (text.find(kDataElement + kPlaceholder) == std::string::npos) return std::nullopt;
  return text;
}

std::string fill(const std::string& tmpl, const std::string& title_html, const std::string& data_json) {
  std::string out = tmpl;
  const std::size_t data_at = out.find(kDataElement + kPlaceholder) + kDataElement.size();
  out.replace(data_at, kPlaceholder.size(), data_json);
  const std::size_t open = out.find("<title>"), close = out.find("</title>");
  if (open != std::string::npos && close != std::string::npos && open < close && close < data_at)
    out.replace(open + 7, close - open - 7, title_html);
  return out;
}

}  // namespace npusim::traces::report_page
