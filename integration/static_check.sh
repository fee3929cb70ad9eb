#!/usr/bin/env bash
# static_check.sh ERDMA_CNI LAYER_ARCHIVE...
# The shipped binary is statically linked, and the plugin's code (the
# archives of its layers, CMakeLists.txt) calls none
# of the libnl functions that reach glibc's name services (getaddrinfo,
# getnameinfo, getprotobyname, getprotobynumber), which a static glibc can
# only serve by loading NSS modules of its own version at run time; nor the
# object and message text dumps, which print protocol names.
set -euo pipefail

bin="$1"
shift
libs=("$@")
for tool in nm file; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool is not installed"; exit 77; }
done

status=0
if ! file -L "$bin" | grep -q 'statically linked'; then
  echo "FAIL: $bin is not statically linked: $(file -L "$bin")"
  status=1
fi

forbidden='nl_addr_info|nl_addr_resolve|nl_addr_parse|nl_str2ip_proto|nl_ip_proto2str'
forbidden+='|nl_object_dump|nl_object_dump_buf|nl_cache_dump|nl_cache_dump_filter|nl_msg_dump'
forbidden+='|getaddrinfo|getnameinfo|gethostbyname|gethostbyname2|getprotobyname|getprotobynumber'
undefined="$(nm --undefined-only "${libs[@]}" | awk '$1 == "U" {print $2}' | sort -u)"
calls="$(grep -Ex "$forbidden" <<<"$undefined" || true)"
if [[ -n $calls ]]; then
  echo "FAIL: the layers' archives call functions that resolve names through NSS: $(echo "$calls" | tr '\n' ' ')"
  status=1
fi

# The check itself must be able to fail: the archives have to be ones nm reads.
if ! grep -qx nl_connect <<<"$undefined"; then
  echo "FAIL: ${libs[*]} do not look like erdma-cni's layers (no call to nl_connect)"
  status=1
fi

((status == 0)) && echo "ok: $bin is static and its layers resolve no names"
exit "$status"
