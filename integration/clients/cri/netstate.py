#!/usr/bin/python3
"""netstate.py snapshot           -- the canonical network state of the current netns
   netstate.py addr4 IFNAME        -- IFNAME's IPv4 addresses, one ADDR/LEN a line
   netstate.py rule-table ADDR PRIO  -- the table of the rule `from ADDR` at priority PRIO
   netstate.py default-via TABLE   -- the gateway of TABLE's default route

Run inside the namespace to read (ip netns exec / nsenter --net). The
snapshot is one sorted line per link, address, route (every table) and rule,
without what the kernel allocates or counts rather than what a plugin sets:
ifindexes, peer indexes, statistics, address lifetimes, bridge timers. Two
snapshots of a node taken before a pod's ADD and after its DEL must be equal.
"""

import json
import subprocess
import sys


def ip(*args):
    out = subprocess.run(["ip", "-j", *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out) if out.strip() else []


def snapshot():
    lines = []
    for link in ip("-d", "link", "show"):
        for k in ("ifindex", "link", "link_index", "link_netnsid", "stats", "stats64"):
            link.pop(k, None)
        if "linkinfo" in link:
            info = link["linkinfo"]
            link["linkinfo"] = {k: info[k] for k in ("info_kind", "info_slave_kind") if k in info}
        lines.append("link " + json.dumps(link, sort_keys=True))
    for link in ip("addr", "show"):
        for a in link.get("addr_info", []):
            for k in ("valid_life_time", "preferred_life_time", "tentative", "optimistic"):
                a.pop(k, None)
            a["dev"] = link.get("ifname", "")
            lines.append("addr " + json.dumps(a, sort_keys=True))
    for fam in ("4", "6"):
        for r in ip("-" + fam, "route", "show", "table", "all"):
            for k in ("expires", "cache", "uid"):
                r.pop(k, None)
            lines.append("route" + fam + " " + json.dumps(r, sort_keys=True))
        for r in ip("-" + fam, "rule", "show"):
            lines.append("rule" + fam + " " + json.dumps(r, sort_keys=True))
    print("\n".join(sorted(lines)))


def main(argv):
    if argv[1:] == ["snapshot"]:
        snapshot()
    elif len(argv) == 3 and argv[1] == "addr4":
        for link in ip("-4", "addr", "show", "dev", argv[2]):
            for a in link.get("addr_info", []):
                print(f"{a['local']}/{a['prefixlen']}")
    elif len(argv) == 4 and argv[1] == "rule-table":
        for r in ip("-4", "rule", "show"):
            if r.get("src") == argv[2] and str(r.get("priority")) == argv[3]:
                print(r.get("table", ""))
    elif len(argv) == 3 and argv[1] == "default-via":
        for r in ip("-4", "route", "show", "table", argv[2]):
            if r.get("dst") == "default":
                print(r.get("gateway", ""))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
