#include "conf/modes.h"

namespace conf {

const ModeSpec* ModeNamed(ModeTable modes, std::string_view name) {
  for (const ModeSpec* s : modes)
    if (s->name == name) return s;
  return nullptr;
}

std::string ModeList(ModeTable modes, bool (*which)(const ModeSpec&)) {
  std::string out, last;
  for (const ModeSpec* s : modes) {
    if (which && !which(*s)) continue;
    if (!last.empty()) out += (out.empty() ? "" : ", ") + last;
    last = "\"" + std::string(s->name) + "\"";
  }
  return out.empty() ? last : out + " or " + last;
}

}  // namespace conf
