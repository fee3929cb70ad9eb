#!/usr/bin/env bash
# lint.sh format FILE...          clang-format --dry-run --Werror
# lint.sh tidy BUILD_DIR PART PARTS  clang-tidy on part PART of PARTS of what BUILD_DIR compiles
# lint.sh shell SOURCE_DIR        shellcheck -x on every shell script under SOURCE_DIR
set -uo pipefail
usage() { sed -n '2,4s/^# //p' "$0" >&2; exit 2; }
(($# >= 1)) || usage
what="$1"; shift
case "$what" in
  format)
    command -v clang-format >/dev/null || { echo "SKIPPED: clang-format is not installed"; exit 77; }
    clang-format --dry-run --Werror "$@"
    ;;
  tidy)
    command -v clang-tidy >/dev/null || { echo "SKIPPED: clang-tidy is not installed"; exit 77; }
    (($# == 3)) || usage
    build="$1" part="$2" parts="$3"
    src="$(cd "$(dirname "$0")/.." && pwd)"
    units="$("$src/integration/tidy_units.py" "$build" "$src" "$part" "$parts")" || exit 1
    # Diagnostics count in the project's own files, headers and batched
    # sources alike, never in a system or build-tree file. (A .clang-tidy
    # HeaderFilterRegex cannot say this: it does not know where the tree is.)
    # shellcheck disable=SC2001  # every regex metacharacter of the path escaped
    filter="^$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$src")/(base|cni|conf|install|ipam|kubelet|netlink|nri|integration|test)/"
    rc=0
    # A unity batch lives in the build tree, not beside its sources: the
    # top-level .clang-tidy is named (its #include of each source is what a
    # batch is, not a finding). A file compiled alone uses its nearest.
    # Two at a time: CI has two cores; a batch a process, as each is long.
    # A batch of test files gets test/.clang-tidy's checks (its Checks block,
    # which starts by turning off the groups the top-level file turns on).
    test_checks="$(sed -n '/^Checks:/,/^[A-Za-z]/{/^  /p}' "$src/test/.clang-tidy" | tr -d ' \n')"
    for kind in unity unity-test file; do
      args=(-p "$build" --quiet --header-filter="$filter")
      n=4
      case $kind in
        unity) args+=(--config-file="$src/.clang-tidy" --checks=-bugprone-suspicious-include) && n=1 ;;
        unity-test) args+=(--config-file="$src/.clang-tidy" --checks="$test_checks") && n=1 ;;
      esac
      sed -n "s/^$kind //p" <<<"$units" | xargs -r -P2 -n"$n" clang-tidy "${args[@]}" 2>&1 | grep -v "warnings generated"
      ((PIPESTATUS[1] == 0)) || rc=1
    done
    echo "clang-tidy: $(grep -c . <<<"$units") units of $build, part $part of $parts"
    exit "$rc"
    ;;
  shell)
    command -v shellcheck >/dev/null || { echo "SKIPPED: shellcheck is not installed"; exit 77; }
    src="${1%/}"
    # The scripts are found in the tree, not asked of git (a release tarball has no
    # .git): *.sh, and any other file whose first line is a sh or bash shebang.
    # Not .git, nor build trees: build*/ and .cache/ at the top (as .gitignore has
    # them) and any directory holding a CMakeCache.txt (a build dir by another name).
    scripts=()
    while IFS= read -r -d '' f; do
      if [[ $f != *.sh ]]; then
        first=""
        IFS= read -r first <"$f" 2>/dev/null || true
        [[ $first == '#!'* ]] || continue
        read -r interp arg _ <<<"${first#\#!}"
        [[ ${interp##*/} == env ]] && interp="$arg"
        case "${interp##*/}" in sh|bash) ;; *) continue ;; esac
      fi
      scripts+=("$f")
    done < <(find "$src" \( -path "$src/.git" -o -path "$src/build*" -o -path "$src/.cache" \
                -o \( -type d -exec test -e {}/CMakeCache.txt \; \) \) -prune \
              -o -type f -print0 | sort -z)
    ((${#scripts[@]})) || { echo "no shell scripts under $src" >&2; exit 1; }
    echo "shellcheck $(shellcheck --version | sed -n 's/^version: //p'): ${#scripts[@]} scripts"
    # -x follows what the scripts source (their `# shellcheck source=` directives say
    # where a path is only known at run time); the default severity, style included.
    shellcheck -x "${scripts[@]}"
    ;;
  *) usage ;;
esac
