#include "cni/device/pci_distance.h"

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <numeric>
#include <tuple>

#include "base/escape.h"
#include "base/file.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;

namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// "pci" + the domain (4 hex digits, more for VMD domains) + ":" + the bus.
bool IsPciRoot(std::string_view s) {
  if (s.substr(0, 3) != "pci") return false;
  s.remove_prefix(3);
  const size_t colon = s.find(':');
  if (colon == std::string_view::npos || colon < 4 || colon > 8 || s.size() != colon + 3) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != colon && !conf::IsHexDigit(s[i])) return false;
  return true;
}

// A BDF as sysfs spells it; another spelling of one is not a sysfs name.
bool IsBdf(std::string_view s) { return conf::NormalizePci(s) == s; }

// Bridges between a device and the ancestor at depth `common` of its path.
size_t BridgesBelow(const PciLocation& l, size_t common) {
  return l.path.size() > common ? l.path.size() - common - 1 : 0;
}

// Names with digit runs compared as numbers; equal ones ("eth01", "eth1") by bytes.
bool NameLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (IsDigit(a[i]) && IsDigit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && IsDigit(a[ie])) ++ie;
      while (je < b.size() && IsDigit(b[je])) ++je;
      std::string_view da = a.substr(i, ie - i), db = b.substr(j, je - j);
      while (da.size() > 1 && da.front() == '0') da.remove_prefix(1);
      while (db.size() > 1 && db.front() == '0') db.remove_prefix(1);
      if (da.size() != db.size()) return da.size() < db.size();
      if (da != db) return da < db;
      i = ie;
      j = je;
      continue;
    }
    if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
    ++i;
    ++j;
  }
  if ((i == a.size()) != (j == b.size())) return i == a.size();
  return a < b;
}

struct PairLevel {
  PciLevel level;
  bool numa_only;
};

PairLevel Compare(const RailGpu& gpu, const RailNic& nic) {
  if (gpu.location && nic.location) return {Level(*gpu.location, *nic.location), false};
  // Without a path only NUMA nodes compare; an unknown node is no match, so a known one comes first.
  const int g = gpu.location ? gpu.location->numa : gpu.numa;
  const int n = nic.location ? nic.location->numa : nic.numa;
  return {g >= 0 && g == n ? PciLevel::kPhb : PciLevel::kSys, true};
}

bool Flat(const std::vector<RailGpu>& gpus, const std::vector<RailNic>& nics) {
  std::vector<PciLocation> locations;
  auto take = [&](const std::optional<PciLocation>& location, int numa) {
    if (location) locations.push_back(*location);
    return location || numa < 0;
  };
  for (const RailGpu& g : gpus)
    if (!take(g.location, g.numa)) return false;
  for (const RailNic& n : nics)
    if (!take(n.location, n.numa)) return false;
  return IsFlatTopology(locations);
}

}  // namespace

std::string_view PciLevelName(PciLevel level) {
  constexpr std::string_view kNames[] = {"PIX", "PXB", "PHB", "SYS"};  // in PciLevel's order
  return level <= PciLevel::kSys ? kNames[static_cast<size_t>(level)] : "SYS";
}

std::optional<PciLocation> ParsePciPath(std::string_view realpath) {
  std::vector<std::string_view> parts = conf::Split(realpath, '/');
  std::erase(parts, std::string_view());
  // The last root a BDF follows: a prefix of the path (a test's own tree) may hold anything.
  size_t root = parts.size();
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (IsPciRoot(parts[i]) && IsBdf(parts[i + 1])) root = i;
  if (root == parts.size()) return std::nullopt;
  PciLocation l;
  l.root = std::string(parts[root]);
  for (size_t i = root + 1; i < parts.size() && IsBdf(parts[i]); ++i) l.path.emplace_back(parts[i]);
  return l;
}

PciLevel Level(const PciLocation& a, const PciLocation& b) {
  if (a.root == b.root) {
    size_t common = 0;
    while (common < a.path.size() && common < b.path.size() && a.path[common] == b.path[common]) ++common;
    if (common > 0)
      return BridgesBelow(a, common) <= 1 && BridgesBelow(b, common) <= 1 ? PciLevel::kPix : PciLevel::kPxb;
  }
  return a.numa == b.numa ? PciLevel::kPhb : PciLevel::kSys;
}

Result<PciLocation> ReadPciLocation(const std::string& sysfs_root, const std::string& device_dir) {
  const std::string what = "reading the PCI location of " + base::EscapeForDisplay(device_dir);
  auto resolve = [](const std::string& path) -> Result<std::string> {
    const std::unique_ptr<char, decltype(&std::free)> real(::realpath(path.c_str(), nullptr), &std::free);
    if (!real) return base::SysError("resolving " + base::EscapeForDisplay(path), errno);
    return std::string(real.get());
  };
  auto real_root = resolve(sysfs_root);
  if (!real_root.ok()) return std::move(real_root).error().WithContext(what);
  const std::string& root = *real_root;
  auto real = resolve(device_dir);
  if (!real.ok()) return std::move(real).error().WithContext(what);
  const std::string devices = (root == "/" ? "" : root) + "/devices/";
  if (real->compare(0, devices.size(), devices) != 0)
    return Error(Code::kDecoding, what + ": it resolves to " + base::EscapeForDisplay(*real) + ", outside " +
                                      base::EscapeForDisplay(devices) +
                                      "; pass a device directory of the sysfs at " +
                                      base::EscapeForDisplay(sysfs_root));
  auto location = ParsePciPath(std::string_view(*real).substr(devices.size() - 1));
  if (!location)
    return Error(Code::kDecoding, what + ": " + base::EscapeForDisplay(*real) +
                                      " is below no PCI root bus (pciDDDD:BB), so it has no place in the "
                                      "PCIe tree; only a PCI device (not a veth or a bridge) can be ranked");
  // numa_node is the PCI function's, the parent of a virtio netdev's device ("…/0000:00:03.0/virtio0").
  const std::string& bdf = location->path.back();
  const std::string function = real->substr(0, real->rfind("/" + bdf) + 1 + bdf.size());
  auto numa = base::ReadKernelFile(function + "/numa_node", 32);
  if (!numa.ok()) {
    // A kernel without CONFIG_NUMA has no numa_node.
    if (numa.error().sys_errno == ENOENT) return std::move(*location);
    return std::move(numa).error().WithContext(what);
  }
  std::string_view text = *numa;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  // At most 5 digits, or -1 (written with as many).
  const bool negative = text.starts_with('-');
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.size() - negative > 5 ||
      (negative && value != -1))
    return Error(Code::kDecoding, what + ": " + base::EscapeForDisplay(function) + "/numa_node reads \"" +
                                      base::EscapeForDisplay(text) +
                                      "\", not -1 or a NUMA node number; the kernel writes this file, "
                                      "so the sysfs at " +
                                      base::EscapeForDisplay(sysfs_root) + " is not the kernel's");
  location->numa = value;
  return std::move(*location);
}

bool IsFlatTopology(const std::vector<PciLocation>& locations) {
  if (locations.empty()) return false;
  for (const PciLocation& l : locations)
    if (l.root != locations.front().root || l.path.size() != 1 || l.numa != -1) return false;
  return true;
}

RailRanking RankRails(const std::vector<RailGpu>& gpus, const std::vector<RailNic>& nics) {
  std::vector<size_t> by_name(nics.size());
  std::iota(by_name.begin(), by_name.end(), 0);
  std::stable_sort(by_name.begin(), by_name.end(),
                   [&](size_t a, size_t b) { return NameLess(nics[a].name, nics[b].name); });
  RailRanking ranking;
  if (gpus.empty() || Flat(gpus, nics)) {
    ranking.basis = gpus.empty() ? RankBasis::kNoGpu : RankBasis::kFlat;
    for (size_t i : by_name) ranking.nics.push_back({nics[i].name, "", std::nullopt, false, 0});
    return ranking;
  }
  std::vector<size_t> name_rank(nics.size());
  for (size_t k = 0; k < by_name.size(); ++k) name_rank[by_name[k]] = k;

  struct Pair {
    PairLevel level;
    size_t gpu, nic;
  };
  std::vector<Pair> pairs;
  for (size_t g = 0; g < gpus.size(); ++g)
    for (size_t n = 0; n < nics.size(); ++n) pairs.push_back({Compare(gpus[g], nics[n]), g, n});
  std::sort(pairs.begin(), pairs.end(), [&](const Pair& a, const Pair& b) {
    return std::tie(a.level.level, a.gpu, name_rank[a.nic]) <
           std::tie(b.level.level, b.gpu, name_rank[b.nic]);
  });

  std::vector<bool> placed(nics.size());
  size_t left = nics.size();
  for (int round = 1; left > 0; ++round) {
    std::vector<bool> served(gpus.size());
    for (const Pair& p : pairs) {
      if (placed[p.nic] || served[p.gpu]) continue;
      placed[p.nic] = true;
      served[p.gpu] = true;
      --left;
      ranking.nics.push_back({nics[p.nic].name, gpus[p.gpu].label, p.level.level, p.level.numa_only, round});
    }
  }
  return ranking;
}

}  // namespace cni
