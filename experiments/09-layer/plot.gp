# Experiment 09's charts, drawn from exp-09.csv only (plots/style.gp first).
#
#   exp-09:          where the layer's FLOPs and time go, by class of step:
#                    stacked bars per configuration, unfused and fused,
#                    training (forward and backward: BERT's, on the full
#                    sweep and the quick run) where it ran, and the published
#                    shares (Ivanov et al.: training on a V100)
#   exp-09-roofline: every step on this device's roofline, by class
#
# The bars read the first run only (an overlay of runs would stack bars of
# different machines); the roofline draws every run.

is(col, val) = strcol(col) eq val
classes = 'contraction normalization elementwise'
class_colors = '#1f77b4 #ff7f0e #2ca02c'
programs = 'unfused fused'
# Rows of the judged shape (the verdicts' own), of one program and class.
judged_row(c, prog, cls) = is('config', c) && is('program', prog) && is('class', cls) && column('judged') == 1
configs = column_values(run(1), 'config')

# ---- chart 1: shares by class ----------------------------------------------------------
set output chart('')
set title verdict_title('Do the steps that do no arithmetic take the time?', 'cheap_time_over_flops_bert')
set print $bars
bar = 0
published_bars = ''
do for [c in configs] {
    do for [prog in programs] {
        do for [q in 'flops time_us_median'] {
            total = 0
            do for [cls in classes] {
                stats run(1) using (judged_row(c, prog, cls) ? column(q) : 0) nooutput
                eval sprintf('part_%s = STATS_sum', cls)
                total = total + STATS_sum
            }
            what = q eq 'flops' ? 'FLOPs' : 'time'
            # no bar where the judged shape was not run (--max-bytes)
            if (total > 0) {
                print sprintf('"%s %s %s",%g,%g,%g', c, prog, what, 100 * part_contraction / total, \
                              100 * part_normalization / total, 100 * part_elementwise / total)
                bar = bar + 1
            }
        }
    }
}
# Training, where the run had the backward pass (BERT, its shape of most
# tokens): the unfused forward pass's steps and the backward pass's
# together, as the published shares are.
stats run(1) using (is('program', 'backward') ? column('batch') * column('seq') : 0) nooutput
train_tokens = STATS_max
stats run(1) using ((is('program', 'backward') && column('batch') * column('seq') == train_tokens) ? column('batch') : 0) nooutput
train_batch = STATS_max
train_seq = train_batch > 0 ? train_tokens / train_batch : 0
train_row(prog, cls) = is('config', 'bert-large') && column('batch') == train_batch && column('seq') == train_seq && \
                       is('program', prog) && is('class', cls)
if (train_seq > 0) {
    do for [q in 'flops time_us_median'] {
        total = 0
        do for [cls in classes] {
            stats run(1) using ((train_row('unfused', cls) || train_row('backward', cls)) ? column(q) : 0) nooutput
            eval sprintf('part_%s = STATS_sum', cls)
            total = total + STATS_sum
        }
        if (total > 0) {
            print sprintf('"bert-large %dx%d training %s",%g,%g,%g', train_batch, train_seq, q eq 'flops' ? 'FLOPs' : 'time', \
                          100 * part_contraction / total, 100 * part_normalization / total, 100 * part_elementwise / total)
            bar = bar + 1
        }
    }
}
do for [q in 'flops time'] {
    print sprintf('"V100 training (published) %s",%g,%g,%g', q eq 'flops' ? 'FLOPs' : 'time', \
                  published_value('ivanov_' . q . '_contraction'), published_value('ivanov_' . q . '_normalization'), \
                  published_value('ivanov_' . q . '_elementwise'))
    published_bars = published_bars . sprintf('%d ', bar)
    bar = bar + 1
}
set print
set style data histograms
set style histogram rowstacked
set style fill solid 0.85 border -1
set boxwidth 0.75
set yrange [0:100]
set ylabel 'share (%)'
set xtics rotate by -30 font small_font noenhanced
set key outside right top vertical
do for [j in published_bars] {
    set object (100 + j) rect from (j - 0.45), 0 to (j + 0.45), 100 fs empty border lc rgb published_color lw 3 front
}
set label 90 sprintf("purple: published,\nanother machine\n(%s:\nBERT-large's layer,\ntraining, a V100)", published_source('ivanov_time_contraction')) \
    at graph 1.03, graph 0.55 left tc rgb published_color font small_font noenhanced
# The cheap classes' share written above each bar: on a machine whose
# ridge is low they are slivers.
plot $bars using 2:xtic(1) title 'contraction' lc rgb word(class_colors, 1), \
     '' using 3 title 'normalization' lc rgb word(class_colors, 2), \
     '' using 4 title 'element-wise' lc rgb word(class_colors, 3), \
     '' using ($0):(100):(sprintf('%.2g %%', $3 + $4)) with labels offset 0, 0.7 font small_font notitle
unset object
unset label 90
unset xtics
set xtics
set autoscale y
set style fill empty

# ---- chart 2: every step on the roofline ------------------------------------------------
set output chart('-roofline')
set title verdict_title('Where does each step sit on this device''s roofline?', 'cheap_time_share_model_bert')
ridge_roof = meta('ceiling_tflops') eq '' ? NaN : real(meta('ceiling_tflops'))
dram_read = roof_best('DRAM', 'read')
set logscale xy
set xlabel 'arithmetic intensity (FLOP/B, counted)'
set ylabel 'TFLOP/s (median)'
set key inside top left font small_font
set samples 400
set xrange [0.05:2000]
roof_programs = train_seq > 0 ? programs . ' backward' : programs
step_row(cls, prog) = is('class', cls) && is('program', prog) && column('step_index') >= 0
plot (x * dram_read / 1000 < ridge_roof ? x * dram_read / 1000 : ridge_roof) with lines lc rgb model_color \
        title sprintf('roofline: DRAM read %.0f GB/s, compute %.3g TFLOP/s (measured at the start)', dram_read, ridge_roof), \
    for [i = 1:nruns] for [k = 1:3] for [prog in roof_programs] run(i) \
        using (step_row(word(classes, k), prog) ? column('ai') : NaN):(step_row(word(classes, k), prog) ? column('tflops') : NaN) \
        with points pt (prog eq 'fused' ? 6 : prog eq 'backward' ? 4 : 7) lc rgb word(class_colors, k) \
        title key(i, word(classes, k) . ', ' . prog) noenhanced
unset logscale
set autoscale x
