// How far a NIC is from a GPU on the PCIe tree, in NCCL's levels, and which free NICs serve a pod's GPUs
// best. Level rule: below a common PCI bridge, PIX when each device has at most one bridge between itself and
// that lowest common ancestor (a switch's downstream port, or none: two functions of one device), else PXB.
// Without one the path crosses a host bridge: PHB on one NUMA node (-1 matching -1; NCCL merges a NUMA
// node's root complexes), SYS across.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace cni {

/// NCCL's PCIe path types, the better first.
enum class PciLevel { kPix, kPxb, kPhb, kSys };

/// "PIX", "PXB", "PHB", "SYS".
std::string_view PciLevelName(PciLevel level);

/// Where a PCI function sits in the PCIe tree.
struct PciLocation {
  std::string root;               ///< the root bus, "pci0000:3a"
  std::vector<std::string> path;  ///< BDFs from the root down, the device last; never empty
  int numa = -1;                  ///< its numa_node; -1 when the kernel knows none
};

/// The location a sysfs realpath such as /sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0 names (numa -1):
/// the root is the last "pciDDDD:BB" a BDF follows, wherever it is (a test's tree, Hyper-V's VMBus), the path
/// ends before the first non-BDF after it ("net/eth0"). nullopt without such a root.
std::optional<PciLocation> ParsePciPath(std::string_view realpath);

/// The level between two devices, by the rule above.
PciLevel Level(const PciLocation& a, const PciLocation& b);

/// The location of the sysfs device directory `device_dir` (<sysfs_root>/bus/pci/devices/<bdf>, .../device),
/// which must resolve below <sysfs_root>/devices/, with its PCI function's numa_node (-1 without one).
base::Result<PciLocation> ReadPciLocation(const std::string& sysfs_root, const std::string& device_dir);

/// A flat topology (a VM's PCI bus): one or more locations, all directly on one root bus, none with NUMA.
bool IsFlatTopology(const std::vector<PciLocation>& locations);

/// A GPU of the pod.
struct RailGpu {
  std::string label;                    ///< what the log calls it: its PCI address or kubelet ID
  std::optional<PciLocation> location;  ///< absent when it could not be mapped
  int numa = -1;                        ///< without a location: the kubelet's NUMA node, -1 unknown
};

/// A free NIC the pod may get.
struct RailNic {
  std::string name;
  std::optional<PciLocation> location;  ///< absent when it has no PCI function
  int numa = -1;                        ///< without a location: its NUMA node, -1 unknown
};

/// A NIC in the order of preference.
struct RankedNic {
  std::string name;
  std::string gpu;                ///< the label of the GPU it is for; "" when ranked by name
  std::optional<PciLevel> level;  ///< its level to that GPU; absent when ranked by name
  /// A side had no location: PHB when both NUMA nodes are known and equal, SYS otherwise (an unknown node
  /// ranks below a known match).
  bool numa_only = false;
  int round = 0;  ///< 1: the GPU's first NIC, 2: its second, ...; 0 when ranked by name
};

/// What a ranking rests on.
enum class RankBasis {
  kTopology,  ///< levels between the GPUs and the NICs
  kNoGpu,     ///< the pod has no GPU: by name
  kFlat,      ///< IsFlatTopology (with NUMA unknown where a location is missing): by name
};

struct RailRanking {
  std::vector<RankedNic> nics;
  RankBasis basis = RankBasis::kTopology;
};

/// Orders every NIC in rounds, until every NIC is placed: in each, every GPU gets at most one NIC, pairs
/// taken best first by (level, GPU order, NIC name; digit runs compare as numbers). Without GPUs, or on a
/// flat topology, NICs are in name order and no level is claimed.
RailRanking RankRails(const std::vector<RailGpu>& gpus, const std::vector<RailNic>& nics);

}  // namespace cni
