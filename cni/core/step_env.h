// What every journal step is given (StepEnv, UndoEnv, CheckEnv, StepSite), the functions each step type
// defines (CNI_STEP), and the helpers the family files share.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "cni/core/json_fields.h"
#include "netlink/rdma_kernel.h"
#include "netlink/rtnl_kernel.h"
#include "netlink/smc_kernel.h"
#include "netlink/sysctl.h"
#include "netlink/vf_kernel.h"

namespace ipam {
class Executor;
}  // namespace ipam

namespace cni {

struct AttachmentState;
struct Context;

/// What steps act on. `pod` is null when the pod netns is gone.
struct StepEnv {
  netlink::Kernel& host;
  netlink::Kernel* pod = nullptr;
  int pod_index = 0;                      ///< our interface's index in the pod, once moved
  ipam::Executor* ipam = nullptr;         ///< runs IPAM DEL for a journaled IPAM ADD
  netlink::Rdma* host_rdma = nullptr;     ///< RDMA netlink on the node (null: none)
  netlink::Rdma* pod_rdma = nullptr;      ///< RDMA netlink in the pod (null: none or gone)
  netlink::Sysctl* pod_sysctl = nullptr;  ///< the pod's sysctls (null: gone)
  netlink::Smc* pod_smc = nullptr;        ///< SMC netlink in the pod (null: none or gone)
  netlink::Smc* host_smc = nullptr;       ///< SMC netlink on the node, for the node-wide UEID table
  netlink::Vf* host_vf = nullptr;         ///< VF settings through PFs on the node (null: none)
  /// Whether another attachment still relies on a UEID (the table is node-wide).
  std::function<bool(const std::string& ueid)> ueid_in_use = nullptr;
  /// Our interface's MAC in the pod, as read once it arrived or as set since.
  std::string pod_mac = std::string();
};

/// What an undo knows of the rest of the journal.
struct UndoEnv {
  const AttachmentState& state;
  std::string pod_mac;  ///< a MAC a StepMac gave the pod side: how the move home recognises the device
  bool last = false;    ///< the step ends the journal
};

/// What CHECK compares the steps with: the pod side as it is now, the rest opened when a step first needs it.
struct CheckEnv {
  Context& ctx;
  const AttachmentState& state;
  netlink::LinkInfo link = {};  ///< our pod-side interface (none for a VF on vfio-pci)
  std::vector<netlink::AddrInfo> addrs = {};
  std::vector<netlink::RouteInfo> routes = {};
  std::vector<netlink::RuleInfo> rules = {};
  std::unique_ptr<netlink::Sysctl> sysctl = nullptr;  ///< the pod's, once a StepSysctl asked
  /// The pod's SMC pnet table, once a StepPnet asked.
  std::optional<std::vector<netlink::PnetEntry>> pnet = std::nullopt;
};

/// Where ValidateState found a step: what its messages name it by, and the state's table.
struct StepSite {
  std::string field_prefix;  ///< "steps[3]."
  uint32_t table = 0;        ///< the state's policy routing table
};

// Every step type T defines these in its family's file; kOp in T is its journal name, kOnLink marks a step on
// the pod-side link itself (it leaves with the link). T names a type: parentheses would not compile.
// NOLINTBEGIN(bugprone-macro-parentheses)
#define CNI_STEP(T)                                                           \
  void Fields(JsonFields& f, T& s);                                           \
  std::string Describe(const T& s);                                           \
  base::Status Apply(const T& s, const AttachmentState& state, StepEnv& env); \
  base::Status Undo(const T& s, const UndoEnv& u, StepEnv& env);              \
  base::Status Validate(const T& s, const StepSite& at);                      \
  base::Status Check(const T& s, CheckEnv& env);
// NOLINTEND(bugprone-macro-parentheses)

/// Error for an apply on the pod side when the pod netns is gone.
base::Result<netlink::Kernel*> PodOf(const StepEnv& env);
base::Status IgnoreGone(base::Status s);
base::Status IgnoreExists(base::Status s);
/// kState: `field` holds `value`, which must be `must`; the value shown escaped.
base::Error BadValue(const std::string& field, const std::string& value, const std::string& must);
/// BadValue unless `v` is an interface name.
base::Status CheckIfName(const std::string& field, const std::string& v);
/// kCheckFailed "CHECK: what".
base::Error Mismatch(const std::string& what);

}  // namespace cni
