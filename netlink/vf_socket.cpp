#include "netlink/vf_socket.h"

#include <linux/netlink.h>

#include <cerrno>
#include <utility>

#include "netlink/transport.h"
#include "netlink/vf_codec.h"

namespace netlink {
namespace {

using base::Result;
using base::Status;

class VfSocket final : public Vf {
 public:
  explicit VfSocket(Socket sock) : sock_(std::move(sock)) {}

  Result<std::vector<VfState>> List(int pf_index) override {
    const std::string what = "RTM_GETLINK dev " + std::to_string(pf_index) + " (VF list)";
    // A PF's answer is one message, its VF list near 64 KiB at most: the socket grows its buffer for it.
    ASSIGN_OR_RETURN(std::vector<raw::Bytes> answer, sock_.Exchange(what, [pf_index](uint32_t seq) {
      return vfmsg::BuildGetLink(seq, pf_index);
    }));
    if (answer.empty()) return SysError(what, EBADMSG, "the kernel acknowledged without an answer");
    return WithWhat(vfmsg::ParseVfList(answer.front()), what);
  }

  Status Set(int pf_index, const VfSettings& s) override {
    const std::string what = "RTM_NEWLINK dev " + std::to_string(pf_index) + " " + DescribeVfSettings(s);
    return sock_.Command(what, [&](uint32_t seq) { return vfmsg::BuildSetVf(seq, pf_index, s); });
  }

 private:
  Socket sock_;
};

}  // namespace

base::Result<std::unique_ptr<Vf>> OpenVf(const Netns& ns) {
  const std::string what = "opening an rtnetlink socket for VF settings in " + ns.path();
  ASSIGN_OR_RETURN(Socket sock, Socket::Open(ns, NETLINK_ROUTE, what, /*large_answers=*/true));
  return std::unique_ptr<Vf>(std::make_unique<VfSocket>(std::move(sock)));
}

}  // namespace netlink
