#include "sim/core/source_tree.h"

namespace npusim {

const char* built_source_dir() {
  return NPUSIM_SOURCE_DIR;
}

}  // namespace npusim
