#pragma once
// The static part of report.html: CSS and the JS that draws the rooflines (inline SVG with hover
// details), the tables and the breakdown bars from the embedded data. Internal to traces/.
namespace npusim::traces::report_page {

/// The page up to the data: report.cpp writes `kHead`, the title, `kData`, the JSON, `kTail`.
extern const char* const kHead;
extern const char* const kData;
extern const char* const kTail;

}  // namespace npusim::traces::report_page
