// Pairing a netdev with its RDMA device, and back. Pure: the caller lists links, RDMA devices and ports (all
// from the same network namespace, since a port shows its netdev only to that netdev's namespace) and names
// the sysfs root to look under.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "netlink/rdma_kernel.h"
#include "netlink/rtnl_kernel.h"

namespace netlink {

/// The ways PairNetdev can match, in the order it tries them; the text goes into PairMatch::how and the log.
inline constexpr std::string_view kPairedByPortNetdev = "port-netdev";  ///< the port's netdev attribute
inline constexpr std::string_view kPairedBySysfs = "sysfs";  ///< class/net/<if>/device/infiniband/<dev>
inline constexpr std::string_view kPairedByErdmaGuid = "erdma-guid";  ///< node GUID from the MAC

/// The eRDMA rule: the RDMA node GUID is the netdev's MAC with the first byte XOR 0x02 and ff:fe inserted in
/// the middle (modified EUI-64; rxe derives its GUID the same way). "00:16:3e:10:f8:b0" gives
/// "0216:3eff:fe10:f8b0". "" when `mac` is not six hex bytes separated by ':'.
std::string GuidFromMac(std::string_view mac);
/// The reverse, lower case; "" when `guid` is not four groups of four hex
/// digits or has no ff:fe in the middle.
std::string MacFromGuid(std::string_view guid);

struct PairMatch {
  RdmaDevice device;
  RdmaPort port;    ///< the port that matched; the device's first port for sysfs and GUID matches
  std::string how;  ///< kPairedByPortNetdev, kPairedBySysfs or kPairedByErdmaGuid

  bool operator==(const PairMatch&) const = default;
};

/// The RDMA device of `netdev`; first match wins, rules in this order:
///  1. a port whose netdev index (or, lacking one, name) is the netdev's;
///  2. `<sysfs_root>/class/net/<name>/device/infiniband/<device>` exists
///     (devices tried in list order);
///  3. the device's node GUID is GuidFromMac(netdev.mac). eRDMA's RDMA
///     function is a PCI device of its own, so rule 2 cannot see it.
/// nullopt when nothing matches. An empty sysfs_root skips rule 2.
std::optional<PairMatch> PairNetdev(const LinkInfo& netdev, const std::vector<RdmaDevice>& devices,
                                    const std::vector<RdmaPort>& ports, const std::string& sysfs_root);

/// An RDMA device as device selection names it: `device.rdma` ("erdma_0") or a device plugin's deviceID
/// ("erdma_0" or "erdma_0/17", the number telling apart the pods that share the device).
struct RdmaDeviceId {
  std::string name;
  std::optional<uint32_t> instance;

  bool operator==(const RdmaDeviceId&) const = default;
};

/// nullopt unless `id` is a device name (no '/', no whitespace, shorter than
/// 64 bytes) optionally followed by '/' and a decimal number.
std::optional<RdmaDeviceId> ParseRdmaDeviceId(std::string_view id);

struct NetdevMatch {
  LinkInfo netdev;
  PairMatch pair;

  bool operator==(const NetdevMatch&) const = default;
};

/// The netdev paired with the RDMA device `rdma_id` (a name or a deviceID as ParseRdmaDeviceId reads it):
/// each rule of PairNetdev is tried on every link before the next rule. nullopt when the device is not in
/// `devices` or no link pairs with it.
std::optional<NetdevMatch> FindNetdevForRdma(std::string_view rdma_id, const std::vector<LinkInfo>& links,
                                             const std::vector<RdmaDevice>& devices,
                                             const std::vector<RdmaPort>& ports,
                                             const std::string& sysfs_root);

}  // namespace netlink
