// Many invocations at once, the real binary on the real kernel: pods racing
// for the same devices get exactly one winner per device and code 11 naming
// it; the device lock waits as long as `lockTimeoutMs` says and no longer;
// parallel ADD/DEL churn of moved devices and macvlan children leaves the
// node and the pods exactly as they were.
//
// Catch2 v2 assertions are not thread-safe: the threads only run the plugin
// (and `ip`) and return what they saw; every CHECK runs on the test's thread.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <map>
#include <memory>
#include <set>

#include "base/fault.h"
#include "test/kernel/harness.h"
#include "test/kernel/skip.h"

namespace test_kernel_plugin_concurrency_test {

using nlohmann::json;

namespace {

namespace fs = std::filesystem;

json HostLocal(const kt::Topology& t, const std::string& first, const std::string& last) {
  return {{"type", "host-local"}, {"subnet", kt::kSubnet4},   {"rangeStart", first},
          {"rangeEnd", last},     {"gateway", kt::kGateway4}, {"dataDir", t.tmp() + "/ipam"}};
}

// Runs `calls` all at once: every thread waits on a latch until all exist.
std::vector<kt::PluginResult> RunTogether(const std::vector<kt::PluginCall>& calls) {
  std::latch start(static_cast<std::ptrdiff_t>(calls.size()));
  std::vector<std::future<kt::PluginResult>> futures;
  for (const auto& c : calls)
    futures.push_back(std::async(std::launch::async, [&start, &c] {
      start.arrive_and_wait();
      return kt::RunPlugin(c);
    }));
  std::vector<kt::PluginResult> out;
  for (auto& f : futures) out.push_back(f.get());
  return out;
}

double ElapsedMs(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

// Holds an exclusive flock on a device's claim file, as an invocation
// configuring that device does.
class HeldLock {
 public:
  explicit HeldLock(const std::string& path) : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    REQUIRE(fd_ >= 0);
    REQUIRE(::flock(fd_, LOCK_EX | LOCK_NB) == 0);
  }
  ~HeldLock() { Release(); }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;
  void Release() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// The pid of the running plugin invocation with this command and container
// ID (`ip netns exec` execs the plugin, which keeps the environment), or -1.
pid_t PluginPid(const std::string& command, const std::string& container_id) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "environ");
    std::string env((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto has = [&](const std::string& kv) {
      return env.find(std::string(1, '\0') + kv + '\0') != std::string::npos;
    };
    env.insert(0, 1, '\0');
    if (has("CNI_COMMAND=" + command) && has("CNI_CONTAINERID=" + container_id)) return std::stoi(name);
  }
  return -1;
}

// 32 pods, 4 racing for each of 8 devices, selected by `device.name` or by
// Multus' `deviceID` (the MAC): different lookups, the claim is by node name
// either way.
void RaceForDevices(const std::string& selector) {
  CAPTURE(selector);
  constexpr int kDevices = 8, kPods = 32;
  kt::Topology t({.enis = kDevices, .pods = kPods});
  // Pod i races for device i % 8 + 1 with three others.
  auto device_of = [](int pod) { return pod % kDevices + 1; };
  std::vector<json> configs;
  for (int d = 1; d <= kDevices; ++d) {
    kt::ConfigSpec spec{.data_dir = t.DataDir(), .log_file = t.LogFile()};
    if (selector == "device.name") {
      spec.device = t.eni(d).name;
    } else {
      spec.device = "";
      spec.extra = {{"deviceID", t.eni(d).mac}};
    }
    configs.push_back(kt::PluginConfig(spec));
  }
  auto config_of = [&](int pod) -> const json& {
    return configs.at(static_cast<size_t>(device_of(pod) - 1));
  };
  // Two digits: no container ID is a substring of another (ClaimsFor matches substrings).
  auto cid_of = [&](int pod) { return t.ContainerId((pod < 10 ? "race0" : "race") + std::to_string(pod)); };
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string empty_pod = kt::StableSnapshot(t.pod(0));

  std::vector<kt::PluginCall> adds;
  for (int i = 0; i < kPods; ++i) adds.push_back(kt::Call(t, "ADD", cid_of(i), "net1", config_of(i), i));
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<kt::PluginResult> added = RunTogether(adds);
  const double add_ms = ElapsedMs(t0);

  std::map<int, int> winner;  // device -> pod
  for (int i = 0; i < kPods; ++i) {
    INFO("ADD of pod " << i << " for eth" << device_of(i) << ": " << kt::Describe(added[i]));
    CHECK_FALSE(added[i].timed_out);
    if (added[i].exit == 0) {
      CHECK(winner.count(device_of(i)) == 0);
      winner[device_of(i)] = i;
    }
  }
  REQUIRE(winner.size() == kDevices);
  for (int i = 0; i < kPods; ++i) {
    const int w = winner.at(device_of(i));
    if (w == i) continue;
    // A loser: code 11, the holder named, nothing of its own left anywhere.
    kt::CheckError(added[i], 11, {cid_of(w)});
    CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid_of(i), "net1")));
    CHECK(kt::ClaimsFor(t.DataDir(), cid_of(i)).empty());
    INFO("loser pod " << i);
    CHECK(kt::SettledDiff(empty_pod, t.pod(i)) == "");
  }
  // Each device in exactly one pod, the winner's, and gone from the node.
  std::set<std::string> macs;
  for (int d = 1; d <= kDevices; ++d) {
    const int w = winner.at(d);
    INFO("eth" << d << " won by pod " << w);
    CHECK_FALSE(kt::LinkExists(t.node(), t.eni(d).name));
    json link = kt::LinkJson(t.pod(w), "net1");
    REQUIRE(link.is_object());
    CHECK(link.value("address", "") == t.eni(d).mac);
    CHECK(kt::Addresses(t.pod(w), "net1") == std::vector<std::string>{t.eni(d).ip4 + "/24"});
    CHECK(kt::ClaimsFor(t.DataDir(), cid_of(w)) ==
          std::vector<std::string>{t.DataDir() + "/devices/" + t.eni(d).name});
    macs.insert(link.value("address", ""));
  }
  CHECK(macs.size() == kDevices);

  // DEL for all 32 at once: the winners' as a runtime sends it after a
  // successful ADD, the losers' (no-ops) as after a failed one.
  std::vector<kt::PluginCall> dels;
  for (int i = 0; i < kPods; ++i) {
    const bool won = winner.at(device_of(i)) == i;
    const json cfg = won ? kt::AsRuntimeWouldForDel(config_of(i), added[i].json) : config_of(i);
    dels.push_back(kt::Call(t, "DEL", cid_of(i), "net1", cfg, i));
  }
  const auto t1 = std::chrono::steady_clock::now();
  const std::vector<kt::PluginResult> deleted = RunTogether(dels);
  const double del_ms = ElapsedMs(t1);
  for (int i = 0; i < kPods; ++i) {
    INFO("DEL of pod " << i << ": " << kt::Describe(deleted[i]));
    CHECK(deleted[i].exit == 0);
  }
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  for (int i = 0; i < kPods; ++i) {
    INFO("pod " << i);
    CHECK(kt::SettledDiff(empty_pod, t.pod(i)) == "");
  }
  // No state file and no claim left (both live under dataDir).
  CHECK(kt::StateFiles(t.DataDir()) == std::vector<std::string>{});
  WARN("32 parallel ADDs took " << add_ms << " ms, 32 parallel DELs " << del_ms << " ms");
}

}  // namespace

TEST_CASE("32 ADDs race for 8 devices by name: 8 win, 24 get code 11 naming the winner, DELs restore all") {
  RaceForDevices("device.name");
}

TEST_CASE(
    "32 ADDs race for 8 devices by deviceID: 8 win, 24 get code 11 naming the winner, DELs restore all") {
  RaceForDevices("deviceID");
}

TEST_CASE(
    "ADD and DEL wait lockTimeoutMs for a device lock another invocation holds, then fail with code 11") {
  kt::Topology t({.enis = 1, .pods = 1});
  constexpr int kTimeoutMs = 400;
  json config = kt::PluginConfig(
      {.data_dir = t.DataDir(), .log_file = t.LogFile(), .extra = {{"lockTimeoutMs", kTimeoutMs}}});
  const std::string cid = t.ContainerId("locked");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string pod_before = kt::StableSnapshot(t.pod());
  const std::string claim = t.DataDir() + "/devices/eth1";
  fs::create_directories(t.DataDir() + "/devices");
  fs::permissions(t.DataDir(), fs::perms::owner_all);
  fs::permissions(t.DataDir() + "/devices", fs::perms::owner_all);

  {
    HeldLock lock(claim);
    const auto t0 = std::chrono::steady_clock::now();
    kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
    const double ms = ElapsedMs(t0);
    INFO("ADD: " << kt::Describe(add) << "\nafter " << ms << " ms");
    kt::CheckError(add, 11, {"eth1"});
    // It waited for the lock, and not the default 10 s.
    CHECK(ms >= kTimeoutMs);
    CHECK(ms < 5000);
    WARN("ADD refused after " << ms << " ms with lockTimeoutMs " << kTimeoutMs);
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
    CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
    // Released meanwhile, the same ADD goes through.
    lock.Release();
  }
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD after release: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const json del_config = kt::AsRuntimeWouldForDel(config, add.json);
  {
    HeldLock lock(claim);
    const auto t0 = std::chrono::steady_clock::now();
    kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
    const double ms = ElapsedMs(t0);
    INFO("DEL: " << kt::Describe(del) << "\nafter " << ms << " ms");
    kt::CheckError(del, 11, {"eth1"});
    CHECK(ms >= kTimeoutMs);
    CHECK(ms < 5000);
    WARN("DEL refused after " << ms << " ms with lockTimeoutMs " << kTimeoutMs);
    // Nothing undone: the device stays in the pod, the state stays for a retry.
    CHECK(kt::LinkExists(t.pod(), "net1"));
    CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  }
  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", del_config));
  INFO("DEL after release: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::SettledDiff(pod_before, t.pod()) == "");
  CHECK(kt::StateFiles(t.DataDir()) == std::vector<std::string>{});
}

TEST_CASE(
    "parallel ADD/DEL churn of 8 moved devices and 16 macvlan children on one parent leaves nothing behind") {
  constexpr int kMoved = 8, kChildren = 16, kRounds = 5;
  constexpr int kParent = kMoved + 1;  // eth9
  kt::Topology t({.enis = kParent, .pods = kMoved + kChildren});
  // Moved devices alternate between their own addresses and host-local; the
  // children take host-local addresses from another range.
  std::vector<json> configs;
  for (int i = 0; i < kMoved + kChildren; ++i) {
    kt::ConfigSpec spec{.data_dir = t.DataDir(), .log_file = t.LogFile()};
    if (i < kMoved) {
      spec.device = t.eni(i + 1).name;
      if (i % 2 == 0) {
        spec.name = "erdma-inherit";
        spec.addresses = "inherit";
      } else {
        spec.name = "erdma-ipam";
        spec.ipam = HostLocal(t, "10.9.0.150", "10.9.0.190");
      }
    } else {
      spec.name = "erdma-macvlan";
      spec.device = t.eni(kParent).name;
      spec.ipam = HostLocal(t, "10.9.0.100", "10.9.0.140");
      spec.extra = {{"mode", "macvlan"}, {"macvlan", {{"mode", "bridge"}}}};
    }
    configs.push_back(kt::PluginConfig(spec));
  }
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string empty_pod = kt::StableSnapshot(t.pod(0));

  // Each pod's thread: kRounds of ADD, the link is there, DEL, it is gone.
  std::latch start(kMoved + kChildren);
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::future<std::vector<std::string>>> pods;
  for (int i = 0; i < kMoved + kChildren; ++i) {
    pods.push_back(std::async(std::launch::async, [&, i] {
      std::vector<std::string> errors;
      start.arrive_and_wait();
      for (int r = 0; r < kRounds; ++r) {
        const std::string cid = t.ContainerId("churn" + std::to_string(i) + "-" + std::to_string(r));
        const std::string where = "pod " + std::to_string(i) + " round " + std::to_string(r) + ": ";
        kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", configs[i], i));
        if (add.exit != 0) {
          errors.push_back(where + "ADD " + kt::Describe(add));
          break;
        }
        if (kt::Sh("ip -n " + t.pod(i) + " link show net1").exit != 0)
          errors.push_back(where + "no net1 in the pod after ADD");
        kt::PluginResult del =
            kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", kt::AsRuntimeWouldForDel(configs[i], add.json), i));
        if (del.exit != 0) {
          errors.push_back(where + "DEL " + kt::Describe(del));
          break;
        }
        if (kt::Sh("ip -n " + t.pod(i) + " link show net1 2>/dev/null").exit == 0)
          errors.push_back(where + "net1 still in the pod after DEL");
      }
      return errors;
    }));
  }
  int total_errors = 0;
  for (int i = 0; i < kMoved + kChildren; ++i) {
    for (const auto& e : pods[i].get()) {
      ++total_errors;
      UNSCOPED_INFO(e);
    }
  }
  CHECK(total_errors == 0);
  WARN((kMoved + kChildren) * kRounds << " ADD/DEL cycles by " << kMoved + kChildren << " pods at once took "
                                      << ElapsedMs(t0) << " ms");

  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  for (int i = 0; i < kMoved + kChildren; ++i) {
    INFO("pod " << i);
    CHECK(kt::SettledDiff(empty_pod, t.pod(i)) == "");
  }
  CHECK(kt::StateFiles(t.DataDir()) == std::vector<std::string>{});
  // host-local keeps its lock and last-reserved files; a lease is a file
  // named by its address.
  for (const auto& f : kt::StateFiles(t.tmp() + "/ipam")) {
    const std::string base = fs::path(f).filename();
    INFO("IPAM file " << f);
    CHECK((base == "lock" || base.rfind("last_reserved_ip", 0) == 0));
  }
}

TEST_CASE(
    "DEL of an ADD that died after claiming leaves the device alone when another pod took it meanwhile") {
  if (!base::fault::kEnabled)
    KT_SKIP("fault hooks: build with -DERDMA_CNI_FAULT_HOOKS=ON (any non-Release test build)");
  kt::Topology t({.enis = 1, .pods = 2});
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string dead = t.ContainerId("dead"), taker = t.ContainerId("taker");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string claim = t.DataDir() + "/devices/eth1";

  // A's ADD dies after claiming eth1 and before its first state write: the
  // claim names A's state, which does not exist.
  kt::PluginCall killed = kt::Call(t, "ADD", dead, "net1", config, 0);
  killed.extra_env = {"ERDMA_CNI_FAULT=before:state-write#1", "ERDMA_CNI_FAULT_ACTION=kill"};
  REQUIRE(kt::RunPlugin(killed).exit == -1);
  REQUIRE(kt::ClaimsFor(t.DataDir(), dead) == std::vector<std::string>{claim});

  // The runtime's DEL for A reads that claim and waits for the device's lock,
  // which another invocation holds (here: the test). Once it waits, it is
  // stopped, so that pod C's ADD gets the lock first when the test lets go.
  auto held = std::make_unique<HeldLock>(claim);
  auto del = std::async(std::launch::async,
                        [&] { return kt::RunPlugin(kt::Call(t, "DEL", dead, "net1", config, 0)); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (kt::Sh("grep -q 'cid=" + dead + ".*cannot be used' " + t.LogFile()).exit != 0 &&
         std::chrono::steady_clock::now() < deadline)
    usleep(20 * 1000);
  usleep(300 * 1000);
  const pid_t del_pid = PluginPid("DEL", dead);
  REQUIRE(del_pid > 0);
  REQUIRE(kill(del_pid, SIGSTOP) == 0);
  held.reset();
  // Pod C takes eth1 over: A's claim is stale (A has no state).
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", taker, "net1", config, 1));
  INFO("C's ADD: " << kt::Describe(add));
  kill(del_pid, SIGCONT);
  kt::PluginResult del_dead = del.get();
  INFO("A's DEL: " << kt::Describe(del_dead));
  INFO("log: " << kt::Sh("cat " + t.LogFile()).out);
  REQUIRE(add.exit == 0);
  CHECK(del_dead.exit == 0);
  // eth1 is still C's: in C's pod, and claimed by C (a third pod gets code 11 naming C).
  CHECK(kt::LinkExists(t.pod(1), "net1"));
  CHECK(kt::ClaimsFor(t.DataDir(), taker) == std::vector<std::string>{claim});
  kt::PluginResult third = kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("third"), "net2", config, 0));
  kt::CheckError(third, 11, {taker});

  kt::PluginResult del_taker =
      kt::RunPlugin(kt::Call(t, "DEL", taker, "net1", kt::AsRuntimeWouldForDel(config, add.json), 1));
  INFO("C's DEL: " << kt::Describe(del_taker));
  CHECK(del_taker.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir()) == std::vector<std::string>{});
}

TEST_CASE(
    "two DELs of one attachment at once: the later waits for the attachment's lock and gives up with code "
    "11, and a DEL after another pod took the device leaves it to that pod") {
  kt::Topology t({.enis = 1, .pods = 2});
  json config = kt::PluginConfig({.data_dir = t.DataDir(), .log_file = t.LogFile()});
  const std::string owner = t.ContainerId("owner"), taker = t.ContainerId("taker");
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string claim = t.DataDir() + "/devices/eth1";
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", owner, "net1", config, 0));
  INFO("A's ADD: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  const json del_config = kt::AsRuntimeWouldForDel(config, add.json);

  // The first DEL of A holds A's attachment record, has read A's state and waits for the device's lock (held
  // by the test), and is stopped there. A second DEL of A waits for the record, and gives up.
  auto held = std::make_unique<HeldLock>(claim);
  auto first = std::async(std::launch::async,
                          [&] { return kt::RunPlugin(kt::Call(t, "DEL", owner, "net1", del_config, 0)); });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (kt::Sh("grep -q 'cid=" + owner + ".*DEL netns' " + t.LogFile()).exit != 0 &&
         std::chrono::steady_clock::now() < deadline)
    usleep(20 * 1000);
  usleep(300 * 1000);
  const pid_t first_pid = PluginPid("DEL", owner);
  REQUIRE(first_pid > 0);
  REQUIRE(kill(first_pid, SIGSTOP) == 0);
  held.reset();
  json impatient = del_config;
  impatient["lockTimeoutMs"] = 300;
  kt::PluginResult second = kt::RunPlugin(kt::Call(t, "DEL", owner, "net1", impatient, 0));
  kill(first_pid, SIGCONT);
  kt::PluginResult done = first.get();
  // Then pod C takes eth1, and A's DEL comes once more (a runtime's retry).
  kt::PluginResult taken = kt::RunPlugin(kt::Call(t, "ADD", taker, "net1", config, 1));
  kt::PluginResult late = kt::RunPlugin(kt::Call(t, "DEL", owner, "net1", del_config, 0));
  INFO("second DEL: " << kt::Describe(second));
  INFO("first DEL: " << kt::Describe(done));
  INFO("C's ADD: " << kt::Describe(taken));
  INFO("late DEL: " << kt::Describe(late));
  INFO("log: " << kt::Sh("cat " + t.LogFile()).out);
  kt::CheckError(second, 11, {"locked by another erdma-cni invocation"});
  CHECK(done.exit == 0);
  REQUIRE(taken.exit == 0);
  CHECK(late.exit == 0);
  // eth1 is C's: in C's pod with its address, claimed by C.
  CHECK(kt::Addresses(t.pod(1), "net1") == std::vector<std::string>{t.eni(1).ip4 + "/24"});
  CHECK(kt::ClaimsFor(t.DataDir(), taker) == std::vector<std::string>{claim});
  kt::CheckError(kt::RunPlugin(kt::Call(t, "ADD", t.ContainerId("third"), "net2", config, 0)), 11, {taker});

  CHECK(kt::RunPlugin(kt::Call(t, "DEL", taker, "net1", kt::AsRuntimeWouldForDel(config, taken.json), 1))
            .exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir()) == std::vector<std::string>{});
}

}  // namespace test_kernel_plugin_concurrency_test
