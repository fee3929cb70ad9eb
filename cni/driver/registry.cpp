#include "cni/driver/registry.h"

#include "cni/driver/child.h"
#include "cni/driver/move.h"
#include "cni/driver/none.h"
#include "cni/driver/vf.h"

namespace cni {
namespace {

constexpr const conf::ModeSpec* kModes[] = {&kMoveMode, &kMacvlanMode, &kIpvlanMode, &kVfMode, &kNoneMode};

}  // namespace

conf::ModeTable Modes() { return kModes; }

}  // namespace cni
