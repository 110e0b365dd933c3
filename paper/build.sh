#!/usr/bin/env bash
# build.sh LABEL [RESULTS PLOTS WORKDIR] -- builds the writeup from one
# label's runs: `rooflab paper-tables` generates the data-driven LaTeX into
# WORKDIR/generated, then pdflatex (twice, for references) makes
# WORKDIR/paper.pdf. `make paper` calls this and copies the PDF to paper/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
label=${1:?usage: paper/build.sh LABEL [RESULTS PLOTS WORKDIR]}
results=${2:-results}
plots=${3:-plots}
work=${4:-build/paper}
tool=${ROOFLAB:-$root/build/rooflab}

if ! command -v pdflatex >/dev/null 2>&1; then
    echo "paper: pdflatex not found (apt-get install texlive-latex-base texlive-latex-recommended lmodern)" >&2
    exit 1
fi
rm -rf "$work/generated"
mkdir -p "$work/generated"
"$tool" paper-tables --label "$label" --out "$results" --plots "$plots" --dest "$work/generated"
cp "$root/paper/paper.tex" "$work/paper.tex"
cd "$work"
for pass in 1 2; do
    if ! TEXINPUTS="generated:" pdflatex -interaction=nonstopmode -halt-on-error paper.tex \
        >pdflatex.log 2>&1; then
        echo "paper: pdflatex failed (pass $pass); the end of $work/pdflatex.log:" >&2
        tail -n 30 pdflatex.log >&2
        exit 1
    fi
done
echo "paper: $work/paper.pdf"
