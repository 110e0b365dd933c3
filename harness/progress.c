/*
 * progress.c -- one self-overwriting line on stderr while a long run
 * works, only when stderr is a terminal (logs and CI stay clean).
 */
#include "internal.h"
#include "rl_ctx_clock.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static bool shown;
static double started;

static bool enabled(void)
{
    static int tty = -1;
    if (tty < 0)
        tty = isatty(STDERR_FILENO);
    return tty;
}

void rl_progress_total(rl_ctx *ctx, int total)
{
    rl_ctx_clock *clock = rl_clock_room(ctx);
    clock->progress_total = total;
    clock->progress_done = 0;
    started = rl_now_s();
}

void rl_progress_step(rl_ctx *ctx, const char *fmt, ...)
{
    rl_ctx_clock *p = rl_clock_room(ctx);
    p->progress_done++;
    if (!enabled())
        return;
    char msg[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    double elapsed = rl_now_s() - started;
    fprintf(stderr, "\r\033[K[exp-%s %d/%d, %.0f s] %s", ctx->exp->id, p->progress_done,
            p->progress_total, elapsed, msg);
    fflush(stderr);
    shown = true;
}

void rl_progress_clear(void)
{
    if (shown && enabled()) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    shown = false;
}

void rl_progress_note(rl_ctx *ctx, const char *msg)
{
    if (!enabled())
        return;
    fprintf(stderr, "\r\033[K[exp-%s] %s", ctx->exp->id, msg);
    fflush(stderr);
    shown = true;
}
