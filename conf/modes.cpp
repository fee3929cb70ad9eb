#include "conf/modes.h"

#include <array>

namespace conf {
namespace {

constexpr std::array<ModeSpec, 5> kModes = {{
    {Mode::kMove, "move", "", true, true, false, false, true, "the node device itself"},
    {Mode::kMacvlan, "macvlan", "macvlan", true, true, true, true, true,
     "a macvlan child of the device, born in the pod"},
    {Mode::kIpvlan, "ipvlan", "ipvlan", true, true, true, false, true, "an ipvlan child (parent's MAC)"},
    {Mode::kVf, "vf", "vf", true, false, false, true, true, "an SR-IOV VF's netdev, set up through its PF"},
    {Mode::kNone, "none", "", false, false, false, false, false,
     "nothing new: SMC-R on the primary's interface"},
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
