#!/usr/bin/env bash
# Debian packages the tests need: chromium (the adk web browser test), postgresql (throwaway
# clusters for the PostgreSQL store tests: initdb/pg_ctl, never the system service) and haproxy
# (the replica failover run). Idempotent and instant when present. Installing needs root (CI runs
# as root); elsewhere it only says what is missing, and those tests skip -- except under CI=true,
# where they fail.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
command -v haproxy >/dev/null 2>&1 || missing+=(haproxy)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "tests/system-deps.sh: missing ${missing[*]}; install (Debian: sudo apt-get install -y ${missing[*]}) to run the tests that need them" >&2
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
# Debian starts the packages' system services; the tests start their own servers on free ports
command -v pg_ctlcluster >/dev/null 2>&1 && pg_lsclusters -h 2>/dev/null | while read -r ver name _; do
  pg_ctlcluster "$ver" "$name" stop || true; done
command -v service >/dev/null 2>&1 && service haproxy stop >/dev/null 2>&1 || true
