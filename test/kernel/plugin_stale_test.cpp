// Stale holders, as a runtime that loses a DEL leaves them (podman 4 never
// retries a failed DEL nor sends GC): the pod netns is deleted, the state and
// the device's claim (or a child's share of its parent) stay. The next ADD of
// the device finishes the lost DEL when the holder is provably dead, and
// never touches one whose netns still exists.
//
// A veth is virtual and dies with its netns; a physical ENI comes back to the
// node instead (default_device_exit_net: under its pod-side name, or devN
// when that is taken). The tests play the kernel's part: they move the veth
// back to the node the way the kernel would, then delete the pod netns.
#include <fcntl.h>
#include <linux/sockios.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/fault.h"
#include "test/kernel/harness.h"
#include "test/kernel/skip.h"

namespace test_kernel_plugin_stale_test {

using nlohmann::json;

namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Pod namespaces of our own, for as many stale pods as a test makes.
class Pods {
 public:
  explicit Pods(const kt::Topology& t) : t_(t) {}
  ~Pods() {
    for (const auto& ns : live_) kt::Sh("ip netns del " + ns);
  }
  Pods(const Pods&) = delete;
  Pods& operator=(const Pods&) = delete;
  std::string New() {
    std::string ns = t_.pod(0) + "-s" + std::to_string(n_++);
    kt::ShOk("ip netns add " + ns + " && ip -n " + ns + " link set lo up");
    live_.push_back(ns);
    return ns;
  }
  void Delete(const std::string& ns) {
    kt::ShOk("ip netns del " + ns);
    std::erase(live_, ns);
  }

 private:
  const kt::Topology& t_;
  std::vector<std::string> live_;
  int n_ = 0;
};

kt::PluginCall In(const kt::Topology& t, const std::string& command, const std::string& cid,
                  const json& config, const std::string& pod) {
  kt::PluginCall c = kt::Call(t, command, cid, "net1", config);
  c.netns = "/run/netns/" + pod;
  return c;
}

int IndexOf(const std::string& ns, const std::string& dev) {
  json l = kt::LinkJson(ns, dev);
  REQUIRE(l.is_object());
  return l.value("ifindex", 0);
}

// How the device comes back once its pod netns is gone.
enum class Back { kPodName, kDevN, kNodeName };

// Moves the pod's net1 to the node as the kernel would return it, and gives
// its name; the caller then deletes the pod netns.
std::string ReturnToNode(const kt::Topology& t, const std::string& pod, Back how) {
  std::string as = "net1";
  if (how == Back::kDevN) as = "dev" + std::to_string(IndexOf(pod, "net1"));
  if (how == Back::kNodeName) as = t.eni(1).name;
  kt::ShOk("ip -n " + pod + " link set net1 netns " + t.node() + " name " + as);
  return as;
}

json MoveConfig(const kt::Topology& t, json extra = json::object()) {
  kt::ConfigSpec spec{
      .data_dir = t.DataDir(), .log_file = t.LogFile(), .addresses = "inherit", .extra = std::move(extra)};
  if (spec.extra.contains("device")) spec.device.clear();
  return kt::PluginConfig(spec);
}

// ADD of `cid` into a new pod that then dies without DEL, its device back on
// the node as `how` says. Returns the pod (already deleted).
std::string MakeStale(const kt::Topology& t, Pods& pods, const json& config, const std::string& cid, Back how,
                      std::string* inode = nullptr) {
  std::string pod = pods.New();
  kt::PluginResult add = kt::RunPlugin(In(t, "ADD", cid, config, pod));
  INFO("ADD of the container whose DEL gets lost: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  REQUIRE(kt::LinkExists(pod, "net1"));
  ReturnToNode(t, pod, how);
  if (inode) *inode = kt::ShOk("stat -L -c %i /run/netns/" + pod);
  pods.Delete(pod);
  REQUIRE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", cid, "net1")));
  return pod;
}

// A UDP socket made inside the netns at `path` by a thread of this process
// that then exits: the netns is kept by the socket alone (no task is in it,
// no descriptor or mount names it). -1 when it cannot be made.
int SocketMadeIn(const std::string& path) {
  int sock = -1;
  std::thread([&] {
    int ns = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (ns < 0) return;
    if (::setns(ns, CLONE_NEWNET) == 0) sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    ::close(ns);
  }).join();
  return sock;
}

// `cmd` run inside the netns a socket of this process was made in.
kt::ShResult InNetnsOf(int sock, const std::string& cmd) {
  int ns = ::ioctl(sock, SIOCGSKNS);
  REQUIRE(ns >= 0);
  kt::ShResult r =
      kt::Sh("nsenter --net=/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(ns) + " " + cmd);
  ::close(ns);
  return r;
}

}  // namespace

TEST_CASE(
    "ADD finishes the lost DEL of a moved device whose pod netns is gone, however the device came back") {
  const auto how = GENERATE(Back::kPodName, Back::kDevN, Back::kNodeName);
  const bool by_mac = GENERATE(false, true);
  CAPTURE(static_cast<int>(how), by_mac);
  kt::Topology t;
  Pods pods(t);
  // Selected by MAC, a device back as devN is found under that name.
  const json config = by_mac ? MoveConfig(t, {{"device", {{"mac", t.eni(1).mac}}}}) : MoveConfig(t);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string old_cid = t.ContainerId("lost");
  MakeStale(t, pods, config, old_cid, how);
  CHECK(kt::LinkExists(t.node(), t.eni(1).name) == (how == Back::kNodeName));

  const std::string cid = t.ContainerId("next");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD after the lost DEL: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  // The device came with the addresses the recovery gave back to the node.
  CHECK(kt::FindIp(add.json, t.eni(1).ip4 + "/24").is_object());
  CHECK(kt::LinkJson(t.pod(), "net1").value("address", "") == t.eni(1).mac);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), old_cid).empty());
  const std::string log = ReadAll(t.LogFile());
  CHECK(log.find("recovering " + t.eni(1).name + " from container " + old_cid) != std::string::npos);

  // The runtime's late DEL of the old container is a no-op and leaves the new one alone.
  kt::PluginCall late = kt::Call(t, "DEL", old_cid, "net1", config);
  late.netns = "";
  CHECK(kt::RunPlugin(late).exit == 0);
  CHECK(kt::LinkExists(t.pod(), "net1"));

  kt::PluginResult del = kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config));
  INFO("DEL: " << kt::Describe(del));
  CHECK(del.exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
}

TEST_CASE("the next pod's netns may get the dead one's inode number: the cookie tells them apart") {
  // podman's order: the old container's netns is gone before the new one's
  // is made, and the kernel hands the freed number to the new one.
  kt::Topology t;
  Pods pods(t);
  const json config = MoveConfig(t);
  const std::string old_cid = t.ContainerId("lost");
  std::string old_inode;
  MakeStale(t, pods, config, old_cid, Back::kDevN, &old_inode);
  const std::string pod = pods.New();
  const std::string inode = kt::ShOk("stat -L -c %i /run/netns/" + pod);
  INFO("old netns inode " << old_inode << ", new " << inode);
  if (inode != old_inode) WARN("the new netns did not reuse the inode (another netns was made meanwhile)");
  const std::string cid = t.ContainerId("next");
  kt::PluginResult add = kt::RunPlugin(In(t, "ADD", cid, config, pod));
  INFO("ADD: " << kt::Describe(add) << "\nlog:\n" << ReadAll(t.LogFile()));
  REQUIRE(add.exit == 0);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK(kt::RunPlugin(In(t, "DEL", cid, config, pod)).exit == 0);
}

TEST_CASE("a holder whose netns still exists keeps the device (code 11), however the netns is kept") {
  const std::string keeper = GENERATE(as<std::string>{}, "bind mount", "process", "descriptor", "socket");
  CAPTURE(keeper);
  kt::Topology t;
  Pods pods(t);
  const json config = MoveConfig(t);
  const std::string old_cid = t.ContainerId("alive");
  const std::string pod = pods.New();
  REQUIRE(kt::RunPlugin(In(t, "ADD", old_cid, config, pod)).exit == 0);
  // The device even looks returned (renamed devN on the node), and the path
  // the state recorded is gone: only what keeps the netns tells it lives.
  ReturnToNode(t, pod, Back::kDevN);
  const std::string path = "/run/netns/" + pod;
  const std::string bind = t.tmp() + "/keep-netns";
  std::string pid;
  int sock = -1;
  if (keeper == "bind mount") {
    kt::ShOk("touch " + bind + " && mount --bind " + path + " " + bind);
  } else if (keeper == "socket") {
    sock = SocketMadeIn(path);
    REQUIRE(sock >= 0);
  } else if (keeper == "process") {
    pid = kt::ShOk("ip netns exec " + pod + " sleep 60 </dev/null >/dev/null 2>&1 & echo $!");
  } else {
    pid = kt::ShOk("sh -c 'exec 3<" + path + "; exec sleep 60' </dev/null >/dev/null 2>&1 & echo $!");
  }
  pid.erase(pid.find_last_not_of('\n') + 1);
  kt::ShOk("sleep 0.2");  // the process has entered or opened the netns
  pods.Delete(pod);
  CHECK_FALSE(kt::FileExists(path));

  const std::string cid = t.ContainerId("next");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
  INFO("ADD while the old netns lives: " << kt::Describe(add));
  kt::CheckError(add, 11, {old_cid});
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));

  // Once nothing keeps it, the holder is stale and the next ADD recovers it.
  if (keeper == "bind mount")
    kt::ShOk("umount " + bind);
  else if (keeper == "socket")
    ::close(sock);
  else
    kt::ShOk("kill " + pid + " && while kill -0 " + pid + " 2>/dev/null; do sleep 0.05; done");
  // The kernel frees a netns asynchronously once its last reference goes:
  // until then the holder is rightly still live (code 11).
  kt::PluginResult again;
  for (int i = 0; i < 50; ++i) {
    again = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", config));
    if (again.exit == 0 || !again.json.is_object() || again.json.value("code", 0) != 11) break;
    kt::ShOk("sleep 0.1");
  }
  INFO("ADD once the netns is gone: " << kt::Describe(again) << "\nlog:\n" << ReadAll(t.LogFile()));
  CHECK(again.exit == 0);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", config)).exit == 0);
}

TEST_CASE("a move ADD finishes the lost DEL of a child whose pod netns is gone, releasing its IPAM lease") {
  kt::Topology t;
  Pods pods(t);
  const std::string ipam_dir = t.tmp() + "/ipam";
  kt::ConfigSpec child_spec{.name = "erdma-child",
                            .data_dir = t.DataDir(),
                            .log_file = t.LogFile(),
                            .ipam = json{{"type", "host-local"},
                                         {"subnet", kt::kSubnet4},
                                         {"rangeStart", "10.9.0.100"},
                                         {"rangeEnd", "10.9.0.140"},
                                         {"dataDir", ipam_dir}}};
  child_spec.extra = {{"mode", "macvlan"}, {"macvlan", {{"mode", "bridge"}}}};
  const json child = kt::PluginConfig(child_spec);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string old_cid = t.ContainerId("child");
  const std::string pod = pods.New();
  kt::PluginResult add_child = kt::RunPlugin(In(t, "ADD", old_cid, child, pod));
  INFO("child ADD: " << kt::Describe(add_child));
  if (add_child.exit != 0 && add_child.err.find("macvlan") != std::string::npos)
    KT_SKIP("macvlan: this kernel cannot make one on a veth");
  REQUIRE(add_child.exit == 0);
  const std::string lease = ipam_dir + "/erdma-child/10.9.0.100";
  REQUIRE(kt::FileExists(lease));
  pods.Delete(pod);  // the child dies with it; the share of eth1 stays

  // diag tells the share's holder has lost its pod.
  json holders = json::parse(kt::Sh("ip netns exec " + t.node() + " " + kt::PluginBinary() +
                                    " diag --json --data-dir " + t.DataDir())
                                 .out,
                             nullptr, false)
                     .value("holders", json());
  INFO("diag holders: " << holders.dump());
  REQUIRE(holders.is_array());
  REQUIRE(holders.size() == 1);
  CHECK(holders[0].value("containerID", "") == old_cid);
  CHECK(holders[0].value("stale", false));
  CHECK(holders[0].value("podGone", false));

  const std::string cid = t.ContainerId("mover");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", MoveConfig(t)));
  INFO("move ADD after the lost child DEL: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  CHECK(kt::ClaimsFor(t.DataDir(), old_cid).empty());
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-child", old_cid, "net1")));
  // IPAM DEL ran for the old container, not for the one being added.
  CHECK_FALSE(kt::FileExists(lease));
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", MoveConfig(t))).exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

// A macvlan network on eth1, host-local in t.tmp()/ipam.
json ChildConfig(const kt::Topology& t) {
  kt::ConfigSpec spec{.name = "erdma-child",
                      .data_dir = t.DataDir(),
                      .log_file = t.LogFile(),
                      .ipam = json{{"type", "host-local"},
                                   {"subnet", kt::kSubnet4},
                                   {"rangeStart", "10.9.0.100"},
                                   {"rangeEnd", "10.9.0.140"},
                                   {"dataDir", t.tmp() + "/ipam"}}};
  spec.extra = {{"mode", "macvlan"}, {"macvlan", {{"mode", "bridge"}}}};
  return kt::PluginConfig(spec);
}

TEST_CASE(
    "a child whose pod netns outlives its tasks keeps its parent: a move ADD gets code 11 and the child "
    "survives, however the netns is kept") {
  const std::string keeper = GENERATE(as<std::string>{}, "bind mount", "descriptor", "socket");
  CAPTURE(keeper);
  kt::Topology t;
  Pods pods(t);
  const json child = ChildConfig(t);
  const std::string old_cid = t.ContainerId("child");
  const std::string pod = pods.New();
  kt::PluginResult add_child = kt::RunPlugin(In(t, "ADD", old_cid, child, pod));
  INFO("child ADD: " << kt::Describe(add_child));
  if (add_child.exit != 0 && add_child.err.find("macvlan") != std::string::npos)
    KT_SKIP("macvlan: this kernel cannot make one on a veth");
  REQUIRE(add_child.exit == 0);
  // No task is in the netns and its path is gone; only the keeper, outside
  // it, holds it: a bind mount elsewhere, a descriptor of this process, or a
  // socket this process made in it.
  const std::string path = "/run/netns/" + pod;
  const std::string bind = t.tmp() + "/keep-netns";
  int fd = -1;
  if (keeper == "bind mount") {
    kt::ShOk("touch " + bind + " && mount --bind " + path + " " + bind);
  } else if (keeper == "descriptor") {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } else {
    fd = SocketMadeIn(path);
  }
  if (keeper != "bind mount") REQUIRE(fd >= 0);
  pods.Delete(pod);
  CHECK_FALSE(kt::FileExists(path));
  auto child_alive = [&] {
    const std::string show = "ip -j link show net1";
    if (keeper == "bind mount") return kt::Sh("nsenter --net=" + bind + " " + show).exit == 0;
    if (keeper == "descriptor")
      return kt::Sh("nsenter --net=/proc/" + std::to_string(::getpid()) + "/fd/" + std::to_string(fd) + " " +
                    show)
                 .exit == 0;
    return InNetnsOf(fd, show).exit == 0;
  };
  REQUIRE(child_alive());

  const std::string cid = t.ContainerId("mover");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", MoveConfig(t)));
  INFO("move ADD while the child's netns lives: " << kt::Describe(add) << "\nlog:\n" << ReadAll(t.LogFile()));
  kt::CheckError(add, 11, {old_cid});
  CHECK(kt::LinkExists(t.node(), t.eni(1).name));
  CHECK(child_alive());
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-child", old_cid, "net1")));
  CHECK(kt::FileExists(t.tmp() + "/ipam/erdma-child/10.9.0.100"));

  // Once nothing keeps it, the child dies with it and the next ADD recovers.
  if (keeper == "bind mount")
    kt::ShOk("umount " + bind);
  else
    ::close(fd);
  kt::PluginResult again;
  for (int i = 0; i < 50; ++i) {
    again = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", MoveConfig(t)));
    if (again.exit == 0 || !again.json.is_object() || again.json.value("code", 0) != 11) break;
    kt::ShOk("sleep 0.1");
  }
  INFO("move ADD once the netns is gone: " << kt::Describe(again));
  CHECK(again.exit == 0);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-child", old_cid, "net1")));
  CHECK_FALSE(kt::FileExists(t.tmp() + "/ipam/erdma-child/10.9.0.100"));
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", MoveConfig(t))).exit == 0);
}

TEST_CASE(
    "a child ADD finishes the lost DEL of a move attachment that holds its parent, however it came back") {
  const auto how = GENERATE(Back::kPodName, Back::kDevN, Back::kNodeName);
  CAPTURE(static_cast<int>(how));
  kt::Topology t;
  Pods pods(t);
  const json child = ChildConfig(t);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string old_cid = t.ContainerId("mover");
  MakeStale(t, pods, MoveConfig(t), old_cid, how);

  const std::string cid = t.ContainerId("child");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", child));
  INFO("child ADD after the lost move DEL: " << kt::Describe(add) << "\nlog:\n" << ReadAll(t.LogFile()));
  if (add.exit != 0 && add.err.find("macvlan") != std::string::npos)
    KT_SKIP("macvlan: this kernel cannot make one on a veth");
  REQUIRE(add.exit == 0);
  CHECK(kt::LinkExists(t.pod(), "net1"));
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), old_cid).empty());
  CHECK(ReadAll(t.LogFile()).find("recovering " + t.eni(1).name + " from container " + old_cid) !=
        std::string::npos);
  CHECK(kt::RunPlugin(kt::Call(t, "DEL", cid, "net1", child)).exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-child").empty());
}

TEST_CASE("a child ADD gets code 11 while the move attachment that holds its parent may live") {
  kt::Topology t;
  Pods pods(t);
  const json child = ChildConfig(t);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string old_cid = t.ContainerId("mover");
  const std::string pod = pods.New();
  REQUIRE(kt::RunPlugin(In(t, "ADD", old_cid, MoveConfig(t), pod)).exit == 0);
  // eth1 even looks home under its node name, but the holder's netns lives:
  // the parent stays the holder's.
  ReturnToNode(t, pod, Back::kNodeName);
  const std::string cid = t.ContainerId("child");
  kt::PluginResult add = kt::RunPlugin(kt::Call(t, "ADD", cid, "net1", child));
  INFO("child ADD while the mover's netns lives: " << kt::Describe(add));
  kt::CheckError(add, 11, {old_cid});
  CHECK(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK_FALSE(kt::LinkExists(t.pod(), "net1"));
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-child").empty());
  // Its own DEL, from the netns it recorded, brings everything back.
  CHECK(kt::RunPlugin(In(t, "DEL", old_cid, MoveConfig(t), pod)).exit == 0);
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE("two ADDs racing on one stale claim: one recovers it and gets the device, the other gets code 11") {
  kt::Topology t({.enis = 1, .pods = 2});
  Pods pods(t);
  const json config = MoveConfig(t, {{"lockTimeoutMs", 2000}});
  const std::string node_before = kt::StableSnapshot(t.node());
  for (int round = 0; round < 3; ++round) {
    CAPTURE(round);
    const std::string old_cid = t.ContainerId("stale" + std::to_string(round));
    MakeStale(t, pods, config, old_cid, round == 1 ? Back::kNodeName : Back::kDevN);
    const std::string a = t.ContainerId("a" + std::to_string(round));
    const std::string b = t.ContainerId("b" + std::to_string(round));
    auto fa = std::async(std::launch::async,
                         [&] { return kt::RunPlugin(kt::Call(t, "ADD", a, "net1", config, 0)); });
    auto fb = std::async(std::launch::async,
                         [&] { return kt::RunPlugin(kt::Call(t, "ADD", b, "net1", config, 1)); });
    kt::PluginResult ra = fa.get(), rb = fb.get();
    INFO("A: " << kt::Describe(ra) << "\nB: " << kt::Describe(rb));
    REQUIRE(((ra.exit == 0) != (rb.exit == 0)));
    const kt::PluginResult& loser = ra.exit == 0 ? rb : ra;
    const std::string winner = ra.exit == 0 ? a : b;
    kt::CheckError(loser, 11);
    CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
    CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").size() == 1);
    CHECK(kt::RunPlugin(kt::Call(t, "DEL", winner, "net1", config, ra.exit == 0 ? 0 : 1)).exit == 0);
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  }
}

TEST_CASE("a fault inside the recovery leaves a state the next ADD or the late DEL finishes", "[sweep]") {
  if (!base::fault::kEnabled)
    KT_SKIP("fault hooks: build with -DERDMA_CNI_FAULT_HOOKS=ON (any non-Release test build)");
  // Who held the device, and who recovers it: a move ADD after a moved
  // device (its claim), a move ADD after a macvlan child with an IPAM lease
  // (its share of the parent), a child ADD after a moved parent (its claim,
  // recovered under the parent's lock).
  const int which = GENERATE(0, 1, 2);
  const bool old_child = which == 1, next_child = which == 2;
  CAPTURE(old_child, next_child);
  kt::Topology t;
  Pods pods(t);
  const json old_config = old_child ? ChildConfig(t) : MoveConfig(t);
  const json next_config = next_child ? ChildConfig(t) : MoveConfig(t);
  const std::string node_before = kt::StableSnapshot(t.node());
  int n = 0;
  auto cid = [&](const std::string& tag) { return t.ContainerId(tag + std::to_string(n++)); };
  // An attachment whose pod died without DEL: a moved device comes back as devN.
  auto make_stale = [&](const std::string& old_cid) {
    if (!old_child) {
      MakeStale(t, pods, old_config, old_cid, Back::kDevN);
      return;
    }
    const std::string pod = pods.New();
    kt::PluginResult add = kt::RunPlugin(In(t, "ADD", old_cid, old_config, pod));
    INFO("child ADD whose DEL gets lost: " << kt::Describe(add));
    if (add.exit != 0 && add.err.find("macvlan") != std::string::npos)
      KT_SKIP("macvlan: this kernel cannot make one on a veth");
    REQUIRE(add.exit == 0);
    pods.Delete(pod);
  };
  const std::string old_net = old_child ? "erdma-child" : "erdma-test";
  auto check_pristine = [&](const std::string& old_cid) {
    CHECK(kt::SettledDiff(node_before, t.node()) == "");
    CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
    CHECK(kt::StateFiles(t.DataDir() + "/erdma-child").empty());
    CHECK(kt::ClaimsFor(t.DataDir(), old_cid).empty());
    for (const auto& f : kt::StateFiles(t.tmp() + "/ipam/erdma-child")) {
      INFO("host-local file left: " << f);
      CHECK((f == "lock" || f.rfind("last_reserved_ip", 0) == 0));
    }
  };

  // The points a recovering ADD passes, from the recovery's start to its end.
  std::vector<std::string> points;
  {
    const std::string old_cid = cid("trace");
    make_stale(old_cid);
    const std::string trace = t.tmp() + "/trace";
    kt::PluginCall add = kt::Call(t, "ADD", cid("tracer"), "net1", next_config);
    add.extra_env = {"ERDMA_CNI_FAULT_TRACE=" + trace};
    kt::PluginResult r = kt::RunPlugin(add);
    INFO(kt::Describe(r));
    REQUIRE(r.exit == 0);
    std::istringstream lines(ReadAll(trace));
    bool in = false;
    for (std::string p; std::getline(lines, p);) {
      in = in || p.starts_with("before:stale-recover");
      if (in) points.push_back(p);
      if (p.starts_with("after:stale-recover")) break;
    }
    REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", add.container_id, "net1", next_config)).exit == 0);
    check_pristine(old_cid);
  }
  INFO("recovery points: " << json(points).dump());
  REQUIRE(points.size() >= 4);
  REQUIRE(points.back().starts_with("after:stale-recover"));
  // The old attachment's state and its claim or share go inside the recovery.
  CHECK(std::count_if(points.begin(), points.end(),
                      [](const std::string& p) { return p.starts_with("after:state-remove"); }) == 1);

  const std::vector<std::string> run = kt::SweepSample(points, "stale recovery");
  for (const std::string& point : run) {
    for (const char* action : {"fail", "kill"}) {
      INFO("recovery " << action << " at " << point);
      const std::string old_cid = cid("old");
      make_stale(old_cid);
      const std::string next = cid("next");
      kt::PluginCall add = kt::Call(t, "ADD", next, "net1", next_config);
      add.extra_env = {"ERDMA_CNI_FAULT=" + point, std::string("ERDMA_CNI_FAULT_ACTION=") + action};
      kt::PluginResult faulted = kt::RunPlugin(add);
      INFO("faulted ADD: " << kt::Describe(faulted));
      CHECK(faulted.exit == (std::string(action) == "kill" ? -1 : 1));
      if (std::string(action) == "kill") {
        // The runtime's late DEL of the old container finishes what is left.
        kt::PluginCall late = kt::Call(t, "DEL", old_cid, "net1", old_config);
        late.netns = "";
        kt::PluginResult del = kt::RunPlugin(late);
        INFO("late DEL: " << kt::Describe(del));
        CHECK(del.exit == 0);
      }
      kt::PluginResult again = kt::RunPlugin(kt::Call(t, "ADD", next, "net1", next_config));
      INFO("next ADD: " << kt::Describe(again));
      CHECK(again.exit == 0);
      CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), old_net, old_cid, "net1")));
      CHECK(kt::RunPlugin(kt::Call(t, "DEL", next, "net1", next_config)).exit == 0);
      check_pristine(old_cid);
    }
  }
  std::cout << "stale recovery (" << (old_child ? "child" : "move") << " recovered by a "
            << (next_child ? "child" : "move") << " ADD): " << points.size() << " fault points, "
            << 2 * run.size() << " runs (fail, kill)\n";
}

TEST_CASE("GC of one network finishes the lost DEL of another network's attachment whose pod is gone") {
  kt::Topology t;
  Pods pods(t);
  const json config = MoveConfig(t);
  const std::string node_before = kt::StableSnapshot(t.node());
  const std::string old_cid = t.ContainerId("gc");
  MakeStale(t, pods, config, old_cid, Back::kPodName);
  json other = kt::PluginConfig({.cni_version = "1.1.0",
                                 .name = "erdma-other",
                                 .device = "eth1",
                                 .data_dir = t.DataDir(),
                                 .log_file = t.LogFile(),
                                 .addresses = "inherit"});
  other["cni.dev/valid-attachments"] = json::array();
  kt::PluginResult gc = kt::RunPlugin(kt::Gc(t, other));
  INFO("GC: " << kt::Describe(gc));
  CHECK(gc.exit == 0);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK(kt::ClaimsFor(t.DataDir(), old_cid).empty());
  CHECK(kt::SettledDiff(node_before, t.node()) == "");
}

TEST_CASE(
    "a group whose pod died without DEL: each next ADD of one of its devices finishes that member's DEL, and "
    "the group's file goes with the last") {
  kt::Topology t({.enis = 2});
  Pods pods(t);
  json group =
      MoveConfig(t, {{"device", {{"pool", {{"names", {t.eni(1).name, t.eni(2).name}}}}, {"count", 2}}}});
  const std::string old_cid = t.ContainerId("lost-group");
  const std::string pod = pods.New();
  kt::PluginResult add = kt::RunPlugin(In(t, "ADD", old_cid, group, pod));
  INFO("ADD of the group whose DEL gets lost: " << kt::Describe(add));
  REQUIRE(add.exit == 0);
  // The kernel hands both devices back under their pod-side names.
  kt::ShOk("ip -n " + pod + " link set net1 netns " + t.node());
  kt::ShOk("ip -n " + pod + " link set net2 netns " + t.node());
  pods.Delete(pod);
  const std::string group_file = t.DataDir() + "/erdma-test/@" + old_cid + "@net1%group";
  REQUIRE(kt::FileExists(group_file));

  // A new pod takes eth1 by name: net1 of the group is recovered, the group stays for net2.
  const std::string first = t.ContainerId("first");
  const json eth1 = MoveConfig(t, {{"device", {{"name", t.eni(1).name}}}});
  kt::PluginResult a = kt::RunPlugin(kt::Call(t, "ADD", first, "net1", eth1));
  INFO("ADD of eth1: " << kt::Describe(a));
  REQUIRE(a.exit == 0);
  CHECK_FALSE(kt::FileExists(kt::StatePath(t.DataDir(), "erdma-test", old_cid, "net1")));
  CHECK(kt::FileExists(group_file));
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", first, "net1", eth1)).exit == 0);

  // Another takes eth2: the last member recovered, the group's file goes too.
  const json eth2 = MoveConfig(t, {{"device", {{"name", t.eni(2).name}}}});
  kt::PluginResult b = kt::RunPlugin(kt::Call(t, "ADD", first, "net1", eth2));
  INFO("ADD of eth2: " << kt::Describe(b));
  REQUIRE(b.exit == 0);
  CHECK_FALSE(kt::FileExists(group_file));
  REQUIRE(kt::RunPlugin(kt::Call(t, "DEL", first, "net1", eth2)).exit == 0);
  CHECK(kt::StateFiles(t.DataDir() + "/erdma-test").empty());
  // The runtime's late DEL of the group is a no-op.
  kt::PluginCall late = kt::Call(t, "DEL", old_cid, "net1", group);
  late.netns = "";
  CHECK(kt::RunPlugin(late).exit == 0);
}

}  // namespace test_kernel_plugin_stale_test
