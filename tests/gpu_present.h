/*
 * Whether the GPU tests can run, and the GPU to themselves while they do.
 *
 * gpu_present() says whether a CUDA driver loads and shows at least one device;
 * the tests that need one skip() otherwise. A test that times or runs kernels
 * calls gpu_lease_take() instead, before it first touches the GPU: it takes the
 * GPU's lease (exec/lease.h) as gpubench-tune does, waiting for as long as
 * another process holds it (saying once on stderr whom it waits for; ctest's
 * TIMEOUT bounds the wait), so that two test programs, or a test beside a
 * tuning run, take turns instead of failing or timing each other. The lease is
 * taken once and kept until the process exits.
 *
 * A test that starts gpubench-tune (or gpubench info) to measure must not hold
 * the lease: the child takes it itself, and would wait for its parent for ever.
 */
#ifndef GB_TESTS_GPU_PRESENT_H
#define GB_TESTS_GPU_PRESENT_H

#include <stdbool.h>

bool gpu_present(void);

/* gpu_present(), and then this process holds the lease of GPU 0 (the one the
 * tests open). A lease directory that cannot be used is warned about on stderr
 * and the tests go on without the lease, as gpubench-tune does. */
bool gpu_lease_take(void);

/* gpu_lease_take() for every GPU the driver shows, in order (the collectives run
 * on all of them). */
bool gpu_lease_take_all(void);

/* For a GPU test's setup: with a GPU, takes its lease and opens GPU 0 into *out;
 * without one, *out is NULL (the tests skip). Returns -1, having said why on
 * stderr, when the GPU is there but will not open; 0 otherwise. */
struct gb_gpu;
int gpu_session_open(struct gb_gpu **out);

#endif
