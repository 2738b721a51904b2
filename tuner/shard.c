/* Which configurations a shard owns, and where a shard's number comes from
 * (tuner/shard.h). */
#include "tuner/shard.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* splitmix64's finaliser: neighbouring ordinals land on unrelated shards. */
static uint64_t mix(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

bool gb_shard_owns(const gb_shard *shard, uint64_t ordinal)
{
    if (!shard || shard->count <= 1) return true;
    return mix(ordinal) % (uint64_t)shard->count == (uint64_t)shard->index;
}

/* A whole decimal number from 0 to INT_MAX, nothing around it. */
static bool read_int(const char *text, int *out)
{
    char *end = NULL;
    if (!text || *text < '0' || *text > '9') return false;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || *end || v > INT_MAX) return false;
    *out = (int)v;
    return true;
}

static int check_range(gb_shard s, const char *what, gb_err *err)
{
    if (s.count < 1 || s.count > GB_SHARD_MAX)
        return gb_err_set(err, GB_EINVAL, "%s: the shard count must be from 1 to %d, not %d", what,
                          GB_SHARD_MAX, s.count);
    if (s.index >= s.count)
        return gb_err_set(err, GB_EINVAL, "%s: shard %d is not below the count %d", what, s.index,
                          s.count);
    return GB_OK;
}

int gb_shard_parse(const char *text, gb_shard *out, gb_err *err)
{
    char buf[32];
    const char *slash = text ? strchr(text, '/') : NULL;
    size_t len = slash ? (size_t)(slash - text) : 0;
    gb_shard s = {0};
    if (!slash || len >= sizeof buf)
        return gb_err_set(err, GB_EINVAL, "'%s' is not i/n (shard i of n, i from 0)",
                          text ? text : "");
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (!read_int(buf, &s.index) || !read_int(slash + 1, &s.count))
        return gb_err_set(err, GB_EINVAL, "'%s' is not i/n (shard i of n, i from 0)", text);
    int rc = check_range(s, text, err);
    if (rc == GB_OK) *out = s;
    return rc;
}

/* One scheduler's pair of variables. */
typedef struct source {
    const char *index, *count;
} source;

static const source SOURCES[] = {
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"}, {"PMI_RANK", "PMI_SIZE"},
    {"MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"},   {"SLURM_PROCID", "SLURM_NTASKS"},
    {"JOB_COMPLETION_INDEX", "GPUBENCH_SHARD_COUNT"},
};

/* A variable that is set must hold a whole number. */
static int read_var(char *(*getenv_fn)(const char *), const char *name, int *out, gb_err *err)
{
    const char *v = getenv_fn(name);
    if (!read_int(v, out))
        return gb_err_set(err, GB_EINVAL, "--shard auto: %s is '%s', not a whole number", name,
                          v ? v : "");
    return GB_OK;
}

/* A Slurm array numbers its tasks as --array said (1-8, 0-14:2): from the first,
 * by the step. A list such as 1,4,9 has no step to count by and is refused. */
static int slurm_array(char *(*getenv_fn)(const char *), gb_shard *out, gb_err *err)
{
    int id, count, min = 0, step = 1;
    int rc = read_var(getenv_fn, "SLURM_ARRAY_TASK_ID", &id, err);
    if (rc == GB_OK) rc = read_var(getenv_fn, "SLURM_ARRAY_TASK_COUNT", &count, err);
    if (rc == GB_OK && getenv_fn("SLURM_ARRAY_TASK_MIN"))
        rc = read_var(getenv_fn, "SLURM_ARRAY_TASK_MIN", &min, err);
    if (rc == GB_OK && getenv_fn("SLURM_ARRAY_TASK_STEP"))
        rc = read_var(getenv_fn, "SLURM_ARRAY_TASK_STEP", &step, err);
    if (rc) return rc;
    if (step < 1 || id < min || (id - min) % step)
        return gb_err_set(err, GB_EINVAL,
                          "--shard auto: Slurm array task %d is not min %d plus a multiple of "
                          "step %d: give the array as a range (--array=0-%d)",
                          id, min, step, count - 1);
    *out = (gb_shard){.index = (id - min) / step, .count = count};
    return check_range(*out, "--shard auto (SLURM_ARRAY_TASK_ID)", err);
}

int gb_shard_from_env(char *(*getenv_fn)(const char *name), gb_shard *out, const char **out_source,
                      gb_err *err)
{
    if (getenv_fn("SLURM_ARRAY_TASK_ID")) {
        *out_source = "SLURM_ARRAY_TASK_ID";
        return slurm_array(getenv_fn, out, err);
    }
    for (size_t i = 0; i < sizeof SOURCES / sizeof SOURCES[0]; i++) {
        const source *src = &SOURCES[i];
        if (!getenv_fn(src->index)) continue;
        gb_shard s;
        char what[64];
        *out_source = src->index;
        if (!getenv_fn(src->count))
            return gb_err_set(err, GB_EINVAL, "--shard auto: %s is set but %s, the count, is not",
                              src->index, src->count);
        int rc = read_var(getenv_fn, src->index, &s.index, err);
        if (rc == GB_OK) rc = read_var(getenv_fn, src->count, &s.count, err);
        snprintf(what, sizeof what, "--shard auto (%s)", src->index);
        if (rc == GB_OK) rc = check_range(s, what, err);
        if (rc == GB_OK) *out = s;
        return rc;
    }
    return gb_err_set(err, GB_EINVAL,
                      "--shard auto: no scheduler's variables are set (SLURM_ARRAY_TASK_ID, "
                      "OMPI_COMM_WORLD_RANK, PMI_RANK, MV2_COMM_WORLD_RANK, SLURM_PROCID, "
                      "JOB_COMPLETION_INDEX): give the shard as i/n");
}
