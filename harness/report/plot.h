/*
 * plot.h -- the plot driver (plot.c): an experiment's charts drawn with
 * gnuplot from CSV files only, for a run (rl_main, through rl_charts) and
 * for the comparison of runs (rooflab compare).
 */
#ifndef ROOFLAB_REPORT_PLOT_H
#define ROOFLAB_REPORT_PLOT_H

#include "internal.h"

/* Draws an experiment's charts from one or more runs' CSVs (the run drawn
 * first) into dir; runs_title says what is compared, or "". Without
 * gnuplot it draws nothing, says so once per process with later (the
 * command that draws them on a machine with gnuplot), and returns 0: the
 * CSVs are the result. -1 when gnuplot failed. */
int rl_draw(const char *exp_id, const char *exp_slug, const char *const *csvs,
            const char *const *names, int nruns, const char *dir, const char *runs_title,
            const char *later);

/* The same with any script: charts name.{png,pdf,svg} (and the suffixed
 * ones the script adds) into dir; slug picks the verdicts passed (those
 * of that experiment in a verdicts.csv beside the first CSV). */
int rl_draw_script(const char *script, const char *name, const char *slug,
                   const char *const *csvs, const char *const *names, int nruns, const char *dir,
                   const char *runs_title, const char *later);

/* The PNG charts the last draw moved into place, in the order it moved
 * them (NULL-terminated; none when it drew nothing, as without gnuplot):
 * what a caller reports as data (rooflab compare --charts-file), so that
 * no script reads them from the "charts" line printed for people. */
const char *const *rl_drawn_charts(void);

/* A run's charts, as the core's rl_charts, for rl_run: its CSV drawn into
 * plots_dir/label/, a reference run overlaid when there is one. */
extern const rl_charts rl_gnuplot_charts;

#endif
