// What the NRI agent gives a container at CreateContainer: pure rules over the container the runtime is
// about to create, what erdma-cni attached to its pod, and the node's device nodes. No I/O: the agent reads
// the plugin's state and sysfs, then asks these rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cni/device/pci_distance.h"
#include "nri/messages.h"

namespace nri {

/// The pod annotation by which a pod may ask for a lower locked-memory limit than the node's (its value as
/// conf::ParseMemlock reads it).
inline constexpr const char* kMemlockAnnotation = "network.alibabacloud.com/erdma-memlock";
/// RLIM_INFINITY as NRI carries it.
inline constexpr uint64_t kUnlimited = UINT64_MAX;

/// A character device node of the node: where it is and its numbers.
struct DeviceNode {
  std::string path;  ///< "/dev/infiniband/uverbs0"
  int64_t major = 0, minor = 0;
};

/// What erdma-cni attached to one pod sandbox: its RDMA devices in rail order (first interface first), each
/// with its uverbs node and PCI function; and the node's rdma_cm node when the kernel has one.
struct PodRdma {
  struct Rail {
    std::string rdma_device;  ///< "erdma_0"
    std::optional<DeviceNode> uverbs;
    std::optional<cni::PciLocation> pci;  ///< absent for a device without one (Soft-RoCE)
  };
  std::vector<Rail> rails;
  std::optional<DeviceNode> rdma_cm;
  /// The NCCL topology file the agent wrote for the container (nri/topology.h), on the node.
  std::optional<std::string> topology_file;
};

/// The node admin's choices (the node file).
struct AgentPolicy {
  /// RLIMIT_MEMLOCK for a container of an attached pod (the node file's nriMemlock); none: the runtime's
  /// is left.
  std::optional<uint64_t> memlock;
};

/// The adjustment, and a line for the log saying what it holds and why (for instance "NCCL_IB_HCA left:
/// the container sets it").
struct Decision {
  Adjustment adjust;
  std::vector<std::string> notes;
};

/// The rules (docs/nri.md): a container of a pod without RDMA rails gets nothing; one of an attached pod gets
///  1. RLIMIT_MEMLOCK soft and hard at the node's value, or the pod's annotation when that asks for less
///     (never more); a container whose own limit is as high already keeps it;
///  2. each rail's uverbs node and rdma_cm, mode 0666, with their device cgroup rules, unless the container
///     has a node at that path already (a device plugin's);
///  3. NCCL_IB_HCA "=<dev>:1,..." naming exactly the pod's RDMA devices in rail order, unless its env sets
///     it;
///  4. the topology file, when there is one, bound read-only at kTopologyInContainer with NCCL_TOPO_FILE
///     naming it, unless its env sets NCCL_TOPO_FILE (then the agent writes none: WantsTopology).
Decision Adjust(const CreateContainer& req, const PodRdma& pod, const AgentPolicy& policy);

/// Whether a topology file is any use to container `c`: false when its env sets NCCL_TOPO_FILE.
bool WantsTopology(const Container& c);

}  // namespace nri
