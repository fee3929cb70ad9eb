// kubelet/pod_devices: the pod-resources messages, encoded and decoded
// against bytes another implementation wrote (python3-protobuf from
// kubelet/podresources.proto), so that a wrong field number or type in the
// .proto or in the decoder is caught without a kubelet.
#include <catch2/catch.hpp>
#include <string>

#include "kubelet/pod_devices.h"

namespace test_unit_kubelet_codec_test {

namespace {

using kubelet::Device;

std::string Unhex(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// GetPodResourcesRequest{pod_name: "two", pod_namespace: "default"}.
const std::string kGetRequest = "0a0374776f120764656661756c74";
// Pod default/a, container "main": aliyun/erdma [erdma_0/1] on NUMA node 0
// (NUMANode{ID: 0} is an empty message on the wire), nvidia.com/gpu [G0] on node 1.
const std::string kPodA =
    "0a0161120764656661756c741a410a046d61696e121d0a0c616c6979756e2f6572646d6112096572646d615f302f311a020a0012"
    "1a0a0e6e76"
    "696469612e636f6d2f677075120247301a040a020801";
// ListPodResourcesResponse{default/a as above, other/a: aliyun/erdma [erdma_1/2] on node 1}.
const std::string kList =
    "0a4f" + kPodA +
    "0a330a016112056f746865721a270a046d61696e121f0a0c616c6979756e2f6572646d6112096572646d615f31"
    "2f321a040a020801";
const std::string kGetReply = "0a4f" + kPodA;

TEST_CASE("the Get request is the bytes the published schema gives") {
  CHECK(kubelet::EncodeGetRequest({"default", "two", "aliyun/erdma"}) == Unhex(kGetRequest));
  CHECK(kubelet::EncodeListRequest().empty());
}

TEST_CASE("a Get reply gives the resource's devices with their NUMA nodes and the GPUs' nodes") {
  auto a = kubelet::DecodeGetReply(Unhex(kGetReply), {"default", "a", "aliyun/erdma"});
  REQUIRE(a.ok());
  CHECK(a->devices == std::vector<Device>{{"erdma_0/1", {0}}});
  CHECK(a->gpu_numa_nodes == std::vector<int64_t>{1});
  CHECK(a->method == "Get");
}

TEST_CASE("a List reply gives the pod of the namespace asked for, not its namesake") {
  auto a = kubelet::DecodeListReply(Unhex(kList), {"other", "a", "aliyun/erdma"});
  REQUIRE(a.ok());
  CHECK(a->devices == std::vector<Device>{{"erdma_1/2", {1}}});
  CHECK(a->gpu_numa_nodes.empty());
  CHECK(a->method == "List");
}

TEST_CASE("a pod List does not name is code 11 naming the pod") {
  auto a = kubelet::DecodeListReply(Unhex(kList), {"default", "b", "aliyun/erdma"});
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().code == base::Code::kTryAgainLater);
  CHECK_THAT(a.error().msg, Catch::Contains("pod default/b") && Catch::Contains("lists 2 pods"));
}

TEST_CASE("a pod without the resource is an error naming the resource, the pod and what it holds") {
  auto a = kubelet::DecodeGetReply(Unhex(kGetReply), {"default", "a", "example.com/nic"});
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().code == base::Code::kDeviceNotFound);
  CHECK_THAT(a.error().msg, Catch::Contains("example.com/nic") && Catch::Contains("pod default/a") &&
                                Catch::Contains("aliyun/erdma x1, nvidia.com/gpu x1"));
}

TEST_CASE("no resource asked for gives only the GPUs' NUMA nodes") {
  auto a = kubelet::DecodeGetReply(Unhex(kGetReply), {"default", "a", ""});
  REQUIRE(a.ok());
  CHECK(a->devices.empty());
  CHECK(a->gpu_numa_nodes == std::vector<int64_t>{1});
}

TEST_CASE("a Get reply for another pod, or bytes that are no message, is a decoding error") {
  auto other = kubelet::DecodeGetReply(Unhex(kGetReply), {"default", "b", "aliyun/erdma"});
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().code == base::Code::kDecoding);
  CHECK_THAT(other.error().msg, Catch::Contains("names pod default/a"));
  // Every truncation of the reply: a length that runs past the end.
  std::string whole = Unhex(kGetReply);
  for (size_t n = 1; n < whole.size(); ++n) {
    auto cut = kubelet::DecodeGetReply(whole.substr(0, n), {"default", "a", "aliyun/erdma"});
    INFO("cut at " << n);
    CHECK_FALSE(cut.ok());
  }
  auto list = kubelet::DecodeListReply("\x0a\xff", {"default", "a", "aliyun/erdma"});
  REQUIRE_FALSE(list.ok());
  CHECK(list.error().code == base::Code::kDecoding);
}

}  // namespace

}  // namespace test_unit_kubelet_codec_test
