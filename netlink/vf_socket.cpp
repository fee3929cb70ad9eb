#include "netlink/vf_socket.h"

#include <linux/netlink.h>

#include <cerrno>
#include <utility>

#include "netlink/raw_socket.h"
#include "netlink/vf_codec.h"

namespace netlink {
namespace {

using base::Result;
using base::Status;

// A PF's answer is one message: its link attributes and IFLA_VFINFO_LIST,
// whose u16 length caps it near 64 KiB. recvmsg truncates a message that
// does not fit the buffer, so the buffer must hold it whole.
constexpr size_t kReceiveSize = size_t{128} * 1024;

class VfSocket final : public Vf {
 public:
  explicit VfSocket(raw::Socket sock) : sock_(std::move(sock)) {}

  Result<std::vector<VfState>> List(int pf_index) override {
    const std::string what = "RTM_GETLINK dev " + std::to_string(pf_index) + " (VF list)";
    ASSIGN_OR_RETURN(raw::Reply reply, sock_.Exchange(what, [pf_index](uint32_t seq) {
      return vfmsg::BuildGetLink(seq, pf_index);
    }));
    if (reply.messages.empty())
      return raw::SysError(what, EBADMSG, "the kernel acknowledged without an answer");
    return raw::WithWhat(vfmsg::ParseVfList(reply.messages.front()), what);
  }

  Status Set(int pf_index, const VfSettings& s) override {
    const std::string what = "RTM_NEWLINK dev " + std::to_string(pf_index) + " " + DescribeVfSettings(s);
    return sock_.Command(what, [&](uint32_t seq) { return vfmsg::BuildSetVf(seq, pf_index, s); });
  }

 private:
  raw::Socket sock_;
};

}  // namespace

base::Result<std::unique_ptr<Vf>> OpenVf(const Netns& ns) {
  const std::string what = "opening an rtnetlink socket for VF settings in " + ns.path();
  ASSIGN_OR_RETURN(raw::Socket sock,
                   raw::Socket::Open(ns, NETLINK_ROUTE, "NETLINK_ROUTE", what, kReceiveSize));
  return std::unique_ptr<Vf>(std::make_unique<VfSocket>(std::move(sock)));
}

}  // namespace netlink
