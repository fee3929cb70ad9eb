// erdma-cni-nri: the NRI agent. Connects to the runtime's NRI socket, registers, and gives each container of
// a pod erdma-cni attached RDMA rails to its locked-memory limit, its rails' device nodes, NCCL_IB_HCA and,
// on a flat topology, an NCCL topology file (nri/adjust.h); every other container gets an empty adjustment
// at once. Reconnects when the runtime goes.
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/escape.h"
#include "base/fault.h"
#include "conf/node.h"
#include "nri/adjust.h"
#include "nri/loop.h"
#include "nri/pods.h"
#include "nri/session.h"
#include "nri/topology.h"

namespace {

void Log(const std::string& line) {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  tm utc{};
  ::gmtime_r(&ts.tv_sec, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &utc);
  std::fprintf(stderr, "%s erdma-cni-nri: %s\n", stamp, base::EscapeForDisplay(line).c_str());
}

constexpr const char* kUsage =
    "usage: erdma-cni-nri [--socket PATH] [--index NN] [--memlock BYTES|unlimited] [--topology-dir DIR]\n"
    "                     [--once] [--version]\n"
    "  --socket   the runtime's NRI socket (default /var/run/nri/nri.sock)\n"
    "  --index    the plugin's index among the runtime's NRI plugins (default 50)\n"
    "  --memlock  RLIMIT_MEMLOCK for the containers of attached pods (Ki, Mi, Gi suffixes; default: the\n"
    "             node file's nriMemlock; without either the runtime's limit is left)\n"
    "  --topology-dir  where the NCCL topology files of containers on a flat topology are written (default\n"
    "             /run/erdma-cni-nri; \"\" writes none)\n"
    "  --once     serve one connection, then exit (0 when the runtime closed it)\n"
    "  --version  print the version and exit\n"
    "The node file (ERDMA_CNI_NODE_CONFIG, default /etc/erdma-cni/node.json) says where the plugin's\n"
    "attachment records and states are.\n";

std::string Summary(const nri::Decision& d) {
  std::string s;
  for (const auto& r : d.adjust.rlimits) s += " " + r.type + "=" + std::to_string(r.soft);
  for (const auto& dev : d.adjust.devices) s += " " + dev.path;
  for (const auto& [k, v] : d.adjust.env) s += " " + k + "=" + v;
  for (const auto& m : d.adjust.mounts) s += " " + m.source + " at " + m.destination;
  for (const auto& n : d.notes) s += "; " + n;
  return s.empty() ? " nothing" : s;
}

// The NCCL topology file of container `c` of attached pod `pod`, written under `dir`; none (and why in
// `notes`, when the container names GPUs) where the topology is not flat or a part is missing.
std::optional<std::string> Topology(const nri::CreateContainer& c, const nri::PodRdma& pod,
                                    const std::string& dir, const std::string& sysfs,
                                    const std::string& procfs, std::vector<std::string>* notes) {
  const std::vector<nri::TopologyGpu> gpus = nri::GpusOf(c.container, sysfs, procfs, notes);
  if (gpus.empty()) return std::nullopt;
  std::vector<nri::TopologyRail> rails;
  for (const nri::PodRdma::Rail& r : pod.rails) rails.push_back({r.rdma_device, r.pci});
  std::string why;
  const auto switches = nri::PlanTopology(rails, gpus, &why);
  if (switches.empty()) {
    notes->push_back("no NCCL topology file: " + why);
    return std::nullopt;
  }
  auto path = nri::WriteTopology(dir, c.pod.id, c.container.id, nri::NcclTopologyXml(switches));
  if (!path.ok()) {
    notes->push_back("no NCCL topology file: " + path.error().msg);
    return std::nullopt;
  }
  return *path;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket = nri::kDefaultSocket, index = "50";
  std::string topology_dir = "/run/erdma-cni-nri";
  std::optional<uint64_t> memlock_flag;
  bool once = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "erdma-cni-nri: %s needs a value\n%s", argv[i], kUsage);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--socket") {
      socket = value();
    } else if (a == "--index") {
      index = value();
      if (index.size() != 2 || index.find_first_not_of("0123456789") != std::string::npos) {
        std::fprintf(stderr, "erdma-cni-nri: --index %s: two digits, 00..99\n", index.c_str());
        return 2;
      }
    } else if (a == "--memlock") {
      const std::string v = value();
      memlock_flag = conf::ParseMemlock(v);
      if (!memlock_flag) {
        std::fprintf(stderr, "erdma-cni-nri: --memlock %s: bytes (Ki, Mi, Gi) or unlimited\n", v.c_str());
        return 2;
      }
    } else if (a == "--topology-dir") {
      topology_dir = value();
      if (!topology_dir.empty() && topology_dir.front() != '/') {
        std::fprintf(stderr, "erdma-cni-nri: --topology-dir %s: an absolute path, or \"\"\n",
                     topology_dir.c_str());
        return 2;
      }
    } else if (a == "--once") {
      once = true;
    } else if (a == "--version") {
      std::printf("erdma-cni-nri %s\n", ERDMA_CNI_VERSION);
      return 0;
    } else {
      std::fprintf(stderr, "%s", kUsage);
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  std::string sysfs = "/sys", procfs = "/proc";
  if constexpr (base::fault::kEnabled) {
    // Test builds only: sysfs and procfs trees laid out by a test.
    if (const char* root = std::getenv("ERDMA_CNI_TEST_SYSFS"); root && *root) sysfs = root;
    if (const char* root = std::getenv("ERDMA_CNI_TEST_PROCFS"); root && *root) procfs = root;
  }
  std::string last_failure, last_node_error;  // the last connect and node-file errors logged
  for (;;) {
    auto node = conf::LoadNodePolicy(std::getenv(conf::kNodeConfigEnv));
    if (!node.ok()) {
      if (node.error().msg != last_node_error)
        Log(node.error().msg + "; every container gets nothing until it is fixed");
      last_node_error = node.error().msg;
      node = conf::NodePolicy{};
      node->attachments_dir = "";  // no records: nothing is adjusted
    } else {
      last_node_error.clear();
    }
    const nri::AgentPolicy policy{memlock_flag ? memlock_flag : node->nri_memlock};
    nri::Handlers handlers;
    handlers.create_container = [&](const nri::CreateContainer& c) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<std::string> notes;
      nri::PodRdma pod =
          node->attachments_dir.empty() ? nri::PodRdma{} : nri::RailsOf(*node, c.pod.id, sysfs, &notes);
      if (!pod.rails.empty() && !topology_dir.empty() && nri::WantsTopology(c.container))
        pod.topology_file = Topology(c, pod, topology_dir, sysfs, procfs, &notes);
      nri::Decision d = nri::Adjust(c, pod, policy);
      d.notes.insert(d.notes.begin(), notes.begin(), notes.end());
      if (!pod.rails.empty() || !d.notes.empty()) {
        const auto us =
            std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0)
                .count();
        Log("pod " + c.pod.ns + "/" + c.pod.name + " container " + c.container.name + ":" + Summary(d) +
            " (" + std::to_string(us) + " us)");
      }
      return d;
    };
    if (!topology_dir.empty()) {
      handlers.pod_removed = [&](const nri::Pod& p) { nri::RemoveTopologies(topology_dir, p.id); };
      handlers.synchronized = [&](const std::vector<nri::Pod>& pods) {
        std::vector<std::string> live;
        for (const nri::Pod& p : pods) live.push_back(p.id);
        nri::KeepTopologies(topology_dir, live);
      };
    }
    handlers.configured = [&](const nri::Configure& c) {
      Log("registered with " + c.runtime_name + " " + c.runtime_version + " as " + index + "-erdma-cni" +
          (c.request_timeout_ms > 0 ? " (its request limit: " + std::to_string(c.request_timeout_ms) + " ms)"
                                    : ""));
    };
    auto fd = nri::Connect(socket);
    if (!fd.ok()) {
      // Tried every second; said once until it changes (NRI off is a state, not news).
      if (fd.error().msg != last_failure) Log(fd.error().msg + "; is NRI on in the runtime? (docs/nri.md)");
      last_failure = fd.error().msg;
      if (once) return 1;
      ::sleep(1);
      continue;
    }
    last_failure.clear();
    nri::Session session("erdma-cni", index, handlers);
    const base::Status ended = nri::Serve(fd->get(), session);
    Log(ended.error().msg + " after " + std::to_string(session.answered()) + " request(s)");
    if (once) return session.registered() && ended.error().code == base::Code::kIo ? 0 : 1;
    ::sleep(1);
  }
}
