#!/usr/bin/env bash
# Installs whatever is missing, idempotently, and says what it does:
#   1. Debian engine packages (scripts/apt-packages.txt, the same list the Dockerfile installs; with --test, as
#      `npm test` runs it, also the tests' tools in scripts/apt-packages-test.txt) via apt-get,
#      when running as root or with passwordless sudo; otherwise it lists what is missing and goes on
#      (endpoints whose engine is missing answer 503 naming the package).
#   2. npm ci, when node_modules is missing or older than package-lock.json.
#   3. The TypeScript build, when dist/ is missing or older than a source file.
# QUIRE_SKIP_APT=1 skips step 1.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[setup] %s\n' "$*"; }

lists=(scripts/apt-packages.txt)
[ "${1:-}" = "--test" ] && lists+=(scripts/apt-packages-test.txt)
packages=$(cat "${lists[@]}" | grep -vE '^\s*(#|$)' | tr '\n' ' ')
if [ "${QUIRE_SKIP_APT:-0}" != "1" ] && command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in $packages; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""; elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"; else sudo="none"; fi
    if [ "$sudo" = none ]; then
      say "missing Debian packages (not root, no sudo; install them yourself): ${missing[*]}"
    else
      say "installing ${#missing[@]} Debian packages: ${missing[*]}"
      export DEBIAN_FRONTEND=noninteractive
      $sudo apt-get update -q
      $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
  else
    say "Debian packages: all $(echo $packages | wc -w) present"
  fi
fi

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
  say "npm ci (node_modules missing or older than package-lock.json)"
  npm ci --no-audit --no-fund
  touch node_modules
else
  say "node_modules up to date"
fi

stamp=dist/.built
if [ ! -f "$stamp" ] || [ -n "$(find app engines tsconfig.json package.json -newer "$stamp" -print -quit 2>/dev/null)" ]; then
  say "building (tsc)"
  rm -rf dist
  npx tsc -p tsconfig.json
  touch "$stamp"
else
  say "build up to date"
fi
