// The fuzz input format: one or more CNI invocations in a row, each an
// environment and a stdin, run against the same in-memory node.
//
//   input      := invocation ("\n%%\n" invocation)*      at most kMaxInvocations
//   invocation := env-line* "\n" stdin                    an empty line ends the env
//   env-line   := NAME "=" VALUE "\n"                     lines without '=' are ignored
//
// A value ends at its first NUL byte, as execve(2) would cut it. Variables
// named FUZZ_* in the first invocation shape the node (see fuzz_node.h) and
// are not passed to the plugin. With no empty line the whole invocation is
// environment and stdin is empty. Seeds in test/fuzz/corpus/ are readable
// text in this format.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace fuzz {

inline constexpr size_t kMaxInvocations = 8;

struct Invocation {
  std::map<std::string, std::string> env;
  std::string stdin_bytes;
};

/// Splits `data` into invocations (never more than kMaxInvocations; the rest
/// is dropped).
std::vector<Invocation> ParseInput(std::string_view data);

}  // namespace fuzz
