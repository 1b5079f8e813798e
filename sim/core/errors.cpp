#include "sim/core/errors.h"

#include <filesystem>
#include <new>

#include <nlohmann/json.hpp>

#include "sim/core/json_input.h"

namespace npusim {

std::string ErrorReport::line(const std::string& context) const {
  return "npusim: " + label + (context.empty() ? "" : " (" + context + ")") + ": " + message;
}

ErrorReport report_exception(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const InputError& x) {
    return {2, "input", "error", x.what()};
  } catch (const nlohmann::json::exception& x) {
    // Every reader turns bad JSON into an InputError; reaching here is a bug, said in our words.
    return {1, "internal", "internal error", "unexpected JSON content: " + json_error_text(x)};
  } catch (const SimulationError& x) {
    return {1, "simulation", "simulation error", x.what()};
  } catch (const std::filesystem::filesystem_error& x) {
    // The library's "filesystem error: ... [path]" in our words: the path and what the system said.
    std::string paths = x.path1().string();
    if (!x.path2().empty()) paths += " -> " + x.path2().string();
    return {1, "simulation", "error", "cannot write or read " + paths + ": " + x.code().message()};
  } catch (const std::bad_alloc&) {
    return {1, "simulation", "simulation error", "out of memory"};
  } catch (const std::exception& x) {
    return {1, "simulation", "error", x.what()};
  } catch (...) {
    return {1, "internal", "internal error", "an unknown exception"};
  }
}

}  // namespace npusim
