# Experiment 06's charts, drawn from exp-06.csv only (plots/style.gp first).
#
#   exp-06:          time per kernel vs chain length K, for the "empty"
#                    kernel (1 thread, 1 element) and a 1-block kernel
#   exp-06-size:     time per kernel vs work per kernel n, at K = 20
#                    (log-log), with the floor (the chain in one launch)
#   exp-06-doubling: t(2b) / t(b) for the model step vs batch b, for each
#                    variant of the step, with the 1.1 line
#
# Every variant the run measured is drawn (kernels/launch.c's tables): a
# new one appears without editing this file. The floor is the variant the
# CSV header's 'floor' line names.

# The variants of the chain tests and of the step, in the order the run
# measured them. Runs written before the column was named 'variant' call
# it 'way' (results/README.md, migration notes).
variants_of(steps) = system(sprintf("awk -F, '/^#/ {next} !t {for (i = 1; i <= NF; i++) {if ($i == \"test\") t = i; if ($i == \"variant\" || $i == \"way\") v = i}; next} ($t == \"doubling\") == %d && !seen[$v]++ {printf \"%%s \", $v}' '%s'", steps, csv))
chain_variants = variants_of(0)
step_variants = variants_of(1)
has_column(file, name) = real(system(sprintf("grep -v '^#' '%s' | head -n 1 | tr ',' '\\n' | grep -cx '%s'", file, name))) > 0
vcols = ''
do for [i=1:nruns] { vcols = vcols . (has_column(run(i), 'variant') ? 'variant ' : 'way ') }
vcol(i) = word(vcols, i)

floor_line = meta('floor')
floor_variant = strstrt(floor_line, ':') > 1 ? floor_line[1:strstrt(floor_line, ':') - 1] : ''

# A colour per variant; the floor black and dotted (a dash pattern in
# parentheses would be read as a custom pattern, hence functions).
lt_of(v) = v eq floor_variant ? 7 : word_index(chain_variants, v)
dt_of(v, i) = v eq floor_variant ? 4 : run_dt(i)
title_of(v) = v eq floor_variant ? sprintf('%s (the floor)', v) : v
sel(i, test, v, size, c) = (strcol('test') eq test && strcol(vcol(i)) eq v && column('n') == size) ? column(c) : NaN
in_test(t) = strcol('test') eq t ? 1 : 0
stats csv using (in_test('chain')) nooutput
has_chain = STATS_sum > 0
stats csv using (in_test('size')) nooutput
has_size = STATS_sum > 0
stats csv using (in_test('doubling')) nooutput
has_doubling = STATS_sum > 0
stats csv using (in_test('size') ? column('k') : 0) nooutput
size_k = STATS_max

# A panel with nothing measured says so (gnuplot refuses an all-NaN plot).
empty = "set label 99 'not measured in this run' at graph 0.5, 0.5 center; plot 1 lc rgb '#ffffff' notitle; unset label 99"

set logscale y 10
set format y '%g'
set ylabel 'time per kernel (us)'
set key outside right top vertical

# ---- chart 1: per-kernel time vs chain length ----------------------------------
set output chart('')
set logscale x 10
set xlabel 'kernels in the chain (K)'
set multiplot title verdict_title("Does a kernel launch cost more than a tiny kernel's work?", \
    'graph_replay_cheap')
set tmargin screen 0.77  # below the five title lines
set bmargin screen 0.30
set key at screen 0.5, 0.17 center top horizontal maxrows 3 box opaque
do for [size in '1 256'] {
    s = int(size)
    set lmargin screen (s == 1 ? 0.10 : 0.58)
    set rmargin screen (s == 1 ? 0.47 : 0.96)
    set title s == 1 ? 'empty kernel: 1 thread, 1 element' : 'one block: 256 elements'
    if (s == 256) { unset key; unset ylabel }
    if (has_chain) {
        plot for [v in chain_variants] for [i=1:nruns] run(i) \
            using 'k':(sel(i, 'chain', v, s, 'us_per_kernel')) with linespoints \
            lt lt_of(v) dt dt_of(v, i) title (s == 1 ? key(i, title_of(v)) : '') noenhanced
    } else {
        @empty
    }
}
unset multiplot
set key default
set key outside right top vertical box opaque samplen 2.5 spacing 1.1
set ylabel 'time per kernel (us)'
unset tmargin; unset bmargin; unset lmargin; unset rmargin

# ---- chart 2: per-kernel time vs work size -------------------------------------
set output chart('-size')
set title verdict_title(sprintf('Does launch overhead fade once a kernel has enough work? (K = %d)', size_k), 'sync_each_slowest')
set logscale x 2
set format x '2^{%L}'
set xlabel 'elements per kernel (n)'
seln(i, v, c) = (strcol('test') eq 'size' && strcol(vcol(i)) eq v) ? column(c) : NaN
if (has_size) {
    plot for [v in chain_variants] for [i=1:nruns] run(i) \
        using 'n':(seln(i, v, 'us_per_kernel')) with linespoints \
        lt lt_of(v) dt dt_of(v, i) title key(i, title_of(v)) noenhanced
} else {
    @empty
}

# ---- chart 3: the doubling test ---------------------------------------------------
set output chart('-doubling')
set title verdict_title('Doubling test: is a step that barely slows at twice the batch overhead-bound?', \
    'doubling_small_batch')
unset logscale y
set format y '%g'
set yrange [0:2.6]
set ylabel 't(2b) / t(b)'
set xlabel 'batch b (rows of width d)'
set key inside top left
seld(i, v) = (strcol('test') eq 'doubling' && strcol(vcol(i)) eq v) ? column('doubling_ratio') : NaN
if (has_doubling) {
    plot \
        1.1 with lines dt 2 lc rgb model_color title 'threshold: 1.1, below it the step is overhead-bound', \
        2.0 with lines dt 3 lc rgb model_color title 'model: 2, time proportional to the batch', \
        for [v in step_variants] for [i=1:nruns] run(i) using 'batch':(seld(i, v)) with linespoints \
            lt word_index(step_variants, v) dt run_dt(i) \
            title key(i, v) noenhanced
} else {
    @empty
}
