#include "netlink/transport.h"

#include <linux/netlink.h>
#include <netlink/errno.h>
#include <netlink/genl/ctrl.h>
#include <netlink/netlink.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>

#include "base/phase.h"
#include "netlink/extack.h"

namespace netlink {

struct InFlight {
  uint32_t seq = 0;          ///< sequence number of the last request sent
  uint32_t port = 0;         ///< the socket's own port
  int error = 0;             ///< errno the kernel answered with; 0 = none
  std::string extack;        ///< the kernel's extended ACK text for it
  bool interrupted = false;  ///< a dump message carried NLM_F_DUMP_INTR
};

namespace {

std::span<const uint8_t> MessageBytes(const nlmsghdr* hdr) {
  // libnl has checked nlmsg_len against the bytes it received.
  return {reinterpret_cast<const uint8_t*>(hdr), hdr->nlmsg_len};
}

// NLMSG_ERROR with a non-zero error. libnl hands over only the nlmsgerr, which it found at nlmsg_data(hdr);
// the header sits right before it. The errno recorded here is the one reported: libnl's own return value
// folds many errnos into one code (ENOENT and ESRCH both become NLE_OBJ_NOTFOUND).
int OnError(sockaddr_nl*, nlmsgerr* e, void* arg) {
  auto* ex = static_cast<InFlight*>(arg);
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(reinterpret_cast<const uint8_t*>(e) - NLMSG_HDRLEN);
  if (auto ack = ParseAck(MessageBytes(hdr))) {
    ex->error = ack->error;
    ex->extack = std::move(ack->msg);
  } else {
    ex->error = e->error < 0 ? -e->error : EPROTO;
  }
  if (ex->error == 0) ex->error = EPROTO;
  return NL_STOP;
}

// NLMSG_DONE. A dump that fails after it started ends with a DONE carrying the error (and extack TLVs); libnl
// would take it for a clean end and hand back a partial dump.
int OnDone(nl_msg* msg, void* arg) {
  auto ack = ParseAck(MessageBytes(nlmsg_hdr(msg)));
  if (!ack || ack->error == 0) return NL_OK;
  auto* ex = static_cast<InFlight*>(arg);
  ex->error = ack->error;
  ex->extack = std::move(ack->msg);
  return -nl_syserr2nlerr(ack->error);
}

// Replaces libnl's check, whose expected number stays behind once an exchange is abandoned half way; this one
// follows the last request sent, and checks the port (the requester's, or 0 from the kernel).
int OnSeqCheck(nl_msg* msg, void* arg) {
  auto* ex = static_cast<InFlight*>(arg);
  const nlmsghdr* hdr = nlmsg_hdr(msg);
  const bool ours = hdr->nlmsg_pid == 0 || hdr->nlmsg_pid == ex->port;
  return hdr->nlmsg_seq == ex->seq && ours ? NL_OK : -NLE_SEQ_MISMATCH;
}

// Without this callback libnl reports NLE_DUMP_INTR only after the whole dump, as a failure.
int OnDumpIntr(nl_msg*, void* arg) {
  static_cast<InFlight*>(arg)->interrupted = true;
  return NL_OK;
}

int OnMsgOut(nl_msg* msg, void* arg) {
  static_cast<InFlight*>(arg)->seq = nlmsg_hdr(msg)->nlmsg_seq;
  return NL_OK;
}

}  // namespace

/// The answer to one GET or dump, as it comes in: libnl objects, or the
/// bytes of each message when `bytes` is set.
struct Collected {
  InFlight* ex = nullptr;
  bool bytes = false;
  std::vector<nl::ObjectPtr> objects;
  std::vector<raw::Bytes> messages;
  bool finished = false;  ///< the ACK (GET) or NLMSG_DONE (dump) arrived
  bool out_of_memory = false;
};

namespace {

void KeepObject(nl_object* obj, void* arg) {
  auto* c = static_cast<Collected*>(arg);
  nl_object_get(obj);
  nl::ObjectPtr owned(obj);
  try {
    c->objects.push_back(std::move(owned));
  } catch (...) {
    c->out_of_memory = true;
  }
}

int OnValid(nl_msg* msg, void* arg) {
  auto* c = static_cast<Collected*>(arg);
  if (c->bytes) {
    const std::span<const uint8_t> m = MessageBytes(nlmsg_hdr(msg));
    try {
      c->messages.emplace_back(m.begin(), m.end());
    } catch (...) {
      return -NLE_NOMEM;
    }
    return NL_OK;
  }
  const int err = nl_msg_parse(msg, &KeepObject, c);
  if (err < 0) return err;
  return c->out_of_memory ? -NLE_NOMEM : NL_OK;
}

int OnAck(nl_msg*, void* arg) {
  static_cast<Collected*>(arg)->finished = true;
  return NL_STOP;
}

int OnDumpDone(nl_msg* msg, void* arg) {
  auto* c = static_cast<Collected*>(arg);
  c->finished = true;
  const int err = OnDone(msg, c->ex);
  return err < 0 ? err : NL_STOP;
}

// The errno closest to a libnl error code, for failures the kernel did not report itself.
int NlErrorToErrno(int nl_error) {
  switch (std::abs(nl_error)) {
    case NLE_INTR: return EINTR;
    case NLE_BAD_SOCK: return EBADF;
    case NLE_AGAIN: return EAGAIN;
    case NLE_NOMEM: return ENOMEM;
    case NLE_EXIST: return EEXIST;
    case NLE_INVAL: return EINVAL;
    case NLE_RANGE: return ERANGE;
    case NLE_MSGSIZE: return EMSGSIZE;
    case NLE_OPNOTSUPP: return EOPNOTSUPP;
    case NLE_AF_NOSUPPORT: return EAFNOSUPPORT;
    case NLE_OBJ_NOTFOUND: return ENOENT;
    case NLE_NOATTR: return ENOENT;
    case NLE_MISSING_ATTR: return EINVAL;
    case NLE_AF_MISMATCH: return EAFNOSUPPORT;
    case NLE_SEQ_MISMATCH: return EPROTO;
    case NLE_MSG_OVERFLOW: return ENOBUFS;
    case NLE_MSG_TRUNC: return EMSGSIZE;
    case NLE_NOADDR: return EADDRNOTAVAIL;
    case NLE_SRCRT_NOSUPPORT: return EOPNOTSUPP;
    case NLE_MSG_TOOSHORT: return EBADMSG;
    case NLE_MSGTYPE_NOSUPPORT: return EOPNOTSUPP;
    case NLE_OBJ_MISMATCH: return EINVAL;
    case NLE_NOCACHE: return ENOENT;
    case NLE_BUSY: return EBUSY;
    case NLE_PROTO_MISMATCH: return EPROTONOSUPPORT;
    case NLE_NOACCESS: return EACCES;
    case NLE_PERM: return EPERM;
    case NLE_PARSE_ERR: return EBADMSG;
    case NLE_NODEV: return ENODEV;
    case NLE_IMMUTABLE: return EROFS;
    case NLE_DUMP_INTR: return EAGAIN;  // the dump kept changing under us: try again later
    case NLE_ATTRSIZE: return ERANGE;
    default: return EIO;
  }
}

}  // namespace

base::Error SysError(const std::string& what, int err, std::string details) {
  return base::Error(base::Code::kKernel, what + ": " + std::strerror(err), std::move(details), err);
}

Socket::Socket(nl::SockPtr sk) : sk_(std::move(sk)), ex_(std::make_unique<InFlight>()) {}
Socket::Socket(Socket&&) noexcept = default;
Socket& Socket::operator=(Socket&&) noexcept = default;
Socket::~Socket() = default;

base::Result<Socket> Socket::Open(const Netns& ns, int protocol, const std::string& what,
                                  bool large_answers) {
  const base::phase::Scope phase("netlink-open");
  nl::SockPtr sk;
  {
    auto inside = NetnsSwitch::Enter(ns);
    if (!inside.ok()) return std::move(inside).error().WithContext(what);
    // NL_CB_DEFAULT, not the kind libnl takes from the NLCB environment variable:
    // NLCB=debug would print every message to stdout, where the runtime reads our result.
    nl_cb* cb = nl_cb_alloc(NL_CB_DEFAULT);
    if (!cb) return SysError(what, ENOMEM);
    sk.reset(nl_socket_alloc_cb(cb));
    nl_cb_put(cb);  // the socket holds its own reference
    if (!sk) return SysError(what, ENOMEM);
    // nl_connect folds socket()'s errno into libnl's codes.
    if (const int err = nl_connect(sk.get(), protocol); err < 0) {
      return SysError(what, NlErrorToErrno(err), std::string("nl_connect: libnl: ") + nl_geterror(err));
    }
  }
  if (large_answers) {
    nl_socket_enable_msg_peek(sk.get());
  } else {
    nl_socket_disable_msg_peek(sk.get());
  }
  const size_t buffer = protocol == NETLINK_ROUTE ? kRouteReceiveSize : kReceiveSize;
  if (nl_socket_set_msg_buf_size(sk.get(), buffer) < 0) return SysError(what, ENOMEM);
  const int fd = nl_socket_get_fd(sk.get());
  // One socket option; an `optional` one the kernel lacks (ENOPROTOOPT) is left out.
  auto set = [&](int level, int opt, int value, const char* name, bool optional) -> base::Status {
    if (::setsockopt(fd, level, opt, &value, sizeof value) == 0 || (optional && errno == ENOPROTOOPT))
      return base::Ok();
    return SysError(what + ": setsockopt" + name, errno);
  };
  if (protocol == NETLINK_ROUTE) {
    // SO_RCVBUF raised as iproute2 does: docs/architecture.md, "Netlink transport".
    RETURN_IF_ERROR(set(SOL_SOCKET, SO_RCVBUF, kRouteSocketBuffer, " SO_RCVBUF", false));
    // docs/decisions/rtnetlink-strict-checking.md; callers filter the answers too, for older kernels.
    RETURN_IF_ERROR(set(SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1, " NETLINK_GET_STRICT_CHK", true));
  }
  // EXT_ACK: errors explained in text. CAP_ACK: errors do not echo the request. Optional (kernels 4.12+).
  for (const int opt : {NETLINK_EXT_ACK, NETLINK_CAP_ACK})
    RETURN_IF_ERROR(set(SOL_NETLINK, opt, 1, "", true));
  Socket s(std::move(sk));
  nl_sock* raw = s.sk_.get();
  InFlight* ex = s.ex_.get();
  ex->port = nl_socket_get_local_port(raw);
  nl_socket_modify_err_cb(raw, NL_CB_CUSTOM, &OnError, ex);
  nl_socket_modify_cb(raw, NL_CB_FINISH, NL_CB_CUSTOM, &OnDone, ex);
  nl_socket_modify_cb(raw, NL_CB_SEQ_CHECK, NL_CB_CUSTOM, &OnSeqCheck, ex);
  nl_socket_modify_cb(raw, NL_CB_MSG_OUT, NL_CB_CUSTOM, &OnMsgOut, ex);
  nl_socket_modify_cb(raw, NL_CB_DUMP_INTR, NL_CB_CUSTOM, &OnDumpIntr, ex);
  return s;
}

void Socket::Begin() {
  ex_->error = 0;
  ex_->extack.clear();
  ex_->interrupted = false;
}

base::Status Socket::Run(const std::string& what, const std::function<int(nl_sock*)>& call) {
  const base::phase::Scope phase("netlink");
  Begin();
  if (const int err = call(sk_.get()); err < 0) return Fail(what, err);
  return base::Ok();
}

base::Status Socket::Request(const std::string& what, nl::MsgPtr msg) {
  const base::phase::Scope phase("netlink");
  Begin();
  // nl_send_sync frees the message whatever happens.
  if (const int err = nl_send_sync(sk_.get(), msg.release()); err < 0) return Fail(what, err);
  return base::Ok();
}

base::Result<std::vector<nl::ObjectPtr>> Socket::Get(const std::string& what, nl::MsgPtr msg) {
  const base::phase::Scope phase("netlink");
  Begin();
  if (const int err = nl_send_auto(sk_.get(), msg.get()); err < 0) return Fail(what, err);
  Collected c;
  RETURN_IF_ERROR(Transact(what, false, c));
  return std::move(c.objects);
}

base::Result<std::vector<nl::ObjectPtr>> Socket::Dump(const std::string& what,
                                                      const std::function<nl::MsgPtr()>& make_request) {
  const base::phase::Scope phase("netlink");
  return Restarting<nl::ObjectPtr>(what, [&](Collected&) -> base::Status {
    nl::MsgPtr msg = make_request();
    if (!msg) return Fail(what, -NLE_NOMEM);
    if (const int err = nl_send_auto(sk_.get(), msg.get()); err < 0) return Fail(what, err);
    return base::Ok();
  });
}

base::Result<std::vector<raw::Bytes>> Socket::Exchange(const std::string& what, const Builder& build) {
  const base::phase::Scope phase("netlink");
  Begin();
  RETURN_IF_ERROR(SendBytes(what, build));
  Collected c;
  c.bytes = true;
  RETURN_IF_ERROR(Transact(what, false, c));
  return std::move(c.messages);
}

base::Status Socket::Command(const std::string& what, const Builder& build) {
  RETURN_IF_ERROR(Exchange(what, build));
  return base::Ok();
}

base::Result<std::vector<raw::Bytes>> Socket::DumpBytes(const std::string& what, const Builder& build) {
  const base::phase::Scope phase("netlink");
  return Restarting<raw::Bytes>(what, [&](Collected& c) {
    c.bytes = true;
    return SendBytes(what, build);
  });
}

base::Result<uint16_t> Socket::ResolveFamily(const std::string& name) {
  const base::phase::Scope phase("netlink");
  const std::string what = "CTRL_CMD_GETFAMILY " + name;
  Begin();
  const int id = genl_ctrl_resolve(sk_.get(), name.c_str());
  if (id < 0) return Fail(what, id);
  if (id == 0 || id > UINT16_MAX)
    return SysError(what, EBADMSG, "nlctrl answered family id " + std::to_string(id));
  return static_cast<uint16_t>(id);
}

base::Status Socket::SendBytes(const std::string& what, const Builder& build) {
  // Sent as they are (nl_sendto calls no NL_CB_MSG_OUT): the sequence number
  // the answer must carry is set here.
  const uint32_t seq = nl_socket_use_seq(sk_.get());
  ASSIGN_OR_RETURN(raw::Bytes request, WithWhat(build(seq), what));
  ex_->seq = seq;
  if (request.empty()) return SysError(what, ENOMEM, "the request did not fit its buffer");
  if (const int err = nl_sendto(sk_.get(), request.data(), request.size()); err < 0) return Fail(what, err);
  return base::Ok();
}

template <typename T, typename Send>
base::Result<std::vector<T>> Socket::Restarting(const std::string& what, const Send& send) {
  for (int attempt = 0;; ++attempt) {
    Begin();
    Collected c;
    RETURN_IF_ERROR(send(c));
    RETURN_IF_ERROR(Transact(what, true, c));
    if (!ex_->interrupted) {
      if constexpr (std::is_same_v<T, raw::Bytes>) {
        return std::move(c.messages);
      } else {
        return std::move(c.objects);
      }
    }
    if (attempt == kDumpRetries) return Fail(what, -NLE_DUMP_INTR);
  }
}

base::Status Socket::Transact(const std::string& what, bool dump, Collected& c) {
  nl::CbPtr base_cb(nl_socket_get_cb(sk_.get()));
  nl::CbPtr cb(nl_cb_clone(base_cb.get()));
  if (!cb) return Fail(what, -NLE_NOMEM);
  c.ex = ex_.get();
  nl_cb_set(cb.get(), NL_CB_VALID, NL_CB_CUSTOM, &OnValid, &c);
  if (dump) {
    nl_cb_set(cb.get(), NL_CB_FINISH, NL_CB_CUSTOM, &OnDumpDone, &c);
  } else {
    nl_cb_set(cb.get(), NL_CB_ACK, NL_CB_CUSTOM, &OnAck, &c);
  }
  // A GET's answer and its ACK come in separate datagrams, a dump in many; each call reads at least one.
  while (!c.finished) {
    const int n = nl_recvmsgs_report(sk_.get(), cb.get());
    if (n < 0) return Fail(what, n);
    if (n == 0) return Fail(what, -NLE_AGAIN);
  }
  return base::Ok();
}

base::Error Socket::Fail(const std::string& what, int nl_error) {
  if (ex_->error != 0) return SysError(what, ex_->error, ex_->extack);
  // libnl gave up on its own (no memory, a message it could not parse, a
  // stray sequence number): the rest of the answer may still be queued.
  Drain();
  if (nl_error == -NLE_DUMP_INTR) {
    return SysError(what, EAGAIN,
                    "the kernel interrupted the dump " + std::to_string(kDumpRetries + 1) +
                        " times in a row (the table kept changing)");
  }
  return SysError(what, NlErrorToErrno(nl_error), std::string("libnl: ") + nl_geterror(nl_error));
}

void Socket::Drain() {
  // Each recv also lets the kernel queue the next part of an unfinished dump,
  // so this empties the socket. One byte with MSG_TRUNC discards a datagram.
  const int fd = nl_socket_get_fd(sk_.get());
  char byte;
  for (int i = 0; i < 100000; ++i) {
    if (::recv(fd, &byte, sizeof byte, MSG_DONTWAIT | MSG_TRUNC) < 0) break;
  }
}

}  // namespace netlink
