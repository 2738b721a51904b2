/* `gpubench replay FILE... --score` (cli/replay_score.c): the autotuning
 * methodology's score of each strategy on every table given and over them all. */
#ifndef GB_CLI_REPLAY_SCORE_H
#define GB_CLI_REPLAY_SCORE_H

#include "tuner/replay.h"

#include <stdbool.h>

typedef struct gb_replay_score_args {
    const char *prog;
    char *const *files;
    int n_files;
    const char *strategy; /* a strategy's name, or "all" */
    const gb_replay_select *sel;
    char *const *runs_files; /* --runs: other tools' searches of the FILEs */
    int n_runs_files;
    gb_score_opts opts;
    bool json;
} gb_replay_score_args;

/* Scores and prints; returns the exit status (0; 1 when a file is not a table, a
 * strategy failed or no space could be scored; 2 when a file cannot be read). */
int gb_replay_score(const gb_replay_score_args *a);

#endif
