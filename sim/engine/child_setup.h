#pragma once
// The steps a child process takes to set itself up, shared by the ways it comes to be: a fork of
// its parent (child.cpp) and a fork of the zygote (zygote.cpp). Only for those two files.
#include <string>

#include "sim/engine/child.h"

namespace npusim::engine::detail {

/// RLIMIT_AS and the RLIMIT_CPU backstop of `o`, applied to the calling process.
void apply_limits(const ChildOptions& o);
/// stdout and stderr into the log file `log_path`, or stdout to /dev/null and stderr into the
/// parent's pipe `err_fd` (>= 0); neither keeps the process's own.
void redirect_output(const std::string& log_path, int err_fd);
/// The heap of the executable's own allocator set up in the calling child, once its limits apply
/// (engine::set_worker_heap); false when the executable registered none.
bool prepare_own_heap();

}  // namespace npusim::engine::detail
