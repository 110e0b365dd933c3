# plots/gpu-model.gp -- make gpu-model's chart, from results/<label>/gpu-model.csv
# only (harness/ops/gpu-model.sh passes csv, out, fmt and rooflab): for each judged
# kernel and verdict, its case with the least margin on each modelled GPU,
# the fraction of the verdict's roof the kernel's own count allows (bars,
# a model: no GPU ran them), and the verdict's bar (black ticks).

set datafile separator comma
set datafile commentschars '#'
if (fmt eq 'png') {
    set terminal pngcairo size 1200,700 enhanced font 'DejaVu Sans,11'
} else {
    set terminal svg size 1200,700 enhanced font 'DejaVu Sans,11' background '#ffffff'
}
set output out . '.' . fmt

# the CSV's "# git_commit:" key, read by the rooflab command (the harness's
# reader of headers; harness/ops/gpu-model.sh passes its path)
if (!exists('rooflab')) rooflab = 'build/rooflab'
commit = system("'" . rooflab . "' query '" . csv . "' meta git_commit")
set title sprintf("The judged CUDA kernels by their own count (a static model from SASS: no GPU ran them), %s\nbars: the fraction of the verdict's roof the model allows; ticks: the verdict's bar", commit)
set ylabel "fraction of the verdict's roof (model)"
set yrange [0:1.3]
set grid ytics
set xtics rotate by -35 left font ',9' nomirror noenhanced
set key top right
set bmargin 12
set rmargin 12
set style fill solid 0.8 border -1
set offsets 0.6, 0.6, 0, 0

# the rows to draw (chart = yes: one a verdict and kind, a GPU), into a
# table: gpu, label, predicted, bar (not the kernel's name: a comma in its
# template arguments ends gnuplot's string, quoted or not)
set datafile columnheaders
set table $ROWS
plot csv using (strcol('gpu')):(sprintf('exp-%s %s %s', strcol('exp'), strcol('claim'), strcol('kind'))):(column('predicted_of_roof')):(column('bar')) with table if (strcol('chart') eq 'yes')
unset table
set datafile separator tab
unset datafile columnheaders

plot $ROWS using 0:(strstrt(strcol(1), 'h100-sxm') ? $3 : NaN):(0.8):xtic(2) with boxes lc rgb '#3070c0' title 'H100 SXM (model)', \
     $ROWS using 0:(strstrt(strcol(1), 'h200') ? $3 : NaN):(0.8) with boxes lc rgb '#e08020' title 'H200 (model)', \
     $ROWS using 0:4:(0.4) with xerrorbars lc rgb 'black' pt 0 lw 2 title "the verdict's bar"
