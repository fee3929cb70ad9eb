#include "cni/driver/child.h"

#include "base/log.h"
#include "cni/driver/driver.h"
#include "cni/driver/plan.h"
#include "cni/journal/journal.h"
#include "cni/journal/move_home.h"
#include "cni/state/claim.h"
#include "conf/fields.h"
#include "conf/keys.h"
#include "conf/mode_options.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;
using conf::Get;
using conf::Invalid;
using conf::Key;
using nlohmann::json;

namespace {

constexpr std::string_view kMacvlanKeys[] = {"mode", "mac", "sourceMacs"};
constexpr conf::Level kMacvlanLevel{"macvlan", kMacvlanKeys};
constexpr std::string_view kIpvlanKeys[] = {"mode", "mac"};
constexpr conf::Level kIpvlanLevel{"ipvlan", kIpvlanKeys};
constexpr std::pair<std::string_view, MacvlanMode> kMacvlanModes[] = {{"bridge", MacvlanMode::kBridge},
                                                                      {"private", MacvlanMode::kPrivate},
                                                                      {"vepa", MacvlanMode::kVepa},
                                                                      {"passthru", MacvlanMode::kPassthru},
                                                                      {"source", MacvlanMode::kSource}};
constexpr std::pair<std::string_view, IpvlanMode> kIpvlanModes[] = {
    {"l2", IpvlanMode::kL2}, {"l3", IpvlanMode::kL3}, {"l3s", IpvlanMode::kL3s}};

Result<conf::ParsedMode> ParseMacvlan(const conf::ModeInput& in) {
  auto o = std::make_shared<MacvlanOptions>();
  conf::ParsedMode out;
  out.options = o;
  if (!in.block) return out;
  const json& b = *in.block;
  if (!b.is_object()) return Invalid("macvlan: must be an object, e.g. {\"mode\": \"passthru\"}");
  RETURN_IF_ERROR(conf::RefuseUnknown(b, kMacvlanLevel));
  if (const json* m = Get(b, Key(kMacvlanLevel, "mode")))
    RETURN_IF_ERROR(ParseName(*m, "macvlan.mode", "a macvlan mode", kMacvlanModes, o->mode));
  if (const json* m = Get(b, Key(kMacvlanLevel, "mac"))) {
    out.mac = conf::UnicastMac(*m);
    if (!out.mac) return Invalid(std::string("macvlan.mac") + conf::kMacFix);
  }
  if (const json* list = Get(b, Key(kMacvlanLevel, "sourceMacs"))) {
    if (o->mode != MacvlanMode::kSource)
      return Invalid("macvlan.sourceMacs: only mode \"source\" uses it; remove it or set macvlan.mode");
    if (!list->is_array() || list->empty())
      return Invalid("macvlan.sourceMacs: must be a non-empty array of MAC addresses");
    for (const auto& e : *list) {
      std::optional<std::string> v;
      if (e.is_string()) v = conf::NormalizeMac(e.get_ref<const std::string&>());
      if (!v)
        return Invalid("macvlan.sourceMacs: every entry must be a MAC address like \"02:00:00:3b:00:01\"");
      o->source_macs.push_back(*v);
    }
  } else if (o->mode == MacvlanMode::kSource) {
    return Invalid(
        "macvlan.sourceMacs: mode \"source\" receives only from the listed senders; list at least one MAC");
  }
  return out;
}

Status CheckMacvlanMac(const conf::ModeOptions* options, const std::string& key) {
  const auto* o = dynamic_cast<const MacvlanOptions*>(options);
  if (o && o->mode == MacvlanMode::kPassthru)
    return Invalid(key +
                   ": a passthru macvlan takes its parent's MAC, and setting one would change the parent's; "
                   "remove the MAC or use another macvlan.mode");
  return base::Ok();
}

Result<conf::ParsedMode> ParseIpvlan(const conf::ModeInput& in) {
  auto o = std::make_shared<IpvlanOptions>();
  if (const json* b = in.block) {
    if (!b->is_object()) return Invalid("ipvlan: must be an object, e.g. {\"mode\": \"l2\"}");
    RETURN_IF_ERROR(conf::RefuseUnknown(*b, kIpvlanLevel));
    if (const json* m = Get(*b, Key(kIpvlanLevel, "mode")))
      RETURN_IF_ERROR(ParseName(*m, "ipvlan.mode", "an ipvlan mode", kIpvlanModes, o->mode));
    if (Get(*b, Key(kIpvlanLevel, "mac")))
      return Invalid(
          "ipvlan.mac: ipvlan children share their parent's MAC; remove it or use mode \"macvlan\"");
  }
  conf::ParsedMode out;
  out.options = std::move(o);
  return out;
}

}  // namespace

const char* MacvlanModeName(MacvlanMode m) {
  for (const auto& [name, mode] : kMacvlanModes)
    if (mode == m) return name.data();
  return "?";
}

StepChild ChildStep(const conf::Config& cfg, const std::optional<std::string>& mac,
                    const netlink::LinkInfo& parent, const std::string& pod_name) {
  StepChild c;
  c.parent = parent.name;
  c.spec.kind = cfg.mode->name;
  c.spec.parent_index = parent.index;
  c.spec.name = pod_name;
  if (cfg.mode == &kMacvlanMode) {
    const auto& o = conf::OptionsOf<MacvlanOptions>(cfg.mode_options);
    c.spec.mode = static_cast<uint32_t>(o.mode);
    c.spec.source_macs = o.source_macs;
    if (mac) c.spec.mac = *mac;
  } else {
    c.spec.mode = static_cast<uint32_t>(conf::OptionsOf<IpvlanOptions>(cfg.mode_options).mode);
  }
  return c;
}

namespace {

// A child shares its parent's RDMA device, which is possible only where every netns sees it: shared mode. A
// Soft-RoCE device on the child is the child's own and may go exclusive.
Status CheckChildRdma(const conf::Config& cfg, const netlink::LinkInfo& parent, const RdmaPlan& plan) {
  const std::string mode(cfg.mode->name);
  if (plan.pair && plan.mode == netlink::NetnsMode::kExclusive)
    return Error(Code::kInvalidConfig,
                 "rdma.netnsMode: " + mode + " children share " + parent.name + "'s RDMA device " +
                     plan.pair->device.name +
                     ", and in exclusive mode an RDMA device lives in one netns only; use shared mode "
                     "(rdma.netnsMode \"shared\"), or mode \"move\" or \"vf\" to give the pod a device "
                     "of its own");
  const bool erdma = plan.pair && (plan.pair->how == netlink::kPairedByErdmaGuid ||
                                   plan.pair->device.name.rfind("erdma", 0) == 0);
  const MacvlanMode macvlan = conf::OptionsOf<MacvlanOptions>(cfg.mode_options).mode;
  if (erdma && cfg.mode == &kMacvlanMode && macvlan != MacvlanMode::kPassthru)
    base::Log::Warn(std::string("macvlan.mode \"") + MacvlanModeName(macvlan) + "\" on " + parent.name +
                    ", an eRDMA ENI: the VPC drops frames from a MAC the ENI does not own, "
                    "so this child's traffic will not leave the node; use macvlan.mode \"passthru\" or "
                    "mode \"ipvlan\"");
  return base::Ok();
}

class Child : public Driver {
 public:
  Result<Target> Find(Context& ctx, const StateStore& store, const RdmaAccess& rdma) const override {
    const DeviceQuery query = QueryFor(ctx.cfg.device);
    Target t;
    ASSIGN_OR_RETURN(t.device, FindOnNode(ctx, store, rdma, query));
    t.hold = Hold::kShare;
    t.hold_name = t.device->name;
    t.selection = query.Describe();
    return t;
  }
  Status Resolve(Context& ctx, const RdmaAccess& rdma, Target& t) const override {
    // The result names the parent's PCI function: the HCA the child's traffic uses.
    t.pci = PciAddressOf(ctx.sysfs_root, t.device->name);
    // The kernel refuses a child's MTU above its parent's with a bare EINVAL.
    if (ctx.cfg.mtu && t.device->mtu && *ctx.cfg.mtu > t.device->mtu) {
      const std::string most = std::to_string(t.device->mtu);
      const std::string& dev = t.device->name;
      return Error(Code::kInvalidConfig, "mtu: " + std::to_string(*ctx.cfg.mtu) + " is more than " + dev +
                                             "'s MTU, " + most + ", which a " +
                                             std::string(ctx.cfg.mode->name) +
                                             " child cannot exceed; set mtu to at most " + most +
                                             ", or raise " + dev + "'s MTU on the node");
    }
    RETURN_IF_ERROR(ResolveTargetRdma(ctx, rdma, t));
    return CheckChildRdma(ctx.cfg, *t.device, t.rdma);
  }
  Result<Plan> MakePlan(const Context& ctx, const Target& t, const std::string& pod_name,
                        uint32_t table) const override {
    Plan plan =
        LinkPlan(ctx, t, pod_name, table, ChildStep(ctx.cfg, PodMac(ctx), *t.device, pod_name), false);
    plan.log_line =
        std::string("attached a ") + std::string(ctx.cfg.mode->name) + " child of " + plan.log_line;
    return plan;
  }
  void UndoWithoutState(Context& ctx, const StateStore& store, const std::string& path, StepEnv& env,
                        const std::string& pod_name, std::vector<Error>& errors) const override {
    if (env.pod) {
      StepChild c;
      c.spec.kind = ctx.cfg.mode->name;
      c.spec.name = pod_name;
      if (Status s = DeleteChild(c, env); !s.ok()) errors.push_back(std::move(s).error());
    }
    if (errors.empty()) DropShares(store.DevicesDir(), store.ChildrenDir(), path, ctx.lock_wait_ms);
  }
};

}  // namespace

const conf::ModeSpec kMacvlanMode{.name = "macvlan",
                                  .options_key = "macvlan",
                                  .takes_device = true,
                                  .from_pool = true,
                                  .child = true,
                                  .sets_mac = true,
                                  .moves_rdma = true,
                                  .pod_gets = "a macvlan child of the device, born in the pod",
                                  .parse = ParseMacvlan,
                                  .check_mac = CheckMacvlanMac,
                                  .driver = DriverOf<Child>};

const conf::ModeSpec kIpvlanMode{.name = "ipvlan",
                                 .options_key = "ipvlan",
                                 .takes_device = true,
                                 .from_pool = true,
                                 .child = true,
                                 .moves_rdma = true,
                                 .pod_gets = "an ipvlan child (parent's MAC)",
                                 .parse = ParseIpvlan,
                                 .driver = DriverOf<Child>};

}  // namespace cni
