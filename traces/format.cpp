#include "traces/format.h"

#include <cmath>
#include <cstdio>

namespace npusim::traces {

std::string si(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "-";
  static const char* const up[] = {"", "k", "M", "G", "T", "P", "E"};
  static const char* const down[] = {"", "m", "u", "n", "p", "f"};
  const char* prefix = "";
  double a = std::fabs(v);
  if (a >= 1) {
    int i = 0;
    for (; a >= 999.5 && i < 6; ++i) a /= 1000, v /= 1000;
    prefix = up[i];
  } else if (a > 0) {
    int i = 0;
    for (; a < 0.9995 && i < 5; ++i) a *= 1000, v *= 1000;
    prefix = down[i];
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefix, unit.c_str());
  return buf;
}

std::string html_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace npusim::traces
