#include "cni/device/lookup.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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
  auto last = [](std::string_view p) {
    const size_t slash = p.rfind('/');
    return slash == std::string_view::npos ? p : p.substr(slash + 1);
  };
  // One readlink: a PCI netdev's link ends in its function, and a virtual one (veth, bridge) has none.
  std::array<char, 4096> target{};
  const ssize_t n = ::readlink(link.c_str(), target.data(), target.size() - 1);
  if (n <= 0) return "";
  std::string_view base = last(std::string_view(target.data(), static_cast<size_t>(n)));
  std::unique_ptr<char, decltype(&std::free)> real(nullptr, &std::free);
  // A virtio netdev (an ENI on ECS, a NIC in a VM) belongs to virtio<n>, which sits below its PCI function:
  // the whole path says which.
  if (base.size() > 6 && base.starts_with("virtio") &&
      std::all_of(base.begin() + 6, base.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    real.reset(::realpath(link.c_str(), nullptr));
    if (!real) return "";
    const std::string_view path(real.get());
    base = last(path.substr(0, path.rfind('/')));
  }
  const std::string pci(base);
  return LooksLikePci(pci) && pci.size() == 12 ? pci : "";
}

}  // namespace cni
