# shellcheck shell=bash
# jobs/lib/job.sh: sourced by every jobs/*.sbatch with r = the root and the arguments
# BENCH|report [ARGS...]. A site file is shell (module load, SCALEPROBE_* defaults), so it is
# sourced here: $SCALEPROBE_SITE_ENV (must exist), else <root>/jobs/site.env if present. Then the
# in-job code (python/scaleprobe_sweep/job.py) replaces this shell, so the batch shell's signals
# (USR1 before the time limit, TERM) reach it; with $SCALEPROBE_PYTHON, else /usr/bin/python3.
SP_SITE_FILE=${SCALEPROBE_SITE_ENV:-}
if [ -n "$SP_SITE_FILE" ] && [ ! -f "$SP_SITE_FILE" ]; then
  echo "scaleprobe-job: error: SCALEPROBE_SITE_ENV=$SP_SITE_FILE: no such file" >&2; exit 2
fi
# shellcheck disable=SC2154  # r: the root, set by the job script that sources this file
[ -n "$SP_SITE_FILE" ] || [ ! -f "$r/jobs/site.env" ] || SP_SITE_FILE=$r/jobs/site.env
if [ -n "$SP_SITE_FILE" ]; then
  set +eu  # site files are rarely written for set -eu
  # shellcheck disable=SC1090
  source "$SP_SITE_FILE"
  sp_rc=$?
  set -eu
  [ "$sp_rc" = 0 ] || { echo "scaleprobe-job: error: site file $SP_SITE_FILE failed (exit $sp_rc)" >&2; exit 2; }
fi
# A site file may set SCALEPROBE_* defaults without exporting them.
for sp_v in $(compgen -v | grep '^SCALEPROBE_' || true); do export "${sp_v?}"; done
sp_py=${SCALEPROBE_PYTHON:-/usr/bin/python3}
[ -n "${SCALEPROBE_PYTHON:-}" ] || [ -x "$sp_py" ] || sp_py=python3
export SP_SITE_FILE PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$r/python${PYTHONPATH:+:$PYTHONPATH}"
exec "$sp_py" -m scaleprobe_sweep.job "$@"
