#!/usr/bin/env bash
# bundle.sh -- the Debian packages rooflab needs, as .deb files, for a GPU
# machine that has nvcc and the driver but cannot install packages (a
# container from NVIDIA's CUDA images, an air-gapped cluster node).
#
#   harness/ops/bundle.sh download [DIR]      make bundle: on any Debian/Ubuntu
#       machine with package access (no root needed), the .deb files of
#       OpenBLAS, Criterion, gnuplot-nox, pkg-config and a font, with every
#       library they depend on that a base image with build-essential
#       lacks, into DIR (default bundle/). Make it on the GPU machine's
#       distribution and release: the libraries are built for it.
#   harness/ops/bundle.sh unpack BUILD [DIR]  the packages of DIR this system
#       lacks, unpacked with dpkg -x into BUILD/bundle-root (nothing is
#       installed, nothing goes to /), plus what dpkg's scripts would have
#       made (alternatives' symlinks, the gnuplot and pkg-config commands),
#       and BUILD/bundle-root/env.sh and bundle.mk, which the scripts and
#       the Makefile read. harness/ops/deps.sh calls it when something is missing.
#   harness/ops/bundle.sh describe BUILD [DIR]  the one line saying what came from it
#
# Exit codes: 0 done, 1 failed (said why), 2 usage.
set -euo pipefail
cd "$(dirname "$0")/../.."

# What the build (OpenBLAS), the tests (Criterion), the charts (gnuplot,
# DejaVu Sans as plots/style.gp asks) and the Makefile (pkg-config) need.
ROOTS=(libopenblas-dev libcriterion-dev gnuplot-nox pkg-config fonts-dejavu-core)

usage() {
    sed -n '2,/^# Exit codes/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
die() { echo "bundle: $*" >&2; exit 1; }
origin() {
    # shellcheck disable=SC1091
    (. /etc/os-release 2>/dev/null && echo "${ID:-unknown} ${VERSION_ID:-unknown} $(dpkg --print-architecture 2>/dev/null || uname -m)")
}

# ---- download ---------------------------------------------------------------

# The dpkg status of what a bare CUDA image has for sure: the required
# packages (what a Debian or Ubuntu container image holds) and
# build-essential (nvcc needs a compiler), with every package they depend
# on, as this machine has them installed.
base_status() {
    local seeds
    seeds="$(dpkg-query -W -f='${Package} ${Priority}\n' | awk '$2 == "required" { print $1 }') build-essential"
    # The closure over Depends and Pre-Depends, every alternative that is installed.
    dpkg-query -W -f='${Package}\t${Depends}, ${Pre-Depends}\n' | awk -v seeds="$seeds" '
        BEGIN { FS = "\t" }
        { deps[$1] = $2 }
        END {
            n = split(seeds, queue, " ")
            for (i = 1; i <= n; i++) if (queue[i] in deps) seen[queue[i]] = 1
            for (head = 1; head <= n; head++) {
                if (!(queue[head] in seen)) continue
                m = split(deps[queue[head]], alts, /[,|]/)
                for (j = 1; j <= m; j++) {
                    d = alts[j]
                    sub(/\(.*\)/, "", d); gsub(/[ \t]/, "", d); sub(/:.*/, "", d)
                    if (d != "" && (d in deps) && !(d in seen)) { seen[d] = 1; queue[++n] = d }
                }
            }
            for (p in seen) print p
        }' >"$1.names"
    # Those packages' stanzas of dpkg's status file.
    awk 'NR == FNR { keep[$0] = 1; next }
         match($0, /(^|\n)Package: [^\n]+/) {
             p = substr($0, RSTART, RLENGTH); sub(/.*Package: /, "", p)
             if (p in keep) printf "%s\n\n", $0
         }' "$1.names" RS= /var/lib/dpkg/status >"$1"
}

download() {
    local dir=${1:-bundle}
    command -v apt-get >/dev/null && command -v dpkg-query >/dev/null ||
        die "make bundle needs a Debian or Ubuntu machine (apt-get, dpkg)"
    mkdir -p "$(dirname "$dir")"
    tmp=$(mktemp -d "$(cd "$(dirname "$dir")" && pwd)/.bundle.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    base_status "$tmp/status"
    # apt's own resolver, on a system that has only that base: what it
    # would install is what the bundle needs, alternatives chosen as apt does.
    apt-get -s -o Dir::State::status="$tmp/status" -o Debug::NoLocking=1 \
        install --no-install-recommends "${ROOTS[@]}" >"$tmp/plan" 2>&1 ||
        { sed 's/^/  | /' "$tmp/plan" >&2; die "apt-get could not plan the installation (run apt-get update?)"; }
    local want=()
    while read -r name version; do want+=("$name=$version"); done \
        < <(sed -n 's/^Inst \([^ ]*\) \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\1 \3/p' "$tmp/plan")
    [ ${#want[@]} -gt 0 ] || die "apt-get planned nothing: is everything in the base already?"
    mkdir "$tmp/debs"
    (cd "$tmp/debs" && apt-get download "${want[@]}" >"$tmp/log" 2>&1) ||
        { sed 's/^/  | /' "$tmp/log" >&2; die "apt-get download failed (run apt-get update?)"; }
    {
        echo "# rooflab bundle, made by harness/ops/bundle.sh download on $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "origin: $(origin)"
        echo "roots: ${ROOTS[*]}"
        for deb in "$tmp"/debs/*.deb; do
            echo "deb: $(dpkg-deb -f "$deb" Package) $(dpkg-deb -f "$deb" Version) $(basename "$deb")"
        done
    } >"$tmp/debs/MANIFEST"
    # Into place only when complete.
    rm -rf "$dir.old"
    [ -e "$dir" ] && mv "$dir" "$dir.old"
    mv "$tmp/debs" "$dir"
    rm -rf "$dir.old" "$tmp"
    trap - EXIT
    local n mib
    n=$(find "$dir" -name '*.deb' | wc -l)
    mib=$(du -k "$dir"/*.deb | awk '{ s += $1 } END { printf "%.1f", s / 1024 }')
    echo "bundle: $dir/: $n .deb files, $mib MiB, for $(origin): ${ROOTS[*]} and the libraries they need"
    echo "bundle: copy $dir/ beside the Makefile on the GPU machine; the build unpacks what is missing there"
}

# ---- unpack -------------------------------------------------------------------

# Whether the system has the package at the bundle's version or newer.
# An older one stays the system's; rooflab's binaries get the bundle's
# through their rpath. The C library and the compiler's runtime are never
# taken from a bundle: a second copy of them cannot work in one process.
needed() { # package version
    case "$1" in libc6 | libc6-dev | libc-bin | libc-dev-bin | libgcc-s1 | libstdc++6 | gcc-*-base) return 1 ;; esac
    dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null | grep -q '^ii' || return 0
    ! dpkg --compare-versions "$(dpkg-query -W -f='${Version}' "$1")" ge "$2"
}

# What dpkg's maintainer scripts would have made, that dpkg -x does not:
# Debian's OpenBLAS lives in openblas-pthread/ and reaches the usual names
# through update-alternatives symlinks.
openblas_links() {
    local lib=$1/usr/lib/$2 inc=$1/usr/include/$2 f
    [ -d "$lib/openblas-pthread" ] || return 0
    for f in libopenblas.so.0 libopenblas.so libblas.so.3 libblas.so liblapack.so.3 liblapack.so; do
        [ -e "$lib/openblas-pthread/$f" ] && [ ! -e "$lib/$f" ] && ln -s "openblas-pthread/$f" "$lib/$f"
    done
    mkdir -p "$lib/pkgconfig"
    for f in openblas blas lapack; do
        local src=$f.pc
        [ "$f" != openblas ] && src=$f-openblas.pc
        [ -e "$lib/openblas-pthread/pkgconfig/$src" ] && [ ! -e "$lib/pkgconfig/$f.pc" ] &&
            ln -s "../openblas-pthread/pkgconfig/$src" "$lib/pkgconfig/$f.pc"
    done
    for f in cblas.h f77blas.h openblas_config.h; do
        [ -e "$inc/openblas-pthread/$f" ] && [ ! -e "$inc/$f" ] && ln -s "openblas-pthread/$f" "$inc/$f"
    done
    return 0
}

# A command of the bundle, run with its libraries (LD_LIBRARY_PATH for
# that command only: the rest of the system keeps its own).
wrapper() { # tmp final name target
    mkdir -p "$1/bin"
    cat >"$1/bin/$3" <<EOF
#!/bin/sh
# $3 from bundle/, unpacked by harness/ops/bundle.sh (not installed)
root='$2'
LD_LIBRARY_PATH="\$root/usr/lib/$MA\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
FONTCONFIG_FILE="\$root/etc/fonts/rooflab-fonts.conf"
export LD_LIBRARY_PATH FONTCONFIG_FILE
exec "\$root/usr/bin/$4" "\$@"
EOF
    chmod +x "$1/bin/$3"
}

# Fonts of the bundle and of the system, for the bundle's gnuplot (its
# fontconfig would look for /etc/fonts/fonts.conf, which may be absent).
fonts_conf() {
    mkdir -p "$1/etc/fonts" "$1/var/cache/fontconfig"
    cat >"$1/etc/fonts/rooflab-fonts.conf" <<EOF
<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
  <dir>$2/usr/share/fonts</dir>
  <dir>/usr/share/fonts</dir>
  <cachedir>$2/var/cache/fontconfig</cachedir>
</fontconfig>
EOF
}

write_env() { # tmp final
    cat >"$1/env.sh" <<EOF
# Packages from bundle/, unpacked (not installed) by harness/ops/bundle.sh:
# source this to build or run with them. Binaries find the libraries
# through their rpath; the bundle's commands (bin/) through wrappers that
# set LD_LIBRARY_PATH for themselves only.
RL_BUNDLE_ROOT='$2'
RL_BUNDLE_CPPFLAGS="-idirafter $2/usr/include -idirafter $2/usr/include/$MA"
case ":\$PATH:" in *":$2/bin:"*) ;; *) PATH="\$PATH:$2/bin" ;; esac
case ":\${PKG_CONFIG_PATH:-}:" in *":$2/usr/lib/$MA/pkgconfig:"*) ;;
    *) PKG_CONFIG_PATH="$2/usr/lib/$MA/pkgconfig:$2/usr/share/pkgconfig\${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}" ;; esac
export RL_BUNDLE_ROOT RL_BUNDLE_CPPFLAGS PATH PKG_CONFIG_PATH
EOF
    cat >"$1/bundle.mk" <<EOF
# Written by harness/ops/bundle.sh unpack: the packages of bundle/ this system
# lacked, unpacked (not installed) here. The Makefile adds their include
# and library folders after the system's; delete this folder to redo it.
RL_BUNDLE_ROOT := $2
RL_BUNDLE_MULTIARCH := $MA
EOF
}

unpack() {
    local build=${1:?usage: bundle.sh unpack BUILD [DIR]} dir=${2:-bundle}
    command -v dpkg-deb >/dev/null || die "unpacking $dir/ needs dpkg-deb (Debian or Ubuntu)"
    ls "$dir"/*.deb >/dev/null 2>&1 || die "no .deb files in $dir/ (make bundle makes them)"
    local made_on here
    made_on=$(sed -n 's/^origin: //p' "$dir/MANIFEST" 2>/dev/null)
    here=$(origin)
    [ -z "$made_on" ] || [ "$made_on" = "$here" ] ||
        echo "bundle: warning: $dir/ was made on $made_on, this is $here: its libraries may not load here" >&2
    mkdir -p "$build"
    local final
    final=$(cd "$build" && pwd)/bundle-root
    tmp=$(mktemp -d "$final.tmp.XXXXXX")
    trap 'rm -rf "$tmp"' EXIT
    MA=$(${CC:-cc} -print-multiarch 2>/dev/null || true)
    [ -n "$MA" ] || MA=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
    local used=() deb pkg
    for deb in "$dir"/*.deb; do
        pkg=$(dpkg-deb -f "$deb" Package)
        needed "$pkg" "$(dpkg-deb -f "$deb" Version)" || continue
        dpkg-deb -x "$deb" "$tmp"
        used+=("$pkg")
    done
    printf '%s\n' "${used[@]}" >"$tmp/PACKAGES"
    # The .pc files name /usr: point them at this folder (before the links).
    find "$tmp" -type f -name '*.pc' -exec sed -i "s#\(^\|[=[:space:]]\)/usr/#\1$final/usr/#g" {} +
    openblas_links "$tmp" "$MA"
    [ -x "$tmp/usr/bin/gnuplot-nox" ] && wrapper "$tmp" "$final" gnuplot gnuplot-nox
    if [ -x "$tmp/usr/bin/pkgconf" ]; then
        wrapper "$tmp" "$final" pkg-config pkgconf
        wrapper "$tmp" "$final" pkgconf pkgconf
    fi
    fonts_conf "$tmp" "$final"
    write_env "$tmp" "$final"
    rm -rf "$final"
    mv "$tmp" "$final"
    trap - EXIT
    describe "$build" unpacked "$dir"
}

# One line: the packages rooflab asked for that came from the bundle, and
# how many libraries came with them.
describe() {
    local root=$1/bundle-root verb=${2:-} dir=${3:-bundle}
    [ -s "$root/PACKAGES" ] || return 0
    local roots=() libs=0 p what
    while read -r p; do
        case " ${ROOTS[*]} libopenblas-pthread-dev gnuplot-data " in
        *" $p "*) roots+=("$p") ;;
        *) libs=$((libs + 1)) ;;
        esac
    done <"$root/PACKAGES"
    what="$libs libraries"
    [ ${#roots[@]} -gt 0 ] && what="${roots[*]}, and $libs libraries they need"
    if [ "$verb" = unpacked ]; then
        echo "rooflab: unpacked from $dir/ into $root (nothing installed): $what"
    else
        echo "rooflab: from $dir/ (unpacked in $root, not installed): $what"
    fi
}

case "${1:-}" in
download) shift; download "$@" ;;
unpack) shift; unpack "$@" ;;
describe) shift; describe "${1:?usage: bundle.sh describe BUILD [DIR]}" "" "${2:-bundle}" ;;
-h|--help|help) usage ;;
*) usage ;;
esac
