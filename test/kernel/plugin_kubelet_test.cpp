// device.resource: the device the kubelet gave the pod, asked of a fake
// kubelet (test/fake_kubelet/) on the socket the node file names. The IDs
// here are netdev names (as a device plugin that hands out ENIs by name
// would give them); RDMA device IDs (`erdma_1/17` -> erdma_1 -> its netdev)
// take the same path and are mapped as deviceID is (device_test.cpp).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "test/kernel/harness.h"
#include "test/kernel/skip.h"
#include "test/kubelet/fake_kubelet.h"

namespace test_kernel_plugin_kubelet_test {

using nlohmann::json;

namespace {

// Pods a, b and c of namespace "ml": a has eth1, b eth2, c (a shared slot)
// eth1 again; "ml/none" has only a GPU.
constexpr const char* kPods = R"({"pods": [
{"namespace": "ml", "name": "a", "containers": [{"name": "m", "devices": [{"resource": "example.com/eni", "ids": ["eth1"], "numa": [0]}]}]},
{"namespace": "ml", "name": "b", "containers": [{"name": "m", "devices": [{"resource": "example.com/eni", "ids": ["eth2"], "numa": [1]}]}]},
{"namespace": "ml", "name": "c", "containers": [{"name": "m", "devices": [{"resource": "example.com/eni", "ids": ["eth1"], "numa": [0]}]}]},
{"namespace": "ml", "name": "none", "containers": [{"name": "m", "devices": [{"resource": "nvidia.com/gpu", "ids": ["GPU-1"], "numa": [1]}]}]}
]})";

struct World {
  kt::Topology t{{.enis = 2, .pods = 3}};
  std::string node_file = t.tmp() + "/node.json";
  json config;

  World() {
    config = kt::PluginConfig(
        {.device = "", .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit"});
    config["device"] = {{"resource", "example.com/eni"}};
  }
  // The node file names `socket` as the kubelet's.
  void KubeletAt(const std::string& socket) {
    kt::WriteNodeFile(node_file, json{{"dataDirs", {"/tmp/"}},
                                      {"logFiles", {"/tmp/"}},
                                      {"allowNodeDevices", {"eth1", "eth2"}},
                                      {"podResourcesSocket", socket}}
                                     .dump());
  }
  std::string PodsFile() const {
    std::string path = t.tmp() + "/pods.json";
    std::ofstream(path) << kPods;
    return path;
  }
  kt::PluginResult Run(const std::string& command, const std::string& cid, const std::string& pod,
                       int pod_ns) {
    kt::PluginCall call = kt::Call(t, command, cid, "net1", config, pod_ns);
    call.cni_args = pod.empty() ? "" : "K8S_POD_NAMESPACE=ml;K8S_POD_NAME=" + pod;
    call.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + node_file);
    return kt::RunPlugin(call);
  }
};

void NeedPython() {
  const std::string missing = kubelet_test::MissingPython();
  if (!missing.empty()) KT_SKIP("the fake kubelet needs " + missing);
}

}  // namespace

TEST_CASE(
    "device.resource: each pod gets the device the kubelet gave it, a shared slot is code 11 naming the "
    "holder, DEL never asks the kubelet") {
  NeedPython();
  World world;
  kubelet_test::FakeKubelet kubelet("get", world.PodsFile());
  world.KubeletAt(kubelet.socket());
  const std::string a = world.t.ContainerId("a"), b = world.t.ContainerId("b"), c = world.t.ContainerId("c");

  kt::PluginResult add_a = world.Run("ADD", a, "a", 0);
  INFO("ADD a: " << kt::Describe(add_a));
  REQUIRE(add_a.exit == 0);
  CHECK(kt::LinkExists(world.t.pod(0), "net1"));
  CHECK(kt::Addresses(world.t.pod(0), "net1") == std::vector<std::string>{world.t.eni(1).ip4 + "/24"});

  kt::PluginResult add_b = world.Run("ADD", b, "b", 1);
  INFO("ADD b: " << kt::Describe(add_b));
  REQUIRE(add_b.exit == 0);
  CHECK(kt::Addresses(world.t.pod(1), "net1") == std::vector<std::string>{world.t.eni(2).ip4 + "/24"});

  const std::string pod_c_before = kt::StableSnapshot(world.t.pod(2));
  kt::PluginResult add_c = world.Run("ADD", c, "c", 2);
  INFO("ADD c: " << kt::Describe(add_c));
  kt::CheckError(add_c, 11, {a});
  CHECK(add_c.json.value("msg", "").find("another pod holds") != std::string::npos);
  CHECK(add_c.json.value("msg", "").find("device.resource \"example.com/eni\"") != std::string::npos);
  CHECK(kt::SettledDiff(pod_c_before, world.t.pod(2)).empty());
  const auto calls = kubelet.Calls();
  CHECK(calls == std::vector<std::string>{"Get ml/a -> OK", "Get ml/b -> OK", "Get ml/c -> OK"});

  // DEL by the state alone: the kubelet is not asked (the pod may be gone).
  REQUIRE(world.Run("DEL", a, "a", 0).exit == 0);
  REQUIRE(world.Run("DEL", b, "b", 1).exit == 0);
  CHECK(kubelet.Calls() == calls);
  CHECK(kt::LinkExists(world.t.node(), world.t.eni(1).name));
  CHECK(kt::LinkExists(world.t.node(), world.t.eni(2).name));
}

TEST_CASE(
    "device.resource: kubelet down is code 11, a pod without the resource code 100, no pod name code 4, "
    "nothing changes") {
  NeedPython();
  World w;
  w.KubeletAt(w.t.tmp() + "/no-kubelet.sock");
  const std::string node_before = kt::StableSnapshot(w.t.node());
  const std::string cid = w.t.ContainerId("down");
  kt::PluginResult down = w.Run("ADD", cid, "a", 0);
  INFO("kubelet down: " << kt::Describe(down));
  kt::CheckError(down, 11, {"example.com/eni"});
  CHECK(down.json.value("msg", "").find("ml/a") != std::string::npos);

  kubelet_test::FakeKubelet kubelet("get", w.PodsFile());
  w.KubeletAt(kubelet.socket());
  kt::PluginResult none = w.Run("ADD", cid, "none", 0);
  INFO("no device of the resource: " << kt::Describe(none));
  kt::CheckError(none, 100, {"example.com/eni"});
  kt::PluginResult anonymous = w.Run("ADD", cid, "", 0);
  INFO("no pod name: " << kt::Describe(anonymous));
  kt::CheckError(anonymous, 4, {"K8S_POD_NAME"});
  CHECK(kt::SettledDiff(node_before, w.t.node()).empty());
  CHECK(kt::ClaimsFor(w.t.DataDir(), cid).empty());
}

}  // namespace test_kernel_plugin_kubelet_test
