#include "cni/device/gpus.h"

#include <algorithm>
#include <cerrno>
#include <set>

#include "base/escape.h"
#include "base/file.h"
#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;

namespace {

constexpr std::string_view kGpuPrefix = "GPU-";
constexpr std::string_view kMigPrefix = "MIG-";
constexpr std::string_view kReplicaSeparator = "::";  // NVIDIA's NewAnnotatedID
constexpr std::string_view kAckSeparator = "-_-";     // gpushare's generateFakeDeviceID
constexpr size_t kUuidChars = 36;                     // 8-4-4-4-12 hex digits
constexpr std::string_view kFallBack = "; falling back to the kubelet's NUMA node";

// 8-4-4-4-12 hex digits, either case.
bool IsUuid(std::string_view s) {
  if (s.size() != kUuidChars) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !conf::IsHexDigit(s[i])) return false;
  }
  return true;
}

// Only A-F are lowered: "MIG-GPU-…" keeps its prefixes.
std::string LowerHex(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// A decimal of 1..max_digits digits, nothing else.
std::optional<int> Decimal(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// "MIG-<uuid>", or the form of drivers before R470, "MIG-GPU-<uuid>/<gi>/<ci>".
bool IsMigId(std::string_view s) {
  if (s.substr(0, kMigPrefix.size()) != kMigPrefix) return false;
  s.remove_prefix(kMigPrefix.size());
  if (IsUuid(s)) return true;
  if (s.substr(0, kGpuPrefix.size()) != kGpuPrefix) return false;
  s.remove_prefix(kGpuPrefix.size());
  if (s.size() < kUuidChars + 4 || !IsUuid(s.substr(0, kUuidChars)) || s[kUuidChars] != '/') return false;
  s.remove_prefix(kUuidChars + 1);
  const size_t slash = s.find('/');
  return slash != std::string_view::npos && Decimal(s.substr(0, slash), 4) && Decimal(s.substr(slash + 1), 4);
}

GpuId Unknown(GpuId g, std::string problem) {
  g.kind = GpuIdKind::kUnknown;
  g.problem = std::move(problem);
  return g;
}

}  // namespace

GpuId ParseGpuId(std::string_view id) {
  GpuId g;
  if (id.size() > kMaxGpuIdBytes) {
    g.id = std::string(id.substr(0, kMaxGpuIdBytes)) + "…";
    return Unknown(std::move(g), "longer than " + std::to_string(kMaxGpuIdBytes) + " bytes");
  }
  g.id = std::string(id);
  if (id.empty()) return Unknown(std::move(g), "an empty GPU ID");

  std::string_view base = id;
  if (const size_t at = id.rfind(kReplicaSeparator); at != std::string_view::npos) {
    const auto n = Decimal(id.substr(at + kReplicaSeparator.size()), 6);
    if (!n) return Unknown(std::move(g), "a replica ID ends in ::<n>, a decimal number");
    g.replica = *n;
    base = id.substr(0, at);
  }
  if (base.substr(0, kGpuPrefix.size()) == kGpuPrefix) {
    const std::string_view uuid = base.substr(kGpuPrefix.size());
    if (IsUuid(uuid)) {
      g.kind = g.replica >= 0 ? GpuIdKind::kReplica : GpuIdKind::kUuid;
      g.uuid = std::string(kGpuPrefix) + LowerHex(uuid);
      return g;
    }
    if (g.replica < 0 && uuid.size() > kUuidChars && IsUuid(uuid.substr(0, kUuidChars)) &&
        uuid.substr(kUuidChars, kAckSeparator.size()) == kAckSeparator) {
      if (const auto n = Decimal(uuid.substr(kUuidChars + kAckSeparator.size()), 6)) {
        g.kind = GpuIdKind::kAckShared;
        g.uuid = std::string(kGpuPrefix) + LowerHex(uuid.substr(0, kUuidChars));
        g.replica = *n;
        return g;
      }
    }
    return Unknown(
        std::move(g),
        "a GPU UUID is GPU- and 8-4-4-4-12 hex digits, optionally followed by ::<n> (a replica) or "
        "-_-<n> (an ACK shared-GPU ID)");
  }
  if (base.substr(0, kMigPrefix.size()) == kMigPrefix) {
    if (!IsMigId(base))
      return Unknown(std::move(g),
                     "a MIG UUID is MIG- and 8-4-4-4-12 hex digits, or MIG-GPU-<uuid>/<gi>/<ci>");
    g.kind = GpuIdKind::kMig;
    g.uuid = LowerHex(base);
    return g;
  }
  if (g.replica >= 0) return Unknown(std::move(g), "only a GPU or MIG UUID has replicas (::<n>)");
  if (auto pci = conf::NormalizePci(id)) {
    g.kind = GpuIdKind::kPci;
    g.pci = std::move(*pci);
    return g;
  }
  if (const auto n = Decimal(id, 4)) {
    if (*n > kMaxNvidiaMinor)
      return Unknown(std::move(g), "index " + std::to_string(*n) + " is past /dev/nvidia" +
                                       std::to_string(kMaxNvidiaMinor) + ", the last GPU's");
    g.kind = GpuIdKind::kIndex;
    g.index = *n;
    return g;
  }
  return Unknown(std::move(g),
                 "not a GPU UUID (GPU-…), a replica (GPU-…::<n>), an ACK shared-GPU ID (GPU-…-_-<n>), a MIG "
                 "UUID (MIG-…), a PCI address or a /dev/nvidia index");
}

Result<NvidiaGpu> ParseNvidiaGpuInformation(std::string_view text, std::string_view dir_name) {
  const std::string file = "NVIDIA driver file " + base::EscapeForDisplay(dir_name) + "/information";
  auto bad = [&](const std::string& cause) {
    return Error(Code::kDecoding, file + ": " + cause +
                                      "; the NVIDIA kernel module writes this file: if its version "
                                      "(/proc/driver/nvidia/version) is one erdma-cni does not know, "
                                      "report the file's content");
  };
  if (text.size() > kMaxNvidiaInformationBytes)
    return bad("larger than " + std::to_string(kMaxNvidiaInformationBytes) + " bytes");

  NvidiaGpu gpu;
  std::optional<std::string> bus;
  std::set<std::string, std::less<>> keys;
  size_t line_no = 0;
  for (std::string_view line : conf::Split(text, '\n')) {
    const std::string where = "line " + std::to_string(++line_no);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    for (char c : line)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
        return bad(where + " holds a control character");
    if (conf::TrimBlanks(line).empty()) continue;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return bad(where + " \"" + base::EscapeForDisplay(conf::TrimBlanks(line)) +
                 "\" is not a \"Key: value\" line");
    const std::string_view key = conf::TrimBlanks(line.substr(0, colon));
    const std::string_view value = conf::TrimBlanks(line.substr(colon + 1));
    if (key.empty()) return bad(where + " has no key before its ':'");
    if (!keys.emplace(key).second)
      return bad(where + ": \"" + base::EscapeForDisplay(key) + "\" given twice");
    const std::string shown = "\"" + base::EscapeForDisplay(value) + "\"";
    if (key == "GPU UUID") {
      const GpuId id = ParseGpuId(value);
      if (id.kind != GpuIdKind::kUuid) return bad(where + ": GPU UUID " + shown + " is not GPU-<uuid>");
      gpu.uuid = id.uuid;
    } else if (key == "Bus Location") {
      bus = conf::NormalizePci(value);
      if (!bus) return bad(where + ": Bus Location " + shown + " is not a PCI address");
    } else if (key == "Device Minor") {
      const auto minor = Decimal(value, 4);
      if (!minor || *minor > kMaxNvidiaMinor)
        return bad(where + ": Device Minor " + shown + " is not a number from 0 to " +
                   std::to_string(kMaxNvidiaMinor));
      gpu.device_minor = *minor;
    }
  }
  if (!gpu.uuid && !bus && !gpu.device_minor)
    return bad("names none of GPU UUID, Bus Location and Device Minor");
  const auto dir_pci = conf::NormalizePci(dir_name);
  if (bus && dir_pci && *bus != *dir_pci)
    return bad("Bus Location " + *bus + " is not the GPU its directory names");
  if (!bus && !dir_pci) return bad("has no Bus Location, and its directory is not a PCI address");
  gpu.pci = bus ? *bus : *dir_pci;
  return gpu;
}

Result<std::vector<NvidiaGpu>> ReadNvidiaGpus(const std::string& procfs_root) {
  const std::string dir = procfs_root + "/driver/nvidia/gpus";
  auto names = base::ListKernelDirs(dir);
  if (!names.ok()) {
    if (names.error().sys_errno == ENOENT) return std::vector<NvidiaGpu>{};
    return std::move(names).error().WithContext("listing the NVIDIA driver's GPUs");
  }
  std::vector<NvidiaGpu> gpus;
  for (const std::string& name : *names) {
    // The driver names each directory "%04x:%02x:%02x.%1x"; anything else is not one of its GPUs.
    if (conf::NormalizePci(name) != name) continue;
    auto text = base::ReadKernelFile(dir + "/" + name + "/information", kMaxNvidiaInformationBytes);
    if (!text.ok()) {
      if (text.error().sys_errno == ENOENT) continue;
      return std::move(text).error().WithContext("reading the NVIDIA driver's GPUs");
    }
    auto gpu = ParseNvidiaGpuInformation(*text, name);
    if (!gpu.ok()) return std::move(gpu).error().WithContext("reading " + dir);
    gpus.push_back(std::move(gpu).value());
  }
  return gpus;
}

namespace {

struct Mapping {
  std::string pci;
  std::string why;
};

std::string NoDriverFiles(const std::string& what) {
  return what + ": no NVIDIA driver files list a GPU (driver/nvidia/gpus)" + std::string(kFallBack);
}

Mapping ByUuid(const std::string& shown, const std::string& uuid, const std::vector<NvidiaGpu>& gpus) {
  if (gpus.empty()) return {"", NoDriverFiles(shown)};
  size_t without = 0;
  for (const NvidiaGpu& g : gpus) {
    if (g.uuid == uuid) return {g.pci, shown + " is " + g.pci + " (driver file)"};
    if (!g.uuid) ++without;
  }
  return {"", shown + ": no driver file has this GPU UUID (" + std::to_string(gpus.size()) + " listed, " +
                  std::to_string(without) + " without a UUID)" + std::string(kFallBack)};
}

Mapping ByMinor(const std::string& shown, int minor, const std::vector<NvidiaGpu>& gpus) {
  const std::string dev = "/dev/nvidia" + std::to_string(minor);
  if (gpus.empty()) return {"", NoDriverFiles(shown)};
  for (const NvidiaGpu& g : gpus)
    if (g.device_minor == minor) return {g.pci, shown + " is " + dev + " = " + g.pci + " (driver file)"};
  return {"", shown + ": no driver file has Device Minor " + std::to_string(minor) + " (" + dev + ")" +
                  std::string(kFallBack)};
}

// The minors of ALIYUN_COM_GPU_MEM_IDX ("1" or "0,1"), each once; nullopt for anything else.
std::optional<std::vector<int>> AckMinors(std::string_view value) {
  if (value.empty() || value.size() > kMaxGpuIdBytes) return std::nullopt;
  std::vector<int> minors;
  for (std::string_view piece : conf::Split(value, ',')) {
    const auto n = Decimal(conf::TrimBlanks(piece), 4);
    if (!n || *n > kMaxNvidiaMinor) return std::nullopt;
    if (std::find(minors.begin(), minors.end(), *n) == minors.end()) minors.push_back(*n);
  }
  return minors;
}

}  // namespace

std::vector<PodGpu> MapPodGpus(const std::vector<std::string>& kubelet_gpu_ids,
                               const std::vector<NvidiaGpu>& driver_gpus, std::string_view ack_mem_idx) {
  std::vector<PodGpu> out;
  std::vector<std::string> keys;  // parallel to out: the PCI address, or what names an unmapped GPU
  auto add = [&](const std::string& key, const std::string& id, Mapping m) {
    const std::string k = m.pci.empty() ? key : "pci:" + m.pci;
    const auto at = std::find(keys.begin(), keys.end(), k);
    if (at == keys.end()) {
      keys.push_back(k);
      out.push_back({{id}, std::move(m.pci), std::move(m.why)});
      return;
    }
    std::vector<std::string>& ids = out[static_cast<size_t>(at - keys.begin())].ids;
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };

  const auto ack_minors = ack_mem_idx.empty() ? std::nullopt : AckMinors(ack_mem_idx);
  const std::string ack_note =
      " (an ACK shared-GPU ID, whose UUID need not be the pod's GPU: " +
      (ack_mem_idx.empty() ? "the pod has no " + std::string(kAckGpuIndexAnnotation) + " annotation)"
                           : std::string(kAckGpuIndexAnnotation) + " \"" +
                                 base::EscapeForDisplay(ack_mem_idx) + "\" is not a list of GPU indexes)");
  for (const std::string& raw : kubelet_gpu_ids) {
    const GpuId g = ParseGpuId(raw);
    const std::string shown = base::EscapeForDisplay(g.id);
    switch (g.kind) {
      case GpuIdKind::kUuid:
      case GpuIdKind::kReplica: add("uuid:" + g.uuid, raw, ByUuid(shown, g.uuid, driver_gpus)); break;
      case GpuIdKind::kAckShared:
        if (ack_minors) {
          // gpushare gives the pod the GPUs its scheduler wrote here, whichever fake IDs the kubelet picked
          // (each fake ID adds them again, which add() folds).
          for (int minor : *ack_minors) {
            const std::string id = std::string(kAckGpuIndexAnnotation) + "=" + std::to_string(minor);
            add("minor:" + std::to_string(minor), id, ByMinor("ACK shared GPU " + id, minor, driver_gpus));
          }
        } else {
          add("uuid:" + g.uuid, raw, ByUuid(shown + ack_note, g.uuid, driver_gpus));
        }
        break;
      case GpuIdKind::kMig:
        add("mig:" + g.uuid, raw, {"", shown + ": a MIG device needs NVML to map" + std::string(kFallBack)});
        break;
      case GpuIdKind::kPci: add("", raw, {g.pci, shown + " is the PCI address " + g.pci}); break;
      case GpuIdKind::kIndex:
        add("minor:" + std::to_string(g.index), raw, ByMinor("index " + shown, g.index, driver_gpus));
        break;
      case GpuIdKind::kUnknown:
        add("id:" + g.id, raw, {"", shown + ": " + g.problem + std::string(kFallBack)});
        break;
    }
  }
  return out;
}

}  // namespace cni
