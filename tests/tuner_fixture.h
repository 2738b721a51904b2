/* The fixture of the tuner's tests (test_tuner.c, test_tuner_share.c): the tuning
 * loop runs against a fake GPU backend whose behaviour each test sets per variant,
 * on a kernel whose one parameter V picks the variant. Compiles are real (NVRTC);
 * the cache is a scratch one in a fresh folder. The names are the ones the tests
 * were written with (fixture, setup, tune, count, ...): only these two programs
 * link tuner_fixture.c, so they need no prefix. */
#ifndef GB_TESTS_TUNER_FIXTURE_H
#define GB_TESTS_TUNER_FIXTURE_H

#include "cache/cache.h"
#include "cache/record.h"
#include "exec/exec.h"
#include "tuner/tune.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The kernel's source: k<V> for V in the space (V=7 does not compile) and the
 * reference ref. */
extern const char SOURCE[];

typedef struct fake {
    int opens, closes, problems, references, trials;
    double median_ms[16];       /* by V; 0 means "wrong" unless listed below */
    gb_trial_status status[16]; /* by V */
    int fault_v;                /* the trial of this V faults (the backend is lost) */
    bool reference_faults;
    uint64_t last_seed;
    gb_check_spec last_check;
    int hang_v;            /* the trial of this V never returns (the tuner is then killed) */
    int interrupt_v;       /* the trial of this V asks for an interrupt, as Ctrl-C would */
    double timeouts[16];   /* the watchdog's deadline each V was given */
    int ran[16];           /* how often each V was run */
    int races, raced;      /* races run, and how many variants the last one had */
    double first_close_ms; /* when the backend was first closed (gb_now_ms) */
    double race_ms[16];    /* what the race measures for V (0: as screened) */
    bool race_fails;
    int contended_trials[16]; /* V's next this many trials see another process (-1: all) */
    int contended_races;      /* the next this many races do (-1: all) */
    int ordinal;              /* the GPU it poses as (its uuid ends in it) */
    int sms;                  /* 0: 7 */
    int trial_ms;             /* each trial takes this long */
} fake;

/* Trials running in all fakes at once now, and the most seen (several GPUs). */
extern int fake_running, fake_most_running;

#define FAKE_UUID "GPU-fa4e0000-0000-4000-8000-000000000007"

/* The backend's operations over a fake (the fixture's own, or a copy in a child
 * process); destroying the backend leaves the fake alone. */
extern const gb_backend_ops fake_ops;

typedef struct hooks_ctx {
    int reject_v;       /* the constraint drops this V */
    bool args_fail;     /* the args hook reports a script error */
    int n_outputs_seen; /* check outputs the tuner resolved, via trial */
} hooks_ctx;

typedef struct fixture {
    char dir[64];
    char leases[96]; /* $GPUBENCH_LEASE_DIR */
    pid_t holder;    /* a child process holding the GPU's lease, or 0 */
    gb_cache *cache;
    fake fake;
    gb_exec *exec;
    hooks_ctx hooks;
    gb_kernel_def kernel;
    gb_kernel_def reference;
    gb_tuner_opts opts;
    gb_fields shapes[2];
    bool baseline; /* tune() asks for the reference's timing too */
    gb_tune_result result;
    gb_err err;
} fixture;

/* Adds an int parameter with these values to space. */
void add_param(gb_space *space, const char *name, const int *values, int n);

/* cmocka setup: a fresh folder with a cache and $GPUBENCH_LEASE_DIR in it; the
 * fake, where V=2 and V=8 are fastest (a tie), V=3 is wrong and V=4 fails to
 * launch; the kernel over V = 1..8, V=5 rejected by its constraint and V=7 not
 * compiling, with its reference; 2 compile jobs, seed 7; shapes M=64 and M=128.
 * teardown kills a lease holder left running and removes the folder. */
int setup(void **state);
int teardown(void **state);

/* Tunes the first n_shapes shapes into f->result (freeing the previous one);
 * f->err says why it failed. */
int tune(fixture *f, int n_shapes);

/* How many records one of the cache's databases holds. */
size_t count(fixture *f, gb_cache_db db);

/* Trials the fake ran, over every V. */
int count_trials(fixture *f);

/* Reads V's trial record for the first shape of the last result. */
int read_trial_of(fixture *f, int V, gb_trial_record *out);
/* Reads the best record of the first shape; out_key (may be NULL) gets its key. */
int read_best_of(fixture *f, gb_best_record *out, gb_key *out_key);

#endif
