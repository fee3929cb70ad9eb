#include "test/fuzz/fuzz_input.h"

#include <algorithm>

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

// "@KIND [ARG]\nbytes" into `out`; false for an unknown kind or a bad ARG
// (the section is dropped).
bool ParseInject(std::string_view text, Section& out) {
  const size_t nl = text.find('\n');
  std::string_view head = text.substr(1, nl == std::string_view::npos ? std::string_view::npos : nl - 1);
  out.bytes = nl == std::string_view::npos ? std::string() : std::string(text.substr(nl + 1));
  const size_t sp = head.find(' ');
  const std::string_view kind = head.substr(0, sp);
  out.arg = sp == std::string_view::npos ? std::string() : std::string(head.substr(sp + 1));
  if (kind == "file") {
    out.kind = Section::Kind::kFile;
    return SafeDataPath(out.arg);
  }
  if (kind == "ipam") {
    out.kind = Section::Kind::kIpam;
    return out.arg.empty() ||
           (out.arg.size() <= 3 &&
            std::all_of(out.arg.begin(), out.arg.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            std::stoi(out.arg) <= 255);
  }
  if (kind == "conflist") {
    out.kind = Section::Kind::kConflist;
    return true;
  }
  if (kind == "nri") {
    out.kind = Section::Kind::kNri;
    return out.arg.empty() ||
           (out.arg.size() <= 5 &&
            std::all_of(out.arg.begin(), out.arg.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
            std::stoi(out.arg) >= 1 && std::stoi(out.arg) <= 65536);
  }
  return false;
}

}  // namespace

bool SafeDataPath(std::string_view path) {
  if (path.empty() || path.size() > 255) return false;
  int components = 0;
  while (true) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (part.empty() || part == "." || part == ".." || ++components > 4) return false;
    for (char c : part)
      if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
            c == '_' || c == '-' || c == '@' || c == '%'))
        return false;
    if (slash == std::string_view::npos) return true;
    path.remove_prefix(slash + 1);
  }
}

std::vector<Section> ParseInput(std::string_view data) {
  std::vector<Section> out;
  size_t invocations = 0;
  bool more = true;
  while (more && out.size() < kMaxSections) {
    const size_t sep = data.find(kSeparator);
    const std::string_view text = data.substr(0, sep);
    more = sep != std::string_view::npos;
    if (more) data.remove_prefix(sep + kSeparator.size());
    Section s;
    if (!text.empty() && text.front() == '@') {
      if (ParseInject(text, s)) out.push_back(std::move(s));
      continue;
    }
    if (invocations == kMaxInvocations) continue;
    ++invocations;
    s.invocation = ParseInvocation(text);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fuzz
