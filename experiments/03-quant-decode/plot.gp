# Experiment 03's charts, drawn from exp-03.csv only (plots/style.gp first).
#
#   exp-03:         decode tokens/s against model size, under the bandwidth
#                   ceiling (bandwidth / bytes per token)
#   exp-03-bw:      size x decode rate (bytes per second) against size
#   exp-03-prefill: prefill tokens/s against size, under the compute roof
#   exp-03-batch:   the batch part: each format's speedup over F16 against
#                   the tokens per step M, the roofline's first model, and
#                   Marlin's published 4-bit points (where the run has one)
#   exp-03-batch-time: the same points as time per step against M, under
#                   this device's roofline for F16 and q4
#
# Every measured variant is a series of its own (a new row of kernels/quant.c
# appears without editing this file), each point with its q1-q3 bar: the
# rates at the slow and the fast quartile of its times (time_us_q1 and
# time_us_q3, through style.gp's rate_lo / rate_hi).
#
# The ceiling is a band, not a line: decode streams the weights and only
# reads them, so its honest ceiling is the read rung of the level the
# weights live in (the mem_level column; a mixed "L2-LLC" is judged against
# the level it spills to, what the spill runs at: roofs.c), drawn from the worst to the best of that rung's trials
# ("# roof_<LEVEL>_read_gbps: best worst bytes"). The CSV's mbu and
# ceiling_tokens_per_s use the best of the same rung, so a point inside
# the band is at the ceiling within the ceiling's own noise.
#
# Rows with source "llama.cpp" are llama.cpp's published table (another
# machine, a real Llama-3.1-8B): drawn scaled so that their F16 point sits
# on this run's F16 point, to compare shapes, not machines. They are drawn
# last, as open rings around our points, so that the anchor (both F16
# points) shows both.

eval require_columns('time_us_q1 time_us_q3')

measured(phase, c) = (strcol('source') eq 'measured' && strcol('phase') eq phase) ? column(c) : NaN
# One series: the measured rows of one phase and one variant.
sel(phase, v, c) = (strcol('source') eq 'measured' && strcol('phase') eq phase && strcol('variant') eq v) ? column(c) : NaN
# Every run's variants (an overlay draws a variant only one run measured).
variants = union_values('variant')
vlt(v) = word_index(variants, v)
# The variants of each phase, in the order they first appear in the CSVs.
decode_variants = ''
prefill_variants = ''
batch_variants = ''
do for [v in variants] {
    eval count_rows('decode_rows', "sel('decode', v, 'tokens_per_s') > 0")
    if (decode_rows > 0) { decode_variants = decode_variants.v.' ' }
    eval count_rows('prefill_rows', "sel('prefill', v, 'tokens_per_s') > 0")
    if (prefill_rows > 0) { prefill_variants = prefill_variants.v.' ' }
    eval count_rows('batch_v_rows', "sel('batch', v, 'tokens_per_s') > 0")
    if (batch_v_rows > 0) { batch_variants = batch_variants.v.' ' }
}
# llama.cpp's published rows of one phase.
llama(phase, c) = (strcol('source') eq 'llama.cpp' && strcol('phase') eq phase) ? column(c) : NaN
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

# ---- the decode ceiling: the read rung of the weights' level, as a band -------
# The level a row is judged in: mem_level, or a mixed level's slower half
# (the spill's rung; a point that beats it is judged against the faster,
# and its ceiling_gbps says so).
roof_level(s) = strstrt(s, '-') > 0 ? s[strstrt(s, '-') + 1:] : s
# The levels the measured decode rows live in (usually one: DRAM).
decode_levels = ''
do for [lv in 'L1 L2 LLC DRAM'] {
    stats csv using (strcol('source') eq 'measured' && strcol('phase') eq 'decode' && \
        roof_level(strcol('mem_level')) eq lv ? 1 : 0) nooutput
    if (STATS_sum > 0) { decode_levels = decode_levels.lv.' ' }
}
# The trials behind each rung, for the key.
trials = meta('ceilings_trials')
trials_text = trials eq '' ? 'its trials' : trials.' trials'
# The key entry of one level's band: which rung, and that it is a band.
rung_key(lv, what) = sprintf('%s read rung%s: worst-best of %s', lv, what, trials_text)
best_key(lv, what) = sprintf('model: %s read rung%s, best (the CSV ceiling)', lv, what)
# The CSV's ceiling (ceiling_gbps, behind mbu and ceiling_tokens_per_s) must
# be the best of the rung drawn: say so loudly if the two ever part.
stats csv using (is_f16('decode') ? column('ceiling_gbps') : 0) nooutput
csv_ceiling = STATS_max
do for [lv in decode_levels] {
    if (abs(roof_best(lv, 'read') - csv_ceiling) > 1e-3 * csv_ceiling && words(decode_levels) == 1) {
        print sprintf('plot.gp: warning: ceiling_gbps %g is not the %s read rung %g', \
            csv_ceiling, lv, roof_best(lv, 'read'))
    }
}
# Without roof metadata (an old CSV), the ceiling is the CSV's one number.
# Read once per level: the band and the line call these at every sample,
# and a function calling meta() would look the key up each time.
do for [lv in decode_levels] {
    eval sprintf("roof_hi_%s = %.17g", lv, \
        roof_best(lv, 'read') == roof_best(lv, 'read') ? roof_best(lv, 'read') : csv_ceiling)
    eval sprintf("roof_lo_%s = %.17g", lv, \
        roof_worst(lv, 'read') == roof_worst(lv, 'read') ? roof_worst(lv, 'read') : csv_ceiling)
}
bw = csv_ceiling                   # GB/s, the best of the rung
# A run with group roofs (group_roof_* columns: the read probe timed with
# each group) draws those: each level's band from its decode rows' slowest
# probe quartile to their fastest, the line at the fastest F16 group's
# median probe; the ladder's rungs are the run's start.
group_roofs = has_columns(csv, 'group_roof_gbps group_roof_gbps_q1 group_roof_gbps_q3')
in_level(lv, c) = strcol('source') eq 'measured' && strcol('phase') eq 'decode' && \
    roof_level(strcol('mem_level')) eq lv && column(c) > 0 ? column(c) : NaN
if (group_roofs) {
    do for [lv in decode_levels] {
        stats csv using (in_level(lv, 'group_roof_gbps_q3')) nooutput
        eval sprintf("roof_hi_%s = %.17g", lv, exists('STATS_max') ? STATS_max : NaN)
        stats csv using (in_level(lv, 'group_roof_gbps_q1')) nooutput
        eval sprintf("roof_lo_%s = %.17g", lv, exists('STATS_min') ? STATS_min : NaN)
    }
    stats csv using (is_f16('decode') && column('group_roof_gbps') > 0 ? column('group_roof_gbps') : NaN) nooutput
    bw = exists('STATS_max') ? STATS_max : NaN # none timed (a run out of --budget)
    rung_key(lv, what) = sprintf('%s read probes%s: q1-q3, each timed with its group', lv, what)
    best_key(lv, what) = sprintf('model: %s read probe%s, the fastest F16 group''s', lv, what)
}
roof_hi(lv) = value('roof_hi_' . lv)
roof_lo(lv) = value('roof_lo_' . lv)
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
tokens_at(gbps, gib) = gbps * 1e9 / (gib * GIB)  # tokens/s: bandwidth / bytes per token
sheet_ceiling(gib) = sheet_bw * 1e9 / (gib * GIB)

# ---- the published points -------------------------------------------------------
# Their source: the short name of their work in results/published/
# references.csv (the table's "# ref:" line names that row).
llama_file = system(sprintf("ls '%s'/results/published/llamacpp-*.csv 2>/dev/null | head -n 1", root))
llama_source = reference_short('llamacpp_quantize')
if (llama_file eq '' || llama_source eq '') { llama_source = 'llama.cpp' }
pub_key = published('llama.cpp, Llama-3.1-8B, F16 scaled to ours', llama_source)
# Drawn last and open, in their own colour: around the F16 anchor they
# ring this run's point instead of hiding it.
pub_style = sprintf("points pt 12 ps 2.2 lw 1.5 lc rgb '%s'", published_color)
# A label for the anchor, where the two F16 points coincide by design: in
# the empty lower right corner, with an arrow to the point.
anchor_label(y) = sprintf("set label 9 \"F16: this run's point\nand llama.cpp's (the anchor)\" at graph 0.97, graph 0.1 right font ',9' tc rgb '%s' front; set arrow 9 from graph 0.9, graph 0.15 to first %g, first %g lc rgb '%s' size screen 0.01, 20 front", published_color, f16_gib, y, published_color)

# A key entry's series: "this run, ..." alone; with overlays key() names the run.
this_run = nruns == 1 ? 'this run, ' : ''

set logscale x
x_lo = size_lo < 0.1 * size_hi ? size_lo : 0.1 * size_hi
set xrange [x_lo / 1.5 : size_hi * 1.6]
set xlabel 'weights read per token (GiB)'
# 1-2-5 steps, down to a quick run's cache-sized model (MiB of weights).
set xtics (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50)
set key opaque font ',10'
set samples 200
set style fill transparent solid 0.6 noborder

# Charts 1-3 only where their phase has rows (--variant may leave one out).
if (strlen(decode_variants) > 0) {
    # ---- chart 1: decode tokens/s against size ------------------------------------
    set output chart('')
    set title verdict_title('Does decode speed track the bytes of the weights?', 'decode_speedup_q4')
    set logscale y
    set ylabel 'decode tokens/s'
    set autoscale y
    set key inside top right
    if (have_published) { eval anchor_label(f16_decode) }
    plot \
        for [lv in decode_levels] '+' using 1:(tokens_at(roof_lo(lv), $1)):(tokens_at(roof_hi(lv), $1)) \
            with filledcurves lc rgb band_color title rung_key(lv, ' / size'), \
        for [lv in decode_levels] tokens_at(roof_hi(lv), x) with lines dt 2 lw 1.5 lc rgb model_color \
            title best_key(lv, ' / size'), \
        (sheet_bw > 0 ? sheet_ceiling(x) : NaN) with lines dt 3 lc rgb '#999999' \
            title (sheet_bw > 0 ? 'model: datasheet bandwidth / size' : ''), \
        for [v in decode_variants] for [i=1:nruns] run(i) using 'size_gib':(sel('decode', v, 'tokens_per_s')): \
            (rate_lo(sel('decode', v, 'tokens_per_s'))):(rate_hi(sel('decode', v, 'tokens_per_s'))) \
            with yerrorlines lt vlt(v) dt run_dt(i) title run_key(i, 'variant', v, this_run.'decode, '.v.' (q1-q3)') noenhanced, \
        for [v in decode_variants] csv using 'size_gib':(sel('decode', v, 'tokens_per_s')):(strcol('format')) \
            with labels offset 0, 1 tc lt vlt(v) notitle, \
        csv using (llama('decode', 'rel_size') * f16_gib):(llama('decode', 'rel_tokens_per_s') * f16_decode) \
            with @pub_style title (have_published ? pub_key : '')
    unset label 9
    unset arrow 9

    # ---- chart 2: size x decode rate against size ----------------------------------
    set output chart('-bw')
    set title verdict_title('Does size x decode rate (bytes per second) stay flat?', \
        'size_x_decode_flat')
    unset logscale y
    top_bw = sheet_bw > bw ? sheet_bw : bw
    set yrange [0 : top_bw * 1.45]
    set ylabel 'size x decode rate (GB/s)'
    set key inside top right
    if (have_published) { eval anchor_label(f16_gbps) }
    plot \
        for [lv in decode_levels] '+' using 1:(roof_lo(lv)):(roof_hi(lv)) \
            with filledcurves lc rgb band_color title rung_key(lv, ''), \
        for [lv in decode_levels] roof_hi(lv) with lines dt 2 lw 1.5 lc rgb model_color \
            title best_key(lv, ''), \
        (sheet_bw > 0 ? sheet_bw : NaN) with lines dt 3 lc rgb '#999999' \
            title (sheet_bw > 0 ? 'model: datasheet bandwidth' : ''), \
        for [v in decode_variants] for [i=1:nruns] run(i) using 'size_gib':(sel('decode', v, 'gbps')): \
            (rate_lo(sel('decode', v, 'gbps'))):(rate_hi(sel('decode', v, 'gbps'))) \
            with yerrorlines lt vlt(v) dt run_dt(i) title run_key(i, 'variant', v, this_run.'decode, '.v.' (q1-q3)') noenhanced, \
        for [v in decode_variants] csv using 'size_gib':(sel('decode', v, 'gbps')):(strcol('format')) \
            with labels offset 0, 1 tc lt vlt(v) notitle, \
        csv using (llama('decode', 'rel_size') * f16_gib):(llama('decode', 'rel_size') * column('rel_tokens_per_s') * f16_gbps) \
            with @pub_style title (have_published ? pub_key : '')
    unset label 9
    unset arrow 9
}

if (strlen(prefill_variants) > 0) {
    # ---- chart 3: prefill tokens/s against size --------------------------------------
    set output chart('-prefill')
    set title verdict_title('Does prefill hardly notice the format (compute-bound)?', 'prefill_flat')
    set ylabel 'prefill tokens/s'
    set key inside top right
    roof = peak > 0 && params > 0 ? peak * 1e12 / (2 * params) : NaN
    if (roof > 0) { set yrange [0 : roof * 1.45] } else { set yrange [0 : *] }
    if (have_published) { eval anchor_label(f16_prefill) }
    plot \
        roof with lines dt 2 lw 2 lc rgb model_color title 'model: measured matrix rate / (2 FLOPs x weights)', \
        for [v in prefill_variants] for [i=1:nruns] run(i) using 'size_gib':(sel('prefill', v, 'tokens_per_s')): \
            (rate_lo(sel('prefill', v, 'tokens_per_s'))):(rate_hi(sel('prefill', v, 'tokens_per_s'))) \
            with yerrorlines lt vlt(v) dt run_dt(i) title run_key(i, 'variant', v, this_run.'prefill, '.v.' (q1-q3)') noenhanced, \
        for [v in prefill_variants] csv using 'size_gib':(sel('prefill', v, 'tokens_per_s')):(strcol('format')) \
            with labels offset 0, 1 tc lt vlt(v) notitle, \
        csv using (llama('prefill', 'rel_size') * f16_gib):(llama('prefill', 'rel_tokens_per_s') * f16_prefill) \
            with @pub_style title (have_published ? pub_key : '')
    unset label 9
    unset arrow 9
}

# ---- chart 4: the batch part, speedup over F16 against M ------------------------------
# Each format's step at M tokens over the F16 step timed with it (its
# group), the roofline's first model for q4 dashed (speedup_model: max(1,
# min(bytes' ratio, ridge / M)), the run's measured ridge), q4's bytes'
# ratio, and Marlin's published 4-bit points (an A10: another machine).
eval count_rows('batch_rows', "measured('batch', 'rel_tokens_per_s') > 0")
if (batch_rows > 0) {
    set output chart('-batch')
    set title verdict_title('Where does the quantized speedup fall with the batch?', 'batch_bend_q4')
    unset logscale y
    set logscale x 2
    set xrange [0.7 : 300]
    set xtics (1, 2, 4, 8, 16, 32, 64, 128, 256)
    set yrange [0 : 5]
    set xlabel 'tokens per step (M)'
    set ylabel 'speedup over F16 (the F16 step timed with it)'
    set key outside below maxcols 3 font ',9'
    fsel(fm, c) = (strcol('source') eq 'measured' && strcol('phase') eq 'batch' && strcol('format') eq fm) ? column(c) : NaN
    # one series per path (the batch kernel; on a GPU, and in a full CPU run,
    # the library's dequantize-then-GEMM beside it) and format
    bsel(v, fm, c) = (strcol('variant') eq v) ? fsel(fm, c) : NaN
    q4_ratio = 512.0 / 144
    set print $marlin
    do for [mm in '16 32 64 128'] {
        print sprintf('%s,%g', mm, published_value('marlin_a10_m'.mm)) # the CSVs' separator
    }
    unset print
    marlin_key = published('Marlin, 4-bit over FP16, an A10', published_source('marlin_a10_m16'))
    # The bend, as batch_bend_q4 found it: the first M where q4's speedup is
    # below 0.75 of its bytes' ratio, measured (solid) and by the model
    # (dashed); "# batch_bend_m: MEASURED MODEL" (0: not within the sweep).
    bend = meta('batch_bend_m')
    bend_measured = words(bend) == 2 ? real(word(bend, 1)) : 0
    bend_model = words(bend) == 2 ? real(word(bend, 2)) : 0
    if (bend_measured > 0) {
        set arrow 7 from bend_measured, graph 0 to bend_measured, graph 1 nohead lw 1.5 lc rgb '#0072B2' front
        set label 7 sprintf('bend, measured: M = %d', bend_measured) at bend_measured, graph 0.96 \
            left offset 0.5, 0 font ',9' tc rgb '#0072B2' front
    }
    if (bend_model > 0) {
        set arrow 8 from bend_model, graph 0 to bend_model, graph 1 nohead dt 2 lw 1.5 lc rgb model_color front
        set label 8 sprintf('bend, model: M = %d', bend_model) at bend_model, graph 0.90 \
            left offset 0.5, 0 font ',9' tc rgb model_color front
    }
    plot \
        q4_ratio with lines dt 3 lw 1.5 lc rgb '#999999' title "q4's bytes' ratio (3.56x)", \
        csv using 'tokens':(bsel(word(batch_variants, 1), 'q4', 'speedup_model')) with lines dt 2 lw 2 lc rgb model_color \
            title "model, q4: max(1, min(bytes' ratio, ridge / M))", \
        for [v in batch_variants] for [fm in 'q8 q6 q5 q4 q2'] for [i=1:nruns] run(i) \
            using 'tokens':(bsel(v, fm, 'rel_tokens_per_s')) \
            with linespoints lw 2 dt run_dt(i) title run_key(i, 'format', fm, this_run.fm.', '.v) noenhanced, \
        $marlin using 1:2 with points pt 12 ps 2.2 lw 1.5 lc rgb published_color title marlin_key
    unset arrow 7; unset label 7; unset arrow 8; unset label 8

    # ---- chart 5: the batch part's time per step against M, under the roofline ----------
    # The roof of a step of format f at M tokens: the longer of its bytes at
    # the F16 group's read probe and its FLOPs at the compute roof (the F16
    # rows' tflops over their mfu: the 8-bit integer rows have no mfu).
    # ([*:*][*:*]: chart 4's ranges would filter the values stats reads.)
    stats [*:*][*:*] csv using (fsel('f16', 'group_roof_gbps') > 0 ? fsel('f16', 'group_roof_gbps') : NaN) nooutput
    batch_bw = exists('STATS_max') ? STATS_max : NaN
    stats [*:*][*:*] csv using (fsel('f16', 'mfu') > 0 ? fsel('f16', 'tflops') / fsel('f16', 'mfu') : NaN) nooutput
    batch_peak = exists('STATS_max') ? STATS_max : NaN
    stats [*:*][*:*] csv using (fsel('f16', 'size_bytes')) nooutput
    f16_bytes = STATS_max
    stats [*:*][*:*] csv using (fsel('f16', 'params')) nooutput
    batch_params = STATS_max
    stats [*:*][*:*] csv using (fsel('f16', 'tokens')) nooutput
    most_m = STATS_max
    roof_ms(m, bytes) = 1e3 * ((bytes / (batch_bw * 1e9)) > (2 * batch_params * m / (batch_peak * 1e12)) ? \
                               bytes / (batch_bw * 1e9) : 2 * batch_params * m / (batch_peak * 1e12))
    set output chart('-batch-time')
    set title verdict_title('Time per step against M: flat while the weights bound it', 'batch_speedup_small_q4')
    set logscale y
    set xrange [0.7 : 1.5 * most_m]
    set yrange [*:*]
    set ylabel 'ms per step (median; q1-q3 bars)'
    set key outside below maxcols 3 noautotitle font ',9'
    set samples 200
    plot \
        (batch_bw > 0 && batch_peak > 0 ? roof_ms(x, f16_bytes) : NaN) with lines dt 2 lw 2 lc rgb model_color \
            title sprintf('roofline, F16 (%.0f GB/s, %.3g TFLOP/s)', batch_bw, batch_peak), \
        (batch_bw > 0 && batch_peak > 0 ? roof_ms(x, f16_bytes / q4_ratio) : NaN) with lines dt 3 lw 2 lc rgb model_color \
            title 'roofline, q4 (its bytes; the same FLOPs at the same roof)', \
        for [v in batch_variants] for [fm in 'f16 q8 q6 q5 q4 q2'] for [i=1:nruns] run(i) \
            using 'tokens':(bsel(v, fm, 'time_us_median') / 1e3):(bsel(v, fm, 'time_us_q1') / 1e3):(bsel(v, fm, 'time_us_q3') / 1e3) \
            with yerrorlines lw 2 dt run_dt(i) title run_key(i, 'format', fm, this_run.fm.', '.v) noenhanced
    unset logscale y
}
