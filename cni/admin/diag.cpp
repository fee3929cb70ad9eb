#include "cni/admin/diag.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string_view>

#include "base/escape.h"
#include "base/file.h"
#include "cni/driver/sriov.h"
#include "cni/state/claim.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "conf/names.h"
#include "kubelet/pod_devices.h"
#include "netlink/netns_liveness.h"
#include "netlink/rdma_pairing.h"

namespace cni {

using nlohmann::json;

namespace {

// SMC sysctls worth seeing; tcp2smc exists only on Alibaba Cloud Linux 3.
const char* const kSmcSysctls[] = {"net.smc.tcp2smc",       "net.smc.autocorking_size",
                                   "net.smc.smcr_buf_type", "net.smc.wmem",
                                   "net.smc.rmem",          "net.ipv6.conf.all.disable_ipv6"};

std::string ReadTrimmed(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

// The kernel's enum ib_port_state, by value.
const char* PortStateName(uint8_t s) {
  constexpr const char* kNames[] = {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return s < std::size(kNames) ? kNames[s] : "NOP";
}

// The RoCE path MTU a netdev MTU allows (the kernel's iboe_get_mtu: the largest that fits with the headers).
int RoceMtu(uint32_t netdev_mtu) {
  const int room = static_cast<int>(netdev_mtu) - (40 + 8 + 12 + 4 + 28 + 4);
  for (int m : {4096, 2048, 1024, 512, 256})
    if (room >= m) return m;
  return 0;
}

json PortGids(const std::string& port_dir) {
  json gids = json::array();
  for (int i = 0; i < 32; ++i) {
    const std::string gid = ReadTrimmed(port_dir + "/gids/" + std::to_string(i));
    if (gid.empty()) break;
    if (gid == "0000:0000:0000:0000:0000:0000:0000:0000") continue;
    gids.push_back({{"index", i},
                    {"gid", gid},
                    {"type", ReadTrimmed(port_dir + "/gid_attrs/types/" + std::to_string(i))},
                    {"netdev", ReadTrimmed(port_dir + "/gid_attrs/ndevs/" + std::to_string(i))}});
  }
  return gids;
}

json Rdma(const DiagOptions& opts, DiagSources& src, const std::vector<netlink::LinkInfo>& links,
          std::vector<std::string>& problems) {
  json out = json::object();
  if (!src.rdma) {
    out["error"] = src.rdma_error;
    problems.push_back("no RDMA netlink: " + src.rdma_error);
    return out;
  }
  auto mode = src.rdma->GetNetnsMode();
  out["netnsMode"] = mode.ok() ? netlink::NetnsModeName(*mode) : "unknown: " + mode.error().msg;
  auto devices = src.rdma->ListDevices();
  auto ports = src.rdma->ListPorts();
  if (!devices.ok() || !ports.ok()) {
    out["error"] = !devices.ok() ? devices.error().msg : ports.error().msg;
    problems.push_back("listing RDMA devices: " + out["error"].get<std::string>());
    return out;
  }
  json list = json::array();
  for (const auto& d : *devices) {
    json jd = {
        {"name", d.name}, {"protocol", d.protocol}, {"nodeGuid", d.node_guid}, {"ports", json::array()}};
    for (const auto& p : *ports) {
      if (p.dev_index != d.index) continue;
      const std::string dir =
          opts.sysfs_root + "/class/infiniband/" + d.name + "/ports/" + std::to_string(p.port);
      json jp = {{"port", p.port},
                 {"state", PortStateName(p.state)},
                 {"active", p.state == netlink::kPortStateActive},
                 {"physLinkUp", p.phys_state == netlink::kPhysStateLinkUp},
                 {"netdev", p.netdev_name},
                 {"linkLayer", ReadTrimmed(dir + "/link_layer")},
                 {"gids", PortGids(dir)}};
      for (const auto& l : links)
        if (!p.netdev_name.empty() && l.name == p.netdev_name) {
          jp["netdevMtu"] = l.mtu;
          jp["roceMtu"] = RoceMtu(l.mtu);
        }
      if (p.state != netlink::kPortStateActive)
        problems.push_back(d.name + " port " + std::to_string(p.port) + " is " + PortStateName(p.state) +
                           ", not ACTIVE: its netdev is down or has no carrier");
      jd["ports"].push_back(jp);
    }
    list.push_back(jd);
  }
  out["devices"] = list;
  if (list.empty()) problems.push_back("no RDMA device is visible here");
  return out;
}

json Netdevs(const DiagOptions& opts, DiagSources& src, const std::vector<netlink::LinkInfo>& links) {
  std::vector<netlink::RdmaDevice> devices;
  std::vector<netlink::RdmaPort> ports;
  if (src.rdma) {
    if (auto d = src.rdma->ListDevices(); d.ok()) devices = *d;
    if (auto p = src.rdma->ListPorts(); p.ok()) ports = *p;
  }
  json out = json::array();
  for (const auto& l : links) {
    if (l.name == "lo") continue;
    json j = {{"name", l.name}, {"mac", l.mac}, {"mtu", l.mtu}, {"up", l.up}, {"kind", l.kind}};
    if (auto pair = netlink::PairNetdev(l, devices, ports, opts.sysfs_root)) {
      j["rdmaDevice"] = pair->device.name;
      j["pairedBy"] = pair->how;
    }
    out.push_back(j);
  }
  return out;
}

json Smc(DiagSources& src) {
  json out = {{"sysctls", json::object()}};
  if (src.sysctl)
    for (const char* name : kSmcSysctls) {
      auto v = src.sysctl->Read(name);
      out["sysctls"][name] = v.ok() && *v ? json(**v) : json(nullptr);
    }
  if (!src.smc) {
    out["error"] = src.smc_error;
    return out;
  }
  json pnet = json::array();
  if (auto entries = src.smc->ListPnet(); entries.ok())
    for (const auto& e : *entries)
      pnet.push_back(
          {{"pnetId", e.pnet_id}, {"netdev", e.eth_name}, {"ibDevice", e.ib_name}, {"ibPort", e.ib_port}});
  out["pnet"] = pnet;
  if (src.smc->HasUeid())
    if (auto ueids = src.smc->ListUeids(); ueids.ok()) out["ueids"] = *ueids;
  return out;
}

// The names in a process's /dev/infiniband (through /proc/PID/root), sorted; none without one.
json InfinibandNodes(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(base::EscapeForDisplay(e.path().filename().string()));
    if (names.size() >= 64) break;  // a pod's rails are at most conf::kMaxDevices
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The value of `key` in a process's environ (its first 64 KiB), if set.
std::optional<std::string> EnvValue(const std::string& environ_file, const std::string& key) {
  auto text = base::ReadKernelFile(environ_file, 64 << 10);
  if (!text.ok()) return std::nullopt;
  const std::string prefix = key + "=";
  for (std::string_view var : conf::Split(*text, '\0'))
    if (var.starts_with(prefix)) return base::EscapeForDisplay(std::string(var.substr(prefix.size())));
  return std::nullopt;
}

// Whether the runtime offers NRI (its socket), and the NRI agents running on the node.
json Nri(const DiagOptions& opts) {
  struct stat st {};
  const bool offered = ::stat(opts.nri_socket.c_str(), &st) == 0 && S_ISSOCK(st.st_mode);
  json out = {{"socket", opts.nri_socket}, {"offered", offered}, {"agents", json::array()}};
  if (!offered)
    out["fix"] =
        "the runtime offers no NRI socket at " + opts.nri_socket +
        ": containerd 2.x has NRI on; containerd 1.7 needs [plugins.\"io.containerd.nri.v1.nri\"] disable = "
        "false in /etc/containerd/config.toml and a restart (docs/nri.md)";
  if (auto pids = base::ListKernelDirs(opts.proc_root); pids.ok())
    for (const auto& pid : *pids)
      if (pid.find_first_not_of("0123456789") == std::string::npos &&
          ReadTrimmed(opts.proc_root + "/" + pid + "/comm") == "erdma-cni-nri")
        out["agents"].push_back(std::stoi(pid));
  return out;
}

json Memlock(const DiagOptions& opts, const DiagSources& src, std::vector<std::string>& problems) {
  json out = {{"processes", json::array()}};
  // A pod's processes, not the node's: only with --netns.
  if (src.netns_inode == 0 || opts.netns.empty()) return out;
  const std::string want = "net:[" + std::to_string(src.netns_inode) + "]";
  auto pids = base::ListKernelDirs(opts.proc_root);
  if (!pids.ok()) return out;
  bool limited = false;
  for (const auto& pid : *pids) {
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    char target[64] = {};
    const std::string link = opts.proc_root + "/" + pid + "/ns/net";
    const ssize_t n = ::readlink(link.c_str(), target, sizeof target - 1);
    if (n <= 0 || want != target) continue;
    std::ifstream limits(opts.proc_root + "/" + pid + "/limits");
    for (std::string line; std::getline(limits, line);) {
      if (line.rfind("Max locked memory", 0) != 0) continue;
      std::istringstream fields(line.substr(17));
      std::string soft, hard;
      fields >> soft >> hard;
      json p = {{"pid", std::stoi(pid)},
                // A process names itself: escaped here, as it reaches --json too.
                {"comm", base::EscapeForDisplay(ReadTrimmed(opts.proc_root + "/" + pid + "/comm"))},
                {"soft", soft},
                {"hard", hard}};
      // What the NRI agent gives a container (docs/nri.md), as the process has it.
      p["infiniband"] = InfinibandNodes(opts.proc_root + "/" + pid + "/root/dev/infiniband");
      if (auto hca = EnvValue(opts.proc_root + "/" + pid + "/environ", "NCCL_IB_HCA")) p["ncclIbHca"] = *hca;
      if (auto topo = EnvValue(opts.proc_root + "/" + pid + "/environ", "NCCL_TOPO_FILE"))
        p["ncclTopoFile"] = *topo;
      out["processes"].push_back(std::move(p));
      limited = limited || soft != "unlimited";
    }
  }
  if (limited) {
    out["hint"] =
        "RDMA memory registration (ibv_reg_mr) pins memory and fails beyond RLIMIT_MEMLOCK (often 64 KiB or "
        "8 MiB): run the NRI agent erdma-cni-nri with nriMemlock in the node file (docs/nri.md), or "
        "start the container runtime with LimitMEMLOCK=infinity (containerd's systemd unit) so pods "
        "inherit it";
    problems.push_back("a process in this netns has a finite memlock limit: " +
                       out["hint"].get<std::string>());
  }
  return out;
}

// The name a reader knows a group by: its first rail's (erdma0), not its CNI_IFNAME (eth0 when chained).
std::string GroupName(const StateStore& store, const AttachmentState& st) {
  const AttachmentState* group = &st;
  std::optional<AttachmentState> loaded;
  if (st.member_of) {
    auto g = store.Load(store.GroupPathFor(st.container_id, *st.member_of));
    if (!g.ok() || !*g) return *st.member_of;
    loaded = std::move(**g);
    group = &*loaded;
  }
  for (const Step& step : group->steps)
    if (const auto* m = std::get_if<StepMember>(&step)) return m->pod_name;
  return group->if_name;
}

json States(const DiagOptions& opts, const std::string& data_dir, const std::vector<netlink::LinkInfo>& links,
            std::vector<std::string>& problems) {
  json out = json::array();
  // What others could write is not read (base::CheckPrivateDir).
  if (auto safe = base::CheckPrivateDir(data_dir); !safe.ok()) {
    problems.push_back("dataDir not read: " + safe.error().msg);
    return out;
  }
  auto each = [&](const StateStore& store, const std::string& path) {
    json j = {{"file", path}, {"dataDir", data_dir}, {"problems", json::array()}};
    auto loaded = store.Load(path);
    if (!loaded.ok() || !*loaded) {
      j["problems"].push_back("unreadable: " + (loaded.ok() ? std::string("gone") : loaded.error().msg));
    } else {
      const AttachmentState& st = **loaded;
      j.update({{"network", st.network},
                {"containerID", st.container_id},
                {"ifName", st.if_name},
                {"netns", st.netns},
                {"podIfName", st.pod_if_name},
                {"complete", st.complete},
                {"rdmaDevice", st.rdma_device}});
      if (st.group) {
        json members = json::array();
        for (const Step& step : st.steps)
          if (const auto* m = std::get_if<StepMember>(&step))
            members.push_back({{"podIfName", m->pod_name}, {"device", m->device}, {"why", m->why}});
        j["group"] = members;
      }
      if (st.member_of) j["memberOf"] = *st.member_of;
      if (st.group || st.member_of) j["groupName"] = GroupName(store, st);
      // Mode vf: which VF of which PF; one on vfio-pci has no netdev.
      bool netdev = !st.group;
      for (const Step& step : st.steps)
        if (const auto* vf = std::get_if<StepVf>(&step)) {
          j["vf"] = {{"pci", vf->pci}, {"pf", vf->pf}, {"vf", vf->applied.vf}, {"netdev", vf->netdev}};
          netdev = !vf->netdev.empty();
        }
      // A VF netdev without VF settings journals a plain move: its claim's PCI address tells it is a VF.
      if (!j.contains("vf") && !st.origin.name.empty())
        if (auto claim = ClaimOf(data_dir + "/devices", path); claim && !claim->pci.empty())
          if (auto sriov = FindVf(opts.sysfs_root, claim->pci, "the claim's pci"); sriov.ok())
            j["vf"] = {
                {"pci", sriov->pci}, {"pf", sriov->pf_netdev}, {"vf", sriov->vf}, {"netdev", claim->device}};
      if (!st.complete) j["problems"].push_back("ADD did not complete (a DEL finishes it)");
      struct stat sb {};
      if (!st.netns.empty() && ::stat(st.netns.c_str(), &sb) != 0)
        j["problems"].push_back("its netns " + st.netns + " is gone: DEL (or GC) returns the device");
      if (netdev && !opts.netns.empty() && st.netns == opts.netns) {
        const bool present =
            std::any_of(links.begin(), links.end(), [&](const auto& l) { return l.name == st.pod_if_name; });
        if (!present) j["problems"].push_back(st.pod_if_name + " is missing from the netns");
      }
    }
    for (const auto& p : j["problems"]) problems.push_back(path + ": " + p.get<std::string>());
    out.push_back(j);
    return false;
  };
  ForEachState(data_dir, each,
               [&](const base::Error& e) { problems.push_back("state directory not read: " + e.msg); });
  return out;
}

// The erdma-cni entries chained in the node's conflists, judged as erdma-cni-install does (docs/install.md).
json NodeEntries(const DiagOptions& opts, std::vector<std::string>& problems) {
  json out = json::array();
  if (opts.cni_conf_dir.empty()) return out;
  bool found = false;
  auto files = base::ListFiles(opts.cni_conf_dir, &found);
  if (!files.ok()) {
    problems.push_back("CNI config directory not read: " + files.error().msg);
    return out;
  }
  std::optional<base::Status> kubelet;  // asked once, for the first entry that needs it
  for (const std::string& name : *files) {
    if (!name.ends_with(".conflist") && !name.ends_with(".conf") && !name.ends_with(".json")) continue;
    const std::string path = opts.cni_conf_dir + "/" + name;
    auto text = base::ReadFileNoFollow(path, 1 << 20);
    if (!text.ok()) continue;  // not ours to judge: the runtime reports its own config files
    json conflist = json::parse(*text, nullptr, false);
    if (!conflist.is_object() || !conflist.contains("plugins") || !conflist["plugins"].is_array()) continue;
    const json& plugins = conflist["plugins"];
    for (size_t i = 1; i < plugins.size(); ++i) {  // chained: after the primary plugin, for every pod
      const json& e = plugins[i];
      if (!e.is_object() || e.value("type", "") != "erdma-cni") continue;
      json j = {{"file", path}, {"index", i}, {"problems", json::array()}};
      if (std::string by = conf::OneDeviceForEveryPod(e); !by.empty())
        j["problems"].push_back(by +
                                " names one node device for every pod of the node: the first pod takes it "
                                "and every later one fails with code 11; use device.resource or "
                                "device.pool (erdma-cni-install refuses such an entry)");
      if (conf::AsksTheKubelet(e)) {
        if (!kubelet) kubelet = kubelet::ListAnswers(opts.pod_resources_socket, kubelet::kTimeLimit);
        j["kubelet"] = kubelet->ok() ? std::string("answers") : kubelet->error().msg;
        if (!kubelet->ok())
          j["problems"].push_back(
              "its device.resource makes every pod's ADD ask the kubelet, which does not answer: " +
              kubelet->error().msg + "; start the kubelet or set podResourcesSocket in the node file (" +
              opts.node_source + ")");
      }
      for (const auto& p : j["problems"])
        problems.push_back(path + ": erdma-cni entry: " + p.get<std::string>());
      out.push_back(std::move(j));
    }
  }
  return out;
}

// Whether the live holder `h` has lost its pod: the netns its state recorded is provably gone.
bool PodGone(const std::string& data_dir, const HoldRecord& h) {
  StateStore store(data_dir, h.owner.network);
  if (h.owner.state_path != store.Dir() + "/" + h.owner.state_path.substr(h.owner.state_path.rfind('/') + 1))
    return false;
  auto st = store.Load(h.owner.state_path);
  if (!st.ok() || !*st) return false;
  return !netlink::NetnsMayExist((*st)->netns_id, (*st)->netns);
}

// Who holds which node device; stale holders are listed, not problems (the next ADD or a GC ends them).
json Holders(const std::string& data_dir) {
  json out = json::array();
  for (const HoldRecord& h : ListHolds(data_dir + "/devices", data_dir + "/children")) {
    const bool pod_gone = h.live && PodGone(data_dir, h);
    out.push_back({{"dataDir", data_dir},
                   {"device", h.device},
                   {"as", h.share ? "parent of a child" : "attached"},
                   {"containerID", h.owner.container_id},
                   {"network", h.owner.network},
                   {"ifName", h.owner.if_name},
                   {"state", h.owner.state_path},
                   {"stale", !h.live || pod_gone},
                   {"podGone", pod_gone}});
  }
  return out;
}

}  // namespace

json Diagnose(const DiagOptions& opts, DiagSources& src) {
  std::vector<std::string> problems;
  std::vector<netlink::LinkInfo> links;
  if (src.links)
    if (auto l = src.links->ListLinks(); l.ok()) links = *l;
  json report = {{"netns", opts.netns.empty() ? "node" : opts.netns}};
  report["rdma"] = Rdma(opts, src, links, problems);
  report["netdevs"] = Netdevs(opts, src, links);
  report["smc"] = Smc(src);
  report["memlock"] = Memlock(opts, src, problems);
  report["nri"] = Nri(opts);
  report["nodeEntries"] = NodeEntries(opts, problems);
  report["dataDirs"] = opts.data_dirs;
  if (!opts.unsearched.empty()) report["dataDirsNotSearched"] = opts.unsearched;
  report["states"] = json::array();
  report["holders"] = json::array();
  for (const std::string& dir : opts.data_dirs) {
    for (json& s : States(opts, dir, links, problems)) report["states"].push_back(std::move(s));
    for (json& h : Holders(dir)) report["holders"].push_back(std::move(h));
  }
  report["problems"] = problems;
  return report;
}

}  // namespace cni
