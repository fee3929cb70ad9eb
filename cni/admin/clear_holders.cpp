#include "cni/admin/clear_holders.h"

#include "base/escape.h"
#include "base/file.h"
#include "base/json_parse.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"

namespace cni {

namespace {

constexpr size_t kMaxShareBytes = 64 << 10;
constexpr int kLockWaitMs = 10000;

enum class Owned { kOwn, kNone, kUnknown };

// Whether `owner`'s state path holds the state of the attachment it names.
Owned StateOf(const std::string& data_dir, const ClaimOwner& owner) {
  StateStore store(data_dir, owner.network);
  const std::string name = owner.state_path.substr(owner.state_path.rfind('/') + 1);
  // A path into another dataDir is not read through this one.
  if (owner.state_path != store.Dir() + "/" + name)
    return base::PathExists(owner.state_path) ? Owned::kUnknown : Owned::kNone;
  auto st = store.Load(owner.state_path);
  if (!st.ok()) return Owned::kUnknown;
  if (!*st) return Owned::kNone;
  return (*st)->container_id == owner.container_id && (*st)->if_name == owner.if_name ? Owned::kOwn
                                                                                      : Owned::kNone;
}

// The share files of `parent` that name `owner`, removed under the parent's claim lock.
base::Status RemoveShare(const std::string& data_dir, const std::string& parent, const ClaimOwner& owner) {
  const std::string devices = data_dir + "/devices", children = data_dir + "/children";
  ASSIGN_OR_RETURN(DeviceClaim lock, DeviceClaim::Lock(devices, parent, kLockWaitMs));
  const std::string dir = children + "/" + parent;
  base::Status status = base::Ok();
  auto files = base::ListFiles(dir);
  for (const std::string& f : files.ok() ? *files : std::vector<std::string>()) {
    auto text = base::ReadFileNoFollow(dir + "/" + f, kMaxShareBytes);
    if (!text.ok()) continue;
    auto j = base::ParseJson(*text, "share " + dir + "/" + f);
    if (!j.ok() || !j->is_object()) continue;
    if (j->value("containerID", "") != owner.container_id || j->value("network", "") != owner.network ||
        j->value("ifName", "") != owner.if_name || j->value("state", "") != owner.state_path)
      continue;
    if (base::Status s = base::RemoveFile(dir + "/" + f); !s.ok()) status = s;
  }
  (void)LiveShares(children, parent);  // and the directory, once empty
  if (!lock.Owner()) lock.Remove();
  return status;
}

}  // namespace

base::Status ClearStrayHolders(const std::string& data_dir, const ClearOptions& opts, netlink::Kernel& host,
                               std::ostream& out, bool* found) {
  std::vector<base::Error> errors;
  for (const HoldRecord& h : ListHolds(data_dir + "/devices", data_dir + "/children")) {
    const ClaimOwner& o = h.owner;
    if (o.container_id != opts.container_id || (!opts.network.empty() && o.network != opts.network) ||
        (!opts.if_name.empty() && o.if_name != opts.if_name))
      continue;
    const Owned owned = StateOf(data_dir, o);
    if (owned == Owned::kOwn) continue;  // the attachment's own, which its DEL removes
    *found = true;
    const std::string what =
        std::string(h.share ? "share of " : "claim of ") + base::EscapeForDisplay(h.device) +
        " naming container " + base::EscapeForDisplay(o.container_id) + " (network " +
        base::EscapeForDisplay(o.network) + ", interface " + base::EscapeForDisplay(o.if_name) + ")";
    if (owned == Owned::kUnknown) {
      out << what << ": left alone: its state " << base::EscapeForDisplay(o.state_path)
          << " cannot be read through this dataDir, so it cannot be told whether it is the attachment's\n";
      errors.push_back(base::Error(base::Code::kState, what + " left alone"));
      continue;
    }
    out << what << ", which has no state of its own (" << base::EscapeForDisplay(o.state_path) << ")\n";
    if (opts.dry_run) {
      out << "  would be removed\n";
      continue;
    }
    base::Status s = base::Ok();
    if (h.share) {
      s = RemoveShare(data_dir, h.device, o);
    } else {
      auto lock = DeviceClaim::Lock(data_dir + "/devices", h.device, kLockWaitMs);
      if (!lock.ok()) {
        s = std::move(lock).error();
      } else if (auto now = lock->Owner(); now && *now == o) {
        lock->Remove();
      } else {
        out << "  changed while we waited for its lock: left as it is now\n";
        if (!now) lock->Remove();
        continue;
      }
    }
    if (!s.ok()) {
      out << "  could not be removed: " << base::EscapeForDisplay(s.error().msg) << "\n";
      errors.push_back(std::move(s).error());
      continue;
    }
    out << "  removed\n";
    if (!h.share) {
      auto link = host.FindLink(h.device);
      if (link.ok() && !*link)
        out << "  not put back: " << base::EscapeForDisplay(h.device)
            << " is not on the node, and no journal says where it went; find it with `ip -all netns exec ip "
               "link`\n";
    }
  }
  if (!errors.empty()) return errors.front();
  return base::Ok();
}

}  // namespace cni
