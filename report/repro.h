/*
 * Reproducibility measured: how much the result of a tuning run depends on the run.
 * The same tuning, run N times in fresh processes with fresh caches, gives N saved
 * runs (report/result.h); gb_repro_compute pairs their entries by (kernel, shape)
 * and says, per shape:
 *   - how often the winner changes: the distinct bests and the share of runs whose
 *     best is not the most frequent one (the modal winner);
 *   - the spread of the stored best: (max - min) / min of the runs' best medians;
 *   - the regret of each run: how much slower its winner is, as the OTHER runs
 *     measured it, than the fastest configuration by those same runs (below);
 *   - how steady "vs baseline" is: baseline median / best median, run by run;
 *   - the false alarms of `gpubench compare`: every pair of runs compared on the
 *     best's samples with compare's own statistics (report/compare/compare.h).
 * cli/repro_main.c reads the files and prints; docs/reproducibility.md is the
 * user's account of the same definitions.
 *
 * The time of configuration c in run r, t_r(c): the best's median (the race's)
 * when c is r's best, else the median of c's screening trial when it ended ok;
 * none otherwise. Regret of run i, whose best is c_i, with T_-i(c) the median of
 * t_r(c) over the runs r != i that measured c:
 *     regret_i = T_-i(c_i) / min over c of T_-i(c) - 1.
 * Both sides come from the same runs and none from run i, so the measurement that
 * chose c_i (lucky noise included) never judges it; the value is >= 0 and is 0 when
 * the other runs agree that c_i is the fastest. A run whose winner no other run
 * measured has no regret (NaN).
 */
#ifndef GB_REPORT_REPRO_H
#define GB_REPORT_REPRO_H

#include "base/error.h"
#include "report/compare/compare.h"
#include "report/result.h"

#include <stdbool.h>

/* A pair of runs in which compare called the best FASTER or SLOWER. */
typedef struct gb_repro_alarm {
    int old_run, new_run; /* run indexes, old_run < new_run */
    gb_verdict verdict;   /* GB_VERDICT_FASTER or GB_VERDICT_SLOWER */
    double ratio;         /* new median / old median */
    double p_value;
} gb_repro_alarm;

/* A configuration that was the best of at least one run. */
typedef struct gb_repro_winner {
    char *config; /* canonical text, "BK=8,BM=64" */
    int n_runs;   /* runs it won */
} gb_repro_winner;

/* One (kernel, shape) over the runs. Figures that cannot be had are NaN. */
typedef struct gb_repro_shape {
    char *kernel;
    char *key_text; /* "K=1024,M=1024,N=1024" */
    int n_present;  /* runs that hold the shape */
    int n_best;     /* of them, runs with a best */
    int n_cached;   /* of those, bests answered from a cache: not measured anew */

    gb_repro_winner *winners; /* distinct bests, in the order they first appear */
    int n_winners;
    int modal;         /* the most frequent (the first on a tie); -1 without a best */
    int *winner_of;    /* per run: index into winners, -1 for none */
    double flip_share; /* runs whose best is not the modal winner, over n_best */

    double best_min_ms, best_max_ms;
    double spread; /* (max - min) / min; NaN below 2 bests */

    double *regret_of; /* per run (relative: 0.01 is 1%) */
    int n_regret;      /* runs with a regret */
    double regret_max, regret_median;
    char *fastest;      /* the configuration with the smallest median over every run */
    double fastest_ms;  /* that median */
    int fastest_n_runs; /* the runs it was measured in */
    int n_configs;      /* distinct configurations measured in any run */

    int n_baseline;                  /* runs with a best and a baseline */
    double speedup_min, speedup_max; /* baseline median / best median */
    double speedup_spread;           /* (max - min) / min; NaN below 2 */

    int n_pairs; /* pairs of runs that both have a best */
    gb_repro_alarm *alarms;
    int n_alarms;
} gb_repro_shape;

typedef struct gb_repro {
    int n_runs;
    gb_compare_opts opts;   /* compare's, for the false alarms */
    gb_repro_shape *shapes; /* in the order they first appear in the runs */
    int n_shapes;
    int n_flipped;        /* shapes with more than one winner */
    double spread_max;    /* over the shapes */
    double regret_max;    /* over every (shape, run) with a regret */
    double regret_median; /* of the same */
    int n_run_pairs;      /* n_runs (n_runs - 1) / 2 */
    int n_alarmed_pairs;  /* pairs of runs with an alarm on any shape */
} gb_repro;

/* The figures above over runs[0..n_runs) (n_runs >= 2), read-only; opts are the
 * statistics of the false alarms (NULL: gb_compare_opts_default()). Entries of a
 * run with the same kernel and shape key as an earlier one of that run are left
 * out. GB_EINVAL for fewer than two runs, GB_ENOMEM; out is empty then. Free out
 * with gb_repro_free. */
int gb_repro_compute(const gb_report *runs, int n_runs, const gb_compare_opts *opts, gb_repro *out,
                     gb_err *err);

/* "kernel/shape": the name a shape's entries have in the runs, in buf. */
const char *gb_repro_shape_name(const gb_repro_shape *s, char *buf, size_t n);

/* Takes NULL and an empty result. */
void gb_repro_free(gb_repro *r);

#endif
