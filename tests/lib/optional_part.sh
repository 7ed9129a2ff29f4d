# shellcheck shell=bash
# Sourced by shell tests that may skip (tests/optional-parts.txt). Usage:
#   source tests/lib/optional_part.sh
#   have_it || sp_skip_optional_part torch "torch or h5py missing"
# sp_skip_optional_part PART WHY ends the script: exit 77, which the test's SKIP_RETURN_CODE 77
# shows as "Not Run" in CTest; in CI (SCALEPROBE_CI=1) exit 1 instead, unless the list makes PART
# optional here. A PART missing from the list is always an error (exit 1).

sp_optional_parts_file() {
  echo "${SCALEPROBE_OPTIONAL_PARTS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/optional-parts.txt}"
}

sp_skip_optional_part() {
  local part=$1 why=$2 list name when rest found=""
  list=$(sp_optional_parts_file)
  while read -r name when rest; do
    [[ -z $name || $name == \#* ]] && continue
    [[ $name == "$part" ]] && { found=$when; break; }
  done <"$list"
  if [[ -z $found ]]; then
    echo "error: '$part' is not an optional part in $list (skip: $why)" >&2
    exit 1
  fi
  if [[ ${SCALEPROBE_CI:-} == 1 && $found != always ]]; then
    local var=${found%%=*} value=${found#*=}
    if [[ ${!var-} != "$value" ]]; then
      echo "error: skipped in CI for '$part', optional only with $found ($var is not so here): $why" >&2
      exit 1
    fi
  fi
  echo "optional part $part: $why: skipped (Not Run)"
  exit 77
}
