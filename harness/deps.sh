#!/usr/bin/env bash
# deps.sh -- checks the Debian packages rooflab needs, and installs the
# missing ones when run as root (else prints the exact apt-get line).
#
#   harness/deps.sh run    what the experiments need (compiler, OpenBLAS, gnuplot)
#   harness/deps.sh test   that, plus Criterion for the tests
#   harness/deps.sh paper  what make paper needs (pdflatex and LaTeX packages)
#   harness/deps.sh all    everything
set -euo pipefail
what=${1:-all}
case "$what" in run|test|paper|all) ;; *) echo "usage: $0 run|test|paper|all" >&2; exit 2 ;; esac

missing=()
have_cmd() { command -v "$1" >/dev/null 2>&1; }
# A library package is present when its header compiles in.
have_header() {
    local cflags=""
    have_cmd pkg-config && cflags=$(pkg-config --cflags "$2" 2>/dev/null || true)
    # shellcheck disable=SC2086
    echo "#include <$1>" | ${CC:-cc} $cflags -E -x c - >/dev/null 2>&1
}

have_cmd cc || have_cmd gcc || missing+=(build-essential)
have_cmd make || missing+=(make)
have_cmd pkg-config || missing+=(pkg-config)
have_header cblas.h openblas || missing+=(libopenblas-dev)
have_cmd gnuplot || missing+=(gnuplot-nox)
if [ "$what" = test ] || [ "$what" = all ]; then
    have_header criterion/criterion.h criterion || missing+=(libcriterion-dev)
fi
if [ "$what" = paper ] || [ "$what" = all ]; then
    have_cmd pdflatex || missing+=(texlive-latex-base)
    have_cmd kpsewhich && kpsewhich booktabs.sty >/dev/null 2>&1 || missing+=(texlive-latex-recommended)
fi

[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && have_cmd apt-get; then
    echo "rooflab: installing missing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "rooflab: installed ${missing[*]}"
else
    echo "rooflab: missing Debian packages. Install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
fi
