#include "nri/pods.h"

#include <algorithm>
#include <charconv>

#include "base/escape.h"
#include "base/file.h"
#include "cni/device/gpus.h"
#include "cni/state/record.h"
#include "cni/state/state.h"
#include "conf/names.h"

namespace nri {

namespace {

// "231:192\n", as sysfs's dev files hold a device's numbers.
std::optional<DeviceNode> NodeAt(const std::string& dev_file, const std::string& path) {
  auto text = base::ReadKernelFile(dev_file, 64);
  if (!text.ok()) return std::nullopt;
  std::string_view t(*text);
  if (!t.empty() && t.back() == '\n') t.remove_suffix(1);
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  DeviceNode n{path, 0, 0};
  auto major = std::from_chars(t.data(), t.data() + colon, n.major);
  auto minor = std::from_chars(t.data() + colon + 1, t.data() + t.size(), n.minor);
  if (major.ec != std::errc() || major.ptr != t.data() + colon || minor.ec != std::errc() ||
      minor.ptr != t.data() + t.size())
    return std::nullopt;
  return n;
}

bool IsUverbsName(const std::string& n) {
  return n.size() > 6 && n.starts_with("uverbs") && n.find_first_not_of("0123456789", 6) == std::string::npos;
}

}  // namespace

std::optional<DeviceNode> UverbsOf(const std::string& sysfs_root, const std::string& ibdev,
                                   std::optional<cni::PciLocation>* pci) {
  const std::string cls = sysfs_root + "/class/infiniband_verbs";
  auto entries = base::ListKernelDirs(cls);
  if (!entries.ok()) return std::nullopt;
  for (const std::string& e : *entries) {
    if (!IsUverbsName(e)) continue;
    auto name = base::ReadKernelFile(cls + "/" + e + "/ibdev", 256);
    if (!name.ok()) continue;
    std::string n = *name;
    if (!n.empty() && n.back() == '\n') n.pop_back();
    if (n != ibdev) continue;
    if (pci != nullptr) {
      auto at = cni::ReadPciLocation(sysfs_root, cls + "/" + e + "/device");
      if (at.ok()) *pci = std::move(*at);
    }
    return NodeAt(cls + "/" + e + "/dev", "/dev/infiniband/" + e);
  }
  return std::nullopt;
}

std::optional<DeviceNode> RdmaCm(const std::string& sysfs_root) {
  return NodeAt(sysfs_root + "/class/misc/rdma_cm/dev", "/dev/infiniband/rdma_cm");
}

PodRdma RailsOf(const conf::NodePolicy& node, const std::string& sandbox, const std::string& sysfs_root,
                std::vector<std::string>* notes) {
  PodRdma pod;
  if (!conf::IsValidContainerId(sandbox, conf::kMaxLegacyContainerIdBytes)) return pod;
  auto note = [&](const std::string& what) { notes->push_back(base::EscapeForDisplay(what)); };
  std::vector<std::string> devices;
  for (const cni::FoundRecord& r : cni::RecordsOf(node.attachments_dir, sandbox)) {
    const std::string where = sandbox + "/" + r.if_name;
    if (!conf::PathAllowed(node.data_dirs, r.place.data_dir)) {
      note(where + ": its record names dataDir " + r.place.data_dir + ", which the node file does not allow");
      continue;
    }
    const cni::StateStore store(r.place.data_dir, r.place.network);
    if (base::Status s = store.Check(); !s.ok()) {
      note(where + ": " + s.error().msg);
      continue;
    }
    // A group's own file first (several rails under one CNI_IFNAME), as DEL looks.
    std::string path;
    auto st = store.Load(store.GroupPathFor(sandbox, r.if_name));
    if (st.ok() && !*st) st = store.LoadLocated(sandbox, r.if_name, &path);
    if (!st.ok() || !*st) {
      if (!st.ok()) note(where + ": " + st.error().msg);
      continue;
    }
    if (!(*st)->complete) continue;
    if (!(*st)->group) {
      if (!(*st)->rdma_device.empty()) devices.push_back((*st)->rdma_device);
      continue;
    }
    for (const cni::Step& step : (*st)->steps) {
      const auto* m = std::get_if<cni::StepMember>(&step);
      if (m == nullptr) continue;
      auto member = store.Load(store.PathFor(sandbox, m->pod_name));
      if (!member.ok() || !*member || (*member)->member_of != std::optional<std::string>(r.if_name) ||
          !(*member)->complete)
        continue;
      if (!(*member)->rdma_device.empty()) devices.push_back((*member)->rdma_device);
    }
  }
  for (const std::string& d : devices) {
    PodRdma::Rail rail{d, std::nullopt, std::nullopt};
    rail.uverbs = UverbsOf(sysfs_root, d, &rail.pci);
    if (!rail.uverbs) note(d + ": no uverbs node in " + sysfs_root + "/class/infiniband_verbs");
    pod.rails.push_back(std::move(rail));
  }
  if (!pod.rails.empty()) pod.rdma_cm = RdmaCm(sysfs_root);
  return pod;
}

std::vector<TopologyGpu> GpusOf(const Container& c, const std::string& sysfs_root,
                                const std::string& procfs_root, std::vector<std::string>* notes) {
  const std::vector<std::string> ids = ContainerGpuIds(c);
  if (ids.empty()) return {};
  auto driver = cni::ReadNvidiaGpus(procfs_root);
  if (!driver.ok()) {
    notes->push_back(base::EscapeForDisplay(driver.error().msg));
    return {};
  }
  std::vector<TopologyGpu> out;
  for (const cni::PodGpu& g : cni::MapPodGpus(ids, *driver, "")) {
    TopologyGpu gpu{g.pci.empty() ? (g.ids.empty() ? "?" : g.ids.front()) : g.pci, std::nullopt};
    if (g.pci.empty()) {
      notes->push_back(base::EscapeForDisplay(g.why));
    } else if (auto at = cni::ReadPciLocation(sysfs_root, sysfs_root + "/bus/pci/devices/" + g.pci);
               at.ok()) {
      gpu.pci = std::move(*at);
    } else {
      notes->push_back("GPU " + g.pci + ": " + base::EscapeForDisplay(at.error().msg));
    }
    out.push_back(std::move(gpu));
  }
  return out;
}

namespace {

constexpr const char* kTopologySuffix = ".xml";

bool IsId(const std::string& id) { return conf::IsValidContainerId(id, conf::kMaxLegacyContainerIdBytes); }

}  // namespace

base::Result<std::string> WriteTopology(const std::string& dir, const std::string& sandbox,
                                        const std::string& container, const std::string& xml) {
  if (!IsId(sandbox) || !IsId(container))
    return base::Error(base::Code::kInvalidConfig,
                       "the runtime's sandbox or container ID is no container ID");
  const std::string pod_dir = dir + "/" + sandbox;
  RETURN_IF_ERROR(base::MakePrivateDirs(pod_dir));
  const std::string path = pod_dir + "/" + container + kTopologySuffix;
  RETURN_IF_ERROR(base::WriteFileAtomic(path, xml, 0644));
  return path;
}

void RemoveTopologies(const std::string& dir, const std::string& sandbox) {
  if (!IsId(sandbox)) return;
  const std::string pod_dir = dir + "/" + sandbox;
  auto files = base::ListFiles(pod_dir);
  if (!files.ok()) return;
  for (const std::string& f : *files) (void)base::RemoveFile(pod_dir + "/" + f);
  base::RemoveDirIfEmpty(pod_dir);
}

void KeepTopologies(const std::string& dir, const std::vector<std::string>& live) {
  auto pods = base::ListDirs(dir);
  if (!pods.ok()) return;
  for (const std::string& p : *pods)
    if (std::find(live.begin(), live.end(), p) == live.end()) RemoveTopologies(dir, p);
}

}  // namespace nri
