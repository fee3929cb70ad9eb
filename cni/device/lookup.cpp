#include "cni/device/lookup.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "base/log.h"
#include "conf/names.h"
#include "netlink/rdma_pairing.h"

namespace cni {

namespace {

// dddd:bb:dd.f or bb:dd.f
bool LooksLikePci(const std::string& s) {
  const std::string t = s.size() == 7 ? "0000:" + s : s;
  if (t.size() != 12) return false;
  for (size_t i = 0; i < t.size(); ++i)
    if (i == 4 || i == 7 ? t[i] != ':' : i == 10 ? t[i] != '.' : !conf::IsHexDigit(t[i])) return false;
  return true;
}

}  // namespace

std::string DeviceQuery::Describe() const {
  if (!rdma.empty() && name.empty()) return "the netdev of RDMA device " + rdma;
  if (!name.empty()) return "device " + name;
  if (!mac.empty()) return "device with MAC " + mac;
  return "device at PCI " + pci;
}

DeviceQuery QueryFor(const conf::DeviceSelector& sel) {
  DeviceQuery q;
  switch (sel.by) {
    case conf::DeviceSelector::By::kName: q.name = sel.value; break;
    case conf::DeviceSelector::By::kMac: q.mac = conf::AsciiLower(sel.value); break;
    case conf::DeviceSelector::By::kPci: q.pci = conf::AsciiLower(sel.value); break;
    case conf::DeviceSelector::By::kRdma: q.rdma = sel.value; break;
    case conf::DeviceSelector::By::kPool:      // cni/device/choice.cpp chose a device first
    case conf::DeviceSelector::By::kResource:  // run.cpp made it a device ID first
    case conf::DeviceSelector::By::kDeviceId:
      if (LooksLikePci(sel.value))
        q.pci = conf::AsciiLower(sel.value.size() == 7 ? "0000:" + sel.value : sel.value);
      else if (auto mac = conf::NormalizeMac(sel.value))
        q.mac = *mac;
      else if (sel.value.find('/') != std::string::npos)
        q.rdma = sel.value;  // a device plugin ID: "erdma_0/17"
      else
        q.name = q.rdma = sel.value;  // "eth1" or "erdma_0": a netdev of that name wins
      break;
  }
  if (!q.pci.empty() && q.pci.size() == 7) q.pci = "0000:" + q.pci;
  return q;
}

base::Result<std::optional<netlink::LinkInfo>> FindDevice(netlink::Kernel& host, netlink::Rdma* rdma,
                                                          const DeviceQuery& q,
                                                          const std::string& sysfs_root) {
  if (!q.name.empty()) {
    ASSIGN_OR_RETURN(auto link, host.FindLink(q.name));
    if (link || q.rdma.empty()) return link;
  }
  if (!q.rdma.empty()) {
    if (!rdma) return std::optional<netlink::LinkInfo>();
    ASSIGN_OR_RETURN(auto links, host.ListLinks());
    ASSIGN_OR_RETURN(auto devices, rdma->ListDevices());
    ASSIGN_OR_RETURN(auto ports, rdma->ListPorts());
    auto match = netlink::FindNetdevForRdma(q.rdma, links, devices, ports, sysfs_root);
    if (!match) return std::optional<netlink::LinkInfo>();
    base::Log::Info("RDMA device " + match->pair.device.name + " selects netdev " + match->netdev.name +
                    " (by " + match->pair.how + ")");
    return std::optional<netlink::LinkInfo>(match->netdev);
  }
  if (!q.mac.empty()) {
    ASSIGN_OR_RETURN(auto links, host.ListLinks());
    std::optional<netlink::LinkInfo> found;
    for (const auto& l : links) {
      if (l.mac != q.mac) continue;
      // A macvlan/vlan can share the MAC; the physical device is the one we want.
      if (!found || (!found->kind.empty() && l.kind.empty())) found = l;
    }
    return found;
  }
  const std::string dir = sysfs_root + "/bus/pci/devices/" + q.pci + "/net";
  DIR* d = ::opendir(dir.c_str());
  if (!d) return std::optional<netlink::LinkInfo>();
  std::string name;
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    name = e->d_name;
    break;
  }
  ::closedir(d);
  if (name.empty()) return std::optional<netlink::LinkInfo>();
  return host.FindLink(name);
}

std::string PciAddressOf(const std::string& sysfs_root, const std::string& ifname) {
  const std::string link = sysfs_root + "/class/net/" + ifname + "/device";
  // One readlink: a PCI netdev's link ends in its function, and a virtual one (veth, bridge) has none.
  std::string pci = LinkBase(link).value_or("");
  // A virtio netdev's (an ENI on ECS) ends in virtio<n>, below its PCI function: the whole path says which.
  if (pci.size() > 6 && pci.starts_with("virtio") &&
      std::all_of(pci.begin() + 6, pci.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    std::unique_ptr<char, decltype(&std::free)> real(::realpath(link.c_str(), nullptr), &std::free);
    if (!real) return "";
    const std::string_view path(real.get());
    const std::string_view parent = path.substr(0, path.rfind('/'));
    pci = parent.substr(parent.rfind('/') + 1);
  }
  return LooksLikePci(pci) && pci.size() == 12 ? pci : "";
}

std::optional<std::string> LinkBase(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  std::string target(buf, static_cast<size_t>(n));
  while (target.size() > 1 && target.back() == '/') target.pop_back();
  const size_t slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

}  // namespace cni
