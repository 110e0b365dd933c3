# plots/style.gp -- the look every rooflab chart shares.
#
# Loaded before each experiment's plot.gp, with these variables set by the
# harness: csv (the data file), outbase (path without extension), fmt (png,
# pdf or svg), device, backend, label, root (the source tree), rooflab (the
# rooflab command: query, below), every run's metadata (meta_<i>_<key>,
# below), and for overlays runs / run_names.
#
# Conventions: measurements are points joined by solid lines; models are
# dashed lines and say "model" in their key entry.

set datafile separator comma
set datafile commentschars '#'
# NaN marks rows a series skips; lines connect across them.
set datafile missing NaN

if (fmt eq 'png') {
    set terminal pngcairo size 1100,700 enhanced font 'DejaVu Sans,12' linewidth 1.5
} else {
    if (fmt eq 'pdf') {
        set terminal pdfcairo size 7in,4.5in enhanced font 'DejaVu Sans,9' linewidth 1.5
    } else {
        set terminal svg size 1100,700 enhanced font 'DejaVu Sans,12' linewidth 1.5 background '#ffffff'
    }
}

# Notes and long keys a step smaller than the terminal's font (set above
# per format: 'font "DejaVu Sans,9"'; word() drops the quotes).
term_font = word(GPVAL_TERMOPTIONS[strstrt(GPVAL_TERMOPTIONS, 'font ') + 5:], 1)
small_font = sprintf(',%g', 0.8 * real(term_font[strstrt(term_font, ',') + 1:]))

# Where a chart goes: chart('') is outbase.fmt, chart('-chain') outbase-chain.fmt.
chart(suffix) = outbase . suffix . '.' . fmt

# The CSVs' metadata ("# key: value" lines), read by the harness (its one
# reader, harness/table.c) and passed as meta_<i>_<key> for run i, 1 being
# the run drawn: run_meta(i, key) is a value, '' when absent, run_has(i, key)
# whether run i has the key at all; meta(key) is the run drawn's.
if (!exists('meta_runs')) {
    exit error 'style.gp: no metadata variables (meta_<i>_<key>): charts are drawn by the harness (build/exp-NN --plot-only, build/rooflab compare), which passes them'
}
if (!exists('rooflab')) {
    exit error 'style.gp: no rooflab variable (the rooflab command, which reads the CSVs for a chart): charts are drawn by the harness (build/exp-NN --plot-only, build/rooflab compare), which passes it'
}
# `rooflab query ARGS`: the one reader of a CSV's columns and rows for a
# chart (rooflab query --help), as the harness reads them (harness/table.c:
# quoted fields, long lines); never awk or sed. Paths go single-quoted.
query(args) = system("'" . rooflab . "' query " . args)
run_has(i, key) = exists(sprintf('meta_%d_%s', i, key))
run_meta(i, key) = run_has(i, key) ? value(sprintf('meta_%d_%s', i, key)) : ''
meta(key) = run_meta(1, key)
# The first run's value that has the key, '' when none has: what a run
# says of a variant (its role_ and key_ lines) where only a later run has it.
meta_from(i, key) = i > nruns ? '' : run_has(i, key) ? run_meta(i, key) : meta_from(i + 1, key)
any_meta(key) = meta_from(1, key)

# One subtitle for every chart: which run this is, or which runs are compared.
run_title = sprintf('%s backend: %s (label %s)', backend, device, label)
if (exists('runs_title') && runs_title ne '') run_title = runs_title

# What this run found about the claim a chart draws, from its verdicts (the
# harness passes claim_<id>, verdict_<id>, reason_<id> and kind_<id> for
# every verdict in verdicts.csv beside the CSV): claim_line(id) states the
# claim under test and its predicted range, run_line(id) the verdict and
# what was measured, reason_line(id) the note's first clause. A chart
# without them says so.
has_verdict(id) = exists('verdict_' . id)
# The verdict's kind, classified by the harness: 'holds', 'does not hold',
# 'premise not met' or 'not measured' ('' without a verdict). A chart that
# tests a verdict tests this, never the verdict's words.
verdict_kind(id) = exists('kind_' . id) ? value('kind_' . id) : ''
# (The id is not printed: its underscores would read as subscripts.)
claim_line(id) = has_verdict(id) ? 'claim: ' . value('claim_' . id) : 'claim: not judged in this CSV'
# A premise not met was measured, but the claim was not judged: said so,
# apart from a claim that does not hold.
run_line(id) = has_verdict(id) ? 'this run: ' . value('verdict_' . id) . \
    (verdict_kind(id) eq 'premise not met' ? ', claim not judged' : '') : \
    'this run: no verdict (none in a verdicts.csv beside the CSV)'
reason_line(id) = has_verdict(id) ? value('reason_' . id) : ''
# A title: the claim under test as a question, then claim, verdict, reason
# and run, one short line each (they must fit a PDF's 9-point width too).
verdict_title(question, id) = sprintf("%s\n{/*0.75 %s}\n{/*0.75 %s}\n{/*0.75 %s}\n{/*0.75 %s}", \
    question, claim_line(id), run_line(id), reason_line(id), run_title)

# Okabe-Ito colours, distinguishable with the common colour-vision deficiencies.
set linetype 1 lc rgb '#0072B2' pt 7 ps 1.0
set linetype 2 lc rgb '#D55E00' pt 5 ps 1.0
set linetype 3 lc rgb '#009E73' pt 9 ps 1.1
set linetype 4 lc rgb '#CC79A7' pt 11 ps 1.1
set linetype 5 lc rgb '#E69F00' pt 13 ps 1.1
set linetype 6 lc rgb '#56B4E9' pt 4 ps 1.0
set linetype 7 lc rgb '#000000' pt 6 ps 1.0
set linetype 8 lc rgb '#999999' pt 8 ps 1.0
set linetype cycle 8
model_color = '#555555'

set grid xtics ytics lc rgb '#e5e5e5' lw 1 dt 1
set border 3 lc rgb '#444444'
set tics nomirror out
set key top left box opaque samplen 2.5 spacing 1.1
set tics textcolor rgb '#333333'

# Overlays: runs is a space-separated list of CSV files, the run being
# drawn first (a reference run or runs to compare after it), run_names
# their labels. A plot script draws each measured series once per run,
# `plot for [i=1:nruns] run(i) using ... dt run_dt(i) title key(i, 'series')`;
# models and axis ranges come from the first run.
if (!exists('runs')) runs = csv
if (!exists('run_names')) run_names = label
nruns = words(runs)
run(i) = word(runs, i)
# With one run a key entry is the series; with several, the run comes first.
key(i, series) = nruns == 1 ? series : sprintf('%s: %s', word(run_names, i), series)
# The first run solid, the others dashed, each its own way.
run_dt(i) = i == 1 ? 1 : i

# A column's value on rows where the string column key equals val, else
# NaN (gnuplot skips NaN points), for picking one series out of a tidy CSV.
pick(key, val, c) = (strcol(key) eq val) ? column(c) : NaN

# The distinct values of a column in CSV files (a list of single-quoted
# paths), in the order they first appear, space-separated: charts draw
# every variant a run measured, so a new variant appears on them without
# editing a plot script. Each file finds the column in its own header.
# (Joined with '.', not sprintf: gnuplot 5.4's sprintf repeats part of a
# format with two '%%' in it once an argument is long, as a list of paths
# is: sprintf('%%s:%%s %s', long) gives '%s:%s:%s ...'.)
values_in(files, name) = query(files . " columns '" . name . "' --distinct --words")
column_values(file, name) = values_in(sprintf("'%s'", file), name)
# Every run's CSV, single-quoted, for a command that reads them all.
run_files = ''
do for [rf_i = 1:nruns] { run_files = run_files . sprintf(" '%s'", run(rf_i)) }
# The values of a column over every run: the first run's in its order,
# then those only later runs have. An overlay draws this union, so that a
# variant only one run measured (the student's new one) is drawn for it.
union_values(name) = values_in(run_files, name)
# `eval count_rows('var', 'expr')` sets var to the number of rows, over
# every run, on which expr (of the row: strcol, column) is non-zero: a
# series is drawn when any run has it.
count_rows(var, expr) = sprintf("%s = 0; do for [cr_i = 1:nruns] { stats run(cr_i) using (%s) nooutput; %s = %s + STATS_sum }", var, expr, var, var)
# Whether run i has a row whose column name holds val.
run_has_value(i, name, val) = word_index(column_values(run(i), name), val) > 0
# A key entry for run i's series of one value (a variant) of column name:
# none for a run that did not measure it, so that a variant only one run
# has is named for that run alone. (With one run there is nothing to
# check: every value drawn is its own.)
run_key(i, name, val, series) = nruns == 1 || run_has_value(i, name, val) ? key(i, series) : ''
# text as enhanced text prints it, character for character (each of
# _ ^ { } @ & ~ \ escaped): a variant's name in a key or a tick label
# drawn as enhanced text, whose underscore would otherwise start a
# subscript.
literal(text) = strlen(text) == 0 ? '' : \
    (strstrt('_^{}@&~\', text[1:1]) > 0 ? '\' : '') . text[1:1] . literal(text[2:])
# The position of w in a space-separated list (0 when absent): a line type.
word_index(list, w) = sum [i = 1:words(list)] (word(list, i) eq w ? i : 0)

# ---- Spread -----------------------------------------------------------------
# Every measured series is drawn with its spread: the q1-q3 of its samples'
# times, as error bars (yerrorlines: x:y:low:high) or a band. A chart names
# the columns its spread comes from with `eval require_columns('...')`; a
# run's CSV without one of them stops the chart with an error naming it: a
# chart without its spread would look surer than the run was.
# missing_columns(file, names): those of the space-separated names that file
# lacks, space-separated ('' when it has them all).
missing_columns(file, names) = query("'" . file . "' has-columns " . names)
has_columns(file, names) = missing_columns(file, names) eq ''
require_columns(names) = sprintf("do for [req_i = 1:nruns] { req_m = missing_columns(run(req_i), '%s'); if (req_m ne '') { exit error sprintf('%%s: no column %%s (a chart draws its spread from the CSV: q1-q3 bars; rerun the experiment to write them)', run(req_i), req_m) } }", names)

# Columns a run may lack because it was written before they existed (a
# ratio's _lo/_hi): `eval optional_columns('ratio_spread', 'a_lo a_hi')` sets
# ratio_spread_in, a word per run ('1' where it has them; in_run(list, i)
# reads it), and ratio_spread_missing, the runs without them named for the
# chart's note ('' when none): such a run draws without those bars.
optional_columns(var, names) = sprintf("%s_in = ''; %s_missing = ''; do for [oc_i = 1:nruns] { oc_has = has_columns(run(oc_i), '%s'); %s_in = %s_in . (oc_has ? '1 ' : '0 '); if (!oc_has) { %s_missing = %s_missing . (%s_missing eq '' ? '' : ', ') . (nruns == 1 ? 'this run' : word(run_names, oc_i)) } }", var, var, names, var, var, var, var, var)
in_run(list, i) = word(list, i) eq '1'

# A value derived from a row's median time, at the ends of the time's q1-q3:
# a rate (GB/s, TFLOP/s, tokens/s) is lowest at the slow quartile q3, a time
# or a time-like value (us per kernel) at q1.
rate_lo(v) = v * column('time_us_median') / column('time_us_q3')
rate_hi(v) = v * column('time_us_median') / column('time_us_q1')
time_lo(v) = v * column('time_us_q1') / column('time_us_median')
time_hi(v) = v * column('time_us_q3') / column('time_us_median')
# A ratio of two rows' times (column name, and name_lo / name_hi written by
# the harness's rl_time_ratio: both times at opposite ends of their q1-q3).
ratio_lo(name) = column(name . '_lo')
ratio_hi(name) = column(name . '_hi')

# ---- Ceilings as bands ------------------------------------------------------
# A measured ceiling is the best of its trials; the CSV's metadata holds
# best, worst and probe size per rung ("# roof_DRAM_triad_gbps: best worst
# bytes"). Charts draw the rung as a band from worst to best: the run's own
# spread of the ceiling, not one number.
roof_word(level, pattern, i) = word(meta(sprintf('roof_%s_%s_gbps', level, pattern)), i)
roof_best(level, pattern) = roof_word(level, pattern, 1) eq '' ? NaN : real(roof_word(level, pattern, 1))
roof_worst(level, pattern) = roof_word(level, pattern, 2) eq '' ? NaN : real(roof_word(level, pattern, 2))
band_color = '#dddddd'

# ---- Published numbers ------------------------------------------------------
# A number from a source (a datasheet, a blog, llama.cpp's table) drawn on a
# chart is never a measurement of this run: its key entry or label says so.
published(what, source) = sprintf('%s (published, another machine: %s)', what, source)
published_color = '#7f3f98'
# The seeds' numbers, from results/published/figures.csv (id,value,unit,
# what,source,ref): published_value('ridge_h100_sxm') is 295, published_what()
# and published_source() its text, for a label that names it.
if (!exists('root')) root = '.'
published_file = root . '/results/published/figures.csv'
# Part of the tree, like the scripts: a copy without it is told so plainly,
# not with a chart that fails on a series of NaN.
if (system(sprintf("test -r '%s' && printf y", published_file)) ne 'y') {
    exit error sprintf('%s not found: the charts draw the published numbers from results/published/ (copy it with the tree)', published_file)
}
# The column named field of the row whose id column is id in a CSV of
# results/published/; '' when the id is missing.
published_row_field(file, id, field) = query("'" . file . "' columns '" . field . "' --where 'id=" . id . "'")
published_field(id, field) = published_row_field(published_file, id, field)
# NaN (nothing drawn) when the id is missing.
published_value(id) = published_field(id, 'value') eq '' ? NaN : real(published_field(id, 'value'))
published_what(id) = published_field(id, 'what')
published_source(id) = published_field(id, 'source')
# The works they come from, results/published/references.csv (id,
# experiments,short,text: the paper's bibliography): reference_short(id) is
# the name a chart's label gives one, '' when it has none.
references_file = root . '/results/published/references.csv'
reference_short(id) = published_row_field(references_file, id, 'short')
