// The plugin invocations the benchmark makes: configs (erdma-cni move mode,
// mode none and mode macvlan, the Go chains' host-device, macvlan and sbr)
// and CNI calls as a runtime makes them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "integration/bench/runner.h"
#include "integration/bench/spawn.h"
#include "integration/bench/topology.h"

namespace bench {

inline constexpr const char* kVersion = "1.0.0";  ///< cniVersion of every config
inline constexpr const char* kGateway = "10.9.0.1";
/// The address static IPAM gives the macvlan children (in the ENIs' subnet,
/// above every ENI stand-in's 10.9.0.(10+i)).
inline constexpr const char* kChildAddress = "10.9.0.250/24";

/// One CNI call: CNI_COMMAND, CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, stdin.
struct Call {
  std::string command, container_id, netns, ifname;
  nlohmann::json config;
  std::string args = {};  ///< CNI_ARGS ("" = not set)
};

/// The exec of `binary` (under `wrap`, a profiler's argv, when given) with only
/// PATH and CNI_* in the environment (CNI_PATH = opt.cni_dir).
Invocation Make(const Options& opt, const std::string& binary, const Call& c,
                const std::vector<std::string>& wrap = {});

/// The plugin's CNI error message when it printed one, else its stderr.
std::string Why(const Outcome& o);
/// exit 0, or prints what failed and returns false.
bool Ok(const Outcome& o, const std::string& what);
/// stdout as JSON (null when it is not).
nlohmann::json Parsed(const Outcome& o);
/// The call's peak RSS, as a row's figure.
inline double Rss(const Outcome& o) { return static_cast<double>(o.maxrss_kib); }

/// The pod's interface in every row.
inline constexpr const char* kPodIf = "net1";

/// erdma-cni, move mode: `device.name`, `addresses: inherit`, dataDir.
nlohmann::json ErdmaConfig(const Options& opt, const std::string& data_dir, const std::string& device);
/// erdma-cni, move mode, the device the kubelet gave the pod
/// (`device.resource` kKubeletResource): otherwise ErdmaConfig.
nlohmann::json ErdmaKubeletConfig(const Options& opt, const std::string& data_dir);
/// The same device as a pool of one (`device.pool` names it): the pod's
/// GPUs are asked of the kubelet and the pool ranked for them.
nlohmann::json ErdmaPoolConfig(const Options& opt, const std::string& data_dir, const std::string& device);
/// A pool of the devices `names` taking `count` of them (a group when more
/// than one), standalone: no kubelet is asked when CNI_ARGS names no pod.
nlohmann::json ErdmaPoolConfig(const Options& opt, const std::string& data_dir,
                               const std::vector<std::string>& names, int count);
inline constexpr const char* kKubeletResource = "aliyun/erdma";
/// The pod the fake kubelet serves, as CNI_ARGS names it.
inline constexpr const char* kKubeletPodArgs = "K8S_POD_NAMESPACE=bench;K8S_POD_NAME=pod";
/// The pod the fake kubelet serves without any device.
inline constexpr const char* kKubeletPlainPodArgs = "K8S_POD_NAMESPACE=bench;K8S_POD_NAME=plain";
/// The ACK controller's node-conflist recipe (docs/deploy.md) chained after
/// Terway: a pod of kKubeletPlainPodArgs passes through it.
nlohmann::json PassThroughConfig(const std::string& data_dir);
/// The recipe without a device plugin (a pool, asked for by the pod's
/// annotation) chained after Terway, for a pod without that annotation: it
/// passes through without asking the kubelet.
nlohmann::json PoolPassThroughConfig(const std::string& data_dir);
/// erdma-cni mode none chained after Terway with SMC-R from the pod annotation
/// (or the file given with --none-config).
nlohmann::json NoneConfig(const Options& opt, const std::string& data_dir);
/// erdma-cni mode macvlan (bridge) on `parent` with static IPAM: `address`
/// and a default route via `gateway`.
nlohmann::json ErdmaMacvlanConfig(const std::string& data_dir, const std::string& parent,
                                  const std::string& address = kChildAddress,
                                  const std::string& gateway = kGateway);
/// host-device with static IPAM: the ENI's address and a default route.
nlohmann::json HostDeviceConfig(const Eni& e);
/// The Go macvlan plugin (bridge, `master` = parent) with the same static IPAM
/// as ErdmaMacvlanConfig.
nlohmann::json MacvlanConfig(const std::string& parent);
/// sbr in the chain named `network`.
nlohmann::json SbrConfig(const std::string& network = "bench-go");
nlohmann::json WithPrev(nlohmann::json c, const nlohmann::json& prev);

/// The untimed pause before every ADD and DEL (--settle-ms).
void Settle(const Options& opt);

/// A fresh `<root>/erdma-bench-<run>-XXXXXX/data` path ("" root = /tmp); the
/// data directory itself is left for the plugin to create. Root "tmpfs": a
/// tmpfs the driver mounts on /tmp/erdma-bench-<run>-tmpfs in its private
/// mount namespace (it goes with the driver), as /run is on a node.
std::string MakeDataDir(const std::string& root);
/// <run> above: the pid of the process that tears the run down.
void SetRunId(int id);
/// Removes every directory MakeDataDir made under `root` in this run.
void RemoveDataDirs(const std::string& root);
/// The file system a MakeDataDir root is on ("tmpfs", "ext4", ...).
std::string DataRootFs(const std::string& root);
/// Mounts a tmpfs on the node file's default attachmentsDir in this process's private mount namespace
/// (EnterNetns made it), as /run is on a node: the attachment records cost what they cost there whatever
/// this machine's /run is on, and none is left on it.
void MountRecordsTmpfs();
/// The floor exec'd (erdma-bench-floor-exec): ADD, then DEL with the state
/// ADD printed, each after a settle pause, recorded (when `rec`) as
/// "<row> ADD" and "<row> DEL" with their CPU less the program's own JSON
/// input and output. `input` is {"config": ..., optionally "ips": [{"address",
/// "gateway"}]} (the addresses an IPAM plugin would give). False, said on
/// stderr, when either fails.
bool ExecFloor(const Options& opt, const std::string& pod, const std::string& ifname,
               const nlohmann::json& input, Results& r, bool rec, const std::string& row);

/// Adds the phases erdma-cni printed on stderr (ERDMA_CNI_PHASES) to `row`.
void AddPhases(Results& r, const std::string& row, const Outcome& o);

}  // namespace bench
