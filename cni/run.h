// The plugin's entry point: one CNI invocation, from environment and stdin to
// stdout and an exit status. The only place an Error becomes CNI JSON.
#pragma once

#include <ostream>
#include <string>

#include "cni/env.h"

namespace cni {

/// Runs one invocation against the real kernel. Returns the exit status.
int Run(const Getenv& getenv, const std::string& stdin_bytes, std::ostream& out);

}  // namespace cni
