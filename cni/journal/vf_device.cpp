#include "cni/journal/vf_device.h"

#include <cerrno>
#include <string>
#include <vector>

#include "base/log.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

std::string OnOff(bool b) { return b ? "on" : "off"; }

// `s` as one setting per member, in the order the kernel applies them.
std::vector<netlink::VfSettings> OneByOne(const netlink::VfSettings& s) {
  std::vector<netlink::VfSettings> out;
  auto one = [&](auto member, const auto& value) {
    if (!value) return;
    netlink::VfSettings m;
    m.vf = s.vf;
    m.*member = value;
    out.push_back(m);
  };
  one(&netlink::VfSettings::mac, s.mac);
  one(&netlink::VfSettings::vlan, s.vlan);
  one(&netlink::VfSettings::rate, s.rate);
  one(&netlink::VfSettings::spoofchk, s.spoofchk);
  one(&netlink::VfSettings::link_state, s.link_state);
  one(&netlink::VfSettings::trust, s.trust);
  one(&netlink::VfSettings::node_guid, s.node_guid);
  one(&netlink::VfSettings::port_guid, s.port_guid);
  return out;
}

// One member at a time: the kernel stops at the first member a driver refuses (EOPNOTSUPP), and one the
// driver cannot set was not changed by ADD either.
Status RestoreOneByOne(const StepVf& step, int pf_index, netlink::Vf& vfs) {
  std::vector<Error> errors;
  for (const netlink::VfSettings& m : OneByOne(step.old)) {
    Status s = vfs.Set(pf_index, m);
    if (s.ok()) continue;
    if (s.error().sys_errno == EOPNOTSUPP) {
      base::Log::Info("VF " + step.pci + ": " + step.pf + " cannot set " + netlink::DescribeVfSettings(m) +
                      "; it was not changed");
      continue;
    }
    errors.push_back(std::move(s).error());
  }
  if (errors.empty()) return base::Ok();
  Error e = errors.front();
  for (size_t i = 1; i < errors.size(); ++i) e.details += (e.details.empty() ? "" : "; ") + errors[i].msg;
  return e;
}

}  // namespace

const netlink::VfState* FindVfState(const std::vector<netlink::VfState>& vfs, uint32_t vf) {
  for (const auto& s : vfs)
    if (s.vf == vf) return &s;
  return nullptr;
}

Status ApplyVf(const StepVf& step, netlink::Vf* vfs) {
  if (step.applied.empty()) return base::Ok();
  if (!vfs) return Error(Code::kKernel, "no rtnetlink handle for VF settings on the node");
  Status s = vfs->Set(step.pf_index, step.applied);
  if (!s.ok() && s.error().sys_errno == EOPNOTSUPP)
    return std::move(s).error().WithContext("the PF " + step.pf +
                                            "'s driver does not support one of the vf settings; remove it");
  return s;
}

Status RestoreVf(const StepVf& step, netlink::Kernel& host, netlink::Vf* vfs) {
  if (!vfs) return Error(Code::kKernel, "no rtnetlink handle to restore the settings of VF " + step.pci);
  ASSIGN_OR_RETURN(auto pf, host.FindLinkByIndex(step.pf_index));
  if (!pf || pf->name != step.pf) {
    ASSIGN_OR_RETURN(pf, host.FindLink(step.pf));
  }
  if (!pf) {
    base::Log::Warn("PF " + step.pf + " of VF " + step.pci + " is gone; its VF settings went with it");
    return base::Ok();
  }
  if (!step.old.empty()) {
    Status s = vfs->Set(pf->index, step.old);
    if (!s.ok() && s.error().sys_errno == EOPNOTSUPP) s = RestoreOneByOne(step, pf->index, *vfs);
    if (!s.ok()) {
      auto list = vfs->List(pf->index);
      if (list.ok() && !FindVfState(*list, step.old.vf)) {
        base::Log::Warn("PF " + step.pf + " no longer has VF " + std::to_string(step.old.vf) + " (" +
                        step.pci + "): nothing to restore");
        return base::Ok();
      }
      return std::move(s).error().WithContext("restoring VF " + step.pci + " through " + step.pf);
    }
    base::Log::Info("VF " + step.pci + " settings restored: " + netlink::DescribeVfSettings(step.old));
  }
  // Some drivers pass a PF-set MAC on to the VF's netdev and keep it there: the netdev's own goes back too.
  if (step.applied.mac && !step.netdev.empty() && !step.netdev_mac.empty()) {
    ASSIGN_OR_RETURN(auto link, host.FindLink(step.netdev));
    if (link && link->mac == *step.applied.mac && link->mac != step.netdev_mac) {
      Status s = host.SetMac(link->index, step.netdev_mac);
      if (!s.ok() && s.error().sys_errno == EBUSY && link->up) {
        RETURN_IF_ERROR(host.SetUp(link->index, false));
        s = host.SetMac(link->index, step.netdev_mac);
        if (s.ok()) s = host.SetUp(link->index, true);
      }
      RETURN_IF_ERROR(s);
    }
  }
  return base::Ok();
}

Status CheckVf(const StepVf& step, netlink::Vf& vfs) {
  ASSIGN_OR_RETURN(auto list, vfs.List(step.pf_index));
  const netlink::VfState* now = FindVfState(list, step.applied.vf);
  auto mismatch = [&](const std::string& what) {
    return Error(Code::kCheckFailed, "CHECK: VF " + step.pci + " (" + step.pf + " vf " +
                                         std::to_string(step.applied.vf) + ") " + what);
  };
  if (!now) return mismatch("is no longer reported by its PF");
  const netlink::VfSettings& a = step.applied;
  if (a.mac && !now->mac.empty() && now->mac != *a.mac)
    return mismatch("has MAC " + now->mac + ", expected " + *a.mac);
  if (a.vlan && (now->vlan != a.vlan->vlan || now->qos != a.vlan->qos))
    return mismatch("has vlan " + std::to_string(now->vlan) + " qos " + std::to_string(now->qos) +
                    ", expected " + std::to_string(a.vlan->vlan) + " qos " + std::to_string(a.vlan->qos));
  if (a.rate && (now->min_tx_rate != a.rate->min_tx_rate || now->max_tx_rate != a.rate->max_tx_rate))
    return mismatch("has tx rates " + std::to_string(now->min_tx_rate) + ".." +
                    std::to_string(now->max_tx_rate) + " Mbps, expected " +
                    std::to_string(a.rate->min_tx_rate) + ".." + std::to_string(a.rate->max_tx_rate));
  if (a.spoofchk && now->spoofchk && *now->spoofchk != *a.spoofchk)
    return mismatch("has spoofchk " + OnOff(*now->spoofchk) + ", expected " + OnOff(*a.spoofchk));
  if (a.trust && now->trust && *now->trust != *a.trust)
    return mismatch("has trust " + OnOff(*now->trust) + ", expected " + OnOff(*a.trust));
  if (a.link_state && now->link_state && *now->link_state != *a.link_state)
    return mismatch("has link state " + std::to_string(*now->link_state) + ", expected " +
                    std::to_string(*a.link_state));
  if (a.node_guid && !now->node_guid.empty() && now->node_guid != *a.node_guid)
    return mismatch("has node GUID " + now->node_guid + ", expected " + *a.node_guid);
  return base::Ok();
}

}  // namespace cni
