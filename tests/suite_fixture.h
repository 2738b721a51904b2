/* What the suite's group tests (test_suite_<group>.c) share: one scratch folder
 * per program, the current directory while its tests run, with one cubin cache in
 * it, so later tests reuse the compiles of earlier ones; the group's module
 * (examples/suite/<group>.lua); and gpubench-tune's last exit status and output. */
#ifndef GB_TESTS_SUITE_FIXTURE_H
#define GB_TESTS_SUITE_FIXTURE_H

#include "scratch.h"

enum { SUITE_OUT_BYTES = 1 << 18, SUITE_ERR_BYTES = 1 << 20 };

typedef struct suite_fixture {
    char dir[64];
    char cache[128];   /* dir/cache */
    char module[4096]; /* $GB_SOURCE_DIR/examples/suite/<group>.lua */
    int status;
    char *out; /* SUITE_OUT_BYTES */
    char *err; /* SUITE_ERR_BYTES */
} suite_fixture;

/* cmocka group setup and teardown; *state becomes the fixture. */
int suite_setup(void **state, const char *group);
int suite_teardown(void **state);

/* Runs gpubench-tune with the arguments (strings, NULL-terminated) and fails the
 * test when it could not run. */
#define suite_tune(f, ...)                                                                         \
    do {                                                                                           \
        (f)->status = scratch_tune((f)->dir, (f)->out, SUITE_OUT_BYTES, (f)->err, SUITE_ERR_BYTES, \
                                   __VA_ARGS__);                                                   \
        assert_true((f)->status >= 0);                                                             \
    } while (0)

/* Compiles a script for sm_90a on the fixture's cache, two jobs. */
#define suite_compile(f, script)                                                                   \
    suite_tune(f, script, "--compile-only", "--arch", "sm_90a", "--jobs", "2", "--cache",          \
               (f)->cache, (char *)NULL)

/* Writes text to the scratch folder as name and compiles it (suite_compile). */
void suite_compile_script(suite_fixture *f, const char *name, const char *text);

/* Compiles every entry of the group's module over the lists named in `lists`
 * (comma-separated: quick, full, irregular, nan), each entry's shapes in one gb.tune
 * call. */
void suite_compile_lists(suite_fixture *f, const char *lists);

/* The long sweeps (the irregular and nan lists: hundreds of layouts, each with its own
 * variants) compile a fixed quarter of each kernel's space, every shape of the lists
 * with it, unless GB_TEST_FULL is set and not 0 (scripts/gpu-validate.sh sets it):
 * `--shard` with this value. The quick lists, which every configuration is asserted
 * on, always compile whole. Keeps CI's two cores within its time. */
const char *suite_sweep_shard(void);

/* suite_compile_lists over suite_sweep_shard()'s part of each space. */
void suite_compile_lists_sampled(suite_fixture *f, const char *lists);

/* Fails naming the exit status and the end of stderr (the progress lines come
 * first, the error last) unless gpubench-tune exited 0. */
void suite_assert_exit_0(const suite_fixture *f);

/* Fails unless the output holds the n summary lines, in this order. */
void suite_assert_summaries(const suite_fixture *f, const char *const *summaries, size_t n);

/* What a compile table says: its rows (a configuration, or "-" for a reference, then
 * five numbers), how many of them spill, and the most local memory one uses. */
typedef struct suite_table {
    int rows, spilling;
    long most_local;
} suite_table;

suite_table suite_read_table(const char *out);

#endif
