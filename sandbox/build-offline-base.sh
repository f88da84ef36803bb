#!/usr/bin/env bash
# Build a minimal Debian base image with python3, pytest and git WITHOUT pulling from any
# registry, for air-gapped machines (and this project's CI). Run as root.
#
#   sudo sandbox/build-offline-base.sh [TAG]        # default tag: dgym-tui-base:offline
#   dgym-tui image build --base dgym-tui-base:offline
#
# It uses debootstrap against the Debian mirror this machine's apt already uses (or
# $DEBIAN_MIRROR), then `docker import`s the result. When TAG already exists it does nothing.
set -euo pipefail

tag="${1:-dgym-tui-base:offline}"
suite="${DEBIAN_SUITE:-bookworm}"

if docker image inspect "$tag" >/dev/null 2>&1; then
    echo "base image $tag already present"
    exit 0
fi

command -v debootstrap >/dev/null || {
    echo "debootstrap is missing: apt-get install -y debootstrap" >&2
    exit 1
}

mirror="${DEBIAN_MIRROR:-}"
if [ -z "$mirror" ]; then
    # The Debian archive apt already uses: a source URI ending in /debian (deb822 "URIs:" lines
    # or one-line "deb URL suite" entries); third-party and security repos are passed over.
    mirror=$( { grep -rhoE '^URIs:[[:space:]]*[^[:space:]]+' /etc/apt/sources.list.d/ 2>/dev/null \
                    | awk '{print $2}'
                grep -rhoE '^deb[[:space:]]+(\[[^]]*\][[:space:]]+)?[^[:space:]]+' \
                    /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null | awk '{print $NF}'
              } | grep -E '/debian/?$' | head -n1 || true)
fi
[ -n "$mirror" ] || { echo "no Debian mirror found: set DEBIAN_MIRROR" >&2; exit 1; }

root=$(mktemp -d /tmp/dgym-base.XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "debootstrap $suite from the configured mirror into $root ..."
debootstrap --variant=minbase --include=python3,python3-pytest,git,ca-certificates \
    "$suite" "$root" "$mirror" >/tmp/dgym-debootstrap.log 2>&1 || {
    tail -n 20 /tmp/dgym-debootstrap.log >&2
    exit 1
}
# Keep the image small: apt lists and caches are not needed at run time.
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
tar -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8' \
    --change 'CMD ["python3"]' - "$tag"
echo "built $tag"
