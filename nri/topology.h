// The NCCL topology file of a container on a flat topology (docs/nri.md, "NCCL on a flat topology"). Where
// every GPU and RDMA function sits directly on one root bus with no NUMA node (a VM), NCCL finds every GPU
// as far from every NIC and gives them all the first one. The file tells it the pairing instead: one
// virtual PCIe switch per rail, holding the rail's RDMA PCI function and the GPUs given to it. It names
// PCI functions by address only, as NCCL's maintainers ask of such files: NCCL fills in each device from
// sysfs and keeps the tree above. Pure: the agent reads sysfs and the NVIDIA driver's files, then asks here.
#pragma once

#include <string>
#include <vector>

#include "cni/device/pci_distance.h"
#include "nri/messages.h"

namespace nri {

/// Where the file is in the container, and the variable that points NCCL at it.
inline constexpr const char* kTopologyInContainer = "/run/erdma-cni/nccl-topo.xml";
inline constexpr const char* kTopologyEnv = "NCCL_TOPO_FILE";
/// Most rails one file holds: the virtual switches are devices 01..1f of bus ffff:ff.
inline constexpr size_t kMaxTopologyRails = 31;

/// The GPUs a container names, as kubelet device IDs of GPUs (cni::ParseGpuId): the minor N of each
/// /dev/nvidiaN device node as "N"; without such nodes, the entries of NVIDIA_VISIBLE_DEVICES (UUIDs or
/// indexes; "all", "none" and "void" name no GPU of the pod's own, and give none).
std::vector<std::string> ContainerGpuIds(const Container& c);

/// One virtual switch of the file: a rail's RDMA PCI function and its GPUs' (PCI addresses).
struct TopologySwitch {
  std::string nic;
  std::vector<std::string> gpus;
};

/// A rail and a GPU as the file rule reads them: where each sits, absent when it could not be told.
struct TopologyRail {
  std::string rdma_device;
  std::optional<cni::PciLocation> pci;
};
struct TopologyGpu {
  std::string label;  ///< its PCI address, or what the container named it by
  std::optional<cni::PciLocation> pci;
};

/// The switches for `rails` (in rail order) and `gpus`, or why there is no file (`*why`, for the log): a
/// file needs at least one GPU, every rail and GPU on the PCIe tree, at most kMaxTopologyRails rails, and
/// a flat topology (cni::IsFlatTopology; on any other NCCL reads the real tree). GPUs in PCI address order
/// are shared out in contiguous runs, rail i the i-th: 8 GPUs on 4 rails two each, 3 on 2 rails two and
/// one, 2 on 4 rails one each on the first two.
std::vector<TopologySwitch> PlanTopology(const std::vector<TopologyRail>& rails,
                                         const std::vector<TopologyGpu>& gpus, std::string* why);

/// The file: a <system> with one <cpu> (numaid -1, as NCCL itself names the CPU of a device without a NUMA
/// node) holding switch i+1 as ffff:ff:<i+1>.0 (class 0x060400, 16 GT/s x16), each holding its NIC and
/// GPUs by busid.
std::string NcclTopologyXml(const std::vector<TopologySwitch>& switches);

}  // namespace nri
