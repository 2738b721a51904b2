/*
 * A scratch cache for the fuzz targets that store what they decode (`cache load`
 * and the Kernel Tuner importer): in /dev/shm where it exists, so LMDB's syncs cost
 * nothing, and started afresh every so many inputs so that it stays small.
 */
#ifndef GB_FUZZ_STORE_H
#define GB_FUZZ_STORE_H

#include "cache/cache.h"

/* The scratch cache for the next input; aborts (a finding) when it cannot be made. */
gb_cache *gb_fuzz_store(void);

#endif
