#!/usr/bin/env bash
# lint.sh format FILE...          clang-format --dry-run --Werror
# lint.sh tidy BUILD_DIR FILE...  clang-tidy with BUILD_DIR/compile_commands.json
set -uo pipefail
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
  *) echo "usage: $0 format FILE... | tidy BUILD_DIR FILE..." >&2; exit 2 ;;
esac
