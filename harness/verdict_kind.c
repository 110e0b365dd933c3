/*
 * verdict_kind.c -- the verdict names: verdict.c writes them into
 * verdicts.csv, and every reader (the summary, the paper, the charts,
 * rooflab stability) reads them back through rl_verdict_kind, so that all
 * count the four kinds alike ("not measured (busy host)" as not measured). A file of its own: the rooflab command links
 * these two functions without the rest of the core (verdict.c pulls in the
 * run's context, and with it the backends and OpenBLAS).
 */
#include "internal.h"

#include <string.h>

const char *rl_verdict_name(rl_verdict_status s)
{
    switch (s) {
    case RL_HOLDS: return "holds";
    case RL_DOES_NOT_HOLD: return "does not hold";
    case RL_PREMISE_NOT_MET: return "premise not met";
    case RL_NOT_MEASURED_BUSY: return "not measured (busy host)";
    default: return "not measured";
    }
}

rl_verdict_status rl_verdict_kind(const char *verdict)
{
    /* The four kinds counted (RL_NOT_MEASURED_BUSY is not one of them). */
    for (rl_verdict_status s = RL_HOLDS; s <= RL_PREMISE_NOT_MET; s++)
        if (!strcmp(verdict, rl_verdict_name(s)))
            return s;
    /* "not measured" and its variants ("not measured (busy host)"), and
     * whatever else a file holds: a verdict nobody judged. */
    return RL_NOT_MEASURED;
}
