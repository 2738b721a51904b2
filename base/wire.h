/*
 * Wire types: each struct that leaves the process (to the worker, to the cache,
 * to a Lua script) is described once, as a table of its fields, and one codec
 * turns it into JSON, reads it back, and (lua/wire.h) pushes it to Lua. So the
 * protocol, the cache records and the Lua tables cannot drift apart.
 *
 * A field names its JSON key, its kind (what the C member is), where it lives
 * (offsetof), and how it is checked: a range for numbers, the longest string, the
 * most items. Decoding never trusts its input: every field is type- and
 * range-checked, strings must fit their arrays, lists their caps, and an error
 * names the type and the path of the field: "measurement.samples_ms[3]: expected
 * a number >= 0". Decoding fills a zeroed struct and frees what it allocated when
 * it fails, so on error the struct is all zeros. Encoding cuts text to what its
 * field takes (on a character boundary, after replacing invalid UTF-8), so text
 * that was written always reads back.
 *
 * Tables are written with an X-macro next to each struct, one X(member, KIND,
 * "json name", ...) per field, where the extra arguments are designated
 * initializers of gb_wire_field (.flags = GB_WIRE_OPTIONAL, GB_WIRE_RANGE(0, 100),
 * .lua = "min", ...):
 *
 *   #define GB_STATS_WIRE(X) X(n, INT, "n", GB_WIRE_RANGE(0, INT_MAX)) X(min, ...) ...
 *
 * and instantiated in one place (engine/wire_types.c, exec/proto.c,
 * cache/record.c), where the macros they use must be defined:
 *
 *   #define GB_WIRE_T gb_stats
 *   GB_WIRE_TABLE(gb_wire_stats, "stats", GB_STATS_WIRE, NULL)
 *   #undef GB_WIRE_T
 *
 * Arrays: a member that is an array of a kind's C type is described by its arity:
 * FIXED (every element, e.g. uint32_t grid[3]), INLINE (the first n of an array,
 * n in an int member: .count = offsetof(T, n_dims)) or OWNED (a malloc'd pointer
 * and an int count; gb_wire_free releases it). Several OWNED arrays may share one
 * count (samples and their clocks): the first sets it, the others must match it.
 * A FIXED array indexed by an enum may be written as one field per name instead
 * (.keys: {"ok": 3, "wrong": 1, ...}).
 *
 * Views: a document laid out for its readers (the run's JSON report, the results
 * table a Lua script gets) need not mirror one struct. A field may sit in a
 * sub-object of its own (.group = "search", or "search.budget" one further down)
 * without a nested struct: the sub-object is made where its first field is met,
 * unless .when leaves that field out. A list may also name virtual fields, V(KIND,
 * "json name", ...), that have no member: .get computes the value written (a
 * rate, a name from the caller's context), .set, when there is one, takes the
 * value read. Such a list is LIST(X, V) and is instantiated with
 * GB_WIRE_VIEW_TABLE; the context (.get's and .set's ctx) is the caller's, passed
 * to gb_wire_encode_into and gb_wire_read (lua/wire.h passes none).
 */
#ifndef GB_BASE_WIRE_H
#define GB_BASE_WIRE_H

#include "base/error.h"
#include "base/json.h"
#include "base/value.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum gb_wire_kind {
    GB_WIRE_INT,    /* int */
    GB_WIRE_INT64,  /* int64_t: a JSON integer, exact over its whole range */
    GB_WIRE_UINT32, /* uint32_t */
    GB_WIRE_UINT64, /* uint64_t: the JSON integer of the int64_t with the same bits */
    GB_WIRE_DOUBLE, /* double: NaN and infinities are written as null */
    GB_WIRE_BOOL,   /* bool */
    GB_WIRE_ENUM,   /* an int-sized enum, as its name (.enumeration) */
    GB_WIRE_CHARS,  /* char[N]: a NUL-terminated string that must fit */
    GB_WIRE_STRING, /* char *, owned (malloc'd); NULL is not written */
    GB_WIRE_FIELDS, /* gb_fields (base/value.h): an object of numbers, strings, booleans */
    GB_WIRE_STRUCT, /* a nested wire type (.type), by value */
} gb_wire_kind;

typedef enum gb_wire_arity {
    GB_WIRE_ONE,    /* a single value */
    GB_WIRE_FIXED,  /* an inline array, every element */
    GB_WIRE_INLINE, /* the first .count elements of an inline array */
    GB_WIRE_OWNED,  /* a malloc'd array of .count elements, at most .max_items */
} gb_wire_arity;

enum {
    /* Absent reads as the default (.dflt, .dflt_str) instead of failing: fields
     * added after a type first shipped, so older records still read. */
    GB_WIRE_OPTIONAL = 1 << 0,
    /* DOUBLE: null reads as NaN (otherwise a number is required). */
    GB_WIRE_NULL_NAN = 1 << 1,
    /* STRUCT with .present (a bool member): written as null when it is false;
     * null or absent reads as false, an object as true. */
    GB_WIRE_NULLABLE = 1 << 2,
    /* Not in JSON at all: the type's finish hook computes it from the others. Still
     * pushed to Lua. */
    GB_WIRE_DERIVED = 1 << 3,
    /* Lua: not pushed. */
    GB_WIRE_NO_LUA = 1 << 4,
    /* Lua: left out when zero, false, empty or NULL (a value that means unknown). */
    GB_WIRE_LUA_OMIT_ZERO = 1 << 5,
    /* STRUCT: its fields sit in this object, not in a nested one. */
    GB_WIRE_INLINE_STRUCT = 1 << 6,
    /* Numbers, CHARS, STRING, ENUM: zero (and NaN for DOUBLE), "" or NULL is
     * written as null, and null reads as zero, "" or NULL: a figure kept as 0 for
     * "unknown". */
    GB_WIRE_NULL_ZERO = 1 << 7,
    /* UINT64: written as the unsigned value it is, an integer up to INT64_MAX and
     * a string of its decimal digits above (JSON readers stop at INT64_MAX); reads
     * either, never a negative integer. */
    GB_WIRE_U64_TEXT = 1 << 8,
    /* Written, never read: what a reader has from elsewhere (a report's rows all
     * carry their shape; only the first one is read). */
    GB_WIRE_WRITE_ONLY = 1 << 9,
};

/* An enum's names: name(v) for v in [0, count), NULL for a value with no name. */
typedef struct gb_wire_enum {
    int count;
    const char *(*name)(int value);
} gb_wire_enum;

typedef struct gb_wire_type gb_wire_type;

typedef struct gb_wire_field {
    const char *name; /* the JSON key */
    const char *lua;  /* the Lua field name when it is not .name */
    gb_wire_kind kind;
    gb_wire_arity arity;
    unsigned flags;
    size_t offset; /* of the member */
    size_t size;   /* sizeof the member */
    size_t count;  /* INLINE, OWNED: offset of the int member holding the count */
    int min_items; /* INLINE, OWNED: fewest items (0 unless set) */
    int max_items; /* OWNED: most items (required); INLINE: the capacity when 0; FIELDS */
    bool ranged;   /* numbers: [min, max] is enforced (set by GB_WIRE_RANGE) */
    double min, max;
    size_t max_len;           /* STRING: most bytes (0: GB_WIRE_MAX_STRING); longer text is cut */
    double dflt;              /* OPTIONAL numbers, booleans, enums: the value when absent */
    const char *dflt_str;     /* OPTIONAL CHARS, STRING: the value when absent */
    const gb_wire_type *type; /* STRUCT */
    const gb_wire_enum *enumeration; /* ENUM */
    size_t present;                  /* NULLABLE: offset of the bool saying it is there */
    bool (*when)(const void *obj);   /* written only when this says so; optional then */
    /* Written as null when this says no (a row without a time has no statistics);
     * null then reads as the default. */
    bool (*null_unless)(const void *obj);
    const char
        *group; /* the sub-object the field sits in ("search"; "search.budget" nests), or NULL */
    const gb_wire_enum *keys; /* FIXED: written as one field per name, item i as keys->name(i) */
    const char *expect;       /* arrays: what a value that is no list of the right length is
                                 told it should be ("a list of numbers"), when not generated */
    /* Virtual fields: puts the value to write in out (a variable of the kind's C type;
     * what it points to is borrowed). */
    void (*get)(const void *obj, const void *ctx, void *out);
    /* Virtual fields: takes the value read (a STRING's or FIELDS' allocation is set's to
     * keep or free); NULL: the field is written, not read. GB_OK, or an error
     * set on err, naming path. */
    int (*set)(void *obj, void *ctx, void *value, const char *path, gb_err *err);
} gb_wire_field;

struct gb_wire_type {
    const char *name; /* "measurement": the first part of every error's path */
    size_t size;      /* sizeof the struct */
    const gb_wire_field *fields;
    int n_fields;
    /* Called when every field has decoded: checks rules between fields and fills
     * DERIVED ones. Returns GB_OK or sets err (its message naming path) and fails. */
    int (*finish)(void *obj, const char *path, gb_err *err);
};

/* What a virtual field's .get writes into: the kind's C type at its start. A
 * STRING that .get formats itself ("9.0") goes into .text: the text in .text.buf,
 * .text.string pointing at it. */
typedef union gb_wire_value {
    int64_t integer; /* INT, UINT32, ENUM and BOOL are their own C types, at the start */
    double number;
    bool boolean;
    char *string;
    gb_fields fields;
    struct {
        char *string;
        char buf[1024];
    } text;
} gb_wire_value;

/* The longest part of a dotted .group ("search.budget": "search", then "budget"). */
#define GB_WIRE_GROUP_PART 32

/* The longest STRING a field takes unless it says otherwise. */
#define GB_WIRE_MAX_STRING ((size_t)1 << 20)

/* A field of struct T. KIND is a gb_wire_kind without its prefix (INT, DOUBLE...);
 * the rest are designated initializers of gb_wire_field. */
#define GB_WIRE_FIELD(T, member, KIND, json_name, ...)                                             \
    {                                                                                              \
        .name = (json_name), .kind = GB_WIRE_##KIND, .offset = offsetof(T, member),                \
        .size = sizeof(((T *)0)->member), __VA_ARGS__                                              \
    }
/* Defines const gb_wire_type var (and its static field array) from LIST, an
 * X-macro over the struct GB_WIRE_T, which the caller defines around it. */
#define GB_WIRE_TABLE(var, wire_name, LIST, finish_fn)                                             \
    static const gb_wire_field var##_fields[] = {LIST(GB_WIRE_ENTRY_)};                            \
    const gb_wire_type var = {wire_name, sizeof(GB_WIRE_T), var##_fields,                          \
                              GB_WIRE_N_FIELDS(var##_fields), finish_fn};
#define GB_WIRE_ENTRY_(member, KIND, json_name, ...)                                               \
    GB_WIRE_FIELD(GB_WIRE_T, member, KIND, json_name, __VA_ARGS__),
/* The same for a list LIST(X, V) with virtual fields. */
#define GB_WIRE_VIEW_TABLE(var, wire_name, LIST, finish_fn)                                        \
    static const gb_wire_field var##_fields[] = {LIST(GB_WIRE_ENTRY_, GB_WIRE_VIRTUAL_)};          \
    const gb_wire_type var = {wire_name, sizeof(GB_WIRE_T), var##_fields,                          \
                              GB_WIRE_N_FIELDS(var##_fields), finish_fn};
/* A virtual field (one with .get): KIND is INT, INT64, UINT32, UINT64, DOUBLE,
 * BOOL, ENUM, STRING or FIELDS. */
#define GB_WIRE_VIRTUAL_(KIND, json_name, ...)                                                     \
    {.name = (json_name),                                                                          \
     .kind = GB_WIRE_##KIND,                                                                       \
     .size = sizeof(GB_WIRE_CTYPE_##KIND),                                                         \
     __VA_ARGS__},
#define GB_WIRE_CTYPE_INT       int
#define GB_WIRE_CTYPE_INT64     int64_t
#define GB_WIRE_CTYPE_UINT32    uint32_t
#define GB_WIRE_CTYPE_UINT64    uint64_t
#define GB_WIRE_CTYPE_DOUBLE    double
#define GB_WIRE_CTYPE_BOOL      bool
#define GB_WIRE_CTYPE_ENUM      int
#define GB_WIRE_CTYPE_STRING    char *
#define GB_WIRE_CTYPE_FIELDS    gb_fields
#define GB_WIRE_RANGE(lo, hi)   .ranged = true, .min = (double)(lo), .max = (double)(hi)
#define GB_WIRE_N_FIELDS(array) ((int)(sizeof(array) / sizeof *(array)))

/* The struct as a JSON object; NULL on ENOMEM. */
json_t *gb_wire_encode(const gb_wire_type *t, const void *obj);

/* Reads j into obj (t->size bytes, zeroed first). GB_EINVAL with err naming the
 * field path and what was expected; GB_ENOMEM. On failure obj is all zeros again. */
int gb_wire_decode(const gb_wire_type *t, const json_t *j, void *obj, gb_err *err);

/* The view's fields written into out (an object), in order, with ctx for the
 * virtual fields. GB_ENOMEM. */
int gb_wire_encode_into(const gb_wire_type *t, const void *obj, const void *ctx, json_t *out);

/* Reads the fields of j into obj as gb_wire_decode does, but into obj as it is
 * (not zeroed first: several views may fill one struct), with ctx for the virtual
 * fields' .set, and errors' paths starting at path ("benchmarks[3]"; "" for a
 * view of the whole document: "compiles[0].kernel").
 * On failure obj keeps what was read: the caller frees it. */
int gb_wire_read(const gb_wire_type *t, const json_t *j, void *obj, void *ctx, const char *path,
                 gb_err *err);

/* Frees what decoding allocated in obj (OWNED arrays, STRINGs, FIELDS) and zeroes
 * it; NULL is a no-op. */
void gb_wire_free(const gb_wire_type *t, void *obj);

/* Field by field equality, as the wire sees it: NaN equals NaN, strings by
 * content, arrays up to their counts; DERIVED fields are compared too. */
bool gb_wire_equal(const gb_wire_type *t, const void *a, const void *b);

/* Checks a table itself: member sizes match their kinds, arrays have counts and
 * caps, nested types exist. GB_EINVAL naming the first wrong field. (For tests: a
 * table is static data, so one test covers every run.) */
int gb_wire_check_type(const gb_wire_type *t, gb_err *err);

/* For code that walks a table itself (lua/wire.c): how many items the field holds
 * in obj (1 for a single value, the count for arrays), and a pointer to item i. */
int gb_wire_items(const gb_wire_field *f, const void *obj);
const void *gb_wire_item(const gb_wire_field *f, const void *obj, int i);

/* For code that walks groups itself: copies the next part of the dotted *group
 * into part and moves *group past it; false when no part is left. */
bool gb_wire_group_next(const char **group, char part[GB_WIRE_GROUP_PART]);

#endif
