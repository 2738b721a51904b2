/* gpubench cache ls and show. */
#include "cli/cache_cli.h"
#include "report/table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHOWN_OK_TRIALS 10 /* show lists at most this many ok trials per group */

static void fields_text(const gb_fields *f, char *buf, size_t n)
{
    gb_strbuf sb = GB_STRBUF_INIT;
    gb_fields_append_canonical(&sb, f, NULL, 0);
    gb_cache_cli_text(sb.len ? gb_sb_str(&sb) : "-", buf, n);
    gb_sb_free(&sb);
}

static json_t *stale_json(unsigned stale)
{
    json_t *list = json_array();
    for (unsigned bit = 1; list && bit <= GB_STALE_DRIVER; bit <<= 1) {
        char name[32];
        gb_stale_names(stale & bit, name, sizeof name);
        if (name[0]) json_array_append_new(list, json_string(name));
    }
    return list;
}

static json_t *entry_json(const gb_cache_entry *e)
{
    char hex[33];
    gb_key_hex(&e->key, hex);
    return json_pack("{s:s, s:i, s:o, s:s, s:s, s:o*}", "key", hex, "schema", (int)e->schema,
                     "stale", stale_json(e->stale), "why", e->why, "note", e->note, "record",
                     gb_best_record_to_json(&e->rec));
}

/* ---- ls ------------------------------------------------------------------- */

static bool shown(const cache_args *a, const gb_cache_entry *e)
{
    return a->stale ? e->stale != 0 : a->all || e->stale == 0;
}

static void add_row(gb_table *t, const cache_args *a, const gb_cache_entry *e)
{
    const gb_best_record *r = &e->rec;
    char text[1024], when[32];
    gb_table_cell(t, "%s", gb_cache_cli_text(r->id.kernel, text, sizeof text));
    fields_text(&r->id.shape, text, sizeof text);
    gb_table_cell(t, "%s", text);
    fields_text(&r->config, text, sizeof text);
    gb_table_cell(t, "%s", text);
    gb_table_cell(t, "%.4f", r->stats.median);
    if (r->flops > 0 && r->stats.median > 0)
        gb_table_cell(t, "%.2f", r->flops / (r->stats.median * 1e-3) / 1e12);
    else
        gb_table_cell(t, "-");
    gb_table_cell(t, "%s", gb_cache_cli_text(r->id.device, text, sizeof text));
    /* 12 hex digits tell fingerprints apart; other fingerprints (an import's) are
     * shown up to their hash's start. */
    gb_table_cell(t, strlen(r->id.kernel_fp) == 32 ? "%.12s" : "%.25s",
                  gb_cache_cli_text(r->id.kernel_fp, text, sizeof text));
    gb_cache_cli_when(r->when, when, sizeof when);
    gb_table_cell(t, "%s", when);
    if (a->stale) {
        gb_table_cell(t, "%s", gb_cache_cli_text(e->why, text, sizeof text));
    } else {
        gb_stale_names(e->stale, text, sizeof text);
        gb_table_cell(t, "%s", text);
    }
}

static void print_status_line(const gb_cache_listing *l)
{
    if (!l->n_trials) return;
    printf("trials:");
    const char *sep = " ";
    for (int s = 0; s < GB_TRIAL_STATUS_COUNT; s++) {
        if (!l->n_status[s]) continue;
        printf("%s%zu %s", sep, l->n_status[s], gb_trial_status_name((gb_trial_status)s));
        sep = ", ";
    }
    if (l->n_in_flight) printf("%s%zu in flight", sep, l->n_in_flight);
    printf("\n");
}

static void print_listing(const cache_args *a, const gb_cache_listing *l)
{
    static const char *const headers[] = {"kernel",  "shape",  "best config", "median ms",
                                          "TFLOP/s", "device", "fingerprint", "tuned",
                                          "stale",   NULL};
    static const char *const why_headers[] = {"kernel",    "shape",  "best config", "median ms",
                                              "TFLOP/s",   "device", "fingerprint", "tuned",
                                              "why stale", NULL};
    gb_table t;
    char bytes[32];
    int n_notes = 0;
    gb_table_init(&t, a->stale ? why_headers : headers, "lllrrlllll");
    for (int i = 0; i < l->n; i++) {
        if (!shown(a, &l->entries[i])) continue;
        add_row(&t, a, &l->entries[i]);
        n_notes += strstr(l->entries[i].note, "not found") != NULL;
    }
    gb_cache_cli_bytes((double)l->cubin_bytes, bytes, sizeof bytes);
    printf("%s: %d tuned shape(s), %d stale; %zu trial(s); %zu compiled variant(s) (cubins, %s)\n",
           a->dir, l->n - l->n_stale, l->n_stale, l->n_trials, l->n_cubins, bytes);
    print_status_line(l);
    if (t.n_rows) gb_table_print(&t, stdout);
    if (l->n_stale && !a->all && !a->stale)
        printf("(%d stale entries hidden; --all shows them, --stale says why)\n", l->n_stale);
    if (a->stale && l->n_stale)
        printf("(driver versions are compared with the newest recorded for each device; the "
               "driver itself is not loaded)\n");
    if (n_notes)
        printf("(%d entries have source files that are not here to check: `%s cache show` names "
               "them)\n",
               n_notes, a->prog);
    if (l->n_unreadable)
        printf("(%d unreadable best records skipped; `%s cache verify` says more)\n",
               l->n_unreadable, a->prog);
    if (l->n_trials_unreadable) printf("(%zu unreadable trial records)\n", l->n_trials_unreadable);
    gb_table_free(&t);
}

static json_t *listing_json(const cache_args *a, const gb_cache_listing *l)
{
    json_t *entries = json_array(), *status = json_object();
    for (int i = 0; i < l->n; i++)
        if (shown(a, &l->entries[i])) json_array_append_new(entries, entry_json(&l->entries[i]));
    for (int s = 0; s < GB_TRIAL_STATUS_COUNT; s++)
        json_object_set_new(status, gb_trial_status_name((gb_trial_status)s),
                            json_integer((json_int_t)l->n_status[s]));
    json_t *counts = json_pack("{s:i, s:i, s:i, s:I, s:o, s:I, s:I, s:I, s:I}", "tuned",
                               l->n - l->n_stale, "stale", l->n_stale, "unreadable",
                               l->n_unreadable, "trials", (json_int_t)l->n_trials, "trial_status",
                               status, "in_flight", (json_int_t)l->n_in_flight, "trials_unreadable",
                               (json_int_t)l->n_trials_unreadable, "cubins",
                               (json_int_t)l->n_cubins, "cubin_bytes", (json_int_t)l->cubin_bytes);
    return json_pack("{s:s, s:b, s:o, s:o}", "cache", a->dir, "exists", 1, "counts", counts, "best",
                     entries);
}

int gb_cache_cmd_ls(cache_args *a)
{
    gb_cache *cache = NULL;
    gb_cache_listing l;
    gb_err err = {0};
    int status = gb_cache_cli_open(a, false, false, &cache);
    if (status) return status;
    if (!cache) return gb_cache_cli_no_cache(a);
    if (gb_cache_list(cache, &a->filter, &a->now, &l, &err) == GB_OK) {
        if (a->json)
            status = gb_cache_cli_print_json(listing_json(a, &l));
        else
            print_listing(a, &l);
        gb_cache_listing_free(&l);
    } else {
        status = gb_cache_cli_fail(a, err.msg);
    }
    gb_cache_close(cache);
    return status;
}

/* ---- show ----------------------------------------------------------------- */

/* A sharded run's best: which of its shards it was chosen from. */
static void print_shards(const gb_best_record *r)
{
    printf("  shards      %d of %d", r->n_shards, r->shard_count);
    for (int i = 0; i < r->n_shards && i < 16; i++)
        printf("%s%d", i ? ", " : ": ", r->shards[i]);
    printf("%s%s\n", r->n_shards > 16 ? ", ..." : "",
           gb_best_record_whole(r) ? "" : " (merge the other shards' caches for the whole space)");
}

static void print_best(const cache_args *a, const gb_cache_entry *e)
{
    const gb_best_record *r = &e->rec;
    const gb_stats *s = &r->stats;
    char text[1024], when[32];
    fields_text(&r->config, text, sizeof text);
    printf("  best        %s: median %.5g ms", text, s->median);
    if (r->flops > 0 && s->median > 0)
        printf(", %.2f TFLOP/s", r->flops / (s->median * 1e-3) / 1e12);
    if (r->bytes > 0 && s->median > 0) printf(", %.1f GB/s", r->bytes / (s->median * 1e-3) / 1e9);
    printf(", %s\n", gb_cache_cli_text(r->mode, text, sizeof text));
    printf("  statistics  n %d: min %.5g, q1 %.5g, median %.5g, mean %.5g, q3 %.5g, max %.5g ms; "
           "stddev %.3g ms; 95%% CI of the median [%.5g, %.5g] ms\n",
           s->n, s->min, s->q1, s->median, s->mean, s->q3, s->max, s->stddev, s->ci_lo, s->ci_hi);
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < r->n_samples; i++) {
        lo = fmin(lo, r->samples_ms[i]);
        hi = fmax(hi, r->samples_ms[i]);
    }
    printf("  samples     %d (%d throttled), ", r->n_samples, r->n_throttled);
    if (r->clock_mhz > 0)
        printf("clock %.0f MHz, ", r->clock_mhz);
    else
        printf("clock unknown, ");
    printf("%s", r->capped ? "capped before the noise target" : "not capped");
    if (r->n_samples) printf("; fastest %.5g, slowest %.5g ms", lo, hi);
    printf("\n");
    if (r->has_baseline)
        printf("  baseline    median %.5g ms: the best is %.2fx as fast\n", r->baseline.median,
               r->baseline.median / s->median);
    if (r->n_leaders)
        printf("  race        %d leader(s)", r->n_leaders);
    else
        printf("  race        none recorded");
    for (int i = 1; i < r->n_tie; i++)
        printf("%s%s", i == 1 ? "; tied with " : ", ",
               gb_cache_cli_text(r->tie[i], text, sizeof text));
    printf("\n  search      %d configuration(s), %d rejected, %d timed, %d failed: %s\n",
           r->n_configs, r->n_rejected, r->n_timed, r->n_failed,
           r->complete ? "complete" : "cut short by a budget");
    if (r->shard_count > 1) print_shards(r);
    gb_cache_cli_when(r->when, when, sizeof when);
    printf("  recorded    %s by gpubench %s, NVRTC %s, driver ", when,
           r->engine_version[0] ? gb_cache_cli_text(r->engine_version, text, sizeof text) : "?",
           r->nvrtc_version[0] ? r->nvrtc_version : "?");
    if (r->driver_version > 0)
        printf("%d\n", r->driver_version);
    else
        printf("?\n");
    printf("  stale       %s\n", e->stale ? gb_cache_cli_text(e->why, text, sizeof text) : "no");
    if (e->note[0]) printf("  note        %s\n", gb_cache_cli_text(e->note, text, sizeof text));
}

static void print_trials(const gb_cache_group *g)
{
    size_t n[GB_TRIAL_STATUS_COUNT] = {0}, in_flight = 0;
    for (int i = 0; i < g->n_trials; i++)
        g->trials[i].in_flight ? in_flight++ : n[g->trials[i].status]++;
    printf("  trials      %d", g->n_trials);
    const char *sep = ": ";
    for (int s = 0; s < GB_TRIAL_STATUS_COUNT; s++)
        if (n[s])
            printf("%s%zu %s", sep, n[s], gb_trial_status_name((gb_trial_status)s)), sep = ", ";
    if (in_flight) printf("%s%zu in flight", sep, in_flight);
    printf("\n");
    if (!g->n_trials) return;
    /* The empty first column indents the table under "trials". */
    static const char *const headers[] = {"", "status", "config", "median ms", "reason", NULL};
    gb_table t;
    gb_table_init(&t, headers, "lllrl");
    int n_ok = 0;
    for (int i = 0; i < g->n_trials; i++) {
        const gb_trial_record *tr = &g->trials[i];
        char text[1024];
        if (tr->status == GB_TRIAL_OK && !tr->in_flight && ++n_ok > SHOWN_OK_TRIALS) continue;
        gb_table_cell(&t, "%s", "");
        gb_table_cell(&t, "%s", tr->in_flight ? "in flight" : gb_trial_status_name(tr->status));
        fields_text(&tr->config, text, sizeof text);
        gb_table_cell(&t, "%s", text);
        if (tr->has_stats)
            gb_table_cell(&t, "%.5g", tr->stats.median);
        else
            gb_table_cell(&t, "-");
        gb_table_cell(&t, "%.160s", gb_cache_cli_text(tr->reason, text, sizeof text));
    }
    gb_table_print(&t, stdout);
    gb_table_free(&t);
    if (n_ok > SHOWN_OK_TRIALS)
        printf("  (%d more ok trials; --json lists them all)\n", n_ok - SHOWN_OK_TRIALS);
}

static void print_group(const cache_args *a, const gb_cache_group *g)
{
    char shape[1024], device[300], fp[80];
    fields_text(&g->id.shape, shape, sizeof shape);
    printf("%s %s on %s, fingerprint %s\n", a->kernel, shape,
           gb_cache_cli_text(g->id.device, device, sizeof device),
           gb_cache_cli_text(g->id.kernel_fp, fp, sizeof fp));
    if (g->has_best)
        print_best(a, &g->best);
    else
        printf("  best        none: no configuration passed, or its tuning did not finish\n");
    print_trials(g);
}

static json_t *groups_json(const cache_args *a, const gb_cache_group *groups, int n)
{
    json_t *list = json_array();
    for (int i = 0; i < n; i++) {
        const gb_cache_group *g = &groups[i];
        json_t *trials = json_array();
        for (int j = 0; j < g->n_trials; j++)
            json_array_append_new(trials, gb_trial_record_to_json(&g->trials[j]));
        json_t *shape = json_object();
        for (int j = 0; j < g->id.shape.n; j++) {
            const gb_value *v = &g->id.shape.values[j];
            json_t *jv = v->kind == GB_VAL_INT   ? json_integer(v->i)
                         : v->kind == GB_VAL_NUM ? json_real(v->num)
                         : v->kind == GB_VAL_STR ? json_string(v->str)
                                                 : json_boolean(v->b);
            json_object_set_new(shape, g->id.shape.names[j], jv);
        }
        json_array_append_new(
            list, json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "kernel", g->id.kernel, "kernel_fp",
                            g->id.kernel_fp, "device", g->id.device, "shape", shape, "best",
                            g->has_best ? entry_json(&g->best) : json_null(), "trials", trials));
    }
    return json_pack("{s:s, s:s, s:o}", "cache", a->dir, "kernel", a->kernel, "groups", list);
}

int gb_cache_cmd_show(cache_args *a)
{
    gb_cache *cache = NULL;
    gb_cache_group *groups = NULL;
    int n = 0, n_unreadable = 0;
    gb_err err = {0};
    a->kernel = a->filter.kernel = a->pos[0];
    if (a->n_pos > 1) {
        if (gb_cache_parse_shape(a->pos[1], &a->shape, &err)) return gb_cache_cli_fail(a, err.msg);
        a->filter.shape = &a->shape;
    }
    int status = gb_cache_cli_open(a, false, false, &cache);
    if (status) return status;
    if (cache && gb_cache_show(cache, &a->filter, &a->now, &groups, &n, &n_unreadable, &err))
        status = gb_cache_cli_fail(a, err.msg);
    gb_cache_close(cache);
    if (status) return status;
    if (a->json) {
        status = gb_cache_cli_print_json(groups_json(a, groups, n));
    } else if (n == 0) {
        char kernel[200];
        printf("%s: no results for kernel %s%s%s%s%s\n", a->dir,
               gb_cache_cli_text(a->kernel, kernel, sizeof kernel), a->n_pos > 1 ? " at " : "",
               a->n_pos > 1 ? a->pos[1] : "", a->device ? " on " : "", a->device ? a->device : "");
    }
    for (int i = 0; !a->json && i < n; i++) {
        if (i) printf("\n");
        print_group(a, &groups[i]);
    }
    if (!a->json && n_unreadable)
        printf("(%d unreadable records skipped; `%s cache verify` says more)\n", n_unreadable,
               a->prog);
    gb_cache_groups_free(groups, n);
    return status ? status : n == 0;
}
