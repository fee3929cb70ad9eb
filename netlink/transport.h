// One netlink socket bound to one network namespace, on libnl's nl_sock, and the one conversation every
// protocol erdma-cni speaks has on it (rtnetlink, RDMA netlink, generic netlink): send a request, read its
// whole answer with the kernel's errno and extended ACK text, checked sequence numbers and ports, dumps
// restarted when the kernel marks them NLM_F_DUMP_INTR. The answer comes back as libnl objects (rtnetlink) or
// as the bytes of each message for the pure codecs (netlink/rdma_codec.h, smc_codec.h, vf_codec.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/error.h"
#include "netlink/libnl_ptr.h"
#include "netlink/netns.h"
#include "netlink/raw_message.h"

namespace netlink {

struct InFlight;   // what the callbacks learn about the request in flight
struct Collected;  // the answer to it, as it comes in

/// Error{kKernel, "<what>: <strerror(err)>", details, err}: how the sockets
/// and their users report a failed call or the kernel's refusal.
base::Error SysError(const std::string& what, int err, std::string details = {});

/// `r`, its error (if any) with `what` in front.
template <typename T>
base::Result<T> WithWhat(base::Result<T> r, const std::string& what) {
  if (r.ok()) return r;
  return std::move(r).error().WithContext(what);
}

class Socket {
 public:
  /// Builds one request (for a codec) with the given sequence number.
  using Builder = std::function<base::Result<raw::Bytes>(uint32_t seq)>;

  /// Creates and connects a socket of netlink `protocol` (NETLINK_ROUTE, NETLINK_RDMA, NETLINK_GENERIC)
  /// inside `ns`, entering it only for socket() and bind(): the socket stays in that namespace for life.
  /// Errors: Error{kKernel, "<what>: <strerror>", ..., errno}, EPROTONOSUPPORT for a protocol the kernel
  /// lacks. `large_answers`: a message may exceed kRouteReceiveSize, so libnl peeks at each datagram.
  static base::Result<Socket> Open(const Netns& ns, int protocol, const std::string& what,
                                   bool large_answers = false);

  Socket(Socket&&) noexcept;
  Socket& operator=(Socket&&) noexcept;
  ~Socket();

  nl_sock* get() const { return sk_.get(); }

  // --- libnl objects (rtnetlink) ---------------------------------------------

  /// Runs `call`, a libnl function that sends one request on this socket and
  /// waits for its ACK (rtnl_addr_add, rtnl_route_delete, ...). A negative
  /// result becomes Error{kKernel, "<what>: <strerror>", extack text, errno}.
  base::Status Run(const std::string& what, const std::function<int(nl_sock*)>& call);
  /// Sends `msg` (REQUEST|ACK are added) and waits for the ACK.
  base::Status Request(const std::string& what, nl::MsgPtr msg);
  /// Sends a GET request and returns the objects libnl parses from the answer.
  base::Result<std::vector<nl::ObjectPtr>> Get(const std::string& what, nl::MsgPtr msg);
  /// Runs a dump: `make_request` builds the NLM_F_DUMP request (once per attempt). A dump the kernel marks
  /// NLM_F_DUMP_INTR (the table changed while it was read) is restarted, at most kDumpRetries times, then
  /// fails with EAGAIN. Every object is kept: no libnl cache, whose hash table silently drops IPv6 routes
  /// that differ only in their device.
  base::Result<std::vector<nl::ObjectPtr>> Dump(const std::string& what,
                                                const std::function<nl::MsgPtr()>& make_request);

  // --- message bytes (the codecs) --------------------------------------------

  /// Sends the request `build` makes (NLM_F_ACK set) and returns the data
  /// messages that came before the ACK, each whole.
  base::Result<std::vector<raw::Bytes>> Exchange(const std::string& what, const Builder& build);
  /// Exchange for a request whose answer is only an ACK.
  base::Status Command(const std::string& what, const Builder& build);
  /// The data messages of an NLM_F_DUMP request, restarted as Dump() is.
  base::Result<std::vector<raw::Bytes>> DumpBytes(const std::string& what, const Builder& build);
  /// DumpBytes, each message read by `parse` (a codec's parser; its error with `what` in front).
  template <typename T, typename Parse>
  base::Result<std::vector<T>> DumpParsed(const std::string& what, const Builder& build, const Parse& parse) {
    ASSIGN_OR_RETURN(std::vector<raw::Bytes> messages, DumpBytes(what, build));
    std::vector<T> out;
    for (const raw::Bytes& m : messages) {
      ASSIGN_OR_RETURN(T v, WithWhat(parse(m), what));
      out.push_back(std::move(v));
    }
    return out;
  }

  // --- generic netlink -------------------------------------------------------

  /// The id of generic netlink family `name` (libnl-genl's genl_ctrl_resolve: CTRL_CMD_GETFAMILY by name,
  /// which lets the kernel load the module that provides it). ENOENT when nlctrl does not know it.
  base::Result<uint16_t> ResolveFamily(const std::string& name);

  static constexpr int kDumpRetries = 5;
  /// The receive buffer of RDMA and generic netlink sockets: a datagram
  /// that does not fit is an error (EMSGSIZE), never cut short.
  static constexpr size_t kReceiveSize = 32768;
  /// The same for rtnetlink: more than any one message without the VF list
  /// (`large_answers` sockets grow their buffer instead).
  static constexpr size_t kRouteReceiveSize = 131072;
  /// SO_RCVBUF of rtnetlink sockets, so that the kernel can queue such a message at all.
  static constexpr int kRouteSocketBuffer = 1 << 20;

 private:
  explicit Socket(nl::SockPtr sk);
  void Begin();
  base::Status Transact(const std::string& what, bool dump, Collected& c);
  base::Status SendBytes(const std::string& what, const Builder& build);
  template <typename T, typename Send>
  base::Result<std::vector<T>> Restarting(const std::string& what, const Send& send);
  base::Error Fail(const std::string& what, int nl_error);
  void Drain();

  nl::SockPtr sk_;
  std::unique_ptr<InFlight> ex_;  // the callbacks keep its address: it must not move
};

}  // namespace netlink
