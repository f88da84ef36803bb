#!/usr/bin/env bash
# Make this machine ready for Docker and bwrap sandboxes, idempotently (run as root):
#   - bubblewrap (the bwrap sandbox, and auto's choice where no Docker engine answers);
#   - the Docker engine (Debian's docker.io) installed and answering; started with
#     `dockerd --iptables=false --bridge=none` when none runs (sandboxes need no network);
#   - the sandbox image dgym-tui-sandbox:latest, built on a base made offline with debootstrap
#     (no registry needed; see build-offline-base.sh).
# Quick when everything is already there.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
export DEBIAN_FRONTEND=noninteractive

missing=()
command -v dockerd >/dev/null || missing+=(docker.io)
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v git >/dev/null || missing+=(git)
command -v bwrap >/dev/null || missing+=(bubblewrap)
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing ${missing[*]} ..."
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! docker info >/dev/null 2>&1; then
    echo "starting the Docker engine ..."
    # A dockerd killed without cleaning up leaves its pid file, and a new one refuses to start.
    if [ -f /var/run/docker.pid ]; then
        pid=$(cat /var/run/docker.pid)
        state=$(awk '/^State:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        if [ -z "$state" ] || [ "$state" = Z ]; then  # gone, or a zombie: not an engine
            rm -f /var/run/docker.pid
        fi
    fi
    nohup dockerd --iptables=false --bridge=none >/var/log/dgym-dockerd.log 2>&1 &
    for _ in $(seq 1 60); do
        docker info >/dev/null 2>&1 && break
        sleep 0.5
    done
    docker info >/dev/null 2>&1 || { tail -n 20 /var/log/dgym-dockerd.log >&2; echo "dockerd did not start" >&2; exit 1; }
fi

bash "$here/build-offline-base.sh" dgym-tui-base:offline
# Cached layers make this a second or two when nothing changed.
dgym-tui image build --base dgym-tui-base:offline | tail -n 2
