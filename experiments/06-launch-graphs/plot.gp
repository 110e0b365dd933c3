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
# new one appears without editing this file. The floor is the variant whose
# role is 'floor' (the CSV header's role_chain_floor); it is a measurement
# like the others (points, solid, q1-q3 bars), set apart by its colour. Every measured
# point has its q1-q3 bar: times from time_us_q1 / q3 (a CSV without them
# stops the charts, naming the column), doubling ratios from
# doubling_ratio_lo / _hi (a run written before those existed draws
# without bars and says so).

# The variants of the chain tests and of the step, in the order the first
# run measured them, then those only later runs have: an overlay draws
# every run's. Runs written before the column was named 'variant' call it
# 'way' (results/README.md, migration notes).
# ('variant|way': the first of the two a run's CSV has.)
variants_of(steps) = query(run_files . " columns 'variant|way' --where 'test" . (steps eq '1' ? '=' : '!=') . "doubling' --distinct --words")
chain_variants = variants_of('0')
step_variants = variants_of('1')
vcols = ''
do for [i=1:nruns] { vcols = vcols . (has_columns(run(i), 'variant') ? 'variant ' : 'way ') }
vcol(i) = word(vcols, i)

# The floor: the chain family's row whose role is 'floor'.
floor_variant = any_meta('role_chain_floor')

# ---- spread -------------------------------------------------------------------
# Times' bars from the rows' q1-q3 (required); the doubling ratios' from
# their _lo / _hi columns where the run wrote them.
eval require_columns('time_us_q1 time_us_q3')
ratio_cols = 'doubling_ratio_lo doubling_ratio_hi'
eval optional_columns('ratio_spread', ratio_cols)
has_ratio_spread(i) = in_run(ratio_spread_in, i)

# ---- the variants' names --------------------------------------------------------
# Each variant is a way to launch the chain (kernels/launch.c). On a GPU it
# is named by what CUDA does; on the CPU a launch is an OpenMP parallel
# region, and the key gives the CPU's analogue with the CUDA name beside
# it, so that the chart reads against NVIDIA's figures. The words are the
# kernel table's (.key), which the run writes into its CSV's header as
# key_<backend>_<family>_<variant>; a variant without them is drawn under
# its name alone.
cuda_name(family, v) = any_meta(sprintf('key_cuda_%s_%s', family, v))
cpu_name(family, v) = any_meta(sprintf('key_cpu_%s_%s', family, v))
name_with(v, cpu, cuda) = cuda eq '' ? v : \
    backend eq 'cuda' ? sprintf('%s: %s', v, cuda) : sprintf('%s: %s (CUDA: %s)', v, cpu, cuda)
chain_name(v) = name_with(v, cpu_name('chain', v), cuda_name('chain', v))
step_name(v) = name_with(v, cpu_name('step', v), cuda_name('step', v))

# The chain charts' keys have no room for every run's entries: a variant
# is named once, by the first run that measured it (the runs overlaid
# dashed are named by the title's run line, runs_title). The first run's
# entries are the series alone; a variant the first run lacks is named
# with the run that has it, in that run's dashes.
measured(i, v) = run_has_value(i, vcol(i), v)
first_to_measure(i, v) = measured(i, v) && (sum [j = 1:i - 1] (measured(j, v) ? 1 : 0)) == 0
named_once(i, v, series) = nruns == 1 ? series : !first_to_measure(i, v) ? '' : \
    i == 1 ? series : key(i, series)

# A colour per variant, the floor black.
lt_of(v) = v eq floor_variant ? 7 : word_index(chain_variants, v)
title_of(v) = v eq floor_variant ? chain_name(v) . ', the floor' : chain_name(v)

sel(i, test, v, size, c) = (strcol('test') eq test && strcol(vcol(i)) eq v && column('n') == size) ? column(c) : NaN
# Timed rows only: a run under --budget writes rows it did not run, empty.
in_test(t) = strcol('test') eq t && column('time_us_median') > 0 ? 1 : 0
stats csv using (in_test('chain')) nooutput
has_chain = STATS_sum > 0
stats csv using (in_test('size')) nooutput
has_size = STATS_sum > 0
stats csv using (in_test('doubling')) nooutput
has_doubling = STATS_sum > 0
stats csv using (in_test('size') ? column('k') : 0) nooutput
size_k = STATS_max
# The step's width d, from the rows (every run before --width had 256).
stats csv using (in_test('doubling') ? column('d') : 0) nooutput
step_d = has_doubling ? sprintf('%g', STATS_max) : '?'
stats csv using (in_test('chain') ? column('us_per_kernel') : 0) nooutput
chain_max_us = STATS_max

# A panel with nothing measured says so (gnuplot refuses an all-NaN plot).
empty = "set label 99 'not measured in this run' at graph 0.5, 0.5 center; plot 1 lc rgb '#ffffff' notitle; unset label 99"

set logscale y 10
set format y '%g'
set ylabel 'time per kernel (us)'
set key outside right top vertical

# ---- chart 1: per-kernel time vs chain length ----------------------------------
# NVIDIA's published figures (results/published/figures.csv, launch_*) as levels across
# both panels, in the published colour, each beside its analogue in the
# key: what a launch costs on a GPU next to what a region costs here.
nv_ids = 'launch_sync_each_us launch_async_us launch_graph_us launch_kernel_us'
nv_levels = ''
do for [j=1:4] { nv_levels = nv_levels . sprintf('%g ', published_value(word(nv_ids, j))) }
nv_level(j) = real(word(nv_levels, j))
nv_title(j) = sprintf('V100: %g us, %s', nv_level(j), \
    j == 1 ? 'cudaStreamSynchronize after each launch' : \
    j == 2 ? 'async launches, one sync per 20' : \
    j == 3 ? 'the 20 launches as a CUDA graph' : 'the kernel alone (its run time)')
nv_dt(j) = j == 1 ? 1 : j == 2 ? 2 : j == 3 ? 4 : 3
nv_source = published("NVIDIA's levels, per kernel of a step of 20 kernels of 2.9 us", \
    published_source('launch_sync_each_us'))

set output chart('')
set logscale x 10
set xlabel 'kernels in the chain (K)'
set yrange [*:2 * (chain_max_us > nv_level(1) ? chain_max_us : nv_level(1))]
set multiplot title verdict_title("Does a kernel launch cost more than a tiny kernel's work?", \
    'graph_replay_cheap')
set tmargin screen 0.77  # below the five title lines
set bmargin screen 0.36
# Measured variants in the first column, NVIDIA's levels in the second, so
# that each level sits beside its analogue (sync_each, async, graph, floor).
# gnuplot sizes a key's columns at the terminal's font, wider than the
# small one: width takes back those characters.
set key at screen 0.5, 0.245 center top vertical maxrows words(chain_variants) \
    box opaque font small_font spacing 1.0 samplen 2 Left reverse width -8
set label 98 nv_source at screen 0.5, 0.06 center tc rgb published_color font small_font noenhanced
do for [size in '1 256'] {
    s = int(size)
    set lmargin screen (s == 1 ? 0.10 : 0.58)
    set rmargin screen (s == 1 ? 0.47 : 0.96)
    set title s == 1 ? 'empty kernel: 1 thread, 1 element' : 'one block: 256 elements'
    if (s == 256) { unset key; unset ylabel; unset label 98 }
    if (has_chain) {
        plot for [v in chain_variants] for [i=1:nruns] run(i) \
            using 'k':(sel(i, 'chain', v, s, 'us_per_kernel')) \
                :(time_lo(sel(i, 'chain', v, s, 'us_per_kernel'))) \
                :(time_hi(sel(i, 'chain', v, s, 'us_per_kernel'))) with yerrorlines \
            lt lt_of(v) dt run_dt(i) title (s == 1 ? named_once(i, v, title_of(v)) : '') noenhanced, \
            for [j=1:4] nv_level(j) with lines lc rgb published_color dt nv_dt(j) \
            title (s == 1 ? nv_title(j) : '') noenhanced
    } else {
        @empty
    }
}
unset multiplot
unset label 98
set yrange [*:*]
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
set key outside bottom center vertical maxrows 3 font small_font spacing 1.0 samplen 2 Left reverse width -8
set bmargin 7
if (has_size) {
    plot for [v in chain_variants] for [i=1:nruns] run(i) \
        using 'n':(seln(i, v, 'us_per_kernel')):(time_lo(seln(i, v, 'us_per_kernel'))) \
            :(time_hi(seln(i, v, 'us_per_kernel'))) with yerrorlines \
        lt lt_of(v) dt run_dt(i) title named_once(i, v, title_of(v)) noenhanced
} else {
    @empty
}

unset bmargin

# ---- chart 3: the doubling test ---------------------------------------------------
set output chart('-doubling')
set title verdict_title('Doubling test: is a step that barely slows at twice the batch overhead-bound?', \
    'doubling_small_batch')
unset logscale y
set format y '%g'
set yrange [0:2.6]
set ylabel 't(2b) / t(b)'
set xlabel sprintf('batch b (rows of width d = %s)', step_d)
set key inside top left vertical maxrows auto maxcols 1 font small_font spacing 1.0 samplen 2 Left reverse width -8
seld(i, v, c) = (strcol('test') eq 'doubling' && strcol(vcol(i)) eq v) ? column(c) : NaN
# A ratio's bar ends; the ratio itself (no bar) where the run did not write them.
ratio_end(i, v, c) = seld(i, v, has_ratio_spread(i) ? c : 'doubling_ratio')
rule = published_value('doubling_overhead_bound')
rule_title = published(sprintf('rule: below %g the step is overhead-bound', rule), \
    published_source('doubling_overhead_bound'))
if (ratio_spread_missing ne '') {
    set label 3 sprintf('%s: no spread in this CSV (no doubling_ratio_lo / _hi), no bars', \
        ratio_spread_missing) at graph 0.02, graph 0.04 left front \
        tc rgb model_color font small_font noenhanced
}
if (has_doubling) {
    plot \
        rule with lines dt 2 lc rgb published_color title rule_title noenhanced, \
        2.0 with lines dt 3 lc rgb model_color title 'model: 2, time proportional to the batch', \
        for [v in step_variants] for [i=1:nruns] run(i) using 'batch':(seld(i, v, 'doubling_ratio')) \
            :(ratio_end(i, v, 'doubling_ratio_lo')):(ratio_end(i, v, 'doubling_ratio_hi')) \
            with yerrorlines lt word_index(step_variants, v) dt run_dt(i) \
            title run_key(i, vcol(i), v, step_name(v)) noenhanced
} else {
    @empty
}
unset label 3
