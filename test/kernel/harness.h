// Helpers for the kernel tests: shell commands, a private namespace topology
// that stands in for an ECS node with secondary ENIs, canonical snapshots of a
// namespace's network state, and running the real erdma-cni binary the way a
// container runtime does (env + stdin, inside the node's netns).
//
// Implemented in harness.cpp (processes, the plugin, configs), topology.cpp,
// snapshot.cpp (reading kernel state) and expect.cpp (shared assertions).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kt {

/// Every cniVersion erdma-cni supports; tests GENERATE over it.
inline const std::vector<std::string> kVersions = {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"};

/// The VPC side of the topology (fixed: each test has its own namespaces).
inline constexpr const char* kGateway4 = "10.9.0.1";
inline constexpr const char* kGateway6 = "fd00:9::1";
inline constexpr const char* kSubnet4 = "10.9.0.0/24";
inline constexpr const char* kSubnet6 = "fd00:9::/64";
/// An address the VPC namespace answers for that is off the ENI subnet: a pod
/// reaches it only through a default route via the gateway.
inline constexpr const char* kOffSubnetTarget = "192.0.2.1";
inline constexpr const char* kOffSubnetTarget6 = "fd00:99::1";

struct ShResult {
  int exit = -1;
  std::string out;
  std::string err;
};

/// Runs `/bin/sh -c cmd`. Never throws on failure; see ShOk.
ShResult Sh(const std::string& cmd);

/// Runs `cmd` and REQUIREs exit 0 (the failure shows the command and stderr).
/// Returns stdout.
std::string ShOk(const std::string& cmd);

/// Whether a test should expect 1.0.0+ result shapes (no ips[].version).
bool VersionAtLeast(const std::string& version, const std::string& min);

/// A directory made with mkdtemp under /tmp, removed recursively on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// One ENI stand-in: a veth whose node end (`name`) plays the secondary ENI.
struct Eni {
  std::string name;  ///< in the node netns: eth1, eth2, ...
  std::string mac;
  std::string ip4;      ///< 10.9.0.<10+i>, prefix /24
  std::string ip6;      ///< fd00:9::<10+i>, prefix /64; empty without IPv6
  uint32_t metric = 0;  ///< the node agent's route metric through it (200 + i - 1)
  bool up = true;
};

struct TopologyOptions {
  int enis = 1;             ///< number of ENI stand-ins (eth1..ethN)
  int pods = 1;             ///< number of pod namespaces
  bool ipv6 = false;        ///< give the ENIs IPv6 addresses and routes too
  bool primary = false;     ///< give pod 0 a Terway-like eth0 (172.16.0.5/24, default via 172.16.0.1)
  std::vector<int> down{};  ///< 1-based ENI numbers left admin-down (they get no routes)
};

/// A private world, torn down in the destructor (also when a REQUIRE throws):
///  - node: stands in for the host. ENI i is `eth<i>` with 10.9.0.<10+i>/24
///    (noprefixroute) and the node agent's routes `10.9.0.0/24 dev eth<i>
///    metric 200+i-1` and `default via 10.9.0.1 dev eth<i> metric 200+i-1`
///    (likewise for IPv6 when enabled).
///  - vpc: a bridge `br0` with the gateway addresses and kOffSubnetTarget, the
///    ENIs' peer ends enslaved to it.
///  - pods: empty namespaces with lo up (and eth0 on pod 0 with `primary`).
/// Namespace names are `ecni-<pid>-<counter>-<role>`, so tests run in parallel.
/// DAD is off in every namespace so IPv6 state is deterministic.
class Topology {
 public:
  explicit Topology(const TopologyOptions& opts = {});
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  const std::string& node() const { return node_; }
  const std::string& vpc() const { return vpc_; }
  const std::string& pod(int i = 0) const { return pods_.at(i); }
  /// /run/netns/<pod>, what CNI_NETNS carries.
  std::string PodPath(int i = 0) const { return "/run/netns/" + pods_.at(i); }
  const Eni& eni(int i = 1) const { return enis_.at(i - 1); }

  /// A unique container ID for this topology ("ctr-<pid>-<counter>-<tag>").
  std::string ContainerId(const std::string& tag) const;

  /// Per-test temp dir; dataDir lives under it and is not created up front.
  const std::string& tmp() const { return tmp_.path(); }
  /// The test's dataDir, not created up front: under tmp(), a private directory; with
  /// ERDMA_TEST_STICKY_DATA=1 (the suite's sticky variant), directly under /tmp, sticky and world-writable,
  /// as a user's "/tmp/erdma" is.
  std::string DataDir() const;
  std::string LogFile() const { return tmp() + "/erdma-cni.log"; }

  /// Deletes the pod namespace now (the destructor then skips it).
  void DeletePod(int i = 0);

 private:
  void Build(const TopologyOptions& opts);
  void Teardown();

  std::string prefix_;
  std::string node_, vpc_;
  std::vector<std::string> pods_;
  std::vector<std::string> live_;  ///< namespaces to delete on teardown
  std::vector<Eni> enis_;
  TempDir tmp_;
};

/// Canonical text of a netns's network state: one sorted line per link,
/// address, route (IPv4 and IPv6, every table) and rule, with volatile fields
/// (ifindex, stats, lifetimes, tentative flags, caches, expiry) removed. Two
/// snapshots of the same state compare equal.
std::string Snapshot(const std::string& netns);

/// Snapshot(netns) once the links have settled: polls (up to 3 s) until
/// every admin-up link reports a carrier and operstate UP (or UNKNOWN, as lo
/// does). In this topology every up veth has an up peer, so anything else is
/// the kernel's linkwatch still catching up (it may lag a second behind a
/// link coming up). Use it for the reference snapshots tests compare against.
std::string StableSnapshot(const std::string& netns);

/// Lines in `a` but not in `b` prefixed "- ", lines in `b` but not in `a`
/// prefixed "+ ". Empty when equal. For readable assertion failures.
std::string SnapshotDiff(const std::string& a, const std::string& b);

/// SnapshotDiff(expected, Snapshot(netns)), polled every 100 ms for up to
/// 3 s until it is empty: the kernel finishes some changes asynchronously
/// after the plugin has exited (linkwatch reports a veth's carrier up to a
/// second late), and a state that settles on `expected` is correct. Lines
/// containing `ignore` (when non-empty) are dropped from both sides.
std::string SettledDiff(const std::string& expected, const std::string& netns,
                        const std::string& ignore = "");

/// Regular files under `dir`, relative paths, sorted (empty if dir is absent); an entry of the claims'
/// index (devices/.by:id/) left behind is one.
std::vector<std::string> StateFiles(const std::string& dir);

/// Whether a file (or anything) exists at `path`.
bool FileExists(const std::string& path);

/// The state file the plugin keeps for one attachment.
std::string StatePath(const std::string& data_dir, const std::string& network,
                      const std::string& container_id, const std::string& ifname);

/// Files under `<dataDir>/devices/` and `<dataDir>/children/` whose content
/// mentions `container_id` (a claim or a child's share still held for it); an entry of the claims' index
/// only when its claim file is gone.
std::vector<std::string> ClaimsFor(const std::string& data_dir, const std::string& container_id);

/// One invocation of the plugin. Empty strings mean "variable not set";
/// `netns` distinguishes unset (nullopt) from set-but-empty.
struct PluginCall {
  std::string command;  ///< CNI_COMMAND
  std::string container_id;
  std::optional<std::string> netns;
  std::string ifname;
  std::optional<std::string> cni_path;  ///< default: the binary's dir + /usr/lib/cni
  std::string cni_args;
  std::string stdin_text;
  std::string run_in;                  ///< netns name to run in (the node); empty = the test's own netns
  std::vector<std::string> extra_env;  ///< more "K=V" (e.g. the fault points of base/fault.h)
  std::chrono::seconds timeout{30};
};

struct PluginResult {
  int exit = -1;  ///< exit status; -1 when killed by a signal or the timeout
  bool timed_out = false;
  std::string out, err;
  nlohmann::json json;  ///< stdout parsed, null when empty or not JSON
};

/// Execs the real erdma-cni (ERDMA_CNI_BIN) with only CNI_*, PATH and
/// ERDMA_CNI_NODE_CONFIG (TestNodeFile) in its environment, via
/// `ip netns exec <run_in>` so /sys matches the node netns.
PluginResult RunPlugin(const PluginCall& call);

/// The suite's promise, checked by RunPlugin after every run (test/kernel/invariant.cpp): a DEL that exits 0
/// left no state, member state, orphaned claim or share, attachment record, or device-info file as its ADD
/// wrote it, of its attachment in any data dir its ADDs used, and every device those ADDs moved is back on
/// the node (or held by another pod since).
/// A violation fails the test (on a worker thread: the process, at exit).
void CheckInvariants(const PluginCall& call, const PluginResult& r);

/// Fails the running test with `what`. Catch2 takes assertions from the test's own thread only: on another
/// one (a std::async of a concurrency test) `what` is kept and the process exits 1 with it at its end.
void FailOnAnyThread(const std::string& what);

/// Path of the erdma-cni binary under test.
std::string PluginBinary();

/// The node file (ERDMA_CNI_NODE_CONFIG) RunPlugin gives the plugin unless
/// extra_env sets the variable: dataDirs /run/erdma-cni and /tmp/, logFiles
/// /tmp/, allowNodeDevices eth1..eth9 (the topology's ENIs carry the node
/// netns's only default routes), attachmentsDir TestAttachmentsDir().
const std::string& TestNodeFile();
/// The attachmentsDir of TestNodeFile: /run/ecni-kt-attachments-<pid>, removed at exit.
std::string TestAttachmentsDir();

/// Writes a node file at `path` (replacing it), owned by us (root), `mode`.
void WriteNodeFile(const std::string& path, const std::string& text, mode_t mode = 0644);

/// The plugin's network config.
struct ConfigSpec {
  std::string cni_version = "1.0.0";
  std::string name = "erdma-test";
  std::string device = "eth1";  ///< device.name; empty = no device key
  std::string data_dir{};
  std::string log_file{};
  std::optional<std::string> addresses{};  ///< e.g. "inherit"
  std::optional<nlohmann::json> ipam{};
  std::optional<nlohmann::json> prev_result{};
  nlohmann::json extra = nlohmann::json::object();  ///< merged over the top level last
};
nlohmann::json PluginConfig(const ConfigSpec& spec);

/// A Terway-shaped prevResult in `version`: eth0 with sandbox = container ID,
/// no MAC, 172.16.0.5/24 via 172.16.0.1, a default route, empty dns.
nlohmann::json TerwayPrevResult(const std::string& version, const std::string& container_id);

/// Convenience for ADD/CHECK/DEL with a config and topology.
PluginCall Call(const Topology& t, const std::string& command, const std::string& container_id,
                const std::string& ifname, const nlohmann::json& config, int pod = 0);

/// A GC in the node namespace with `config` (its cniVersion and
/// cni.dev/valid-attachments as the caller sets them).
PluginCall Gc(const Topology& t, const nlohmann::json& config);

/// `ip -j addr show dev <dev>` addresses "a.b.c.d/len" in `netns`.
std::vector<std::string> Addresses(const std::string& netns, const std::string& dev, int family = 4);

/// Whether `dev` exists in `netns`.
bool LinkExists(const std::string& netns, const std::string& dev);

/// `ip -d -j link show dev` parsed (first element), or null.
nlohmann::json LinkJson(const std::string& netns, const std::string& dev);

/// Routes of one table (`main`, `local`, a number) as parsed JSON, one family.
nlohmann::json Routes(const std::string& netns, const std::string& table, int family = 4);

/// Rules of one family as parsed JSON.
nlohmann::json Rules(const std::string& netns, int family = 4);

/// A short description of a PluginResult for INFO().
std::string Describe(const PluginResult& r);

/// `config` with `prevResult` set the way libcni does for CHECK and DEL:
/// the cached ADD result, from 0.4.0 on; unchanged before 0.4.0.
nlohmann::json AsRuntimeWouldForDel(nlohmann::json config, const nlohmann::json& add_result);

/// CHECKs that `r` is a CNI error: non-zero exit, a JSON object on stdout
/// with a string cniVersion, `code` == code, and a non-empty `msg` containing
/// at least one of `msg_any` (when given).
void CheckError(const PluginResult& r, int code, const std::vector<std::string>& msg_any = {});

/// The snapshot with every line containing `needle` removed.
std::string WithoutLines(const std::string& snapshot, const std::string& needle);

/// The table of the rule `from <src>` in `netns`, or -1 when there is none;
/// `priority` receives the rule's priority.
long RuleTable(const std::string& netns, const std::string& src, int family = 4, long* priority = nullptr);

/// `ping -c1 -W2 -I <from> <to>` inside `netns`.
ShResult Ping(const std::string& netns, const std::string& from, const std::string& to);

/// `ip -j route get <to> [from <from>]` inside `netns`: the first entry, or
/// null when the kernel has no route.
nlohmann::json RouteGet(const std::string& netns, const std::string& to, const std::string& from = "");

/// What an attachment should look like inside the pod.
struct Attached {
  std::string dev{};         ///< pod-side name
  std::string mac{};         ///< empty: not checked
  std::optional<int> mtu{};  ///< nullopt: not checked
  std::string addr{};        ///< "10.9.0.11" or "fd00:9::11"
  int prefix = 24;
  std::string subnet = kSubnet4;
  std::string gateway = kGateway4;
  uint32_t rule_priority = 200;
  uint32_t route_metric = 200;
};

/// CHECKs the pod side of a move-mode attachment for one address: the link
/// up with its MAC/MTU, the address, the subnet route in main at
/// route_metric (and no kernel prefix route, no default via it in main), a
/// rule `from addr` at rule_priority into a table >= 200 holding the subnet
/// route and the default via the gateway, `ip route get` from the address to
/// an off-subnet target resolving through that table, and pings from the
/// address to the gateway and to the off-subnet target. Returns the table.
long CheckAttached(const std::string& pod, const Attached& a);

/// The element of result["ips"] whose address is `addr` ("10.9.0.11/24"), or null.
nlohmann::json FindIp(const nlohmann::json& result, const std::string& addr);

/// The fault points a sweep runs. All of them unless ERDMA_TEST_SWEEP_STRIDE
/// is N > 1 (the ASan phase of the test command, docs/testing.md): then every
/// N-th point from an offset, ERDMA_TEST_SWEEP_OFFSET or the day's number
/// modulo N, so that successive days cover every point. Prints what it kept
/// and how to run the same sample or all of them.
std::vector<std::string> SweepSample(const std::vector<std::string>& points, const std::string& sweep);

}  // namespace kt
