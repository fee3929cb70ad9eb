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
  // Only top-level members matter; keeping nothing deeper keeps 1 MiB of nested
  // garbage (already refused by conf::Parse) cheap to read again.
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

const char* CommandName(Command c) {
  switch (c) {
    case Command::kAdd: return "ADD";
    case Command::kDel: return "DEL";
    case Command::kCheck: return "CHECK";
    case Command::kVersion: return "VERSION";
    case Command::kGc: return "GC";
    case Command::kStatus: return "STATUS";
  }
  return "?";
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
  // Every path it is given names a pod's netns: the node's own is refused,
  // so that no command acts on node objects as a pod's.
  NodeNetnsOpener opener_{"CNI_NETNS"};
};

int RunCommand(const Getenv& getenv, const std::string& stdin_bytes, std::string& out, Backend& backend);

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

namespace {
int RunCommand(const Getenv& getenv, const std::string& stdin_bytes, std::string& out, Backend& backend) {
  base::phase::Begin("config");
  auto env = ParseEnv(getenv);
  if (!env.ok()) return Fail(out, BestEffortVersion(stdin_bytes), env.error());

  if (env->command == Command::kVersion) {
    out +=
        json{{"cniVersion", BestEffortVersion(stdin_bytes)}, {"supportedVersions", conf::SupportedVersions()}}
            .dump() +
        "\n";
    return 0;
  }

  const bool lenient =
      env->command == Command::kDel || env->command == Command::kGc || env->command == Command::kStatus;
  // DEL reads the keys that find its journal first, and the rest only when it has an attachment to undo.
  auto cfg =
      env->command == Command::kDel ? conf::ParseDelKeys(stdin_bytes) : conf::Parse(stdin_bytes, lenient);
  if (!cfg.ok()) return Fail(out, BestEffortVersion(stdin_bytes), cfg.error());
  const std::string& version = cfg->cni_version;

  if ((env->command == Command::kGc || env->command == Command::kStatus) &&
      conf::CompareVersions(version, "1.1.0") < 0)
    return Fail(out, version,
                Error(Code::kIncompatibleVersion, std::string(CommandName(env->command)) +
                                                      " needs cniVersion 1.1.0 or later; the config says " +
                                                      version));

  // Paths that reach outside the attachment are the node admin's to allow, whoever wrote the config (a
  // NetworkAttachmentDefinition may be a namespace user's): checked before the log file is even opened.
  base::phase::Begin("node-file");
  auto node = backend.NodePolicy(getenv);
  if (!node.ok()) return Fail(out, version, node.error());
  // DEL finds the state where its ADD recorded it, whatever the config says by now (cni/state/record.h), and
  // holds the attachment's lock until it exits.
  std::optional<AttachmentRecord> record;
  std::string recorded_elsewhere;
  if (env->command == Command::kDel && !env->container_id.empty()) {
    base::phase::Begin("record");
    auto found = AttachmentRecord::Find(node->attachments_dir, env->container_id, env->ifname,
                                        static_cast<int>(cfg->lock_timeout_ms));
    if (!found.ok()) return Fail(out, version, found.error());
    record = std::move(*found);
    if (record && record->place() &&
        (record->place()->data_dir != cfg->data_dir || record->place()->network != cfg->name)) {
      recorded_elsewhere = "DEL: the state is where ADD recorded it (" + record->path() + "): dataDir " +
                           record->place()->data_dir + ", network " + record->place()->network +
                           "; the config says " + cfg->data_dir + ", " + cfg->name;
      cfg->data_dir = record->place()->data_dir;
      cfg->name = record->place()->network;
    }
  }
  std::string tag = "net=" + cfg->name;
  if (!env->container_id.empty()) tag += " cid=" + env->container_id;
  if (!env->ifname.empty()) tag += " if=" + env->ifname;
  if (std::string pod = env->PodName(); !pod.empty()) tag += " pod=" + pod;
  auto paths = conf::CheckNodePaths(*cfg, *node);
  // DEL may not fail for a logFile edited since ADD: it is left unopened, the refusal goes to stderr. A
  // dataDir the node does not allow fails every command: DEL cannot prove there is nothing of this attachment
  // there.
  const bool data_dir_allowed = conf::PathAllowed(node->data_dirs, cfg->data_dir);
  if (!paths.ok() && (env->command != Command::kDel || !data_dir_allowed)) {
    Error e = paths.error();
    if (env->command == Command::kDel)
      e.msg += record ? "; the state of this attachment is there (" + record->path() + ")"
                      : "; DEL cannot look there for the state of this attachment";
    return Fail(out, version, e);
  }
  if (!cfg->log_file.empty() && !conf::PathAllowed(node->log_files, cfg->log_file)) cfg->log_file.clear();
  base::Log::Configure(cfg->log_file, cfg->log_level, cfg->log_max_bytes);
  base::Log::SetTag(tag);
  if (!paths.ok()) base::Log::Error("DEL: " + paths.error().msg + "; logging to stderr only");
  if (!recorded_elsewhere.empty()) base::Log::Info(recorded_elsewhere);
  base::Log::Debug(std::string(CommandName(env->command)) + " netns=" + env->netns);
  // DEL and GC take the keys they use; the rest of a config edited since ADD is logged and left alone.
  auto warn_ignored = [&] {
    // Without a log file, stderr (which takes errors only) is where the runtime can show them.
    for (const std::string& w : cfg->del_warnings)
      base::Log::Write(cfg->log_file.empty() ? base::LogLevel::kError : base::LogLevel::kWarn,
                       std::string(CommandName(env->command)) + ": ignored: " + w);
    cfg->del_warnings.clear();
  };
  warn_ignored();
  for (const std::string& w : cfg->warnings)
    base::Log::Warn(std::string(CommandName(env->command)) + ": " + w);

  // A pod that asked for nothing passes through its ADD before anything of the node is opened (pod_request.h;
  // CHECK decides where it finds no state); DEL without a state of ours needs no kernel.
  std::optional<kubelet::PodAllocation> kubelet_answer;
  if (env->command == Command::kAdd) {
    base::phase::Begin("pod-request");
    auto asked = WhatThePodAsked(*cfg, *env, &*node);
    if (!asked.ok()) return Fail(out, version, asked.error());
    if (!asked->asked) {
      base::Log::Info("ADD passed through: " + asked->why);
      base::phase::Begin("result");
      out += PassThroughResult(std::move(*cfg)).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
      return 0;
    }
    kubelet_answer = std::move(asked->kubelet);
  }
  if (env->command == Command::kAdd)
    if (auto s = conf::ApplyRuntimeRequests(*cfg, env->args); !s.ok()) return Fail(out, version, s.error());
  if (env->command == Command::kDel && !env->container_id.empty()) {
    base::phase::Begin("state-look");
    if (auto done = DelWithoutState(*cfg, *env, static_cast<int>(cfg->lock_timeout_ms))) {
      if (!done->ok()) return Fail(out, version, done->error());
      if (record) record->Remove();
      return 0;
    }
  }
  if (cfg->rest_pending) {
    base::phase::Begin("config");
    if (auto s = conf::ParseDelRest(*cfg); !s.ok()) return Fail(out, version, s.error());
    warn_ignored();
  }

  base::phase::Begin("lookup");
  auto host = backend.OpenHost();
  if (!host.ok()) return Fail(out, version, host.error());
  std::unique_ptr<ipam::Executor> exec = backend.Ipam(env->path);
  exec->SetTimeLimit(cfg->ipam_timeout_ms);
  ipam::NegotiatingExecutor ipam(*exec);
  Context ctx{*cfg, *env, **host, backend.Opener(), ipam};
  InvocationCache cache;
  ctx.cache = &cache;
  ctx.lock_wait_ms = static_cast<int>(cfg->lock_timeout_ms);
  ctx.node_policy = &*node;
#ifdef ERDMA_CNI_FAULT_HOOKS
  // Test builds only: sysfs and procfs trees laid out by a test, never a key of any config.
  if (const char* root = getenv("ERDMA_CNI_TEST_SYSFS"); root && *root) ctx.sysfs_root = root;
  if (const char* root = getenv("ERDMA_CNI_TEST_PROCFS"); root && *root) ctx.procfs_root = root;
#endif
  backend.Prepare(ctx);

  switch (env->command) {
    case Command::kAdd: {
      // The device the kubelet gave the pod, or a pool's, is chosen once, at
      // ADD: the state records it for DEL and CHECK.
      const bool chosen = cfg->device.by == conf::DeviceSelector::By::kResource ||
                          cfg->device.by == conf::DeviceSelector::By::kPool;
      // Recorded before the first step, so that whatever ADD leaves, its DEL finds.
      const RecordPlace place{cfg->data_dir, cfg->name};
      auto adding = AttachmentRecord::Begin(node->attachments_dir, env->container_id, env->ifname, place,
                                            ctx.lock_wait_ms);
      if (!adding.ok()) return Fail(out, version, adding.error());
      auto result = chosen ? AddChosen(ctx, std::move(kubelet_answer)) : Add(ctx);
      // Nothing left for a DEL to find (refused, rolled back whole, or a plan with no step): no record. Where
      // dataDir cannot be looked at, ADD could not have written either.
      if (!PlaceHoldsState(place, env->container_id, env->ifname, false)) adding->Remove();
      if (!result.ok()) return Fail(out, version, result.error());
      base::phase::Begin("result");
      out += result->dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
      return 0;
    }
    case Command::kDel: {
      auto s = Del(ctx);
      if (!s.ok()) return Fail(out, version, s.error());
      if (record) record->Remove();
      return 0;
    }
    case Command::kCheck: {
      if (conf::CompareVersions(version, "0.4.0") < 0)
        return Fail(out, version,
                    Error(Code::kIncompatibleVersion,
                          "CHECK needs cniVersion 0.4.0 or later; the config says " + version));
      auto s = Check(ctx);
      return s.ok() ? 0 : Fail(out, version, s.error());
    }
    case Command::kGc: {
      auto s = Gc(ctx);
      return s.ok() ? 0 : Fail(out, version, s.error());
    }
    case Command::kStatus: {
      auto s = StatusCmd(ctx);
      return s.ok() ? 0 : Fail(out, version, s.error());
    }
    case Command::kVersion: break;
  }
  return 0;
}

}  // namespace

}  // namespace cni
