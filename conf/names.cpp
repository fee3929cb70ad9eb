#include "conf/names.h"

#include <cstdint>

namespace conf {

namespace {
bool IsHexDigit(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
}  // namespace

bool HasControlChar(std::string_view s) {
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

bool IsValidUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xc2 && c <= 0xdf) {
      len = 2;
      cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      len = 3;
      cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;  // a continuation byte, 0xc0/0xc1 (overlong) or past 0xf4
    }
    if (s.size() - i < len) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff))) return false;  // overlong
    if (cp >= 0xd800 && cp <= 0xdfff) return false;                                               // surrogate
    i += len;
  }
  return true;
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
  return IsValidUtf8(name);
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
