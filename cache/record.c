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

/* ---- the bests of a sharded run ---------------------------------------------- */

bool gb_best_record_whole(const gb_best_record *rec)
{
    return rec->shard_count <= 1 || rec->n_shards >= rec->shard_count;
}

bool gb_best_record_combinable(const gb_best_record *a, const gb_best_record *b)
{
    if (a->shard_count <= 1 || a->shard_count != b->shard_count || a->n_shards == 0 ||
        b->n_shards == 0 || strcmp(a->space_fp ? a->space_fp : "", b->space_fp ? b->space_fp : ""))
        return false;
    for (int i = 0, j = 0; i < a->n_shards && j < b->n_shards;) {
        if (a->shards[i] == b->shards[j]) return false;
        a->shards[i] < b->shards[j] ? i++ : j++;
    }
    return true;
}

static bool measured_cleanly(const gb_best_record *r)
{
    return !r->capped && !r->contended && r->n_throttled == 0;
}

/* A deep copy, through the record's own encoding. */
static int copy_best(const gb_best_record *src, gb_best_record *out)
{
    gb_err ignored;
    json_t *json = gb_best_record_to_json(src);
    int rc = json ? gb_best_record_from_json(json, out, &ignored) : GB_ENOMEM;
    json_decref(json);
    return rc == GB_OK ? GB_OK : GB_ENOMEM;
}

/* The two sorted, disjoint shard lists as one sorted list. */
static int *merge_shards(const gb_best_record *a, const gb_best_record *b)
{
    int *out = malloc((size_t)(a->n_shards + b->n_shards) * sizeof *out);
    int i = 0, j = 0, n = 0;
    while (out && (i < a->n_shards || j < b->n_shards))
        out[n++] = j >= b->n_shards || (i < a->n_shards && a->shards[i] < b->shards[j])
                       ? a->shards[i++]
                       : b->shards[j++];
    return out;
}

/* Whether a's configuration's canonical text ("BM=64,BN=128") sorts before b's:
 * what decides between equal medians, so that a merge gives the same best in
 * whatever order the shards come in. */
static bool config_first(const gb_best_record *a, const gb_best_record *b)
{
    gb_strbuf ta = GB_STRBUF_INIT, tb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&ta, &a->config, NULL, 0);
    gb_fields_append_canonical(&tb, &b->config, NULL, 0);
    bool first = strcmp(gb_sb_str(&ta), gb_sb_str(&tb)) <= 0;
    gb_sb_free(&ta);
    gb_sb_free(&tb);
    return first;
}

/* Which of two shards' bests is the fastest: one measured cleanly, then the
 * lower median. */
static bool first_wins(const gb_best_record *a, const gb_best_record *b)
{
    if (measured_cleanly(a) != measured_cleanly(b)) return measured_cleanly(a);
    if (a->stats.median != b->stats.median) return a->stats.median < b->stats.median;
    return config_first(a, b);
}

int gb_best_record_combine(const gb_best_record *a, const gb_best_record *b, gb_best_record *out)
{
    *out = (gb_best_record){0};
    const gb_best_record *win = first_wins(a, b) ? a : b;
    int *shards = merge_shards(a, b);
    if (!shards || copy_best(win, out) != GB_OK) {
        free(shards);
        gb_best_record_free(out);
        return GB_ENOMEM;
    }
    free(out->shards);
    out->shards = shards;
    out->n_shards = a->n_shards + b->n_shards;
    out->complete = a->complete && b->complete;
    out->n_rejected = a->n_rejected + b->n_rejected;
    out->n_timed = a->n_timed + b->n_timed;
    out->n_failed = a->n_failed + b->n_failed;
    out->budget_evals = a->budget_evals + b->budget_evals;
    out->when = a->when > b->when ? a->when : b->when;
    return GB_OK;
}
