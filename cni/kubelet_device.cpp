#include "cni/kubelet_device.h"

#include "base/log.h"
#include "kubelet/pod_devices.h"

namespace cni {

using base::Code;
using base::Error;

base::Status DeviceFromKubelet(conf::Config& cfg, const Env& env, const conf::NodePolicy& node) {
  const std::string resource = cfg.device.value;
  const auto ns = env.args.find("K8S_POD_NAMESPACE");
  const auto pod = env.args.find("K8S_POD_NAME");
  if (ns == env.args.end() || pod == env.args.end() || ns->second.empty() || pod->second.empty())
    return Error(Code::kInvalidEnv,
                 "device.resource \"" + resource +
                     "\": CNI_ARGS lacks K8S_POD_NAMESPACE and K8S_POD_NAME, which name the "
                     "pod to ask the kubelet about; runtimes under Kubernetes pass them, "
                     "elsewhere select the device by name, mac, pci or rdma");
  ASSIGN_OR_RETURN(auto alloc, kubelet::PodDevices(node.pod_resources_socket,
                                                   {ns->second, pod->second, resource}, kKubeletTimeout));
  if (alloc.devices.empty())  // PodDevices says kDeviceNotFound itself; kept for safety
    return Error(Code::kDeviceNotFound, "device.resource \"" + resource + "\": the kubelet gave pod " +
                                            ns->second + "/" + pod->second + " no device of it");
  const std::string& id = alloc.devices.front().id;
  std::string ids;
  for (const auto& d : alloc.devices) ids += (ids.empty() ? "" : ", ") + d.id;
  base::Log::Info("device.resource " + resource + ": the kubelet (" + alloc.method + ") gave pod " +
                  ns->second + "/" + pod->second + " " + ids + "; attaching " + id);
  cfg.device =
      conf::DeviceSelector{conf::DeviceSelector::By::kDeviceId, id,
                           "device.resource \"" + resource + "\" (the kubelet gave the pod " + id + ")"};
  return base::Ok();
}

}  // namespace cni
