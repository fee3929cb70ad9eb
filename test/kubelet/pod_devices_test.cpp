// kubelet::PodDevices against a fake kubelet in each of its modes
// (test/fake_kubelet/pods.json holds the pods).
#include "kubelet/pod_devices.h"

#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test/kubelet/fake_kubelet.h"

namespace test_kubelet_pod_devices_test {

namespace {

using kubelet::Device;
using kubelet::PodDevices;
using kubelet_test::FakeKubelet;
using std::chrono::milliseconds;
using Calls = std::vector<std::string>;

constexpr milliseconds kTimeout{2000};
constexpr const char* kErdma = "aliyun/erdma";

const std::vector<Device> kTwo = {{"erdma_0/3", {0}}, {"erdma_1/5", {1}}};

TEST_CASE(
    "Get served: a pod's devices of the resource in two containers, with NUMA nodes and its GPUs' nodes") {
  FakeKubelet k("get");
  auto a = PodDevices(k.socket(), {"default", "two", kErdma}, kTimeout);
  REQUIRE(a.ok());
  CHECK(a->devices == kTwo);
  CHECK(a->gpu_numa_nodes == std::vector<int64_t>{1});
  CHECK(a->method == "Get");
  CHECK(k.Calls() == Calls{"Get default/two -> OK"});
}

TEST_CASE("a call, answered or refused, leaves the process on the CPUs it had") {
  cpu_set_t before;
  REQUIRE(::sched_getaffinity(0, sizeof before, &before) == 0);
  if (CPU_COUNT(&before) < 2) {
    // Pinned and restored cannot be told from never pinned: skipped (exit 77), never a pass.
    std::printf("SKIPPED: this process may run on one CPU only; the CPU mask's restore needs two\n");
    std::exit(77);
  }
  FakeKubelet k("get");
  REQUIRE(PodDevices(k.socket(), {"default", "two", kErdma}, kTimeout).ok());
  cpu_set_t after;
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&before, &after));
  REQUIRE_FALSE(PodDevices(k.socket(), {"default", "nobody", kErdma}, kTimeout).ok());
  REQUIRE(::sched_getaffinity(0, sizeof after, &after) == 0);
  CHECK(CPU_EQUAL(&before, &after));
}

TEST_CASE(
    "Get served: one device, eight devices over two NUMA nodes, grouped IDs, and namesakes in two "
    "namespaces") {
  FakeKubelet k("get");
  auto one = PodDevices(k.socket(), {"default", "one", kErdma}, kTimeout);
  REQUIRE(one.ok());
  CHECK(one->devices == std::vector<Device>{{"erdma_1/17", {0}}});
  CHECK(one->gpu_numa_nodes.empty());
  auto other = PodDevices(k.socket(), {"other", "one", kErdma}, kTimeout);
  REQUIRE(other.ok());
  CHECK(other->devices == std::vector<Device>{{"erdma_7/1", {1}}});

  auto eight = PodDevices(k.socket(), {"training", "eight", kErdma}, kTimeout);
  REQUIRE(eight.ok());
  REQUIRE(eight->devices.size() == 8);
  for (int i = 0; i < 8; ++i) {
    CHECK(eight->devices[i] ==
          Device{"erdma_" + std::to_string(i) + "/" + std::to_string(40 + i), {i < 4 ? 0 : 1}});
  }
  CHECK(eight->gpu_numa_nodes == std::vector<int64_t>{0, 1});

  auto grouped = PodDevices(k.socket(), {"default", "grouped", kErdma}, kTimeout);
  REQUIRE(grouped.ok());
  CHECK(grouped->devices ==
        std::vector<Device>{{"erdma_0/1", {0, 1}}, {"erdma_0/2", {0, 1}}, {"erdma_2/9", {}}});
}

TEST_CASE("no resource asked for: only the GPUs' NUMA nodes") {
  FakeKubelet k("get");
  auto a = PodDevices(k.socket(), {"default", "gpu-only", ""}, kTimeout);
  REQUIRE(a.ok());
  CHECK(a->devices.empty());
  CHECK(a->gpu_numa_nodes == std::vector<int64_t>{1});
}

TEST_CASE("Get unimplemented (kubelet before 1.27): the answer comes from List") {
  FakeKubelet k("unimplemented");
  auto a = PodDevices(k.socket(), {"default", "two", kErdma}, kTimeout);
  REQUIRE(a.ok());
  CHECK(a->devices == kTwo);
  CHECK(a->gpu_numa_nodes == std::vector<int64_t>{1});
  CHECK(a->method == "List");
  CHECK(k.Calls() == Calls{"Get default/two -> UNIMPLEMENTED", "List - -> OK"});
}

TEST_CASE("Get disabled (kubelet 1.27-1.33 without the feature gate): the answer comes from List") {
  FakeKubelet k("disabled");
  auto a = PodDevices(k.socket(), {"training", "eight", kErdma}, kTimeout);
  REQUIRE(a.ok());
  CHECK(a->devices.size() == 8);
  CHECK(a->method == "List");
  CHECK(k.Calls() == Calls{"Get training/eight -> UNKNOWN", "List - -> OK"});
}

TEST_CASE("a call the rate limit refuses is made once more") {
  FakeKubelet k("ratelimit");
  auto a = PodDevices(k.socket(), {"default", "two", kErdma}, kTimeout);
  REQUIRE(a.ok());
  CHECK(a->devices == kTwo);
  CHECK(k.Calls() == Calls{"Get default/two -> RESOURCE_EXHAUSTED", "Get default/two -> OK"});
}

TEST_CASE("a pod the kubelet does not know is code 11 naming the pod, by Get and by List") {
  for (const char* mode : {"get", "disabled"}) {
    INFO("mode " << mode);
    FakeKubelet k(mode);
    auto a = PodDevices(k.socket(), {"default", "gone", kErdma}, kTimeout);
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().code == base::Code::kTryAgainLater);
    CHECK_THAT(a.error().msg, Catch::Contains("pod default/gone") && Catch::Contains("aliyun/erdma"));
  }
}

TEST_CASE(
    "a pod without a device of the resource is an error naming the resource, the pod and what it holds") {
  FakeKubelet k("get");
  auto gpu = PodDevices(k.socket(), {"default", "gpu-only", kErdma}, kTimeout);
  REQUIRE_FALSE(gpu.ok());
  CHECK(gpu.error().code == base::Code::kDeviceNotFound);
  CHECK_THAT(gpu.error().msg, Catch::Contains("aliyun/erdma") && Catch::Contains("pod default/gpu-only") &&
                                  Catch::Contains("nvidia.com/gpu x1"));
  auto plain = PodDevices(k.socket(), {"default", "plain", kErdma}, kTimeout);
  REQUIRE_FALSE(plain.ok());
  CHECK(plain.error().code == base::Code::kDeviceNotFound);
  CHECK_THAT(plain.error().msg, Catch::Contains("no devices"));
}

TEST_CASE("no socket, or a socket nobody listens on, is code 11 naming the socket and the pod") {
  FakeKubelet k("get");  // for its scratch dir
  auto missing = PodDevices(k.dir() + "/absent.sock", {"default", "two", kErdma}, kTimeout);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == base::Code::kTryAgainLater);
  CHECK(missing.error().sys_errno == ENOENT);
  CHECK_THAT(missing.error().msg, Catch::Contains("absent.sock") && Catch::Contains("pod default/two"));

  // A kubelet that died leaves its socket file behind.
  const std::string stale = k.dir() + "/stale.sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, stale.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
  ::close(fd);
  auto refused = PodDevices(stale, {"default", "two", kErdma}, kTimeout);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == base::Code::kTryAgainLater);
  CHECK(refused.error().sys_errno == ECONNREFUSED);
}

TEST_CASE("a kubelet that does not answer is code 11 after the timeout, not later") {
  for (const char* mode : {"silent", "slow"}) {
    INFO("mode " << mode);
    FakeKubelet k(mode);
    auto start = std::chrono::steady_clock::now();
    auto a = PodDevices(k.socket(), {"default", "two", kErdma}, milliseconds(300));
    auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().code == base::Code::kTryAgainLater);
    CHECK_THAT(a.error().msg, Catch::Contains("300 ms") && Catch::Contains("pod default/two"));
    // In "slow" the server may end the call itself (DEADLINE_EXCEEDED) at its
    // copy of the deadline (grpc-timeout), which its timers keep to about a
    // millisecond: a hair before ours.
    CHECK(took >= milliseconds(295));
    CHECK(took < milliseconds(1000));
  }
}

TEST_CASE("ListAnswers: a kubelet that lists its pods answers, none, a dead socket or a silent one do not") {
  FakeKubelet k("get");
  CHECK(kubelet::ListAnswers(k.socket(), kTimeout).ok());
  CHECK(k.Calls() == Calls{"List - -> OK"});
  auto missing = kubelet::ListAnswers(k.dir() + "/absent.sock", kTimeout);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == base::Code::kTryAgainLater);
  CHECK_THAT(missing.error().msg,
             Catch::Contains(k.dir() + "/absent.sock") && Catch::Contains("for its pods"));
  FakeKubelet silent("silent");
  auto quiet = kubelet::ListAnswers(silent.socket(), milliseconds(300));
  REQUIRE_FALSE(quiet.ok());
  CHECK(quiet.error().code == base::Code::kTryAgainLater);
  CHECK_THAT(quiet.error().msg, Catch::Contains("300 ms"));
}

}  // namespace

namespace {

// A pods file of one pod, default/big, whose one container holds `ids` of
// aliyun/erdma; removed with the object.
class PodsFile {
 public:
  explicit PodsFile(const std::vector<std::string>& ids) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ecni-pods.XXXXXX").string();
    int fd = ::mkstemp(tmpl.data());
    REQUIRE(fd >= 0);
    ::close(fd);
    path_ = tmpl;
    nlohmann::json pods = {
        {"pods",
         {{{"namespace", "default"},
           {"name", "big"},
           {"containers",
            {{{"name", "main"}, {"devices", {{{"resource", kErdma}, {"ids", ids}, {"numa", {0}}}}}}}}}}}};
    std::ofstream(path_) << pods.dump();
  }
  ~PodsFile() { std::filesystem::remove(path_); }
  PodsFile(const PodsFile&) = delete;
  PodsFile& operator=(const PodsFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::string> Distinct(size_t n) {
  std::vector<std::string> ids;
  ids.reserve(n);
  for (size_t i = 0; i < n; ++i) ids.push_back("erdma_" + std::to_string(i / 64) + "/" + std::to_string(i));
  return ids;
}

TEST_CASE("an answer with 100,000 device IDs for the pod is refused naming the bound and the count") {
  PodsFile pods(Distinct(100000));
  FakeKubelet k("get", pods.path());
  auto a = PodDevices(k.socket(), {"default", "big", kErdma}, std::chrono::seconds(20));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().code == base::Code::kDecoding);
  CHECK_THAT(a.error().msg, Catch::Contains("100000 device IDs") && Catch::Contains("1024") &&
                                Catch::Contains("pod default/big") && Catch::Contains("aliyun/erdma"));
}

TEST_CASE("an answer with 20,000 distinct device IDs for the pod is refused, by Get and by List") {
  PodsFile pods(Distinct(20000));
  for (const char* mode : {"get", "disabled"}) {
    INFO("mode " << mode);
    FakeKubelet k(mode, pods.path());
    auto a = PodDevices(k.socket(), {"default", "big", kErdma}, std::chrono::seconds(20));
    REQUIRE_FALSE(a.ok());
    CHECK(a.error().code == base::Code::kDecoding);
    CHECK_THAT(a.error().msg, Catch::Contains("20000 device IDs") && Catch::Contains("1024"));
  }
}

TEST_CASE("an answer with kMaxDeviceIds device IDs for the pod is taken, each once") {
  std::vector<std::string> ids = Distinct(kubelet::kMaxDeviceIds);
  ids.back() = ids.front();  // the kubelet may name an ID twice: counted, kept once
  PodsFile pods(ids);
  FakeKubelet k("get", pods.path());
  auto a = PodDevices(k.socket(), {"default", "big", kErdma}, kTimeout);
  INFO((a.ok() ? std::string("ok") : a.error().msg));
  REQUIRE(a.ok());
  CHECK(a->devices.size() == kubelet::kMaxDeviceIds - 1);
}

TEST_CASE("an empty or malformed device ID in the kubelet's answer is refused, named as such") {
  struct Case {
    std::string id;
    std::string named;
  };
  const Case c = GENERATE(Case{"", "an empty device ID"}, Case{"erdma_0/\n1", "a malformed device ID"},
                          Case{"erdma 0", "a malformed device ID"},
                          Case{std::string(300, 'e'), "a malformed device ID"});
  CAPTURE(c.id);
  PodsFile pods({"erdma_0/1", c.id});
  FakeKubelet k("get", pods.path());
  auto a = PodDevices(k.socket(), {"default", "big", kErdma}, kTimeout);
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().code == base::Code::kDecoding);
  CHECK_THAT(a.error().msg, Catch::Contains("the kubelet's answer for pod default/big holds " + c.named +
                                            " for resource aliyun/erdma"));
  CHECK(a.error().msg.find('\n') == std::string::npos);
}

}  // namespace

}  // namespace test_kubelet_pod_devices_test
