// netlink::Socket, the one netlink transport, against the real kernel: the
// answers the kernel gives (ACKs, errors with their extended ACK text, a
// query's answer and its ACK, dumps over many datagrams) and the checks the
// socket makes on them. rtnetlink stands in for every protocol: RDMA and
// generic netlink go through the same socket (their own tests run where the
// kernel has them). iproute2 is the independent witness.
#include "netlink/transport.h"

#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "netlink/netns.h"
#include "netlink/raw_message.h"
#include "netlink/rtnl_socket.h"
#include "test/kernel/require_ok.h"
#include "test/kernel/scratch_netns.h"

namespace test_kernel_transport_test {

namespace {

using netlink::Socket;
using netlink::raw::Bytes;
using rt_test::ScratchNetns;

Socket OpenIn(const ScratchNetns& ns) {
  auto handle = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE_OK(handle);
  auto sock = Socket::Open(*handle, NETLINK_ROUTE, "test socket");
  REQUIRE_OK(sock);
  return std::move(sock).value();
}

/// RTM_GETLINK for one link, or a dump of them.
Bytes GetLink(uint32_t seq, int index, uint16_t flags) {
  netlink::raw::Request req(RTM_GETLINK, flags, seq);
  if (auto* ifi = static_cast<ifinfomsg*>(req.PutExtraHeader(sizeof(ifinfomsg)))) ifi->ifi_index = index;
  return std::move(req).Finish();
}

nlmsghdr Header(const Bytes& m) {
  nlmsghdr h{};
  REQUIRE(m.size() >= sizeof h);
  std::memcpy(&h, m.data(), sizeof h);
  return h;
}

}  // namespace

TEST_CASE("a query gets its one answer before the ACK, and a missing link the kernel's errno",
          "[transport]") {
  ScratchNetns ns;
  Socket sock = OpenIn(ns);
  auto lo =
      sock.Exchange("RTM_GETLINK lo", [](uint32_t seq) { return GetLink(seq, 1, netlink::raw::kCommand); });
  REQUIRE_OK(lo);
  REQUIRE(lo->size() == 1);
  CHECK(Header(lo->front()).nlmsg_type == RTM_NEWLINK);
  CHECK(Header(lo->front()).nlmsg_len == lo->front().size());

  auto missing = sock.Exchange("RTM_GETLINK 4242",
                               [](uint32_t seq) { return GetLink(seq, 4242, netlink::raw::kCommand); });
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().sys_errno == ENODEV);
  CHECK(missing.error().code == base::Code::kKernel);
  CHECK(missing.error().msg.rfind("RTM_GETLINK 4242: ", 0) == 0);
}

TEST_CASE("the kernel's refusal reaches the error with its extended ACK text", "[transport]") {
  ScratchNetns ns;
  Socket sock = OpenIn(ns);
  auto r = sock.Command("RTM_NEWLINK kind ecni-none", [](uint32_t seq) -> base::Result<Bytes> {
    netlink::raw::Request req(RTM_NEWLINK, netlink::raw::kCommand | NLM_F_CREATE | NLM_F_EXCL, seq);
    req.PutExtraHeader(sizeof(ifinfomsg));
    req.PutString(IFLA_IFNAME, "ecni0");
    nlattr* info = req.BeginNest(IFLA_LINKINFO);
    req.PutString(IFLA_INFO_KIND, "ecni-none");
    req.EndNest(info);
    return std::move(req).Finish();
  });
  REQUIRE_FALSE(r.ok());
  INFO(r.error().msg << " | " << r.error().details);
  CHECK(r.error().sys_errno == EOPNOTSUPP);
  // rtnl_newlink: NL_SET_ERR_MSG(extack, "Unknown device type").
  CHECK(r.error().details.find("Unknown device type") != std::string::npos);
}

TEST_CASE("a dump over many datagrams gives every message, whole and in order", "[transport]") {
  ScratchNetns ns;
  // 300 veth pairs: 600 links, well over one 32 KiB datagram of RTM_NEWLINK.
  const std::string batch = "/tmp/ecni-transport-" + ns.name();
  {
    std::ofstream out(batch);
    for (int i = 0; i < 300; ++i) out << "link add a" << i << " type veth peer name b" << i << "\n";
  }
  const rt_test::Cmd added = rt_test::Run("ip -n " + ns.name() + " -batch " + batch);
  std::remove(batch.c_str());
  INFO(added.out);
  REQUIRE(added.exit == 0);
  Socket sock = OpenIn(ns);
  auto links =
      sock.DumpBytes("RTM_GETLINK dump", [](uint32_t seq) { return GetLink(seq, 0, netlink::raw::kDump); });
  REQUIRE_OK(links);
  const nlohmann::json witness = ns.Json("link show");
  REQUIRE(links->size() == witness.size());
  size_t total = 0;
  for (size_t i = 0; i < links->size(); ++i) {
    const Bytes& m = (*links)[i];
    const nlmsghdr h = Header(m);
    CHECK(h.nlmsg_type == RTM_NEWLINK);
    CHECK(h.nlmsg_len == m.size());
    ifinfomsg ifi{};
    REQUIRE(m.size() >= NLMSG_HDRLEN + sizeof ifi);
    std::memcpy(&ifi, m.data() + NLMSG_HDRLEN, sizeof ifi);
    CHECK(ifi.ifi_index == witness[i]["ifindex"].get<int>());
    total += m.size();
  }
  CHECK(total > 2 * Socket::kReceiveSize);
}

TEST_CASE("an rtnetlink message larger than a dump's datagram is read whole, without a peek", "[transport]") {
  // 480 alternative names of 100 bytes put one RTM_NEWLINK past 50 KiB:
  // past the 32 KiB a dump datagram holds, near what the kernel lets a
  // link's property list take ("effective property list too long").
  ScratchNetns ns;
  const std::string batch = "/tmp/erdma-transport-altnames-" + std::to_string(getpid());
  {
    std::ofstream out(batch);
    out << "link add v0 type veth peer name v1\n";
    for (int i = 0; i < 480; ++i) {
      std::string name = "a" + std::to_string(i);
      name.resize(100, 'x');
      out << "link property add dev v0 altname " << name << "\n";
    }
  }
  const rt_test::Cmd added = rt_test::Run("ip -n " + ns.name() + " -batch " + batch);
  std::remove(batch.c_str());
  INFO(added.out);
  REQUIRE(added.exit == 0);
  const int index = ns.Json("link show v0")[0]["ifindex"].get<int>();
  Socket sock = OpenIn(ns);
  auto one = sock.Exchange("RTM_GETLINK v0",
                           [&](uint32_t seq) { return GetLink(seq, index, netlink::raw::kCommand); });
  REQUIRE_OK(one);
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].size() > Socket::kReceiveSize + 16384);
  CHECK((*one)[0].size() < Socket::kRouteReceiveSize);
  // The same link through the plugin's own verbs: by name, and in the dump
  // of every link (it asks as the plugin does, without statistics).
  auto handle = netlink::Netns::Open(ns.path(), "test netns");
  REQUIRE_OK(handle);
  auto kernel = netlink::OpenRtnl(*handle);
  REQUIRE_OK(kernel);
  auto v0 = (*kernel)->FindLink("v0");
  REQUIRE_OK(v0);
  REQUIRE(v0->has_value());
  CHECK((*v0)->index == index);
  auto links = (*kernel)->ListLinks();
  REQUIRE_OK(links);
  std::vector<std::string> names;
  for (const auto& l : *links) names.push_back(l.name);
  CHECK(names == std::vector<std::string>{"lo", "v1", "v0"});
}

TEST_CASE("an answer with another sequence number is refused with EPROTO, and the socket keeps working",
          "[transport]") {
  ScratchNetns ns;
  Socket sock = OpenIn(ns);
  auto stray = sock.Exchange("RTM_GETLINK with a stray seq",
                             [](uint32_t seq) { return GetLink(seq + 100, 1, netlink::raw::kCommand); });
  REQUIRE_FALSE(stray.ok());
  CHECK(stray.error().sys_errno == EPROTO);
  // The answer was drained: the next request reads its own.
  auto lo =
      sock.Exchange("RTM_GETLINK lo", [](uint32_t seq) { return GetLink(seq, 1, netlink::raw::kCommand); });
  REQUIRE_OK(lo);
  CHECK(lo->size() == 1);
}

TEST_CASE("a request its builder refuses is never sent and keeps the builder's error", "[transport]") {
  ScratchNetns ns;
  Socket sock = OpenIn(ns);
  auto r = sock.Command("building", [](uint32_t) -> base::Result<Bytes> {
    return base::Error(base::Code::kInvalidConfig, "no such request", {}, EINVAL);
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == base::Code::kInvalidConfig);
  CHECK(r.error().msg == "building: no such request");
}

}  // namespace test_kernel_transport_test
