# make mountain's chart, drawn from results/<label>/bandwidth.csv only
# (plots/style.gp first; build/mountain writes the file from the ceilings,
# and passes it as csv and its header as meta_1_<key>).
#
#   mountain: the read bandwidth over footprints (read_gbps_best against
#             footprint_bytes), the band from the worst to the best of its trials,
#             with the cache sizes the machine reports (dashed, grey) and
#             the capacities the curve's knees give the levels (solid):
#             where the curve leaves each level's plateau (harness/curve.c).
#
# Where the two disagree the knees are what the run judged points by
# (levels_source says which levels are measured).

stats csv using 'footprint_bytes' nooutput
first_bytes = STATS_min
last_bytes = STATS_max
stats csv using 'read_gbps_best' nooutput
top_gbps = STATS_max
# The range takes in every reported size too: the VM whose reported L3
# lies beyond its curve (a 260 MiB L3 that reads 134 MiB at DRAM speed)
# is the case the marks are for.
levels = backend eq 'cuda' ? 'L2' : 'L1 L2 LLC'
do for [lv in levels] {
    rep = meta(sprintf('level_%s_bytes_reported', lv))
    if (rep ne '' && real(rep) > last_bytes) {
        last_bytes = real(rep)
    }
}

# "16 KiB", "4 MiB", "1 GiB"
size_text(b) = b >= 2**30 ? sprintf('%.3g GiB', b / 2**30) : \
               b >= 2**20 ? sprintf('%.3g MiB', b / 2**20) : sprintf('%.3g KiB', b / 2**10)
set logscale x 2
set xrange [first_bytes / 1.3 : last_bytes * 1.3]
set xtics () nomirror
do for [e = 10:40] {
    if (2**e >= first_bytes / 1.3 && 2**e <= last_bytes * 1.3) {
        set xtics add (size_text(2**e) 2**e)
    }
}
set xtics rotate by -30
set xlabel 'footprint (all threads together)'
set ylabel 'read bandwidth (GB/s)'
# Room above the curve for the key: a curve falls to the right.
set yrange [0 : top_gbps * 1.45]

# One vertical line per level: where the machine reports it ends, and where
# the curve shows it does, each named at its foot (left and right of its
# line). GPU levels: the L2 is the last-level cache.
reported_color = '#777777'
measured_color = '#D55E00'
tag = 0
do for [lv in levels] {
    rep = meta(sprintf('level_%s_bytes_reported', lv))
    got = meta(sprintf('level_%s_bytes_measured', lv))
    if (rep ne '') {
        tag = tag + 1
        set arrow tag from real(rep), graph 0 to real(rep), graph 1 nohead dt 2 lw 1.2 lc rgb reported_color back
        set label tag sprintf('%s reported %s', lv, size_text(real(rep))) at real(rep), graph 0.03 \
            rotate by 90 left offset -0.8, 0 font small_font tc rgb reported_color
    }
    if (got ne '') {
        tag = tag + 1
        set arrow tag from real(got), graph 0 to real(got), graph 1 nohead dt 1 lw 2 lc rgb measured_color back
        set label tag sprintf('%s knee %s', lv, size_text(real(got))) at real(got), graph 0.03 \
            rotate by 90 left offset 1.6, 0 font small_font tc rgb measured_color
    }
}

trials = meta('trials')
trials_text = trials eq '' || trials eq '0' ? 'its trials' : trials . ' trials'
when = meta('date_utc')
source = meta('levels_source')
# The device is the CPU's model (or the GPU's name) in run_title.
set title sprintf("The memory mountain (stride 1): where does the read rate fall?\n{/*0.75 %s, measured %s}\n{/*0.75 the levels the run judges points by: %s}", \
    run_title, when eq '' ? 'at an unknown date' : when, source eq '' ? 'not in this file' : source)
set key top right opaque box

set output chart('')
plot csv using 'footprint_bytes':'read_gbps_worst':'read_gbps_best' with filledcurves \
         lc rgb band_color title sprintf('worst-best of %s', trials_text), \
     csv using 'footprint_bytes':'read_gbps_best' with linespoints lt 1 title 'read bandwidth, best trial', \
     NaN with lines dt 2 lw 1.2 lc rgb reported_color title 'cache size the machine reports', \
     NaN with lines dt 1 lw 2 lc rgb measured_color title "knee: the curve leaves a level's plateau"
