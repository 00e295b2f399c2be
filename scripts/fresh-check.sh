#!/usr/bin/env bash
# The fresh-machine promise, checked: makes a minimal root of each distribution named
# (debootstrap --variant=minbase), puts a clean copy of this repository in it and runs CI's
# command there (`bash .ci/run`, as root, CI=true, no standard input), logging to a file and
# printing one verdict line per distribution. Nothing is installed in the root beforehand:
# whatever the build, the tests and the fuzzers need must come from scripts/install-deps.sh.
# Run as root on a Debian or Ubuntu host with debootstrap (docs/FRESH-CHECK.md).
#
#   scripts/fresh-check.sh [OPTIONS] DIST...     DIST: debian12 (bookworm), ubuntu2404 (noble)
#     --worktree     the working tree over the clone of HEAD (modified files, and untracked
#                    ones that git does not ignore): checks uncommitted work
#     --command CMD  run CMD in the repository instead of `bash .ci/run` (e.g. 'bash scripts/test.sh')
#     --new-base     debootstrap anew even where a base root of an earlier run is kept
#     --keep         keep the root afterwards (it is removed by default; the log is kept)
#   Environment: BHVIZ_FRESH_DIR (the work folder: /var/tmp/bhviz-fresh), BHVIZ_FUZZ_SECONDS
#   (passed to .ci/run).
#
# The pristine debootstrap result is kept as DIR/DIST-base.tar and unpacked for the next run
# (--new-base to make it again): only debootstrap's own packages are in it. Each run gets a new
# root from it. Debootstrap's default mirror of each distribution is used. Ubuntu's root gets
# the main and universe components, as a standard install has them. On a Debian 12 host, whose
# debootstrap knows no noble and which has no Ubuntu keyring, the noble root is made with
# debootstrap's generic Ubuntu script and the ubuntu-keyring package of Debian 13, fetched with
# apt from the host's own Debian mirror and checked with the host's Debian archive keys.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
self=$0

usage() {
  sed -n '9,17p' "$self" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
root=''  # the root being checked; the exit trap unmounts what is mounted under it
mounts_under() {  # ROOT: the mount points under ROOT, deepest first
  awk -v r="$1/" 'index($5 "/", r) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}
stop_processes_in() {  # ROOT: ends the processes this check left running inside ROOT
  local pid
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$1" ] && kill "$pid" 2>/dev/null || true
  done
  sleep 1
  for pid in $(ls /proc | grep -E '^[0-9]+$'); do
    [ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$1" ] && kill -9 "$pid" 2>/dev/null || true
  done
}
release_root() {  # unmounts everything under $root and, unless --keep, removes it
  [ -n "$root" ] && [ -d "$root" ] || return 0
  stop_processes_in "$root"
  local m
  for m in $(mounts_under "$root"); do umount "$m" 2>/dev/null || umount -l "$m"; done
  if [ -n "$(mounts_under "$root")" ]; then
    echo "fresh-check: still mounted under $root; not removing it" >&2
    return 1
  fi
  # --one-file-system: never follow into anything still mounted there
  [ "$keep" = 1 ] || rm -rf --one-file-system "$root"
  root=''
}
# The ubuntu-archive-keyring.gpg to check Ubuntu's archive with: the host's, or Debian 13's
# ubuntu-keyring package fetched through apt (from the host's Debian mirror, signed by Debian).
ubuntu_keyring() {
  local host=/usr/share/keyrings/ubuntu-archive-keyring.gpg
  if [ -s "$host" ]; then echo "$host"; return; fi
  local kept=$work/ubuntu-archive-keyring.gpg
  if [ -s "$kept" ]; then echo "$kept"; return; fi
  local uri
  uri=$({ grep -rhsE '^(URIs:|deb )' /etc/apt/sources.list /etc/apt/sources.list.d/ || true; } |
        grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ' || true)
  if [ -z "$uri" ] || [ ! -s /usr/share/keyrings/debian-archive-keyring.gpg ]; then
    echo "fresh-check: no Ubuntu keyring here (apt-get install ubuntu-keyring)" >&2
    return 1
  fi
  local apt_dir
  apt_dir=$(mktemp -d "$work/apt.XXXXXX")
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
  echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" \
    >"$apt_dir/sources.list"
  local opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
              -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
              -o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
  echo "fresh-check: fetching Debian 13's ubuntu-keyring from $uri" >&2
  apt-get "${opts[@]}" update -qq >&2
  (cd "$apt_dir" && apt-get "${opts[@]}" download ubuntu-keyring >&2)
  dpkg-deb -x "$apt_dir"/ubuntu-keyring_*.deb "$apt_dir/x"
  cp "$apt_dir/x/usr/share/keyrings/ubuntu-archive-keyring.gpg" "$kept"
  rm -rf "$apt_dir"
  echo "$kept"
}

make_base() {  # DIST BASE_TAR: debootstraps a minimal root of DIST and keeps it as BASE_TAR
  local dist=$1 tarball=$2 tmp=$work/$1-bootstrap
  local args=(--variant=minbase) suite script=()
  case $dist in
    debian12) suite=bookworm ;;
    ubuntu2404)
      suite=noble
      args+=(--components=main,universe "--keyring=$(ubuntu_keyring)")
      # An older debootstrap knows Ubuntu's later series only through its generic script; an
      # empty mirror argument keeps that script's default mirror.
      [ -e /usr/share/debootstrap/scripts/noble ] || script=('' gutsy)
      ;;
  esac
  rm -rf --one-file-system "$tmp"
  echo "fresh-check: debootstrap ${args[*]} $suite (default mirror)"
  if ! debootstrap "${args[@]}" "$suite" "$tmp" "${script[@]}" >"$work/$dist-debootstrap.log" 2>&1; then
    tail -n 20 "$work/$dist-debootstrap.log" >&2
    rm -rf --one-file-system "$tmp"
    return 1
  fi
  tar -C "$tmp" --numeric-owner -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -rf --one-file-system "$tmp"
}

copy_source() {  # DEST: a clone of HEAD, as CI has it; with --worktree, the working tree over it
  git clone -q --no-hardlinks "$repo" "$1"
  [ "$worktree" = 1 ] || return 0
  # Modified and untracked files (those git does not ignore) over the clone, deleted ones removed.
  (cd "$repo" && git ls-files -z -co --exclude-standard |
     while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
     tar --null -T - -cf -) | tar -C "$1" -xf -
  (cd "$repo" && git ls-files -z --deleted) | (cd "$1" && xargs -0 -r rm -f --)
}

minutes() { printf '%dm%02ds' "$(($1 / 60))" "$(($1 % 60))"; }

summarize() {  # LOG TOOK: the numbers of a run, read from its stamped log
  local log=$1 took=$2
  # The install ends where CMake first speaks; .ci/run's steps begin at "ci: == NAME ==".
  awk -v took="$took" '
    function mmss(t) { return sprintf("%dm%02ds", t / 60, t % 60) }
    { t = substr($0, 2, 5) + 0 }
    /\] -- The CXX compiler identification/ && !cmake { cmake = t }
    match($0, /ci: == [a-z]+ ==/) { n++; name[n] = substr($0, RSTART + 7, RLENGTH - 10); at[n] = t }
    /tests passed, [0-9]+ tests failed out of/ { sub(/^\[ *[0-9]+\] /, ""); ct[++c] = $0 }
    /\(Skipped\)|\*\*\*Skipped/ { skipped++ }
    /bhviz: fuzzing the .* reader/ { fuzz++ }
    END {
      if (cmake) printf "  packages installed in %s\n", mmss(cmake)
      for (i = 1; i <= n; i++) printf "  step %-9s %s\n", name[i], mmss((i < n ? at[i + 1] : took) - at[i])
      for (i = 1; i <= c; i++) printf "  ctest: %s\n", ct[i]
      printf "  skipped tests: %d; fuzz targets run: %d\n", skipped, fuzz
    }' "$log"
}

check() {  # DIST: one fresh-machine check; prints the verdict line and returns its status
  local dist=$1 base=$work/$1-base.tar
  local log=$work/$dist.log
  if [ "$new_base" = 1 ] || [ ! -s "$base" ]; then
    local t0=$SECONDS
    make_base "$dist" "$base" || { echo "fresh-check $dist: FAIL: debootstrap (see $work/$dist-debootstrap.log)"; return 1; }
    echo "fresh-check: base root made in $((SECONDS - t0)) s"
  fi
  root=$work/$dist-root
  release_root; root=$work/$dist-root   # a root left by an interrupted run
  rm -rf --one-file-system "$root"
  mkdir -p "$root"
  tar -C "$root" -xf "$base"
  cp /etc/resolv.conf "$root/etc/resolv.conf"  # name service for apt inside
  # As in any chroot: package scripts must not start services.
  printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  mount -t proc proc "$root/proc"
  mount -t sysfs sysfs "$root/sys"
  mount --rbind /dev "$root/dev"
  mount --make-rslave "$root/dev"   # unmounting here must never reach the host's /dev
  copy_source "$root/src/bhviz"
  local what='clone of HEAD'
  [ "$worktree" = 1 ] && what='copy of the working tree'
  echo "fresh-check $dist: running '$command' in a minimal root ($what); log: $log"
  local t0=$SECONDS rc
  # A fresh login's environment, as CI's: no standard input, CI=true; each line is stamped with
  # the seconds since the start.
  # In the background, waited for: bash runs a trap (Ctrl-C, kill) only between commands, and
  # `wait` is one that a signal interrupts.
  set +e
  (
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb CI=true \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        ${BHVIZ_FUZZ_SECONDS:+BHVIZ_FUZZ_SECONDS=$BHVIZ_FUZZ_SECONDS} \
        bash -c "cd /src/bhviz && $command" </dev/null 2>&1 |
      while IFS= read -r line; do printf '[%5d] %s\n' "$((SECONDS - t0))" "$line"; done >"$log"
    exit "${PIPESTATUS[0]}"
  ) &
  wait "$!"
  rc=$?
  set -e
  local took=$((SECONDS - t0))
  local verdict=PASS
  [ "$rc" -eq 0 ] || verdict="FAIL (status $rc)"
  echo "fresh-check $dist: $verdict in $(minutes "$took"); log: $log"
  summarize "$log" "$took"
  release_root
  return "$rc"
}

main() {
  worktree=0 keep=0 new_base=0 command='bash .ci/run' dists=()
  while [ $# -gt 0 ]; do
    case $1 in
      --worktree) worktree=1 ;;
      --keep) keep=1 ;;
      --new-base) new_base=1 ;;
      --command) [ $# -ge 2 ] || usage; command=$2; shift ;;
      debian12|bookworm) dists+=(debian12) ;;
      ubuntu2404|noble) dists+=(ubuntu2404) ;;
      *) usage ;;
    esac
    shift
  done
  [ ${#dists[@]} -gt 0 ] || usage
  if [ "$(id -u)" -ne 0 ]; then
    echo "fresh-check: run as root (debootstrap, chroot and mounts need it)" >&2
    exit 2
  fi
  for tool in debootstrap chroot tar git; do
    command -v "$tool" >/dev/null 2>&1 || { echo "fresh-check: needs $tool (apt-get install debootstrap)" >&2; exit 2; }
  done
  work=${BHVIZ_FRESH_DIR:-/var/tmp/bhviz-fresh}
  mkdir -p "$work"
  trap release_root EXIT
  trap 'exit 130' INT TERM
  local status=0 d
  for d in "${dists[@]}"; do check "$d" || status=1; done
  return "$status"
}

# One line, read whole before it runs: the checkout may change under a run of half an hour,
# and bash reads a script as it goes.
main "$@"; exit
