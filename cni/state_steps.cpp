// The journal's steps as the state file spells them ("op" and its members),
// read back with every member checked, and described for logs and diag.

#include <utility>

#include "cni/state.h"
#include "cni/state_fields.h"

namespace cni {

using base::Result;
using nlohmann::json;
using state_fields::Bad;
using state_fields::Field;
using state_fields::Str;
using state_fields::Uint;

namespace {

template <size_t... I>
std::vector<std::string> OpsOf(std::index_sequence<I...>) {
  return {StepOp(Step(std::in_place_index<I>))...};
}

}  // namespace

void WriteStep(base::JsonWriter& w, const Step& step) {
  w.BeginObject().Str("op", StepOp(step));
  std::visit(
      [&w](const auto& s) {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, StepIpam>) {
          w.Str("type", s.type).Json("config", s.config);
        } else if constexpr (std::is_same_v<T, StepMove>) {
          w.Str("name", s.pod_name);
        } else if constexpr (std::is_same_v<T, StepChild>) {
          w.Str("kind", s.spec.kind).Str("parent", s.parent).Int("parentIndex", s.spec.parent_index);
          w.Str("name", s.spec.name).Str("mac", s.spec.mac).Uint("mode", s.spec.mode);
          w.Key("sourceMacs").BeginArray();
          for (const auto& m : s.spec.source_macs) w.Str(m);
          w.EndArray();
        } else if constexpr (std::is_same_v<T, StepMtu>) {
          w.Uint("mtu", s.mtu);
        } else if constexpr (std::is_same_v<T, StepAddr>) {
          WriteJson(w.Key("addr"), s.addr);
        } else if constexpr (std::is_same_v<T, StepUp>) {
        } else if constexpr (std::is_same_v<T, StepRoute>) {
          WriteJson(w.Key("route"), s.route);
        } else if constexpr (std::is_same_v<T, StepRdmaMove> || std::is_same_v<T, StepSoftRdma>) {
          w.Str("device", s.device);
        } else if constexpr (std::is_same_v<T, StepSysctl>) {
          w.Str("name", s.name).Str("value", s.value).Str("old", s.old);
        } else if constexpr (std::is_same_v<T, StepPnet>) {
          w.Str("pnetId", s.entry.pnet_id).Str("eth", s.entry.eth_name).Str("ib", s.entry.ib_name);
          w.Uint("ibPort", s.entry.ib_port);
        } else if constexpr (std::is_same_v<T, StepUeid>) {
          w.Str("ueid", s.ueid);
        } else if constexpr (std::is_same_v<T, StepVf>) {
          w.Str("pf", s.pf).Int("pfIndex", s.pf_index).Str("pci", s.pci).Str("netdev", s.netdev);
          w.Str("netdevMac", s.netdev_mac);
          WriteJson(w.Key("applied"), s.applied);
          WriteJson(w.Key("old"), s.old);
        } else if constexpr (std::is_same_v<T, StepMac>) {
          w.Str("mac", s.mac);
        } else {
          static_assert(std::is_same_v<T, StepRule>);
          WriteJson(w.Key("rule"), s.rule);
        }
      },
      step);
  w.EndObject();
}

json StepToJson(const Step& step) {
  base::JsonWriter w;
  WriteStep(w, step);
  return json::parse(w.text());
}

Result<Step> StepFromJson(const json& j) {
  ASSIGN_OR_RETURN(std::string op, Str(j, "op"));
  if (op == "ipam") {
    ASSIGN_OR_RETURN(std::string type, Str(j, "type"));
    ASSIGN_OR_RETURN(const json* config, Field(j, "config"));
    if (!config->is_object()) return Bad("ipam step config must be an object");
    return Step(StepIpam{type, *config});
  }
  if (op == "up") return Step(StepUp{});
  if (op == "move") {
    ASSIGN_OR_RETURN(std::string name, Str(j, "name"));
    return Step(StepMove{name});
  }
  if (op == "child") {
    StepChild c;
    ASSIGN_OR_RETURN(c.spec.kind, Str(j, "kind"));
    if (c.spec.kind != "macvlan" && c.spec.kind != "ipvlan")
      return Bad("child step kind must be macvlan or ipvlan");
    ASSIGN_OR_RETURN(c.parent, Str(j, "parent"));
    ASSIGN_OR_RETURN(uint64_t parent_index, Uint(j, "parentIndex"));
    c.spec.parent_index = static_cast<int>(parent_index);
    ASSIGN_OR_RETURN(c.spec.name, Str(j, "name"));
    ASSIGN_OR_RETURN(c.spec.mac, Str(j, "mac"));
    ASSIGN_OR_RETURN(uint64_t mode, Uint(j, "mode"));
    c.spec.mode = static_cast<uint32_t>(mode);
    ASSIGN_OR_RETURN(const json* sources, Field(j, "sourceMacs"));
    if (!sources->is_array()) return Bad("child step sourceMacs must be an array");
    for (const auto& m : *sources) {
      if (!m.is_string()) return Bad("child step sourceMacs must hold strings");
      c.spec.source_macs.push_back(m.get<std::string>());
    }
    return Step(c);
  }
  if (op == "mtu") {
    ASSIGN_OR_RETURN(uint64_t mtu, Uint(j, "mtu"));
    return Step(StepMtu{static_cast<uint32_t>(mtu)});
  }
  if (op == "addr") {
    ASSIGN_OR_RETURN(const json* a, Field(j, "addr"));
    ASSIGN_OR_RETURN(auto addr, AddrFromJson(*a));
    return Step(StepAddr{addr});
  }
  if (op == "sysctl") {
    StepSysctl s;
    ASSIGN_OR_RETURN(s.name, Str(j, "name"));
    ASSIGN_OR_RETURN(s.value, Str(j, "value"));
    ASSIGN_OR_RETURN(s.old, Str(j, "old"));
    return Step(s);
  }
  if (op == "pnet") {
    StepPnet s;
    ASSIGN_OR_RETURN(s.entry.pnet_id, Str(j, "pnetId"));
    ASSIGN_OR_RETURN(s.entry.eth_name, Str(j, "eth"));
    ASSIGN_OR_RETURN(s.entry.ib_name, Str(j, "ib"));
    ASSIGN_OR_RETURN(uint64_t port, Uint(j, "ibPort"));
    s.entry.ib_port = static_cast<uint8_t>(port);
    return Step(s);
  }
  if (op == "vf") {
    StepVf v;
    ASSIGN_OR_RETURN(v.pf, Str(j, "pf"));
    ASSIGN_OR_RETURN(uint64_t pf_index, Uint(j, "pfIndex"));
    v.pf_index = static_cast<int>(pf_index);
    ASSIGN_OR_RETURN(v.pci, Str(j, "pci"));
    ASSIGN_OR_RETURN(v.netdev, Str(j, "netdev"));
    ASSIGN_OR_RETURN(v.netdev_mac, Str(j, "netdevMac"));
    ASSIGN_OR_RETURN(const json* applied, Field(j, "applied"));
    ASSIGN_OR_RETURN(v.applied, VfSettingsFromJson(*applied));
    ASSIGN_OR_RETURN(const json* old, Field(j, "old"));
    ASSIGN_OR_RETURN(v.old, VfSettingsFromJson(*old));
    return Step(v);
  }
  if (op == "mac") {
    ASSIGN_OR_RETURN(std::string mac, Str(j, "mac"));
    return Step(StepMac{mac});
  }
  if (op == "ueid") {
    ASSIGN_OR_RETURN(std::string ueid, Str(j, "ueid"));
    return Step(StepUeid{ueid});
  }
  if (op == "rdma-move" || op == "rdma-soft") {
    ASSIGN_OR_RETURN(std::string device, Str(j, "device"));
    if (op == "rdma-move") return Step(StepRdmaMove{device});
    return Step(StepSoftRdma{device});
  }
  if (op == "route") {
    ASSIGN_OR_RETURN(const json* r, Field(j, "route"));
    ASSIGN_OR_RETURN(auto route, RouteFromJson(*r));
    return Step(StepRoute{route});
  }
  if (op == "rule") {
    ASSIGN_OR_RETURN(const json* r, Field(j, "rule"));
    ASSIGN_OR_RETURN(auto rule, RuleFromJson(*r));
    return Step(StepRule{rule});
  }
  return Bad("unknown step op \"" + op + "\"");
}

const char* StepOp(const Step& step) {
  return std::visit(
      [](const auto& s) -> const char* {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, StepIpam>)
          return "ipam";
        else if constexpr (std::is_same_v<T, StepMove>)
          return "move";
        else if constexpr (std::is_same_v<T, StepChild>)
          return "child";
        else if constexpr (std::is_same_v<T, StepMtu>)
          return "mtu";
        else if constexpr (std::is_same_v<T, StepAddr>)
          return "addr";
        else if constexpr (std::is_same_v<T, StepUp>)
          return "up";
        else if constexpr (std::is_same_v<T, StepRoute>)
          return "route";
        else if constexpr (std::is_same_v<T, StepRule>)
          return "rule";
        else if constexpr (std::is_same_v<T, StepRdmaMove>)
          return "rdma-move";
        else if constexpr (std::is_same_v<T, StepSoftRdma>)
          return "rdma-soft";
        else if constexpr (std::is_same_v<T, StepSysctl>)
          return "sysctl";
        else if constexpr (std::is_same_v<T, StepPnet>)
          return "pnet";
        else if constexpr (std::is_same_v<T, StepUeid>)
          return "ueid";
        else if constexpr (std::is_same_v<T, StepVf>)
          return "vf";
        else if constexpr (std::is_same_v<T, StepMac>)
          return "mac";
        else
          static_assert(sizeof(T) == 0, "every step needs an op name");
      },
      step);
}

std::vector<std::string> AllStepOps() { return OpsOf(std::make_index_sequence<std::variant_size_v<Step>>{}); }

std::string DescribeStep(const Step& step) {
  return std::visit(
      [](const auto& s) -> std::string {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, StepIpam>)
          return "ipam " + s.type + " add";
        else if constexpr (std::is_same_v<T, StepMove>)
          return "move into pod as " + s.pod_name;
        else if constexpr (std::is_same_v<T, StepChild>)
          return "create " + s.spec.kind + " " + s.spec.name + " on " + s.parent + " in the pod";
        else if constexpr (std::is_same_v<T, StepMtu>)
          return "set mtu " + std::to_string(s.mtu);
        else if constexpr (std::is_same_v<T, StepAddr>)
          return "add address " + s.addr.local.ToString();
        else if constexpr (std::is_same_v<T, StepUp>)
          return "set link up";
        else if constexpr (std::is_same_v<T, StepRdmaMove>)
          return "move RDMA device " + s.device + " into the pod";
        else if constexpr (std::is_same_v<T, StepSoftRdma>)
          return "create Soft-RoCE device " + s.device;
        else if constexpr (std::is_same_v<T, StepSysctl>)
          return "sysctl " + s.name + "=" + s.value + " (was " + s.old + ")";
        else if constexpr (std::is_same_v<T, StepPnet>)
          return "SMC pnet " + s.entry.pnet_id + " " +
                 (s.entry.eth_name.empty() ? s.entry.ib_name + " port " + std::to_string(s.entry.ib_port)
                                           : s.entry.eth_name);
        else if constexpr (std::is_same_v<T, StepUeid>)
          return "SMC UEID " + s.ueid;
        else if constexpr (std::is_same_v<T, StepVf>)
          return "VF " + s.pci + " through PF " + s.pf + ": " + netlink::DescribeVfSettings(s.applied) +
                 " (was " + netlink::DescribeVfSettings(s.old) + ")";
        else if constexpr (std::is_same_v<T, StepMac>)
          return "set mac " + s.mac;
        else if constexpr (std::is_same_v<T, StepRoute>) {
          std::string d =
              "add route " + (s.route.dst.IsDefault() ? std::string("default") : s.route.dst.ToString());
          if (s.route.gateway) d += " via " + s.route.gateway->ToString();
          return d + " table " + std::to_string(s.route.table) + " metric " + std::to_string(s.route.metric);
        } else {
          return "add rule priority " + std::to_string(s.rule.priority) + " from " +
                 (s.rule.src ? s.rule.src->ToString() : std::string("all")) + " lookup " +
                 std::to_string(s.rule.table);
        }
      },
      step);
}

}  // namespace cni
