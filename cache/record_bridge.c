/*
 * TEMPORARY: the jansson face of the record API, over today's gb_json/gb_jw one.
 *
 * The cache commands (cache/transfer.c, ktuner.c, inspect.c) use records only as
 * jansson values, through the four functions below. Until base/json.c is replaced by
 * jansson, they convert through JSON text. When record.c gains these functions
 * itself, delete this file (and its line in cache/CMakeLists.txt); nothing else
 * changes.
 */
#include "cache/record.h"

#include <stdlib.h>
#include <string.h>

/* The writer's text as a jansson value; NULL when out of memory. */
static json_t *text_to_json(gb_strbuf *sb)
{
    json_t *json = NULL;
    if (gb_sb_status(sb) == GB_OK) json = json_loadb(sb->data, sb->len, 0, NULL);
    gb_sb_free(sb);
    return json;
}

json_t *gb_best_record_to_json(const gb_best_record *rec)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, false);
    gb_best_record_write(&w, rec);
    return text_to_json(&sb);
}

json_t *gb_trial_record_to_json(const gb_trial_record *rec)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &sb, false);
    gb_trial_record_write(&w, rec);
    return text_to_json(&sb);
}

/* jansson's text of json parsed by base/json. */
static int json_to_tree(const json_t *json, gb_json **out, gb_err *err)
{
    if (!json_is_object(json)) return gb_err_set(err, GB_ECACHE, "record is not a JSON object");
    char *text = json_dumps(json, JSON_COMPACT | JSON_ENCODE_ANY);
    if (!text) return gb_err_set(err, GB_ENOMEM, "out of memory");
    int rc = gb_json_parse(text, strlen(text), out, err);
    free(text);
    return rc;
}

int gb_best_record_from_json(const json_t *json, gb_best_record *out, gb_err *err)
{
    gb_json *tree = NULL;
    memset(out, 0, sizeof *out);
    int rc = json_to_tree(json, &tree, err);
    if (rc == GB_OK) rc = gb_best_record_read(tree, out, err);
    gb_json_free(tree);
    return rc;
}

int gb_trial_record_from_json(const json_t *json, gb_trial_record *out, gb_err *err)
{
    gb_json *tree = NULL;
    memset(out, 0, sizeof *out);
    int rc = json_to_tree(json, &tree, err);
    if (rc == GB_OK) rc = gb_trial_record_read(tree, out, err);
    gb_json_free(tree);
    return rc;
}
