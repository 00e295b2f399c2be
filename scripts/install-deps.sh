#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages bhviz builds against, and only those that are missing.
# Idempotent: a second run installs nothing. Uses sudo when not root.
# Works on Debian 12 and Ubuntu 24.04. CUDA is optional and never installed here:
# when nvcc is on PATH (or in /usr/local/cuda/bin) the build picks it up. clang with its
# runtime libraries (libFuzzer, the sanitizers) and OpenMP are for scripts/fuzz.sh only; ffmpeg
# (for --video) is optional and not installed here.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libglfw3-dev libglm-dev libimgui-dev python3-glad
  libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri xvfb xauth
  libcli11-dev nlohmann-json3-dev libstb-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhdf5-dev
  clang libclang-rt-dev libomp-dev
)

missing=()
for p in "${packages[@]}"; do
  # "install ok installed" is dpkg's status line for a fully installed package
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bhviz: all ${#packages[@]} build dependencies are installed"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo_cmd=(sudo)
  else
    echo "bhviz: missing packages (${missing[*]}) and not root, and sudo is not available" >&2
    exit 1
  fi
fi

echo "bhviz: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
