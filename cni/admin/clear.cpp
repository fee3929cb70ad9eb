#include "cni/admin/clear.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <utility>

#include "base/escape.h"
#include "base/file.h"
#include "cni/admin/clear_holders.h"
#include "cni/admin/data_dirs.h"
#include "cni/command/del.h"
#include "cni/command/group.h"
#include "cni/command/node_netns.h"
#include "cni/command/stale.h"
#include "cni/core/steps.h"
#include "cni/journal/journal.h"
#include "cni/state/record.h"
#include "cni/state/state.h"
#include "conf/names.h"
#include "conf/version.h"
#include "ipam/negotiate.h"

namespace cni {

using nlohmann::json;

namespace {

constexpr const char* kClearUsage =
    "usage: erdma-cni clear --container ID [--network NAME] [--if IFNAME] [--data-dir DIR]\n"
    "                       [--cni-path DIRS] [--skip-ipam] [--force] [--dry-run]\n"
    "  --container ID    the pod sandbox (CNI_CONTAINERID) whose attachments, claims and shares go\n"
    "  --network NAME    only this network's (default: every network)\n"
    "  --if IFNAME       only this interface (CNI_IFNAME, or a group's; default: every one)\n"
    "  --data-dir DIR    the one dataDir to look in (default: every dataDir of the node file)\n"
    "  --cni-path DIRS   where the IPAM plugins are, ':' between directories (default /opt/cni/bin)\n"
    "  --skip-ipam       an IPAM plugin whose DEL fails is reported and skipped: its lease stays\n"
    "  --force           clear although processes still run in the pod's netns\n"
    "  --dry-run         show what would be cleared, change nothing\n";

std::string Show(const std::string& s) { return base::EscapeForDisplay(s); }

// The IPAM plugins as DEL runs them; with --skip-ipam a DEL that fails is noted and answered as done.
class ClearIpam : public ipam::Executor {
 public:
  ClearIpam(ipam::Executor& inner, bool skip) : inner_(inner), skip_(skip) {}
  void RunFor(const std::optional<ipam::Attachment>& who) override { inner_.RunFor(who); }
  base::Result<json> Run(const std::string& type, const std::string& command,
                         const std::string& config) override {
    auto r = inner_.Run(type, command, config);
    if (r.ok() || command != "DEL") return r;
    failed_.push_back("IPAM plugin " + type + ": its DEL failed (" + r.error().msg + ")");
    if (!skip_) return r;
    return json();
  }
  std::vector<std::string> TakeFailures() { return std::exchange(failed_, {}); }

 private:
  ipam::Executor& inner_;
  bool skip_;
  std::vector<std::string> failed_;
};

// The pids of the tasks in the netns `st` recorded, when it still exists as that netns (`*exists`).
std::vector<std::string> TasksIn(const AttachmentState& st, bool* exists) {
  *exists = false;
  struct stat ns {};
  if (st.netns.empty() || ::stat(st.netns.c_str(), &ns) != 0) return {};
  if (st.netns_id && (st.netns_id->dev != ns.st_dev || st.netns_id->ino != ns.st_ino)) return {};
  if (st.netns_id && st.netns_id->cookie != 0)
    if (auto cookie = netlink::NetnsCookieAt(st.netns); cookie && *cookie != st.netns_id->cookie) return {};
  *exists = true;
  std::vector<std::string> tasks;
  auto pids = base::ListKernelDirs("/proc");
  if (!pids.ok()) return {"(unknown: /proc cannot be listed)"};
  for (const std::string& pid : *pids) {
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    struct stat task {};
    if (::stat(("/proc/" + pid + "/ns/net").c_str(), &task) != 0) continue;
    if (task.st_dev != ns.st_dev || task.st_ino != ns.st_ino) continue;
    std::ifstream comm("/proc/" + pid + "/comm");
    std::string name;
    std::getline(comm, name);
    tasks.push_back(pid + " " + Show(name));
  }
  return tasks;
}

// What DEL of `st` gave back, for the admin.
std::string WhatCameBack(const AttachmentState& st) {
  if (st.group) return "every interface of the group";
  if (const auto* child = FindStep<StepChild>(st.steps))
    return child->spec.kind + " child " + Show(child->spec.name) + " deleted, its parent " +
           Show(child->parent) + " untouched";
  if (st.origin.name.empty()) return "nothing of the node was moved";
  return Show(st.origin.name) + " is back on the node";
}

struct Found {
  std::string data_dir;
  std::string path;
  AttachmentState st;
};

class Clearer {
 public:
  Clearer(const ClearOptions& opts, std::ostream& out) : opts_(opts), out_(out) {}

  // Every state of the container in `data_dir`, groups first (their DEL takes their members).
  void Collect(const std::string& data_dir) {
    if (auto safe = base::CheckPrivateDir(data_dir); !safe.ok()) {
      out_ << "dataDir " << Show(data_dir) << " not read: " << Show(safe.error().msg) << "\n";
      failed_ = true;
      return;
    }
    auto collect = [&](const StateStore& store, const std::string& path) {
      if (!opts_.network.empty() && store.Network() != opts_.network) return false;
      auto loaded = store.Load(path);
      if (!loaded.ok()) {
        if (path.find("@" + opts_.container_id + "@") != std::string::npos) {
          out_ << "state " << Show(path) << " cannot be read: " << Show(loaded.error().msg)
               << "; left alone (a runtime's DEL of it works from the device claim)\n";
          failed_ = true;
        }
        return false;
      }
      if (!*loaded) return false;
      AttachmentState& st = **loaded;
      if (st.container_id != opts_.container_id) return false;
      if (!opts_.if_name.empty() && st.if_name != opts_.if_name && st.member_of != opts_.if_name)
        return false;
      found_.push_back({data_dir, path, std::move(st)});
      return false;
    };
    ForEachState(data_dir, collect, [](const base::Error&) {});
    std::stable_partition(found_.begin(), found_.end(), [](const Found& f) { return f.st.group; });
  }

  void ClearAll(netlink::Kernel& host, NetnsOpener& opener, ClearIpam& ipam) {
    for (Found& f : found_) {
      if (!base::PathExists(f.path)) continue;  // a member its group's DEL took
      ClearOne(f, host, opener, ipam);
    }
  }

  bool found_any() const { return !found_.empty(); }
  bool failed() const { return failed_; }
  void Fail() { failed_ = true; }

 private:
  void ClearOne(Found& f, netlink::Kernel& host, NetnsOpener& opener, ClearIpam& ipam) {
    AttachmentState& st = f.st;
    out_ << (st.group ? "group " : "attachment ") << Show(st.network) << "/" << Show(st.if_name)
         << " of container " << Show(st.container_id) << " (" << Show(f.path) << ")"
         << (st.complete ? "" : ", its ADD did not complete") << "\n";
    bool netns_exists = false;
    const std::vector<std::string> tasks = TasksIn(st, &netns_exists);
    if (!netns_exists)
      out_ << "  its pod netns " << Show(st.netns.empty() ? "(none recorded)" : st.netns) << " is gone\n";
    if (!tasks.empty()) {
      std::string list;
      for (size_t i = 0; i < tasks.size() && i < 5; ++i) list += (i ? ", " : "") + tasks[i];
      if (tasks.size() > 5) list += ", ...";
      out_ << "  its pod netns " << Show(st.netns) << " still exists and has tasks (" << list << ")\n";
      if (!opts_.force) {
        out_ << "  refused: the pod may be running; stop it (crictl stopp), or give --force to clear it "
                "under the running pod\n";
        failed_ = true;
        return;
      }
    }
    if (opts_.dry_run) {
      out_ << "  would run the DEL of its journal (" << st.steps.size() << " steps) and remove its state\n";
      return;
    }
    conf::Config cfg;
    cfg.cni_version = conf::SupportedVersions().back();
    cfg.name = st.network;
    cfg.data_dir = f.data_dir;
    Env env;
    env.command = Command::kDel;
    env.container_id = st.container_id;
    env.ifname = st.if_name;
    // A netns that is gone, or whose path names another by now: DEL works on the node alone.
    const std::string recorded_netns = st.netns;
    if (!netns_exists) st.netns.clear();
    env.netns = st.netns;
    Context ctx{cfg, env, host, opener, ipam};
    StateStore store(f.data_dir, st.network);
    ipam.RunFor(ipam::Attachment{st.container_id, st.if_name, recorded_netns});
    base::Status s = DeleteAttachment(ctx, store, f.path, st);
    ipam.RunFor(std::nullopt);
    const std::vector<std::string> ipam_failures = ipam.TakeFailures();
    if (!s.ok()) {
      out_ << "  could not clear: " << Show(s.error().msg) << "\n";
      if (!ipam_failures.empty() && !opts_.skip_ipam)
        out_ << "  the IPAM plugin's DEL fails: give --skip-ipam to clear the attachment anyway (its address "
                "then stays leased in the IPAM plugin until released by hand)\n";
      failed_ = true;
      return;
    }
    if (st.member_of) ForgetGroupIfEmpty(store, st.container_id, *st.member_of);
    out_ << "  cleared: the DEL of its journal ran (" << WhatCameBack(st)
         << "); its state, claim and share are gone\n";
    for (const std::string& why : ipam_failures)
      out_ << "  not put back: " << Show(why)
           << ": skipped (--skip-ipam); its address stays leased there until "
              "released by hand\n";
  }

  const ClearOptions& opts_;
  std::ostream& out_;
  std::vector<Found> found_;
  bool failed_ = false;
};

// The options, or the message for a bad one ("" = fine).
std::string ParseArgs(const std::vector<std::string>& args, ClearOptions& o, bool* help) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      *help = true;
    } else if (a == "--skip-ipam") {
      o.skip_ipam = true;
    } else if (a == "--force") {
      o.force = true;
    } else if (a == "--dry-run") {
      o.dry_run = true;
    } else if (a == "--container" || a == "--network" || a == "--if" || a == "--data-dir" ||
               a == "--cni-path") {
      if (i + 1 >= args.size()) return a + " needs a value";
      const std::string& v = args[++i];
      if (a == "--container") {
        if (!conf::IsValidContainerId(v, conf::kMaxLegacyContainerIdBytes))
          return "--container " + Show(v) + " is not a container ID (letters, digits, '_', '.', '-')";
        o.container_id = v;
      } else if (a == "--network") {
        if (!conf::IsPlainFileName(v) || conf::IsReservedDataDirName(v))
          return "--network " + Show(v) + " is not a network name";
        o.network = v;
      } else if (a == "--if") {
        if (!conf::IsValidIfName(v)) return "--if " + Show(v) + " is not an interface name";
        o.if_name = v;
      } else if (a == "--data-dir") {
        if (!conf::IsSafeAbsolutePath(v)) return "--data-dir " + Show(v) + " is not an absolute path";
        o.data_dir = v;
      } else {
        o.cni_path.clear();
        for (std::string_view dir : conf::Split(v, ':'))
          if (!dir.empty()) o.cni_path.emplace_back(dir);
      }
    } else {
      return "unknown option " + Show(a);
    }
  }
  if (!*help && o.container_id.empty()) return "--container is required";
  return "";
}

}  // namespace

int RunClear(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  ClearOptions opts;
  bool help = false;
  auto fail = [&err](const std::string& msg, int rc) {
    err << "erdma-cni clear: " << msg;
    return rc;
  };
  if (std::string bad = ParseArgs(args, opts, &help); !bad.empty()) return fail(bad + "; " + kClearUsage, 2);
  if (help) {
    out << kClearUsage;
    return 0;
  }
  auto dirs = FindAdminDataDirs(opts.data_dir, opts.container_id);
  if (!dirs.ok()) return fail(dirs.error().msg + "\n", 2);
  for (const std::string& d : dirs->unsearched)
    out << "dataDirs entry " << Show(d) << " allows any directory below it: not searched (give --data-dir)\n";
  auto host = OpenNodeKernel();
  if (!host.ok()) return fail(host.error().msg + "\n", 1);
  std::unique_ptr<NetnsOpener> opener = MakeNodeNetnsOpener();
  // The plugins an IPAM plugin delegates to are found on CNI_PATH too.
  ::setenv("CNI_PATH", conf::Join(opts.cni_path, ":").c_str(), 1);
  ipam::ExecExecutor exec(opts.cni_path);
  ipam::NegotiatingExecutor negotiating(exec);
  ClearIpam ipam(negotiating, opts.skip_ipam);

  Clearer clearer(opts, out);
  for (const std::string& d : dirs->dirs) clearer.Collect(d);
  clearer.ClearAll(**host, *opener, ipam);
  // The records of what was cleared go too; one whose state is left stays for its DEL.
  if (!dirs->attachments_dir.empty())
    for (const FoundRecord& r : RecordsOf(dirs->attachments_dir, opts.container_id))
      DropRecord(dirs->attachments_dir, opts.container_id, r.if_name, r.place);
  bool holders = false;
  for (const std::string& d : dirs->dirs)
    if (ClearStrayHolders(d, opts, **host, out, &holders).ok() == false) clearer.Fail();
  if (!clearer.found_any() && !holders) {
    out << "nothing names container " << Show(opts.container_id) << " under "
        << Show(conf::Join(dirs->dirs, ", ")) << ": nothing to clear\n";
    return 1;
  }
  return clearer.failed() ? 1 : 0;
}

}  // namespace cni
