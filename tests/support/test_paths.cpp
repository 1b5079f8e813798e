#include "tests/support/test_paths.h"

namespace test_paths {

const char* source_dir() {
  return NPUSIM_SOURCE_DIR;
}
const char* data_dir() {
  return NPUSIM_TEST_DATA;
}
const char* npusim_binary() {
  return NPUSIM_BINARY;
}

}  // namespace test_paths
