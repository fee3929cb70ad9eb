#include "cni/command/run.h"

#include "base/log.h"
#include "base/phase.h"
#include "cni/command/add.h"
#include "cni/command/check.h"
#include "cni/command/del.h"
#include "cni/command/gc_status.h"
#include "cni/command/group.h"
#include "cni/command/node_netns.h"
#include "cni/command/pod_request.h"
#include "cni/command/result.h"
#include "cni/core/context.h"
#include "cni/driver/registry.h"
#include "cni/state/record.h"
#include "conf/config.h"
#include "conf/node.h"
#include "conf/version.h"
#include "ipam/negotiate.h"
#include "netlink/rtnl_socket.h"

namespace cni {

using base::Code;
using base::Error;
using nlohmann::json;

namespace {

// The version to answer in when we could not (fully) parse the config.
std::string BestEffortVersion(const std::string& stdin_bytes) {
  // Top-level members only: nested garbage (conf::Parse refused it) stays cheap to read again.
  json j = json::parse(
      stdin_bytes, [](int depth, json::parse_event_t, json&) { return depth <= 1; }, false);
  if (j.is_object() && j.contains("cniVersion") && j["cniVersion"].is_string()) {
    std::string v = j["cniVersion"].get<std::string>();
    if (conf::IsSupportedVersion(v)) return v;
  }
  return conf::SupportedVersions().back();
}

int Fail(std::string& out, const std::string& version, const Error& e) {
  base::Log::Error("error " + std::to_string(static_cast<int>(e.code)) + ": " + e.msg +
                   (e.details.empty() ? "" : " (" + e.details + ")"));
  out += ErrorJson(version, e).dump() + "\n";
  return 1;
}

class RealBackend : public Backend {
 public:
  base::Result<std::unique_ptr<netlink::Kernel>> OpenHost() override {
    ASSIGN_OR_RETURN(auto ns, opener_.Node());
    return netlink::OpenRtnl(std::move(ns));
  }
  NetnsOpener& Opener() override { return opener_; }
  std::unique_ptr<ipam::Executor> Ipam(const std::vector<std::string>& cni_path) override {
    return std::make_unique<ipam::ExecExecutor>(cni_path);
  }

 private:
  // Every path it is given names a pod's netns: the node's own is refused.
  NodeNetnsOpener opener_{"CNI_NETNS"};
};

// The cniVersion each command needs at least, as the CNI spec gives it.
base::Status VersionGate(Command command, const std::string& version) {
  const char* least = command == Command::kCheck                               ? "0.4.0"
                      : command == Command::kGc || command == Command::kStatus ? "1.1.0"
                                                                               : "";
  if (!*least || conf::CompareVersions(version, least) >= 0) return base::Ok();
  return Error(Code::kIncompatibleVersion, std::string(CommandName(command)) + " needs cniVersion " + least +
                                               " or later; the config says " + version);
}

// What one run learns beyond its config, which stays as parsed.
struct Invocation {
  Env env;
  conf::NodePolicy node;
  /// DEL: the record its ADD wrote, locked until the run exits.
  std::optional<AttachmentRecord> record = std::nullopt;
  /// The config's logFile where the node file allows it, else "".
  std::string log_file = std::string();
  /// ADD: what the pod asked for beyond the config, and the kubelet's answer where WhatThePodAsked asked.
  std::optional<conf::PodRequests> requests = std::nullopt;
  std::optional<kubelet::PodAllocation> kubelet_answer = std::nullopt;
  std::string sysfs_root = "/sys", procfs_root = "/proc";
};

// The record's dataDir and name replace the config's (cni/state/record.h); what to log, "" when they agree.
base::Result<std::string> FindRecord(Invocation& run, conf::Config& keys) {
  base::phase::Begin("record");
  ASSIGN_OR_RETURN(run.record,
                   AttachmentRecord::Find(run.node.attachments_dir, run.env.container_id, run.env.ifname,
                                          static_cast<int>(keys.lock_timeout_ms)));
  const RecordPlace* place = run.record && run.record->place() ? &*run.record->place() : nullptr;
  if (!place || (place->data_dir == keys.data_dir && place->network == keys.name)) return std::string();
  std::string said = "DEL: the state is where ADD recorded it (" + run.record->path() + "): dataDir " +
                     place->data_dir + ", network " + place->network + "; the config says " + keys.data_dir +
                     ", " + keys.name;
  keys.data_dir = place->data_dir;
  keys.name = place->network;
  return said;
}

// The config's paths are the node file's to allow, checked before the log opens (docs/security.md).
base::Status StartLog(Invocation& run, const conf::Config& cfg, const std::string& relocated) {
  const Env& env = run.env;
  auto paths = conf::CheckNodePaths(cfg, run.node);
  const bool del = env.command == Command::kDel;
  if (!paths.ok() && (!del || !conf::PathAllowed(run.node.data_dirs, cfg.data_dir))) {
    Error e = paths.error();
    if (del)
      e.msg += run.record ? "; the state of this attachment is there (" + run.record->path() + ")"
                          : "; DEL cannot look there for the state of this attachment";
    return e;
  }
  if (conf::PathAllowed(run.node.log_files, cfg.log_file)) run.log_file = cfg.log_file;
  std::string tag = "net=" + cfg.name;
  if (!env.container_id.empty()) tag += " cid=" + env.container_id;
  if (!env.ifname.empty()) tag += " if=" + env.ifname;
  if (std::string pod = env.PodName(); !pod.empty()) tag += " pod=" + pod;
  base::Log::Configure(run.log_file, cfg.log_level, cfg.log_max_bytes);
  base::Log::SetTag(tag);
  if (!paths.ok()) base::Log::Error("DEL: " + paths.error().msg + "; logging to stderr only");
  if (!relocated.empty()) base::Log::Info(relocated);
  base::Log::Debug(std::string(CommandName(env.command)) + " netns=" + env.netns);
  for (const std::string& w : cfg.warnings) base::Log::Warn(std::string(CommandName(env.command)) + ": " + w);
  return base::Ok();
}

// DEL and GC log the keys of an edited config they ignore; without a log file, as errors, for stderr.
void LogIgnored(const Invocation& run, const conf::Config& cfg) {
  for (const std::string& w : cfg.del_warnings)
    base::Log::Write(run.log_file.empty() ? base::LogLevel::kError : base::LogLevel::kWarn,
                     std::string(CommandName(run.env.command)) + ": ignored: " + w);
}

// The command itself, against the node's kernel and the IPAM plugins.
int Dispatch(Invocation& run, const conf::Config& cfg, std::string& out, Backend& backend) {
  const std::string& version = cfg.cni_version;
  const Env& env = run.env;
  base::phase::Begin("lookup");
  auto host = backend.OpenHost();
  if (!host.ok()) return Fail(out, version, host.error());
  std::unique_ptr<ipam::Executor> exec = backend.Ipam(env.path);
  exec->SetTimeLimit(cfg.ipam_timeout_ms);
  ipam::NegotiatingExecutor ipam(*exec);
  InvocationCache cache;
  Context ctx{.cfg = cfg,
              .env = env,
              .host = **host,
              .netns = backend.Opener(),
              .ipam = ipam,
              .sysfs_root = run.sysfs_root,
              .procfs_root = run.procfs_root,
              .lock_wait_ms = static_cast<int>(cfg.lock_timeout_ms),
              .node_policy = &run.node,
              .cache = &cache,
              .requests = run.requests ? &*run.requests : nullptr};
  backend.Prepare(ctx);
  auto done = [&](const base::Status& s) { return s.ok() ? 0 : Fail(out, version, s.error()); };

  switch (env.command) {
    case Command::kAdd: {
      // A resource's or pool's device is chosen once, at ADD: the state records it.
      const bool chosen = cfg.device.by == conf::DeviceSelector::By::kResource ||
                          cfg.device.by == conf::DeviceSelector::By::kPool;
      // Recorded before the first step, so that whatever ADD leaves, its DEL finds.
      const RecordPlace place{cfg.data_dir, cfg.name};
      auto adding = AttachmentRecord::Begin(run.node.attachments_dir, env.container_id, env.ifname, place,
                                            ctx.lock_wait_ms);
      if (!adding.ok()) return Fail(out, version, adding.error());
      auto result = chosen ? AddChosen(ctx, std::move(run.kubelet_answer)) : Add(ctx);
      // No record where no state is left for a DEL (nor where dataDir cannot be looked at).
      if (!PlaceHoldsState(place, env.container_id, env.ifname, false)) adding->Remove();
      if (!result.ok()) return Fail(out, version, result.error());
      base::phase::Begin("result");
      out += result->dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
      return 0;
    }
    case Command::kDel: {
      if (auto s = Del(ctx); !s.ok()) return done(s);
      if (run.record) run.record->Remove();
      return 0;
    }
    case Command::kCheck: return done(Check(ctx));
    case Command::kGc: return done(Gc(ctx));
    case Command::kStatus: return done(StatusCmd(ctx));
    case Command::kVersion: break;
  }
  return 0;
}

// Every command: the environment, the config, the version gate, the node policy and the log; then the exits
// that need no kernel (a pass-through ADD, DEL without a state); then the command.
int RunCommand(const Getenv& getenv, const std::string& stdin_bytes, std::string& out, Backend& backend) {
  base::phase::Begin("config");
  auto env = ParseEnv(getenv);
  if (!env.ok()) return Fail(out, BestEffortVersion(stdin_bytes), env.error());
  const Command command = env->command;
  if (command == Command::kVersion) {
    out +=
        json{{"cniVersion", BestEffortVersion(stdin_bytes)}, {"supportedVersions", conf::SupportedVersions()}}
            .dump() +
        "\n";
    return 0;
  }
  // DEL reads the keys that find its journal first, and the rest only when it has an attachment to undo.
  const bool lenient = command == Command::kDel || command == Command::kGc || command == Command::kStatus;
  auto cfg = command == Command::kDel ? conf::ParseDelKeys(Modes(), stdin_bytes)
                                      : conf::Parse(Modes(), stdin_bytes, lenient);
  if (!cfg.ok()) return Fail(out, BestEffortVersion(stdin_bytes), cfg.error());
  const std::string version = cfg->cni_version;
  if (auto s = VersionGate(command, version); !s.ok()) return Fail(out, version, s.error());

  base::phase::Begin("node-file");
  auto node = backend.NodePolicy(getenv);
  if (!node.ok()) return Fail(out, version, node.error());
  Invocation run{.env = std::move(*env), .node = std::move(*node)};
#ifdef ERDMA_CNI_FAULT_HOOKS
  // Test builds only: sysfs and procfs trees laid out by a test, never a key of any config.
  if (const char* root = getenv("ERDMA_CNI_TEST_SYSFS"); root && *root) run.sysfs_root = root;
  if (const char* root = getenv("ERDMA_CNI_TEST_PROCFS"); root && *root) run.procfs_root = root;
#endif
  std::string relocated;
  if (command == Command::kDel && !run.env.container_id.empty()) {
    auto said = FindRecord(run, *cfg);
    if (!said.ok()) return Fail(out, version, said.error());
    relocated = std::move(*said);
  }
  if (auto s = StartLog(run, *cfg, relocated); !s.ok()) return Fail(out, version, s.error());
  LogIgnored(run, *cfg);

  if (command == Command::kAdd) {
    base::phase::Begin("pod-request");
    auto asked = WhatThePodAsked(*cfg, run.env, &run.node);
    if (!asked.ok()) return Fail(out, version, asked.error());
    if (!asked->asked) {
      base::Log::Info("ADD passed through: " + asked->why);
      base::phase::Begin("result");
      out += PassThroughResult(std::move(*cfg)).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
      return 0;
    }
    run.kubelet_answer = std::move(asked->kubelet);
    auto requests = conf::ReadPodRequests(*cfg, run.env.args);
    if (!requests.ok()) return Fail(out, version, requests.error());
    run.requests = std::move(*requests);
  }
  if (command != Command::kDel) return Dispatch(run, *cfg, out, backend);
  if (!run.env.container_id.empty()) {
    base::phase::Begin("state-look");
    if (auto done = DelWithoutState(*cfg, run.env, static_cast<int>(cfg->lock_timeout_ms))) {
      if (!done->ok()) return Fail(out, version, done->error());
      if (run.record) run.record->Remove();
      return 0;
    }
  }
  base::phase::Begin("config");
  auto whole = conf::ParseDelRest(std::move(*cfg));
  if (!whole.ok()) return Fail(out, version, whole.error());
  LogIgnored(run, *whole);
  return Dispatch(run, *whole, out, backend);
}

}  // namespace

int Run(const Getenv& getenv, const std::string& stdin_bytes, std::string& out) {
  RealBackend backend;
  return RunWith(getenv, stdin_bytes, out, backend);
}

int RunWith(const Getenv& getenv, const std::string& stdin_bytes, std::string& out, Backend& backend) {
  try {
    return RunCommand(getenv, stdin_bytes, out, backend);
  } catch (const std::exception& e) {
    // Parsing never throws by design; this is the net under a bug.
    return Fail(out, BestEffortVersion(stdin_bytes),
                Error(Code::kInternal, std::string("internal error: ") + e.what()));
  }
}

}  // namespace cni
