#!/usr/bin/env bash
# The style checks, one per CTest entry (label lint): the tracked files of the repository given as
# the first argument, checked by one tool. A missing tool fails (scripts/install-deps.sh installs
# all three); a repository without git metadata (a source tarball) has nothing to list and fails.
#   tests/lint/lint.sh ROOT clang-format|shellcheck|pyflakes
set -uo pipefail
root=$1 tool=$2
cd "$root" || exit 2
git rev-parse --git-dir >/dev/null 2>&1 || { echo "lint: $root is not a git checkout"; exit 1; }
case $tool in
  clang-format)  # the C++ as .clang-format lays it out
    mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.cu' '*.cuh')
    cmd=(clang-format --dry-run --Werror) ;;
  shellcheck)    # every shell file: *.sh, job scripts, and the extensionless wrappers with a sh shebang
    mapfile -t files < <(git ls-files '*.sh' '*.sbatch' ':!results/' ; git ls-files jobs scripts analysis |
                         while read -r f; do
                           if [[ $f != *.* ]] && head -1 "$f" | grep -q '^#!.*sh'; then echo "$f"; fi
                         done)
    cmd=(shellcheck -x -P SCRIPTDIR -S warning) ;;
  pyflakes)      # unused imports and names, undefined names (ruff is not packaged in Debian 12)
    mapfile -t files < <(git ls-files '*.py')
    cmd=(pyflakes3) ;;
  *) echo "lint: unknown tool $tool"; exit 2 ;;
esac
command -v "${cmd[0]}" >/dev/null || { echo "lint: ${cmd[0]} is not installed (scripts/install-deps.sh)"; exit 1; }
[ ${#files[@]} -gt 0 ] || { echo "lint: no files for $tool"; exit 1; }
if "${cmd[@]}" "${files[@]}"; then echo "lint: $tool: ${#files[@]} files clean"; else echo "lint: $tool found problems (above)"; exit 1; fi
