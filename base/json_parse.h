// Parsing JSON that comes from outside the process: stdin, an IPAM plugin's output, the plugin's own state
// and claim files, a node conflist. Everything read is hostile input: the text must be JSON, hold no NUL, and
// nest at most kMaxJsonDepth levels. nlohmann parses iteratively, but copying, comparing and dumping a tree
// recurse and would overflow the stack.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/error.h"

namespace base {

inline constexpr int kMaxJsonDepth = 64;

/// The JSON value of `text`, or kDecoding naming `what` ("config", "IPAM output", "state file /run/...") and
/// why: not JSON, a NUL byte, or nested deeper than `max_depth`.
Result<nlohmann::json> ParseJson(std::string_view text, const std::string& what,
                                 int max_depth = kMaxJsonDepth);

}  // namespace base
