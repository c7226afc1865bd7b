#!/usr/bin/env bash
# Debian packages the tests need: chromium, for the adk web browser test (tests/test_adk_web_browser.py).
# Idempotent and instant when present. Installing needs root (CI runs as root); elsewhere it only
# says what is missing, and that one test skips -- except under CI=true, where it fails.
set -euo pipefail
command -v chromium >/dev/null 2>&1 && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "tests/system-deps.sh: chromium is missing; install it (Debian: sudo apt-get install -y chromium) to run the browser test" >&2
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
