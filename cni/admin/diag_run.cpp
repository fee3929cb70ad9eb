// `erdma-cni diag` on the command line: its options, the dataDirs it searches, and the real sources it opens.
#include "cni/admin/diag_run.h"

#include <sys/stat.h>

#include "base/escape.h"
#include "base/file.h"
#include "cni/admin/data_dirs.h"
#include "cni/admin/diag.h"
#include "cni/admin/diag_render.h"
#include "cni/state/state.h"
#include "conf/names.h"
#include "netlink/netns.h"
#include "netlink/rdma_socket.h"
#include "netlink/rtnl_socket.h"
#include "netlink/smc_socket.h"
#include "netlink/sysctl.h"

namespace cni {

using nlohmann::json;

namespace {

constexpr const char* kDiagUsage =
    "usage: erdma-cni diag [--netns PATH | --container ID] [--data-dir DIR] [--cni-conf-dir DIR]\n"
    "                      [--nri-socket PATH] [--json]\n"
    "  --netns PATH      the pod netns to look at (e.g. /var/run/netns/cni-...); default: the node\n"
    "  --container ID    the pod sandbox whose netns erdma-cni recorded (CNI_CONTAINERID)\n"
    "  --data-dir DIR    the one dataDir whose states are checked (default: every dataDir the node\n"
    "                    file /etc/erdma-cni/node.json allows, or /run/erdma-cni without one)\n"
    "  --cni-conf-dir DIR  the node's CNI config directory, whose erdma-cni entries are judged as\n"
    "                    erdma-cni-install judges them (default /etc/cni/net.d)\n"
    "  --nri-socket PATH   the runtime's NRI socket, for the agent (default /var/run/nri/nri.sock)\n"
    "  --json            the report as one JSON object\n";

// The netns erdma-cni recorded for the pod sandbox `container_id`, in any network of the dataDirs.
base::Result<std::string> NetnsOfContainer(const std::vector<std::string>& data_dirs,
                                           const std::string& container_id) {
  std::string netns;
  auto find = [&](const StateStore& store, const std::string& path) {
    auto loaded = store.Load(path);
    if (loaded.ok() && *loaded && (*loaded)->container_id == container_id) netns = (*loaded)->netns;
    return !netns.empty();
  };
  for (const std::string& data_dir : data_dirs)
    if (base::CheckPrivateDir(data_dir).ok() && ForEachState(data_dir, find, [](const base::Error&) {}) &&
        !netns.empty())
      return netns;
  const std::string searched = conf::Join(data_dirs, ", ");
  return base::Error(base::Code::kInvalidConfig,
                     "--container: no erdma-cni state of container " + container_id + " under " +
                         (searched.empty() ? std::string("any dataDir") : searched) +
                         " (the pod sandbox ID, as `crictl pods --no-trunc` shows it; or give --netns, "
                         "or --data-dir for a dataDir the node file does not list)");
}

}  // namespace

int RunDiag(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  DiagOptions opts;
  std::string container, data_dir;
  auto refuse = [&err](const std::string& msg) {
    err << "erdma-cni diag: " << msg;
    return 2;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      opts.json = true;
    } else if (a == "--help" || a == "-h") {
      out << kDiagUsage;
      return 0;
    } else if (a == "--netns" || a == "--data-dir" || a == "--container" || a == "--cni-conf-dir" ||
               a == "--nri-socket") {
      if (i + 1 >= args.size()) return refuse(a + " needs a value; " + kDiagUsage);
      (a == "--netns"        ? opts.netns
       : a == "--data-dir"   ? data_dir
       : a == "--container"  ? container
       : a == "--nri-socket" ? opts.nri_socket
                             : opts.cni_conf_dir) = args[++i];
    } else {
      return refuse("unknown option " + base::EscapeForDisplay(a) + "; " + kDiagUsage);
    }
  }
  auto dirs = FindAdminDataDirs(data_dir, container);
  if (!dirs.ok()) return refuse(dirs.error().msg + "\n");
  opts.data_dirs = dirs->dirs;
  opts.unsearched = dirs->unsearched;
  opts.pod_resources_socket = dirs->pod_resources_socket;
  opts.node_source = dirs->node_source;
  if (!container.empty()) {
    if (!opts.netns.empty()) return refuse("give --netns or --container, not both\n");
    auto netns = NetnsOfContainer(opts.data_dirs, container);
    if (!netns.ok()) return refuse(netns.error().msg + "\n");
    opts.netns = *netns;
  }
  DiagSources src;
  auto ns = opts.netns.empty() ? netlink::Netns::Current() : netlink::Netns::Open(opts.netns, "--netns");
  if (!ns.ok()) return refuse(ns.error().msg + "\n");
  struct stat sb {};
  if (::fstat(ns->fd(), &sb) == 0) src.netns_inode = sb.st_ino;
  if (auto k = netlink::OpenRtnl(*ns); k.ok()) src.links = std::move(k).value();
  if (auto r = netlink::OpenRdma(*ns); r.ok())
    src.rdma = std::move(r).value();
  else
    src.rdma_error = r.error().msg;
  if (auto s = netlink::OpenSysctl(*ns); s.ok()) src.sysctl = std::move(s).value();
  if (auto s = netlink::OpenSmc(*ns); s.ok())
    src.smc = std::move(s).value();
  else
    src.smc_error = s.error().msg;
  json report = Diagnose(opts, src);
  if (opts.json)
    out << report.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  else
    out << RenderDiag(report);
  return report["problems"].empty() ? 0 : 1;
}

}  // namespace cni
