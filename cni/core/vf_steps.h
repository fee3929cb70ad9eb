// An SR-IOV VF's settings through its PF (cni/driver/vf_settings.h), with the values they replaced.
#pragma once

#include <string>

#include "cni/core/json_fields.h"
#include "cni/core/step_env.h"
#include "netlink/vf_kernel.h"

namespace cni {

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

CNI_STEP(StepVf)

void Fields(JsonFields& f, netlink::VfSettings& v);

}  // namespace cni
