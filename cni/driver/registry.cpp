#include "cni/driver/registry.h"

#include <cstdlib>

#include "cni/driver/child.h"
#include "cni/driver/move.h"
#include "cni/driver/none.h"
#include "cni/driver/vf.h"

namespace cni {
namespace {

struct Registered {
  conf::Mode mode;
  const Driver& (*driver)();
};

constexpr Registered kDrivers[] = {
    {conf::Mode::kMove, MoveDriver}, {conf::Mode::kMacvlan, ChildDriver}, {conf::Mode::kIpvlan, ChildDriver},
    {conf::Mode::kVf, VfDriver},     {conf::Mode::kNone, NoneDriver},
};

}  // namespace

const Driver* FindDriver(conf::Mode mode) {
  for (const Registered& r : kDrivers)
    if (r.mode == mode) return &r.driver();
  return nullptr;
}

const Driver& DriverFor(conf::Mode mode) {
  const Driver* d = FindDriver(mode);
  if (!d) std::abort();
  return *d;
}

}  // namespace cni
