#include "cni/node_netns.h"

#include <optional>

#include "netlink/netns.h"
#include "netlink/rdma_socket.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/smc_socket.h"
#include "netlink/sysctl.h"
#include "netlink/vf_socket.h"

namespace cni {

namespace {

// As the CNI commands open namespaces (cni/run.cpp): the node's once, each
// pod's once and checked not to be the node's, handles duplicated from it.
class NodeNetnsOpener : public NetnsOpener {
 public:
  base::Result<std::unique_ptr<netlink::Kernel>> Open(const std::string& path) override {
    ASSIGN_OR_RETURN(auto ns, Pod(path));
    return netlink::OpenRtnl(std::move(ns));
  }
  base::Result<std::unique_ptr<netlink::Rdma>> OpenRdma(const std::string& path) override {
    ASSIGN_OR_RETURN(auto ns, path.empty() ? Node() : Pod(path));
    return netlink::OpenRdma(ns);
  }
  base::Result<std::unique_ptr<netlink::Sysctl>> OpenSysctl(const std::string& path) override {
    ASSIGN_OR_RETURN(auto ns, Pod(path));
    return netlink::OpenSysctl(ns);
  }
  base::Result<std::unique_ptr<netlink::Smc>> OpenSmc(const std::string& path) override {
    ASSIGN_OR_RETURN(auto ns, path.empty() ? Node() : Pod(path));
    return netlink::OpenSmc(ns);
  }
  base::Result<std::unique_ptr<netlink::Vf>> OpenVf() override {
    ASSIGN_OR_RETURN(auto ns, Node());
    return netlink::OpenVf(ns);
  }
  std::optional<netlink::NetnsId> Identify(const netlink::Kernel& pod) override {
    auto id = netlink::NetnsIdOf(pod.NetnsFd(), pod.NetnsCookie());
    return id.ok() ? std::optional<netlink::NetnsId>(*id) : std::nullopt;
  }
  bool MayExist(const std::string& path, const std::optional<netlink::NetnsId>& id,
                std::string* kept_by) override {
    return netlink::NetnsMayExist(id, path, "/proc", kept_by);
  }

 private:
  base::Result<netlink::Netns> Node() {
    if (!node_) {
      ASSIGN_OR_RETURN(node_, netlink::Netns::Current());
      home_.emplace(*node_);
    }
    return node_->Dup();
  }
  base::Result<netlink::Netns> Pod(const std::string& path) {
    if (pod_ && pod_path_ == path) return pod_->Dup();
    ASSIGN_OR_RETURN(auto node, Node());
    ASSIGN_OR_RETURN(auto ns, netlink::Netns::OpenForeign(path, "the pod netns", node));
    pod_path_ = path;
    pod_ = std::move(ns);
    return pod_->Dup();
  }

  std::optional<netlink::Netns> node_;
  std::optional<netlink::NetnsHome> home_;  // declared after node_: gone before it
  std::string pod_path_;
  std::optional<netlink::Netns> pod_;
};

}  // namespace

std::unique_ptr<NetnsOpener> MakeNodeNetnsOpener() { return std::make_unique<NodeNetnsOpener>(); }

base::Result<std::unique_ptr<netlink::Kernel>> OpenNodeKernel() {
  ASSIGN_OR_RETURN(auto ns, netlink::Netns::Current());
  return netlink::OpenRtnl(std::move(ns));
}

}  // namespace cni
