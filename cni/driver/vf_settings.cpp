#include "cni/driver/vf_settings.h"

#include <cerrno>

#include "base/log.h"
#include "cni/journal/vf_device.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

Result<VfTarget> ResolveVf(netlink::Kernel& host, netlink::Vf& vfs, const std::string& sysfs_root,
                           const std::string& pci, const std::string& key) {
  VfTarget t;
  ASSIGN_OR_RETURN(t.sriov, FindVf(sysfs_root, pci, key));
  if (t.sriov.pf_netdev.empty())
    return Error(Code::kDeviceNotFound, key + ": the PF " + t.sriov.pf_pci + " of VF " + pci +
                                            " has no netdev on the node; VF settings go through the PF's "
                                            "netdev, so its driver must be loaded in the node's netns");
  ASSIGN_OR_RETURN(auto pf, host.FindLink(t.sriov.pf_netdev));
  if (!pf)
    return Error(Code::kDeviceNotFound, key + ": the PF netdev " + t.sriov.pf_netdev + " of VF " + pci +
                                            " is in sysfs but not in the node's netns");
  t.pf = *pf;
  ASSIGN_OR_RETURN(auto list, vfs.List(t.pf.index));
  const netlink::VfState* state = FindVfState(list, t.sriov.vf);
  if (!state)
    return Error(Code::kDeviceNotFound, key + ": the PF " + t.pf.name + " does not report VF " +
                                            std::to_string(t.sriov.vf) + " (" + pci + "); it reports " +
                                            std::to_string(list.size()) + " VF(s)");
  t.state = *state;
  if (!t.sriov.netdev.empty()) {
    ASSIGN_OR_RETURN(t.netdev, host.FindLink(t.sriov.netdev));
  }
  return t;
}

StepVf PlanVf(const conf::Config& cfg, const std::optional<std::string>& mac, const VfTarget& t) {
  const conf::VfConfig& c = cfg.vf;
  const netlink::VfState& now = t.state;
  StepVf step;
  step.pf = t.pf.name;
  step.pf_index = t.pf.index;
  step.pci = t.sriov.pci;
  if (t.netdev) {
    step.netdev = t.netdev->name;
    step.netdev_mac = t.netdev->mac;
  }
  netlink::VfSettings& a = step.applied;
  netlink::VfSettings& o = step.old;
  a.vf = o.vf = t.sriov.vf;
  std::vector<std::string> unknown;  // members whose old value the driver does not report
  if (mac) {
    a.mac = *mac;
    if (!now.mac.empty())
      o.mac = now.mac;
    else
      unknown.push_back("mac");
  }
  if (c.vlan) {
    a.vlan = netlink::VfVlan{*c.vlan, c.vlan_qos.value_or(0)};
    o.vlan = netlink::VfVlan{now.vlan, now.qos};
  }
  if (c.min_tx_rate || c.max_tx_rate) {
    a.rate =
        netlink::VfRate{c.min_tx_rate.value_or(now.min_tx_rate), c.max_tx_rate.value_or(now.max_tx_rate)};
    o.rate = netlink::VfRate{now.min_tx_rate, now.max_tx_rate};
  }
  if (c.spoofchk) {
    a.spoofchk = *c.spoofchk;
    o.spoofchk = now.spoofchk;
    if (!now.spoofchk) unknown.push_back("spoofchk");
  }
  if (c.trust) {
    a.trust = *c.trust;
    o.trust = now.trust;
    if (!now.trust) unknown.push_back("trust");
  }
  if (c.link_state) {
    a.link_state = static_cast<uint32_t>(*c.link_state);
    o.link_state = now.link_state;
    if (!now.link_state) unknown.push_back("linkState");
  }
  if (c.ib_guid) {
    a.node_guid = a.port_guid = *c.ib_guid;
    if (!now.node_guid.empty())
      o.node_guid = now.node_guid;
    else
      unknown.push_back("node GUID");
    if (!now.port_guid.empty())
      o.port_guid = now.port_guid;
    else
      unknown.push_back("port GUID");
  }
  for (const auto& u : unknown)
    base::Log::Warn("VF " + t.sriov.pci + ": " + t.pf.name + "'s driver does not report the VF's " + u +
                    ", so DEL cannot put back its old value");
  return step;
}

}  // namespace cni
