// The journal's steps. Each is defined once, in the file of its family
// (cni/steps_link.cpp, steps_ip.cpp, steps_rdma.cpp, steps_smc.cpp,
// steps_vf.cpp, steps_sysctl.cpp, group.cpp): its members as the state file spells
// them, how it reads in logs, how it is applied, undone, validated when read
// back and verified by CHECK. cni/steps.cpp dispatches over the variant.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/error.h"
#include "netlink/kernel.h"
#include "netlink/rdma_kernel.h"
#include "netlink/smc.h"
#include "netlink/sysctl.h"
#include "netlink/vf_kernel.h"

namespace ipam {
class Executor;
}  // namespace ipam

namespace cni {

struct AttachmentState;
struct Context;

// kOp is the step's name in the journal; kOnLink marks a step on the pod-side
// link itself, which leaves with the link when it is moved home or deleted.
struct StepIpam {  ///< IPAM ADD ran; inverse: IPAM DEL with the same config
  static constexpr const char* kOp = "ipam";
  std::string type;
  nlohmann::json config;  ///< {cniVersion, name, ipam, ...}: what IPAM needs, not prevResult
};
struct StepMove {  ///< device moved into the pod as pod_name; inverse: home as origin
  static constexpr const char* kOp = "move";
  std::string pod_name;
};
struct StepChild {  ///< macvlan/ipvlan child created in the pod as spec.name; inverse: deleted
  static constexpr const char* kOp = "child";
  std::string parent;           ///< the node device's name
  netlink::ChildLinkSpec spec;  ///< what was asked of the kernel (mtu is left to StepMtu)
};
struct StepMtu {  ///< pod-side MTU changed; inverse: taken away by the move home
  static constexpr const char* kOp = "mtu";
  static constexpr bool kOnLink = true;
  uint32_t mtu = 0;
};
struct StepAddr {  ///< address added in the pod
  static constexpr const char* kOp = "addr";
  static constexpr bool kOnLink = true;
  netlink::AddrInfo addr;
};
struct StepUp {  ///< pod-side link set up
  static constexpr const char* kOp = "up";
  static constexpr bool kOnLink = true;
};
struct StepRoute {  ///< route added in the pod
  static constexpr const char* kOp = "route";
  static constexpr bool kOnLink = true;
  netlink::RouteInfo route;
};
struct StepRule {  ///< rule added in the pod
  static constexpr const char* kOp = "rule";
  netlink::RuleInfo rule;
};
struct StepRdmaMode {  ///< setSystemMode: the kernel's RDMA netns mode switched; node-wide, kept on undo
  static constexpr const char* kOp = "rdma-mode";
  std::string mode;  ///< "shared" or "exclusive"
  std::string old;
};
struct StepRdmaMove {  ///< exclusive mode: RDMA device moved into the pod; inverse: back to the node
  static constexpr const char* kOp = "rdma-move";
  std::string device;
};
struct StepSoftRdma {  ///< Soft-RoCE device created on the pod's interface; inverse: deleted
  static constexpr const char* kOp = "rdma-soft";
  std::string device;
};
struct StepSysctl {  ///< sysctl written in the pod; inverse: the old value back
  static constexpr const char* kOp = "sysctl";
  std::string name;
  std::string value;
  std::string old;
};
struct StepPnet {  ///< SMC pnet table entry added in the pod; inverse: removed
  static constexpr const char* kOp = "pnet";
  netlink::PnetEntry entry;
};
struct StepUeid {  ///< SMC-Rv2 User EID added (node-wide); inverse: removed unless another attachment uses it
  static constexpr const char* kOp = "ueid";
  std::string ueid;
};
struct StepVf {  ///< SR-IOV VF settings applied through its PF on the node; inverse: `old` set back
  static constexpr const char* kOp = "vf";
  std::string pf;  ///< the PF's netdev name on the node
  int pf_index = 0;
  std::string pci;         ///< the VF's PCI address
  std::string netdev;      ///< the VF's netdev on the node; "" when it has none (vfio-pci)
  std::string netdev_mac;  ///< that netdev's MAC before ADD, put back if a MAC change followed it
  netlink::VfSettings applied;
  netlink::VfSettings old;  ///< the applied members as they were; one the driver did not report is absent
};
struct StepMac {  ///< pod-side MAC set; inverse: the move home restores the node MAC
  static constexpr const char* kOp = "mac";
  static constexpr bool kOnLink = true;
  std::string mac;
};
struct StepMember {  ///< a group's attachment of one device (cni/group.h); inverse: its DEL
  static constexpr const char* kOp = "member";
  std::string pod_name;  ///< its interface in the pod, and the key of its own state file
  std::string device;    ///< the device ID or name it was given
  std::string why;       ///< why that device: the kubelet's allocation, or the pool's preference
};
using Step =
    std::variant<StepIpam, StepMove, StepChild, StepMtu, StepAddr, StepUp, StepRoute, StepRule, StepRdmaMode,
                 StepRdmaMove, StepSoftRdma, StepSysctl, StepPnet, StepUeid, StepVf, StepMac, StepMember>;

/// The last step of type T in `steps`, or null.
template <class T>
const T* FindStep(const std::vector<Step>& steps) {
  const T* found = nullptr;
  for (const Step& s : steps)
    if (const T* t = std::get_if<T>(&s)) found = t;
  return found;
}

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

/// What CHECK compares the steps with: the pod side as it is now, and the
/// node's VF settings and the pod's sysctls and SMC table, opened when a step
/// first needs them.
struct CheckEnv {
  Context& ctx;
  const AttachmentState& state;
  netlink::LinkInfo link;  ///< our pod-side interface (none for a VF on vfio-pci)
  std::vector<netlink::AddrInfo> addrs;
  std::vector<netlink::RouteInfo> routes;
  std::vector<netlink::RuleInfo> rules;
  std::unique_ptr<netlink::Sysctl> sysctl;              ///< the pod's, once a StepSysctl asked
  std::optional<std::vector<netlink::PnetEntry>> pnet;  ///< the pod's table, once a StepPnet asked
};

/// Where a state's step is: "steps[3]." in the messages of ValidateState.
struct StepAt {
  std::string at;
  uint32_t table = 0;  ///< the state's policy routing table
};

/// One definition of a record's members serves both ways: writing puts each
/// into `out` (a tree), or appends it to JSON text (Text: the state file,
/// written at every journal step without building a tree); reading takes
/// each from `in`, checking its type and naming the first that is missing or
/// mistyped (kState).
class JsonFields {
 public:
  explicit JsonFields(nlohmann::json& out) : out_(&out) {}
  explicit JsonFields(const nlohmann::json& in) : in_(&in) {}
  /// The JSON text of one object whose members `members` writes, in the
  /// order it names them: what dumping the tree they would make gives, but
  /// for the order of the keys. A string that needs no escape (printable
  /// ASCII but '"' and '\\') goes as it is, any other through nlohmann's
  /// serializer; numbers as nlohmann writes them (std::to_chars).
  static std::string Text(const std::function<void(JsonFields&)>& members);
  bool reading() const { return in_ != nullptr; }
  const base::Status& status() const { return status_; }
  void Fail(base::Error e) {
    if (status_.ok()) status_ = std::move(e);
  }
  /// Fails with kState "state: <what>".
  void Refuse(const std::string& what);
  JsonFields& operator()(const char* key, std::string& v);
  JsonFields& operator()(const char* key, uint64_t& v);
  JsonFields& operator()(const char* key, uint32_t& v);
  JsonFields& operator()(const char* key, uint8_t& v);
  JsonFields& operator()(const char* key, int& v);
  JsonFields& operator()(const char* key, bool& v);
  JsonFields& operator()(const char* key, nlohmann::json& v);
  JsonFields& operator()(const char* key, netlink::IpPrefix& v);
  JsonFields& operator()(const char* key, netlink::IpAddress& v);
  JsonFields& operator()(const char* key, std::vector<std::string>& v);
  /// Present when set; absent reads as nullopt.
  template <class V>
  JsonFields& operator()(const char* key, std::optional<V>& v) {
    if (Has(key, v.has_value())) (*this)(key, reading() ? v.emplace() : *v);
    return *this;
  }
  /// A nested record: one with its own Fields().
  template <class V>
  requires requires(JsonFields& f, V& v) { Fields(f, v); }
  JsonFields& operator()(const char* key, V& v) {
    Nested(key, [&v](JsonFields& f) { Fields(f, v); });
    return *this;
  }
  template <class V>
  requires requires(JsonFields& f, V& v) { Fields(f, v); }
  JsonFields& operator()(const char* key, std::vector<V>& v) {
    NestedArray(key, v.size(), [&v](JsonFields& f, size_t i) {
      if (f.reading()) v.emplace_back();
      Fields(f, v[i]);
    });
    return *this;
  }
  /// A member holding an array of records, `each` giving the i-th's members
  /// (reading: from each element of the array at `key`).
  void Records(const char* key, size_t n, const std::function<void(JsonFields&, size_t)>& each) {
    NestedArray(key, n, each);
  }
  /// Writing: `present`; reading: whether `key` is there.
  bool Has(const char* key, bool present) const { return reading() ? in_->contains(key) : present; }
  /// The member `key` being read (null on error or when writing).
  const nlohmann::json* In(const char* key);
  nlohmann::json* Out() { return out_; }

 private:
  explicit JsonFields(std::string* text) : text_(text) {}
  /// Text: the separator and `"key":`; the caller appends the value.
  std::string& Key(const char* key);
  /// Writes `v` under `key`, into the tree or the text.
  template <class T>
  void Put(const char* key, const T& v);
  void Wrong(const char* key, const std::string& must);
  void Nested(const char* key, const std::function<void(JsonFields&)>& each);
  void NestedArray(const char* key, size_t n, const std::function<void(JsonFields&, size_t)>& each);
  template <class U>
  JsonFields& Unsigned(const char* key, U& v);

  nlohmann::json* out_ = nullptr;
  const nlohmann::json* in_ = nullptr;
  std::string* text_ = nullptr;
  bool first_ = true;  ///< text: no member written yet
  base::Status status_ = base::Ok();
};

void Fields(JsonFields& f, netlink::AddrInfo& a);
void Fields(JsonFields& f, netlink::RouteInfo& r);
void Fields(JsonFields& f, netlink::RuleInfo& r);
void Fields(JsonFields& f, netlink::VfSettings& v);

// Every step type T defines these in its family's file.
#define CNI_STEP(T)                                                           \
  void Fields(JsonFields& f, T& s);                                           \
  std::string Describe(const T& s);                                           \
  base::Status Apply(const T& s, const AttachmentState& state, StepEnv& env); \
  base::Status Undo(const T& s, const UndoEnv& u, StepEnv& env);              \
  base::Status Validate(const T& s, const StepAt& at);                        \
  base::Status Check(const T& s, CheckEnv& env);
CNI_STEP(StepIpam)
CNI_STEP(StepMove)
CNI_STEP(StepChild)
CNI_STEP(StepMtu)
CNI_STEP(StepAddr)
CNI_STEP(StepUp)
CNI_STEP(StepRoute)
CNI_STEP(StepRule)
CNI_STEP(StepRdmaMode)
CNI_STEP(StepRdmaMove)
CNI_STEP(StepSoftRdma)
CNI_STEP(StepSysctl)
CNI_STEP(StepPnet)
CNI_STEP(StepUeid)
CNI_STEP(StepVf)
CNI_STEP(StepMac)
CNI_STEP(StepMember)
#undef CNI_STEP

/// A pod-side address or route planned before its link existed names it by
/// index 0; once the link is in the pod, it is `pod_index`.
void BindPodIndex(StepAddr& s, int pod_index);
void BindPodIndex(StepRoute& s, int pod_index);
inline void BindPodIndex(auto&, int) {}

// The dispatch over the variant.
/// The step's op as the state file spells it ("move", "child", "addr", ...).
const char* StepOp(const Step& step);
/// Every op, in the order of the Step variant (for fault-point coverage).
std::vector<std::string> AllStepOps();
/// Short text for logs and errors: "move eth1 -> erdma0", "rule from 10.9.0.5 lookup 200".
std::string DescribeStep(const Step& step);
/// Whether the step is on the pod-side link itself (kOnLink).
bool OnLink(const Step& step);
/// One journal step as the state file spells it, and back (a VF's claim keeps its StepVf).
nlohmann::json StepToJson(const Step& step);
/// Writing only: the step's members, its op first (StepToJson's, as text).
void StepFields(JsonFields& f, const Step& step);
base::Result<Step> StepFromJson(const nlohmann::json& j);
base::Status ApplyStep(const Step& step, const AttachmentState& state, StepEnv& env);
base::Status UndoStep(const Step& step, const UndoEnv& u, StepEnv& env);
base::Status CheckStep(const Step& step, CheckEnv& env);
/// One step as ValidateState checks it (a VF claim's StepVf: table 0).
base::Status ValidateStep(const Step& step, const StepAt& at = {"steps[0].", 0});

// Shared by the family files.
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
