#!/usr/bin/env bash
# Prepares .gpu-bundle/ for a bare NVIDIA GPU server: the shared recipe (GL loader, GLFW and its
# X11 libraries; ../shared/gpu-server/bundle.sh) plus what else bhviz links that such an image
# lacks: libstb0 (Debian's imgui links it). env.sh there unpacks every deps/*.deb into /tmp/deps.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ -f .gpu-bundle/env.sh ] || ../shared/gpu-server/bundle.sh
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
if ! ls .gpu-bundle/deps/libstb0_*.deb >/dev/null 2>&1; then
  mkdir -p /tmp/amd64/partial
  ls /tmp/amd64/*Packages* >/dev/null 2>&1 || apt-get $o update -qq
  (cd .gpu-bundle/deps && apt-get $o download -qq libstb0)
fi
ls .gpu-bundle/deps
