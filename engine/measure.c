#include "engine/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Samples whose clocks decide whether the warm-up is over: the last five, or the
 * last three when those alone lasted the warm-up's minimum (a long kernel, for
 * which five would stretch the warm-up to several times that minimum while
 * adding nothing the clock check needs). */
#define STEADY_WINDOW 5
#define SHORT_WINDOW  3
/* Below this many kept samples the stopping rule is checked after every sample;
 * above, after every n / CHECK_SPACING, so a long run stays O(n log n). */
#define CHECK_EVERY_UNTIL 100
#define CHECK_SPACING     32

static const char *const mode_names[] = {[GB_MODE_COLD] = "cold", [GB_MODE_HOT] = "hot"};
static const char *const timer_names[] = {
    [GB_TIMER_AUTO] = "auto", [GB_TIMER_CUPTI] = "cupti", [GB_TIMER_EVENTS] = "events"};

const char *gb_measure_mode_name(gb_measure_mode mode)
{
    return mode == GB_MODE_HOT ? mode_names[GB_MODE_HOT] : mode_names[GB_MODE_COLD];
}

int gb_measure_mode_parse(const char *name, gb_measure_mode *out)
{
    for (int m = GB_MODE_COLD; m <= GB_MODE_HOT; m++) {
        if (strcmp(name, mode_names[m]) == 0) {
            *out = (gb_measure_mode)m;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

const char *gb_timer_name(gb_timer timer)
{
    return timer >= GB_TIMER_EVENTS && timer <= GB_TIMER_AUTO ? timer_names[timer] : "unknown";
}

int gb_timer_parse(const char *name, gb_timer *out)
{
    for (int t = GB_TIMER_EVENTS; t <= GB_TIMER_AUTO; t++) {
        if (strcmp(name, timer_names[t]) == 0) {
            *out = (gb_timer)t;
            return GB_OK;
        }
    }
    return GB_EINVAL;
}

gb_measure_opts gb_measure_defaults(void)
{
    return (gb_measure_opts){
        .mode = GB_MODE_COLD,
        .noise = 0.005,
        .min_samples = 10,
        .max_samples = 100000,
        .max_ms = 1000.0,
        .warmup_ms = 20.0,
        .warmup_max_ms = 1000.0,
        .clock_tolerance = 0.01,
        .throttle_threshold = 0.75,
        .hot_min_ms = 0.1,
        .rewarm_after_ms = 1000.0,
        .timer = GB_TIMER_AUTO,
    };
}

gb_measure_opts gb_measure_screening(const gb_measure_opts *full)
{
    gb_measure_opts o = *full;
    if (full->min_samples == full->max_samples) return o; /* a fixed count stays fixed */
    o.noise = fmax(full->noise, 0.02);
    o.min_samples = full->min_samples < 3 ? full->min_samples : 3;
    o.max_ms = fmin(full->max_ms, 100.0);
    o.warmup_ms = fmin(full->warmup_ms, 10.0);
    return o;
}

int gb_measure_check(const gb_measure_opts *o, gb_err *err)
{
    if (!(o->noise > 0) || o->noise >= 1)
        return gb_err_set(err, GB_EINVAL, "measure: noise must be above 0 and below 1, got %g",
                          o->noise);
    if (o->min_samples < 1)
        return gb_err_set(err, GB_EINVAL, "measure: min_samples must be at least 1, got %d",
                          o->min_samples);
    if (o->max_samples < o->min_samples)
        return gb_err_set(err, GB_EINVAL, "measure: max_samples (%d) is below min_samples (%d)",
                          o->max_samples, o->min_samples);
    if (!(o->max_ms > 0))
        return gb_err_set(err, GB_EINVAL, "measure: max_ms must be above 0, got %g", o->max_ms);
    if (!(o->warmup_ms >= 0) || o->warmup_max_ms < o->warmup_ms)
        return gb_err_set(err, GB_EINVAL, "measure: warmup_ms must be >= 0 and <= warmup_max_ms");
    if (!(o->hot_min_ms > 0))
        return gb_err_set(err, GB_EINVAL, "measure: hot_min_ms must be above 0");
    if (!(o->throttle_threshold >= 0) || o->throttle_threshold >= 1)
        return gb_err_set(err, GB_EINVAL,
                          "measure: throttle_threshold must be at least 0 and below 1, got %g",
                          o->throttle_threshold);
    if (!(o->rewarm_after_ms >= 0))
        return gb_err_set(err, GB_EINVAL, "measure: rewarm_after_ms must be at least 0");
    return GB_OK;
}

/* ---- measurements ------------------------------------------------------- */

const char *gb_measurement_timer(const gb_measurement *m)
{
    return timer_names[m->timer == GB_TIMER_CUPTI ? GB_TIMER_CUPTI : GB_TIMER_EVENTS];
}

void gb_measurement_free(gb_measurement *m)
{
    if (!m) return;
    free(m->samples_ms);
    free(m->clock_mhz);
    free(m->throttled);
    memset(m, 0, sizeof *m);
}

static int reserve(gb_measurement *m, int n)
{
    m->samples_ms = calloc((size_t)n, sizeof *m->samples_ms);
    m->clock_mhz = calloc((size_t)n, sizeof *m->clock_mhz);
    m->throttled = calloc((size_t)n, sizeof *m->throttled);
    return m->samples_ms && m->clock_mhz && m->throttled ? GB_OK : GB_ENOMEM;
}

int gb_measurement_copy(const gb_measurement *src, gb_measurement *out)
{
    *out = *src;
    out->samples_ms = NULL;
    out->clock_mhz = NULL;
    out->throttled = NULL;
    if (reserve(out, src->n_samples > 0 ? src->n_samples : 1) != GB_OK) {
        gb_measurement_free(out);
        return GB_ENOMEM;
    }
    size_t n = (size_t)src->n_samples;
    if (n) {
        memcpy(out->samples_ms, src->samples_ms, n * sizeof *out->samples_ms);
        memcpy(out->clock_mhz, src->clock_mhz, n * sizeof *out->clock_mhz);
        memcpy(out->throttled, src->throttled, n * sizeof *out->throttled);
    }
    return GB_OK;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of the clocks of the kept samples (known ones only). */
static double median_clock(const gb_measurement *m, double *scratch)
{
    int n = 0;
    for (int i = 0; i < m->n_samples; i++)
        if ((m->all_throttled || !m->throttled[i]) && m->clock_mhz[i] > 0)
            scratch[n++] = m->clock_mhz[i];
    if (n == 0) return 0.0;
    qsort(scratch, (size_t)n, sizeof *scratch, compare_doubles);
    return gb_stats_quantile(scratch, n, 0.5);
}

int gb_measurement_summarise(gb_measurement *m)
{
    if (m->n_samples < 1) return GB_EINVAL;
    double *kept = malloc((size_t)m->n_samples * sizeof *kept);
    if (!kept) return GB_ENOMEM;
    int n = 0;
    m->n_throttled = 0;
    for (int i = 0; i < m->n_samples; i++) {
        m->n_throttled += m->throttled[i];
        if (!m->throttled[i]) kept[n++] = m->samples_ms[i];
    }
    m->all_throttled = n == 0;
    if (m->all_throttled) { /* nothing clean: say so, and use what there is */
        memcpy(kept, m->samples_ms, (size_t)m->n_samples * sizeof *kept);
        n = m->n_samples;
    }
    int rc = gb_stats_compute(kept, n, &m->stats);
    if (rc == GB_OK) m->clock_mhz_median = median_clock(m, kept);
    free(kept);
    return rc;
}

/* ---- warming up --------------------------------------------------------- */

/* The warm-up's last samples: their clocks and when each began (a ring). */
typedef struct warm_ring {
    double clock_mhz[STEADY_WINDOW];
    double began_ms[STEADY_WINDOW];
} warm_ring;

/* How many of the n samples so far (the last ending at now_ms) must show a steady
 * clock: SHORT_WINDOW when those alone took warmup_ms, else STEADY_WINDOW; 0 while
 * there are too few samples for either. */
static int steady_window(const warm_ring *r, int n, double now_ms, double warmup_ms)
{
    if (n >= SHORT_WINDOW && now_ms - r->began_ms[(n - SHORT_WINDOW) % STEADY_WINDOW] >= warmup_ms)
        return SHORT_WINDOW;
    return n >= STEADY_WINDOW ? STEADY_WINDOW : 0;
}

/* True when the clocks of the last `window` of n samples are within tolerance of
 * their median; unknown clocks (0) count as steady. Sets *steady_mhz to that
 * median. */
static bool clock_settled(const warm_ring *r, int n, int window, double tolerance,
                          double *steady_mhz)
{
    double clocks[STEADY_WINDOW];
    for (int i = 0; i < window; i++)
        clocks[i] = r->clock_mhz[(n - window + i) % STEADY_WINDOW];
    qsort(clocks, (size_t)window, sizeof *clocks, compare_doubles);
    double median = clocks[window / 2];
    *steady_mhz = median;
    if (median <= 0) return true;
    return clocks[0] >= median * (1 - tolerance) && clocks[window - 1] <= median * (1 + tolerance);
}

/* Takes one sample for m, counting what its timer cost. */
static int take(const gb_sampler *s, gb_measurement *m, gb_sample *out, gb_err *err)
{
    *out = (gb_sample){0};
    int rc = s->sample(s->ctx, out, err);
    m->timer_ms += out->timer_ms;
    m->n_lost += out->n_lost;
    return rc;
}

/* A GPU another measurement left steady moments ago needs no warm-up but the
 * kernel's first launch, if the clock is still where it was. */
static bool warm_already(const gb_sampler *s, const gb_measure_opts *o, double now_ms)
{
    const gb_warmth *w = s->warmth;
    return w && w->steady_mhz > 0 && now_ms - w->ended_ms <= o->rewarm_after_ms;
}

/* What a measurement leaves the next, at the end of its warm-up and again at its
 * end: the steady clock it found, and when. */
static void leave_warmth(const gb_sampler *s, const gb_measurement *m)
{
    if (!s->warmth) return;
    s->warmth->steady_mhz = m->clock_steady ? m->steady_clock_mhz : 0;
    s->warmth->ended_ms = s->now_ms(s->ctx);
}

static bool clock_near(double mhz, double steady_mhz, double tolerance)
{
    return mhz <= 0 || fabs(mhz - steady_mhz) <= tolerance * steady_mhz;
}

static int warm_up(const gb_sampler *s, const gb_measure_opts *o, gb_measurement *m, gb_err *err)
{
    double start = s->now_ms(s->ctx);
    bool warm = warm_already(s, o, start);
    warm_ring ring;
    for (;;) {
        gb_sample sample;
        double began = s->now_ms(s->ctx);
        int rc = take(s, m, &sample, err);
        if (rc) return rc;
        if (warm && m->n_warmup == 0 &&
            clock_near(sample.clock_mhz, s->warmth->steady_mhz, o->clock_tolerance)) {
            m->n_warmup = 1;
            m->clock_steady = true;
            m->steady_clock_mhz = s->warmth->steady_mhz;
            m->warmup_ms = s->now_ms(s->ctx) - start;
            leave_warmth(s, m);
            return GB_OK;
        }
        ring.clock_mhz[m->n_warmup % STEADY_WINDOW] = sample.clock_mhz;
        ring.began_ms[m->n_warmup % STEADY_WINDOW] = began;
        m->n_warmup++;
        double now = s->now_ms(s->ctx), elapsed = now - start;
        int window = steady_window(&ring, m->n_warmup, now, o->warmup_ms);
        m->clock_steady = window > 0 && clock_settled(&ring, m->n_warmup, window,
                                                      o->clock_tolerance, &m->steady_clock_mhz);
        if ((elapsed >= o->warmup_ms && m->clock_steady) || elapsed >= o->warmup_max_ms) {
            if (!m->clock_steady) m->steady_clock_mhz = 0; /* none to leave the next one */
            m->warmup_ms = elapsed;
            leave_warmth(s, m);
            return GB_OK;
        }
    }
}

/* ---- other processes --------------------------------------------------------- */

static int others_now(const gb_sampler *s)
{
    return s->other_processes ? s->other_processes(s->ctx) : -1;
}

/* Notes what the look before (or after) the samples saw. */
static void note_others(gb_measurement *m, int others)
{
    if (others <= 0) return;
    m->contended = true;
    if (others > m->n_other_procs) m->n_other_procs = others;
}

/* ---- sampling ------------------------------------------------------------ */

typedef struct state {
    const gb_sampler *sampler;
    gb_measurement *m;
    int n_kept;
    int next_check;
    double start_ms;
    bool done;
    double *switch_ms; /* race: the samples set apart, n_switch of them */
    int switch_cap;
} state;

static bool is_throttled(const gb_sampler *s, const gb_sample *sample, const gb_measure_opts *o)
{
    return s->peak_clock_mhz > 0 && sample->clock_mhz > 0 &&
           sample->clock_mhz < s->peak_clock_mhz * o->throttle_threshold;
}

/* Whether the kept samples already know the median to the target. */
static bool converged(state *st, const gb_measure_opts *o)
{
    if (st->n_kept < o->min_samples || st->n_kept < st->next_check) return false;
    st->next_check =
        st->n_kept < CHECK_EVERY_UNTIL ? st->n_kept + 1 : st->n_kept + st->n_kept / CHECK_SPACING;
    if (gb_measurement_summarise(st->m) != GB_OK) return false;
    return gb_stats_rel_ci(&st->m->stats) <= o->noise;
}

/* Takes one sample for st and decides whether it is done. */
static int step(state *st, const gb_measure_opts *o, double cap_ms, gb_err *err)
{
    gb_measurement *m = st->m;
    gb_sample s;
    int rc = take(st->sampler, m, &s, err);
    if (rc) return rc;
    int i = m->n_samples++;
    m->samples_ms[i] = s.ms;
    m->clock_mhz[i] = s.clock_mhz;
    m->throttled[i] = is_throttled(st->sampler, &s, o);
    if (m->throttled[i] && st->sampler->throttle_reasons)
        m->throttle_reasons |=
            (int64_t)(st->sampler->throttle_reasons(st->sampler->ctx) & INT64_MAX);
    st->n_kept += !m->throttled[i];
    double elapsed = st->sampler->now_ms(st->sampler->ctx) - st->start_ms;
    if (converged(st, o))
        st->done = true;
    else if (m->n_samples >= o->max_samples || elapsed >= cap_ms)
        st->done = m->capped = true;
    return GB_OK;
}

/* Race: a sample that follows another variant's, set apart from the statistics. */
static int step_apart(state *st, gb_err *err)
{
    gb_measurement *m = st->m;
    gb_sample s;
    int rc = take(st->sampler, m, &s, err);
    if (rc == GB_OK && m->n_switch < st->switch_cap) st->switch_ms[m->n_switch++] = s.ms;
    return rc;
}

static void note_switches(state *st)
{
    gb_measurement *m = st->m;
    if (m->n_switch < 1) return;
    qsort(st->switch_ms, (size_t)m->n_switch, sizeof *st->switch_ms, compare_doubles);
    m->switch_ms = gb_stats_quantile(st->switch_ms, m->n_switch, 0.5);
}

static int finish(state *st, const gb_measure_opts *o, gb_err *err)
{
    gb_measurement *m = st->m;
    m->wall_ms = st->sampler->now_ms(st->sampler->ctx) - st->start_ms;
    note_switches(st);
    leave_warmth(st->sampler, m);
    if (gb_measurement_summarise(m) != GB_OK) return gb_err_set(err, GB_ENOMEM, "out of memory");
    /* The rule is checked only now and then on long runs: a stop by the cap whose
     * samples did reach the target is no cap. */
    if (m->capped && m->stats.n >= o->min_samples && gb_stats_rel_ci(&m->stats) <= o->noise)
        m->capped = false;
    return GB_OK;
}

static int begin(const gb_sampler *s, const gb_measure_opts *o, gb_measurement *m, state *st,
                 gb_err *err)
{
    memset(m, 0, sizeof *m);
    m->mode = o->mode;
    m->launches_per_sample = 1;
    m->timer = s->timer == GB_TIMER_CUPTI ? GB_TIMER_CUPTI : GB_TIMER_EVENTS;
    *st = (state){.sampler = s, .m = m};
    int rc = gb_measure_check(o, err);
    if (rc) return rc;
    /* Storage for as many samples as can be taken: at most max_samples. */
    int cap = o->max_samples < 1 << 20 ? o->max_samples : 1 << 20;
    if (reserve(m, cap) != GB_OK) return gb_err_set(err, GB_ENOMEM, "out of memory");
    return warm_up(s, o, m, err);
}

int gb_measure_run(const gb_sampler *s, const gb_measure_opts *o, gb_measurement *out, gb_err *err)
{
    state st;
    gb_measure_opts opts = *o;
    if (opts.max_samples > 1 << 20) opts.max_samples = 1 << 20;
    int rc = begin(s, &opts, out, &st, err), before = rc == GB_OK ? others_now(s) : -1;
    st.start_ms = s->now_ms(s->ctx);
    while (rc == GB_OK && !st.done)
        rc = step(&st, &opts, opts.max_ms, err);
    if (rc == GB_OK) rc = finish(&st, &opts, err);
    if (rc == GB_OK) {
        note_others(out, before);
        note_others(out, others_now(s));
    }
    if (rc) gb_measurement_free(out);
    return rc;
}

/* Room for the race's samples set apart: one per turn at most. */
static int make_room_apart(state *st, const gb_measure_opts *o, gb_err *err)
{
    st->switch_cap = o->max_samples;
    st->switch_ms = malloc((size_t)st->switch_cap * sizeof *st->switch_ms);
    return st->switch_ms ? GB_OK : gb_err_set(err, GB_ENOMEM, "out of memory");
}

/* One variant's turn in the race: a sample set apart when another variant's
 * launch came just before, then GB_RACE_TURN samples that count. A variant
 * whose turn comes after the cap has passed stops there (capped), so that no
 * sample that follows another variant's is ever counted. */
static int turn(state *st, bool after_another, const gb_measure_opts *o, double cap_ms, gb_err *err)
{
    double elapsed = st->sampler->now_ms(st->sampler->ctx) - st->start_ms;
    if (elapsed >= cap_ms && st->m->n_samples > 0) {
        st->done = st->m->capped = true;
        return GB_OK;
    }
    int rc = after_another ? step_apart(st, err) : GB_OK;
    for (int k = 0; rc == GB_OK && k < GB_RACE_TURN && !st->done; k++)
        rc = step(st, o, cap_ms, err);
    return rc;
}

int gb_measure_race(const gb_sampler *samplers, int n, const gb_measure_opts *o,
                    gb_measurement *out, gb_err *err)
{
    if (n < 1) return gb_err_set(err, GB_EINVAL, "a race needs at least one variant");
    memset(out, 0, (size_t)n * sizeof *out); /* so a failure part-way frees only what was made */
    state *st = calloc((size_t)n, sizeof *st);
    if (!st) return gb_err_set(err, GB_ENOMEM, "out of memory");
    gb_measure_opts opts = *o;
    if (opts.max_samples > 1 << 20) opts.max_samples = 1 << 20;
    int rc = GB_OK, left = n;
    for (int i = 0; rc == GB_OK && i < n; i++)
        if ((rc = begin(&samplers[i], &opts, &out[i], &st[i], err)) == GB_OK)
            rc = make_room_apart(&st[i], &opts, err);
    /* The variants share the GPU and the time: one look before and one after. */
    int before = rc == GB_OK ? others_now(&samplers[0]) : -1;
    /* One shared cap: each variant's clock starts now, and all stop by n * max_ms. */
    double start = samplers[0].now_ms(samplers[0].ctx), cap = n * opts.max_ms;
    for (int i = 0; i < n; i++)
        st[i].start_ms = start;
    int last = n - 1; /* the variant whose launch came last: the last to warm up */
    while (rc == GB_OK && left > 0) {
        for (int i = 0; rc == GB_OK && i < n; i++) {
            if (st[i].done) continue;
            int taken = out[i].n_samples + out[i].n_switch;
            rc = turn(&st[i], i != last, &opts, cap, err);
            if (out[i].n_samples + out[i].n_switch > taken) last = i; /* it launched */
            left -= st[i].done;
        }
    }
    for (int i = 0; rc == GB_OK && i < n; i++)
        rc = finish(&st[i], &opts, err);
    int after = rc == GB_OK ? others_now(&samplers[0]) : -1;
    for (int i = 0; rc == GB_OK && i < n; i++) {
        note_others(&out[i], before);
        note_others(&out[i], after);
    }
    if (rc)
        for (int i = 0; i < n; i++)
            gb_measurement_free(&out[i]);
    for (int i = 0; i < n; i++)
        free(st[i].switch_ms);
    free(st);
    return rc;
}
