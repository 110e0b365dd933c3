# Experiment 02's charts, drawn from exp-02.csv only (plots/style.gp first).
#
#   exp-02:       the roofline: achieved TFLOP/s against arithmetic intensity,
#                 under the measured memory slope and compute roof
#   exp-02-batch: time per step and tokens/s against the tokens per step n
#   exp-02-util:  MBU and MFU against n, the two yardsticks crossing
#
# The spread drawn, all from the CSV: every measured point's q1-q3 of its
# samples' times (time_us_q1/q3; a rate at the time's q3 and q1); the
# DRAM read roof as a band: from the groups' probes (group_roof_gbps_q1 to
# _q3) where the run has them, else from the run-start rung's worst to its
# best trial ("# roof_DRAM_read_gbps: best worst bytes"); the compute roof
# from the library GEMM to the FMA peak where the run measured both.

eval require_columns('time_us_median time_us_q1 time_us_q3')

# One series: rows of one shape and one variant.
sel(shape, variant, c) = (strcol('shape') eq shape && strcol('variant') eq variant) ? column(c) : NaN

# The measured ceilings, from the CSV header: the compute roof and the
# bandwidth ladder (one read roof per level of the memory hierarchy; the
# decode's weights stream from DRAM). Runs older than the ladder only have
# rate / utilization in their rows.
roof_gbps(level) = roof_best(level, 'read') == roof_best(level, 'read') ? roof_best(level, 'read') : 0
peak = meta('ceiling_tflops') eq '' ? 0 : real(meta('ceiling_tflops'))   # TFLOP/s
bw = roof_gbps('DRAM') / 1000.0                                         # TB/s
if (peak <= 0) { stats csv using (column('mfu') > 0 ? column('tflops') / column('mfu') : NaN) nooutput; peak = STATS_max }
if (bw <= 0) { stats csv using (column('mbu') > 0 ? column('gbps') / column('mbu') : NaN) nooutput; bw = STATS_max / 1000.0 }
ridge = peak / bw                     # FLOP/B
# The cache levels' roofs (0 where absent): the same slope, higher.
ladder = 'L1 L2 LLC'
# Read once each: a function calling roof_gbps() would look its key up at every sample.
do for [l in ladder] { eval sprintf("ladder_bw_%s = %.17g", l, roof_gbps(l) / 1000.0) }
ladder_bw(level) = value('ladder_bw_' . level)
ladder_roof(ai, level) = ladder_bw(level) > 0 ? (ai * ladder_bw(level) < peak ? ai * ladder_bw(level) : peak) : NaN
stats csv using (column('mfu_datasheet') > 0 ? column('tflops') / column('mfu_datasheet') : 0) nooutput
sheet_peak = STATS_max
stats csv using (column('mbu_datasheet') > 0 ? column('gbps') / column('mbu_datasheet') : 0) nooutput
sheet_bw = STATS_max / 1000.0
have_sheet = sheet_peak > 0 && sheet_bw > 0

# A run with group roofs (group_roof_* columns: probes timed with each
# group's points) draws those instead of the run-start ladder's DRAM rung:
# the band from the slowest DRAM-level probe's q1 to the fastest's q3, the
# roof at the fastest's median; the compute roof from its compute probes.
group_roofs = has_columns(csv, 'group_roof_gbps group_roof_gbps_q1 group_roof_gbps_q3')
in_dram(c) = strcol('mem_level') eq 'DRAM' && column(c) > 0 ? column(c) : NaN
# A run whose points all fit the caches (a quick run on a large-LLC
# machine) has no DRAM rows: stats then warns and leaves STATS_* undefined
# (it clears them before it reads), so the count asks exists() first.
group_rows = 0
if (group_roofs) {
    stats csv using (in_dram('group_roof_gbps')) nooutput
    group_rows = exists('STATS_records') ? STATS_records : 0
}
if (group_roofs && group_rows > 0) {
    stats csv using (in_dram('group_roof_gbps')) nooutput
    bw = STATS_max / 1000.0
    stats csv using (in_dram('group_roof_gbps_q1')) nooutput
    group_bw_lo = STATS_min / 1000.0
    stats csv using (in_dram('group_roof_gbps_q3')) nooutput
    group_bw_hi = STATS_max / 1000.0
}
group_roofs = group_roofs && group_rows > 0
if (group_roofs && has_columns(csv, 'group_roof_tflops')) {
    stats csv using (column('group_roof_tflops') > 0 ? column('group_roof_tflops') : NaN) nooutput
    if (exists('STATS_records') && STATS_records > 0) { peak = STATS_max }
}
ridge = peak / bw

roof(ai) = ai * bw < peak ? ai * bw : peak
sheet_roof(ai) = ai * sheet_bw < sheet_peak ? ai * sheet_bw : sheet_peak

stats csv using (column('tflops') > 0 ? column('tflops') : NaN) nooutput
tflops_lo = STATS_min
stats csv using 'ai' nooutput
ai_lo = STATS_min
ai_hi = STATS_max
stats csv using 'n' nooutput
n_hi = STATS_max
# Which shapes are in this file, and their sizes (for the model lines).
stats csv using (strcol('shape') eq '4096x14336' ? column('rows') : 0) nooutput
has_a = STATS_max > 0
stats csv using (strcol('shape') eq '8192x8192' ? column('rows') : 0) nooutput
has_b = STATS_max > 0
stats csv using (strcol('shape') eq '4096x14336' ? column('k') : 0) nooutput
k_a = STATS_max
stats csv using (strcol('shape') eq '8192x8192' ? column('k') : 0) nooutput
k_b = STATS_max

shapes = (has_a ? '4096x14336 ' : '') . (has_b ? '8192x8192' : '')
# Every run's variants (an overlay draws a variant only one run measured).
variants = union_values('variant')
# The verdicts a chart states: those of the first shape drawn.
shape1 = word(shapes, 1)
# A colour per variant, a point type per shape.
vlt(v) = word_index(variants, v)
spt(s) = s eq '4096x14336' ? 7 : 6
label_of(s, v) = sprintf('%s, %s', s, v)

# ---- chart 1: the roofline ---------------------------------------------------
# The DRAM read rung as a band, worst to best trial; the compute roof as a
# band from the library GEMM's best to the FMA peak where both were
# measured (ceiling_tflops, the larger, is what MFU is against).
bw_worst = group_roofs ? group_bw_lo : roof_worst('DRAM', 'read') / 1000.0   # TB/s
if (bw_worst != bw_worst) { bw_worst = bw }
bw_top = group_roofs ? group_bw_hi : bw
roof_hi(ai) = ai * bw_top < peak ? ai * bw_top : peak
gemm_meta = meta('roof_compute_gemm_tflops')
peak_gemm = gemm_meta eq '' ? NaN : real(gemm_meta)
peak_lo = (peak_gemm == peak_gemm && peak_gemm < peak) ? peak_gemm : peak
peak_source = meta('ceiling_tflops_source') eq '' ? 'compute roof' : meta('ceiling_tflops_source')
compute_what = peak_lo < peak ? sprintf('compute roof: %.3g (library GEMM) to %.3g TFLOP/s (%s)', peak_lo, peak, peak_source) : \
    sprintf('compute roof: %.3g TFLOP/s (%s)', peak, peak_source)
roof_lo(ai) = ai * bw_worst < peak_lo ? ai * bw_worst : peak_lo
# The published GPU ridges (another machine's datasheet, not this run).
pub_ids = 'ridge_h100_sxm ridge_a100_80gb'
array pub_ridge[2]
do for [j = 1:2] { pub_ridge[j] = published_value(word(pub_ids, j)) }
pub_dt(j) = j == 1 ? 4 : 5
pub_short(j) = sprintf('%s %.0f', j == 1 ? 'H100' : 'A100', pub_ridge[j])
# On the CPU the library path converts the FP16 weights to FP32 in a
# scratch before SGEMM: it moves at least 10 B per weight (2 read, 4
# written, 4 read again) while "bytes" counts 2, so at small n it sits at
# least 5x below the DRAM roof. Its roof at the bytes it moves:
library_variant = any_meta('role_gemv_library')
cpu_library = backend eq 'cpu' && library_variant ne '' && word_index(variants, library_variant) > 0
library_roof(ai) = ai * bw * 2 / 10 < peak ? ai * bw * 2 / 10 : peak
set output chart('')
set title verdict_title(sprintf('Is decode memory-bound? (ridge %.0f FLOP/B)', ridge), 'mbu_decode_' . shape1)
set logscale xy
x_top = (ai_hi > pub_ridge[1] ? ai_hi : pub_ridge[1]) * 3
set xrange [ai_lo / 2 : x_top]
set yrange [tflops_lo / 3 : peak * 3]
set xlabel 'arithmetic intensity (FLOP per byte of memory traffic, as counted: 2 B per weight)'
set ylabel 'achieved TFLOP/s'
set format y '%g'
set key outside right top vertical
# The ridges as vertical lines, each named along its line: this machine's
# (measured, named on its left) and the published GPU ones (another
# machine's datasheet, named on their right), so that close ridges (a
# GPU's measured one and a published one) keep their names apart.
set arrow 1 from ridge, graph 0 to ridge, graph 1 nohead dt 3 lw 1.5 lc rgb model_color
set label 1 sprintf('ridge %.1f FLOP/B: this machine, measured', ridge) at first ridge, graph 0.03 \
    left rotate by 90 offset -1.4, 0 tc rgb model_color font ',8'
do for [j = 1:2] {
    pr = pub_ridge[j]
    pid = word(pub_ids, j)
    set arrow (10 + j) from first pr, graph 0 to first pr, graph 1 nohead dt pub_dt(j) lw 1.5 lc rgb published_color
    set label (10 + j) published(sprintf('%s ridge %.0f', published_what(pid)[1:4], pr), published_source(pid)) \
        at first pr, graph 0.03 left rotate by 90 offset 1.5, 0 tc rgb published_color font ',8' noenhanced
}
# The compute roof's band, named at its right end.
set label 2 compute_what at graph 0.02, first peak * 1.35 left tc rgb model_color font ',9' noenhanced
set samples 400
plot \
    '+' using 1:(roof_lo($1)):(roof_hi($1)) with filledcurves fc rgb band_color fs solid 1.0 noborder \
        title (group_roofs ? sprintf('model: roof band, the groups'' DRAM read probes %.0f-%.0f GB/s', \
            1000 * bw_worst, 1000 * bw_top) : sprintf('model: roof band, DRAM read %.0f-%.0f GB/s', \
            1000 * bw_worst, 1000 * bw)), \
    roof(x) with lines dt 2 lw 2 lc rgb model_color \
        title (group_roofs ? 'model: roofline at the fastest group''s probes' : 'model: roofline at the best trials'), \
    for [l in ladder] ladder_roof(x, l) with lines dt 3 lw 1 lc rgb '#aaaaaa' \
        title (ladder_bw(l) > 0 ? sprintf('model: %s read roof, %.0f GB/s', l, 1000 * ladder_bw(l)) : ''), \
    (have_sheet ? sheet_roof(x) : NaN) with lines dt 3 lc rgb '#999999' title (have_sheet ? 'model: datasheet roofline' : ''), \
    (cpu_library ? library_roof(x) : NaN) with lines dt 4 lc rgb '#009E73' \
        title (cpu_library ? "model: library path at >= 10 B/weight moved" : ''), \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'ai':(sel(s, v, 'tflops')):(rate_lo(column('tflops'))):(rate_hi(column('tflops'))) \
        with yerrorlines lt vlt(v) pt spt(s) dt run_dt(i) title run_key(i, 'variant', v, label_of(s, v)) noenhanced, \
    NaN with lines lc rgb '#000000' title 'error bars: q1-q3 of the times'
unset arrow 1
unset label 1
unset label 2
do for [j = 1:2] { unset arrow (10 + j); unset label (10 + j) }

# ---- chart 2: time per step and tokens/s against n ----------------------------
# The roofline's time for one step: the larger of the arithmetic and the bytes.
rows_of(s) = s eq '4096x14336' ? 14336.0 : 8192.0
k_of(s) = s eq '4096x14336' ? k_a : k_b
t_model(s, n) = (2 * rows_of(s) * k_of(s) * n / (peak * 1e12) > \
                 (2 * rows_of(s) * k_of(s) + 2 * k_of(s) * n + 4 * rows_of(s) * n) / (bw * 1e12)) ? \
                 2 * rows_of(s) * k_of(s) * n / (peak * 1e12) : \
                 (2 * rows_of(s) * k_of(s) + 2 * k_of(s) * n + 4 * rows_of(s) * n) / (bw * 1e12)
ms(c) = column(c) / 1000.0

set output chart('-batch')
unset title
set multiplot layout 1, 2 title verdict_title('Is batching free until the arithmetic reaches the memory time?', \
    'batching_free_' . shape1)
set xrange [0.7 : n_hi * 1.4]
set format x '%g'
set key inside top left
set key noopaque
set title 'time per step'
set xlabel 'tokens per step (n)'
set ylabel 'time per step (ms)'
set autoscale y
# The two shapes' models each their own dash and grey, named in the key.
model_dt(s) = s eq '4096x14336' ? 2 : 4
model_lc(s) = s eq '4096x14336' ? model_color : '#999999'
plot \
    for [s in shapes] t_model(s, x) * 1000 with lines dt model_dt(s) lw 1.5 lc rgb model_lc(s) title sprintf('model: roofline, %s', s), \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'time_us_median') / 1000.0):(column('time_us_q1') / 1000.0):(column('time_us_q3') / 1000.0) \
        with yerrorlines lt vlt(v) pt spt(s) dt run_dt(i) notitle
set title 'throughput'
set ylabel 'tokens per second'
set key inside bottom right
plot \
    for [s in shapes] x / t_model(s, x) with lines dt model_dt(s) lw 1.5 lc rgb model_lc(s) notitle, \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'tokens_per_s')):(rate_lo(column('tokens_per_s'))):(rate_hi(column('tokens_per_s'))) \
        with yerrorlines lt vlt(v) pt spt(s) dt run_dt(i) title run_key(i, 'variant', v, label_of(s, v)) noenhanced, \
    NaN with lines lc rgb '#000000' title 'error bars: q1-q3 of the times'
unset multiplot

# ---- chart 3: MBU and MFU against n ----------------------------------------
set output chart('-util')
set title verdict_title("MBU for decode, MFU for prefill: do they cross near the ridge?", \
    'mfu_decode_' . shape1)
unset logscale y
set logscale x
set yrange [0 : *]
set ylabel 'fraction of the measured ceiling'
set xlabel 'tokens per step (n)'
set key outside right top vertical
set arrow 2 from graph 0, first 1 to graph 1, first 1 nohead dt 3 lc rgb model_color
# FP16 weights: AI(n) ~ n, so the ridge in FLOP/B is also the n where they cross.
set arrow 3 from ridge, graph 0 to ridge, graph 1 nohead dt 3 lc rgb model_color
set label 3 sprintf(' n = ridge (%.0f)', ridge) at ridge, graph 0.95 left tc rgb model_color
plot \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'mbu')):(rate_lo(column('mbu'))):(rate_hi(column('mbu'))) \
        with yerrorlines lt vlt(v) pt spt(s) dt run_dt(i) title run_key(i, 'variant', v, sprintf('MBU, %s, %s', s, v)) noenhanced, \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'mfu')):(rate_lo(column('mfu'))):(rate_hi(column('mfu'))) \
        with yerrorlines lt vlt(v) pt 4 dt 3 title run_key(i, 'variant', v, sprintf('MFU, %s, %s', s, v)) noenhanced, \
    NaN with lines lc rgb '#000000' title 'error bars: q1-q3 of the times'
unset arrow 2
unset arrow 3
unset label 3
