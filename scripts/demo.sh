#!/usr/bin/env bash
# One command from a fresh Debian 12 / Ubuntu 24.04 checkout to the galaxy-merger demo:
# installs what is missing, builds, and starts bhviz. Arguments go to bhviz.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
exec "${BHVIZ_BUILD_DIR:-$root/build}/bhviz" "$@"
