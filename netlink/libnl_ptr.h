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

/// A deleter that hands the handle to `Free`.
template <auto Free>
struct FreeWith {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
/// Every rtnl_* object is an nl_object with a reference count.
struct ObjectPut {
  template <typename T>
  void operator()(T* p) const {
    nl_object_put(reinterpret_cast<nl_object*>(p));
  }
};

using SockPtr = std::unique_ptr<nl_sock, FreeWith<nl_socket_free>>;
using MsgPtr = std::unique_ptr<nl_msg, FreeWith<nlmsg_free>>;
using CbPtr = std::unique_ptr<nl_cb, FreeWith<nl_cb_put>>;
using AddrPtr = std::unique_ptr<nl_addr, FreeWith<nl_addr_put>>;
using NexthopPtr = std::unique_ptr<rtnl_nexthop, FreeWith<rtnl_route_nh_free>>;
using ObjectPtr = std::unique_ptr<nl_object, ObjectPut>;
using RtAddrPtr = std::unique_ptr<rtnl_addr, ObjectPut>;
using RoutePtr = std::unique_ptr<rtnl_route, ObjectPut>;
using RulePtr = std::unique_ptr<rtnl_rule, ObjectPut>;

}  // namespace netlink::nl
