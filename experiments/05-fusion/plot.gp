# Experiment 05's charts, drawn from exp-05.csv only (plots/style.gp first).
#
#   exp-05:       speedup of the fused kernel over the unfused pair vs size
#   exp-05-chain: time vs chain length k at the largest size, with the
#                 memory-trip model (unfused: k passes; fused: one pass)

# Rows of one op and one variant; other rows give NaN and are skipped.
sel(op, variant, c) = (strcol('op') eq op && strcol('variant') eq variant) ? column(c) : NaN

# ---- spread -------------------------------------------------------------------
# Every measured point is drawn with its q1-q3 bar. Times (chart 2) from
# time_us_q1 / q3, which every exp-05 CSV has: without them the chart
# stops and names the column. Speedups (chart 1) from speedup_vs_unfused_lo
# / _hi (rl_time_ratio: the twin's and the point's times at opposite ends
# of their q1-q3); a run written before those columns existed still draws,
# its bars empty, and the chart says so.
eval require_columns('time_us_q1 time_us_q3')
speedup_cols = 'speedup_vs_unfused_lo speedup_vs_unfused_hi'
eval optional_columns('speedup_spread', speedup_cols)
has_speedup_spread(i) = in_run(speedup_spread_in, i)
# A speedup's bar ends on the rows it is drawn for; the median (no bar)
# where the run did not write them.
speedup_lo(i) = has_speedup_spread(i) ? ratio_lo('speedup_vs_unfused') : column('speedup_vs_unfused')
speedup_hi(i) = has_speedup_spread(i) ? ratio_hi('speedup_vs_unfused') : column('speedup_vs_unfused')

# Every variant with a speedup at k = 2 (a fused pair beside its unfused
# twin) is a series, whatever its name: a new row of kernels/fusion.c
# appears here without editing this file.
variants = column_values(csv, 'variant')
has_pair_speedup(v) = (strcol('variant') eq v && column('k') == 2 && \
                       column('speedup_vs_unfused') == column('speedup_vs_unfused')) ? 1 : 0
fused_pairs = ''
do for [v in variants] {
    stats csv using (has_pair_speedup(v)) nooutput
    if (STATS_sum > 0) { fused_pairs = fused_pairs . v . ' ' }
}

# Which ops are in this file (a run may measure one or both).
stats csv using (strcol('op') eq 'cos' ? 1 : 0) nooutput
has_cos = STATS_sum > 0
stats csv using (strcol('op') eq 'affine' ? 1 : 0) nooutput
has_affine = STATS_sum > 0
stats csv using 'n' nooutput
n_lo = STATS_min
n_hi = STATS_max
# The first size judged beyond the cache (its arrays over 4x the LLC), and
# the first whose largest working set (the unfused pair's in, tmp and out)
# no longer fits in the LLC: where the speedup starts to climb.
stats csv using (column('cache_resident') == 0 ? column('n') : n_hi * 2) nooutput
n_dram = STATS_min
llc = meta('llc_bytes') eq '' ? 0 : real(meta('llc_bytes'))
stats csv using (column('footprint_bytes') > llc ? column('n') : n_hi * 2) nooutput
n_spill = llc > 0 ? STATS_min : n_hi * 2
mib(n) = n * 4 / 1048576.0   # one array of n floats, in MiB

# ---- chart 1: fused / unfused speedup vs size -----------------------------
set output chart('')
op1 = has_cos ? 'cos' : 'affine'
set title verdict_title('Is fusing two element-wise ops into one kernel about 2x faster?', 'fused_speedup_' . op1)
set logscale x 2
set format x '%g'
set xrange [mib(n_lo) / 1.5 : mib(n_hi) * 1.5]
set xlabel 'MiB per array (n floats of 4 B)'
set ylabel 'speedup of fused over unfused (x)'
set yrange [0:*]
set key outside right top vertical
if (n_spill <= n_hi) {
    set arrow 2 from mib(n_spill), graph 0 to mib(n_spill), graph 1 nohead dt 3 lc rgb model_color
    set label 2 'unfused in, tmp, out exceed the LLC ' at mib(n_spill), graph 0.90 right \
        tc rgb model_color
}
if (n_dram <= n_hi) {
    set arrow 1 from mib(n_dram), graph 0 to mib(n_dram), graph 1 nohead dt 3 lc rgb model_color
    set label 1 'judged beyond the cache (4x the LLC) ' at mib(n_dram), graph 0.96 right \
        tc rgb model_color
}
# Horace He's published ~2x is this model's number (his argument is the
# same trip count: 4 memory trips to 2), so it labels the model's line in
# its own colour instead of a second line drawn on top of the first.
set label 4 published(sprintf("~%gx, the model's number,\n", published_value('fusion_speedup')), \
    published_source('fusion_speedup')) \
    at graph 0.02, first 2 offset 0, -1 left front tc rgb published_color font small_font noenhanced
if (speedup_spread_missing ne '') {
    set label 3 sprintf('%s: no spread in this CSV (no speedup_vs_unfused_lo / _hi), no bars', \
        speedup_spread_missing) at graph 0.02, graph 0.04 left front tc rgb model_color font small_font \
        noenhanced
}
plot \
    2 with lines dt 2 lc rgb model_color title 'model: 2 memory trips instead of 4', \
    1 with lines dt 3 lc rgb '#bbbbbb' notitle, \
    for [op in 'cos affine'] for [v in fused_pairs] for [i=1:nruns] run(i) \
        using (mib(column('n'))):(column('k') == 2 ? sel(op, v, 'speedup_vs_unfused') : NaN) \
            :(speedup_lo(i)):(speedup_hi(i)) \
        with yerrorlines lt word_index(variants, v) pt (op eq 'cos' ? 7 : 6) dt run_dt(i) \
        title key(i, op . ', ' . v) noenhanced
unset arrow 1
unset label 1
unset arrow 2
unset label 2
unset label 3
unset label 4

# ---- chart 2: time vs chain length at the largest size ----------------------
# One panel per op (their times differ by orders of magnitude). One pass's
# time, chain_fused at k = 1, anchors the model lines.
stats csv using (sel('cos', 'chain_fused', 'k') == 1 ? column('time_us_median') : 0) nooutput
t1_cos = STATS_max / 1000.0
stats csv using (sel('affine', 'chain_fused', 'k') == 1 ? column('time_us_median') : 0) nooutput
t1_affine = STATS_max / 1000.0

# Chain variants run only at a run's largest size, whatever that size is;
# each point with its q1-q3 bar.
chain_ms(op, variant) = sel(op, variant, 'time_us_median') / 1000.0

set output chart('-chain')
unset logscale x
set format x '%g'
set xrange [0.5:8.5]
set xtics 1
set xlabel sprintf('chain length k (ops), n = %d elements', n_hi)
set ylabel 'time per chain (ms)'
set yrange [0:*]
set key inside top left
set key noopaque
panels = has_cos + has_affine
set multiplot layout 1, (panels > 0 ? panels : 1) \
    title verdict_title('Chains of k element-wise ops: does unfused pay a memory trip per op?', \
    'fused_vs_one_op_' . op1)
do for [op in 'cos affine'] {
    t1 = op eq 'cos' ? t1_cos : t1_affine
    if (t1 > 0) {
        set title op
        plot \
            x * t1 with lines dt 2 lc rgb model_color title 'model: k trips', \
            t1 with lines dt 3 lc rgb model_color title 'model: one trip', \
            for [i=1:nruns] run(i) using 'k':(chain_ms(op, 'chain_unfused')) \
                :(time_lo(chain_ms(op, 'chain_unfused'))):(time_hi(chain_ms(op, 'chain_unfused'))) \
                with yerrorlines lt 1 dt run_dt(i) title key(i, 'unfused'), \
            for [i=1:nruns] run(i) using 'k':(chain_ms(op, 'chain_fused')) \
                :(time_lo(chain_ms(op, 'chain_fused'))):(time_hi(chain_ms(op, 'chain_fused'))) \
                with yerrorlines lt 2 dt run_dt(i) pt 6 title key(i, 'fused')
    }
}
unset multiplot
