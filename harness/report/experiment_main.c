/*
 * experiment_main.c -- rl_main, where an experiment's run meets its
 * charts: the core runs the experiment (rl_run, harness/run.c) and hands
 * the CSV it wrote to the plot driver given here. So the measurement core
 * calls nothing in the report layer, and a program built without this
 * file (a test's toy experiment, calling rl_run) simply draws no charts.
 */
#include "plot.h"

int rl_main(const rl_experiment *exp, int argc, char **argv)
{
    /* A program of its own, so it may run itself again (a test's rl_run
     * inside the test runner must not): backend_cpu.c says why. */
    rl_cpu_prepare_blas(argv);
    return rl_run(exp, argc, argv, &rl_gnuplot_charts);
}
