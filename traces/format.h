#pragma once
// Number formatting shared by the plots and the terminal report.
#include <string>

namespace npusim::traces {

/// Three significant digits with an SI prefix: "2.05 Tops/s", "17.1 GB/s", "629 uJ", "42 ps".
std::string si(double v, const std::string& unit);

}  // namespace npusim::traces
