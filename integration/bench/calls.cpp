#include "integration/bench/calls.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

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

json ErdmaKubeletConfig(const Options& opt, const std::string& data_dir) {
  json c = ErdmaConfig(opt, data_dir, "");
  c["device"] = {{"resource", kKubeletResource}};
  return c;
}

// Mode none chained after Terway, SMC-R asked for through the pod annotation
// (containerd's runtimeConfig), everything the kernel lacks only warned about.
json NoneConfig(const Options& opt, const std::string& data_dir) {
  if (!opt.none_config.empty()) {
    std::ifstream in(opt.none_config);
    return json::parse(in);
  }
  json prev = {
      {"cniVersion", kVersion},
      {"interfaces", json::array({{{"name", "eth0"}, {"sandbox", "x"}}})},
      {"ips", json::array({{{"address", "172.16.0.5/24"}, {"gateway", "172.16.0.1"}, {"interface", 0}}})},
      {"routes", json::array({{{"dst", "0.0.0.0/0"}}})},
      {"dns", json::object()}};
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
json StaticIpam(const std::string& address) {
  return {{"type", "static"},
          {"addresses", json::array({{{"address", address}, {"gateway", kGateway}}})},
          {"routes", json::array({{{"dst", "0.0.0.0/0"}, {"gw", kGateway}}})}};
}

}  // namespace

// The parent is selected as a move-mode device is; IPAM's routes are not
// installed (erdma-cni makes its own policy routes from the gateway).
json ErdmaMacvlanConfig(const std::string& data_dir, const std::string& parent) {
  return {{"cniVersion", kVersion},
          {"name", "bench-macvlan"},
          {"type", "erdma-cni"},
          {"mode", "macvlan"},
          {"device", {{"name", parent}}},
          {"macvlan", {{"mode", "bridge"}}},
          {"ipam", StaticIpam(kChildAddress)},
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

void RemoveDataDirs(const std::string& root) {
  const std::filesystem::path dir = root.empty() ? std::string("/tmp") : root;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.path().filename().string().rfind(DataDirPrefix(), 0) == 0)
      std::filesystem::remove_all(e.path(), ec);
}

std::string MakeDataDir(const std::string& root) {
  std::string tmpl = (root.empty() ? std::string("/tmp") : root) + "/" + DataDirPrefix() + "XXXXXX";
  if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp under " + root + " failed");
  return tmpl + "/data";
}

}  // namespace bench
