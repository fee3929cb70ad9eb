#include "cni/device/rails.h"

#include "base/escape.h"
#include "base/file.h"
#include "cni/device/gpus.h"

namespace cni {

std::vector<RailGpu> LocatePodGpus(const std::vector<kubelet::Device>& gpus, const std::string& ack_gpu_index,
                                   const std::string& sysfs_root, const std::string& procfs_root,
                                   std::vector<std::string>& log) {
  std::vector<std::string> ids;
  for (const kubelet::Device& g : gpus) ids.push_back(g.id);
  auto driver = ReadNvidiaGpus(procfs_root);
  if (!driver.ok()) log.push_back("the NVIDIA driver's GPU files cannot be read: " + driver.error().msg);
  const std::vector<NvidiaGpu> none;
  std::vector<RailGpu> out;
  for (const PodGpu& g : MapPodGpus(ids, driver.ok() ? *driver : none, ack_gpu_index)) {
    RailGpu rail{g.pci.empty() ? (g.ids.empty() ? "?" : g.ids.front()) : g.pci, std::nullopt, -1};
    std::string why = g.why;
    if (!g.pci.empty()) {
      auto at = ReadPciLocation(sysfs_root, sysfs_root + "/bus/pci/devices/" + g.pci);
      if (at.ok())
        rail.location = std::move(*at);
      else
        why += "; not in sysfs (" + at.error().msg + ")";
    }
    if (!rail.location) {
      // The kubelet's NUMA node for the first of its IDs that it reports one for.
      for (const kubelet::Device& d : gpus)
        if (!g.ids.empty() && d.id == g.ids.front() && !d.numa_nodes.empty())
          rail.numa = static_cast<int>(d.numa_nodes.front());
      why += rail.numa >= 0 ? "; ranked by the kubelet's NUMA node " + std::to_string(rail.numa)
                            : "; no NUMA node known";
    }
    log.push_back(why);
    out.push_back(std::move(rail));
  }
  return out;
}

std::optional<PciLocation> NetdevLocation(const std::string& sysfs_root, const std::string& ifname) {
  auto at = ReadPciLocation(sysfs_root, sysfs_root + "/class/net/" + ifname + "/device");
  if (!at.ok()) return std::nullopt;
  return std::move(*at);
}

std::string WhyUnusable(const netlink::LinkInfo& link, const netlink::RdmaPort* port,
                        const std::string& sysfs_root) {
  if (!link.up) return "";
  auto carrier = base::ReadKernelFile(sysfs_root + "/class/net/" + link.name + "/carrier", 16);
  if (carrier.ok() && !carrier->empty() && (*carrier)[0] == '0') return "link down: no carrier";
  if (port && port->state != netlink::kPortStateActive)
    return "RDMA port " + port->dev_name + "/" + std::to_string(port->port) + " is not ACTIVE";
  return "";
}

// The most of a GPU's ID a member's "why" shows (the journal holds at most 1024 bytes of it).
constexpr size_t kMaxGpuIdShown = 256;

std::string RailWhy(const RankedNic& nic, RankBasis basis, bool gpus_known) {
  switch (basis) {
    case RankBasis::kNoGpu:
      return gpus_known ? "by name: the pod has no GPU to align with"
                        : "by name: the pod's GPUs are not known";
    case RankBasis::kFlat: return "by name: flat PCI topology (one root bus, no NUMA node)";
    case RankBasis::kTopology: break;
  }
  // The kubelet's GPU ID: escaped and cut, so that the journal can always hold it.
  std::string gpu = base::EscapeForDisplay(nic.gpu);
  if (gpu.size() > kMaxGpuIdShown) {
    size_t cut = kMaxGpuIdShown;
    while (cut > 0 && (static_cast<unsigned char>(gpu[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    gpu = gpu.substr(0, cut) + "... (" + std::to_string(nic.gpu.size()) + " bytes)";
  }
  std::string why = std::string(PciLevelName(nic.level.value_or(PciLevel::kSys))) + " to GPU " + gpu;
  if (nic.numa_only) why += " (by NUMA node)";
  return why;
}

}  // namespace cni
