#include "cni/journal/rdma_device.h"

#include <cerrno>

#include "base/log.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using netlink::NetnsMode;

std::string NetnsModeBootFix(NetnsMode want) {
  const char* n = want == NetnsMode::kExclusive ? "0" : "1";
  return std::string("boot with ib_core netns_mode=") + n + " (e.g. `options ib_core netns_mode=" + n +
         "` in /etc/modprobe.d/)";
}

Result<std::optional<uint32_t>> FindRdmaDevice(netlink::Rdma& rdma, const std::string& name) {
  ASSIGN_OR_RETURN(auto devices, rdma.ListDevices());
  for (const auto& d : devices)
    if (d.name == name) return std::optional<uint32_t>(d.index);
  return std::optional<uint32_t>();
}

Status MoveRdmaDevice(netlink::Rdma& from, const std::string& name, int netns_fd) {
  ASSIGN_OR_RETURN(auto index, FindRdmaDevice(from, name));
  if (!index)
    return Error(Code::kRdmaNotPaired, "RDMA device " + name + " is not visible where it should be");
  Status s = from.MoveDevice(*index, netns_fd);
  if (!s.ok() && s.error().sys_errno == EOPNOTSUPP)
    return Error(Code::kRdmaCannotMove,
                 "RDMA device " + name +
                     " cannot move between network namespaces (EOPNOTSUPP: its driver lacks "
                     "disassociate_ucontext); use rdma.netnsMode \"shared\" for it",
                 s.error().details, EOPNOTSUPP);
  return s;
}

Status ReturnRdmaDevice(const std::string& name, netlink::Rdma* host, netlink::Rdma* pod, int host_fd) {
  if (pod) {
    auto index = FindRdmaDevice(*pod, name);
    if (index.ok() && *index) {
      RETURN_IF_ERROR(pod->MoveDevice(**index, host_fd));
      base::Log::Info("RDMA device " + name + " returned to the node");
      return base::Ok();
    }
  }
  if (host) {
    ASSIGN_OR_RETURN(auto index, FindRdmaDevice(*host, name));
    if (index) {
      base::Log::Info("RDMA device " + name + " is already on the node");
      return base::Ok();
    }
  }
  base::Log::Warn("RDMA device " + name +
                  " is neither in the pod nor on the node (a soft device dies with its netdev)");
  return base::Ok();
}

Status DeleteSoftDevice(const std::string& name, netlink::Rdma* host, netlink::Rdma* pod) {
  for (netlink::Rdma* r : {host, pod}) {
    if (!r) continue;
    auto index = FindRdmaDevice(*r, name);
    if (!index.ok() || !*index) continue;
    Status s = r->DelDevice(**index);
    if (s.ok() || s.error().sys_errno == EINVAL || s.error().sys_errno == ENODEV) return base::Ok();
    return s;
  }
  return base::Ok();
}

}  // namespace cni
