/*
 * Scratch folders for tests: each test makes its own under /tmp (mkdtemp) and
 * removes it, with all it holds, in its teardown.
 */
#ifndef GB_TESTS_SCRATCH_H
#define GB_TESTS_SCRATCH_H

/* Removes dir and everything below it (links are removed, never followed).
 * Returns 0, or -1 when something could not be removed. */
int scratch_remove(const char *dir);

#endif
