#include "nri/adjust.h"

#include <algorithm>

#include "conf/node.h"
#include "nri/topology.h"

namespace nri {

namespace {

constexpr const char* kMemlock = "RLIMIT_MEMLOCK";
constexpr uint32_t kNodeMode = 0666;

bool HasEnv(const Container& c, const std::string& key) {
  return std::any_of(
             c.env.begin(), c.env.end(),
             [&key](const std::string& e) { return e.size() > key.size() && e.starts_with(key + "="); }) ||
         std::find(c.env.begin(), c.env.end(), key) != c.env.end();
}

bool HasDevice(const Container& c, const std::string& path) {
  return std::any_of(c.devices.begin(), c.devices.end(), [&path](const Device& d) { return d.path == path; });
}

std::string Shown(uint64_t v) { return v == kUnlimited ? "unlimited" : std::to_string(v) + " bytes"; }

}  // namespace

Decision Adjust(const CreateContainer& req, const PodRdma& pod, const AgentPolicy& policy) {
  Decision d;
  const Container& c = req.container;
  if (pod.rails.empty()) return d;

  // 1. Locked memory.
  if (policy.memlock) {
    uint64_t want = *policy.memlock;
    if (auto a = req.pod.annotations.find(kMemlockAnnotation); a != req.pod.annotations.end()) {
      if (auto asked = conf::ParseMemlock(a->second)) {
        if (*asked < want) {
          want = *asked;
          d.notes.push_back(std::string(kMemlockAnnotation) + " asks for " + Shown(want));
        }
      } else {
        d.notes.push_back(std::string(kMemlockAnnotation) +
                          " ignored: not a number of bytes (Ki, Mi, Gi) or \"unlimited\"");
      }
    }
    auto own =
        std::find_if(c.rlimits.begin(), c.rlimits.end(), [](const Rlimit& r) { return r.type == kMemlock; });
    if (own != c.rlimits.end() && own->soft >= want && own->hard >= want)
      d.notes.push_back(std::string(kMemlock) + " left: the container's is " + Shown(own->soft) + " already");
    else
      d.adjust.rlimits.push_back({kMemlock, want, want});
  }

  // 2. The pod's own device nodes.
  std::vector<DeviceNode> nodes;
  for (const PodRdma::Rail& r : pod.rails)
    if (r.uverbs) nodes.push_back(*r.uverbs);
  if (pod.rdma_cm) nodes.push_back(*pod.rdma_cm);
  for (const DeviceNode& n : nodes) {
    if (HasDevice(c, n.path)) {
      d.notes.push_back(n.path + " left: the container has it already");
      continue;
    }
    d.adjust.devices.push_back({n.path, "c", n.major, n.minor, kNodeMode, std::nullopt, std::nullopt});
    d.adjust.device_rules.push_back({true, "c", n.major, n.minor, "rw"});
  }

  // 3. NCCL's devices, in rail order.
  std::string hca = "=";
  for (const PodRdma::Rail& r : pod.rails)
    if (!r.rdma_device.empty()) hca += (hca.size() > 1 ? "," : "") + r.rdma_device + ":1";
  if (hca.size() == 1) {
    // No rail has an RDMA device: nothing for NCCL to use.
  } else if (HasEnv(c, "NCCL_IB_HCA")) {
    d.notes.push_back("NCCL_IB_HCA left: the container sets it");
  } else {
    d.adjust.env.emplace_back("NCCL_IB_HCA", hca);
  }

  // 4. NCCL's topology (the agent writes no file for a container that sets its own).
  if (!WantsTopology(c)) {
    d.notes.push_back(std::string(kTopologyEnv) + " left: the container sets it");
  } else if (pod.topology_file) {
    d.adjust.mounts.push_back({kTopologyInContainer, "bind", *pod.topology_file, {"bind", "ro"}});
    d.adjust.env.emplace_back(kTopologyEnv, kTopologyInContainer);
  }
  return d;
}

bool WantsTopology(const Container& c) { return !HasEnv(c, kTopologyEnv); }

}  // namespace nri
