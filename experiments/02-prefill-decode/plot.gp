# Experiment 02's charts, drawn from exp-02.csv only (plots/style.gp first).
#
#   exp-02:       the roofline: achieved TFLOP/s against arithmetic intensity,
#                 under the measured memory slope and compute roof
#   exp-02-batch: time per step and tokens/s against the tokens per step n
#   exp-02-util:  MBU and MFU against n, the two yardsticks crossing

# One series: rows of one shape and one variant.
sel(shape, variant, c) = (strcol('shape') eq shape && strcol('variant') eq variant) ? column(c) : NaN

# The measured ceilings, from the CSV header: the compute roof and the
# bandwidth ladder (one read roof per level of the memory hierarchy; the
# decode's weights stream from DRAM). Runs older than the ladder only have
# rate / utilization in their rows.
roof_gbps(level) = (meta('roof_'.level.'_read_gbps') eq '' ? 0 : real(word(meta('roof_'.level.'_read_gbps'), 1)))
peak = meta('ceiling_tflops') eq '' ? 0 : real(meta('ceiling_tflops'))   # TFLOP/s
bw = roof_gbps('DRAM') / 1000.0                                         # TB/s
if (peak <= 0) { stats csv using (column('mfu') > 0 ? column('tflops') / column('mfu') : NaN) nooutput; peak = STATS_max }
if (bw <= 0) { stats csv using (column('mbu') > 0 ? column('gbps') / column('mbu') : NaN) nooutput; bw = STATS_max / 1000.0 }
ridge = peak / bw                     # FLOP/B
# The cache levels' roofs (0 where absent): the same slope, higher.
ladder = 'L1 L2 LLC'
# Read once each: a function calling meta() would run sed at every sample.
do for [l in ladder] { eval sprintf("ladder_bw_%s = %.17g", l, roof_gbps(l) / 1000.0) }
ladder_bw(level) = value('ladder_bw_' . level)
ladder_roof(ai, level) = ladder_bw(level) > 0 ? (ai * ladder_bw(level) < peak ? ai * ladder_bw(level) : peak) : NaN
stats csv using (column('mfu_datasheet') > 0 ? column('tflops') / column('mfu_datasheet') : 0) nooutput
sheet_peak = STATS_max
stats csv using (column('mbu_datasheet') > 0 ? column('gbps') / column('mbu_datasheet') : 0) nooutput
sheet_bw = STATS_max / 1000.0
have_sheet = sheet_peak > 0 && sheet_bw > 0

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
variants = column_values(csv, 'variant')
# The verdicts a chart states: those of the first shape drawn.
shape1 = word(shapes, 1)
# A colour per variant, a point type per shape.
vlt(v) = word_index(variants, v)
spt(s) = s eq '4096x14336' ? 7 : 6
label_of(s, v) = sprintf('%s, %s', s, v)

# ---- chart 1: the roofline ---------------------------------------------------
set output chart('')
set title verdict_title(sprintf('Is decode memory-bound? (ridge %.0f FLOP/B)', ridge), 'mbu_decode_' . shape1)
set logscale xy
set xrange [ai_lo / 2 : (ai_hi > ridge ? ai_hi : ridge) * 3]
set yrange [tflops_lo / 3 : peak * 3]
set xlabel 'arithmetic intensity (FLOP per byte of memory traffic)'
set ylabel 'achieved TFLOP/s'
set format y '%g'
set key outside right top vertical
set arrow 1 from ridge, graph 0 to ridge, graph 1 nohead dt 3 lc rgb model_color
set label 1 sprintf(' ridge %.0f', ridge) at ridge, graph 0.06 left tc rgb model_color
set samples 400
plot \
    roof(x) with lines dt 2 lw 2 lc rgb model_color title 'model: measured roofline (DRAM read)', \
    for [l in ladder] ladder_roof(x, l) with lines dt 3 lw 1 lc rgb '#aaaaaa' \
        title (ladder_bw(l) > 0 ? sprintf('model: %s read roof, %.0f GB/s', l, 1000 * ladder_bw(l)) : ''), \
    (have_sheet ? sheet_roof(x) : NaN) with lines dt 3 lc rgb '#999999' title (have_sheet ? 'model: datasheet roofline' : ''), \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'ai':(sel(s, v, 'tflops')) \
        with linespoints lt vlt(v) pt spt(s) dt run_dt(i) title key(i, label_of(s, v)) noenhanced
unset arrow 1
unset label 1

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
plot \
    for [s in shapes] t_model(s, x) * 1000 with lines dt 2 lc rgb model_color title sprintf('model: roofline, %s', s), \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'time_us_median') / 1000.0) \
        with linespoints lt vlt(v) pt spt(s) dt run_dt(i) notitle
set title 'throughput'
set ylabel 'tokens per second'
set key inside bottom right
plot \
    for [s in shapes] x / t_model(s, x) with lines dt 2 lc rgb model_color notitle, \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'tokens_per_s')) \
        with linespoints lt vlt(v) pt spt(s) dt run_dt(i) title key(i, label_of(s, v)) noenhanced
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
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'mbu')) \
        with linespoints lt vlt(v) pt spt(s) dt run_dt(i) title key(i, sprintf('MBU, %s, %s', s, v)) noenhanced, \
    for [s in shapes] for [v in variants] for [i=1:nruns] run(i) using 'n':(sel(s, v, 'mfu')) \
        with linespoints lt vlt(v) pt 4 dt 3 title key(i, sprintf('MFU, %s, %s', s, v)) noenhanced
unset arrow 2
unset arrow 3
unset label 3
