#include "conf/version.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <compare>
#include <cstdint>

namespace conf {
namespace {

using Triple = std::array<uint64_t, 3>;

// Exactly three dot-separated runs of decimal digits; anything else (signs,
// spaces, a fourth part, "1.0") is unparsable.
std::optional<Triple> ParseTriple(std::string_view s) {
  Triple t{};
  for (size_t i = 0; i < t.size(); ++i) {
    const size_t dot = s.find('.');
    const bool last = i + 1 == t.size();
    if (last != (dot == std::string_view::npos)) return std::nullopt;
    std::string_view part = s.substr(0, dot);
    if (part.empty() || part.size() > 9) return std::nullopt;
    for (char c : part)
      if (c < '0' || c > '9') return std::nullopt;
    std::from_chars(part.data(), part.data() + part.size(), t[i]);
    if (!last) s.remove_prefix(dot + 1);
  }
  return t;
}

}  // namespace

const std::vector<std::string>& SupportedVersions() {
  static const std::vector<std::string> v = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};
  return v;
}

bool IsSupportedVersion(std::string_view v) {
  const auto& all = SupportedVersions();
  return std::find(all.begin(), all.end(), v) != all.end();
}

int CompareVersions(std::string_view a, std::string_view b) {
  const auto ta = ParseTriple(a);
  const auto tb = ParseTriple(b);
  if (!ta && !tb) {
    // Both unparsable: still a total order, so sorting is deterministic.
    const int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (!ta) return -1;
  if (!tb) return 1;
  const auto c = *ta <=> *tb;
  return std::is_lt(c) ? -1 : (std::is_gt(c) ? 1 : 0);
}

std::optional<std::string> PickVersion(const std::vector<std::string>& offered) {
  std::optional<std::string> best;
  for (const auto& v : offered) {
    if (!IsSupportedVersion(v)) continue;
    if (!best || CompareVersions(v, *best) > 0) best = v;
  }
  return best;
}

}  // namespace conf
