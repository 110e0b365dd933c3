# plots/peers.gp -- make peer-ggml's chart, from results/<label>/peers.csv
# only (harness/ops/peer-ggml.sh passes csv, out, fmt and rooflab, the
# rooflab command that reads the CSV's header): ms per call of
# one decode (n = 1) per format, ours (the fastest valid variant) beside
# ggml's test-backend-ops MUL_MAT on the same machine, best of the rounds.
# Bars are measurements; the label over ours is ours / ggml (below 1:
# ours is faster). Lower is better.

set datafile separator comma
set datafile commentschars '#'
# the first line that is no comment names the columns
set datafile columnheaders
if (fmt eq 'png') {
    set terminal pngcairo size 1000,600 enhanced font 'DejaVu Sans,12'
} else {
    if (fmt eq 'pdf') {
        set terminal pdfcairo size 6.5in,4in enhanced font 'DejaVu Sans,9'
    } else {
        set terminal svg size 1000,600 enhanced font 'DejaVu Sans,12' background '#ffffff'
    }
}
set output out . '.' . fmt

# the CSV's "# cpu:", "# matrix:" and "# rounds:" keys, for the title, read
# by the rooflab command (the harness's reader of headers), never parsed here
if (!exists('rooflab')) rooflab = 'build/rooflab'
header(key) = system("'" . rooflab . "' query '" . csv . "' meta " . key)
cpu = header('cpu')
# "4096x14336 (rows x k)": the matrix is its first word
matrix = word(header('matrix'), 1)
rounds = header('rounds')
set title sprintf("Decode of one %s matrix (n = 1): rooflab beside ggml, %s\nbest of %s alternating rounds; the number over ours: ours / ggml", matrix, cpu, rounds)
set ylabel 'ms per call (lower is better)'
set xlabel 'format (ggml peer type)'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set yrange [0:*]
set grid ytics
set key top right noenhanced
set xtics nomirror noenhanced
stats csv using 5 nooutput
set yrange [0:STATS_max * 1.6]
set xrange [-0.6:STATS_records - 0.4]
plot csv using 3:xtic(sprintf('%s (%s)', strcol(1), strcol(4))) title 'rooflab (fastest valid variant)' lc rgb '#1f77b4', \
     '' using 5 title "ggml test-backend-ops" lc rgb '#ff7f0e', \
     '' using ($0 - 0.15):($3):(sprintf('%.2f', $6)) with labels offset 0,0.8 notitle
