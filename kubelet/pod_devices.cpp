#include "kubelet/pod_devices.h"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "base/clock.h"
#include "base/escape.h"
#include "conf/names.h"
#include "kubelet/grpc_call.h"
#include "kubelet/podresources.pb-c.h"

namespace kubelet {
namespace {

using base::Code;
using base::Error;
using Clock = base::SteadyClock;

constexpr const char* kGet = "/v1.PodResourcesLister/Get";
constexpr const char* kList = "/v1.PodResourcesLister/List";
// Long enough for the kubelet's rate limiter to have a token again.
constexpr std::chrono::milliseconds kRateLimitPause{20};

std::string Who(const PodQuery& q) { return "pod " + base::EscapeForDisplay(q.ns + "/" + q.pod); }
std::string What(const PodQuery& q) { return base::EscapeForDisplay(q.resource); }

template <auto Free>
struct Freer {
  void operator()(auto* m) const { Free(m, nullptr); }
};
using GetReply =
    std::unique_ptr<V1__GetPodResourcesResponse, Freer<v1__get_pod_resources_response__free_unpacked>>;
using ListReply =
    std::unique_ptr<V1__ListPodResourcesResponse, Freer<v1__list_pod_resources_response__free_unpacked>>;

const uint8_t* Bytes(const std::string& s) { return reinterpret_cast<const uint8_t*>(s.data()); }
std::string Str(const char* s) { return s ? s : ""; }

std::vector<int64_t> Nodes(const V1__TopologyInfo* t) {
  std::vector<int64_t> out;
  if (t == nullptr) return out;
  for (size_t i = 0; i < t->n_nodes; ++i) {
    if (t->nodes[i] != nullptr) out.push_back(t->nodes[i]->id);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// What is wrong with an ID of q.resource (it becomes a file and a sysfs lookup); nullopt when valid.
struct BadId {
  std::string kind;    ///< "an empty device ID"
  std::string detail;  ///< what it holds, escaped
};
std::optional<BadId> Malformed(std::string_view id) {
  if (conf::IsValidDeviceId(id)) return std::nullopt;
  if (id.empty()) return BadId{"an empty device ID", ""};
  return BadId{"a malformed device ID",
               " (" + std::to_string(id.size()) + " bytes: " +
                   base::EscapeForDisplay(std::string(id.substr(0, 64))) + (id.size() > 64 ? "..." : "") +
                   "; a device ID is 1 to 256 printable ASCII characters without spaces)"};
}

// The device entries of the pod's containers, in order (null ones left out).
std::vector<const V1__ContainerDevices*> Entries(const V1__PodResources& pod) {
  std::vector<const V1__ContainerDevices*> out;
  for (size_t c = 0; c < pod.n_containers; ++c)
    for (size_t d = 0; pod.containers[c] != nullptr && d < pod.containers[c]->n_devices; ++d)
      if (pod.containers[c]->devices[d] != nullptr) out.push_back(pod.containers[c]->devices[d]);
  return out;
}

// The pod's devices of q.resource and its GPUs' NUMA nodes, each ID with its entry's topology. Counted
// before anything is copied, so that a huge answer costs one pass.
base::Result<PodAllocation> Collect(const V1__PodResources& pod, const PodQuery& q) {
  const std::vector<const V1__ContainerDevices*> entries = Entries(pod);
  size_t wanted = 0;
  size_t gpus = 0;
  for (const V1__ContainerDevices* cd : entries) {
    const std::string resource = Str(cd->resource_name);
    if (resource == kGpuResource) gpus += cd->n_device_ids;
    if (!q.resource.empty() && resource == q.resource) wanted += cd->n_device_ids;
  }
  auto too_many = [&](size_t n, const std::string& resource) {
    return Error(Code::kDecoding, "the kubelet's answer for " + Who(q) + " holds " + std::to_string(n) +
                                      " device IDs of resource " + resource + ", more than the " +
                                      std::to_string(kMaxDeviceIds) +
                                      " one pod can be given (kubelet::kMaxDeviceIds); check the device "
                                      "plugin that advertises " +
                                      resource + " and the pod's resources.limits");
  };
  if (wanted > kMaxDeviceIds) return too_many(wanted, What(q));
  if (gpus > kMaxDeviceIds) return too_many(gpus, kGpuResource);

  PodAllocation out;
  std::unordered_set<std::string_view> seen;
  for (const V1__ContainerDevices* cd : entries) {
    const std::string resource = Str(cd->resource_name);
    const bool gpu = resource == kGpuResource;
    const bool asked = !q.resource.empty() && resource == q.resource;
    if (!gpu && !asked) continue;
    std::vector<int64_t> nodes = Nodes(cd->topology);
    if (gpu) {
      out.gpu_numa_nodes.insert(out.gpu_numa_nodes.end(), nodes.begin(), nodes.end());
      for (size_t i = 0; i < cd->n_device_ids; ++i) out.gpus.push_back({Str(cd->device_ids[i]), nodes});
    }
    if (!asked) continue;
    for (size_t i = 0; i < cd->n_device_ids; ++i) {
      // The views point into the decoded message, which outlives `seen`.
      const std::string_view id = cd->device_ids[i] ? cd->device_ids[i] : "";
      if (auto bad = Malformed(id))
        return Error(Code::kDecoding, "the kubelet's answer for " + Who(q) + " holds " + bad->kind +
                                          " for resource " + What(q) + bad->detail +
                                          "; check the device plugin that advertises it");
      if (seen.insert(id).second) out.devices.push_back({std::string(id), nodes});
    }
  }
  std::sort(out.gpu_numa_nodes.begin(), out.gpu_numa_nodes.end());
  out.gpu_numa_nodes.erase(std::unique(out.gpu_numa_nodes.begin(), out.gpu_numa_nodes.end()),
                           out.gpu_numa_nodes.end());
  return out;
}

// "aliyun/erdma x2, nvidia.com/gpu x1" or "no devices": what the pod holds, in the order first named.
std::string Holdings(const V1__PodResources& pod) {
  std::vector<std::pair<std::string, size_t>> counts;
  std::unordered_map<std::string, size_t> at;  // resource -> its index in counts
  for (const V1__ContainerDevices* cd : Entries(pod)) {
    std::string r = Str(cd->resource_name);
    auto [it, added] = at.try_emplace(r, counts.size());
    if (added) counts.emplace_back(std::move(r), 0);
    counts[it->second].second += cd->n_device_ids;
  }
  if (counts.empty()) return "no devices";
  std::string s;
  for (size_t i = 0; i < counts.size(); ++i) {
    // A message, not a dump: a hostile answer may name thousands.
    if (i == 8) {
      s += " and " + std::to_string(counts.size() - i) + " more resources";
      break;
    }
    s += (s.empty() ? "" : ", ") + base::EscapeForDisplay(counts[i].first) + " x" +
         std::to_string(counts[i].second);
  }
  return s;
}

base::Result<PodAllocation> Check(const V1__PodResources& pod, const PodQuery& q) {
  ASSIGN_OR_RETURN(PodAllocation out, Collect(pod, q));
  if (!q.resource.empty() && out.devices.empty()) {
    return Error(Code::kDeviceNotFound, "the kubelet gave " + Who(q) + " no device of resource " + What(q) +
                                            "; it holds " + Holdings(pod));
  }
  return out;
}

bool GetNotServed(const GrpcReply& r) {
  if (r.status == static_cast<int>(GrpcCode::kUnimplemented)) return true;
  return r.status == static_cast<int>(GrpcCode::kUnknown) &&
         r.message.find("PodResources API Get method disabled") != std::string::npos;
}

// The kubelet's answer for a pod it does not know: UNKNOWN "pod NAME in namespace NS not found".
bool PodUnknown(const GrpcReply& r) {
  return r.status == static_cast<int>(GrpcCode::kNotFound) ||
         (r.status == static_cast<int>(GrpcCode::kUnknown) &&
          r.message.find("not found") != std::string::npos);
}

}  // namespace

std::string EncodeGetRequest(const PodQuery& q) {
  V1__GetPodResourcesRequest req = V1__GET_POD_RESOURCES_REQUEST__INIT;
  // protobuf-c's message fields are char*; pack only reads them.
  req.pod_name = const_cast<char*>(q.pod.c_str());
  req.pod_namespace = const_cast<char*>(q.ns.c_str());
  std::string out(v1__get_pod_resources_request__get_packed_size(&req), '\0');
  v1__get_pod_resources_request__pack(&req, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

std::string EncodeListRequest() { return {}; }  // an empty message is zero bytes

base::Result<PodAllocation> DecodeGetReply(const std::string& bytes, const PodQuery& q) {
  GetReply m(v1__get_pod_resources_response__unpack(nullptr, bytes.size(), Bytes(bytes)));
  if (!m)
    return Error(Code::kDecoding,
                 "the kubelet's Get reply for " + Who(q) + " is not a GetPodResourcesResponse");
  if (m->pod_resources == nullptr || Str(m->pod_resources->name) != q.pod ||
      Str(m->pod_resources->namespace_) != q.ns) {
    std::string got = m->pod_resources == nullptr
                          ? std::string("no pod")
                          : "pod " + base::EscapeForDisplay(Str(m->pod_resources->namespace_) + "/" +
                                                            Str(m->pod_resources->name));
    return Error(Code::kDecoding, "the kubelet's Get reply for " + Who(q) + " names " + got);
  }
  ASSIGN_OR_RETURN(PodAllocation out, Check(*m->pod_resources, q));
  out.method = "Get";
  return out;
}

base::Result<PodAllocation> DecodeListReply(const std::string& bytes, const PodQuery& q) {
  ListReply m(v1__list_pod_resources_response__unpack(nullptr, bytes.size(), Bytes(bytes)));
  if (!m) return Error(Code::kDecoding, "the kubelet's List reply is not a ListPodResourcesResponse");
  for (size_t i = 0; i < m->n_pod_resources; ++i) {
    const V1__PodResources* p = m->pod_resources[i];
    if (p == nullptr || Str(p->name) != q.pod || Str(p->namespace_) != q.ns) continue;
    ASSIGN_OR_RETURN(PodAllocation out, Check(*p, q));
    out.method = "List";
    return out;
  }
  return Error(Code::kTryAgainLater, "the kubelet does not list " + Who(q) + " (it lists " +
                                         std::to_string(m->n_pod_resources) + " pods)");
}

base::Status ListAnswers(const std::string& socket_path, std::chrono::milliseconds timeout) {
  const std::string context = "asking the kubelet (" + base::EscapeForDisplay(socket_path) + ") for its pods";
  auto r = UnaryCall(socket_path, kList, EncodeListRequest(), Clock::now() + timeout);
  if (!r.ok()) {
    Error e = std::move(r).error();
    if (e.sys_errno == ETIMEDOUT) e.msg += ", " + std::to_string(timeout.count()) + " ms";
    return std::move(e).WithContext(context);
  }
  if (r->status != 0)
    return Error(Code::kIo, "List failed with gRPC status " + std::to_string(r->status) + ": " +
                                base::EscapeForDisplay(r->message))
        .WithContext(context);
  ListReply m(v1__list_pod_resources_response__unpack(nullptr, r->body.size(), Bytes(r->body)));
  if (!m)
    return Error(Code::kDecoding, "its List reply is not a ListPodResourcesResponse").WithContext(context);
  return base::Ok();
}

base::Result<PodAllocation> PodDevices(const std::string& socket_path, const PodQuery& q,
                                       std::chrono::milliseconds timeout) {
  const Clock::time_point deadline = Clock::now() + timeout;
  const std::string context = "asking the kubelet (" + base::EscapeForDisplay(socket_path) + ") for the " +
                              (q.resource.empty() ? std::string("GPUs") : What(q) + " devices") + " of " +
                              Who(q);
  bool retried = false;
  auto call = [&](const char* method, const std::string& request) -> base::Result<GrpcReply> {
    for (;;) {
      auto r = UnaryCall(socket_path, method, request, deadline);
      if (!r.ok()) {
        Error e = std::move(r).error();
        if (e.sys_errno == ETIMEDOUT) e.msg += ", " + std::to_string(timeout.count()) + " ms for all calls";
        return std::move(e).WithContext(context);
      }
      if (r->status != static_cast<int>(GrpcCode::kResourceExhausted) || retried) return r;
      retried = true;
      std::this_thread::sleep_for(
          std::min(kRateLimitPause, std::chrono::milliseconds(base::MillisLeft(deadline))));
    }
  };
  auto failed = [&](const char* method, const GrpcReply& r) {
    if (r.status == static_cast<int>(GrpcCode::kDeadlineExceeded)) {
      return Error(Code::kTryAgainLater, std::string(method) + " did not finish within " +
                                             std::to_string(timeout.count()) +
                                             " ms: " + base::EscapeForDisplay(r.message))
          .WithContext(context);
    }
    bool again = r.status == static_cast<int>(GrpcCode::kResourceExhausted) ||
                 r.status == static_cast<int>(GrpcCode::kUnavailable);
    return Error(again ? Code::kTryAgainLater : Code::kIo, std::string(method) + " failed with gRPC status " +
                                                               std::to_string(r.status) + ": " +
                                                               base::EscapeForDisplay(r.message))
        .WithContext(context);
  };

  // The answer's decoding counts against the timeout as the calls do.
  auto decoded = [&](base::Result<PodAllocation> a, const char* method) -> base::Result<PodAllocation> {
    if (!a.ok()) return std::move(a).error().WithContext(context);
    if (Clock::now() > deadline)
      return Error(Code::kTryAgainLater, std::string(method) +
                                             " and the decoding of its answer took longer than " +
                                             std::to_string(timeout.count()) + " ms")
          .WithContext(context);
    return a;
  };

  ASSIGN_OR_RETURN(GrpcReply got, call(kGet, EncodeGetRequest(q)));
  if (got.status == 0) return decoded(DecodeGetReply(got.body, q), "Get");
  if (PodUnknown(got)) {
    return Error(Code::kTryAgainLater,
                 "the kubelet does not know " + Who(q) + ": " + base::EscapeForDisplay(got.message))
        .WithContext(context);
  }
  if (!GetNotServed(got)) return failed("Get", got);

  ASSIGN_OR_RETURN(GrpcReply listed, call(kList, EncodeListRequest()));
  if (listed.status != 0) return failed("List", listed);
  return decoded(DecodeListReply(listed.body, q), "List");
}

}  // namespace kubelet
