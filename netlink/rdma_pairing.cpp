#include "netlink/rdma_pairing.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <system_error>

#include "base/escape.h"

namespace netlink {
namespace {

using Rule = std::function<std::optional<PairMatch>(const LinkInfo&, const std::vector<RdmaDevice>&,
                                                    const std::vector<RdmaPort>&, const std::string&)>;

/// Reads `groups` groups of `digits` hex digits separated by ':' into bytes.
template <size_t N>
std::optional<std::array<uint8_t, N>> ParseHexGroups(std::string_view text, size_t groups, size_t digits) {
  if (groups * digits != 2 * N || text.size() != groups * digits + groups - 1) return std::nullopt;
  std::array<uint8_t, N> out{};
  size_t nibble = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((i + 1) % (digits + 1) == 0) {
      if (text[i] != ':') return std::nullopt;
      continue;
    }
    const int v = base::HexValue(text[i]);
    if (v < 0) return std::nullopt;
    out[nibble / 2] = static_cast<uint8_t>(out[nibble / 2] | (nibble % 2 ? v : v << 4));
    ++nibble;
  }
  return out;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

/// The port to report for a device matched as a whole: its lowest-numbered
/// listed port, else port 1 with nothing known about it.
RdmaPort FirstPort(const RdmaDevice& d, const std::vector<RdmaPort>& ports) {
  const RdmaPort* best = nullptr;
  for (const RdmaPort& p : ports) {
    if (p.dev_index == d.index && (!best || p.port < best->port)) best = &p;
  }
  if (best) return *best;
  RdmaPort p;
  p.dev_index = d.index;
  p.dev_name = d.name;
  p.port = 1;
  return p;
}

std::optional<PairMatch> ByPortNetdev(const LinkInfo& netdev, const std::vector<RdmaDevice>& devices,
                                      const std::vector<RdmaPort>& ports, const std::string&) {
  for (const RdmaPort& p : ports) {
    const bool same = p.netdev_index != 0
                          ? netdev.index > 0 && p.netdev_index == static_cast<uint32_t>(netdev.index)
                          : !p.netdev_name.empty() && p.netdev_name == netdev.name;
    if (!same) continue;
    auto d = std::find_if(devices.begin(), devices.end(),
                          [&](const RdmaDevice& x) { return x.index == p.dev_index; });
    if (d == devices.end()) continue;  // a port of a device the caller does not offer
    return PairMatch{*d, p, std::string(kPairedByPortNetdev)};
  }
  return std::nullopt;
}

std::optional<PairMatch> BySysfs(const LinkInfo& netdev, const std::vector<RdmaDevice>& devices,
                                 const std::vector<RdmaPort>& ports, const std::string& sysfs_root) {
  if (sysfs_root.empty() || netdev.name.empty() || netdev.name.find('/') != std::string::npos ||
      netdev.name == "." || netdev.name == "..") {
    return std::nullopt;
  }
  const std::filesystem::path dir =
      std::filesystem::path(sysfs_root) / "class" / "net" / netdev.name / "device" / "infiniband";
  for (const RdmaDevice& d : devices) {
    if (d.name.empty() || d.name.find('/') != std::string::npos) continue;
    std::error_code ec;
    if (std::filesystem::exists(dir / d.name, ec))
      return PairMatch{d, FirstPort(d, ports), std::string(kPairedBySysfs)};
  }
  return std::nullopt;
}

std::optional<PairMatch> ByErdmaGuid(const LinkInfo& netdev, const std::vector<RdmaDevice>& devices,
                                     const std::vector<RdmaPort>& ports, const std::string&) {
  const std::string guid = GuidFromMac(netdev.mac);
  if (guid.empty()) return std::nullopt;
  for (const RdmaDevice& d : devices) {
    if (Lower(d.node_guid) == guid) return PairMatch{d, FirstPort(d, ports), std::string(kPairedByErdmaGuid)};
  }
  return std::nullopt;
}

const std::array<Rule, 3>& Rules() {
  static const std::array<Rule, 3> rules = {ByPortNetdev, BySysfs, ByErdmaGuid};
  return rules;
}

}  // namespace

std::string GuidFromMac(std::string_view mac) {
  auto b = ParseHexGroups<6>(mac, 6, 2);
  if (!b) return "";
  char text[20];
  std::snprintf(text, sizeof text, "%02x%02x:%02xff:fe%02x:%02x%02x", (*b)[0] ^ 0x02, (*b)[1], (*b)[2],
                (*b)[3], (*b)[4], (*b)[5]);
  return text;
}

std::string MacFromGuid(std::string_view guid) {
  auto b = ParseHexGroups<8>(guid, 4, 4);
  if (!b || (*b)[3] != 0xff || (*b)[4] != 0xfe) return "";
  char text[18];
  std::snprintf(text, sizeof text, "%02x:%02x:%02x:%02x:%02x:%02x", (*b)[0] ^ 0x02, (*b)[1], (*b)[2], (*b)[5],
                (*b)[6], (*b)[7]);
  return text;
}

std::optional<PairMatch> PairNetdev(const LinkInfo& netdev, const std::vector<RdmaDevice>& devices,
                                    const std::vector<RdmaPort>& ports, const std::string& sysfs_root) {
  for (const Rule& rule : Rules()) {
    if (auto m = rule(netdev, devices, ports, sysfs_root)) return m;
  }
  return std::nullopt;
}

std::optional<RdmaDeviceId> ParseRdmaDeviceId(std::string_view id) {
  RdmaDeviceId out;
  const size_t slash = id.find('/');
  const std::string_view name = id.substr(0, slash);
  if (name.empty() || name.size() >= 64) return std::nullopt;
  if (std::any_of(name.begin(), name.end(), [](unsigned char c) { return std::isspace(c) || c == '\0'; })) {
    return std::nullopt;
  }
  out.name = std::string(name);
  if (slash == std::string_view::npos) return out;
  const std::string_view number = id.substr(slash + 1);
  uint32_t instance = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), instance);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size()) return std::nullopt;
  out.instance = instance;
  return out;
}

std::optional<NetdevMatch> FindNetdevForRdma(std::string_view rdma_id, const std::vector<LinkInfo>& links,
                                             const std::vector<RdmaDevice>& devices,
                                             const std::vector<RdmaPort>& ports,
                                             const std::string& sysfs_root) {
  const auto id = ParseRdmaDeviceId(rdma_id);
  if (!id) return std::nullopt;
  auto d =
      std::find_if(devices.begin(), devices.end(), [&](const RdmaDevice& x) { return x.name == id->name; });
  if (d == devices.end()) return std::nullopt;
  const std::vector<RdmaDevice> only{*d};
  for (const Rule& rule : Rules()) {
    for (const LinkInfo& link : links) {
      if (auto m = rule(link, only, ports, sysfs_root)) return NetdevMatch{link, std::move(*m)};
    }
  }
  return std::nullopt;
}

}  // namespace netlink
