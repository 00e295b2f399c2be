#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages bhviz uses, and only those that are missing.
# Idempotent: a second run installs nothing. Uses sudo when not root. Works on a minimal
# Debian 12 (bookworm) or Ubuntu 24.04 (noble, with universe enabled, as a standard install
# has it) root: scripts/fresh-check.sh proves that on roots made by debootstrap.
#
#   scripts/install-deps.sh           what building bhviz and running it needs (scripts/demo.sh,
#                                     scripts/build.sh): compilers, libraries, Mesa's EGL/GLX
#                                     drivers, xvfb-run for a window without a display
#   scripts/install-deps.sh --tests   that, plus what only the tests and CI use (scripts/test.sh,
#                                     scripts/fuzz.sh, scripts/sanitize.sh, scripts/format.sh):
#                                     ffmpeg and ffprobe (the video tests), xdotool (key taps in
#                                     the window test), clang with its libFuzzer/sanitizer
#                                     runtimes and OpenMP (the fuzzers), llvm (llvm-symbolizer
#                                     for sanitizer stacks), clang-format (the format check)
#
# CUDA is optional and never installed here: when nvcc is on PATH (or in /usr/local/cuda/bin)
# the build picks it up.
set -euo pipefail

usage() { echo "usage: scripts/install-deps.sh [--tests]" >&2; exit 2; }
tests=0
for a in "$@"; do
  case $a in
    --tests|--for-tests) tests=1 ;;
    *) usage ;;
  esac
done

packages=(
  build-essential cmake pkg-config git
  # python3-glad generates the GL loader at build time (and brings python3)
  libglfw3-dev libglm-dev libimgui-dev python3-glad
  # libopengl-dev: libOpenGL.so, which CMake's FindOpenGL requires (OPENGL_opengl_LIBRARY);
  # a --no-install-recommends install of the others does not bring it
  libegl-dev libgl-dev libopengl-dev
  # Mesa: EGL (headless pictures), GLX (the window) and the software rasteriser (llvmpipe)
  libegl-mesa0 libglx-mesa0 libgl1-mesa-dri
  xvfb xauth
  libcli11-dev nlohmann-json3-dev libstb-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhdf5-dev
  # OpenMPI: `mpirun -np K bhviz` (the distributed backend, sim/dist/) and the mpi tests
  libopenmpi-dev openmpi-bin
)
if [ "$tests" = 1 ]; then
  packages+=(ffmpeg xdotool clang libclang-rt-dev libomp-dev llvm clang-format)
fi

missing=()
for p in "${packages[@]}"; do
  # "install ok installed" is dpkg's status line for a fully installed package
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bhviz: all ${#packages[@]} packages are installed"
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
# Name what apt cannot find in one line, rather than apt's "Unable to locate package" for the first.
unknown=()
for p in "${missing[@]}"; do
  # (the output is read whole: grep -q closing the pipe early would fail it under pipefail)
  policy=$(apt-cache policy "$p" 2>/dev/null || true)
  [[ $policy == *"Candidate: "[!\(]* ]] || unknown+=("$p")
done
if [ ${#unknown[@]} -gt 0 ]; then
  echo "bhviz: apt knows no installable version of: ${unknown[*]}" >&2
  if grep -qs '^ID=ubuntu' /etc/os-release; then
    echo "bhviz: on Ubuntu these are in the universe component: enable it" \
         "(add-apt-repository universe), then run this again" >&2
  fi
  exit 1
fi
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
