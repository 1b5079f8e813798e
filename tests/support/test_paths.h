#pragma once
// Where the tests find their inputs and the binary they drive. The paths are compiled into
// test_paths.cpp alone (the library npusim_test_paths), so that every other test object is the same
// in any clone of the tree and ccache reuses it (scripts/ccache-env.sh).

namespace test_paths {

/// The checkout the tests were built from (workloads/zoo, docs, tests/golden, ...).
const char* source_dir();
/// tests/data of that checkout.
const char* data_dir();
/// The npusim binary of the same build.
const char* npusim_binary();

}  // namespace test_paths
