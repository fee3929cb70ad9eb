#include "nri/messages.h"

#include <memory>
#include <utility>

#include "nri/api.pb-c.h"
#include "nri/ttrpc.pb-c.h"

namespace nri {

using base::Code;
using base::Error;

namespace {

// protobuf-c's names, shortened.
using PodPb = Nri__Pkg__Api__V1alpha1__PodSandbox;
using ContainerPb = Nri__Pkg__Api__V1alpha1__Container;
using DevicePb = Nri__Pkg__Api__V1alpha1__LinuxDevice;
using RlimitPb = Nri__Pkg__Api__V1alpha1__POSIXRlimit;
using RulePb = Nri__Pkg__Api__V1alpha1__LinuxDeviceCgroup;
using MountPb = Nri__Pkg__Api__V1alpha1__Mount;
using KeyValuePb = Nri__Pkg__Api__V1alpha1__KeyValue;
using AdjustPb = Nri__Pkg__Api__V1alpha1__ContainerAdjustment;
using LinuxAdjustPb = Nri__Pkg__Api__V1alpha1__LinuxContainerAdjustment;
using ResourcesPb = Nri__Pkg__Api__V1alpha1__LinuxResources;
using Int64Pb = Nri__Pkg__Api__V1alpha1__OptionalInt64;
using UInt32Pb = Nri__Pkg__Api__V1alpha1__OptionalUInt32;
using FileModePb = Nri__Pkg__Api__V1alpha1__OptionalFileMode;

// An unpacked message, freed by protobuf-c.
template <typename T>
using Unpacked = std::unique_ptr<T, void (*)(T*)>;

template <typename T, T* (*Unpack)(ProtobufCAllocator*, size_t, const uint8_t*),
          void (*Free)(T*, ProtobufCAllocator*)>
base::Result<Unpacked<T>> Decode(std::string_view bytes, const char* what) {
  Unpacked<T> m(Unpack(nullptr, bytes.size(), reinterpret_cast<const uint8_t*>(bytes.data())),
                [](T* p) { Free(p, nullptr); });
  if (!m)
    return Error(Code::kDecoding,
                 std::string("NRI: not a ") + what + " (" + std::to_string(bytes.size()) + " bytes)");
  return m;
}

template <typename T>
std::string Pack(const T* m, size_t (*size)(const T*), size_t (*pack)(const T*, uint8_t*)) {
  std::string out(size(m), '\0');
  pack(m, reinterpret_cast<uint8_t*>(out.data()));
  return out;
}

std::string Str(const char* s) { return s ? s : ""; }
// protobuf-c's message fields are char*; pack only reads them.
char* Chars(const std::string& s) { return const_cast<char*>(s.c_str()); }

Pod PodOf(const PodPb* p) {
  Pod out;
  if (p == nullptr) return out;
  out.id = Str(p->id);
  out.name = Str(p->name);
  out.uid = Str(p->uid);
  out.ns = Str(p->namespace_);
  for (size_t i = 0; i < p->n_annotations; ++i)
    if (p->annotations[i]) out.annotations[Str(p->annotations[i]->key)] = Str(p->annotations[i]->value);
  return out;
}

Device DeviceOf(const DevicePb& d) {
  Device out{Str(d.path), Str(d.type), d.major, d.minor, std::nullopt, std::nullopt, std::nullopt};
  if (d.file_mode) out.file_mode = d.file_mode->value;
  if (d.uid) out.uid = d.uid->value;
  if (d.gid) out.gid = d.gid->value;
  return out;
}

Rlimit RlimitOf(const RlimitPb& r) { return {Str(r.type), r.hard, r.soft}; }

Container ContainerOf(const ContainerPb* c) {
  Container out;
  if (c == nullptr) return out;
  out.id = Str(c->id);
  out.pod_sandbox_id = Str(c->pod_sandbox_id);
  out.name = Str(c->name);
  for (size_t i = 0; i < c->n_env; ++i) out.env.push_back(Str(c->env[i]));
  if (c->linux_part)
    for (size_t i = 0; i < c->linux_part->n_devices; ++i)
      if (c->linux_part->devices[i]) out.devices.push_back(DeviceOf(*c->linux_part->devices[i]));
  for (size_t i = 0; i < c->n_rlimits; ++i)
    if (c->rlimits[i]) out.rlimits.push_back(RlimitOf(*c->rlimits[i]));
  return out;
}

// The protobuf-c side of an Adjustment: every struct it points to lives here, as long as the packing.
struct AdjustmentPb {
  explicit AdjustmentPb(const Adjustment& a) {
    env.reserve(a.env.size());
    for (const auto& [k, v] : a.env) {
      env.push_back(NRI__PKG__API__V1ALPHA1__KEY_VALUE__INIT);
      env.back().key = Chars(k);
      env.back().value = Chars(v);
    }
    mounts.reserve(a.mounts.size());
    options.reserve(a.mounts.size());
    for (const MountSpec& m : a.mounts) {
      mounts.push_back(NRI__PKG__API__V1ALPHA1__MOUNT__INIT);
      mounts.back().destination = Chars(m.destination);
      mounts.back().type = Chars(m.type);
      mounts.back().source = Chars(m.source);
      options.emplace_back();
      for (const std::string& o : m.options) options.back().push_back(Chars(o));
      mounts.back().n_options = options.back().size();
      mounts.back().options = options.back().data();
    }
    devices.reserve(a.devices.size());
    ids.reserve(a.devices.size() * 2);
    modes.reserve(a.devices.size());
    for (const Device& d : a.devices) {
      devices.push_back(NRI__PKG__API__V1ALPHA1__LINUX_DEVICE__INIT);
      DevicePb& pb = devices.back();
      pb.path = Chars(d.path);
      pb.type = Chars(d.type);
      pb.major = d.major;
      pb.minor = d.minor;
      if (d.file_mode) {
        modes.push_back(NRI__PKG__API__V1ALPHA1__OPTIONAL_FILE_MODE__INIT);
        modes.back().value = *d.file_mode;
        pb.file_mode = &modes.back();
      }
      for (auto [field, value] : {std::pair{&pb.uid, d.uid}, std::pair{&pb.gid, d.gid}}) {
        if (!value) continue;
        ids.push_back(NRI__PKG__API__V1ALPHA1__OPTIONAL_UINT32__INIT);
        ids.back().value = *value;
        *field = &ids.back();
      }
    }
    rules.reserve(a.device_rules.size());
    numbers.reserve(a.device_rules.size() * 2);
    for (const DeviceRule& r : a.device_rules) {
      rules.push_back(NRI__PKG__API__V1ALPHA1__LINUX_DEVICE_CGROUP__INIT);
      RulePb& pb = rules.back();
      pb.allow = r.allow;
      pb.type = Chars(r.type);
      pb.access = Chars(r.access);
      for (auto [field, value] : {std::pair{&pb.major, r.major}, std::pair{&pb.minor, r.minor}}) {
        if (!value) continue;
        numbers.push_back(NRI__PKG__API__V1ALPHA1__OPTIONAL_INT64__INIT);
        numbers.back().value = *value;
        *field = &numbers.back();
      }
    }
    rlimits.reserve(a.rlimits.size());
    for (const Rlimit& r : a.rlimits) {
      rlimits.push_back(NRI__PKG__API__V1ALPHA1__POSIXRLIMIT__INIT);
      rlimits.back().type = Chars(r.type);
      rlimits.back().hard = r.hard;
      rlimits.back().soft = r.soft;
    }
    // The pointer arrays, once the vectors above no longer move.
    for (auto& e : env) env_p.push_back(&e);
    for (auto& m : mounts) mounts_p.push_back(&m);
    for (auto& d : devices) devices_p.push_back(&d);
    for (auto& r : rules) rules_p.push_back(&r);
    for (auto& r : rlimits) rlimits_p.push_back(&r);
    adjust.n_env = env_p.size();
    adjust.env = env_p.data();
    adjust.n_mounts = mounts_p.size();
    adjust.mounts = mounts_p.data();
    adjust.n_rlimits = rlimits_p.size();
    adjust.rlimits = rlimits_p.data();
    if (!devices.empty() || !rules.empty()) {
      linux_part.n_devices = devices_p.size();
      linux_part.devices = devices_p.data();
      if (!rules.empty()) {
        resources.n_devices = rules_p.size();
        resources.devices = rules_p.data();
        linux_part.resources = &resources;
      }
      adjust.linux_part = &linux_part;
    }
  }
  AdjustPb adjust = NRI__PKG__API__V1ALPHA1__CONTAINER_ADJUSTMENT__INIT;
  LinuxAdjustPb linux_part = NRI__PKG__API__V1ALPHA1__LINUX_CONTAINER_ADJUSTMENT__INIT;
  ResourcesPb resources = NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__INIT;
  std::vector<KeyValuePb> env;
  std::vector<MountPb> mounts;
  std::vector<std::vector<char*>> options;
  std::vector<DevicePb> devices;
  std::vector<FileModePb> modes;
  std::vector<UInt32Pb> ids;
  std::vector<RulePb> rules;
  std::vector<Int64Pb> numbers;
  std::vector<RlimitPb> rlimits;
  std::vector<KeyValuePb*> env_p;
  std::vector<MountPb*> mounts_p;
  std::vector<DevicePb*> devices_p;
  std::vector<RulePb*> rules_p;
  std::vector<RlimitPb*> rlimits_p;
};

}  // namespace

base::Result<Request> DecodeRequest(std::string_view bytes) {
  ASSIGN_OR_RETURN(auto m, (Decode<Ttrpc__Request, ttrpc__request__unpack, ttrpc__request__free_unpacked>(
                               bytes, "ttrpc request")));
  Request r{Str(m->service), Str(m->method), std::string(), m->timeout_nano};
  r.payload.assign(reinterpret_cast<const char*>(m->payload.data), m->payload.len);
  return r;
}

std::string EncodeRequest(const Request& r) {
  Ttrpc__Request m = TTRPC__REQUEST__INIT;
  m.service = Chars(r.service);
  m.method = Chars(r.method);
  m.payload.data = reinterpret_cast<uint8_t*>(const_cast<char*>(r.payload.data()));
  m.payload.len = r.payload.size();
  m.timeout_nano = r.timeout_nano;
  return Pack(&m, ttrpc__request__get_packed_size, ttrpc__request__pack);
}

base::Result<Response> DecodeResponse(std::string_view bytes) {
  ASSIGN_OR_RETURN(auto m, (Decode<Ttrpc__Response, ttrpc__response__unpack, ttrpc__response__free_unpacked>(
                               bytes, "ttrpc response")));
  Response r;
  if (m->status) {
    r.code = m->status->code;
    r.message = Str(m->status->message);
  }
  r.payload.assign(reinterpret_cast<const char*>(m->payload.data), m->payload.len);
  return r;
}

std::string EncodeResponse(const Response& r) {
  Ttrpc__Response m = TTRPC__RESPONSE__INIT;
  Ttrpc__Status status = TTRPC__STATUS__INIT;
  if (r.code != 0 || !r.message.empty()) {
    status.code = r.code;
    status.message = Chars(r.message);
    m.status = &status;
  }
  m.payload.data = reinterpret_cast<uint8_t*>(const_cast<char*>(r.payload.data()));
  m.payload.len = r.payload.size();
  return Pack(&m, ttrpc__response__get_packed_size, ttrpc__response__pack);
}

std::string EncodeRegisterPlugin(const std::string& name, const std::string& index) {
  Nri__Pkg__Api__V1alpha1__RegisterPluginRequest m = NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT;
  m.plugin_name = Chars(name);
  m.plugin_idx = Chars(index);
  return Pack(&m, nri__pkg__api__v1alpha1__register_plugin_request__get_packed_size,
              nri__pkg__api__v1alpha1__register_plugin_request__pack);
}

base::Result<Configure> DecodeConfigure(std::string_view bytes) {
  ASSIGN_OR_RETURN(
      auto m,
      (Decode<Nri__Pkg__Api__V1alpha1__ConfigureRequest, nri__pkg__api__v1alpha1__configure_request__unpack,
              nri__pkg__api__v1alpha1__configure_request__free_unpacked>(bytes, "ConfigureRequest")));
  return Configure{Str(m->config), Str(m->runtime_name), Str(m->runtime_version), m->registration_timeout,
                   m->request_timeout};
}

std::string EncodeConfigureResponse(uint32_t events) {
  Nri__Pkg__Api__V1alpha1__ConfigureResponse m = NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;
  m.events = static_cast<int32_t>(events);
  return Pack(&m, nri__pkg__api__v1alpha1__configure_response__get_packed_size,
              nri__pkg__api__v1alpha1__configure_response__pack);
}

base::Result<CreateContainer> DecodeCreateContainer(std::string_view bytes) {
  ASSIGN_OR_RETURN(auto m, (Decode<Nri__Pkg__Api__V1alpha1__CreateContainerRequest,
                                   nri__pkg__api__v1alpha1__create_container_request__unpack,
                                   nri__pkg__api__v1alpha1__create_container_request__free_unpacked>(
                               bytes, "CreateContainerRequest")));
  return CreateContainer{PodOf(m->pod), ContainerOf(m->container)};
}

std::string EncodeCreateContainerResponse(const Adjustment& a) {
  Nri__Pkg__Api__V1alpha1__CreateContainerResponse m =
      NRI__PKG__API__V1ALPHA1__CREATE_CONTAINER_RESPONSE__INIT;
  if (a.empty())
    return Pack(&m, nri__pkg__api__v1alpha1__create_container_response__get_packed_size,
                nri__pkg__api__v1alpha1__create_container_response__pack);
  auto pb = std::make_unique<AdjustmentPb>(a);
  m.adjust = &pb->adjust;
  return Pack(&m, nri__pkg__api__v1alpha1__create_container_response__get_packed_size,
              nri__pkg__api__v1alpha1__create_container_response__pack);
}

base::Result<Adjustment> DecodeCreateContainerResponse(std::string_view bytes) {
  ASSIGN_OR_RETURN(auto m, (Decode<Nri__Pkg__Api__V1alpha1__CreateContainerResponse,
                                   nri__pkg__api__v1alpha1__create_container_response__unpack,
                                   nri__pkg__api__v1alpha1__create_container_response__free_unpacked>(
                               bytes, "CreateContainerResponse")));
  Adjustment a;
  const AdjustPb* adj = m->adjust;
  if (adj == nullptr) return a;
  for (size_t i = 0; i < adj->n_env; ++i)
    if (adj->env[i]) a.env.emplace_back(Str(adj->env[i]->key), Str(adj->env[i]->value));
  for (size_t i = 0; i < adj->n_mounts; ++i) {
    if (!adj->mounts[i]) continue;
    const MountPb& pb = *adj->mounts[i];
    MountSpec mount{Str(pb.destination), Str(pb.type), Str(pb.source), {}};
    for (size_t k = 0; k < pb.n_options; ++k) mount.options.push_back(Str(pb.options[k]));
    a.mounts.push_back(std::move(mount));
  }
  if (adj->linux_part) {
    for (size_t i = 0; i < adj->linux_part->n_devices; ++i)
      if (adj->linux_part->devices[i]) a.devices.push_back(DeviceOf(*adj->linux_part->devices[i]));
    if (adj->linux_part->resources)
      for (size_t i = 0; i < adj->linux_part->resources->n_devices; ++i) {
        const RulePb* r = adj->linux_part->resources->devices[i];
        if (!r) continue;
        DeviceRule rule{static_cast<bool>(r->allow), Str(r->type), std::nullopt, std::nullopt,
                        Str(r->access)};
        if (r->major) rule.major = r->major->value;
        if (r->minor) rule.minor = r->minor->value;
        a.device_rules.push_back(std::move(rule));
      }
  }
  for (size_t i = 0; i < adj->n_rlimits; ++i)
    if (adj->rlimits[i]) a.rlimits.push_back(RlimitOf(*adj->rlimits[i]));
  return a;
}

base::Result<Synchronize> DecodeSynchronize(std::string_view bytes) {
  ASSIGN_OR_RETURN(auto m, (Decode<Nri__Pkg__Api__V1alpha1__SynchronizeRequest,
                                   nri__pkg__api__v1alpha1__synchronize_request__unpack,
                                   nri__pkg__api__v1alpha1__synchronize_request__free_unpacked>(
                               bytes, "SynchronizeRequest")));
  Synchronize s;
  for (size_t i = 0; i < m->n_pods; ++i) s.pods.push_back(PodOf(m->pods[i]));
  for (size_t i = 0; i < m->n_containers; ++i) s.containers.push_back(ContainerOf(m->containers[i]));
  s.more = m->more;
  return s;
}

std::string EncodeSynchronizeResponse(bool more) {
  Nri__Pkg__Api__V1alpha1__SynchronizeResponse m = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
  m.more = more;
  return Pack(&m, nri__pkg__api__v1alpha1__synchronize_response__get_packed_size,
              nri__pkg__api__v1alpha1__synchronize_response__pack);
}

base::Result<StateChange> DecodeStateChange(std::string_view bytes) {
  ASSIGN_OR_RETURN(
      auto m,
      (Decode<Nri__Pkg__Api__V1alpha1__StateChangeEvent, nri__pkg__api__v1alpha1__state_change_event__unpack,
              nri__pkg__api__v1alpha1__state_change_event__free_unpacked>(bytes, "StateChangeEvent")));
  StateChange s;
  s.event = static_cast<int>(m->event);
  s.pod = PodOf(m->pod);
  if (m->container) s.container = ContainerOf(m->container);
  return s;
}

}  // namespace nri
