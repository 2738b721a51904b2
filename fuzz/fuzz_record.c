/*
 * Cache records from raw bytes: what `cache load` and `cache verify` read from
 * untrusted files. The bytes are parsed as JSON and decoded as a best record and
 * as a trial record; whatever decodes must encode, print, parse and decode again
 * to an equal record. A crash, a leak, undefined behaviour or an inequality is a
 * finding.
 */
#include "cache/record.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Stops the run with what went wrong: libFuzzer keeps the input as a crash. */
static void fail(const char *type, const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_record: %s: %s%s%s\n", type, what, detail ? ": " : "",
            detail ? detail : "");
    abort();
}

/* Decodes json as type t into a fresh struct, re-encodes it through text, decodes
 * that and compares. */
static void round_trip(const gb_wire_type *t, const json_t *json)
{
    void *first = calloc(1, t->size), *second = calloc(1, t->size);
    gb_err err;
    if (!first || !second) fail(t->name, "out of memory", NULL);
    if (gb_wire_decode(t, json, first, &err) == GB_OK) {
        json_t *again = gb_wire_encode(t, first);
        char *text = gb_json_dump(again, false);
        json_t *parsed = NULL;
        if (!text) fail(t->name, "a decoded record does not encode", NULL);
        if (gb_json_parse(text, strlen(text), &parsed, &err))
            fail(t->name, "its encoding does not parse", err.msg);
        if (gb_wire_decode(t, parsed, second, &err))
            fail(t->name, "its encoding does not decode", err.msg);
        if (!gb_wire_equal(t, first, second)) fail(t->name, "it decodes to another record", text);
        json_decref(parsed);
        json_decref(again);
        free(text);
    }
    gb_wire_free(t, first);
    gb_wire_free(t, second);
    free(first);
    free(second);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *json = NULL;
    if (gb_json_parse((const char *)data, size, &json, NULL) != GB_OK) return 0;
    round_trip(&gb_wire_best_record, json);
    round_trip(&gb_wire_trial_record, json);
    /* The public functions too: their error code must be GB_ECACHE for bad input. */
    gb_best_record best;
    int rc = gb_best_record_from_json(json, &best, NULL);
    if (rc != GB_OK && rc != GB_ECACHE) fail("best_record", "an unexpected error code", NULL);
    gb_best_record_free(&best);
    json_decref(json);
    return 0;
}
