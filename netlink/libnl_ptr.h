// unique_ptr owners for libnl handles: each handle freed by its own libnl free function, once.
#pragma once

#include <netlink/addr.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/object.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/nexthop.h>
#include <netlink/route/route.h>
#include <netlink/route/rule.h>
#include <netlink/socket.h>

#include <memory>

namespace netlink::nl {

struct SockFree {
  void operator()(nl_sock* p) const { nl_socket_free(p); }
};
struct MsgFree {
  void operator()(nl_msg* p) const { nlmsg_free(p); }
};
struct CbPut {
  void operator()(nl_cb* p) const { nl_cb_put(p); }
};
struct AddrPut {
  void operator()(nl_addr* p) const { nl_addr_put(p); }
};
struct NexthopFree {
  void operator()(rtnl_nexthop* p) const { rtnl_route_nh_free(p); }
};
/// Every rtnl_* object is an nl_object with a reference count.
struct ObjectPut {
  template <typename T>
  void operator()(T* p) const {
    nl_object_put(reinterpret_cast<nl_object*>(p));
  }
};

using SockPtr = std::unique_ptr<nl_sock, SockFree>;
using MsgPtr = std::unique_ptr<nl_msg, MsgFree>;
using CbPtr = std::unique_ptr<nl_cb, CbPut>;
using AddrPtr = std::unique_ptr<nl_addr, AddrPut>;
using NexthopPtr = std::unique_ptr<rtnl_nexthop, NexthopFree>;
using ObjectPtr = std::unique_ptr<nl_object, ObjectPut>;
using RtAddrPtr = std::unique_ptr<rtnl_addr, ObjectPut>;
using RoutePtr = std::unique_ptr<rtnl_route, ObjectPut>;
using RulePtr = std::unique_ptr<rtnl_rule, ObjectPut>;

}  // namespace netlink::nl
