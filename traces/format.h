#pragma once
// Formatting shared by the plots, the reports and the terminal: numbers with units, HTML text.
#include <string>

namespace npusim::traces {

/// Three significant digits with an SI prefix: "2.05 Tops/s", "17.1 GB/s", "629 uJ", "42 ps".
std::string si(double v, const std::string& unit);

/// `s` safe as HTML text and inside a quoted attribute (either quote): & < > " ' escaped.
std::string html_escape(const std::string& s);

}  // namespace npusim::traces
