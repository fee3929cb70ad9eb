#include "cni/core/vf_steps.h"

#include "cni/core/context.h"
#include "cni/journal/vf_device.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace cni {

using base::Status;

void Fields(JsonFields& f, netlink::VfSettings& v) {
  f("vf", v.vf)("mac", v.mac);
  if (f.Has("vlan", v.vlan.has_value())) {
    if (f.reading()) v.vlan.emplace();
    f("vlan", v.vlan->vlan)("qos", v.vlan->qos);
  }
  if (f.Has("minTxRate", v.rate.has_value())) {
    if (f.reading()) v.rate.emplace();
    f("minTxRate", v.rate->min_tx_rate)("maxTxRate", v.rate->max_tx_rate);
  }
  f("spoofchk", v.spoofchk)("trust", v.trust)("linkState", v.link_state);
  f("nodeGuid", v.node_guid)("portGuid", v.port_guid);
}

void Fields(JsonFields& f, StepVf& s) {
  f("pf", s.pf)("pfIndex", s.pf_index)("pci", s.pci)("netdev", s.netdev)("netdevMac", s.netdev_mac);
  f("applied", s.applied)("old", s.old);
}
std::string Describe(const StepVf& s) {
  return "VF " + s.pci + " through PF " + s.pf + ": " + netlink::DescribeVfSettings(s.applied) + " (was " +
         netlink::DescribeVfSettings(s.old) + ")";
}
Status Apply(const StepVf& s, const AttachmentState&, StepEnv& env) { return ApplyVf(s, env.host_vf); }
Status Undo(const StepVf& s, const UndoEnv&, StepEnv& env) { return RestoreVf(s, env.host, env.host_vf); }
Status Validate(const StepVf& s, const StepSite& at) {
  RETURN_IF_ERROR(CheckIfName(at.field_prefix + "pf", s.pf));
  if (!conf::NormalizePci(s.pci))
    return BadValue(at.field_prefix + "pci", s.pci, "a PCI address dddd:bb:dd.f");
  if (!s.netdev.empty()) RETURN_IF_ERROR(CheckIfName(at.field_prefix + "netdev", s.netdev));
  if (!s.netdev_mac.empty() && !conf::NormalizeMac(s.netdev_mac))
    return BadValue(at.field_prefix + "netdevMac", s.netdev_mac, "a MAC or \"\"");
  return base::Ok();
}
Status Check(const StepVf& s, CheckEnv& env) {
  ASSIGN_OR_RETURN(auto vfs, env.ctx.netns.OpenVf());
  return CheckVf(s, *vfs);
}

}  // namespace cni
