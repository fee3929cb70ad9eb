#!/usr/bin/env bash
# lint.sh format FILE...          clang-format --dry-run --Werror
# lint.sh tidy BUILD_DIR FILE...  clang-tidy with BUILD_DIR/compile_commands.json
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
    build="$1"; shift
    # Two at a time: CI has two cores.
    printf '%s\n' "$@" | xargs -P2 -n4 clang-tidy -p "$build" --quiet 2>&1 | grep -v "warnings generated"
    exit "${PIPESTATUS[1]}"
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
  *) echo "usage: $0 format FILE... | tidy BUILD_DIR FILE... | shell SOURCE_DIR" >&2; exit 2 ;;
esac
