#include "cache/record.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int gb_record_id_copy(const gb_record_id *src, gb_record_id *out)
{
    *out = (gb_record_id){
        .kernel = strdup(src->kernel),
        .kernel_fp = strdup(src->kernel_fp),
        .device = strdup(src->device),
    };
    int rc = gb_fields_copy(&src->shape, &out->shape);
    if (rc || !out->kernel || !out->kernel_fp || !out->device) {
        gb_record_id_free(out);
        return GB_ENOMEM;
    }
    return GB_OK;
}

void gb_record_id_free(gb_record_id *id)
{
    if (!id) return;
    free(id->kernel);
    free(id->kernel_fp);
    free(id->device);
    gb_fields_free(&id->shape);
    memset(id, 0, sizeof *id);
}

bool gb_record_id_equal(const gb_record_id *a, const gb_record_id *b)
{
    return !strcmp(a->kernel, b->kernel) && !strcmp(a->kernel_fp, b->kernel_fp) &&
           !strcmp(a->device, b->device) && gb_fields_equal(&a->shape, &b->shape);
}

static void add_id(gb_keybuf *kb, const gb_record_id *id)
{
    gb_strbuf shape = GB_STRBUF_INIT;
    gb_fields_append_canonical(&shape, &id->shape, NULL, 0);
    gb_key_add_str(kb, id->kernel);
    gb_key_add_str(kb, id->kernel_fp);
    gb_key_add_str(kb, id->device);
    gb_key_add_str(kb, gb_sb_str(&shape));
    if (gb_sb_status(&shape)) kb->enc.failed = 1;
    gb_sb_free(&shape);
}

int gb_record_best_key(const gb_record_id *id, gb_key *out)
{
    gb_keybuf kb;
    gb_key_begin(&kb, "best");
    add_id(&kb, id);
    return gb_key_finish(&kb, out);
}

int gb_record_trial_key(const gb_record_id *id, const gb_fields *config, gb_key *out)
{
    gb_keybuf kb;
    gb_strbuf text = GB_STRBUF_INIT;
    gb_fields_append_canonical(&text, config, NULL, 0);
    gb_key_begin(&kb, "trial");
    add_id(&kb, id);
    gb_key_add_str(&kb, gb_sb_str(&text));
    if (gb_sb_status(&text)) kb.enc.failed = 1;
    gb_sb_free(&text);
    return gb_key_finish(&kb, out);
}

/* ---- the wire tables --------------------------------------------------- */

/* 1 to 64 of [A-Za-z0-9_.-]: a fingerprint. gpubench writes hex; a Kernel Tuner
 * import writes "kernel-tuner-" and a hash, or what --kernel-fp gave. */
static bool fingerprint(const char *s)
{
    size_t n = strlen(s);
    return n >= 1 && n <= 64 &&
           strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

static int id_finish(void *obj, const char *path, gb_err *err)
{
    const gb_record_id *id = obj;
    if (!id->kernel[0]) return gb_err_set(err, GB_EINVAL, "%s.kernel: expected a name", path);
    if (!fingerprint(id->kernel_fp))
        return gb_err_set(err, GB_EINVAL, "%s.kernel_fp: expected 1 to 64 of [A-Za-z0-9_.-]", path);
    if (!id->device[0])
        return gb_err_set(err, GB_EINVAL, "%s.device: expected a fingerprint", path);
    return GB_OK;
}

static int check_mode(const char *mode, const char *path, gb_err *err)
{
    if (strcmp(mode, "cold") == 0 || strcmp(mode, "hot") == 0) return GB_OK;
    return gb_err_set(err, GB_EINVAL, "%s.mode: expected one of cold, hot", path);
}

static int best_finish(void *obj, const char *path, gb_err *err)
{
    const gb_best_record *rec = obj;
    if (rec->space_fp[0] && !fingerprint(rec->space_fp))
        return gb_err_set(err, GB_EINVAL, "%s.space_fp: expected 1 to 64 of [A-Za-z0-9_.-]", path);
    return check_mode(rec->mode, path, err);
}

static int trial_finish(void *obj, const char *path, gb_err *err)
{
    return check_mode(((const gb_trial_record *)obj)->mode, path, err);
}

static bool trial_in_flight(const void *rec)
{
    return ((const gb_trial_record *)rec)->in_flight;
}

static bool trial_timed(const void *rec)
{
    return ((const gb_trial_record *)rec)->has_stats;
}

static bool trial_has_cubin(const void *rec)
{
    return ((const gb_trial_record *)rec)->cubin[0] != '\0';
}

#define GB_WIRE_T gb_record_id
GB_WIRE_TABLE(gb_wire_record_id, "record", GB_RECORD_ID_WIRE, id_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_record_source
GB_WIRE_TABLE(gb_wire_record_source, "source", GB_RECORD_SOURCE_WIRE, NULL)
#undef GB_WIRE_T
#define GB_WIRE_T gb_best_record
GB_WIRE_TABLE(gb_wire_best_record, "best_record", GB_BEST_RECORD_WIRE, best_finish)
#undef GB_WIRE_T
#define GB_WIRE_T gb_trial_record
GB_WIRE_TABLE(gb_wire_trial_record, "trial_record", GB_TRIAL_RECORD_WIRE, trial_finish)
#undef GB_WIRE_T

/* ---- JSON --------------------------------------------------------------- */

/* A record that does not read is a damaged cache entry, whoever reads it. */
static int read_record(const gb_wire_type *t, const json_t *json, void *out, gb_err *err)
{
    int rc = gb_wire_decode(t, json, out, err);
    if (rc == GB_EINVAL && err) err->code = GB_ECACHE;
    return rc == GB_EINVAL ? GB_ECACHE : rc;
}

json_t *gb_best_record_to_json(const gb_best_record *rec)
{
    return gb_wire_encode(&gb_wire_best_record, rec);
}

int gb_best_record_from_json(const json_t *json, gb_best_record *out, gb_err *err)
{
    return read_record(&gb_wire_best_record, json, out, err);
}

void gb_best_record_free(gb_best_record *rec)
{
    if (rec) gb_wire_free(&gb_wire_best_record, rec);
}

json_t *gb_trial_record_to_json(const gb_trial_record *rec)
{
    return gb_wire_encode(&gb_wire_trial_record, rec);
}

int gb_trial_record_from_json(const json_t *json, gb_trial_record *out, gb_err *err)
{
    return read_record(&gb_wire_trial_record, json, out, err);
}

void gb_trial_record_free(gb_trial_record *rec)
{
    if (rec) gb_wire_free(&gb_wire_trial_record, rec);
}
