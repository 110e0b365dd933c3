# harness/ops/ggml-lib.sh -- sourced by the peer scripts (peer-ggml.sh,
# peer-ggml-attention.sh, peer-ggml-moe.sh): ggml's source and its test-backend-ops, built
# once per source tree and commit into $B/peer-ggml/build.
#
#   GGML_SRC=path   a ggml source tree (github.com/ggml-org/ggml). Without it
#                   the source is cloned at GGML_COMMIT into $B/peer-ggml/src,
#                   which needs the network; offline, pass a tree.
#   GGML_COMMIT=c   the pinned commit (default d99724f2, the one the tables
#                   of issues 27 and 28 used); a GGML_SRC tree is used as it
#                   is, and its commit (if it is a git tree) is reported
#
# The caller defines die() and B. ggml_build sets src, commit and tbo (the
# test-backend-ops binary) and peer (its folder).
GGML_COMMIT=${GGML_COMMIT:-d99724f2}
GGML_URL=https://github.com/ggml-org/ggml

ggml_build() {
    command -v cmake >/dev/null || die "cmake is needed to build ggml (make deps)"
    local generator
    peer=$B/peer-ggml
    mkdir -p "$peer" || die "cannot make $peer"
    if [ -n "${GGML_SRC:-}" ]; then
        src=$GGML_SRC
        [ -f "$src/tests/test-backend-ops.cpp" ] || die "GGML_SRC=$src has no tests/test-backend-ops.cpp: not a ggml tree"
    else
        src=$peer/src
        if [ ! -f "$src/tests/test-backend-ops.cpp" ]; then
            echo "peer: cloning $GGML_URL at $GGML_COMMIT into $src"
            rm -rf "$src"
            git clone -q "$GGML_URL" "$src" && git -C "$src" checkout -q "$GGML_COMMIT" ||
                die "could not clone $GGML_URL at $GGML_COMMIT (offline?): pass a ggml tree as GGML_SRC=path"
        fi
    fi
    commit=$(git -C "$src" rev-parse --short=8 HEAD 2>/dev/null || echo "$GGML_COMMIT (not a git tree: as GGML_COMMIT says)")
    tbo=$peer/build/bin/test-backend-ops
    generator=$(command -v ninja >/dev/null && echo Ninja || echo "Unix Makefiles")
    if [ ! -x "$tbo" ] || [ "$(cat "$peer/build/.source" 2>/dev/null)" != "$(cd "$src" && pwd) $commit" ]; then
        echo "peer: building ggml's test-backend-ops (CPU backend, -march=native, OpenMP) in $peer/build (minutes)"
        cmake -S "$src" -B "$peer/build" -G "$generator" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON \
            -DGGML_OPENMP=ON -DGGML_BUILD_TESTS=ON -DGGML_BUILD_EXAMPLES=OFF >"$peer/cmake.log" 2>&1 ||
            die "cmake failed: $peer/cmake.log"
        cmake --build "$peer/build" --target test-backend-ops -j "$(nproc)" >"$peer/build.log" 2>&1 ||
            die "the build failed: $peer/build.log"
        echo "$(cd "$src" && pwd) $commit" >"$peer/build/.source"
    fi
}

# ggml's time per call, ms, of the first perf case of op $1 whose vars()
# match the regular expression $2 (test-backend-ops' "N us/run"); empty
# when none matches.
ggml_perf_ms() {
    local out
    out=$("$tbo" perf -o "$1" -b CPU -p "$2" 2>&1) || die "test-backend-ops failed for $1 ($2): $out"
    sed -n 's/.* \([0-9.][0-9.]*\) us\/run.*/\1/p' <<<"$out" | head -1 | awk '{ printf "%.4f", $1 / 1000 }'
}

# Our time per call, ms (4 decimals), of the one validated row of a run's
# --rows-file (its rows as a CSV, written even by a side benchmark that
# keeps no results) whose columns hold every COL=VALUE given; empty when
# none. Read through rooflab query, not from the table the run prints.
ours_ms() { # ROWS_CSV COL=VALUE...
    local rows=$1 where=() c
    shift
    for c; do where+=(--where "$c"); done
    "$B/rooflab" query "$rows" columns time_us_median --where validated=yes \
        --where 'time_us_median!=' "${where[@]}" |
        awk 'NR == 1 { printf "%.4f", $1 / 1000 }'
}

# The smaller of a time and the best so far (ms), the best maybe empty.
best_of() { awk -v a="$1" -v b="${2:-}" 'BEGIN { printf "%s", (b == "" || a + 0 < b + 0) ? a : b }'; }

# One round of ggml's perf case $2 at each of the caller's $SHAPES (round
# $1): its ggml_regex gives a shape's vars(); each time goes into
# GGML_ALL[shape], the best into GGML_MS[shape] (the caller's arrays).
ggml_shapes_round() {
    local r=$1 op=$2 s ms
    for s in $SHAPES; do
        ms=$(ggml_perf_ms "$op" "$(ggml_regex "$s")")
        [ -n "$ms" ] || die "ggml has no $op perf case of shape $s ($(ggml_regex "$s"))"
        echo "  round $r ggml  $s $op $ms ms"
        GGML_ALL[$s]+="${GGML_ALL[$s]:+ }$ms"
        GGML_MS[$s]=$(best_of "$ms" "${GGML_MS[$s]:-}")
    done
}

# ROUNDS rounds of the caller's ours_round and ggml_round, alternating
# which goes first, so that neither side always meets the machine warm.
alternate_rounds() {
    local r
    for ((r = 1; r <= ROUNDS; r++)); do
        if ((r % 2)); then ours_round $r; ggml_round $r; else ggml_round $r; ours_round $r; fi
    done
}

# The CPU's name and the vector flags that matter to both sides.
# The family and model tell Zen 3 from 4 and 5 where a VM names them all "AMD EPYC".
cpu_name() {
    local name family model
    name=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
    family=$(sed -n 's/^cpu family[[:space:]]*: //p' /proc/cpuinfo | head -1)
    model=$(sed -n 's/^model[[:space:]]*: //p' /proc/cpuinfo | head -1)
    echo "${name:-unknown CPU}${family:+ (family $family, model $model)}"
}
cpu_flags() {
    grep -o -w -E 'avx2|avx512f|avx512_vnni|avx_vnni|avx512_fp16|avx512_bf16|amx_tile|f16c|fma' /proc/cpuinfo |
        sort -u | tr '\n' ' '
}
