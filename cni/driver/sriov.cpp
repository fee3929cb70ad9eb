#include "cni/driver/sriov.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

#include "base/file.h"
#include "cni/device/lookup.h"

namespace cni {
namespace {

using base::Code;
using base::Error;
using base::Result;

/// Entries of any type (sysfs mixes directories and symlinks), sorted, no hidden ones; none when unreadable.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') out.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// In switchdev mode the VF representors hang off the PF's PCI device too; their phys_port_name says pf0vf1
// (or c1pf0vf1, pf0sf3 for subfunctions), the uplink's says p0.
bool IsRepresentor(const std::string& net_dir, const std::string& name) {
  auto text = base::ReadKernelFile(net_dir + "/" + name + "/phys_port_name", 256);
  const std::string port = text.ok() ? text->substr(0, text->find('\n')) : "";
  return port.find("vf") != std::string::npos || port.find("sf") != std::string::npos;
}

}  // namespace

bool SriovVf::userspace() const {
  return driver.find("vfio") != std::string::npos || driver == "uio_pci_generic" || driver == "igb_uio";
}

Result<SriovVf> FindVf(const std::string& sysfs_root, const std::string& pci, const std::string& key) {
  const std::string devices = sysfs_root + "/bus/pci/devices/";
  const std::string dir = devices + pci;
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error(Code::kDeviceNotFound, key + ": no PCI device " + pci + " on the node (" + dir +
                                            "); check `lspci -D` and the SR-IOV device plugin's resource");
  SriovVf vf;
  vf.pci = pci;
  auto pf = LinkBase(dir + "/physfn");
  if (!pf)
    return Error(Code::kInvalidConfig,
                 key + ": " + pci +
                     " is not an SR-IOV VF (it has no physfn); mode \"vf\" takes a VF, as the SR-IOV "
                     "device plugin hands it out; use mode \"move\" to give a pod a whole device");
  vf.pf_pci = *pf;
  const std::string pf_dir = devices + vf.pf_pci;
  bool numbered = false;
  for (const std::string& e : Entries(pf_dir)) {
    if (e.rfind("virtfn", 0) != 0 || e.size() == 6) continue;
    const std::string digits = e.substr(6);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    if (LinkBase(pf_dir + "/" + e) == pci) {
      vf.vf = static_cast<uint32_t>(std::stoul(digits));
      numbered = true;
      break;
    }
  }
  if (!numbered)
    return Error(Code::kDeviceNotFound, key + ": VF " + pci + " is not among the virtfn links of its PF " +
                                            vf.pf_pci + "; is SR-IOV being reconfigured (sriov_numvfs)?");

  // The uplink, else (every netdev a representor) the first.
  const std::vector<std::string> pf_nets = Entries(pf_dir + "/net");
  auto uplink = std::find_if(pf_nets.begin(), pf_nets.end(),
                             [&](const std::string& n) { return !IsRepresentor(pf_dir + "/net", n); });
  if (uplink == pf_nets.end()) uplink = pf_nets.begin();
  if (uplink != pf_nets.end()) vf.pf_netdev = *uplink;
  std::vector<std::string> vf_nets = Entries(dir + "/net");
  if (!vf_nets.empty()) vf.netdev = vf_nets.front();
  vf.driver = LinkBase(dir + "/driver").value_or("");
  return vf;
}

}  // namespace cni
