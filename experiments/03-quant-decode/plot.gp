# Experiment 03's charts, drawn from exp-03.csv only (plots/style.gp first).
#
#   exp-03:         decode tokens/s against model size, under the bandwidth
#                   ceiling (bandwidth / bytes per token)
#   exp-03-bw:      size x decode rate (bytes per second) against size
#   exp-03-prefill: prefill tokens/s against size, under the compute roof
#
# Every measured variant is a series of its own (a new row of kernels/quant.c
# appears without editing this file). Rows with source "llama.cpp" are
# llama.cpp's published table (another machine, a real Llama-3.1-8B): drawn
# scaled so that their F16 point sits on this run's fastest F16 point, to
# compare shapes, not machines.

measured(phase, c) = (strcol('source') eq 'measured' && strcol('phase') eq phase) ? column(c) : NaN
# One series: the measured rows of one phase and one variant.
sel(phase, v, c) = (strcol('source') eq 'measured' && strcol('phase') eq phase && strcol('variant') eq v) ? column(c) : NaN
variants = column_values(csv, 'variant')
vlt(v) = word_index(variants, v)
# The variants of each phase, in the order they first appear in the CSV.
decode_variants = ''
prefill_variants = ''
do for [v in variants] {
    stats csv using (sel('decode', v, 'tokens_per_s') > 0 ? 1 : 0) nooutput
    if (STATS_sum > 0) { decode_variants = decode_variants.v.' ' }
    stats csv using (sel('prefill', v, 'tokens_per_s') > 0 ? 1 : 0) nooutput
    if (STATS_sum > 0) { prefill_variants = prefill_variants.v.' ' }
}
published(phase, c) = (strcol('source') eq 'llama.cpp' && strcol('phase') eq phase) ? column(c) : NaN
is_f16(phase) = strcol('source') eq 'measured' && strcol('phase') eq phase && strcol('format') eq 'f16'

# This run's F16 point, the anchor of the published overlay.
stats csv using (is_f16('decode') ? column('size_gib') : 0) nooutput
f16_gib = STATS_max
stats csv using (is_f16('decode') ? column('tokens_per_s') : 0) nooutput
f16_decode = STATS_max
stats csv using (is_f16('decode') ? column('gbps') : 0) nooutput
f16_gbps = STATS_max
stats csv using (is_f16('prefill') ? column('tokens_per_s') : 0) nooutput
f16_prefill = STATS_max
stats csv using (strcol('source') eq 'llama.cpp' ? 1 : 0) nooutput
have_published = STATS_sum > 0

# The measured ceilings, from rates over utilizations (F16's row: the
# roof of the level its weights live in, DRAM or the LLC); the model's size.
stats csv using (is_f16('decode') && column('mbu') > 0 ? column('gbps') / column('mbu') : 0) nooutput
bw = STATS_max                     # GB/s
stats csv using (measured('decode', 'mbu_datasheet') > 0 ? column('gbps') / column('mbu_datasheet') : 0) nooutput
sheet_bw = STATS_max
stats csv using (measured('prefill', 'mfu') > 0 ? column('tflops') / column('mfu') : 0) nooutput
peak = STATS_max                   # TFLOP/s
stats csv using (strcol('source') eq 'measured' ? column('params') : 0) nooutput
params = STATS_max
stats csv using (strcol('source') eq 'measured' ? column('size_gib') : NaN) nooutput
size_lo = STATS_min
size_hi = STATS_max

GIB = 1073741824.0
ceiling(gib) = bw * 1e9 / (gib * GIB)          # tokens/s: bandwidth / bytes per token
sheet_ceiling(gib) = sheet_bw * 1e9 / (gib * GIB)
scaled_size(c) = column('rel_size') * f16_gib
pub_label = 'published: llama.cpp, Llama-3.1-8B, another machine (scaled to this F16)'

set logscale x
x_lo = size_lo < 0.1 * size_hi ? size_lo : 0.1 * size_hi
set xrange [x_lo / 1.5 : size_hi * 1.6]
set xlabel 'weights read per token (GiB)'
set xtics (0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50)
set key opaque
set samples 200

# ---- chart 1: decode tokens/s against size ------------------------------------
set output chart('')
set title verdict_title('Does decode speed track the bytes of the weights?', 'decode_speedup_q4')
set logscale y
set ylabel 'decode tokens/s'
set autoscale y
set key inside top right
plot \
    ceiling(x) with lines dt 2 lw 2 lc rgb model_color title 'model: measured bandwidth / size', \
    (sheet_bw > 0 ? sheet_ceiling(x) : NaN) with lines dt 3 lc rgb '#999999' \
        title (sheet_bw > 0 ? 'model: datasheet bandwidth / size' : ''), \
    csv using (published('decode', 'rel_size') * f16_gib):(published('decode', 'rel_tokens_per_s') * f16_decode) \
        with points pt 12 ps 1.2 lc rgb '#E69F00' title (have_published ? pub_label : ''), \
    for [v in decode_variants] for [i=1:nruns] run(i) using 'size_gib':(sel('decode', v, 'tokens_per_s')) \
        with linespoints lt vlt(v) dt run_dt(i) title key(i, 'this run, decode, '.v) noenhanced, \
    for [v in decode_variants] csv using 'size_gib':(sel('decode', v, 'tokens_per_s')):(strcol('format')) \
        with labels offset 0, 1 tc lt vlt(v) notitle

# ---- chart 2: size x decode rate against size ----------------------------------
set output chart('-bw')
set title verdict_title('Does size x decode rate (bytes per second) stay flat?', \
    'size_x_decode_flat')
unset logscale y
top_bw = sheet_bw > bw ? sheet_bw : bw
set yrange [0 : top_bw * 1.45]
set ylabel 'size x decode rate (GB/s)'
set key inside top right
plot \
    bw with lines dt 2 lw 2 lc rgb model_color title 'model: measured bandwidth', \
    (sheet_bw > 0 ? sheet_bw : NaN) with lines dt 3 lc rgb '#999999' \
        title (sheet_bw > 0 ? 'model: datasheet bandwidth' : ''), \
    csv using (published('decode', 'rel_size') * f16_gib):(published('decode', 'rel_size') * column('rel_tokens_per_s') * f16_gbps) \
        with points pt 12 ps 1.2 lc rgb '#E69F00' title (have_published ? pub_label : ''), \
    for [v in decode_variants] for [i=1:nruns] run(i) using 'size_gib':(sel('decode', v, 'gbps')) \
        with linespoints lt vlt(v) dt run_dt(i) title key(i, 'this run, decode, '.v) noenhanced, \
    for [v in decode_variants] csv using 'size_gib':(sel('decode', v, 'gbps')):(strcol('format')) \
        with labels offset 0, 1 tc lt vlt(v) notitle

# ---- chart 3: prefill tokens/s against size --------------------------------------
set output chart('-prefill')
set title verdict_title('Does prefill hardly notice the format (compute-bound)?', 'prefill_flat')
set ylabel 'prefill tokens/s'
set key inside top right
roof = peak > 0 && params > 0 ? peak * 1e12 / (2 * params) : NaN
if (roof > 0) { set yrange [0 : roof * 1.45] } else { set yrange [0 : *] }
plot \
    roof with lines dt 2 lw 2 lc rgb model_color title 'model: measured matrix rate / (2 FLOPs x weights)', \
    csv using (published('prefill', 'rel_size') * f16_gib):(published('prefill', 'rel_tokens_per_s') * f16_prefill) \
        with points pt 12 ps 1.2 lc rgb '#E69F00' title (have_published ? pub_label : ''), \
    for [v in prefill_variants] for [i=1:nruns] run(i) using 'size_gib':(sel('prefill', v, 'tokens_per_s')) \
        with linespoints lt vlt(v) dt run_dt(i) title key(i, 'this run, prefill, '.v) noenhanced, \
    for [v in prefill_variants] csv using 'size_gib':(sel('prefill', v, 'tokens_per_s')):(strcol('format')) \
        with labels offset 0, 1 tc lt vlt(v) notitle
