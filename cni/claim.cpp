#include "cni/claim.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

namespace cni {

using nlohmann::json;

namespace {

constexpr size_t kMaxClaimBytes = 64 << 10;

std::optional<ClaimOwner> ParseOwner(const std::string& text) {
  if (text.empty()) return std::nullopt;
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  ClaimOwner o;
  auto get = [&](const char* k) {
    auto it = j.find(k);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  o.network = get("network");
  o.container_id = get("containerID");
  o.if_name = get("ifName");
  o.state_path = get("state");
  o.device = get("device");
  o.mac = get("mac");
  o.pci = get("pci");
  if (o.container_id.empty() || o.state_path.empty()) return std::nullopt;
  return o;
}

}  // namespace

base::Result<DeviceClaim> DeviceClaim::Lock(const std::string& devices_dir, const std::string& device,
                                            int wait_ms) {
  auto lock = base::FileLock::Acquire(devices_dir + "/" + device, wait_ms);
  if (!lock.ok()) {
    base::Error e = std::move(lock).error();
    if (e.code == base::Code::kTryAgainLater)
      e.msg = "device " + device + " is being configured by another erdma-cni invocation; try again later";
    return e;
  }
  return DeviceClaim(std::move(lock).value());
}

std::optional<ClaimOwner> DeviceClaim::Owner() const {
  std::string text;
  char buf[4096];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(lock_.fd(), buf, sizeof buf, off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    off += n;
    if (text.size() > kMaxClaimBytes) return std::nullopt;
  }
  return ParseOwner(text);
}

base::Status DeviceClaim::SetOwner(const ClaimOwner& o) {
  const std::string text = json{
      {"network", o.network}, {"containerID", o.container_id},
      {"ifName", o.if_name},  {"state", o.state_path},
      {"device", o.device},   {"mac", o.mac},
      {"pci", o.pci}}.dump();
  // Written in place under the lock: a reader that sees a torn file treats it
  // as "no owner", and the owner's state file is the authority anyway.
  if (::ftruncate(lock_.fd(), 0) != 0 ||
      ::pwrite(lock_.fd(), text.data(), text.size(), 0) != static_cast<ssize_t>(text.size()))
    return base::Error(base::Code::kIo, "writing device claim: " + std::string(std::strerror(errno)), "",
                       errno);
  return base::Ok();
}

namespace {

// Every readable claim, without locking: (file name, owner).
std::vector<std::pair<std::string, ClaimOwner>> ReadClaims(const std::string& devices_dir) {
  std::vector<std::pair<std::string, ClaimOwner>> out;
  auto files = base::ListFiles(devices_dir);
  if (!files.ok()) return out;
  for (const auto& f : *files) {
    auto text = base::ReadFileNoFollow(devices_dir + "/" + f, kMaxClaimBytes);
    if (!text.ok()) continue;
    if (auto owner = ParseOwner(*text)) out.emplace_back(f, std::move(*owner));
  }
  return out;
}

}  // namespace

std::optional<ClaimOwner> FindClaim(const std::string& devices_dir, const std::string& name,
                                    const std::string& mac, const std::string& pci) {
  for (const auto& [file, owner] : ReadClaims(devices_dir)) {
    if (!ClaimIsLive(owner)) continue;
    if ((!name.empty() && owner.device == name) || (!mac.empty() && owner.mac == mac) ||
        (!pci.empty() && owner.pci == pci))
      return owner;
  }
  return std::nullopt;
}

bool ClaimIsLive(const ClaimOwner& owner) { return base::PathExists(owner.state_path); }

std::optional<ClaimOwner> ClaimOf(const std::string& devices_dir, const std::string& state_path) {
  for (const auto& [file, owner] : ReadClaims(devices_dir))
    if (owner.state_path == state_path) return owner;
  return std::nullopt;
}

}  // namespace cni
