#include "test/fuzz/fuzz_input.h"

namespace fuzz {
namespace {

constexpr std::string_view kSeparator = "\n%%\n";

Invocation ParseInvocation(std::string_view text) {
  Invocation inv;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == 0) {  // the empty line: the rest is stdin
      inv.stdin_bytes = std::string(text.substr(1));
      break;
    }
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    std::string_view value = line.substr(eq + 1);
    value = value.substr(0, value.find('\0'));
    inv.env[std::string(line.substr(0, eq))] = std::string(value);
  }
  return inv;
}

}  // namespace

std::vector<Invocation> ParseInput(std::string_view data) {
  std::vector<Invocation> out;
  while (out.size() < kMaxInvocations) {
    const size_t sep = data.find(kSeparator);
    out.push_back(ParseInvocation(data.substr(0, sep)));
    if (sep == std::string_view::npos) break;
    data.remove_prefix(sep + kSeparator.size());
  }
  return out;
}

}  // namespace fuzz
