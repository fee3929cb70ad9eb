// erdma-bench-floor-exec: the floor as a process of its own, linked as
// erdma-cni is (static, -Os, the same libraries), so that its CPU from
// wait4 holds what an exec'd plugin pays around the same rtnetlink requests
// and the in-process floor cannot show: the exec and start-up of this very
// image, and the exit of a process that has moved a device
// (docs/performance.md, "The plugin's own share"). erdma-cni's own share is its CPU less
// this program's, less the CPU this program spends reading its input and
// writing its output (JSON, as the plugin reads its config and state), which
// it prints last on stderr: "io-us=N".
//   erdma-bench-floor-exec ADD|DEL POD_NETNS IFNAME < {"config": ..., "ips": ..., "state": ...}
// ("ips": the child modes' addresses, [{"address": "10.9.0.250/24",
// "gateway": "10.9.0.1"}], as the IPAM plugin would give them)
// ADD prints the attachment's state (StateText) on stdout; DEL reads it back
// from "state". Runs in the calling process's netns (the node's).
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "base/json_parse.h"
#include "cni/driver/registry.h"
#include "cni/state/state.h"
#include "conf/config.h"
#include "integration/bench/floor.h"
#include "ipam/ipam.h"

namespace {

long CpuUs() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1'000'000L + t.tv_nsec / 1000;
}

// The input's and the output's CPU, on stderr as the last thing done.
int Done(int rc, long io_us) {
  std::fprintf(stderr, "io-us=%ld\n", io_us);
  return rc;
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "erdma-bench-floor-exec: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) return Fail("usage: erdma-bench-floor-exec ADD|DEL POD_NETNS IFNAME < {config, state}");
  const std::string command = argv[1];
  const long t0 = CpuUs();
  std::string in;
  char buf[65536];
  for (ssize_t n; (n = ::read(STDIN_FILENO, buf, sizeof buf)) > 0;) in.append(buf, static_cast<size_t>(n));
  auto input = base::ParseJson(in, "stdin", 64);
  if (!input.ok() || !input->is_object() || !input->contains("config"))
    return Fail("stdin: {\"config\": ...}");
  auto cfg = conf::Parse(cni::Modes(), (*input)["config"].dump());
  if (!cfg.ok()) return Fail("config: " + cfg.error().msg);
  bench::FloorSpec spec;
  spec.cfg = *cfg;
  spec.pod_netns = argv[2];
  spec.pod_if = argv[3];
  // The child modes: the addresses the IPAM plugin would give.
  for (const auto& ip : input->value("ips", nlohmann::json::array())) {
    auto address = netlink::IpPrefix::Parse(ip.value("address", ""));
    auto gateway = netlink::IpAddress::Parse(ip.value("gateway", ""));
    if (!address) return Fail("ips: an address is a prefix, e.g. 10.9.0.250/24");
    spec.ips.push_back(ipam::IpConfig{*address, gateway});
  }
  if (command == "ADD") {
    const long t1 = CpuUs();
    auto att = bench::FloorAdd(spec);
    if (!att.ok()) return Fail("ADD: " + att.error().msg + " (" + att.error().details + ")");
    const long t2 = CpuUs();
    const std::string text = cni::StateText(att->st);
    const bool written =
        ::write(STDOUT_FILENO, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    return Done(written ? 0 : 1, (t1 - t0) + (CpuUs() - t2));
  }
  if (command == "DEL") {
    if (!input->contains("state")) return Fail("DEL: stdin has no \"state\"");
    auto st = cni::StateFromJson((*input)["state"]);
    if (!st.ok()) return Fail("state: " + st.error().msg);
    const bench::FloorAttachment att{*st};
    const long t1 = CpuUs();
    auto del = bench::FloorDel(spec, att);
    if (!del.ok()) return Fail("DEL: " + del.error().msg + " (" + del.error().details + ")");
    return Done(0, t1 - t0);
  }
  return Fail("the command is ADD or DEL");
}
