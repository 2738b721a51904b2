/*
 * Whether the GPU tests can run: a CUDA driver loads and shows at least one
 * device. The tests that need one skip() otherwise.
 */
#ifndef GB_TESTS_GPU_PRESENT_H
#define GB_TESTS_GPU_PRESENT_H

#include <stdbool.h>

bool gpu_present(void);

#endif
