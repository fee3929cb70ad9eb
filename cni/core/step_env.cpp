#include "cni/core/step_env.h"

#include <cerrno>

#include "conf/names.h"

namespace cni {

using base::Code;
using base::Error;
using base::Result;
using base::Status;

Result<netlink::Kernel*> PodOf(const StepEnv& env) {
  if (!env.pod) return Error(Code::kInvalidEnv, "the pod netns is gone");
  return env.pod;
}

Status IgnoreGone(Status s) {
  const int e = s.ok() ? 0 : s.error().sys_errno;
  if (e == ENODEV || e == ESRCH || e == ENOENT || e == EADDRNOTAVAIL) return base::Ok();
  return s;
}

Status IgnoreExists(Status s) {
  if (!s.ok() && s.error().sys_errno == EEXIST) return base::Ok();
  return s;
}

Error BadValue(const std::string& field, const std::string& value, const std::string& must) {
  std::string shown;
  for (unsigned char c : value.substr(0, 80)) {
    if (c < 0x20 || c == 0x7f) {
      static const char* kHex = "0123456789abcdef";
      shown += "\\x";
      shown += kHex[c >> 4];
      shown += kHex[c & 0xf];
    } else {
      shown += static_cast<char>(c);
    }
  }
  if (value.size() > 80) shown += "...";
  return Error(Code::kState, "\"" + field + "\" " + "\"" + shown + "\" must be " + must);
}

Status CheckIfName(const std::string& field, const std::string& v) {
  if (!conf::IsValidIfName(v))
    return BadValue(field, v, "an interface name (1..15 bytes, no '/', ':' or whitespace)");
  return base::Ok();
}

Error Mismatch(const std::string& what) { return Error(Code::kCheckFailed, "CHECK: " + what); }

}  // namespace cni
