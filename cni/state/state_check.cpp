// A state file is input: whoever can write it must not make DEL exec outside CNI_PATH or act on what the
// kernel never gave us. Each value is checked as its source was at ADD, each step by its Validate.
#include "cni/state/state_check.h"

#include "cni/state/device_info.h"
#include "conf/names.h"

namespace cni {

using base::Status;

Status ValidateState(const AttachmentState& s) {
  if (!conf::IsValidContainerId(s.container_id, conf::kMaxLegacyContainerIdBytes))
    return BadValue("containerID", s.container_id, "a CNI container ID ([A-Za-z0-9_.-], at most 256 bytes)");
  RETURN_IF_ERROR(CheckIfName("ifName", s.if_name));
  RETURN_IF_ERROR(CheckIfName("podIfName", s.pod_if_name));
  if (s.member_of) RETURN_IF_ERROR(CheckIfName("memberOf", *s.member_of));
  // A group holds members only, and a member no group of its own.
  for (size_t i = 0; i < s.steps.size(); ++i)
    if (std::holds_alternative<StepMember>(s.steps[i]) != s.group)
      return BadValue("steps[" + std::to_string(i) + "].op", StepOp(s.steps[i]),
                      s.group ? "\"member\" in a group" : "a step of an attachment, not of a group");
  if (s.group && (s.member_of || !s.origin.name.empty()))
    return BadValue("group", "true", "set only on a group, which has no device and is no member");
  if (!s.netns.empty() && !conf::IsValidNetnsPath(s.netns))
    return BadValue("netns", s.netns,
                    "what CNI_NETNS may be: an absolute path of UTF-8 without control characters");
  if (s.table >= netlink::kTableDefault && s.table <= netlink::kTableLocal)
    return BadValue("table", std::to_string(s.table),
                    "a policy routing table other than 253..255 (default, main, local)");
  if (s.rdma_mode != "" && s.rdma_mode != "shared" && s.rdma_mode != "exclusive")
    return BadValue("rdmaMode", s.rdma_mode, "\"shared\", \"exclusive\" or \"\"");
  if (!s.rdma_device.empty() && !conf::IsValidDeviceId(s.rdma_device))
    return BadValue("rdmaDevice", s.rdma_device, "an RDMA device name or \"\"");
  const DeviceOrigin& o = s.origin;
  // A VF on vfio-pci has no netdev: its PCI address stands for the name.
  if (!o.name.empty() && !conf::IsValidIfName(o.name) && !conf::NormalizePci(o.name))
    return BadValue("device.name", o.name,
                    "an interface name (1..15 bytes, no '/', ':' or whitespace) or a PCI address");
  if (o.index < 0) return BadValue("device.index", std::to_string(o.index), "an interface index");
  if (!o.mac.empty() && (!conf::NormalizeMac(o.mac) || o.mac == "00:00:00:00:00:00"))
    return BadValue("device.mac", o.mac,
                    "the device's MAC (not all zeros, which no device we move has) or \"\"");
  if (!o.kind.empty() && (!conf::IsValidDeviceId(o.kind) || o.kind.size() > 32))
    return BadValue("device.kind", o.kind, "a link kind (\"veth\", \"macvlan\", ...) or \"\"");
  if (s.device_info) RETURN_IF_ERROR(ValidateDeviceInfo(*s.device_info));
  for (size_t i = 0; i < s.steps.size(); ++i)
    RETURN_IF_ERROR(ValidateStep(s.steps[i], {"steps[" + std::to_string(i) + "].", s.table}));
  return base::Ok();
}

}  // namespace cni
