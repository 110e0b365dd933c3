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

# The series are found in the rows, never by name: a new row of
# kernels/fusion.c appears on these charts without editing this file, and
# in an overlay every variant of every run is drawn (a variant only one
# run measured, for that run).
variants = union_values('variant')
# Fused pairs: variants with a speedup at k = 2 (beside an unfused twin).
has_pair_speedup(v) = (strcol('variant') eq v && column('k') == 2 && \
                       column('speedup_vs_unfused') == column('speedup_vs_unfused')) ? 1 : 0
fused_pairs = ''
do for [v in variants] {
    eval count_rows('pair_rows', 'has_pair_speedup(v)')
    if (pair_rows > 0) { fused_pairs = fused_pairs . v . ' ' }
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
        title run_key(i, 'variant', v, op . ', ' . v) noenhanced
unset arrow 1
unset label 1
unset arrow 2
unset label 2
unset label 3
unset label 4

# ---- chart 2: time vs chain length at the largest size ----------------------
# One panel per op (their times differ by orders of magnitude). Chains are
# the variants measured past a pair (k > 2); a fused chain is one with a
# speedup over its unfused twin. One pass's time, the first fused chain's
# at k = 1, anchors the model lines.
is_chain_row(v) = (strcol('variant') eq v && column('k') > 2) ? 1 : 0
has_speedup(v) = (strcol('variant') eq v && \
                  column('speedup_vs_unfused') == column('speedup_vs_unfused')) ? 1 : 0
chain_variants = ''
fused_chains = ''
do for [v in variants] {
    eval count_rows('chain_rows', 'is_chain_row(v)')
    eval count_rows('speedup_rows', 'has_speedup(v)')
    if (chain_rows > 0) { chain_variants = chain_variants . v . ' ' }
    if (chain_rows > 0 && speedup_rows > 0) { fused_chains = fused_chains . v . ' ' }
}
is_fused_chain(v) = word_index(fused_chains, v) > 0
anchor = word(fused_chains, 1)
stats csv using (sel('cos', anchor, 'k') == 1 ? column('time_us_median') : 0) nooutput
t1_cos = STATS_max / 1000.0
stats csv using (sel('affine', anchor, 'k') == 1 ? column('time_us_median') : 0) nooutput
t1_affine = STATS_max / 1000.0
# A chain's key names it without the 'chain_' every chain shares; fused
# chains are drawn with open points, unfused ones filled.
chain_name(v) = v[1:6] eq 'chain_' ? v[7:] : v
chain_pt(v) = is_fused_chain(v) ? 6 : 7

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
            for [v in chain_variants] for [i=1:nruns] run(i) using 'k':(chain_ms(op, v)) \
                :(time_lo(chain_ms(op, v))):(time_hi(chain_ms(op, v))) \
                with yerrorlines lt word_index(chain_variants, v) dt run_dt(i) pt chain_pt(v) \
                title literal(run_key(i, 'variant', v, chain_name(v)))
    }
}
unset multiplot
