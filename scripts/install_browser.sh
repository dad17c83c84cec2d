#!/usr/bin/env bash
# Install the browser the e2e tests drive: Debian's Chromium and its driver, via apt.
# Idempotent: does nothing when /usr/bin/chromium is already there. Never downloads a
# browser build of its own (no `playwright install`): only the Debian package is used.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "chromium already installed: $(/usr/bin/chromium --version 2>/dev/null || echo /usr/bin/chromium)"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium chromium-driver
/usr/bin/chromium --version
