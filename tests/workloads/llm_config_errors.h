#pragma once
// The message a config.json text is refused with, shared by the language-model readers' tests.
#include <string>

#include "sim/core/errors.h"
#include "workloads/llm/llm_config.h"

namespace npusim::workloads::llm {

/// parse_llm_config's InputError message for `json` read as `source`; "" when it is accepted.
inline std::string config_error(const std::string& json, const std::string& source = "model.json") {
  try {
    parse_llm_config(json, source);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace npusim::workloads::llm
