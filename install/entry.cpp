#include "install/entry.h"

#include "conf/config.h"
#include "conf/smcr_config.h"

namespace install {

using base::Code;
using base::Error;

Json DefaultEntry() {
  Json e = Json::object();
  e["type"] = kPluginType;
  e["mode"] = "none";
  e["capabilities"] = Json{{conf::kPodAnnotationsCapability, true}};
  e["smcr"] = Json{{"enable", "annotation"}};
  e["logFile"] = "/var/log/erdma-cni.log";
  return e;
}

base::Result<Json> ParseEntry(std::string_view text) {
  ASSIGN_OR_RETURN(Json e, ParseObject(text));
  auto type = e.find("type");
  if (type == e.end() || !type->is_string() || type->get<std::string>() != kPluginType)
    return Error(Code::kInvalidConfig, "type: must be \"erdma-cni\" (that is how the entry is found again)");
  for (const char* key : {"prevResult", "runtimeConfig"})
    if (e.contains(key))
      return Error(Code::kInvalidConfig,
                   std::string(key) + ": set by the runtime on every call; leave it out of the entry");
  return e;
}

base::Result<std::vector<std::string>> CheckEntry(const Json& entry, conf::ModeTable modes,
                                                  const std::string& cni_version,
                                                  const std::string& network_name,
                                                  const conf::NodePolicy& node) {
  // What libcni hands each plugin of a list: the entry with the list's cniVersion and name put in.
  Json as_run = entry;
  as_run["cniVersion"] = cni_version;
  as_run["name"] = network_name;
  auto parsed = conf::ParseChainEntry(modes, as_run.dump());
  if (!parsed.ok())
    return Error(Code::kInvalidConfig,
                 "the erdma-cni entry is not a valid erdma-cni config: " + parsed.error().msg,
                 parsed.error().details);
  // Judged here: the plugin cannot tell a node conflist from a NAD's own chain, where naming a device is
  // right.
  if (auto by = conf::OneDeviceForEveryPod(entry); !by.empty())
    return Error(Code::kInvalidConfig,
                 by +
                     ": in a node conflist the entry runs for every pod of the node, and a device named here "
                     "is chosen for each of them: the first pod takes it and every later one fails. Name "
                     "the device per pod instead: device.resource (the device the kubelet gave the pod) or "
                     "device.pool (free devices, for the pods that opt in); docs/config.md");
  if (auto s = conf::CheckNodePaths(*parsed, node); !s.ok())
    return Error(Code::kInvalidConfig,
                 "the erdma-cni entry would fail every call on this node: " + s.error().msg);
  std::vector<std::string> warnings;
  bool annotations = false;
  if (auto caps = entry.find("capabilities"); caps != entry.end() && caps->is_object()) {
    auto cap = caps->find(conf::kPodAnnotationsCapability);
    annotations = cap != caps->end() && cap->is_boolean() && cap->get<bool>();
  }
  if (parsed->smcr.enable == conf::SmcrConfig::Enable::kAnnotation && !annotations)
    warnings.push_back(std::string("the entry does not declare the capability \"") +
                       conf::kPodAnnotationsCapability + "\": containerd and CRI-O will not pass pod " +
                       "annotations, so " + conf::kSmcrAnnotation + " never reaches erdma-cni");
  return warnings;
}

base::Result<std::vector<std::string>> CheckInstalledEntry(const Json& conflist, conf::ModeTable modes,
                                                           const conf::NodePolicy& node) {
  for (const Json& e : conflist["plugins"])
    if (e.value("type", "") == kPluginType)
      return CheckEntry(e, modes, conflist["cniVersion"].get<std::string>(),
                        conflist["name"].get<std::string>(), node);
  return std::vector<std::string>();
}

}  // namespace install
