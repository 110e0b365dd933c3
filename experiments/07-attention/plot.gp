# Experiment 07's charts, drawn from exp-07.csv only (plots/style.gp first).
#
#   exp-07:         the roofline: the weight GEMM's points move right with
#                   the batch, attention's stay at G FLOP/B
#   exp-07-prefill: bytes (counted) and time against n, fused and materialized
#   exp-07-share:   attention's share of the decode step against the batch

is(col, val) = strcol(col) eq val
# Rows of one phase, configuration and variant; others give NaN (skipped).
pick3(config, variant, c) = (is('config', config) && is('variant', variant)) ? column(c) : NaN
ridge_roof = meta('ceiling_tflops') eq '' ? NaN : real(meta('ceiling_tflops'))
dram_read = roof_best('DRAM', 'read')
# The variants by their roles (the CSV's role_attention_* lines), never by name.
decode_fused = any_meta('role_attention_decode_fused')
prefill_mat = any_meta('role_attention_prefill_materialized')
prefill_fused = any_meta('role_attention_prefill_fused')
prefill_variants = prefill_mat . ' ' . prefill_fused

# ---- chart 1: the roofline ----------------------------------------------------------
set output chart('')
set title verdict_title('At decode, does the batch move the matmul right and leave attention put?', \
                        'attention_ai_flat_GQA4')
set logscale xy
set xlabel 'arithmetic intensity (FLOP/B, counted)'
set ylabel 'TFLOP/s'
set key bottom right
# From below MHA's 1 FLOP/B to past the ridge and the largest batch's GEMM.
set xrange [0.5:*]
set samples 400
configs = 'MHA GQA4 GQA8'
# Published decode attention on an H100 (FlashAttention issue #1572: MHA,
# batch 16, 1 FLOP/B): drawn as points on a GPU run, whose axes they share;
# on the CPU, three orders of magnitude above its points, named in a note.
pub_ids = 'attn_decode_h100_mha_b16_128 attn_decode_h100_mha_b16_4k'
pub_gbps(j) = published_value(word(pub_ids, j))
pub_note = published(sprintf("decode attention on an H100, MHA at batch 16:\n%.0f GB/s (a cache of 128 tokens), %.0f GB/s (4k),\ni.e. %.2f and %.2f TFLOP/s at 1 FLOP/B", \
    pub_gbps(1), pub_gbps(2), pub_gbps(1) / 1000, pub_gbps(2) / 1000), published_source('attn_decode_h100_mha_b16_4k'))
set label 90 pub_note at graph 0.02, graph 0.95 left tc rgb published_color font small_font noenhanced
on_gpu = backend eq 'cuda'
plot \
    (x * dram_read / 1000 < ridge_roof ? x * dram_read / 1000 : ridge_roof) with lines lc rgb model_color \
        title sprintf('roofline: DRAM read %.0f GB/s, compute %.3f TFLOP/s (measured)', dram_read, ridge_roof), \
    for [i = 1:nruns] run(i) using (pick3('layer', strcol('variant'), 'ai')):(pick3('layer', strcol('variant'), 'tflops')) \
        with linespoints pt 7 title key(i, 'weight GEMM (Llama 3 8B layer), one point per B'), \
    run(1) using (pick3('layer', strcol('variant'), 'ai')):(pick3('layer', strcol('variant'), 'tflops')): \
        (sprintf('B = %d', column('batch'))) with labels offset 0, 1 font small_font notitle, \
    for [i = 1:nruns] for [c in configs] run(i) using (pick3(c, decode_fused, 'ai')):(pick3(c, decode_fused, 'tflops')) \
        with points pt 5 title key(i, 'attention (fused), ' . c . ', every B and L'), \
    for [j = 1:2] '+' using (1):(on_gpu && $0 == 0 ? pub_gbps(j) / 1000 : NaN) every ::0::0 \
        with points pt 12 ps 2 lc rgb published_color title (on_gpu && j == 1 ? 'H100 decode attention, MHA (published, another machine)' : '')
unset logscale
unset label 90
set autoscale x

# ---- chart 2: prefill, bytes and time against n ------------------------------------------
set output chart('-prefill')
set multiplot layout 1, 2 title verdict_title('At prefill, does fusion keep the n x n scores out of memory?', \
                                              'prefill_bytes_drop')
set logscale xy
set xlabel 'n (tokens)'
set xrange [256:16384]
set key bottom right font small_font
set title 'bytes per call (counted)'
set ylabel 'MB'
# The articles' figure, against this run's materialized bytes: traffic
# during attention 50 to 80 % lower once FlashAttention works.
drop_lo = published_value('attn_hbm_drop_low') / 100
drop_hi = published_value('attn_hbm_drop_high') / 100
plot for [i = 1:nruns] for [v in prefill_variants] run(i) \
    using (is('variant', v) ? column('ctx') : NaN):(column('bytes') / 1e6) with linespoints title key(i, v) noenhanced, \
    for [j = 1:2] run(1) using (is('variant', prefill_mat) ? column('ctx') : NaN): \
        (column('bytes') * (1 - (j == 1 ? drop_lo : drop_hi)) / 1e6) with lines dt 2 lc rgb published_color \
        title (j == 1 ? sprintf('%.0f-%.0f %% less (published: the articles)', 100 * drop_lo, 100 * drop_hi) : '') noenhanced
set title 'time per call (median, q1-q3)'
set ylabel 'ms'
plot for [i = 1:nruns] for [v in prefill_variants] run(i) \
    using (is('variant', v) ? column('ctx') : NaN):(column('time_us_median') / 1000): \
          (column('time_us_q1') / 1000):(column('time_us_q3') / 1000) with yerrorlines title key(i, v) noenhanced
unset multiplot
unset logscale
set autoscale x

# ---- chart 3: attention's share of the step -------------------------------------------
set output chart('-share')
set title verdict_title('Does attention take a growing share of the decode step as the batch grows?', \
                        'attention_share_grows')
set logscale x 2
set xlabel 'batch B'
set ylabel "attention's share of the step (GQA4 + Llama 3 8B layer)"
set yrange [0:*]
set key top left
contexts = query("'" . run(1) . "' columns ctx --where config=GQA4 --distinct --words")
plot for [i = 1:nruns] for [L in contexts] run(i) \
    using (pick3('GQA4', decode_fused, 'ctx') == real(L) ? column('batch') : NaN):'share_of_step' \
    with linespoints title key(i, 'L = ' . L)
