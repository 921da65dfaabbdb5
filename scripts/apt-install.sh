#!/usr/bin/env bash
# apt-install.sh — the one routine that installs Debian packages for attnlab: build.sh calls it for
# the compilers, scripts/ensure.mjs for Chromium and the corpus's tools.
#
#   bash scripts/apt-install.sh WHO PACKAGE...
#
# WHO names the caller in messages. Installs with apt-get as root, or through sudo when it needs no
# password; otherwise fails saying what to install. apt and dpkg print hundreds of lines even with
# -qq: they go to a log, shown (its last 40 lines) only on failure.
set -euo pipefail
who=$1
shift
sudo=""
if [[ $(id -u) != 0 ]]; then
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo="sudo"; else
    echo "$who: missing $*; install it with: sudo apt-get install -y $*" >&2
    exit 1
  fi
fi
log=$(mktemp)
started=$SECONDS
if ! { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "$@"; } >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "$who: apt-get install $* failed (full log: $log)" >&2
  exit 1
fi
echo "$who: installed $* with apt-get ($(grep -c '^Unpacking ' "$log" || true) packages, $((SECONDS - started)) s)"
rm -f "$log"
