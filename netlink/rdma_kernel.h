// The syscall boundary for RDMA devices: the few RDMA netlink (NETLINK_RDMA, client NLDEV) verbs erdma-cni
// needs, for one network namespace, as netlink::Kernel is for rtnetlink. The real implementation
// (rdma_socket.h) speaks NLDEV on a plain netlink socket opened inside that namespace; tests use a stateful
// fake (test/fake/fake_rdma.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace netlink {

using base::Result;
using base::Status;

/// How the kernel shares RDMA devices between network namespaces
/// (`rdma system show netns`, ib_core's netns_mode parameter).
enum class NetnsMode {
  kShared,     ///< every device is visible in every namespace (the default)
  kExclusive,  ///< each device lives in exactly one namespace and moves with RDMA_NLDEV_NET_NS_FD
};

/// "shared" or "exclusive", the words `rdma system` uses.
inline const char* NetnsModeName(NetnsMode mode) {
  return mode == NetnsMode::kShared ? "shared" : "exclusive";
}

/// IB port states (enum ib_port_state) and physical states as NLDEV reports them.
inline constexpr uint8_t kPortStateDown = 1;
inline constexpr uint8_t kPortStateActive = 4;
inline constexpr uint8_t kPhysStateLinkUp = 5;

/// One RDMA device (an RDMA_NLDEV_CMD_GET dump entry).
struct RdmaDevice {
  uint32_t index = 0;      ///< RDMA_NLDEV_ATTR_DEV_INDEX: the kernel's device index, not an ifindex
  std::string name;        ///< "erdma_0", "rxe0", "mlx5_1"
  std::string node_guid;   ///< "0216:3eff:fe10:f8b0" (as `rdma dev` prints it); empty when absent
  uint32_t num_ports = 0;  ///< the last port number (ports count from 1)
  std::string protocol;    ///< RDMA_NLDEV_ATTR_DEV_PROTOCOL: "roce", "iw", "ib", ...; empty before 5.x

  bool operator==(const RdmaDevice&) const = default;
};

/// One port of an RDMA device (an RDMA_NLDEV_CMD_PORT_GET dump entry).
/// NLDEV has no link-layer attribute; `protocol` on the device stands in.
struct RdmaPort {
  uint32_t dev_index = 0;
  std::string dev_name;
  uint32_t port = 0;  ///< 1-based
  /// The port's netdev. The kernel sends it only when that netdev lives in the namespace of the socket that
  /// asked: 0 and "" otherwise (or when the port has none).
  uint32_t netdev_index = 0;
  std::string netdev_name;
  uint8_t state = 0;       ///< RDMA_NLDEV_ATTR_PORT_STATE (kPortStateActive = usable)
  uint8_t phys_state = 0;  ///< RDMA_NLDEV_ATTR_PORT_PHYS_STATE (kPhysStateLinkUp)

  bool operator==(const RdmaPort&) const = default;
};

/// RDMA netlink verbs for one network namespace. Errors carry Code::kKernel, a message "<request> <what>:
/// <strerror>", the kernel's extended ACK text in details and the errno in sys_errno. NLDEV answers EINVAL,
/// not ENODEV, for a device index it cannot see.
class Rdma {
 public:
  virtual ~Rdma() = default;

  virtual Result<NetnsMode> GetNetnsMode() = 0;
  /// Switching fails with EBUSY while any network namespace other than the
  /// root one exists; asking for the current mode always succeeds.
  virtual Status SetNetnsMode(NetnsMode mode) = 0;

  /// The devices this namespace can see: all of them in shared mode, its own in exclusive mode.
  virtual Result<std::vector<RdmaDevice>> ListDevices() = 0;
  /// Every port of every device ListDevices() returns.
  virtual Result<std::vector<RdmaPort>> ListPorts() = 0;

  /// Moves a device this namespace holds into the namespace of `netns_fd` (an fd of this process). Exclusive
  /// mode only: shared mode, and drivers that cannot disassociate user contexts, answer EOPNOTSUPP.
  virtual Status MoveDevice(uint32_t dev_index, int netns_fd) = 0;
  /// RDMA_NLDEV_CMD_NEWLINK: a software device (`type` "rxe" or "siw") named
  /// `name` on the netdev `netdev_name` of this namespace.
  virtual Status AddSoftDevice(std::string_view name, std::string_view type,
                               std::string_view netdev_name) = 0;
  /// RDMA_NLDEV_CMD_DELLINK: removes a software device (others: EINVAL).
  virtual Status DelDevice(uint32_t dev_index) = 0;
};

}  // namespace netlink
