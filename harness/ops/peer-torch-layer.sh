#!/usr/bin/env bash
# harness/ops/peer-torch-layer.sh -- make peer-torch-layer: experiment 09's
# transformer layer in PyTorch, FP32 on this machine's CPU, eager and under
# torch.compile, its time split by class of step as experiment 09 splits
# its own: contractions, normalizations, element-wise (Ivanov et al., "Data
# Movement Is All You Need"). Optional: no part of the suite or CI needs it.
#
# It makes a virtual environment of its own on first use and installs torch
# into it (pip: the CPU build from PyTorch's own index, else PyPI's build,
# which brings several GB of CUDA libraries; or the wheel TORCH_WHEEL
# names), then runs harness/ops/peer_torch_layer.py for each configuration:
#   bert   a BERT-large encoder layer (post-LN): hidden 1024, 16 heads of
#          64, FFN 4096, GELU (tanh form), a padding mask on the last 1/8
#          of the keys; op by op as Hugging Face's BertLayer
#   llama  a Llama-style decoder block (pre-norm): hidden 2048, 32 query
#          heads and 8 KV heads of 64, FFN 8192 (SwiGLU), RMSNorm, RoPE
#          (theta 500000, rotate_half), causal mask, no biases
# For each configuration and mode it times the layer (WARMUP calls, then the
# median of RUNS calls, on THREADS threads), profiles one call with
# torch.profiler (three times: the one of median total is kept), groups
# the CPU self time of its ops into the classes (peer_torch_layer.py --help
# says which op goes where), and writes, in OUT:
#   layer-bB-sS.csv               a row per configuration and mode: the
#                                 median time, each class's share
#   ops-bB-sS.csv                 the self time of every op, with its class
#   trace-CONFIG-MODE-bB-sS.json  the profiled call, a Chrome trace
#                                 (ui.perfetto.dev or chrome://tracing)
# and prints the table. A file is written whole or not at all (a temporary
# file renamed into place). A torch.compile that fails is reported in its
# row (note) and the eager rows are kept.
#
#   BATCH=1 SEQ=512     the batch and the sequence length (tokens)
#   CONFIGS="bert llama"  MODES="eager compile"  which to run
#   RUNS=20 WARMUP=3    timed calls (their median) and calls before them
#   THREADS=n           torch.set_num_threads (default: every CPU, nproc)
#   OUT=dir             where the files go (default results/peer-torch)
#   TORCH_VENV=dir      the virtual environment (default $B/peer/torch-venv);
#                       one that already imports torch is used as it is;
#                       torch.compile's cache goes beside it (torchinductor-cache)
#   TORCH_WHEEL=file    install torch from this wheel (its dependencies
#                       from PyPI) instead of an index
#   PYTHON=python3      the interpreter that makes the environment
#   B=build             the build folder
# OUT, TORCH_VENV and B are taken from the tree's root, as make gives them;
# TORCH_WHEEL from the folder the script was called in.
#
# Exit codes: 0 done; 1 a run failed; 2 bad usage; 77 torch could not be
# installed (no network, no venv module): the reason is printed.
set -uo pipefail
case "${1:-}" in
-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
'') ;;
*) echo "usage: $0 [--help] (settings are variables: $0 --help)" >&2; exit 2 ;;
esac
caller=$PWD
cd "$(dirname "$0")/../.." || exit 2

B=${B:-build}
BATCH=${BATCH:-1}
SEQ=${SEQ:-512}
CONFIGS=${CONFIGS:-bert llama}
MODES=${MODES:-eager compile}
RUNS=${RUNS:-20}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-$(nproc)}
OUT=${OUT:-results/peer-torch}
TORCH_VENV=${TORCH_VENV:-$B/peer/torch-venv}
TORCH_WHEEL=${TORCH_WHEEL:-}
PYTHON=${PYTHON:-python3}
CPU_INDEX=https://download.pytorch.org/whl/cpu
die() { echo "peer-torch-layer: $*" >&2; exit 2; }
skip() { echo "peer-torch-layer: skipped: $*" >&2; exit 77; }
say() { echo "peer-torch-layer: $*"; }

# ---- the settings, checked before anything is installed --------------------
whole() { # NAME VALUE LO HI
    if [[ $2 =~ ^[0-9]{1,6}$ ]] && ((10#$2 >= $3 && 10#$2 <= $4)); then return 0; fi
    die "$1 wants a whole number $3 to $4, not '$2'"
}
whole BATCH "$BATCH" 1 64
whole SEQ "$SEQ" 1 8192
whole RUNS "$RUNS" 1 1000
whole WARMUP "$WARMUP" 0 100
whole THREADS "$THREADS" 1 4096
[ -n "${CONFIGS// /}" ] || die "CONFIGS wants some of bert llama, not nothing"
for c in $CONFIGS; do
    [[ $c == bert || $c == llama ]] || die "CONFIGS wants some of bert llama, not '$c'"
done
[ -n "${MODES// /}" ] || die "MODES wants some of eager compile, not nothing"
for m in $MODES; do
    [[ $m == eager || $m == compile ]] || die "MODES wants some of eager compile, not '$m'"
done
if [ -n "$TORCH_WHEEL" ]; then
    [[ $TORCH_WHEEL == /* ]] || TORCH_WHEEL=$caller/$TORCH_WHEEL # the caller's, not the tree's
    [[ $TORCH_WHEEL == *.whl ]] || die "TORCH_WHEEL wants a .whl file, not '$TORCH_WHEEL'"
    [ -f "$TORCH_WHEEL" ] || die "TORCH_WHEEL=$TORCH_WHEEL: no such file"
fi

# ---- torch in a virtual environment of its own ------------------------------
# A stamp inside it says that torch was installed and imports: an
# environment without it (an install cut short) is made again. Only an
# environment this script made is ever removed.
vpy=$TORCH_VENV/bin/python
stamp=$TORCH_VENV/.rooflab-torch-ok
imports_torch() { [ -x "$vpy" ] && "$vpy" -c 'import torch' >/dev/null 2>&1; }

install_torch() {
    local log=$TORCH_VENV.install.log
    mkdir -p "$(dirname "$TORCH_VENV")" || skip "cannot make $(dirname "$TORCH_VENV")"
    if [ -e "$TORCH_VENV" ] && [ ! -f "$TORCH_VENV/.rooflab-made" ]; then
        skip "$TORCH_VENV exists, is not an environment this script made, and does not import torch"
    fi
    rm -rf "$TORCH_VENV"
    say "making a virtual environment in $TORCH_VENV"
    if ! "$PYTHON" -m venv "$TORCH_VENV" >"$log" 2>&1; then
        rm -rf "$TORCH_VENV"
        skip "'$PYTHON -m venv' failed (no python3-venv?): $log"
    fi
    touch "$TORCH_VENV/.rooflab-made"
    local pip=("$vpy" -m pip install --disable-pip-version-check --progress-bar off)
    local how
    if [ -n "$TORCH_WHEEL" ]; then
        say "installing torch from $TORCH_WHEEL (its dependencies from PyPI)"
        how="the wheel $TORCH_WHEEL"
        "${pip[@]}" "$TORCH_WHEEL" numpy >>"$log" 2>&1 || how=
    else
        say "installing torch, the CPU build, from $CPU_INDEX (pip; log: $log)"
        how="the CPU build from $CPU_INDEX"
        if ! "${pip[@]}" --timeout 20 --retries 1 --index-url "$CPU_INDEX" torch numpy >>"$log" 2>&1; then
            say "  not reachable or no build for this Python; PyPI's build instead (with its CUDA libraries: several GB)"
            how="PyPI's build"
            "${pip[@]}" --timeout 60 --retries 2 torch numpy >>"$log" 2>&1 || how=
        fi
    fi
    if [ -z "$how" ] || ! imports_torch; then
        rm -rf "$TORCH_VENV"
        skip "torch could not be installed (offline? the end of pip's log follows; all of it: $log)
$(tail -n 5 "$log")"
    fi
    echo "$how" >"$stamp"
    say "torch $("$vpy" -c 'import torch; print(torch.__version__)') installed from $how ($(du -sh "$TORCH_VENV" | cut -f1) in $TORCH_VENV)"
}

if [ -f "$stamp" ] && imports_torch; then
    :
elif [ ! -f "$TORCH_VENV/.rooflab-made" ] && imports_torch; then
    say "using the torch of $TORCH_VENV as it is"
else
    install_torch
fi

# ---- the runs ----------------------------------------------------------------
# The profiler's own log (Kineto) off, and the lines it prints anyway left
# out: a CUDA build of torch on a machine without a GPU says so at every
# profile.
export KINETO_LOG_LEVEL=${KINETO_LOG_LEVEL:-5}
# torch.compile's kernels, kept for the next run beside the environment
# (not in /tmp): a run that finds them compiles in seconds (warmup_s).
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-$(cd "$(dirname "$TORCH_VENV")" && pwd)/torchinductor-cache}
mkdir -p "$OUT" || die "cannot make $OUT"
say "$CONFIGS, $MODES; B=$BATCH S=$SEQ; $THREADS threads; $RUNS timed calls after $WARMUP; into $OUT"
# shellcheck disable=SC2086 # CONFIGS and MODES are lists of words
"$vpy" harness/ops/peer_torch_layer.py --batch "$BATCH" --seq "$SEQ" --configs $CONFIGS \
    --modes $MODES --runs "$RUNS" --warmup "$WARMUP" --threads "$THREADS" --out "$OUT" \
    --git-commit "$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)" \
    2> >(grep --line-buffered -v -e '^USDT:' -e 'gpuGetDeviceCount failed' >&2)
rc=$?
[ $rc -eq 0 ] || { echo "peer-torch-layer: the run failed (exit $rc)" >&2; exit 1; }
