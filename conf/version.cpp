#include "conf/version.h"

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <compare>
#include <cstdint>

#include "netlink/ip.h"

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
    if (part.empty() || part.size() > 9 || part.find_first_not_of("0123456789") != std::string_view::npos)
      return std::nullopt;
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
  // An unparsable version orders before any parsed one (nullopt first); two unparsable ones by their bytes,
  // still a total order, so that sorting is deterministic.
  const std::strong_ordering c = ta || tb ? ta <=> tb : a <=> b;
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

nlohmann::json ConvertResult(nlohmann::json result, const std::string& version) {
  if (!result.is_object()) return result;
  result["cniVersion"] = version;
  const bool want_ip_version = CompareVersions(version, "1.0.0") < 0;
  const bool keep_1_1 = CompareVersions(version, "1.1.0") >= 0;

  if (auto ips = result.find("ips"); ips != result.end() && ips->is_array()) {
    for (auto& ip : *ips) {
      if (!ip.is_object()) continue;
      if (!want_ip_version) {
        ip.erase("version");
        continue;
      }
      auto a = ip.find("address");
      if (a == ip.end() || !a->is_string()) continue;
      if (auto p = netlink::IpPrefix::Parse(a->get<std::string>(), /*allow_bare=*/true))
        ip["version"] = p->addr.family == AF_INET6 ? "6" : "4";
    }
  }
  auto drop = [&](const char* list, std::initializer_list<const char*> keys) {
    if (auto l = result.find(list); l != result.end() && l->is_array())
      for (auto& entry : *l)
        if (entry.is_object())
          for (const char* k : keys) entry.erase(k);
  };
  if (!keep_1_1) {
    drop("routes", {"mtu", "advmss", "priority", "table", "scope"});
    drop("interfaces", {"mtu", "socketPath", "pciID", "rdmaDevice"});
  }
  return result;
}

}  // namespace conf
