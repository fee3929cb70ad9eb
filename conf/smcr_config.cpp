#include "conf/smcr_config.h"

#include <optional>

#include "conf/fields.h"
#include "conf/keys.h"
#include "netlink/sysctl.h"

namespace conf {

using nlohmann::json;

namespace {

std::optional<bool> ParseKubeBool(const std::string& v) {
  if (v == "true" || v == "True" || v == "TRUE" || v == "1") return true;
  if (v == "false" || v == "False" || v == "FALSE" || v == "0") return false;
  return std::nullopt;
}

bool IsPnetId(const std::string& s) {
  return !s.empty() && s.size() <= 16 &&
         s.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == std::string::npos;
}

}  // namespace

base::Status ParseSmcr(const json& root, SmcrConfig& out) {
  const json* s = Get(root, Key(kTop, "smcr"));
  if (!s) return base::Ok();
  if (!s->is_object()) return Invalid("smcr: must be an object");
  RETURN_IF_ERROR(RefuseUnknown(*s, kSmcr));
  if (const json* v = Get(*s, Key(kSmcr, "enable"))) {
    const char* fix = "smcr.enable: must be \"annotation\", \"always\" or \"never\"";
    if (!v->is_string()) return Invalid(fix);
    const auto& e = v->get_ref<const std::string&>();
    if (e == "annotation")
      out.enable = SmcrConfig::Enable::kAnnotation;
    else if (e == "always")
      out.enable = SmcrConfig::Enable::kAlways;
    else if (e == "never")
      out.enable = SmcrConfig::Enable::kNever;
    else
      return Invalid(std::string(fix) + ", not " + Quote(e));
  }
  if (const json* v = Get(*s, Key(kSmcr, "sysctls"))) {
    if (!v->is_object()) return Invalid("smcr.sysctls: must be an object of \"net.x.y\": \"value\"");
    out.sysctls.clear();
    for (const auto& [name, value] : v->items()) {
      if (!netlink::IsSafeSysctlName(name))
        return Invalid("smcr.sysctls: " + Quote(name) +
                       " is not a writable name; use a dotted name under net. (e.g. \"net.smc.wmem\")");
      if (!value.is_string() || value.get_ref<const std::string&>().size() > 256 ||
          value.get_ref<const std::string&>().find('\n') != std::string::npos)
        return Invalid("smcr.sysctls." + name + ": must be a string value of one line");
      out.sysctls.emplace_back(name, value.get<std::string>());
    }
  }
  RETURN_IF_ERROR(GetBool(*s, Key(kSmcr, "disableIPv6"), "smcr.disableIPv6", &out.disable_ipv6));
  if (const json* v = Get(*s, Key(kSmcr, "pnetId"))) {
    if (!v->is_string() || (v->get_ref<const std::string&>() != "auto" && !IsPnetId(v->get<std::string>())))
      return Invalid("smcr.pnetId: must be \"auto\" or 1..16 characters A-Z, 0-9 (e.g. \"00163E10F8B0\")");
    out.pnet_id = v->get<std::string>();
  }
  if (const json* v = Get(*s, Key(kSmcr, "ueid"))) {
    if (!v->is_string() || v->get_ref<const std::string&>().size() > 32)
      return Invalid("smcr.ueid: must be a string of at most 32 characters");
    out.ueid = v->get<std::string>();
  }
  if (const json* v = Get(*s, Key(kSmcr, "onUnsupported"))) {
    if (!v->is_string() || (v->get<std::string>() != "error" && v->get<std::string>() != "warn"))
      return Invalid("smcr.onUnsupported: must be \"error\" or \"warn\"");
    out.on_unsupported_error = v->get<std::string>() == "error";
  }
  return base::Ok();
}

static_assert(kArgsCniKeys[0] == kSmcrAnnotation, "args.cni's list names the annotation");

base::Result<bool> SmcrWanted(const SmcrConfig& cfg, const json& runtime_config, const json& args) {
  if (cfg.enable == SmcrConfig::Enable::kAlways) return true;
  if (cfg.enable == SmcrConfig::Enable::kNever) return false;
  struct Source {
    const json* obj;
    const char* key;
    bool annotations;  ///< runtimeConfig's pod annotations, else args.cni
  };
  const json* a = runtime_config.is_object() ? Get(runtime_config, kPodAnnotationsCapability) : nullptr;
  const json* c = args.is_object() ? Get(args, "cni") : nullptr;
  if (a && !a->is_object()) a = nullptr;
  if (c && !c->is_object()) c = nullptr;
  const Source sources[] = {
      {a, kSmcrAnnotation, true}, {c, kSmcrAnnotation, false}, {c, "erdma-smcr", false}};
  for (const auto& src : sources) {
    const json* v = src.obj ? Get(*src.obj, src.key) : nullptr;
    if (!v) continue;
    std::optional<bool> b;
    if (v->is_string()) b = ParseKubeBool(v->get<std::string>());
    if (v->is_boolean()) b = v->get<bool>();
    if (!b)
      return Invalid((src.annotations ? std::string("runtimeConfig[\"") + kPodAnnotationsCapability + "\"]"
                                      : std::string("args.cni")) +
                     "." + src.key + ": " + v->dump(-1, ' ', false, json::error_handler_t::replace) +
                     " is not a boolean; use \"true\" or \"false\"");
    return *b;
  }
  return false;
}

}  // namespace conf
