# Experiment 06's charts, drawn from exp-06.csv only (plots/style.gp first).
#
#   exp-06:          time per kernel vs chain length K, for the "empty"
#                    kernel (1 thread, 1 element) and a 1-block kernel
#   exp-06-size:     time per kernel vs work per kernel n, at K = 20
#                    (log-log), with the floor (the chain in one launch)
#   exp-06-doubling: t(2b) / t(b) for the model step vs batch b, launched op
#                    by op and as a graph, with the 1.1 line

gpu = backend eq 'cuda'
way_title(w) = gpu ? ( \
    w eq 'sync_each' ? 'synchronize after each launch' : \
    w eq 'async' ? 'asynchronous launches, one synchronize' : \
    w eq 'graph' ? 'CUDA graph replay' : \
    w eq 'one_kernel' ? 'floor: the chain in one launch' : 'one thread does it all') : ( \
    w eq 'sync_each' ? 'a parallel region per kernel (fork/join)' : \
    w eq 'async' ? 'one region, a barrier per kernel' : \
    w eq 'graph' ? 'one region, no barriers' : \
    w eq 'one_kernel' ? 'floor: one region, k passes per thread' : 'serial loop, one thread')

# Colour per way; the floor dotted (a dash pattern in parentheses would be
# read as a custom pattern, hence functions).
lt_of(w) = w eq 'sync_each' ? 2 : w eq 'async' ? 1 : w eq 'graph' ? 3 : w eq 'one_kernel' ? 7 : 8
dt_of(w, i) = w eq 'one_kernel' ? 4 : run_dt(i)
sel(test, way, size, c) = (strcol('test') eq test && strcol('way') eq way && column('n') == size) ? column(c) : NaN
in_test(t) = strcol('test') eq t ? 1 : 0
stats csv using (in_test('chain')) nooutput
has_chain = STATS_sum > 0
stats csv using (in_test('size')) nooutput
has_size = STATS_sum > 0
stats csv using (in_test('doubling')) nooutput
has_doubling = STATS_sum > 0
stats csv using (in_test('size') ? column('k') : 0) nooutput
size_k = STATS_max

# A panel with nothing measured says so (gnuplot refuses an all-NaN plot).
empty = "set label 99 'not measured in this run' at graph 0.5, 0.5 center; plot 1 lc rgb '#ffffff' notitle; unset label 99"

set logscale y 10
set format y '%g'
set ylabel 'time per kernel (us)'
set key outside right top vertical

# ---- chart 1: per-kernel time vs chain length ----------------------------------
set output chart('')
set logscale x 10
set xlabel 'kernels in the chain (K)'
set multiplot title sprintf("A kernel launch costs more than a tiny kernel's work\n{/*0.8 %s}", run_title)
set tmargin screen 0.85
set bmargin screen 0.30
set key at screen 0.5, 0.17 center top horizontal maxrows 3 box opaque
do for [size in '1 256'] {
    s = int(size)
    set lmargin screen (s == 1 ? 0.10 : 0.58)
    set rmargin screen (s == 1 ? 0.47 : 0.96)
    set title s == 1 ? 'empty kernel: 1 thread, 1 element' : 'one block: 256 elements'
    if (s == 256) { unset key; unset ylabel }
    if (has_chain) {
        plot for [w in 'sync_each async graph one_kernel serial'] for [i=1:nruns] run(i) \
            using 'k':(sel('chain', w, s, 'us_per_kernel')) with linespoints \
            lt lt_of(w) dt dt_of(w, i) title (s == 1 ? key(i, way_title(w)) : '')
    } else {
        @empty
    }
}
unset multiplot
set key default
set key outside right top vertical box opaque samplen 2.5 spacing 1.1
set ylabel 'time per kernel (us)'
unset tmargin; unset bmargin; unset lmargin; unset rmargin

# ---- chart 2: per-kernel time vs work size -------------------------------------
set output chart('-size')
set title sprintf("Launch overhead stops mattering once a kernel has enough work (K = %d)\n{/*0.8 %s}", size_k, run_title)
set logscale x 2
set format x '2^{%L}'
set xlabel 'elements per kernel (n)'
seln(way, c) = (strcol('test') eq 'size' && strcol('way') eq way) ? column(c) : NaN
if (has_size) {
    plot for [w in 'sync_each async graph one_kernel'] for [i=1:nruns] run(i) \
        using 'n':(seln(w, 'us_per_kernel')) with linespoints \
        lt lt_of(w) dt dt_of(w, i) title key(i, way_title(w))
} else {
    @empty
}

# ---- chart 3: the doubling test ---------------------------------------------------
set output chart('-doubling')
set title sprintf("The doubling test: a step that barely slows when the batch doubles is overhead\n{/*0.8 %s}", run_title)
unset logscale y
set format y '%g'
set yrange [0:2.6]
set ylabel 't(2b) / t(b)'
set xlabel 'batch b (rows of width d)'
set key inside top left
seld(way) = (strcol('test') eq 'doubling' && strcol('way') eq way) ? column('doubling_ratio') : NaN
if (has_doubling) {
    plot \
        1.1 with lines dt 2 lc rgb model_color title 'threshold: 1.1, below it the step is overhead-bound', \
        2.0 with lines dt 3 lc rgb model_color title 'model: 2, time proportional to the batch', \
        for [i=1:nruns] run(i) using 'batch':(seld('launches')) with linespoints lt 1 dt run_dt(i) \
            title key(i, gpu ? 'launched op by op' : 'a parallel region per op'), \
        for [i=1:nruns] run(i) using 'batch':(seld('graph')) with linespoints lt 3 dt run_dt(i) pt 6 \
            title key(i, gpu ? 'captured as a CUDA graph' : 'one region per step')
} else {
    @empty
}
