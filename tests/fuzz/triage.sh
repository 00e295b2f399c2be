# shellcheck shell=bash disable=SC2034  # t_*, r_* and fuzz_* are read by the scripts that source this
# Sourced by scripts/fuzz.sh and scripts/fuzz-replay.sh (bash): the sanitizers' settings, and the
# triage of an input that failed in a fuzz target.
#
# Debian's libhdf5 is not instrumented and fails inside itself on some hostile files (crashes,
# multi-gigabyte allocations, heap corruption). bhviz reads HDF5 in a child process
# (sim/io/isolated.h), so such a file costs bhviz one SnapshotError: it is libhdf5's bug, not
# ours, as long as that path refuses the file (BHVIZ_FUZZ_ISOLATED=1). Which one it is comes from
# the innermost stack frame that is neither a runtime (libc, the sanitizers, libFuzzer) nor
# another system library: libhdf5's, or ours. Frames are read symbolized or not
# (`#N 0x… in FUNC LOCATION` or `#N 0x… (/path/module+0xOFFSET)`).
#
# Needs: BHVIZ_ROOT (the source tree).

# Limits shared by fuzzing and every re-run, so a finding reproduces under the same rules.
fuzz_limits=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10)
fuzz_symbolizer=""
fuzz_line2func=""  # reads a binary's own frames when the sanitizer printed them raw

# Sanitizer options and a symbolizer. The user's ASAN_OPTIONS/UBSAN_OPTIONS come last, so they
# win. BHVIZ_FUZZ_SYMBOLIZE=0 prints raw frames, as on a machine with no symbolizer.
# Leaks are not checked: libhdf5 keeps global state until exit. A malloc the allocator cannot
# serve returns NULL, as it does outside the sanitizer: libhdf5 asks for 256 GiB on some corrupt
# headers and then fails cleanly (tests/data/fuzz/hdf5-huge-metadata.hdf5); ours would escape as
# std::bad_alloc, and one that succeeds above -malloc_limit_mb is reported by libFuzzer.
# tests/fuzz/asan.supp silences reads past a buffer inside libhdf5 itself (see there).
fuzz_setup_env() {
  if [ "${BHVIZ_FUZZ_ENV_SET:-}" = 1 ]; then  # set by the script that runs this one
    fuzz_symbolizer=${ASAN_SYMBOLIZER_PATH:-}
    fuzz_line2func=${BHVIZ_FUZZ_LINE2FUNC:-}
    return 0
  fi
  local asan="detect_leaks=0:allocator_may_return_null=1"
  asan+=":suppressions=$BHVIZ_ROOT/tests/fuzz/asan.supp"
  fuzz_symbolizer=$(fuzz_find_symbolizer)
  if [ "${BHVIZ_FUZZ_SYMBOLIZE:-1}" = 0 ]; then
    asan+=":symbolize=0"
  elif [ -n "$fuzz_symbolizer" ]; then
    export ASAN_SYMBOLIZER_PATH=$fuzz_symbolizer UBSAN_SYMBOLIZER_PATH=$fuzz_symbolizer
  elif command -v addr2line >/dev/null 2>&1; then
    asan+=":allow_addr2line=1"
    echo "bhviz: no llvm-symbolizer (Debian: apt-get install llvm): stacks are read with addr2line"
  else
    echo "bhviz: no llvm-symbolizer or addr2line: raw frames of the fuzz binary count as ours"
  fi
  if [ -n "$fuzz_symbolizer" ]; then
    fuzz_line2func=$fuzz_symbolizer
  elif command -v addr2line >/dev/null 2>&1; then
    fuzz_line2func=addr2line
  fi
  export ASAN_OPTIONS="$asan${ASAN_OPTIONS:+:$ASAN_OPTIONS}" BHVIZ_FUZZ_ENV_SET=1
  export BHVIZ_FUZZ_LINE2FUNC=$fuzz_line2func
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
}

# The llvm-symbolizer that matches the compiler if there is one, else any.
fuzz_find_symbolizer() {
  local cxx=${BHVIZ_FUZZ_CXX:-clang++} major="" c
  major=$("$cxx" --version 2>/dev/null | sed -nE 's/.*clang version ([0-9]+).*/\1/p' | head -1)
  for c in ${major:+llvm-symbolizer-$major /usr/lib/llvm-$major/bin/llvm-symbolizer} \
           llvm-symbolizer /usr/lib/llvm-*/bin/llvm-symbolizer; do
    if command -v "$c" >/dev/null 2>&1; then command -v "$c"; return; fi
  done
}

# FUNC and SRC of BINARY+OFFSET, one a line, from the binary's debug information.
fuzz_resolve() {
  case $fuzz_line2func in
    "") ;;
    addr2line) addr2line -f -C -e "$1" "0x$2" 2>/dev/null | head -2 || true ;;
    *) "$fuzz_line2func" --obj="$1" "0x$2" 2>/dev/null | head -2 || true ;;
  esac
}

# Which side a frame is on, in f_side: libhdf5, skip (a runtime or another system library) or
# ours. Globals in: f_func f_mod f_off f_src (a raw frame of the binary is resolved here).
fuzz_frame_side() {
  local base=${f_mod##*/}
  if [[ $base == libhdf5* || $f_func =~ ^H5[A-Za-z0-9]*_ || $f_src =~ (^|/)H5[A-Za-z0-9_]*\.c(:|$) ]]; then
    f_side=libhdf5; return
  fi
  # Our code is linked statically into the fuzz binary: a frame in a shared library is the
  # system's (libc, libstdc++, libomp, zlib under libhdf5, ...), and its caller decides.
  if [[ -n $f_mod && ( $base == *.so || $base == *.so.* || $base == linux-vdso* ) ]]; then
    f_side=skip; return
  fi
  if [[ -n $f_mod && -z $f_func ]]; then
    local resolved
    resolved=$(fuzz_resolve "$f_mod" "$f_off")
    f_func=$(sed -n 1p <<<"$resolved")
    f_src=$(sed -n 2p <<<"$resolved")
    [[ $f_func == "??" ]] && f_func=""
    [[ $f_src == "??"* || $f_src == ":"* ]] && f_src=""
    if [[ -z $fuzz_line2func ]]; then
      f_side=ours; return  # cannot tell the sanitizer's frames from ours: count it against us
    fi
  fi
  # Sanitizers, libFuzzer, the C and C++ runtimes, by name or by source.
  if [[ $f_func =~ ^(__asan|__ubsan|__lsan|__sanitizer|__interceptor_|___interceptor_|__interception|__sancov|fuzzer::|__cxa_|__gnu_cxx::|_Unwind_|__libc_|__GI_|__pthread|__memcpy|__memmove|__memset|operator\ new|operator\ delete|std::terminate|std::__terminate) ]] ||
     [[ $f_func =~ ^(malloc|calloc|realloc|free|posix_memalign|aligned_alloc|memalign|valloc|memcpy|memmove|memset|memcmp|strlen|strnlen|strcmp|strncmp|strcpy|strncpy|raise|abort|_start)$ ]] ||
     [[ $f_src =~ (compiler-rt/|sanitizer_common/|/asan/|/ubsan/|/fuzzer/Fuzzer|\.o$) ]]; then
    f_side=skip; return
  fi
  # In the binary with no line information: not compiled by us (we build with -g), so the
  # sanitizer's or libFuzzer's. A relative source path is a system library's (glibc's).
  if [[ -n $f_mod && -z $f_src ]] || [[ -n $f_src && $f_src != /* ]]; then
    f_side=skip; return
  fi
  f_side=ours
}

# LOG → "SIDE<TAB>WHERE" for the innermost frame of its first stack trace that is libhdf5's or
# ours (SIDE: libhdf5, ours, or none when there is no such frame).
fuzz_innermost() {
  local line rest n prev=-1
  while IFS= read -r line; do
    [[ $line =~ ^[[:space:]]*#([0-9]+)[[:space:]]+0x[0-9a-fA-F]+[[:space:]]*(.*)$ ]] || continue
    n=${BASH_REMATCH[1]}
    rest=${BASH_REMATCH[2]}
    [ "$n" -le "$prev" ] && break  # the next trace (e.g. where the memory was allocated)
    prev=$n
    [[ $rest =~ ^(.*[^[:space:]])[[:space:]]+\(BuildId:\ [0-9a-fA-F]+\)[[:space:]]*$ ]] && rest=${BASH_REMATCH[1]}
    rest=${rest#in }
    [[ $rest == *"<unknown module>"* ]] && continue
    f_func="" f_mod="" f_off="" f_src=""
    if [[ $rest =~ ^(.*)\(([^()]*)\+0x([0-9a-fA-F]+)\)$ ]]; then
      f_func=${BASH_REMATCH[1]} f_mod=${BASH_REMATCH[2]} f_off=${BASH_REMATCH[3]}
      f_func=${f_func%"${f_func##*[![:space:]]}"}
    elif [[ $rest =~ ^(.*)[[:space:]]([^[:space:]]+(:[0-9]+(:[0-9]+)?|\.o))$ ]]; then
      f_func=${BASH_REMATCH[1]} f_src=${BASH_REMATCH[2]}
    else
      f_func=$rest
    fi
    fuzz_frame_side
    if [[ $f_side != skip ]]; then
      if [[ -z $f_func && -f $f_mod ]]; then  # a raw libhdf5 frame: name it if we can
        f_func=$(fuzz_resolve "$f_mod" "$f_off" | sed -n 1p)
        [[ $f_func == "??" ]] && f_func=""
      fi
      local what=${f_func:-"?"}
      [ ${#what} -gt 90 ] && what="${what:0:87}..."
      if [[ -n $f_mod ]]; then what+=" (${f_mod##*/}+0x$f_off)"; else what+=" (${f_src#"$BHVIZ_ROOT"/})"; fi
      printf '%s\t%s\n' "$f_side" "$what"
      return
    fi
  done < <(grep -E '^[[:space:]]*#[0-9]+ 0x' "$1")
  printf 'none\t-\n'
}

# What a log says went wrong: oom, timeout or crash; and the sanitizer's one-line reason.
fuzz_kind() {
  if grep -q 'ERROR: libFuzzer: out-of-memory' "$1"; then echo oom
  elif grep -q 'ERROR: libFuzzer: timeout' "$1"; then echo timeout
  else echo crash
  fi
}
fuzz_reason() {
  grep -m1 -E 'ERROR: (AddressSanitizer|libFuzzer|UndefinedBehaviorSanitizer|LeakSanitizer)|runtime error:|CHECK failed' "$1" |
    sed -E 's/^==[0-9]+==[[:space:]]*//; s/ \(pc 0x.*//; s/^[^:]*(\.cpp|\.h):[0-9]+:[0-9]+: //' | cut -c1-110 || true
}

# BIN INPUT LOG: the input through the isolated HDF5 reader (a child process with bounded memory
# and CPU time, as bhviz reads files). Status 0 when bhviz would give a snapshot or one error.
fuzz_isolated() {
  local scratch
  scratch=$(mktemp -d)
  # The child runs inside libFuzzer's process: keep its artifacts out of the way.
  BHVIZ_FUZZ_ISOLATED=1 "$1" -timeout=300 -rss_limit_mb=4096 -artifact_prefix="$scratch/" "$2" >"$3" 2>&1
  local rc=$?
  rm -rf "$scratch"
  return $rc
}

# Triage of one failure. TARGET BIN INPUT STEM [LOG]: LOG is the failing run's log (an
# in-process run); without it INPUT is re-run alone first (a finding of fork mode, whose logs
# libFuzzer deletes). STEM.alone.log and STEM.isolated.log are written. Sets t_verdict (libhdf5:
# refused by the isolated reader; escaped: libhdf5's, but the isolated reader did not refuse it;
# ours; unreproduced: ran clean alone), t_kind, t_where, t_reason, t_log, t_stem.
fuzz_triage() {
  local target=$1 bin=$2 input=$3 side
  t_stem=$4 t_log=${5:-} t_kind="" t_where="-" t_reason="" t_verdict=""
  if [ -z "$t_log" ]; then
    t_log="$t_stem.alone.log"
    if "$bin" "${fuzz_limits[@]}" "$input" >"$t_log" 2>&1; then
      t_verdict=unreproduced t_kind=$(fuzz_kind_of_name "$input")
    fi
  fi
  if [ -z "$t_verdict" ]; then
    t_kind=$(fuzz_kind "$t_log")
    t_reason=$(fuzz_reason "$t_log")
    IFS=$'\t' read -r side t_where < <(fuzz_innermost "$t_log")
    if [ "$side" = none ] && [ "$t_kind" = oom ]; then fuzz_allocation_stack "$bin" "$input"; fi
    t_verdict=ours
    [ "$side" = libhdf5 ] && t_verdict=libhdf5
  fi
  # Whatever the frames say, an HDF5 input that bhviz itself cannot read safely is our failure.
  if [ "$target" = hdf5 ] && [ "$t_verdict" != ours ]; then
    if ! fuzz_isolated "$bin" "$input" "$t_stem.isolated.log"; then
      t_verdict=escaped
      t_log="$t_stem.isolated.log"
    fi
  fi
}

# An out-of-memory report with no stack: libFuzzer's RSS limit struck while it printed the stack
# of a malloc above -malloc_limit_mb (libhdf5 holds ~2 GB on tests/data/fuzz/
# hdf5-cache-protect-oom.hdf5 before it asks for 16 GiB more). The input again with
# ASan's allocation cap in place of libFuzzer's limit: ASan names the same malloc with its stack,
# and nothing else is in flight. BIN INPUT; uses t_stem, sets side, t_where, t_reason and t_log
# when the re-run found a stack.
fuzz_allocation_stack() {
  local log=$t_stem.allocation.log found where
  ASAN_OPTIONS="${ASAN_OPTIONS:-}:allocator_may_return_null=0:max_allocation_size_mb=1024" \
    "$1" -rss_limit_mb=4096 -malloc_limit_mb=0 -timeout=10 "$2" >"$log" 2>&1 || true  # it fails
  IFS=$'\t' read -r found where < <(fuzz_innermost "$log")
  [ "$found" = none ] && return 0
  side=$found t_where=$where t_log=$log
  t_reason=$(fuzz_reason "$log")
}

fuzz_kind_of_name() {
  case ${1##*/} in
    oom-*) echo oom ;;
    timeout-*) echo timeout ;;
    *) echo crash ;;
  esac
}

# A step's findings: fuzz_step_begin, then fuzz_note for each triaged input, then fuzz_step_end.
# Sets t_counts (an associative array, "VERDICT KIND" → n), t_bad (how many failed in our code
# or escaped the isolated reader) and t_first_bad (the first of those).
fuzz_show_max=8  # findings described one by one per step; the rest are counted
fuzz_step_begin() {
  declare -gA t_counts=()
  t_bad=0 t_first_bad="" t_shown=0
}
fuzz_step_end() {
  local hidden=0 key
  for key in "${!t_counts[@]}"; do hidden=$((hidden + ${t_counts[$key]})); done
  hidden=$((hidden - t_shown))
  if [ "$hidden" -gt 0 ]; then echo "bhviz:   ... and $hidden more in ${1#"$BHVIZ_ROOT"/}"; fi
  return 0
}

# Counts the input just triaged and describes it: one line, the isolated reader's answer for
# libhdf5's, and the first failure in our code with its stack. LABEL PATH.
fuzz_note() {
  local key="$t_verdict $t_kind" what
  t_counts[$key]=$(( ${t_counts[$key]:-0} + 1 ))
  if [[ $t_verdict == ours || $t_verdict == escaped ]]; then
    t_bad=$((t_bad + 1))
    [ -n "$t_first_bad" ] || t_first_bad=${2#"$BHVIZ_ROOT"/}
  fi
  [ "$t_shown" -lt "$fuzz_show_max" ] || return 0
  t_shown=$((t_shown + 1))
  local kind=$t_kind
  if [ "$kind" = oom ]; then kind="out-of-memory"; fi
  case $t_verdict in
    libhdf5) what="libhdf5 $kind, refused by the isolated reader" ;;
    unreproduced) what="$kind that does not happen when the input runs alone (libhdf5 state)" ;;
    escaped) what="libhdf5 $kind that the isolated reader does NOT refuse cleanly" ;;
    ours) what="$kind in OUR code" ;;
  esac
  echo "bhviz:   $1: $what: ${2#"$BHVIZ_ROOT"/}"
  [ "$t_verdict" = unreproduced ] && return 0
  echo "bhviz:     ${t_reason:-?}; innermost: $t_where"
  if [ "$t_verdict" = libhdf5 ] && [ -f "$t_stem.isolated.log" ]; then
    local refusal
    refusal=$(grep -m1 '^bhviz-fuzz: ' "$t_stem.isolated.log" | cut -c13-170 || true)
    if [ -n "$refusal" ]; then echo "bhviz:     isolated: $refusal"; fi
  fi
  if [ "$t_bad" -eq 1 ] && [[ $t_verdict == ours || $t_verdict == escaped ]]; then
    echo "bhviz:     log: ${t_log#"$BHVIZ_ROOT"/}"
    if [ "$t_verdict" = ours ]; then
      grep -E 'ERROR|runtime error|^[[:space:]]*#[0-9]+ ' "$t_log" | head -n 12
    else
      grep -vE 'WARNING: AddressSanitizer failed to allocate' "$t_log" | tail -n 8
    fi | sed -E 's/[[:space:]]*\(BuildId: [0-9a-f]+\)//; s/^/bhviz:     | /' | cut -c1-160 || true
  fi
  return 0
}

# t_counts in words ("2 libhdf5 OOMs, 1 libhdf5 crash, all refused by the isolated reader"), or
# the argument when there are none ("nothing found").
fuzz_count_words() {
  local key n verdict kind out="" word hdf5=0 bad=0
  for key in "ours crash" "ours oom" "ours timeout" "escaped crash" "escaped oom" \
             "escaped timeout" "libhdf5 crash" "libhdf5 oom" "libhdf5 timeout" \
             "unreproduced crash" "unreproduced oom" "unreproduced timeout"; do
    n=${t_counts[$key]:-0}
    [ "$n" -eq 0 ] && continue
    verdict=${key% *} kind=${key#* }
    case $kind in oom) word=OOM ;; *) word=$kind ;; esac
    if [ "$n" -gt 1 ]; then [ "$kind" = crash ] && word+=es || word+=s; fi
    case $verdict in
      ours) out+="${out:+, }$n $word in OUR code"; bad=1 ;;
      escaped) out+="${out:+, }$n libhdf5 $word NOT refused by the isolated reader"; bad=1 ;;
      libhdf5) out+="${out:+, }$n libhdf5 $word"; hdf5=$((hdf5 + n)) ;;
      unreproduced) out+="${out:+, }$n $word not reproduced alone" ;;
    esac
  done
  if [ "$hdf5" -gt 0 ] && [ "$bad" = 0 ]; then
    [ "$hdf5" -gt 1 ] && out+=", all" || out+=","
    out+=" refused by the isolated reader"
  fi
  echo "${out:-${1:-nothing found}}"
}

# Whether INPUT is of TARGET's format: a seed of it, or a committed TARGET-* file.
fuzz_is_format() {
  [[ $2 == */seeds/$1/* || ${2##*/} == "$1"-* ]]
}

# Replays each INPUT alone through TARGET (no fuzzing) and triages what fails. The inputs of
# TARGET's format that run clean are copied to CLEAN (the fuzzers start from them: an input that
# crashes would stop an in-process fuzzer before it began). Logs go to LOGS. Sets r_line, r_bad.
fuzz_replay() {
  local target=$1 bin=$2 clean=$3 logs=$4 input stem n=0
  shift 4
  rm -rf "$clean" "$logs"
  mkdir -p "$clean" "$logs"
  fuzz_step_begin
  for input in "$@"; do
    n=$((n + 1))
    stem=$logs/${input##*/}
    if "$bin" "${fuzz_limits[@]}" "$input" >"$stem.log" 2>&1; then
      if fuzz_is_format "$target" "$input"; then cp "$input" "$clean/"; fi
      continue
    fi
    fuzz_triage "$target" "$bin" "$input" "$stem" "$stem.log"
    fuzz_note "replay $target" "$input"
  done
  fuzz_step_end "$logs"
  r_bad=$t_bad
  local inputs="$n inputs"
  [ "$n" -eq 1 ] && inputs="1 input"
  r_line="bhviz: fuzz replay $target: $inputs, each alone: $(fuzz_count_words "all clean")"
}
