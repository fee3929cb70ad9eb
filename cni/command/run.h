// The plugin's entry point: one CNI invocation; the only place an Error becomes CNI JSON and an exit status.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/core/context.h"
#include "cni/core/env.h"
#include "conf/node.h"
#include "ipam/ipam.h"
#include "netlink/rtnl_kernel.h"

namespace cni {

/// What the commands run against: the node's kernel, the pod's netns and the IPAM plugins. Run uses the real
/// ones; the fuzz harness (test/fuzz/) an in-memory node.
class Backend {
 public:
  virtual ~Backend() = default;
  /// The node's kernel: rtnetlink in the netns the plugin runs in.
  virtual base::Result<std::unique_ptr<netlink::Kernel>> OpenHost() = 0;
  /// Opens the kernel interfaces of a netns path (the pod's, or "" for the node's RDMA and SMC).
  virtual NetnsOpener& Opener() = 0;
  /// Runs the IPAM plugins found on `cni_path` (CNI_PATH).
  virtual std::unique_ptr<ipam::Executor> Ipam(const std::vector<std::string>& cni_path) = 0;
  /// Last changes to a command's context (sysfs root, lock wait); the real backend keeps them.
  virtual void Prepare(Context& ctx) { (void)ctx; }
  /// The node admin's policy: the node file $ERDMA_CNI_NODE_CONFIG names.
  virtual base::Result<conf::NodePolicy> NodePolicy(const Getenv& getenv) {
    return conf::LoadNodePolicy(getenv(conf::kNodeConfigEnv));
  }
};

/// Runs one invocation against the real kernel, appending its stdout to `out`; returns the exit status.
int Run(const Getenv& getenv, const std::string& stdin_bytes, std::string& out);

/// Run against `backend`: the same parsing, dispatch, results and errors.
int RunWith(const Getenv& getenv, const std::string& stdin_bytes, std::string& out, Backend& backend);

}  // namespace cni
