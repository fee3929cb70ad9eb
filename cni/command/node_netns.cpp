#include "cni/command/node_netns.h"

#include <optional>

#include "netlink/netns.h"
#include "netlink/rdma_socket.h"
#include "netlink/rtnl_socket.h"
#include "netlink/smc_socket.h"
#include "netlink/sysctl.h"
#include "netlink/vf_socket.h"

namespace cni {

base::Result<std::unique_ptr<netlink::Kernel>> NodeNetnsOpener::Open(const std::string& path) {
  ASSIGN_OR_RETURN(auto ns, Pod(path));
  return netlink::OpenRtnl(std::move(ns));
}

base::Result<std::unique_ptr<netlink::Rdma>> NodeNetnsOpener::OpenRdma(const std::string& path) {
  ASSIGN_OR_RETURN(auto ns, path.empty() ? Node() : Pod(path));
  return netlink::OpenRdma(ns);
}

base::Result<std::unique_ptr<netlink::Sysctl>> NodeNetnsOpener::OpenSysctl(const std::string& path) {
  ASSIGN_OR_RETURN(auto ns, Pod(path));
  return netlink::OpenSysctl(ns);
}

base::Result<std::unique_ptr<netlink::Smc>> NodeNetnsOpener::OpenSmc(const std::string& path) {
  ASSIGN_OR_RETURN(auto ns, path.empty() ? Node() : Pod(path));
  return netlink::OpenSmc(ns);
}

base::Result<std::unique_ptr<netlink::Vf>> NodeNetnsOpener::OpenVf() {
  ASSIGN_OR_RETURN(auto ns, Node());
  return netlink::OpenVf(ns);
}

std::optional<netlink::NetnsId> NodeNetnsOpener::Identify(const netlink::Kernel& pod) {
  auto id = netlink::NetnsIdOf(pod.NetnsFd(), pod.NetnsCookie());
  return id.ok() ? std::optional<netlink::NetnsId>(*id) : std::nullopt;
}

bool NodeNetnsOpener::MayExist(const std::string& path, const std::optional<netlink::NetnsId>& id,
                               std::string* kept_by) {
  return netlink::NetnsMayExist(id, path, "/proc", kept_by);
}

base::Result<netlink::Netns> NodeNetnsOpener::Node() {
  if (!node_) {
    ASSIGN_OR_RETURN(node_, netlink::Netns::Current());
    home_.emplace(*node_);
  }
  return node_->Dup();
}

base::Result<netlink::Netns> NodeNetnsOpener::Pod(const std::string& path) {
  if (pod_ && pod_path_ == path) return pod_->Dup();
  ASSIGN_OR_RETURN(auto node, Node());
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::OpenForeign(path, what_, node));
  pod_path_ = path;
  pod_ = std::move(ns);
  return pod_->Dup();
}

std::unique_ptr<NetnsOpener> MakeNodeNetnsOpener() {
  return std::make_unique<NodeNetnsOpener>("the pod netns");
}

base::Result<std::unique_ptr<netlink::Kernel>> OpenNodeKernel() {
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::Current());
  return netlink::OpenRtnl(std::move(ns));
}

}  // namespace cni
