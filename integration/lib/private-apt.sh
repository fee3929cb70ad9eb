# private-apt.sh: fetching from Debian's archive through a private apt configuration
# (sourced, not run). Used by integration/clients/cnitool/build.sh,
# integration/clients/cri/fetch-cri-api.sh and integration/vm/fetch-kernel.sh.
#
# A private apt lives in one directory, APTDIR: its own sources.list, lists, cache,
# preferences and (empty) status, so nothing of the system's apt state is read or
# written. Root's apt would otherwise hand downloads to the _apt user, which may not be
# able to enter the build tree. Use:
#
#   mirror="$(private_apt_mirror)"
#   [[ -n $mirror ]] || { echo "no Debian mirror found ...; set DEBIAN_MIRROR" >&2; exit 1; }
#   private_apt_prepare "$cache/apt" "$mirror" deb-src bookworm bookworm-updates
#   private_apt_get "$cache/apt" -qq update >&2
#   (cd "$dir" && private_apt_get "$cache/apt" -qq --download-only source "$pkg=$ver" >&2)
#   private_apt_cache "$cache/apt" showsrc "$pkg"
#
# APTDIR must be an absolute path (the functions refuse another with status 2): apt takes
# a relative Dir::... value as relative to its parent setting (Dir::State::Lists under
# /var/lib/apt/), not to the working directory, which would write into the system's apt.
#
# private_apt_mirror
#   Prints the Debian mirror to use: $DEBIAN_MIRROR when set and not empty, as given;
#   else the first ".../debian" URI of the system's sources (/etc/apt/sources.list, then
#   sources.list.d/*.list, then sources.list.d/*.sources; comment lines skipped) without
#   its trailing slash. Prints nothing when there is none: the caller says so and fails.
#   Returns 0 either way (a sources file without a Debian URI, say a third-party
#   repository's, is no error).
#
# private_apt_prepare APTDIR MIRROR TYPES SUITE...
#   Makes APTDIR a private apt for SUITE... of MIRROR, component main. TYPES is deb,
#   deb-src or "deb deb-src"; for each SUITE in order, one line per type:
#     TYPE [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] MIRROR SUITE main
#   (the signed-by option only when that keyring is readable; without it apt checks the
#   indexes against its own trusted keys). Creates APTDIR/lists/partial,
#   cache/archives/partial, parts and prefs.d, writes sources.list and truncates status
#   to empty. Lists already downloaded are kept for the next update. Prints nothing.
#
# private_apt_get APTDIR ARG...
# private_apt_cache APTDIR ARG...
#   Runs apt-get or apt-cache confined to APTDIR (the Dir::... options naming its files,
#   Acquire::Languages=none, APT::Sandbox::User=root) with ARG..., in the current
#   directory (where `apt-get source` and `apt-get download` put their files). Output and
#   status are apt's.
# shellcheck shell=bash

private_apt_mirror() {
  if [[ -n ${DEBIAN_MIRROR:-} ]]; then
    printf '%s\n' "$DEBIAN_MIRROR"
    return 0
  fi
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [[ -r $f ]] || continue
    { grep -v '^[[:space:]]*#' "$f" || true; } |
      { grep -oE '(https?|ftp)://[^][[:space:]]+/debian/?([[:space:]]|$)' || true; } |
      head -n1 | tr -d '[:space:]' | sed 's#/$##'
  done | head -n1
  return 0
}

# private_apt_absolute APTDIR: status 2 with a message unless APTDIR is absolute.
private_apt_absolute() {
  [[ $1 == /* ]] && return 0
  echo "private apt: the directory must be an absolute path, not '$1' (apt would resolve it under /var/lib/apt)" >&2
  return 2
}

private_apt_prepare() {
  local aptdir="$1" mirror="$2" types="$3" suite type signed_by=""
  shift 3
  private_apt_absolute "$aptdir" || return
  for type in $types; do
    [[ $type == deb || $type == deb-src ]] || types=""
  done
  if [[ -z ${types//[[:space:]]/} ]] || (($# == 0)); then
    echo "usage: private_apt_prepare APTDIR MIRROR deb|deb-src|'deb deb-src' SUITE..." >&2
    return 2
  fi
  mkdir -p "$aptdir"/{lists/partial,cache/archives/partial,parts,prefs.d}
  [[ -r /usr/share/keyrings/debian-archive-keyring.gpg ]] &&
    signed_by="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
  for suite in "$@"; do
    for type in $types; do
      echo "$type ${signed_by}$mirror $suite main"
    done
  done >"$aptdir/sources.list"
  : >"$aptdir/status"
}

# private_apt_run COMMAND APTDIR ARG...: COMMAND (apt-get or apt-cache) confined to APTDIR.
private_apt_run() {
  local command="$1" aptdir="$2"
  shift 2
  private_apt_absolute "$aptdir" || return
  "$command" \
    -o "Dir::Etc::SourceList=$aptdir/sources.list" \
    -o "Dir::Etc::SourceParts=$aptdir/parts" \
    -o "Dir::Etc::Preferences=$aptdir/prefs.d/none" \
    -o "Dir::Etc::PreferencesParts=$aptdir/prefs.d" \
    -o "Dir::State::Lists=$aptdir/lists" \
    -o "Dir::State::status=$aptdir/status" \
    -o "Dir::Cache=$aptdir/cache" \
    -o "Acquire::Languages=none" \
    -o "APT::Sandbox::User=root" \
    "$@"
}

private_apt_get() { private_apt_run apt-get "$@"; }
private_apt_cache() { private_apt_run apt-cache "$@"; }
