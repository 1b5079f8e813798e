#pragma once
// report.html's page: the web front end (web/, the same sources as `npusim serve`'s live page)
// built into one self-contained file, web/dist/report-template.html, into which a run's data is
// inlined. Read at run time, so the C++ build needs no node/npm; without the built file,
// report.html is skipped with a warning that names the build command. Internal to traces/.
#include <optional>
#include <string>

namespace npusim::traces::report_page {

/// The built template: $NPUSIM_WEB_DIR/report-template.html, else
/// $NPUSIM_DATA_DIR/web/dist/report-template.html, else the source tree's web/dist.
std::string template_path();

/// The template's text, or nullopt when it is not built (or has no data placeholder).
std::optional<std::string> load_template();

/// The page: `tmpl` with its <title> set to `title_html` (already escaped) and the data
/// element's placeholder replaced by `data_json` (already safe inside a <script> element).
std::string fill(const std::string& tmpl, const std::string& title_html, const std::string& data_json);

/// What to run to build the template (for the warning).
extern const char* const kBuildCommand;

}  // namespace npusim::traces::report_page
