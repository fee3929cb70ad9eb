// The messages the NRI agent reads and writes, in plain structs: ttrpc's envelope (nri/ttrpc.proto) and the
// part of NRI's API it uses (nri/api.proto), through protobuf-c. Every decoder takes the runtime's bytes as
// hostile: what does not parse is kDecoding; strings are bytes as sent (the caller escapes what it shows).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.h"

namespace nri {

/// The service names of NRI's two services, as ttrpc requests name them.
inline constexpr const char* kPluginService = "nri.pkg.api.v1alpha1.Plugin";
inline constexpr const char* kRuntimeService = "nri.pkg.api.v1alpha1.Runtime";

/// A ttrpc request: which method of which service, and its message.
struct Request {
  std::string service;
  std::string method;
  std::string payload;
  int64_t timeout_nano = 0;
  bool operator==(const Request&) const = default;
};
base::Result<Request> DecodeRequest(std::string_view bytes);
std::string EncodeRequest(const Request& r);

/// A ttrpc response: code 0 (gRPC's OK) and the reply message, or an error code and its message.
struct Response {
  int32_t code = 0;
  std::string message;
  std::string payload;
  bool operator==(const Response&) const = default;
};
base::Result<Response> DecodeResponse(std::string_view bytes);
std::string EncodeResponse(const Response& r);
/// gRPC's codes a plugin answers with.
inline constexpr int32_t kUnimplemented = 12;
inline constexpr int32_t kInternalError = 13;

/// NRI's events (api.proto's Event), and the bit ConfigureResponse.events sets for one.
enum class Event : int {
  kRunPodSandbox = 1,
  kStopPodSandbox = 2,
  kRemovePodSandbox = 3,
  kCreateContainer = 4,
  kRemoveContainer = 11,
};
constexpr uint32_t EventBit(Event e) { return uint32_t{1} << (static_cast<int>(e) - 1); }

std::string EncodeRegisterPlugin(const std::string& name, const std::string& index);

struct Configure {
  std::string config;
  std::string runtime_name;
  std::string runtime_version;
  int64_t registration_timeout_ms = 0;
  int64_t request_timeout_ms = 0;
};
base::Result<Configure> DecodeConfigure(std::string_view bytes);
std::string EncodeConfigureResponse(uint32_t events);

struct Pod {
  std::string id;  ///< the sandbox ID: CNI_CONTAINERID of the pod's CNI calls
  std::string name;
  std::string uid;
  std::string ns;
  std::map<std::string, std::string> annotations;
  bool operator==(const Pod&) const = default;
};

/// A device node of a container (`type` "c" or "b").
struct Device {
  std::string path;
  std::string type;
  int64_t major = 0, minor = 0;
  std::optional<uint32_t> file_mode, uid, gid;
  bool operator==(const Device&) const = default;
};

struct Rlimit {
  std::string type;  ///< "RLIMIT_MEMLOCK"
  uint64_t hard = 0, soft = 0;
  bool operator==(const Rlimit&) const = default;
};

struct Container {
  std::string id;
  std::string pod_sandbox_id;
  std::string name;
  std::vector<std::string> env;  ///< "KEY=VALUE"
  std::vector<Device> devices;
  std::vector<Rlimit> rlimits;
  bool operator==(const Container&) const = default;
};

struct CreateContainer {
  Pod pod;
  Container container;
};
base::Result<CreateContainer> DecodeCreateContainer(std::string_view bytes);

/// A device cgroup rule: "allow c 231:192 rw".
struct DeviceRule {
  bool allow = true;
  std::string type;
  std::optional<int64_t> major, minor;
  std::string access;
  bool operator==(const DeviceRule&) const = default;
};

struct MountSpec {
  std::string destination, type, source;
  std::vector<std::string> options;
  bool operator==(const MountSpec&) const = default;
};

/// What the reply to CreateContainer asks of the container; empty changes nothing.
struct Adjustment {
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<MountSpec> mounts;
  std::vector<Device> devices;
  std::vector<DeviceRule> device_rules;
  std::vector<Rlimit> rlimits;
  bool empty() const {
    return env.empty() && mounts.empty() && devices.empty() && device_rules.empty() && rlimits.empty();
  }
  bool operator==(const Adjustment&) const = default;
};
std::string EncodeCreateContainerResponse(const Adjustment& a);
/// The runtime's side of it (tests and the fuzz harness read back what the agent wrote).
base::Result<Adjustment> DecodeCreateContainerResponse(std::string_view bytes);

struct Synchronize {
  std::vector<Pod> pods;
  std::vector<Container> containers;
  bool more = false;
};
base::Result<Synchronize> DecodeSynchronize(std::string_view bytes);
/// No updates; `more`: ready for the rest of a synchronization sent in parts.
std::string EncodeSynchronizeResponse(bool more);

struct StateChange {
  int event = 0;
  Pod pod;
  std::optional<Container> container;
};
base::Result<StateChange> DecodeStateChange(std::string_view bytes);

/// The empty message (Empty, RunPodSandboxResponse, ...): zero bytes.
inline std::string EncodeEmpty() { return {}; }

}  // namespace nri
