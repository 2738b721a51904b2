/*
 * A device's measured ceilings (engine/ceilings.h) in the cache: one record per
 * GPU, in the meta db, keyed by the device's name and UUID. Measured once, then
 * read by every run on that GPU; `gpubench info --measure` measures again.
 */
#ifndef GB_CACHE_CEILINGS_H
#define GB_CACHE_CEILINGS_H

#include "cache/cache.h"
#include "engine/ceilings.h"
#include "engine/device.h"

/* GB_ENOTFOUND when the cache holds none for this device; GB_ECACHE for a record
 * that does not read. */
int gb_cache_get_ceilings(gb_cache *cache, const gb_device_info *device, gb_ceilings *out,
                          gb_err *err);
int gb_cache_put_ceilings(gb_cache *cache, const gb_device_info *device, const gb_ceilings *c,
                          gb_err *err);

#endif
