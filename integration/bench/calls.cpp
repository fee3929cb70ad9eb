#include "integration/bench/calls.h"

#include <linux/magic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "base/phase.h"
#include "conf/node.h"
#include "ipam/ipam.h"

namespace bench {

using nlohmann::json;

Invocation Make(const Options& opt, const std::string& binary, const Call& c,
                const std::vector<std::string>& wrap) {
  Invocation inv;
  inv.argv = wrap;
  inv.argv.push_back(binary);
  inv.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
             "CNI_COMMAND=" + c.command,
             "CNI_CONTAINERID=" + c.container_id,
             "CNI_NETNS=" + c.netns,
             "CNI_IFNAME=" + c.ifname,
             "CNI_PATH=" + opt.cni_dir,
             NodeFileEnv()};
  if (!c.args.empty()) inv.env.push_back("CNI_ARGS=" + c.args);
  if (opt.phases) inv.env.push_back("ERDMA_CNI_PHASES=1");
  inv.stdin_text = c.config.dump();
  return inv;
}

// The plugin's error message when it printed a CNI error, else its stderr.
std::string Why(const Outcome& o) {
  json j = json::parse(o.out, nullptr, false);
  std::string why = j.is_object() && j.contains("msg") ? j["msg"].dump() : o.err;
  if (why.size() > 300) why = why.substr(0, 300) + "...";
  return why;
}

bool Ok(const Outcome& o, const std::string& what) {
  if (o.exit == 0) return true;
  std::cerr << "erdma-bench: " << what << " failed (exit " << o.exit << ")\nstdout: " << o.out
            << "\nstderr: " << o.err << "\n";
  return false;
}

json Parsed(const Outcome& o) {
  json j = json::parse(o.out, nullptr, false);
  return j.is_discarded() ? json() : j;
}

json ErdmaConfig(const Options& opt, const std::string& data_dir, const std::string& device) {
  json c = {{"cniVersion", kVersion},       {"name", "bench"},        {"type", "erdma-cni"},
            {"device", {{"name", device}}}, {"addresses", "inherit"}, {"dataDir", data_dir}};
  if (opt.mtu > 0) c["mtu"] = opt.mtu;
  return c;
}

json ErdmaPoolConfig(const Options& opt, const std::string& data_dir, const std::string& device) {
  return ErdmaPoolConfig(opt, data_dir, std::vector<std::string>{device}, 1);
}

json ErdmaPoolConfig(const Options& opt, const std::string& data_dir, const std::vector<std::string>& names,
                     int count) {
  json c = ErdmaConfig(opt, data_dir, "");
  c["device"] = {{"pool", {{"names", names}}}, {"count", count}};
  return c;
}

json ErdmaKubeletConfig(const Options& opt, const std::string& data_dir) {
  json c = ErdmaConfig(opt, data_dir, "");
  c["device"] = {{"resource", kKubeletResource}};
  return c;
}

namespace {

json TerwayResult() {
  return {{"cniVersion", kVersion},
          {"interfaces", json::array({{{"name", "eth0"}, {"sandbox", "x"}}})},
          {"ips", json::array({{{"address", "172.16.0.5/24"}, {"gateway", "172.16.0.1"}, {"interface", 0}}})},
          {"routes", json::array({{{"dst", "0.0.0.0/0"}}})},
          {"dns", json::object()}};
}

}  // namespace

json PassThroughConfig(const std::string& data_dir) {
  return {{"cniVersion", kVersion},
          {"name", "bench-chained"},
          {"type", "erdma-cni"},
          {"mode", "move"},
          {"ifName", "erdma0"},
          {"device", {{"resource", kKubeletResource}, {"count", "all"}}},
          {"rdma", {{"netnsMode", "exclusive"}}},
          {"dataDir", data_dir},
          {"prevResult", TerwayResult()}};
}

json PoolPassThroughConfig(const std::string& data_dir) {
  return {
      {"cniVersion", kVersion},
      {"name", "bench-chained-pool"},
      {"type", "erdma-cni"},
      {"mode", "move"},
      {"ifName", "erdma0"},
      {"capabilities", {{"io.kubernetes.cri.pod-annotations", true}}},
      {"device", {{"pool", {{"rdmaDriver", "erdma"}}}, {"count", 2}}},
      {"dataDir", data_dir},
      {"runtimeConfig",
       {{"io.kubernetes.cri.pod-annotations",
         {{"kubernetes.io/config.source", "api"}, {"kubernetes.io/config.seen", "2026-11-29T11:00:00Z"}}}}},
      {"prevResult", TerwayResult()}};
}

// Mode none chained after Terway, SMC-R asked for through the pod annotation
// (containerd's runtimeConfig), everything the kernel lacks only warned about.
json NoneConfig(const Options& opt, const std::string& data_dir) {
  if (!opt.none_config.empty()) {
    std::ifstream in(opt.none_config);
    return json::parse(in);
  }
  const json prev = TerwayResult();
  return {{"cniVersion", kVersion},
          {"name", "bench-none"},
          {"type", "erdma-cni"},
          {"mode", "none"},
          {"device", {{"name", "eth1"}}},
          {"dataDir", data_dir},
          {"capabilities", {{"io.kubernetes.cri.pod-annotations", true}}},
          {"runtimeConfig",
           {{"io.kubernetes.cri.pod-annotations", {{"network.alibabacloud.com/erdma-smcr", "true"}}}}},
          {"smcr", {{"onUnsupported", "warn"}}},
          {"prevResult", prev}};
}

namespace {

// Debian's static IPAM: one address and a default route via the VPC gateway.
json StaticIpam(const std::string& address, const std::string& gateway = kGateway) {
  return {{"type", "static"},
          {"addresses", json::array({{{"address", address}, {"gateway", gateway}}})},
          {"routes", json::array({{{"dst", "0.0.0.0/0"}, {"gw", gateway}}})}};
}

}  // namespace

// The parent is selected as a move-mode device is; IPAM's routes are not
// installed (erdma-cni makes its own policy routes from the gateway).
json ErdmaMacvlanConfig(const std::string& data_dir, const std::string& parent, const std::string& address,
                        const std::string& gateway) {
  return {{"cniVersion", kVersion},
          {"name", "bench-macvlan"},
          {"type", "erdma-cni"},
          {"mode", "macvlan"},
          {"device", {{"name", parent}}},
          {"macvlan", {{"mode", "bridge"}}},
          {"ipam", StaticIpam(address, gateway)},
          {"dataDir", data_dir}};
}

json HostDeviceConfig(const Eni& e) {
  return {{"cniVersion", kVersion},
          {"name", "bench-go"},
          {"type", "host-device"},
          {"device", e.name},
          {"ipam", StaticIpam(e.ip4 + "/24")}};
}

json MacvlanConfig(const std::string& parent) {
  return {{"cniVersion", kVersion}, {"name", "bench-go-macvlan"}, {"type", "macvlan"},
          {"master", parent},       {"mode", "bridge"},           {"ipam", StaticIpam(kChildAddress)}};
}

json SbrConfig(const std::string& network) {
  return {{"cniVersion", kVersion}, {"name", network}, {"type", "sbr"}};
}

json WithPrev(json c, const json& prev) {
  c["prevResult"] = prev;
  return c;
}

void Settle(const Options& opt) {
  if (opt.settle_ms > 0) usleep(static_cast<useconds_t>(opt.settle_ms) * 1000);
}

namespace {
int g_run_id = 0;
}  // namespace

void SetRunId(int id) { g_run_id = id; }

std::string DataDirPrefix() { return "erdma-bench-" + std::to_string(g_run_id) + "-"; }

namespace {

std::string RootDir(const std::string& root) { return root.empty() || root == "tmpfs" ? "/tmp" : root; }

// The driver's own tmpfs (mounted once, in its private mount namespace).
const std::string& TmpfsRoot() {
  static const std::string path = [] {
    std::string p = "/tmp/" + DataDirPrefix() + "tmpfs";
    if (::mkdir(p.c_str(), 0700) != 0 && errno != EEXIST) throw std::runtime_error("mkdir " + p + " failed");
    if (::mount("erdma-bench", p.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=64m,mode=0700") != 0)
      throw std::runtime_error("mounting a tmpfs on " + p + ": " + std::strerror(errno));
    return p;
  }();
  return path;
}

}  // namespace

void MountRecordsTmpfs() {
  const std::string dir = conf::kAttachmentsDir;
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    throw std::runtime_error("mkdir " + dir + " failed");
  if (::mount("erdma-bench", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=16m,mode=0700") != 0)
    throw std::runtime_error("mounting a tmpfs on " + dir + ": " + std::strerror(errno));
}

std::string DataRootFs(const std::string& root) {
  struct statfs st {};
  const std::string dir = root == "tmpfs" ? TmpfsRoot() : RootDir(root);
  if (::statfs(dir.c_str(), &st) != 0) return "unknown";
  switch (static_cast<unsigned long>(st.f_type)) {
    case TMPFS_MAGIC: return "tmpfs";
    case EXT4_SUPER_MAGIC: return "ext4";
    case XFS_SUPER_MAGIC: return "xfs";
    case BTRFS_SUPER_MAGIC: return "btrfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    default: {
      char hex[32];
      std::snprintf(hex, sizeof hex, "f_type 0x%lx", static_cast<unsigned long>(st.f_type));
      return hex;
    }
  }
}

bool ExecFloor(const Options& opt, const std::string& pod, const std::string& ifname, const json& input,
               Results& r, bool rec, const std::string& row) {
  auto run = [&](const char* command, const json& in) -> std::optional<Outcome> {
    Settle(opt);
    Invocation inv;
    inv.argv = {ERDMA_BENCH_FLOOR_EXEC, command, pod, ifname};
    inv.stdin_text = in.dump();
    Outcome o = Spawn(inv);
    if (o.exit != 0) {
      std::cerr << "erdma-bench: exec'd floor " << row << " " << command << ": " << o.err << "\n";
      return std::nullopt;
    }
    // Less its input's and output's JSON, which the plugin's own share is
    // to hold (the program says how much on stderr).
    const size_t at = o.err.rfind("io-us=");
    if (at == std::string::npos) {
      std::cerr << "erdma-bench: exec'd floor " << command << " did not say io-us\n";
      return std::nullopt;
    }
    const double io_ms = std::stod(o.err.substr(at + 6)) / 1000;
    if (rec) r.rows[row + " " + command].Add(o.wall_ms, o.cpu_ms - io_ms, static_cast<double>(o.maxrss_kib));
    return o;
  };
  auto add = run("ADD", input);
  if (!add) return false;
  json del_input = input;
  del_input["state"] = json::parse(add->out, nullptr, /*allow_exceptions=*/false);
  return run("DEL", del_input).has_value();
}

void AddPhases(Results& r, const std::string& row, const Outcome& o) {
  constexpr std::string_view kHead = base::phase::kReportHead;
  const size_t at = o.err.find(kHead);
  if (at == std::string::npos) return;
  std::istringstream in(o.err.substr(at + kHead.size(), o.err.find('\n', at) - at - kHead.size()));
  std::string item;
  auto& phases = r.phases[row];
  double sum = 0;
  std::optional<double> ipam_ms;
  while (in >> item) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = item.substr(0, eq);
    if (std::find(r.phase_order.begin(), r.phase_order.end(), name) == r.phase_order.end())
      r.phase_order.push_back(name);
    phases[name].push_back(std::stod(item.substr(eq + 1)) / 1000);
    sum += phases[name].back();
    if (name == ipam::kPluginPhase) ipam_ms = phases[name].back();
  }
  // What the account leaves out: the exit (atexit, the kernel's teardown of
  // the process) and the report's own clock reads, per invocation.
  phases[kPhaseExit].push_back(o.cpu_ms - sum);
  phases[kPhaseRusage].push_back(o.cpu_ms);
  if (ipam_ms) phases[kPhaseLessIpam].push_back(o.cpu_ms - *ipam_ms);
}

void RemoveDataDirs(const std::string& root) {
  const std::filesystem::path dir = RootDir(root);
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(DataDirPrefix(), 0) == 0)
      std::filesystem::remove_all(e.path(), ec);
}

std::string MakeDataDir(const std::string& root) {
  std::string tmpl = (root == "tmpfs" ? TmpfsRoot() : RootDir(root)) + "/" + DataDirPrefix() + "XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp under " + root + " failed");
  return tmpl + "/data";
}

}  // namespace bench
