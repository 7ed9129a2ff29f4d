# shellcheck shell=bash
# Sourced by tests/simulated/simulated_runs.sh and timing_only.sh (the smpi preset's tests): strict
# mode, the build they test ($build, their argument), the repository ($root), `sim` (a program on a
# simulated platform through scripts/simulate on that build), a scratch folder ($work, removed on
# exit) and `fail MESSAGE` (one line on stderr, exit 1).
#   source lib.sh BUILD_DIR
set -euo pipefail
build=$1
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
sim() { "$root/scripts/simulate" --build "$build" "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
