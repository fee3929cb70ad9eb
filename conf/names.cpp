#include "conf/names.h"

namespace conf {

namespace {
bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
}  // namespace

bool HasControlChar(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

bool IsValidIfName(std::string_view name) {
  // IFNAMSIZ is 16 including the terminating NUL.
  if (name.empty() || name.size() > 15) return false;
  if (name == "." || name == "..") return false;
  for (unsigned char c : name) {
    // The kernel rejects '/', ':' and isspace(); control characters are
    // allowed by it but break every tool that prints names.
    if (c == '/' || c == ':' || c == ' ' || c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

bool IsPlainFileName(std::string_view name, size_t max_bytes) {
  if (name.empty() || name.size() > max_bytes) return false;
  if (name == "." || name == "..") return false;
  if (name.find('/') != std::string_view::npos) return false;
  return !HasControlChar(name);
}

std::optional<std::string> NormalizeMac(std::string_view s) {
  if (s.size() != 17) return std::nullopt;
  std::string out(s);
  for (size_t i = 0; i < out.size(); ++i) {
    if (i % 3 == 2) {
      if (out[i] != ':') return std::nullopt;
    } else {
      if (!IsHexDigit(out[i])) return std::nullopt;
      if (out[i] >= 'A' && out[i] <= 'F') out[i] = static_cast<char>(out[i] - 'A' + 'a');
    }
  }
  return out;
}

}  // namespace conf
