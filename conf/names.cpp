#include "conf/names.h"

namespace conf {

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

}  // namespace conf
