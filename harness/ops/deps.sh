#!/usr/bin/env bash
# deps.sh -- checks the Debian packages rooflab needs. What is missing comes
# from bundle/ when there is one (unpacked into $B/bundle-root with dpkg -x:
# nothing is installed, apt-get is not tried); otherwise, as root, from
# apt-get; otherwise the exact apt-get line is printed. gnuplot is optional:
# without it the experiments still run and write their CSVs, and say how
# to draw the charts later; only a warning says so here.
#
#   harness/ops/deps.sh run     what the experiments need (compiler, OpenBLAS, gnuplot)
#   harness/ops/deps.sh test    that, plus Criterion for the tests
#   harness/ops/deps.sh paper   what make paper needs (pdflatex, LaTeX packages, lmodern)
#   harness/ops/deps.sh all     everything
#   harness/ops/deps.sh bundle  only the bundle: unpack it when something run or
#                           test needs is missing, and say in one line what
#                           came from it (the Makefile runs this; it never fails)
#
# Criterion serves the test binary alone: when it is all that is missing
# (gnuplot aside) and cannot be had, the exit code is 3, not 1, so that a
# caller that only needs the experiments (make check-gpu, make gpu-day)
# builds and runs them; make test stops on it as on any failure.
#
# B (default build) is the build folder. RL_DEPS_CHECK_ONLY=1 only checks:
# it lists what is missing and installs nothing. RL_DEPS_PRETEND_MISSING
# ("libcriterion-dev") counts those packages missing whatever is there,
# for tests of the paths without them (it implies RL_DEPS_CHECK_ONLY: a
# pretence installs nothing). Exit codes: 0 all there (gnuplot
# perhaps not), 1 something the experiments need missing, 2 usage, 3 only
# Criterion missing (the tests cannot build; the experiments can).
set -euo pipefail
cd "$(dirname "$0")/../.."
what=${1:-all}
case "$what" in run|test|paper|all|bundle) ;; *) echo "usage: $0 run|test|paper|all|bundle" >&2; exit 2 ;; esac
B=${B:-build}
BUNDLE=${BUNDLE:-bundle}
env_sh=$B/bundle-root/env.sh

have_cmd() { command -v "$1" >/dev/null 2>&1; }
pretended() { [[ " ${RL_DEPS_PRETEND_MISSING:-} " == *" $1 "* ]]; }
[ -n "${RL_DEPS_PRETEND_MISSING:-}" ] && RL_DEPS_CHECK_ONLY=1

# A library package is present when a program using it compiles and links
# as the Makefile builds (pkg-config's flags, else -lNAME): a header alone
# proves nothing (libblas-dev's cblas.h is not OpenBLAS, and -lopenblas
# then fails at the link).
links() { # pkg-config-name library program
    local cflags="" libs="-l$2" dirs="" d tmp rc=1
    if have_cmd pkg-config; then
        cflags=$(pkg-config --cflags "$1" 2>/dev/null || true)
        libs=$(pkg-config --libs "$1" 2>/dev/null || echo "-l$2")
    fi
    # -L finds the library; the rpath (as the Makefile links) lets the
    # linker find the bundle's libraries that library needs in turn (ld
    # does not look for those in -L folders: libcriterion.so needs
    # libgit2, which a bundle made on another release brings too).
    for d in "${RL_BUNDLE_ROOT:-/nonexistent}"/usr/lib/*/ "${RL_BUNDLE_ROOT:-/nonexistent}"/usr/lib/*/openblas-pthread/; do
        [ -d "$d" ] && dirs="$dirs -L$d -Wl,-rpath,$d"
    done
    [ -n "$dirs" ] && dirs="$dirs -Wl,--disable-new-dtags"
    tmp=$(mktemp -d)
    # shellcheck disable=SC2086
    if printf '%s\n' "$3" | ${CC:-cc} $cflags ${RL_BUNDLE_CPPFLAGS:-} -x c - -o "$tmp/a.out" $dirs $libs \
        >"$tmp/log" 2>&1; then
        rc=0
    fi
    rm -rf "$tmp"
    return $rc
}
OPENBLAS_PROGRAM='#include <cblas.h>
int main(void)
{
    float a = 1, b = 1, c = 0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
    return c != 1.0f;
}'
CRITERION_PROGRAM='#include <criterion/criterion.h>
Test(deps, links) { cr_assert(1); }'

# missing: the Debian packages that are not there; from_bundle: those of
# them a bundle provides.
check() {
    local set=$1
    missing=()
    have_cmd cc || have_cmd gcc || missing+=(build-essential)
    have_cmd make || missing+=(make)
    have_cmd pkg-config || missing+=(pkg-config)
    links openblas openblas "$OPENBLAS_PROGRAM" || missing+=(libopenblas-dev)
    have_cmd gnuplot || missing+=(gnuplot-nox)
    if [ "$set" = test ] || [ "$set" = all ]; then
        { ! pretended libcriterion-dev && links criterion criterion "$CRITERION_PROGRAM"; } ||
            missing+=(libcriterion-dev)
    fi
    if [ "$set" = paper ] || [ "$set" = all ]; then
        have_cmd pdflatex || missing+=(texlive-latex-base)
        have_cmd kpsewhich && kpsewhich booktabs.sty >/dev/null 2>&1 || missing+=(texlive-latex-recommended)
        # Latin Modern: T1-encoded vector fonts (without them pdflatex
        # falls back to Type 3 bitmaps, blurred in print).
        have_cmd kpsewhich && kpsewhich lmodern.sty >/dev/null 2>&1 || missing+=(lmodern)
    fi
    from_bundle=()
    local p
    for p in "${missing[@]}"; do
        case $p in pkg-config|libopenblas-dev|gnuplot-nox|libcriterion-dev) from_bundle+=("$p") ;; esac
    done
}

have_bundle() { ls "$BUNDLE"/*.deb >/dev/null 2>&1; }
# Whether unpacking again would bring something: no copy yet, a newer
# bundle, or a missing package the bundle has and the copy lacks (the
# system lost it since).
unpack_helps() {
    [ -f "$env_sh" ] && [ ! "$BUNDLE/MANIFEST" -nt "$env_sh" ] || return 0
    local p
    for p in "${from_bundle[@]}"; do
        ls "$BUNDLE/${p}"_*.deb >/dev/null 2>&1 &&
            ! grep -qx "$p" "$B/bundle-root/PACKAGES" 2>/dev/null && return 0
    done
    return 1
}

# shellcheck disable=SC1090
[ -f "$env_sh" ] && . "$env_sh"
check "$([ "$what" = bundle ] && echo test || echo "$what")"

# The bundle, when it can help: unpacked again when it is newer than the
# unpacked copy (a fresh make bundle), then the checks again with it.
if [ ${#from_bundle[@]} -gt 0 ] && have_bundle; then
    if unpack_helps; then
        harness/ops/bundle.sh unpack "$B" "$BUNDLE" >&2 || { [ "$what" = bundle ] && exit 0; exit 1; }
        # shellcheck disable=SC1090
        . "$env_sh"
        check "$([ "$what" = bundle ] && echo test || echo "$what")"
    elif [ "$what" = bundle ]; then
        harness/ops/bundle.sh describe "$B" "$BUNDLE" >&2
    fi
elif [ "$what" = bundle ] && [ -f "$env_sh" ]; then
    harness/ops/bundle.sh describe "$B" "$BUNDLE" >&2
fi
[ "$what" = bundle ] && exit 0
[ ${#missing[@]} -eq 0 ] && exit 0

# Only Criterion missing (gnuplot aside): the tests cannot build, the
# experiments can. fail says so, and exits 3 then, 1 otherwise.
only_criterion() {
    local p seen=""
    for p in "${missing[@]}"; do
        case $p in libcriterion-dev) seen=1 ;; gnuplot-nox) ;; *) return 1 ;; esac
    done
    [ -n "$seen" ]
}
fail() {
    if only_criterion; then
        echo "rooflab: only Criterion (libcriterion-dev) is missing: the tests (make test, the CUDA" \
             "suites) cannot build; the experiments build and run without it" >&2
        exit 3
    fi
    exit 1
}
if [ -n "${RL_DEPS_CHECK_ONLY:-}" ]; then
    echo "rooflab: missing: ${missing[*]}" >&2
    fail
fi

# Only gnuplot missing, and no way to get it: the runs go on without charts.
only_gnuplot() { [ "${missing[*]}" = gnuplot-nox ]; }
no_charts() {
    echo "rooflab: warning: gnuplot not found: the experiments run and write their CSVs, and" \
         "each says which command draws its charts later ($1)" >&2
    exit 0
}

if have_bundle; then
    only_gnuplot && no_charts "not in $BUNDLE/ either"
    unpacked=() absent=()
    for p in "${missing[@]}"; do
        if grep -qx "$p" "$B/bundle-root/PACKAGES" 2>/dev/null; then unpacked+=("$p"); else absent+=("$p"); fi
    done
    # Unpacked, and still a program using it would not build: the bundle's
    # libraries do not load here (made on another distribution?).
    [ ${#unpacked[@]} -gt 0 ] &&
        echo "rooflab: unpacked from $BUNDLE/ but a program using it does not build here: ${unpacked[*]}" \
             "(was $BUNDLE/ made on this distribution and release?)" >&2
    [ ${#absent[@]} -gt 0 ] && echo "rooflab: missing, and not in $BUNDLE/ either: ${absent[*]}" >&2
    echo "  make bundle (on a machine with package access) gets OpenBLAS, Criterion, gnuplot and pkg-config;" >&2
    echo "  the compiler, make and LaTeX come from the system" >&2
    fail
fi
if [ "$(id -u)" = 0 ] && have_cmd apt-get; then
    echo "rooflab: installing missing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
        echo "rooflab: installed ${missing[*]}"
        exit 0
    fi
    only_gnuplot && no_charts "apt-get could not install gnuplot-nox"
    echo "rooflab: apt-get could not install ${missing[*]} (no package access? make bundle on a" \
         "machine that has it, and copy bundle/ here)" >&2
    # One package apt-get cannot find fails the whole install: without
    # Criterion, the experiments' packages may still come.
    if [[ " ${missing[*]} " == *" libcriterion-dev "* ]] && ! only_criterion; then
        others=()
        for p in "${missing[@]}"; do [ "$p" = libcriterion-dev ] || others+=("$p"); done
        if apt-get install -y -qq --no-install-recommends "${others[@]}" >/dev/null; then
            echo "rooflab: installed ${others[*]}, all but Criterion"
            missing=(libcriterion-dev)
        fi
    fi
    fail
fi
only_gnuplot && no_charts "sudo apt-get install -y gnuplot-nox draws them here"
echo "rooflab: missing Debian packages. Install them with:" >&2
echo "  sudo apt-get install -y ${missing[*]}" >&2
echo "  (no package access here? make bundle on a machine that has it, and copy bundle/ here)" >&2
fail
