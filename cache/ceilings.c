#include "cache/ceilings.h"

#include "cache/key.h"

#include <string.h>

/* The way ceilings are measured: a new way is measured again (2: the copy is the
 * best of the driver's and gpubench's kernel, where 1 was the driver's alone). */
#define CEILINGS_METHOD 2

static int ceilings_key(const gb_device_info *d, gb_key *out)
{
    gb_keybuf kb;
    gb_key_begin(&kb, "ceilings");
    gb_key_add_i64(&kb, CEILINGS_METHOD);
    gb_key_add_str(&kb, d->name);
    gb_key_add_str(&kb, d->uuid); /* the GPU, not its ordinal */
    return gb_key_finish(&kb, out);
}

int gb_cache_get_ceilings(gb_cache *cache, const gb_device_info *device, gb_ceilings *out,
                          gb_err *err)
{
    memset(out, 0, sizeof *out);
    gb_key key;
    json_t *json = NULL;
    if (ceilings_key(device, &key)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = gb_cache_get_json(cache, GB_DB_META, &key, &json, err);
    if (rc) return rc;
    rc = gb_wire_decode(&gb_wire_ceilings, json_object_get(json, "ceilings"), out, err);
    json_decref(json);
    if (rc)
        return gb_err_set(err, GB_ECACHE, "the ceilings of %s do not read: %s", device->name,
                          err->msg);
    return GB_OK;
}

int gb_cache_put_ceilings(gb_cache *cache, const gb_device_info *device, const gb_ceilings *c,
                          gb_err *err)
{
    gb_key key;
    if (ceilings_key(device, &key)) return gb_err_set(err, GB_ENOMEM, "out of memory");
    json_t *json = json_object();
    json_t *wire = gb_wire_encode(&gb_wire_ceilings, c);
    int rc = GB_OK;
    if (!json || !wire || json_object_set_new(json, "device", json_string(device->name)) ||
        json_object_set_new(json, "uuid", json_string(device->uuid)) ||
        json_object_set(json, "ceilings", wire))
        rc = gb_err_set(err, GB_ENOMEM, "out of memory");
    if (rc == GB_OK) rc = gb_cache_put_json(cache, GB_DB_META, &key, json, err);
    json_decref(wire);
    json_decref(json);
    return rc;
}
