# Shared by the command-line error tests (source it): bad input must give a non-zero exit and
# exactly one line on stderr naming the problem.
#   expect_error <text the one line must contain> <command...>
#   expect_help <text the help must contain> <command...>     (--help is not an error)
#   finish <test name>                                        (prints "N passed, M failed"; status)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
failures=0 checks=0
expect_error() {
  local pattern=$1; shift
  checks=$((checks + 1))
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  local lines; lines=$(grep -c . "$tmp/err")
  if [ $rc -eq 0 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$pattern" "$tmp/err"; then
    echo "FAIL: '$*' rc=$rc, $lines stderr line(s), wanted one containing '$pattern':"; sed 's/^/    /' "$tmp/err"
    failures=$((failures + 1))
  fi
}
expect_help() {
  local pattern=$1; shift
  checks=$((checks + 1))
  if ! "$@" --help >"$tmp/out" 2>&1 || ! grep -qF -- "$pattern" "$tmp/out"; then
    echo "FAIL: '$* --help' failed or lacks '$pattern'"; failures=$((failures + 1))
  fi
}
finish() {
  echo "$1: $((checks - failures)) passed, $failures failed"
  [ $failures -eq 0 ]
}
