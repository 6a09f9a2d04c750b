# Shared by /usr/local/bin/start-<tool> (sourced, POSIX sh): run as root, start a unit, wait until it answers.
# Timeouts: START_TIMEOUT_S overrides each helper's default (seconds).

TOOL=${0##*/}
TOOL=${TOOL#start-}

die() {
  echo "start-$TOOL: $*" >&2
  exit 1
}

# Re-run the helper as root (the desktop user may, without a password: /etc/sudoers.d/desktop-env-data).
need_root() {
  if [ "$(id -u)" -ne 0 ]; then
    exec sudo -n "$0" "$@" || die "needs root: run it as root or with sudo"
  fi
}

# start_unit UNIT: start a systemd unit (a no-op when it is already active).
start_unit() {
  systemctl start "$1" || die "systemctl start $1 failed; see: journalctl -u $1 -n 50
$(journalctl -u "$1" -n 20 --no-pager 2>/dev/null)"
}

# wait_until UNIT WHAT TIMEOUT_S COMMAND...: poll COMMAND once a second until it succeeds;
# fail early when UNIT has failed, and after TIMEOUT_S with what was awaited and the unit's log.
wait_until() {
  unit=$1 what=$2 timeout_s=$3
  shift 3
  start=$(date +%s)
  while :; do
    if "$@" >/dev/null 2>&1; then
      return 0
    fi
    if systemctl is-failed --quiet "$unit"; then
      die "$unit failed while waiting for $what; last log lines:
$(journalctl -u "$unit" -n 30 --no-pager 2>/dev/null)"
    fi
    if [ $(( $(date +%s) - start )) -ge "$timeout_s" ]; then
      die "timed out after ${timeout_s} s waiting for $what (set START_TIMEOUT_S to wait longer); last log lines of $unit:
$(journalctl -u "$unit" -n 30 --no-pager 2>/dev/null)"
    fi
    sleep 1
  done
}

# http_ok URL [TEXT]: the URL answers 2xx (and its body contains TEXT when given).
http_ok() {
  body=$(curl -fsS --max-time 10 "$1") || return 1
  [ -z "${2:-}" ] || printf '%s' "$body" | grep -q -- "$2"
}
