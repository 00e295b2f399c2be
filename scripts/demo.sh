#!/usr/bin/env bash
# One command from a fresh Debian 12 / Ubuntu 24.04 checkout to the galaxy-merger demo:
# installs what is missing, builds, and opens the bhviz window. Arguments go to bhviz.
# Without a display (no DISPLAY or WAYLAND_DISPLAY: a server, a container, CI) it says so and
# runs the same merger headless, printing its progress, instead of failing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
bhviz="${BHVIZ_BUILD_DIR:-$root/build}/bhviz"
headless=0
for a in "$@"; do [ "$a" = "--headless" ] && headless=1; done
if [ "$headless" = 0 ] && [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "bhviz demo: no display here, so running the merger headless with progress lines" \
       "(for the window: run under a desktop, or xvfb-run -a $bhviz)"
  exec "$bhviz" --headless "$@"
fi
exec "$bhviz" "$@"
