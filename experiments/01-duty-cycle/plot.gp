# Experiment 01's charts, drawn from exp-01.csv only (plots/style.gp first).
#
#   exp-01:        sweep a: for each variant and worker count, the tool's
#                  reading, the units-busy view (GPM SM_UTIL, or the CPU's
#                  machine share) and the work done, side by side as bars
#   exp-01-duty:   sweep b: the reading against the duty cycle measured from
#                  timestamps, 1 worker and the full device, with identity
#   exp-01-memory: sweep c: memory held vs memory busy, idle vs streaming
#
# The spread drawn, all from the CSV: the duty cycle's lowest and highest
# 100 ms sub-window (duty_window_min/max_pct); the reading's, the
# units-busy view's and the work rate's lowest and highest window of the
# hold (*_window_min/max, work_fraction_lo/hi). A run that read its hold in
# windows says so ("# hold_windows:"), and then a CSV without those columns
# stops the chart; an older run, from before the hold was read in windows,
# is drawn without them and the key says so.

gpu = backend eq 'cuda'
reading = gpu ? 'nvidia-smi utilization.gpu' : 'busy time (top -H)'
units_view = gpu ? 'GPM SM_UTIL' : 'machine share (process CPU / CPUs)'
unit = gpu ? 'SM' : 'CPU'
worker = gpu ? 'block' : 'thread'

eval require_columns('duty_measured_pct duty_window_min_pct duty_window_max_pct util_pct units_busy_pct')
window_columns = 'util_window_min_pct util_window_max_pct units_busy_window_min_pct units_busy_window_max_pct ' . \
    'util_mem_window_min_pct util_mem_window_max_pct work_per_s_window_min work_per_s_window_max ' . \
    'work_fraction_lo work_fraction_hi'
# Whether run i read its hold in windows: then its spread columns are required.
array windowed[nruns]
do for [i = 1:nruns] {
    windowed[i] = run_has(i, 'hold_windows')
    if (windowed[i]) {
        m = missing_columns(run(i), window_columns)
        if (m ne '') { exit error sprintf('%s: no column %s (a chart draws its spread from the CSV: the hold''s windows; rerun the experiment to write them)', run(i), m) }
    }
}
spread_note(what) = windowed[1] ? what : 'no spread in this CSV (read in one window)'

in_sweep(s) = strcol('sweep') eq s ? 1 : 0
pct(x) = 100.0 * x
# A column that may be empty on this row (a compute-only or bandwidth-only
# value): NaN there.
maybe(c) = strcol(c) eq '' ? NaN : column(c)
# A value's spread from run i's columns, or the value itself where run i
# has none (an older run): bars of zero length.
lo_of(i, v, c) = windowed[i] ? maybe(c) : v
hi_of(i, v, c) = windowed[i] ? maybe(c) : v

# Which sweeps this file holds (a run may hold one).
stats csv using (in_sweep('b_duty')) nooutput
has_b = STATS_sum > 0
stats csv using (in_sweep('b_duty') ? column('workers') : 0) nooutput
full_workers = STATS_max
# The device's units (SMs, CPUs): workers over workers per unit, on any row.
stats csv using (column('workers') / column('workers_per_unit')) nooutput
units = STATS_max
dram_read = roof_best('DRAM', 'read')  # GB/s: what a chase's traffic is measured against

# Where a bar's label goes: above the bar and its error bar.
above(v, hi) = hi > v ? hi : v
# A label above a bar: its value, "0" too, so that a zero bar is seen.
value_label(v) = v != v ? '' : v == 0 ? '0' : v < 1 ? sprintf('%.2g', v) : v < 10 ? sprintf('%.1f', v) : sprintf('%.0f', v)
set style fill solid 0.75 border -1
set errorbars lc rgb '#000000'

# ---- chart 1: the reading beside the work, per variant and worker count ----------
# One group of bars per row of sweep a, in the order the first run
# measured them, then the rows only later runs have (an overlay draws
# every run's variants): the reading, the units-busy view, and what the
# row did: the compute variant's work against the full device's, or a
# chase's memory traffic against the DRAM read bandwidth.
set output chart('')
set title verdict_title(sprintf('Does %s read busy however little of the device works?', reading), \
    'one_worker_reads_busy')
# Each variant:workers of sweep a, once, in the order measured (every run's).
# (Joined with '.', not sprintf: see values_in in plots/style.gp.)
row_keys = query(run_files . " columns variant,workers --join : --where sweep=a_occupancy --distinct --words")
nrows = words(row_keys)
row_index(v, w) = word_index(row_keys, sprintf('%s:%d', v, w)) - 1
slot_w = 0.8 / (3 * nruns)
# The x of bar kind k (0 reading, 1 units-busy view, 2 work) of run i.
slot_x(k, i) = row_index(strcol('variant'), column('workers')) - 0.4 + (k * nruns + i - 0.5) * slot_w
a_row(v) = strcol('sweep') eq 'a_occupancy' && row_index(strcol('variant'), column('workers')) >= 0 ? v : NaN
set xrange [-0.6 : (nrows > 0 ? nrows : 1) - 0.4]
set xtics () nomirror scale 0
# Tick labels: the workers, after the variant's name on the first of its
# rows (the name as it is spelled: literal() keeps its underscores).
do for [j = 1:nrows] {
    rk = word(row_keys, j)
    cut = strstrt(rk, ':')
    rv = rk[1:cut - 1]
    first = j == 1 ? 1 : strstrt(word(row_keys, j - 1), rv . ':') != 1
    set xtics add (literal(first ? sprintf('%s: %s', rv, rk[cut + 1:]) : rk[cut + 1:]) j - 1)
}
set xlabel sprintf('%ss running the variant (the device: %.0f %ss)', worker, units, unit)
set ylabel 'percent'
set yrange [0:119]
set ytics 0, 20, 100
set grid noxtics ytics
# The key under the axis's name, one entry a line: a bottom margin for both.
key_rows = 4 * nruns + 1
set bmargin 3 + 1.25 * key_rows  # an entry is 1.1 lines high, and the box
set key at screen 0.5, screen 0.01 center bottom Left reverse vertical maxrows key_rows
set boxwidth slot_w absolute
work_pct(i) = pct(maybe('work_fraction'))
work_lo(i) = pct(lo_of(i, maybe('work_fraction'), 'work_fraction_lo'))
work_hi(i) = pct(hi_of(i, maybe('work_fraction'), 'work_fraction_hi'))
# A chase: the bytes it moved per second, against the DRAM read bandwidth;
# its spread is that of its hop rate over the windows.
chase_pct(i) = strcol('work_fraction') ne '' || strcol('gbps') eq '' ? NaN : 100 * column('gbps') / dram_read
chase_lo(i) = chase_pct(i) * lo_of(i, column('work_per_s'), 'work_per_s_window_min') / column('work_per_s')
chase_hi(i) = chase_pct(i) * hi_of(i, column('work_per_s'), 'work_per_s_window_max') / column('work_per_s')
plot \
    for [i=1:nruns] run(i) using (slot_x(0, i)):(a_row(column('util_pct'))):(lo_of(i, column('util_pct'), 'util_window_min_pct')):(hi_of(i, column('util_pct'), 'util_window_max_pct')):(slot_w) \
        with boxerrorbars lt 1 fs solid (i == 1 ? 0.75 : 0.35) title key(i, reading), \
    for [i=1:nruns] run(i) using (slot_x(1, i)):(a_row(column('units_busy_pct'))):(lo_of(i, column('units_busy_pct'), 'units_busy_window_min_pct')):(hi_of(i, column('units_busy_pct'), 'units_busy_window_max_pct')):(slot_w) \
        with boxerrorbars lt 6 fs solid (i == 1 ? 0.75 : 0.35) title key(i, units_view) noenhanced, \
    for [i=1:nruns] run(i) using (slot_x(2, i)):(a_row(work_pct(i))):(work_lo(i)):(work_hi(i)):(slot_w) \
        with boxerrorbars lt 2 fs solid (i == 1 ? 0.75 : 0.35) title key(i, 'work done, % of the full device''s (the sweep''s most work per second)'), \
    for [i=1:nruns] run(i) using (slot_x(2, i)):(a_row(chase_pct(i))):(chase_lo(i)):(chase_hi(i)):(slot_w) \
        with boxerrorbars lt 3 fs pattern 4 title key(i, 'memory traffic, % of the DRAM read bandwidth (chase)'), \
    run(1) using (slot_x(2, 1)):(a_row(above(work_pct(1), work_hi(1)))):(value_label(a_row(work_pct(1)))) \
        with labels offset 0, 0.7 font ',9' notitle, \
    run(1) using (slot_x(2, 1)):(a_row(above(chase_pct(1), chase_hi(1)))):(value_label(a_row(chase_pct(1)))) \
        with labels offset 0, 0.7 font ',9' notitle, \
    NaN with lines lc rgb '#000000' title spread_note('error bars: lowest-highest window of the hold')
set grid xtics ytics

# ---- chart 2: the reading against the measured duty cycle -------------------
set output chart('-duty')
set bmargin
set title verdict_title('Does the reading follow the duty cycle, not the work?', 'tracks_duty_one_worker')
set xrange [-5:105]
set xtics 0, 20, 100 scale default
set xlabel sprintf('duty cycle measured from the %s timestamps (%%)', gpu ? 'kernels'' event' : 'bursts'' clock')
set ylabel sprintf('%s (%%)', reading)
set yrange [0:115]
# Top left: above the +10 line, where a reading never goes.
set key inside top left vertical maxrows 3 + 2 * nruns + 2
one(c) = (strcol('sweep') eq 'b_duty' && column('workers') == 1) ? column(c) : NaN
full(c) = (strcol('sweep') eq 'b_duty' && column('workers') == full_workers && full_workers > 1) ? column(c) : NaN
util_lo(i) = lo_of(i, column('util_pct'), 'util_window_min_pct')
util_hi(i) = hi_of(i, column('util_pct'), 'util_window_max_pct')
plot \
    x with lines dt 2 lc rgb model_color title 'model: reading = duty cycle', \
    x + 10 with lines dt 3 lc rgb '#bbbbbb' title 'model: +-10 points', \
    x - 10 with lines dt 3 lc rgb '#bbbbbb' notitle, \
    for [i=1:nruns] run(i) using (one('duty_measured_pct')):(one('util_pct')):(column('duty_window_min_pct')):(column('duty_window_max_pct')):(util_lo(i)):(util_hi(i)) \
        with xyerrorlines lt 1 dt run_dt(i) title key(i, sprintf('1 %s', worker)), \
    for [i=1:nruns] run(i) using (full('duty_measured_pct')):(full('util_pct')):(column('duty_window_min_pct')):(column('duty_window_max_pct')):(util_lo(i)):(util_hi(i)) \
        with xyerrorlines lt 2 dt run_dt(i) pt 6 title key(i, has_b ? sprintf('%d %ss (every %s)', full_workers, worker, unit) : 'full device'), \
    NaN with lines lc rgb '#000000' title 'x bars: lowest-highest 100 ms of the duty cycle', \
    NaN with lines lc rgb '#000000' title spread_note('y bars: lowest-highest window of the reading')

# ---- chart 3: memory held vs memory busy ------------------------------------
set output chart('-memory')
set title verdict_title('Is memory held the same as memory busy?', 'memory_held_is_not_traffic')
# A pair of bars per point of sweep c, in the order measured (every run's,
# in an overlay): the idle allocation (memory held, no kernel: its duty
# target is 0) and each variant run at full duty.
memory_points = query(run_files . " columns variant --where sweep=c_memory --distinct --words")
nmem = words(memory_points) > 0 ? words(memory_points) : 1
set xrange [-0.7:nmem - 0.3]
is_idle_row(v) = (strcol('sweep') eq 'c_memory' && strcol('variant') eq v && column('duty_target_pct') == 0) ? 1 : 0
set xtics () nomirror scale 0
do for [j=1:words(memory_points)] {
    mv = word(memory_points, j)
    eval count_rows('idle_rows', 'is_idle_row(mv)')
    set xtics add (literal(idle_rows > 0 ? 'large idle allocation' : sprintf('%s at full duty', mv)) j - 1)
}
set xlabel ''
set ylabel 'percent'
set yrange [0:130]  # room for the key above the bars
set grid noxtics ytics
set boxwidth 0.3 / nruns absolute
set key inside top left
slot(i) = (i - 1) * 0.3 / nruns
idx(v) = word_index(memory_points, strcol(v)) - 1
mem(c) = strcol('sweep') eq 'c_memory' ? column(c) : NaN
held_pct(i) = pct(mem('mem_used_bytes') / mem('mem_total_bytes'))
busy_col = gpu ? 'util_mem_pct' : 'util_pct'
busy_lo_col = gpu ? 'util_mem_window_min_pct' : 'util_window_min_pct'
busy_hi_col = gpu ? 'util_mem_window_max_pct' : 'util_window_max_pct'
busy_title = gpu ? 'utilization.memory' : 'busy time (no utilization.memory on a CPU)'
busy_x(i) = idx('variant') + 0.17 + slot(i)
# A bar of height 0 draws nothing: a dot of its colour on the axis marks it.
zero(v) = v == 0 ? 0 : NaN
plot \
    for [i=1:nruns] run(i) using (idx('variant') - 0.17 + slot(i)):(held_pct(i)):(0.3 / nruns) \
        with boxes lt 1 fs solid (i == 1 ? 0.75 : 0.35) \
        title key(i, (gpu ? 'memory.used / memory.total' : 'resident set / RAM') . ' (largest seen: a level, no spread)'), \
    for [i=1:nruns] run(i) using (busy_x(i)):(mem(busy_col)):(lo_of(i, column(busy_col), busy_lo_col)):(hi_of(i, column(busy_col), busy_hi_col)):(0.3 / nruns) \
        with boxerrorbars lt 2 fs solid (i == 1 ? 0.75 : 0.35) title key(i, busy_title), \
    for [i=1:nruns] run(i) using (idx('variant') - 0.17 + slot(i)):(zero(held_pct(i))) with points lt 1 pt 7 ps 1.3 notitle, \
    for [i=1:nruns] run(i) using (busy_x(i)):(zero(mem(busy_col))) with points lt 2 pt 7 ps 1.3 notitle, \
    for [i=1:nruns] run(i) using (idx('variant') - 0.17 + slot(i)):(held_pct(i)):(sprintf('%s %%', value_label(held_pct(i)))) \
        with labels offset 0, 0.8 font ',10' notitle, \
    for [i=1:nruns] run(i) using (busy_x(i)):(above(mem(busy_col), hi_of(i, column(busy_col), busy_hi_col))):(sprintf('%s %%', value_label(mem(busy_col)))) \
        with labels offset 0, 0.8 font ',10' notitle, \
    NaN with lines lc rgb '#000000' title spread_note('error bars: lowest-highest window of the hold')
