// The kernel as the admin commands reach it: the node's rtnetlink and a pod netns opener, as a CNI command's.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/error.h"
#include "cni/core/context.h"
#include "netlink/netns.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// Opens the node's netns and each pod's once (never the node's); later handles are duplicates, so one
/// command's handles name one namespace whatever the path names by then. Switches return to the node's.
class NodeNetnsOpener : public NetnsOpener {
 public:
  /// `what`: how messages name a pod's path ("CNI_NETNS").
  explicit NodeNetnsOpener(std::string what) : what_(std::move(what)) {}
  base::Result<std::unique_ptr<netlink::Kernel>> Open(const std::string& path) override;
  base::Result<std::unique_ptr<netlink::Rdma>> OpenRdma(const std::string& path) override;
  base::Result<std::unique_ptr<netlink::Sysctl>> OpenSysctl(const std::string& path) override;
  base::Result<std::unique_ptr<netlink::Smc>> OpenSmc(const std::string& path) override;
  base::Result<std::unique_ptr<netlink::Vf>> OpenVf() override;
  std::optional<netlink::NetnsId> Identify(const netlink::Kernel& pod) override;
  bool MayExist(const std::string& path, const std::optional<netlink::NetnsId>& id,
                std::string* kept_by) override;
  /// The node's netns.
  base::Result<netlink::Netns> Node();

 private:
  base::Result<netlink::Netns> Pod(const std::string& path);

  std::string what_;
  std::optional<netlink::Netns> node_;
  std::optional<netlink::NetnsHome> home_;  // declared after node_: gone before it
  std::string pod_path_;
  std::optional<netlink::Netns> pod_;
};

/// A NodeNetnsOpener for a command run by hand on the node.
std::unique_ptr<NetnsOpener> MakeNodeNetnsOpener();

/// rtnetlink in the netns this process runs in.
base::Result<std::unique_ptr<netlink::Kernel>> OpenNodeKernel();

}  // namespace cni
