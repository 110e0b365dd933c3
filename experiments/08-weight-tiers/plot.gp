# Experiment 08's charts, drawn from exp-08.csv only (plots/style.gp first).
#
#   exp-08:     spill: t/t0 against f, the sequential and overlapped
#               variants beside their models (r measured at each f)
#   exp-08-moe: MoE: at batch 1 the step time against the active bytes;
#               over the batch t(B)/t(1) against the touched-experts curve

is(col, val) = strcol(col) eq val
in_part(part, variant, c) = (is('part', part) && is('variant', variant)) ? column(c) : NaN
# The variants by their roles (the CSV's role_spill_* and role_moe_* lines), never by name.
seq = any_meta('role_spill_sequential')
ovl = any_meta('role_spill_overlapped')
active = any_meta('role_moe_active')
dense = any_meta('role_moe_dense')

# ---- chart 1: spill -----------------------------------------------------------------
set output chart('')
set title verdict_title('Does a slow tier for f of the weights cost (1 - f) + f r?', 'spill_sequential_model')
set xlabel 'f, the fraction of the weights in the slow tier'
set ylabel 't / t0 (time per token over all-fast)'
set key top left font small_font
set xrange [0:0.55]
set yrange [0:*]
set samples 200
spill_variants = seq . ' ' . ovl
plot \
    for [i = 1:nruns] for [v in spill_variants] run(i) using (in_part('spill', v, 'f')):(in_part('spill', v, 't_over_t0')) \
        with linespoints title key(i, v . ' (measured)') noenhanced, \
    run(1) using (in_part('spill', seq, 'f')):(in_part('spill', seq, 'model_sequential')) \
        with lines dt 2 lw 2 lc rgb model_color title 'model, one tier after the other: (1 - f) + f r, r measured at each f', \
    run(1) using (in_part('spill', ovl, 'f')):(in_part('spill', ovl, 'model_overlapped')) \
        with lines dt 3 lw 2 lc rgb model_color title 'model, both at once: max(1 - f, f r), r measured at each f', \
    (1 - x) + 10 * x with lines dt 4 lc rgb published_color title "the articles' example (a model): r = 10, 1.9x at f = 0.1"
set autoscale xy

# ---- chart 2: MoE -----------------------------------------------------------------------
set output chart('-moe')
set multiplot layout 1, 2 title verdict_title('Does a MoE layer read only its active experts, and over a batch the touched ones?', \
                                              'moe_touched_curve_B4')
set key top left font small_font
set title 'batch 1: time against the active bytes'
set logscale xy
set xlabel 'weights read per step (MiB, counted)'
set ylabel 'time per step (us, median, q1-q3)'
# The roof measured beside the points (its group's read probe): bytes / roof.
stats run(1) using (is('part', 'moe_top_k') ? column('group_roof_gbps') : NaN) nooutput
moe_roof = STATS_max
plot \
    for [i = 1:nruns] for [v in active . ' ' . dense] run(i) \
        using (in_part('moe_top_k', v, 'bytes') / 1048576):(in_part('moe_top_k', v, 'time_us_median')): \
              (column('time_us_q1')):(column('time_us_q3')) with yerrorbars \
        title key(i, v eq active ? 'active experts, top-k = 1 .. 32' : 'dense: all E experts') noenhanced, \
    run(1) using (in_part('moe_top_k', active, 'bytes') / 1048576):(in_part('moe_top_k', active, 'time_us_median')): \
        (sprintf('k=%d', column('top_k'))) with labels offset 0, 1 font small_font notitle, \
    x * 1048576 / (moe_roof * 1e3) with lines dt 2 lc rgb model_color \
        title sprintf('bytes / the roof measured beside them (%.1f GB/s)', moe_roof)
unset logscale
set title 'top-k over the batch: t(B) / t(1)'
set logscale x 2
set xlabel 'batch B (tokens per step)'
set ylabel 't(B) / t(1)'
stats run(1) using (is('part', 'moe_batch') ? column('experts') : NaN) nooutput
E = STATS_max
stats run(1) using (is('part', 'moe_batch') ? column('top_k') : NaN) nooutput
K = STATS_max
touched(b) = E * (1 - (1 - K / E) ** b)
set xrange [0.8:80]
set yrange [0:1.8 * E / K]
plot \
    for [i = 1:nruns] for [r in 'uniform skewed'] run(i) \
        using (is('part', 'moe_batch') && is('variant', active) && is('routing', r) ? column('batch') : NaN):'t_over_t1' \
        with linespoints title key(i, r . ' routing (measured)'), \
    touched(x) / touched(1) with lines dt 2 lw 2 lc rgb model_color \
        title sprintf('model: touched(B) / touched(1), E = %d, k = %d', E, K) noenhanced, \
    x with lines dt 3 lc rgb '#999999' title 'B: no expert shared', \
    1 with lines dt 4 lc rgb '#999999' title '1: a dense layer'
unset multiplot
unset logscale
set autoscale xy
