#pragma once
// The source tree npusim was built from. Its path is compiled into source_tree.cpp alone: a path
// in a compile definition of a whole library would make every object of a build in another clone
// differ, so ccache could reuse none of them (scripts/ccache-env.sh).

namespace npusim {

/// The checkout this binary was built from: the default folder of configs/, workloads/zoo/ and
/// web/dist/ when NPUSIM_DATA_DIR is unset.
const char* built_source_dir();

}  // namespace npusim
