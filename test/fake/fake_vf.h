// A stateful, in-memory fake of netlink::Vf for unit tests, next to a
// fake::World: a PF is a World link with VFs; a VF may have a netdev, another
// World link. Every Set is a mutating call (CallLog) that a test can fail.
//
// Model, after net/core/rtnetlink.c (rtnl_fill_vfinfo, do_setvfinfo) and
// the drivers:
//  - List: ENODEV when the link is not in root (the handle is the node's);
//    an empty list for a link that is not a PF; else every VF, by number.
//  - Set: ENODEV as for List; EOPNOTSUPP for a link that is not a PF; EINVAL
//    for a VF number the PF does not have. The members are applied in
//    do_setvfinfo's order (mac, vlan, rate, spoofchk, link state, trust,
//    node GUID, port GUID) and the first refusal stops it, leaving the
//    earlier ones applied, as the kernel does: EINVAL for a multicast MAC,
//    vlan > 4095, qos > 7, or min rate above a non-zero max; EOPNOTSUPP for
//    a member the PF is told it lacks, and for GUIDs on a non-IB PF.
//  - follow_mac: a non-zero MAC set through the PF reaches the VF's netdev
//    wherever it is (VF drivers that take the PF's word at once); setting
//    all zeros leaves the netdev's MAC as it is. Off: the netdev never
//    changes (mlx5 until the VF driver reloads).
//  - A PF whose driver does not report spoofchk/trust (reports_flags off)
//    lists them as unknown; one that does not report GUIDs lists none.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "netlink/vf_kernel.h"
#include "test/fake/call_log.h"
#include "test/fake/fake_kernel.h"

namespace fake {

class FakeVf;

class VfWorld : public CallLog {
 public:
  struct PfSpec {
    bool infiniband = false;
    bool follow_mac = true;
    bool reports_flags = true;          ///< spoofchk and trust
    bool reports_guids = true;          ///< IB only
    std::set<std::string> unsupported;  ///< "mac", "vlan", "rate", "spoofchk", "state", "trust", "guid"
  };

  explicit VfWorld(World& world) : world_(world) {}
  VfWorld(const VfWorld&) = delete;
  VfWorld& operator=(const VfWorld&) = delete;

  /// Makes World link `pf_index` a PF with `num_vfs` VFs in their defaults:
  /// MAC all zeros, vlan 0, no rate limit, spoofchk on, trust off, link
  /// state auto; on an IB PF node and port GUID 00:..:<vf+1>.
  void AddPf(int pf_index, uint32_t num_vfs, PfSpec spec);
  void AddPf(int pf_index, uint32_t num_vfs) { AddPf(pf_index, num_vfs, PfSpec()); }
  /// VF `vf` of `pf_index` has World link `netdev_index` as its netdev.
  void BindNetdev(int pf_index, uint32_t vf, int netdev_index);
  /// Setup: replaces one VF's state (its number picks the VF).
  void SetState(int pf_index, const netlink::VfState& state);
  netlink::VfState State(int pf_index, uint32_t vf) const;

  /// A handle on the node, like OpenVf in root.
  std::unique_ptr<netlink::Vf> Vf();

  /// One line per VF, "pf 3 vf 0 mac ... vlan 0 qos 0 rate 0-0 spoofchk on
  /// trust off state 0 guid .../...": compare before and after.
  std::string Describe() const;

 private:
  friend class FakeVf;
  struct Pf {
    PfSpec spec;
    std::vector<netlink::VfState> vfs;
    std::map<uint32_t, int> netdevs;  // vf -> World link index
  };
  World& world_;
  std::map<int, Pf> pfs_;
};

}  // namespace fake
