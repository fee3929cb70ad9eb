#include "conf/names.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "base/escape.h"

namespace conf {

namespace {

constexpr size_t kMaxDeviceIdBytes = 256;

bool AllHex(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), IsHexDigit); }

// `s` has passed AllHex and has at most 8 digits.
uint32_t HexValue(std::string_view s) {
  uint32_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}
}  // namespace

bool HasControlChar(std::string_view s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; });
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : base::Utf8Length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool IsValidIfName(std::string_view name) {
  // IFNAMSIZ is 16 including the terminating NUL.
  if (name.empty() || name.size() > 15) return false;
  if (name == "." || name == "..") return false;
  // The kernel rejects '/', ':' and isspace(); control characters are
  // allowed by it but break every tool that prints names.
  return name.find_first_of("/: ") == std::string_view::npos && !HasControlChar(name) && IsValidUtf8(name);
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

std::optional<std::string> NormalizePci(std::string_view s) {
  const std::vector<std::string_view> parts = Split(s, ':');
  if (parts.size() != 2 && parts.size() != 3) return std::nullopt;
  std::string_view domain = parts.size() == 3 ? parts[0] : std::string_view("0000");
  std::string_view bus = parts[parts.size() - 2];
  std::string_view devfn = parts.back();
  if (domain.size() < 4 || domain.size() > 8 || !AllHex(domain)) return std::nullopt;
  if (bus.size() != 2 || !AllHex(bus)) return std::nullopt;
  if (devfn.size() != 4 || devfn[2] != '.') return std::nullopt;
  std::string_view dev = devfn.substr(0, 2);
  const char fn = devfn[3];
  if (!AllHex(dev) || HexValue(dev) > 0x1f) return std::nullopt;  // 5 bits of device
  if (fn < '0' || fn > '7') return std::nullopt;                  // 3 bits of function
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%c", HexValue(domain), HexValue(bus), HexValue(dev), fn);
  return std::string(buf);
}

bool IsValidDeviceId(std::string_view s) {
  return !s.empty() && s.size() <= kMaxDeviceIdBytes &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return c >= 0x21 && c <= 0x7e; });
}

bool IsSafeAbsolutePath(std::string_view p) {
  if (p.empty() || p[0] != '/' || HasControlChar(p)) return false;
  const std::vector<std::string_view> parts = Split(p, '/');
  return std::find(parts.begin(), parts.end(), "..") == parts.end();
}

bool IsValidContainerId(std::string_view id, size_t max_bytes) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (id.empty() || id.size() > max_bytes || !alnum(id[0])) return false;
  return id.find("..") == std::string_view::npos && std::all_of(id.begin(), id.end(), [&](char c) {
           return alnum(c) || c == '_' || c == '.' || c == '-';
         });
}

bool IsValidNetnsPath(std::string_view p) {
  return !p.empty() && p[0] == '/' && !HasControlChar(p) && IsValidUtf8(p);
}

bool IsReservedDataDirName(std::string_view name) { return name == "devices" || name == "children"; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  for (size_t at = s.find(sep); at != std::string_view::npos; at = s.find(sep)) {
    out.push_back(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  out.push_back(s);
  return out;
}

std::string Join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const std::string& s : v) out.append(out.empty() ? "" : sep).append(s);
  return out;
}

}  // namespace conf
