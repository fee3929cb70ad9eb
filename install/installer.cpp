#include "install/installer.h"

#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "conf/config.h"
#include "conf/node.h"
#include "install/conflist.h"
#include "install/entry.h"
#include "install/files.h"
#include "kubelet/pod_devices.h"

#ifndef ERDMA_CNI_VERSION
#define ERDMA_CNI_VERSION "unknown"
#endif

namespace install {
namespace {

using base::Code;
using base::Error;

constexpr size_t kMaxConflistBytes = 1 << 20;
constexpr size_t kMaxBinaryBytes = 256u << 20;
constexpr int kLockWaitMs = 10000;
constexpr const char* kBinaryName = "erdma-cni";
constexpr const char* kPackagedPlugin = "/opt/cni/bin/erdma-cni";
constexpr const char* kBackupSuffix = ".erdma-cni.bak";

volatile sig_atomic_t g_stop = 0;

// `r`, its error prefixed with `what` (Error::WithContext).
template <class T>
base::Result<T> About(base::Result<T> r, const std::string& what) {
  if (!r.ok()) return std::move(r).error().WithContext(what);
  return r;
}

void OnStop(int) { g_stop = 1; }

// The conflist to edit; "" when there is none and `must_exist` is false (uninstall).
base::Result<std::string> ConflistPath(const Options& o, bool must_exist) {
  std::string name = o.conflist;
  if (name == "auto") {
    auto first = FirstNetworkConfig(o.conf_dir);
    if (!first.ok()) {
      if (first.error().sys_errno == ENOENT && !must_exist) return std::string();
      return first.error();
    }
    name = *first;
    if (!name.ends_with(".conflist"))
      return Error(Code::kInvalidConfig,
                   o.conf_dir + "/" + name +
                       " is the config the runtime loads first, and it is not a .conflist: nothing can be "
                       "chained into it. Convert it into a .conflist, or pass --conflist NAME");
  }
  std::string path = o.conf_dir + "/" + name;
  auto st = Stamp(path);
  if (!st.ok()) {
    if (st.error().sys_errno == ENOENT && !must_exist) return std::string();
    if (st.error().sys_errno == ENOENT)
      return Error(Code::kIo,
                   path +
                       " does not exist: the primary plugin (e.g. Terway) writes it; run again once "
                       "it has, or pass --conflist NAME",
                   "", ENOENT);
    return st.error();
  }
  if (S_ISLNK(st->mode))
    return Error(Code::kIo, path +
                                " is a symbolic link; erdma-cni-install replaces files by rename and would "
                                "replace the link. Point --conf-dir/--conflist at the file itself");
  if (!S_ISREG(st->mode)) return Error(Code::kIo, path + " is not a regular file");
  return path;
}

base::Result<std::string> SourcePath(const Options& o) {
  if (!o.source.empty()) return o.source;
  ASSIGN_OR_RETURN(std::string dir, SelfDir());
  std::string beside = dir + "/" + kBinaryName;
  if (::access(beside.c_str(), F_OK) == 0) return beside;
  if (::access(kPackagedPlugin, F_OK) == 0) return std::string(kPackagedPlugin);
  return Error(Code::kIo, std::string("no plugin binary to copy: neither ") + beside + " nor " +
                              kPackagedPlugin + " exists; pass --source PATH");
}

base::Result<Json> LoadEntry(const Options& o) {
  if (o.entry_file.empty()) return DefaultEntry();
  ASSIGN_OR_RETURN(std::string text, ReadFile(o.entry_file, kMaxConflistBytes, /*follow=*/true));
  return About(ParseEntry(text), "--entry " + o.entry_file);
}

// The binary: what install would do with it.
struct BinaryPlan {
  std::string source;
  std::string dest;
  std::string content;  ///< the source's bytes, when a copy is needed
  bool copy = false;
  std::string summary;
};

base::Result<BinaryPlan> PlanBinary(const Options& o) {
  BinaryPlan p;
  ASSIGN_OR_RETURN(p.source, SourcePath(o));
  p.dest = o.bin_dir + "/" + kBinaryName;
  struct stat bin_dir {};
  if (::stat(o.bin_dir.c_str(), &bin_dir) != 0 || !S_ISDIR(bin_dir.st_mode))
    return Error(Code::kIo,
                 "--bin-dir " + o.bin_dir + " is not a directory: mount the node's CNI bin dir there");
  struct stat src {
  }, dst{};
  const bool have_dst = ::stat(p.dest.c_str(), &dst) == 0;
  if (have_dst && ::stat(p.source.c_str(), &src) == 0 && src.st_dev == dst.st_dev &&
      src.st_ino == dst.st_ino) {
    p.summary = p.dest + " is the source itself (" + p.source + ")";
    return p;
  }
  ASSIGN_OR_RETURN(std::string content,
                   About(ReadFile(p.source, kMaxBinaryBytes, /*follow=*/true), "--source"));
  if (!content.starts_with("\177ELF"))
    return Error(Code::kInvalidConfig, "--source " + p.source + " is not an executable (no ELF header)");
  // A dest that is a link, missing, unreadable or different is replaced.
  auto current = ReadFile(p.dest, kMaxBinaryBytes, /*follow=*/false);
  if (current.ok() && *current == content && have_dst && (dst.st_mode & 07777) == 0755) {
    p.summary = p.dest + " up to date";
    return p;
  }
  p.copy = true;
  p.content = std::move(content);
  p.summary =
      current.ok() ? "replaced " + p.dest + " with " + p.source : "copied " + p.source + " to " + p.dest;
  return p;
}

struct ConflistPlan {
  std::string path;
  std::string original;
  FileStamp stamp;
  Edit edit;
  std::vector<std::string> warnings;
  conf::NodePolicy node;  ///< what the entry's dataDir and logFile are checked against
  /// Set when the entry asks the kubelet and the kubelet does not answer: `edit` then takes the entry out.
  std::optional<Error> kubelet_down;
};

// The node file as the plugin reads it, unless --node-config names one.
base::Result<conf::NodePolicy> LoadNode(const Options& o) {
  if (o.node_config.empty()) return conf::LoadNodePolicy(std::getenv(conf::kNodeConfigEnv));
  return About(conf::LoadNodePolicy(o.node_config.c_str()), "--node-config " + o.node_config);
}

// What --node-file puts in place: its text, parsed as the plugin will, and whether the node file lacks it.
struct NodeFilePlan {
  std::string dest;  ///< where the plugin reads the node file
  std::string content;
  conf::NodePolicy policy;
  bool write = false;
};

base::Result<std::optional<NodeFilePlan>> PlanNodeFile(const Options& o) {
  if (o.node_file.empty()) return std::optional<NodeFilePlan>();
  NodeFilePlan p;
  const char* env = std::getenv(conf::kNodeConfigEnv);
  p.dest = !o.node_config.empty() ? o.node_config : env && *env ? env : conf::kNodeConfigPath;
  // A ConfigMap's file is a symlink into the volume's current version: followed.
  ASSIGN_OR_RETURN(p.content,
                   About(ReadFile(o.node_file, conf::kMaxNodeConfigBytes, /*follow=*/true), "--node-file"));
  ASSIGN_OR_RETURN(p.policy, About(conf::ParseNodePolicy(p.content, p.dest),
                                   "--node-file " + o.node_file + ", nothing written"));
  // What the plugin accepts: a regular file of root's that no one else may write.
  struct stat st {};
  auto current = ReadFile(p.dest, conf::kMaxNodeConfigBytes, /*follow=*/false);
  p.write = !current.ok() || *current != p.content || ::lstat(p.dest.c_str(), &st) != 0 || st.st_uid != 0 ||
            st.st_gid != 0 || (st.st_mode & 07777) != 0644;
  return std::optional<NodeFilePlan>(std::move(p));
}

// `node`: the policy --node-file puts in place, else the node file is read.
base::Result<ConflistPlan> PlanConflistInstall(const Options& o, const conf::NodePolicy* node) {
  ConflistPlan p;
  ASSIGN_OR_RETURN(p.node, node ? base::Result<conf::NodePolicy>(*node) : LoadNode(o));
  ASSIGN_OR_RETURN(Json entry, LoadEntry(o));
  ASSIGN_OR_RETURN(p.path, ConflistPath(o, /*must_exist=*/true));
  ASSIGN_OR_RETURN(p.stamp, Stamp(p.path));
  ASSIGN_OR_RETURN(p.original, ReadFile(p.path, kMaxConflistBytes, /*follow=*/false));
  ASSIGN_OR_RETURN(p.edit, About(PlanInstall(p.original, entry, o.placement), p.path));
  ASSIGN_OR_RETURN(p.warnings, About(CheckEntry(entry, o.modes, p.edit.doc["cniVersion"].get<std::string>(),
                                                p.edit.doc["name"].get<std::string>(), p.node),
                                     o.entry_file.empty() ? p.path : o.entry_file));
  // With device.resource every ADD asks the kubelet: while it does not answer, the entry stays out of the
  // conflist (pods start without erdma-cni) until an install finds it answering.
  if (conf::AsksTheKubelet(entry)) {
    if (auto s = kubelet::ListAnswers(p.node.pod_resources_socket, kubelet::kTimeLimit); !s.ok()) {
      ASSIGN_OR_RETURN(p.edit, About(PlanUninstall(p.original), p.path));
      p.kubelet_down = Error(
          Code::kTryAgainLater,
          "the entry's device.resource makes every pod's ADD ask the kubelet, and it does not answer: " +
              s.error().msg + ". The entry is left out of " + p.path +
              " until it does (pods start without erdma-cni meanwhile). Start the kubelet, or set " +
              "podResourcesSocket in the node file (" + p.node.source + ") to its socket");
    }
  }
  return p;
}

// Writes the backup, then the conflist; both keep the conflist's mode and owner.
base::Status ApplyConflist(const ConflistPlan& p) {
  const FileStamp& s = p.stamp;
  // Checked before the backup too, so a lost race changes nothing at all.
  auto now = Stamp(p.path);
  if (!now.ok() || !now->SameVersion(s))
    return Error(Code::kTryAgainLater,
                 p.path + " changed while it was being edited (another writer); run again");
  RETURN_IF_ERROR(ReplaceFile(p.path + kBackupSuffix, p.original, s.mode, s.uid, s.gid));
  RETURN_IF_ERROR(ReplaceFile(p.path, p.edit.text, s.mode, s.uid, s.gid, &s));
  ASSIGN_OR_RETURN(std::string back, ReadFile(p.path, kMaxConflistBytes, /*follow=*/false));
  if (back != p.edit.text)
    return Error(Code::kIo, p.path +
                                " reads back different from what was written: another writer changed it "
                                "just now; run again");
  return base::Ok();
}

void PrintError(std::ostream& err, const Error& e) {
  err << "erdma-cni-install: " << e.msg;
  if (!e.details.empty()) err << " (" << e.details << ")";
  err << "\n";
}

int ExitFor(const base::Status& s, std::ostream& err) {
  if (!s.ok()) PrintError(err, s.error());
  return s.ok() ? kExitOk : kExitFailed;
}

base::Result<std::optional<DirLock>> LockUnlessDryRun(const Options& o) {
  if (o.dry_run) return std::optional<DirLock>();
  ASSIGN_OR_RETURN(DirLock lock, DirLock::Acquire(o.conf_dir, kLockWaitMs));
  return std::optional<DirLock>(std::move(lock));
}

// What the conflist edit did; with --dry-run, what it would do and the new text.
void ReportEdit(const Options& o, const ConflistPlan& p, std::ostream& out) {
  if (o.dry_run) {
    out << p.path << ": " << (p.edit.changed ? "would have " : "") << p.edit.summary << "\n";
    if (p.edit.changed) out << p.edit.text << (p.edit.text.ends_with('\n') ? "" : "\n");
    return;
  }
  out << p.path << ": " << p.edit.summary
      << (p.edit.changed ? "; the previous file is " + p.path + kBackupSuffix : "") << "\n";
}

// One install. `quiet`: say nothing when nothing changed (the --every rounds).
base::Status InstallOnce(const Options& o, bool quiet, std::ostream& out, std::ostream& err) {
  ASSIGN_OR_RETURN(std::optional<DirLock> lock, LockUnlessDryRun(o));
  ASSIGN_OR_RETURN(std::optional<NodeFilePlan> node, PlanNodeFile(o));
  ASSIGN_OR_RETURN(BinaryPlan bin, PlanBinary(o));
  ASSIGN_OR_RETURN(ConflistPlan conf, PlanConflistInstall(o, node ? &node->policy : nullptr));
  if (!quiet || bin.copy || conf.edit.changed)
    for (const std::string& w : conf.warnings) err << "erdma-cni-install: warning: " << w << "\n";
  const char* would = o.dry_run ? "would have " : "";
  // The node file, then the binary, before the entry that makes the runtime run it.
  if (node && node->write && !o.dry_run) RETURN_IF_ERROR(ReplaceFile(node->dest, node->content, 0644, 0, 0));
  if (node && (!quiet || node->write))
    out << (node->write ? would : "") << node->dest << (node->write ? " written from " : " holds ")
        << o.node_file << "\n";
  if (bin.copy && !o.dry_run)
    RETURN_IF_ERROR(ReplaceFile(bin.dest, bin.content, 0755, ::geteuid(), ::getegid()));
  if (conf.edit.changed && !o.dry_run) RETURN_IF_ERROR(ApplyConflist(conf));
  if (!quiet || bin.copy) out << (bin.copy ? would : "") << bin.summary << "\n";
  if (!quiet || conf.edit.changed) ReportEdit(o, conf, out);
  if (conf.kubelet_down) return *conf.kubelet_down;
  return base::Ok();
}

int Install(const Options& o, std::ostream& out, std::ostream& err) {
  if (!o.every_seconds) return ExitFor(InstallOnce(o, false, out, err), err);
  // PID 1 in a container gets no default signal actions: handle SIGTERM so
  // the pod stops at once. No SA_RESTART: the signal cuts the sleep short.
  struct sigaction sa {};
  sa.sa_handler = OnStop;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGTERM, &sa, nullptr);
  ::sigaction(SIGINT, &sa, nullptr);
  bool quiet = false;
  std::string last_error;
  while (!g_stop) {
    auto s = InstallOnce(o, quiet, out, err);
    out.flush();
    if (s.ok()) {
      quiet = true;
      last_error.clear();
    } else if (s.error().msg != last_error) {  // the same failure once, not every round
      PrintError(err, s.error());
      last_error = s.error().msg;
      quiet = false;
    }
    err.flush();
    timespec left{static_cast<time_t>(o.every_seconds), 0};
    while (!g_stop && ::nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  out << "erdma-cni-install: stopping\n";
  return kExitOk;
}

int Uninstall(const Options& o, std::ostream& out, std::ostream& err) {
  auto run = [&]() -> base::Status {
    ASSIGN_OR_RETURN(std::optional<DirLock> lock, LockUnlessDryRun(o));
    ASSIGN_OR_RETURN(std::string path, ConflistPath(o, /*must_exist=*/false));
    if (path.empty()) {
      out << (o.conflist == "auto" ? o.conf_dir + " has no network config"
                                   : o.conf_dir + "/" + o.conflist + " does not exist")
          << ": no erdma-cni entry to remove\n";
    } else {
      ConflistPlan p;
      p.path = path;
      ASSIGN_OR_RETURN(p.stamp, Stamp(p.path));
      ASSIGN_OR_RETURN(p.original, ReadFile(p.path, kMaxConflistBytes, /*follow=*/false));
      ASSIGN_OR_RETURN(p.edit, About(PlanUninstall(p.original), p.path));
      // The entry goes first: the runtime stops running erdma-cni before its binary is gone.
      if (p.edit.changed && !o.dry_run) RETURN_IF_ERROR(ApplyConflist(p));
      ReportEdit(o, p, out);
    }
    if (o.remove_binary) {
      const std::string dest = o.bin_dir + "/" + kBinaryName;
      const bool present = ::access(dest.c_str(), F_OK) == 0;
      if (present && !o.dry_run && ::unlink(dest.c_str()) != 0)
        return Error(Code::kIo, "remove " + dest + ": " + std::strerror(errno), "", errno);
      out << (present ? (o.dry_run ? "would have removed " : "removed ") + dest : dest + " is not there")
          << "\n";
    }
    return base::Ok();
  };
  return ExitFor(run(), err);
}

int Check(const Options& o, std::ostream& out, std::ostream& err) {
  bool as_asked = true;
  auto say = [&](bool differs, const std::string& what) {
    as_asked = as_asked && !differs;
    out << (differs ? "differs: " : "ok: ") << what << "\n";
  };
  auto run = [&]() -> base::Status {
    ASSIGN_OR_RETURN(BinaryPlan bin, PlanBinary(o));
    say(bin.copy, bin.copy ? bin.dest + " is not " + bin.source + " (install would copy it)" : bin.summary);
    ASSIGN_OR_RETURN(std::optional<NodeFilePlan> node, PlanNodeFile(o));
    if (node)
      say(node->write, node->write ? node->dest + " does not hold " + o.node_file +
                                         " as root's 0644 file (install would write it)"
                                   : node->dest + " holds " + o.node_file);
    ASSIGN_OR_RETURN(ConflistPlan conf, PlanConflistInstall(o, node ? &node->policy : nullptr));
    // The entry the runtime runs now: one the plugin would refuse fails the check.
    if (auto installed = ParseObject(conf.original); installed.ok())
      RETURN_IF_ERROR(About(CheckInstalledEntry(*installed, o.modes, conf.node), conf.path));
    if (conf.kubelet_down) return *conf.kubelet_down;
    say(conf.edit.changed,
        conf.path + ": " + (conf.edit.changed ? "install would have " : "") + conf.edit.summary);
    for (const std::string& w : conf.warnings) err << "erdma-cni-install: warning: " << w << "\n";
    return base::Ok();
  };
  const int rc = ExitFor(run(), err);
  return as_asked ? rc : kExitFailed;
}

}  // namespace

int Run(const Options& o, std::ostream& out, std::ostream& err) {
  switch (o.command) {
    case Command::kInstall: return Install(o, out, err);
    case Command::kUninstall: return Uninstall(o, out, err);
    case Command::kCheck: return Check(o, out, err);
    case Command::kHelp: out << Usage(); return kExitOk;
    case Command::kVersion: out << "erdma-cni-install " << ERDMA_CNI_VERSION << "\n"; return kExitOk;
  }
  return kExitUsage;
}

}  // namespace install
