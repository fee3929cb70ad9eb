#include "nri/topology.h"

#include <algorithm>
#include <cstdio>

#include "conf/names.h"

namespace nri {

namespace {

constexpr std::string_view kNvidiaNode = "/dev/nvidia";
constexpr std::string_view kVisibleDevices = "NVIDIA_VISIBLE_DEVICES=";

}  // namespace

std::vector<std::string> ContainerGpuIds(const Container& c) {
  std::vector<std::string> ids;
  for (const Device& d : c.devices) {
    const std::string_view p = d.path;
    if (!p.starts_with(kNvidiaNode)) continue;
    const std::string_view n = p.substr(kNvidiaNode.size());
    // /dev/nvidiactl, /dev/nvidia-uvm and /dev/nvidia-modeset are no GPU.
    if (!n.empty() && n.size() <= 3 && n.find_first_not_of("0123456789") == std::string_view::npos)
      ids.emplace_back(n);
  }
  if (!ids.empty()) return ids;
  // The last assignment wins, as in a process's environment.
  std::string_view visible;
  for (const std::string& e : c.env)
    if (std::string_view(e).starts_with(kVisibleDevices))
      visible = std::string_view(e).substr(kVisibleDevices.size());
  if (visible == "all" || visible == "none" || visible == "void") return ids;
  for (size_t start = 0; start < visible.size();) {
    size_t comma = visible.find(',', start);
    if (comma == std::string_view::npos) comma = visible.size();
    if (const std::string_view id = conf::TrimBlanks(visible.substr(start, comma - start)); !id.empty())
      ids.emplace_back(id);
    start = comma + 1;
  }
  return ids;
}

std::vector<TopologySwitch> PlanTopology(const std::vector<TopologyRail>& rails,
                                         const std::vector<TopologyGpu>& gpus, std::string* why) {
  if (rails.empty()) {
    *why = "the pod has no rail";
    return {};
  }
  if (gpus.empty()) {
    *why = "the container has no GPU (no /dev/nvidiaN, no NVIDIA_VISIBLE_DEVICES list)";
    return {};
  }
  if (rails.size() > kMaxTopologyRails) {
    *why = std::to_string(rails.size()) + " rails, more than the " + std::to_string(kMaxTopologyRails) +
           " one file holds";
    return {};
  }
  std::vector<cni::PciLocation> all;
  for (const TopologyRail& r : rails) {
    if (!r.pci) {
      *why = r.rdma_device + " has no PCI function";
      return {};
    }
    all.push_back(*r.pci);
  }
  std::vector<std::string> gpu_bdfs;
  for (const TopologyGpu& g : gpus) {
    if (!g.pci) {
      *why = "GPU " + g.label + " is not found on the PCIe tree";
      return {};
    }
    all.push_back(*g.pci);
    gpu_bdfs.push_back(g.pci->path.back());
  }
  // The addresses go into XML as they are: only the kernel's own form passes.
  for (const cni::PciLocation& l : all)
    if (conf::NormalizePci(l.path.back()) != l.path.back()) {
      *why = "\"" + l.path.back() + "\" is not a PCI address";
      return {};
    }
  if (!cni::IsFlatTopology(all)) {
    *why = "the PCIe tree is not flat: NCCL reads it";
    return {};
  }
  std::sort(gpu_bdfs.begin(), gpu_bdfs.end());
  gpu_bdfs.erase(std::unique(gpu_bdfs.begin(), gpu_bdfs.end()), gpu_bdfs.end());
  std::vector<TopologySwitch> out;
  const size_t n = gpu_bdfs.size(), r = rails.size();
  for (size_t i = 0; i < r; ++i) {
    TopologySwitch s{rails[i].pci->path.back(), {}};
    // Runs of ceil(i*n/r) .. ceil((i+1)*n/r) when n >= r; with fewer GPUs, rail i < n holds GPU i.
    const size_t begin = n >= r ? (i * n + r - 1) / r : std::min(i, n);
    const size_t end = n >= r ? ((i + 1) * n + r - 1) / r : std::min(i + 1, n);
    for (size_t g = begin; g < end; ++g) s.gpus.push_back(gpu_bdfs[g]);
    out.push_back(std::move(s));
  }
  return out;
}

std::string NcclTopologyXml(const std::vector<TopologySwitch>& switches) {
  std::string xml = "<system version=\"1\">\n  <cpu numaid=\"-1\">\n";
  for (size_t i = 0; i < switches.size(); ++i) {
    char bus[32];
    std::snprintf(bus, sizeof bus, "ffff:ff:%02zx.0", i + 1);
    xml += "    <pci busid=\"" + std::string(bus) +
           "\" class=\"0x060400\" link_speed=\"16 GT/s\" link_width=\"16\">\n";
    xml += "      <pci busid=\"" + switches[i].nic + "\"/>\n";
    for (const std::string& g : switches[i].gpus) xml += "      <pci busid=\"" + g + "\"/>\n";
    xml += "    </pci>\n";
  }
  return xml + "  </cpu>\n</system>\n";
}

}  // namespace nri
