#include "cni/admin/help.h"

#include "conf/names.h"
#include "conf/version.h"

namespace cni {

std::string HelpText(const std::string& build) {
  return std::string("erdma-cni ") + ERDMA_CNI_VERSION + " (" + build +
         ")\n"
         "A CNI plugin that gives Kubernetes pods RDMA networking: it moves or shares a node's RDMA device "
         "into the pod.\n"
         "CNI versions: " +
         conf::Join(conf::SupportedVersions(), " ") +
         "\n\n"
         "A container runtime runs it with CNI_COMMAND set (ADD, DEL, CHECK, VERSION, GC, STATUS) and the\n"
         "network config on stdin; then its arguments are ignored. By hand, on a node, as root:\n"
         "  diag     what the node and a pod show: RDMA devices and ports, netdevs, SMC, memlock, and\n"
         "           erdma-cni's attachments against the kernel (erdma-cni diag --help)\n"
         "  clear    clears an attachment whose DEL keeps failing, or a claim or share left behind by a\n"
         "           container that never ran, putting back what can be put back (erdma-cni clear --help)\n"
         "  --version  the version and build\n"
         "  --help     this text\n\n"
         "Docs: /usr/share/doc/erdma-cni (the Debian package) or docs/ in the source: troubleshooting.md\n"
         "(diag and clear), config.md, errors.md, security.md, reliability.md, install.md, deploy.md.\n";
}

}  // namespace cni
