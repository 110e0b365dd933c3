# Experiment 01's charts, drawn from exp-01.csv only (plots/style.gp first).
#
#   exp-01:        sweep a: the tool's reading, the units-busy view (GPM
#                  SM_UTIL, or the CPU's machine share) and the work done,
#                  against workers per unit (blocks per SM, threads per CPU)
#   exp-01-duty:   sweep b: the reading against the duty cycle measured from
#                  timestamps, 1 worker and the full device, with identity
#   exp-01-memory: sweep c: memory held vs memory busy, idle vs streaming

gpu = backend eq 'cuda'
reading = gpu ? 'nvidia-smi utilization.gpu' : 'busy time (top -H)'
units_view = gpu ? 'GPM SM_UTIL' : 'machine share (process CPU / CPUs)'
unit = gpu ? 'SM' : 'CPU'
worker = gpu ? 'block' : 'thread'

# Rows of one sweep and one variant; others give NaN and are skipped.
sel(sweep, variant, c) = (strcol('sweep') eq sweep && strcol('variant') eq variant) ? column(c) : NaN
pct(x) = 100.0 * x

# The variants of one sweep, in the order the run measured them: every one
# is drawn (kernels/busy.c's table), so a new one appears without editing
# this file.
variants_in(sweep) = system(sprintf("awk -F, '/^#/ {next} !s {for (i = 1; i <= NF; i++) {if ($i == \"sweep\") s = i; if ($i == \"variant\") v = i}; next} $s == \"%s\" && !seen[$v]++ {printf \"%%s \", $v}' '%s'", sweep, csv))
occupancy_variants = variants_in('a_occupancy')
memory_points = variants_in('c_memory')

# Which sweeps this file holds (a run may hold one), and their ranges.
in_sweep(s) = strcol('sweep') eq s ? 1 : 0
stats csv using (in_sweep('a_occupancy')) nooutput
has_a = STATS_sum > 0
stats csv using (in_sweep('b_duty')) nooutput
has_b = STATS_sum > 0
stats csv using (in_sweep('c_memory')) nooutput
has_c = STATS_sum > 0
stats csv using (in_sweep('a_occupancy') ? column('workers_per_unit') : 1e9) nooutput
x_lo = STATS_min
stats csv using (in_sweep('a_occupancy') ? column('workers_per_unit') : 0) nooutput
x_hi = STATS_max
stats csv using (in_sweep('b_duty') ? column('workers') : 0) nooutput
full_workers = STATS_max

# ---- chart 1: occupancy at full duty ---------------------------------------
set output chart('')
set title verdict_title(sprintf('Does %s read busy however little of the device works?', reading), \
    'one_worker_reads_busy')
if (has_a) {
    set logscale x 2
    set xrange [x_lo / 1.5 : x_hi * 1.5]
} else {
    set xrange [0.5:2]
}
set xlabel sprintf('%ss per %s (1 = one %s on every %s)', worker, unit, worker, unit)
set ylabel 'percent'
set yrange [0:115]
set ytics 0, 20, 100
set key outside right top vertical
# Each variant its colour: the reading solid, the units-busy view dash-dot;
# the work done (the compute variant's rows have it) in black.
vlt(v) = word_index(occupancy_variants, v)
view_dt(i) = i == 1 ? 4 : run_dt(i)
a_work(c) = strcol('sweep') eq 'a_occupancy' && strcol('work_fraction') ne '' ? column(c) : NaN
plot \
    100 * (x < 1 ? x : 1) with lines dt 2 lc rgb model_color title sprintf('model: share of %ss busy', unit), \
    for [v in occupancy_variants] for [i=1:nruns] run(i) using 'workers_per_unit':(sel('a_occupancy', v, 'util_pct')) \
        with linespoints lt vlt(v) dt run_dt(i) title key(i, reading.', '.v) noenhanced, \
    for [v in occupancy_variants] for [i=1:nruns] run(i) using 'workers_per_unit':(sel('a_occupancy', v, 'units_busy_pct')) \
        with linespoints lt vlt(v) pt 6 dt view_dt(i) title key(i, units_view.', '.v) noenhanced, \
    for [i=1:nruns] run(i) using 'workers_per_unit':(pct(a_work('work_fraction'))) \
        with linespoints lt 7 pt 9 dt run_dt(i) title key(i, 'work done, % of the full device')
unset logscale x

# ---- chart 2: the reading against the measured duty cycle -------------------
set output chart('-duty')
set title verdict_title('Does the reading follow the duty cycle, not the work?', 'tracks_duty_one_worker')
set xrange [-5:105]
set xtics 0, 20, 100
set xlabel sprintf('duty cycle measured from the %s timestamps (%%)', gpu ? 'kernels'' event' : 'bursts'' clock')
set ylabel sprintf('%s (%%)', reading)
set key inside top left
one(c) = (strcol('sweep') eq 'b_duty' && column('workers') == 1) ? column(c) : NaN
full(c) = (strcol('sweep') eq 'b_duty' && column('workers') == full_workers && full_workers > 1) ? column(c) : NaN
plot \
    x with lines dt 2 lc rgb model_color title 'model: reading = duty cycle', \
    x + 10 with lines dt 3 lc rgb '#bbbbbb' title 'model: +-10 points', \
    x - 10 with lines dt 3 lc rgb '#bbbbbb' notitle, \
    for [i=1:nruns] run(i) using (one('duty_measured_pct')):(one('util_pct')) \
        with linespoints lt 1 dt run_dt(i) title key(i, sprintf('1 %s', worker)), \
    for [i=1:nruns] run(i) using (full('duty_measured_pct')):(full('util_pct')) \
        with linespoints lt 2 dt run_dt(i) pt 6 title key(i, has_b ? sprintf('%d %ss (every %s)', full_workers, worker, unit) : 'full device')

# ---- chart 3: memory held vs memory busy ------------------------------------
set output chart('-memory')
set title verdict_title('Is memory held the same as memory busy?', 'memory_held_is_not_traffic')
# A pair of bars per point of sweep c, in the order measured: the idle
# allocation (memory held, no kernel) and each variant run at full duty.
nmem = words(memory_points) > 0 ? words(memory_points) : 1
set xrange [-0.7:nmem - 0.3]
mem_label(v) = v eq 'idle_allocation' ? 'large idle allocation' : sprintf('%s at full duty', v)
set xtics ()
do for [j=1:words(memory_points)] { set xtics add (mem_label(word(memory_points, j)) j - 1) }
set xlabel ''
set ylabel 'percent'
set yrange [0:115]
set style fill solid 0.7 border -1
set boxwidth 0.3 / nruns
set key inside top right
slot(i) = (i - 1) * 0.3 / nruns
idx(v) = word_index(memory_points, strcol(v)) - 1
mem(c) = strcol('sweep') eq 'c_memory' ? column(c) : NaN
busy_col = gpu ? 'util_mem_pct' : 'util_pct'
busy_title = gpu ? 'utilization.memory' : 'busy time (no utilization.memory on a CPU)'
plot \
    for [i=1:nruns] run(i) using (idx('variant') - 0.17 + slot(i)):(pct(mem('mem_used_bytes') / mem('mem_total_bytes'))) \
        with boxes lt 1 title key(i, gpu ? 'memory.used / memory.total' : 'resident set / RAM'), \
    for [i=1:nruns] run(i) using (idx('variant') + 0.17 + slot(i)):(mem(busy_col)) \
        with boxes lt 2 title key(i, busy_title)
