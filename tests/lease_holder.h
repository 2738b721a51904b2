/*
 * Another process holding a GPU's lease, for test_lease and test_tuner_share: a
 * forked child takes the lease and keeps it until it is killed (or its parent
 * dies).
 */
#ifndef GB_TESTS_LEASE_HOLDER_H
#define GB_TESTS_LEASE_HOLDER_H

#include <sys/types.h>

/* Starts a child that takes the lease of name, saying it is doing activity, and
 * holds it until it is killed; returns its pid once it holds it. */
pid_t hold_lease_in_child(const char *name, const char *activity);

#endif
