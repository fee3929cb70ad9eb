// One node conflist serves every pod of the node: each recipe of
// docs/deploy.md, chained after a Terway-shaped prevResult the way
// containerd runs the chain, with the fake kubelet answering for the pods.
// A pod that asked for nothing gets Terway's result back, the node and
// dataDir untouched, and its CHECK and DEL succeed; a pod that asked gets
// its rails.
//
// This machine's kernel has no RDMA: a plain pod runs each recipe exactly as
// written (rdmaDriver, netnsMode exclusive), which proves it never pays for
// the RDMA side; a pod that asks runs it with the pool named by netdev
// (eth1, eth2) and no rdma key, as the ENI stand-ins have no RDMA device.
#include <catch2/catch.hpp>
#include <fstream>

#include "test/kernel/harness.h"
#include "test/kernel/skip.h"
#include "test/kubelet/fake_kubelet.h"

namespace test_kernel_plugin_node_conflist_test {

using nlohmann::json;

namespace {

constexpr const char* kAnnotations = "io.kubernetes.cri.pod-annotations";

// default/web-0 asked for nothing (a CPU pod), ml/gpu-named got two devices
// the device plugin named (the controller's default mode), ml/gpu-slot one
// slot of a device (the all-devices mode: the slot binds nothing), ml/gpu-eni
// two of Terway's `eni-<n>` IDs, which name no device.
constexpr const char* kPods = R"({"pods": [
{"namespace": "default", "name": "web-0", "containers": [{"name": "web", "devices": []}]},
{"namespace": "ml", "name": "gpu-named", "containers": [{"name": "t", "devices": [{"resource": "aliyun/erdma", "ids": ["eth1", "eth2"], "numa": [0]}]}]},
{"namespace": "ml", "name": "gpu-slot", "containers": [{"name": "t", "devices": [{"resource": "aliyun/erdma", "ids": ["erdma_0/17"], "numa": [0]}]}]},
{"namespace": "ml", "name": "gpu-eni", "containers": [{"name": "t", "devices": [{"resource": "aliyun/erdma", "ids": ["eni-1", "eni-2"], "numa": [0]}]}]}
]})";

struct Recipe {
  const char* name;
  json entry;          ///< the docs/deploy.md entry, as written
  json asking_device;  ///< `device` for the pod that asks, on this kernel (null: none asks here)
  const char* asking_pod;
  json asking_annotations;  ///< the asking pod's annotations
};

std::vector<Recipe> Recipes() {
  const json names = {{"names", {"eth1", "eth2"}}};
  return {
      {"mode none (SMC-R only)",
       {{"mode", "none"}, {"capabilities", {{kAnnotations, true}}}, {"smcr", {{"enable", "annotation"}}}},
       nullptr,
       "",
       nullptr},
      {"the ACK eRDMA controller, default mode",
       {{"mode", "move"},
        {"ifName", "erdma0"},
        {"device", {{"resource", "aliyun/erdma"}, {"count", "all"}}},
        {"rdma", {{"netnsMode", "exclusive"}}}},
       {{"resource", "aliyun/erdma"}, {"count", "all"}},
       "gpu-named",
       nullptr},
      {"the ACK eRDMA controller, all-devices mode",
       {{"mode", "move"},
        {"ifName", "erdma0"},
        {"device", {{"resource", "aliyun/erdma"}, {"pool", {{"rdmaDriver", "erdma"}}}, {"count", 2}}},
        {"rdma", {{"netnsMode", "exclusive"}}}},
       {{"resource", "aliyun/erdma"}, {"pool", names}, {"count", 2}},
       "gpu-slot",
       nullptr},
      {"Terway's eRDMA mode",
       {{"mode", "move"},
        {"ifName", "erdma0"},
        {"device", {{"resource", "aliyun/erdma"}, {"pool", {{"rdmaDriver", "erdma"}}}, {"count", "all"}}},
        {"rdma", {{"netnsMode", "shared"}}}},
       {{"resource", "aliyun/erdma"}, {"pool", names}, {"count", "all"}},
       "gpu-eni",
       nullptr},
      {"a pool without a device plugin, opted into by annotation",
       {{"mode", "move"},
        {"ifName", "erdma0"},
        {"capabilities", {{kAnnotations, true}}},
        {"device", {{"pool", {{"rdmaDriver", "erdma"}}}, {"count", 2}}}},
       {{"pool", names}, {"count", 2}},
       "web-1",
       {{"network.alibabacloud.com/erdma", "true"}}},
  };
}

struct Node {
  kt::Topology t{{.enis = 2, .pods = 2}};
  std::string node_file = t.tmp() + "/node.json";
  std::string pods_file = t.tmp() + "/pods.json";

  explicit Node(const std::string& socket) {
    kt::WriteNodeFile(node_file, json{{"dataDirs", {"/tmp/"}},
                                      {"logFiles", {"/tmp/"}},
                                      {"allowNodeDevices", {"eth1", "eth2"}},
                                      {"podResourcesSocket", socket}}
                                     .dump());
  }
  static std::string PodsFile(const std::string& dir) {
    std::string path = dir + "/pods.json";
    std::ofstream(path) << kPods;
    return path;
  }
  // The entry as containerd runs it: its keys, the conflist's cniVersion and
  // name, runtimeConfig for the capabilities it declares, Terway's result.
  json Config(const json& entry, const std::string& cid, const json& annotations) const {
    kt::ConfigSpec spec{.device = "",
                        .data_dir = t.DataDir(),
                        .log_file = t.LogFile(),
                        .prev_result = kt::TerwayPrevResult("1.0.0", cid)};
    json c = kt::PluginConfig(spec);
    c.erase("addresses");
    for (const auto& [k, v] : entry.items()) c[k] = v;
    if (entry.contains("capabilities"))
      c["runtimeConfig"] = {{kAnnotations, annotations.is_null() ? json::object() : annotations}};
    return c;
  }
  kt::PluginResult Run(const std::string& command, const std::string& cid, const std::string& ns,
                       const std::string& pod, const json& config, int pod_ns) const {
    kt::PluginCall call = kt::Call(t, command, cid, "eth0", config, pod_ns);
    call.cni_args = "IgnoreUnknown=1;K8S_POD_NAMESPACE=" + ns + ";K8S_POD_NAME=" + pod +
                    ";K8S_POD_INFRA_CONTAINER_ID=" + cid;
    call.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + node_file);
    return kt::RunPlugin(call);
  }
};

size_t CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += line.find(needle) != std::string::npos;
  return n;
}

void NeedPython() {
  const std::string missing = kubelet_test::MissingPython();
  if (!missing.empty()) KT_SKIP("the fake kubelet needs " + missing);
}

}  // namespace

TEST_CASE(
    "every node-conflist recipe passes a pod that asked for nothing through untouched, CHECK and DEL "
    "succeed") {
  NeedPython();
  const kt::TempDir dir;
  kubelet_test::FakeKubelet kubelet("get", Node::PodsFile(dir.path()));
  for (const Recipe& r : Recipes()) {
    CAPTURE(r.name);
    Node n(kubelet.socket());
    const std::string cid = n.t.ContainerId("web");
    const json config = n.Config(r.entry, cid, json::object());
    const std::string node_before = kt::StableSnapshot(n.t.node());
    const std::string pod_before = kt::StableSnapshot(n.t.pod(1));

    kt::PluginResult add = n.Run("ADD", cid, "default", "web-0", config, 1);
    INFO("ADD: " << kt::Describe(add));
    REQUIRE(add.exit == 0);
    CHECK(add.json == config["prevResult"]);
    CHECK(kt::SettledDiff(node_before, n.t.node()).empty());
    CHECK(kt::SettledDiff(pod_before, n.t.pod(1)).empty());
    CHECK_FALSE(kt::FileExists(n.t.DataDir()));
    CHECK(CountLines(n.t.LogFile(), "ADD passed through") == 1);

    const json after = kt::AsRuntimeWouldForDel(config, add.json);
    kt::PluginResult check = n.Run("CHECK", cid, "default", "web-0", after, 1);
    INFO("CHECK: " << kt::Describe(check));
    CHECK(check.exit == 0);
    kt::PluginResult del = n.Run("DEL", cid, "default", "web-0", after, 1);
    INFO("DEL: " << kt::Describe(del));
    CHECK(del.exit == 0);
    // containerd's second DEL, at RemovePodSandbox: no netns, no prevResult.
    kt::PluginCall second = kt::Call(n.t, "DEL", cid, "eth0", config);
    second.netns = "";
    second.extra_env.push_back("ERDMA_CNI_NODE_CONFIG=" + n.node_file);
    CHECK(kt::RunPlugin(second).exit == 0);
    CHECK_FALSE(kt::FileExists(n.t.DataDir()));
    CHECK(kt::SettledDiff(node_before, n.t.node()).empty());
  }
}

TEST_CASE("every node-conflist recipe gives a pod that asked its rails, and DEL brings them home") {
  NeedPython();
  const kt::TempDir dir;
  kubelet_test::FakeKubelet kubelet("get", Node::PodsFile(dir.path()));
  for (const Recipe& r : Recipes()) {
    if (r.asking_device.is_null()) continue;  // SMC-R needs the VM's kernels (integration/vm)
    CAPTURE(r.name);
    Node n(kubelet.socket());
    const std::string cid = n.t.ContainerId("gpu");
    json entry = r.entry;
    entry.erase("rdma");
    entry["device"] = r.asking_device;
    const json config = n.Config(entry, cid, r.asking_annotations);
    const std::string node_before = kt::StableSnapshot(n.t.node());

    kt::PluginResult add = n.Run("ADD", cid, "ml", r.asking_pod, config, 1);
    INFO("ADD: " << kt::Describe(add));
    REQUIRE(add.exit == 0);
    CHECK(kt::LinkExists(n.t.pod(1), "erdma0"));
    CHECK(kt::LinkExists(n.t.pod(1), "erdma1"));
    CHECK_FALSE(kt::LinkExists(n.t.node(), "eth1"));
    CHECK_FALSE(kt::LinkExists(n.t.node(), "eth2"));
    // Terway's eth0 stays first in the chain's result.
    REQUIRE(add.json["interfaces"].size() >= 3);
    CHECK(add.json["interfaces"][0]["name"] == "eth0");

    const json after = kt::AsRuntimeWouldForDel(config, add.json);
    kt::PluginResult check = n.Run("CHECK", cid, "ml", r.asking_pod, after, 1);
    INFO("CHECK: " << kt::Describe(check));
    CHECK(check.exit == 0);
    kt::PluginResult del = n.Run("DEL", cid, "ml", r.asking_pod, after, 1);
    INFO("DEL: " << kt::Describe(del));
    REQUIRE(del.exit == 0);
    CHECK(kt::SettledDiff(node_before, n.t.node()).empty());
    CHECK(kt::StateFiles(n.t.DataDir()).empty());
  }
}

TEST_CASE(
    "device.required fails the ADD of a pod that holds no device, a bad opt-in annotation is code 7, "
    "and a standalone config never passes through") {
  NeedPython();
  const kt::TempDir dir;
  kubelet_test::FakeKubelet kubelet("get", Node::PodsFile(dir.path()));
  Node n(kubelet.socket());
  const std::string cid = n.t.ContainerId("web");
  const std::string node_before = kt::StableSnapshot(n.t.node());

  json required = {{"mode", "move"},
                   {"ifName", "erdma0"},
                   {"device", {{"resource", "aliyun/erdma"}, {"count", "all"}, {"required", true}}}};
  kt::PluginResult r = n.Run("ADD", cid, "default", "web-0", n.Config(required, cid, nullptr), 1);
  INFO("required: " << kt::Describe(r));
  kt::CheckError(r, 100, {"aliyun/erdma"});
  CHECK(r.json.value("msg", "").find("default/web-0") != std::string::npos);

  json pool = {{"mode", "move"},
               {"ifName", "erdma0"},
               {"capabilities", {{kAnnotations, true}}},
               {"device", {{"pool", {{"names", {"eth1", "eth2"}}}}, {"count", 2}}}};
  kt::PluginResult bad = n.Run("ADD", cid, "default", "web-0",
                               n.Config(pool, cid, {{"network.alibabacloud.com/erdma", "yes please"}}), 1);
  INFO("bad annotation: " << kt::Describe(bad));
  kt::CheckError(bad, 7, {"network.alibabacloud.com/erdma"});

  // A NAD the pod named: no prevResult, no pass-through.
  json standalone = n.Config(required, cid, nullptr);
  standalone.erase("prevResult");
  standalone["device"].erase("required");
  kt::PluginResult nad = n.Run("ADD", cid, "default", "web-0", standalone, 1);
  INFO("standalone: " << kt::Describe(nad));
  kt::CheckError(nad, 100, {"aliyun/erdma"});

  CHECK(kt::SettledDiff(node_before, n.t.node()).empty());
  CHECK(kt::StateFiles(n.t.DataDir()).empty());
}

}  // namespace test_kernel_plugin_node_conflist_test
