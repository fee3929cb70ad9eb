// SR-IOV VF settings as the kernel keeps them on the PF: read with RTM_GETLINK (IFLA_VFINFO_LIST), changed
// with RTM_NEWLINK on the PF. The real implementation (vf_socket.h) speaks rtnetlink on a plain netlink
// socket in the node's netns; tests use test/fake/fake_vf.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"

namespace netlink {

/// IFLA_VF_LINK_STATE_* values.
inline constexpr uint32_t kVfLinkStateAuto = 0;
inline constexpr uint32_t kVfLinkStateEnable = 1;
inline constexpr uint32_t kVfLinkStateDisable = 2;

/// One VF as the PF reports it (struct ifla_vf_info of the kernel).
struct VfState {
  uint32_t vf = 0;
  std::string
      mac;  ///< the administrative MAC, "00:00:00:00:00:00" when unset; "" when the PF is not Ethernet
  uint32_t vlan = 0;
  uint32_t qos = 0;
  uint32_t min_tx_rate = 0;            ///< Mbps
  uint32_t max_tx_rate = 0;            ///< Mbps, 0 = unlimited
  std::optional<bool> spoofchk;        ///< nullopt: the driver does not say
  std::optional<bool> trust;           ///< nullopt: the driver does not say
  std::optional<uint32_t> link_state;  ///< kVfLinkState*
  std::string node_guid;               ///< InfiniBand VFs, "00:11:..:77"; "" when not reported
  std::string port_guid;

  bool operator==(const VfState&) const = default;
};

struct VfVlan {
  uint32_t vlan = 0;  ///< 0 = untagged
  uint32_t qos = 0;
  bool operator==(const VfVlan&) const = default;
};

struct VfRate {
  uint32_t min_tx_rate = 0;  ///< Mbps
  uint32_t max_tx_rate = 0;  ///< Mbps, 0 = unlimited
  bool operator==(const VfRate&) const = default;
};

/// What to change on one VF; unset members are left alone. VLAN and QoS, and
/// the two rates, travel together (one kernel struct each).
struct VfSettings {
  uint32_t vf = 0;
  std::optional<std::string> mac;  ///< "aa:bb:cc:dd:ee:ff"
  std::optional<VfVlan> vlan;
  std::optional<VfRate> rate;
  std::optional<bool> spoofchk;
  std::optional<bool> trust;
  std::optional<uint32_t> link_state;    ///< kVfLinkState*
  std::optional<std::string> node_guid;  ///< "00:11:22:33:44:55:66:77"
  std::optional<std::string> port_guid;

  bool empty() const {
    return !mac && !vlan && !rate && !spoofchk && !trust && !link_state && !node_guid && !port_guid;
  }
  bool operator==(const VfSettings&) const = default;
};

/// "vf 3 mac 02:00:00:00:00:01 vlan 100 qos 2 spoofchk on": for logs and fakes.
std::string DescribeVfSettings(const VfSettings& s);

/// The VF verbs on the PFs of one netns (the node's). Errors carry Code::kKernel, the errno in sys_errno and
/// the kernel's extended ACK text in details.
class Vf {
 public:
  virtual ~Vf() = default;
  /// The VFs of the link `pf_index` as its driver reports them, by VF number;
  /// empty for a link without VFs. ENODEV when there is no such link.
  virtual base::Result<std::vector<VfState>> List(int pf_index) = 0;
  /// Applies `s` through the PF in one RTM_NEWLINK. The kernel applies the members in its own order and stops
  /// at the first refusal, so a failure may leave some applied. EOPNOTSUPP when the PF's driver lacks one.
  virtual base::Status Set(int pf_index, const VfSettings& s) = 0;
};

}  // namespace netlink
