// A state file is input like any other: someone who can write the state
// directory (or a disk that corrupts it) must not make DEL exec a program
// outside CNI_PATH, act on a name the kernel would never have given us, or
// enter a path that is no netns path. Every value a step acts on is checked
// with the rule its source was checked with at ADD (the config, CNI_*, the
// kernel's own shapes).
#include <climits>

#include "cni/state.h"
#include "conf/names.h"
#include "netlink/sysctl.h"

namespace cni {

using base::Code;
using base::Error;
using base::Status;

namespace {

Error Bad(const std::string& field, const std::string& value, const std::string& must) {
  std::string shown;
  for (unsigned char c : value.substr(0, 80)) {
    if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[c >> 4];
      shown += kHex[c & 0xf];
    } else {
      shown += static_cast<char>(c);
    }
  }
  if (value.size() > 80) shown += "...";
  return Error(Code::kState, "\"" + field + "\" " + "\"" + shown + "\" must be " + must);
}

bool IsMac(const std::string& m) { return conf::NormalizeMac(m).has_value(); }
bool IsPci(const std::string& p) { return conf::NormalizePci(p).has_value(); }
bool IsZeroMac(const std::string& m) { return m == "00:00:00:00:00:00"; }

constexpr const char* kIfName = "an interface name (1..15 bytes, no '/', ':' or whitespace)";

Status CheckIf(const std::string& field, const std::string& v) {
  if (!conf::IsValidIfName(v)) return Bad(field, v, kIfName);
  return base::Ok();
}

Status CheckStep(const Step& step, size_t i, uint32_t table) {
  const std::string at = "steps[" + std::to_string(i) + "].";
  return std::visit(
      [&](const auto& s) -> Status {
        using T = std::decay_t<decltype(s)>;
        if constexpr (std::is_same_v<T, StepIpam>) {
          // DEL execs it as root: the config's rule, or "../../tmp/x" runs.
          if (!conf::IsPlainFileName(s.type))
            return Bad(at + "type", s.type, "an IPAM plugin file name: no '/', not \".\" or \"..\"");
          if (!s.config.is_object()) return Bad(at + "config", s.config.dump(), "an object");
        } else if constexpr (std::is_same_v<T, StepRule>) {
          // ADD's rules are "from <address> lookup <our table>"; anything
          // else would have DEL remove a rule of the netns's own.
          if (!s.rule.src || s.rule.table != table)
            return Bad(at + "rule", "table " + std::to_string(s.rule.table),
                       "a rule from one address into the state's table " + std::to_string(table));
        } else if constexpr (std::is_same_v<T, StepRoute>) {
          if (s.route.table != table && s.route.table != 254)
            return Bad(at + "route", "table " + std::to_string(s.route.table),
                       "a route in table main or the state's table " + std::to_string(table));
        } else if constexpr (std::is_same_v<T, StepMove>) {
          return CheckIf(at + "name", s.pod_name);
        } else if constexpr (std::is_same_v<T, StepChild>) {
          RETURN_IF_ERROR(CheckIf(at + "parent", s.parent));
          RETURN_IF_ERROR(CheckIf(at + "name", s.spec.name));
          if (s.spec.kind != "macvlan" && s.spec.kind != "ipvlan")
            return Bad(at + "kind", s.spec.kind, "\"macvlan\" or \"ipvlan\"");
          if (!s.spec.mac.empty() && !IsMac(s.spec.mac)) return Bad(at + "mac", s.spec.mac, "a MAC or \"\"");
          for (const auto& m : s.spec.source_macs)
            if (!IsMac(m)) return Bad(at + "sourceMacs", m, "a MAC");
        } else if constexpr (std::is_same_v<T, StepMac>) {
          if (!IsMac(s.mac) || IsZeroMac(s.mac)) return Bad(at + "mac", s.mac, "a MAC, not all zeros");
        } else if constexpr (std::is_same_v<T, StepRdmaMove> || std::is_same_v<T, StepSoftRdma>) {
          if (!conf::IsValidDeviceId(s.device) || s.device.size() > 64)
            return Bad(at + "device", s.device, "an RDMA device name (printable ASCII, no whitespace)");
        } else if constexpr (std::is_same_v<T, StepSysctl>) {
          if (!netlink::IsSafeSysctlName(s.name))
            return Bad(at + "name", s.name, "a sysctl name under net. (the config's smcr.sysctls rule)");
          for (const std::string* v : {&s.value, &s.old})
            if (v->size() > 4096 || v->find('\0') != std::string::npos)
              return Bad(at + (v == &s.value ? "value" : "old"), *v, "at most 4096 bytes without NUL");
        } else if constexpr (std::is_same_v<T, StepPnet>) {
          if (s.entry.pnet_id.size() > 16 || !conf::IsValidDeviceId(s.entry.pnet_id))
            return Bad(at + "pnetId", s.entry.pnet_id, "1..16 characters A-Z, 0-9");
          if (!s.entry.eth_name.empty()) RETURN_IF_ERROR(CheckIf(at + "eth", s.entry.eth_name));
          if (!s.entry.ib_name.empty() && !conf::IsValidDeviceId(s.entry.ib_name))
            return Bad(at + "ib", s.entry.ib_name, "an RDMA device name");
        } else if constexpr (std::is_same_v<T, StepUeid>) {
          if (s.ueid.empty() || s.ueid.size() > 32 || conf::HasControlChar(s.ueid))
            return Bad(at + "ueid", s.ueid, "1..32 characters (the config's smcr.ueid rule)");
        } else if constexpr (std::is_same_v<T, StepVf>) {
          RETURN_IF_ERROR(CheckIf(at + "pf", s.pf));
          if (!IsPci(s.pci)) return Bad(at + "pci", s.pci, "a PCI address dddd:bb:dd.f");
          if (!s.netdev.empty()) RETURN_IF_ERROR(CheckIf(at + "netdev", s.netdev));
          if (!s.netdev_mac.empty() && !IsMac(s.netdev_mac))
            return Bad(at + "netdevMac", s.netdev_mac, "a MAC or \"\"");
        }
        return base::Ok();
      },
      step);
}

}  // namespace

Status ValidateStep(const Step& step) { return CheckStep(step, 0, 0); }

Status ValidateState(const AttachmentState& s) {
  if (!conf::IsValidContainerId(s.container_id, conf::kMaxLegacyContainerIdBytes))
    return Bad("containerID", s.container_id, "a CNI container ID ([A-Za-z0-9_.-], at most 256 bytes)");
  RETURN_IF_ERROR(CheckIf("ifName", s.if_name));
  RETURN_IF_ERROR(CheckIf("podIfName", s.pod_if_name));
  if (!s.netns.empty() && !conf::IsValidNetnsPath(s.netns))
    return Bad("netns", s.netns,
               "what CNI_NETNS may be: an absolute path of UTF-8 without control characters");
  if (s.table == 253 || s.table == 254 || s.table == 255)
    return Bad("table", std::to_string(s.table),
               "a policy routing table other than 253..255 (default, main, local)");
  if (s.rdma_mode != "" && s.rdma_mode != "shared" && s.rdma_mode != "exclusive")
    return Bad("rdmaMode", s.rdma_mode, "\"shared\", \"exclusive\" or \"\"");
  if (!s.rdma_device.empty() && !conf::IsValidDeviceId(s.rdma_device))
    return Bad("rdmaDevice", s.rdma_device, "an RDMA device name or \"\"");
  const DeviceOrigin& o = s.origin;
  // A VF on vfio-pci has no netdev: its PCI address stands for the name.
  if (!o.name.empty() && !conf::IsValidIfName(o.name) && !IsPci(o.name))
    return Bad("device.name", o.name, std::string(kIfName) + " or a PCI address");
  if (o.index < 0) return Bad("device.index", std::to_string(o.index), "an interface index");
  if (!o.mac.empty() && (!IsMac(o.mac) || IsZeroMac(o.mac)))
    return Bad("device.mac", o.mac, "the device's MAC (not all zeros, which no device we move has) or \"\"");
  if (!o.kind.empty() && (!conf::IsValidDeviceId(o.kind) || o.kind.size() > 32))
    return Bad("device.kind", o.kind, "a link kind (\"veth\", \"macvlan\", ...) or \"\"");
  for (size_t i = 0; i < s.steps.size(); ++i) RETURN_IF_ERROR(CheckStep(s.steps[i], i, s.table));
  return base::Ok();
}

}  // namespace cni
