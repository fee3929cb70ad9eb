#include "conf/modes.h"

#include <array>

namespace conf {
namespace {

constexpr std::array<ModeSpec, 5> kModes = {{
    {.mode = Mode::kMove,
     .name = "move",
     .options_key = "",
     .takes_device = true,
     .from_pool = true,
     .child = false,
     .sets_mac = false,
     .moves_rdma = true,
     .pod_gets = "the node device itself"},
    {.mode = Mode::kMacvlan,
     .name = "macvlan",
     .options_key = "macvlan",
     .takes_device = true,
     .from_pool = true,
     .child = true,
     .sets_mac = true,
     .moves_rdma = true,
     .pod_gets = "a macvlan child of the device, born in the pod"},
    {.mode = Mode::kIpvlan,
     .name = "ipvlan",
     .options_key = "ipvlan",
     .takes_device = true,
     .from_pool = true,
     .child = true,
     .sets_mac = false,
     .moves_rdma = true,
     .pod_gets = "an ipvlan child (parent's MAC)"},
    {.mode = Mode::kVf,
     .name = "vf",
     .options_key = "vf",
     .takes_device = true,
     .from_pool = false,
     .child = false,
     .sets_mac = true,
     .moves_rdma = true,
     .pod_gets = "an SR-IOV VF's netdev, set up through its PF"},
    {.mode = Mode::kNone,
     .name = "none",
     .options_key = "",
     .takes_device = false,
     .from_pool = false,
     .child = false,
     .sets_mac = false,
     .moves_rdma = false,
     .pod_gets = "nothing new: SMC-R on the primary's interface"},
}};

}  // namespace

std::span<const ModeSpec> Modes() { return kModes; }

const ModeSpec& SpecOf(Mode m) {
  for (const ModeSpec& s : kModes)
    if (s.mode == m) return s;
  return kModes[0];
}

const char* ModeName(Mode m) { return SpecOf(m).name.data(); }

std::optional<Mode> ModeNamed(std::string_view name) {
  for (const ModeSpec& s : kModes)
    if (s.name == name) return s.mode;
  return std::nullopt;
}

std::string ModeList(bool (*which)(const ModeSpec&)) {
  std::string out, last;
  for (const ModeSpec& s : kModes) {
    if (which && !which(s)) continue;
    if (!last.empty()) out += (out.empty() ? "" : ", ") + last;
    last = "\"" + std::string(s.name) + "\"";
  }
  return out.empty() ? last : out + " or " + last;
}

}  // namespace conf
