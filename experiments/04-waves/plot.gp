# Experiment 04's charts, drawn from exp-04.csv only (plots/style.gp first).
#
#   exp-04:        the staircase: the own kernel's time vs N on this device,
#                  with the wave model over it; beside it, the model of
#                  NVIDIA's example on 108 and 132 SMs
#   exp-04-tflops: the same as TFLOP/s (a sawtooth); beside it cuBLAS on
#                  NVIDIA's example (GPU), or the model's SM use (CPU)
#   exp-04-vocab:  GPT-2's output layer against the vocabulary size
#
# Every measured point carries its spread: times and TFLOP/s their q1-q3
# (time_us_q1 / time_us_q3; a rate through style.gp's rate_lo / rate_hi),
# the vocabulary's speedups the q1-q3 of both times of the ratio
# (speedup_vs_v50257_lo / _hi, written by rl_time_ratio), and the vocab
# verdict's noise bar (metadata "# vocab_bar: bar spread") as a band
# around 1. A CSV from before the speedup spread and the bar draws without
# them and says so; one without time_us_q1 / q3 stops the chart.

eval require_columns('time_us_q1 time_us_q3')

# One part's column, NaN on other rows (gnuplot skips NaN points).
on(part, c) = strcol('part') eq part ? column(c) : NaN
# The model's rows for one SM count.
model(sms, c) = (strcol('part') eq 'model' && column('units') == sms) ? column(c) : NaN
# The variants one part measured, in the order they appear (union_values
# of plots/style.gp, for the rows of one part): every variant of the
# family is drawn, a new one without editing this script, and in an
# overlay every run's (files: single-quoted paths, style.gp's run_files).
part_variants(files, part) = query(files . " columns variant --where 'part=" . part . "' --distinct --words")

stats csv using (strcol('part') eq 'staircase' ? 1 : 0) nooutput
has_stairs = STATS_sum > 0
stats csv using (strcol('part') eq 'library' ? 1 : 0) nooutput
has_library = STATS_sum > 0
stats csv using (strcol('part') eq 'vocab' ? 1 : 0) nooutput
has_vocab = STATS_sum > 0
units_name = backend eq 'cuda' ? 'SMs' : 'threads'

if (has_stairs) {
    stats csv using (on('staircase', 'n')) nooutput
    n_hi = STATS_max
    stats csv using (on('staircase', 'time_us_median') / 1000.0) nooutput
    t_hi = STATS_max
    stats csv using (on('staircase', 'tflops')) nooutput
    f_hi = STATS_max
    stats csv using (on('staircase', 'units')) nooutput
    units = STATS_max
    stats csv using (on('staircase', 'blocks_per_unit')) nooutput
    per_unit = STATS_max
    stats csv using (on('staircase', 'm')) nooutput
    m_stairs = STATS_max
    stats csv using (on('staircase', 'k')) nooutput
    k_stairs = STATS_max
    stats csv using (on('staircase', 'tile_n')) nooutput
    tile_stairs = STATS_max
}
if (has_library) {
    stats csv using (on('library', 'tflops')) nooutput
    l_hi = STATS_max
    stats csv using (on('library', 'n')) nooutput
    l_n_lo = STATS_min
    l_n_hi = STATS_max
}
if (has_vocab) {
    vocab_variants = part_variants(run_files, 'vocab')
    stats csv using (on('vocab', 'm')) nooutput
    tokens = STATS_min
    # The speedups' spread, per run: runs from before rl_time_ratio's
    # columns draw without bars (zero-length: their median twice).
    eval optional_columns('vocab_spread', 'speedup_vs_v50257_lo speedup_vs_v50257_hi')
    speedup_lo(i) = in_run(vocab_spread_in, i) ? 'speedup_vs_v50257_lo' : 'speedup_vs_v50257'
    speedup_hi(i) = in_run(vocab_spread_in, i) ? 'speedup_vs_v50257_hi' : 'speedup_vs_v50257'
    spread_key(i, v) = run_key(i, 'variant', v, v . (in_run(vocab_spread_in, i) ? ' (q1-q3)' : ' (no spread in this CSV)'))
    stats csv using (on('vocab', speedup_hi(1))) nooutput
    pair_hi = exists('STATS_max') ? (STATS_max > 1 ? STATS_max : 1) : 1 # none timed: 1
    # The verdict's noise bar: a speedup inside 1 +- (bar - 1) is noise.
    bar_text = meta('vocab_bar')
    vocab_bar = bar_text eq '' ? NaN : real(word(bar_text, 1))
    have_bar = vocab_bar == vocab_bar
    bar_key = have_bar ? sprintf("verdict's noise bar (fwd+bwd): 1 +- %.3f", vocab_bar - 1) : ''
    bar_note = "no noise bar in this CSV (rerun exp-04)"
    # Karpathy's 1.25x: whole training on an A100, not this run's GEMMs.
    nanogpt = published_value('nanogpt_vocab_speedup')
    nanogpt_label = published(sprintf('%gx', nanogpt), published_source('nanogpt_vocab_speedup')) . \
        "\n" . published_what('nanogpt_vocab_speedup')
}

# An empty panel that says why it is empty.
not_run(why) = sprintf("set title '%s'; unset border; unset xtics; unset ytics; unset xlabel; \
    unset ylabel; unset key; set xrange [0:1]; set yrange [0:1]; plot -1 notitle; set key; \
    set border 3; set xtics nomirror out; set ytics nomirror out; set xlabel 'N (M and K fixed)'", why)

# ---- chart 1: the staircase ---------------------------------------------------
set output chart('')
set multiplot layout 1, 2 title verdict_title('Can one more column of tiles cost a whole wave?', \
    'wave_step_own_kernel')
set key top left
set yrange [0:*]
set xrange [0:*]
set xlabel 'N (M and K fixed)'

if (has_stairs) {
    set title sprintf("This device: own tiled kernel, %dx%d tiles\nM = %d, K = %d; a wave = %d %s x %d = %d tiles", \
        tile_stairs, tile_stairs, m_stairs, k_stairs, units, units_name, per_unit, units * per_unit)
    set ylabel 'time per GEMM (ms)'
    set yrange [0:t_hi * 1.4]
    set xrange [0:n_hi * 1.02]
    plot \
        csv using 'n':(on('staircase', 'wave_end') == 1 ? t_hi * 1.4 : NaN) \
            with impulses dt 3 lc rgb '#999999' title 'model: end of a wave', \
        csv using 'n':(on('staircase', 'model_time_us') / 1000.0) \
            with steps dt 2 lw 2 lc rgb model_color title 'model: waves x time of one wave', \
        for [i=1:nruns] run(i) using 'n':(on('staircase', 'time_us_median') / 1000.0): \
            (on('staircase', 'time_us_q1') / 1000.0):(on('staircase', 'time_us_q3') / 1000.0) \
            with yerrorlines lt 1 dt run_dt(i) pt 7 ps 0.7 title key(i, 'measured (q1-q3)')
} else {
    eval not_run('This device: staircase not run (--part)')
}

set title "Model: NVIDIA's example, M = 2304, K = 4096\n256x128 tiles, one block per SM"
set ylabel 'time (waves)'
set xrange [0:4700]
set yrange [0:4.6]
set ytics 1
set label 1 "N = 1536: 108 tiles, 1 wave\nN = 1544: 117 tiles, 2 waves" at 1950, 0.5 left font ',10'
set arrow 1 from 1940, 0.55 to 1560, 1.5 lc rgb model_color
plot \
    csv using 'n':(model(108, 'waves')) with steps dt 2 lw 2 lt 2 \
        title 'model: 108 SMs (A100)', \
    csv using 'n':(model(132, 'waves')) with steps dt 4 lw 2 lt 3 \
        title 'model: 132 SMs (H100, H200)'
unset label 1
unset arrow 1
set ytics autofreq
unset multiplot

# ---- chart 2: the same as TFLOP/s, a sawtooth -----------------------------------
set output chart('-tflops')
# The library's verdict where cuBLAS ran, else the own kernel's (the left panel).
set multiplot layout 1, 2 title verdict_title('As a rate: does TFLOP/s fall one step past each wave?', \
    has_library ? 'wave_step_library' : 'wave_step_own_kernel')
set key top left
if (has_stairs) {
    set title sprintf("This device: own tiled kernel, M = %d, K = %d", m_stairs, k_stairs)
    set ylabel 'TFLOP/s'
    set xrange [0:n_hi * 1.02]
    set yrange [0:f_hi * 1.5]
    plot \
        csv using 'n':(on('staircase', 'wave_end') == 1 ? f_hi * 1.5 : NaN) \
            with impulses dt 3 lc rgb '#999999' title 'model: end of a wave', \
        csv using 'n':(on('staircase', 'flops') / on('staircase', 'model_time_us') / 1e6) \
            with lines dt 2 lw 2 lc rgb model_color title 'model: flops / (waves x time of one wave)', \
        for [i=1:nruns] run(i) using 'n':(on('staircase', 'tflops')): \
            (rate_lo(on('staircase', 'tflops'))):(rate_hi(on('staircase', 'tflops'))) \
            with yerrorlines lt 1 dt run_dt(i) pt 7 ps 0.7 title key(i, 'measured (q1-q3)')
} else {
    eval not_run('This device: staircase not run (--part)')
}

if (has_library) {
    set xrange [l_n_lo - 64 : l_n_hi + 64]
    set yrange [0:l_hi * 1.5]
    set title "cuBLAS, FP16 in, FP32 accumulate: NVIDIA's example\nM = 2304, K = 4096, N in steps of 8 (64 outside a full run)"
    plot \
        csv using 'n':(on('library', 'wave_end') == 1 ? l_hi * 1.5 : NaN) \
            with impulses dt 3 lc rgb '#999999' title 'model: end of a wave (256x128 tiles)', \
        for [i=1:nruns] run(i) using 'n':(on('library', 'tflops')): \
            (rate_lo(on('library', 'tflops'))):(rate_hi(on('library', 'tflops'))) \
            with yerrorlines lt 2 dt run_dt(i) pt 7 ps 0.4 title key(i, 'cuBLAS, measured (q1-q3)')
} else {
    # Two short lines: the title of one panel of two must fit half the width.
    set title "No GPU, so no cuBLAS: NVIDIA's example, modelled\nthe SMs' busy share of the time (TFLOP/s follows it)"
    set ylabel 'tiles / (waves x SMs)'
    set xrange [0:4700]
    set yrange [0:1.4]
    plot \
        csv using 'n':(model(108, 'wave_efficiency')) with steps dt 2 lw 1.5 lt 2 \
            title 'model: 108 SMs (A100)', \
        csv using 'n':(model(132, 'wave_efficiency')) with steps dt 4 lw 1.5 lt 3 \
            title 'model: 132 SMs (H100, H200)'
}
unset multiplot

# ---- chart 3: the vocabulary ---------------------------------------------------
if (has_vocab) {
    set output chart('-vocab')
    set multiplot layout 1, 2 title verdict_title("GPT-2's output layer: is vocabulary 50304 = 64 x 786 faster than 50257?", \
        'vocab_padding')
    set title sprintf("Forward, logits = X W^T, %d tokens x 768 hidden", tokens)
    set xlabel 'vocabulary size V'
    set ylabel 'speedup over V = 50257 (x)'
    set xrange [50230:50378]
    set yrange [*:*]
    set xtics 50240, 32
    set key inside top right font ',10'
    set offsets 0, 0, graph 0.35, graph 0.05  # room for the key above the points
    fwd(variant, c) = (strcol('part') eq 'vocab' && strcol('gemm') eq 'forward' && strcol('variant') eq variant) ? column(c) : NaN
    divides8(v) = v - 8 * floor(v / 8.0) == 0
    mult8(variant) = divides8(fwd(variant, 'vocab')) ? fwd(variant, 'speedup_vs_v50257') : NaN
    # A colour per variant; its points open, and filled on multiples of 8.
    vlt(v) = word_index(vocab_variants, v)
    open_pt(v) = 2 + 2 * vlt(v)
    set arrow 2 from 50240, graph 0 to 50240, graph 1 nohead dt 3 lc rgb '#999999'
    set arrow 3 from 50304, graph 0 to 50304, graph 1 nohead dt 3 lc rgb '#999999'
    set arrow 4 from 50368, graph 0 to 50368, graph 1 nohead dt 3 lc rgb '#999999'
    set label 2 '64 x 786' at 50304, graph 0.04 left offset 0.5, 0 font ',10' tc rgb '#666666'
    set label 3 'GPT-2' at 50257, graph 0.04 left offset 0.5, 0 font ',10' tc rgb '#666666'
    plot \
        '+' using 1:(2 - vocab_bar):(vocab_bar) with filledcurves lc rgb band_color title bar_key, \
        1 with lines dt 3 lc rgb '#bbbbbb' title (have_bar ? '' : bar_note), \
        for [v in vocab_variants] for [i=1:nruns] run(i) using 'vocab':(fwd(v, 'speedup_vs_v50257')): \
            (fwd(v, speedup_lo(i))):(fwd(v, speedup_hi(i))) \
            with yerrorlines lt vlt(v) dt run_dt(i) pt open_pt(v) title spread_key(i, v) noenhanced, \
        for [v in vocab_variants] for [i=1:nruns] run(i) using 'vocab':(mult8(v)) \
            with points lt vlt(v) pt open_pt(v) + 1 notitle, \
        NaN with points lt 8 pt 7 title 'filled: V a multiple of 8'
    unset arrow 2
    unset arrow 3
    unset arrow 4
    unset label 2
    unset label 3
    set xtics autofreq
    set offsets 0, 0, 0, 0
    set bmargin 5

    # The pair, GEMM by GEMM: boxes at 0, 1, 2, one per variant side by side,
    # each with its q1-q3 bar (vectors: error bars leave a gap at the median).
    gemm_x(g) = g eq 'forward' ? 0 : g eq 'backward_data' ? 1 : g eq 'backward_weight' ? 2 : NaN
    box_w = 0.7 / words(vocab_variants)
    box_dx(v) = (vlt(v) - (words(vocab_variants) + 1) / 2.0) * box_w
    pair(variant, dx) = (strcol('part') eq 'vocab' && strcol('variant') eq variant && column('vocab') == 50304) ? gemm_x(strcol('gemm')) + dx : NaN
    set title 'V = 50304 against 50257, GEMM by GEMM'
    set xlabel ''
    set ylabel 'speedup of the padded size (x)'
    set xrange [-0.6:2.6]
    top = pair_hi > nanogpt ? pair_hi : nanogpt
    top = have_bar && vocab_bar > top ? vocab_bar : top
    set yrange [0:top * 1.45]
    set label 5 nanogpt_label at -0.55, nanogpt left offset 0, 1.3 font ',9' tc rgb published_color front
    set xtics ("forward" 0, "backward\ndata" 1, "backward\nweight" 2)
    set style fill solid 0.7 border -1
    set boxwidth box_w
    set key inside top right
    plot \
        '+' using 1:(2 - vocab_bar):(vocab_bar) with filledcurves lc rgb band_color notitle, \
        1 with lines dt 3 lc rgb '#bbbbbb' notitle, \
        nanogpt with lines lw 2 lc rgb published_color notitle, \
        for [v in vocab_variants] for [i=1:nruns] run(i) using (pair(v, box_dx(v))):'speedup_vs_v50257' \
            with boxes lt vlt(v) title spread_key(i, v) noenhanced, \
        for [v in vocab_variants] for [i=1:nruns] run(i) using (pair(v, box_dx(v))):(column(speedup_lo(i))): \
            (0):(column(speedup_hi(i)) - column(speedup_lo(i))) \
            with vectors heads size screen 0.006, 90 lc rgb '#000000' notitle
    unset label 5
    unset multiplot
}
