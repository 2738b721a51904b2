/*
 * A stand-in for the GPU worker (engine/worker.c) that needs no GPU and misbehaves
 * on request, so tests/test_worker.c can pin what the supervisor
 * (engine/exec_worker.c) makes of a worker that crashes, hangs, talks garbage or
 * reports a fault.
 *
 * Run as `fake_worker --worker`, it serves engine/proto.h on fd 3: OPEN gets a
 * fake device, PROBLEM and REFERENCE get OK once their fields read back, and TRIAL
 * gets an ok result whose samples all equal launch.grid[0] milliseconds.
 *
 * GB_FAKE_WORKER lists misbehaviours, comma-separated (see `options` below).
 * GB_FAKE_STATE names a file to which every message received is appended as a
 * line (OPEN, PROBLEM, REFERENCE, TRIAL, QUIT). Trials are numbered from that
 * file, so the count goes on across the workers the supervisor restarts; without
 * it no trial misbehaves. Each worker writes its pid to GB_FAKE_STATE.pid.
 */
#include "engine/proto.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#define WORKER_FD 3
#define N_SAMPLES 10
#define SERVE_ON  -1 /* what a handler returns to keep serving; else the exit status */

/* Trial numbers count from 1; 0 means never. */
static struct {
    int crash_on_trial, hang_on_trial, garbage_on_trial, fault_on_trial, wrong_type_on_trial;
    int exit_on_open; /* -1: answer OPEN */
    int no_gpu, bad_version;
} bad = {.exit_on_open = -1};

static const char *state_path;

static int parse_misbehaviour(const char *spec)
{
    const struct {
        const char *name;
        int *value;
        bool takes_number;
    } options[] = {
        {"crash_on_trial", &bad.crash_on_trial, true},
        {"hang_on_trial", &bad.hang_on_trial, true},
        {"garbage_on_trial", &bad.garbage_on_trial, true},
        {"fault_on_trial", &bad.fault_on_trial, true},
        {"wrong_type_on_trial", &bad.wrong_type_on_trial, true},
        {"exit_on_open", &bad.exit_on_open, true},
        {"no_gpu", &bad.no_gpu, false},
        {"bad_version", &bad.bad_version, false},
    };
    const size_t n_options = sizeof options / sizeof *options;
    char *copy = strdup(spec), *save = NULL;
    int rc = 0;
    if (!copy) return -1;
    for (char *item = strtok_r(copy, ",", &save); item && rc == 0;
         item = strtok_r(NULL, ",", &save)) {
        char *number = strchr(item, '=');
        if (number) *number++ = '\0';
        size_t i = 0;
        while (i < n_options && strcmp(options[i].name, item) != 0)
            i++;
        /* A typo in a test must fail loudly, not quietly run a healthy worker. */
        if (i == n_options || options[i].takes_number != (number != NULL)) {
            fprintf(stderr, "fake_worker: GB_FAKE_WORKER: cannot read '%s'\n", item);
            rc = -1;
        } else {
            *options[i].value = number ? atoi(number) : 1;
        }
    }
    free(copy);
    return rc;
}

/* ---- the state file ----------------------------------------------------- */

static void record(const char *line)
{
    FILE *f = state_path ? fopen(state_path, "a") : NULL;
    if (!f) return;
    fprintf(f, "%s\n", line);
    fclose(f);
}

static int count_records(const char *line)
{
    FILE *f = state_path ? fopen(state_path, "r") : NULL;
    char text[64];
    int n = 0;
    while (f && fgets(text, sizeof text, f)) {
        text[strcspn(text, "\n")] = '\0';
        n += strcmp(text, line) == 0;
    }
    if (f) fclose(f);
    return n;
}

static void write_pid(void)
{
    char path[4096];
    if (!state_path) return;
    snprintf(path, sizeof path, "%s.pid", state_path);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "%ld\n", (long)getpid());
    fclose(f);
}

/* ---- replies ------------------------------------------------------------ */

static void write_raw(const void *bytes, size_t n)
{
    const char *p = bytes;
    ssize_t done;
    while (n > 0 && (done = write(WORKER_FD, p, n)) > 0) {
        p += done;
        n -= (size_t)done;
    }
}

/* Sends json as a message of the given type (a lost parent shows up as end of
 * file on the next read, so errors are not looked at here). */
static void reply(gb_msg_type type, const char *json)
{
    gb_err ignored;
    if (!bad.bad_version) {
        gb_proto_send(WORKER_FD, type, json, NULL, 0, &ignored);
        return;
    }
    uint32_t json_bytes = (uint32_t)strlen(json);
    uint8_t header[GB_PROTO_HEADER_BYTES] = {'G', 'B', 'W', 'P', 0, 99, 0, (uint8_t)type};
    for (int i = 0; i < 4; i++) /* the JSON length, big-endian; no blob */
        header[8 + i] = (uint8_t)(json_bytes >> (24 - 8 * i));
    write_raw(header, sizeof header);
    write_raw(json, json_bytes);
}

/* Sends what the writer built and frees it. */
static void reply_built(gb_msg_type type, gb_strbuf *json)
{
    reply(type, gb_sb_str(json));
    gb_sb_free(json);
}

static int reply_ok(void)
{
    reply(GB_MSG_OK, "{}");
    return SERVE_ON;
}

static int reply_error(int code, const char *message)
{
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &json, false);
    gb_jw_obj_begin(&w);
    gb_jw_key(&w, "code");
    gb_jw_int(&w, code);
    gb_jw_key(&w, "message");
    gb_jw_str(&w, message);
    gb_jw_obj_end(&w);
    reply_built(GB_MSG_ERROR, &json);
    return SERVE_ON;
}

/* ---- requests ----------------------------------------------------------- */

static int on_open(const gb_msg *m)
{
    if (bad.exit_on_open >= 0) return bad.exit_on_open;
    if (bad.no_gpu)
        return reply_error(GB_ENODRIVER, "no CUDA driver: libcuda.so.1 could not be loaded");
    gb_device_info device = {
        .ordinal = (int)gb_json_num(gb_json_get(m->json, "ordinal"), 0),
        .cc_major = 9,
        .cc_minor = 0,
        .sms = 7,
        .smem_per_block_optin = 232448,
        .smem_per_sm = 233472,
        .regs_per_sm = 65536,
        .max_threads_per_block = 1024,
        .l2_bytes = 50331648,
        .mem_bytes = 85520809984,
        .mem_clock_khz = 2619000,
        .bus_width_bits = 5120,
        .sm_clock_khz = 1980000,
        .peak_gbps = 3352.3,
        .driver_version = 13000,
    };
    strcpy(device.name, "Fake GPU");
    strcpy(device.arch, "sm_90a");
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &json, false);
    gb_proto_write_device(&w, &device);
    reply_built(GB_MSG_DEVICE, &json);
    return SERVE_ON;
}

static int on_problem(const gb_msg *m)
{
    gb_arg args[GB_MAX_ARGS];
    int n_args = 0;
    uint64_t seed = 0;
    gb_err err = {0};
    int rc = gb_proto_read_args(gb_json_get(m->json, "args"), args, &n_args, &err);
    if (rc == GB_OK && gb_proto_read_u64(gb_json_get(m->json, "seed"), &seed))
        rc = gb_err_set(&err, GB_EPROTO, "PROBLEM needs a seed");
    return rc ? reply_error(rc, err.msg) : reply_ok();
}

/* The launch of a REFERENCE or TRIAL, which must also carry a name and a cubin. */
static int read_variant(const gb_msg *m, gb_launch *launch, gb_err *err)
{
    if (!gb_json_str(gb_json_get(m->json, "name"), NULL) || !m->blob_bytes)
        return gb_err_set(err, GB_EPROTO, "a variant needs a name and a cubin");
    return gb_proto_read_launch(gb_json_get(m->json, "launch"), launch, err);
}

static int on_reference(const gb_msg *m)
{
    gb_launch launch;
    gb_err err = {0};
    int rc = read_variant(m, &launch, &err);
    return rc ? reply_error(rc, err.msg) : reply_ok();
}

/* A constant measurement of grid[0] milliseconds at a steady 1980 MHz. */
static gb_measurement fake_measurement(const gb_launch *launch, double *samples_ms, double *clocks,
                                       bool *throttled)
{
    for (int i = 0; i < N_SAMPLES; i++) {
        samples_ms[i] = launch->grid[0];
        clocks[i] = 1980;
        throttled[i] = false;
    }
    return (gb_measurement){.samples_ms = samples_ms,
                            .clock_mhz = clocks,
                            .throttled = throttled,
                            .n_samples = N_SAMPLES,
                            .wall_ms = N_SAMPLES * samples_ms[0],
                            .launches_per_sample = 1,
                            .steady_clock_mhz = 1980,
                            .clock_steady = true};
}

static int answer_trial(const gb_launch *launch)
{
    double samples_ms[N_SAMPLES], clocks[N_SAMPLES];
    bool throttled[N_SAMPLES];
    gb_trial_result result = {
        .status = GB_TRIAL_OK,
        .check = {.checked = true,
                  .n_compared = 1024,
                  .first_bad_output = -1,
                  .first_bad_index = -1},
        .measurement = fake_measurement(launch, samples_ms, clocks, throttled),
    };
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &json, false);
    gb_proto_write_result(&w, &result);
    reply_built(GB_MSG_RESULT, &json);
    return SERVE_ON;
}

static int on_trial(const gb_msg *m, int trial)
{
    if (trial == bad.crash_on_trial) {
        signal(SIGSEGV, SIG_DFL); /* die by the signal, past any sanitizer's handler */
        raise(SIGSEGV);
    }
    while (trial == bad.hang_on_trial)
        pause();
    if (trial == bad.garbage_on_trial) {
        char junk[64];
        memset(junk, '?', sizeof junk);
        write_raw(junk, sizeof junk);
        return SERVE_ON;
    }
    if (trial == bad.fault_on_trial) {
        reply_error(GB_EFAULT, "cuStreamSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal "
                               "memory access was encountered");
        return 3;
    }
    if (trial == bad.wrong_type_on_trial) return reply_ok();
    gb_launch launch;
    gb_check_spec check;
    gb_measure_opts opts;
    gb_err err = {0};
    int rc = read_variant(m, &launch, &err);
    if (rc == GB_OK) rc = gb_proto_read_check(gb_json_get(m->json, "check"), &check, &err);
    if (rc == GB_OK) rc = gb_proto_read_measure(gb_json_get(m->json, "measure"), &opts, &err);
    return rc ? reply_error(rc, err.msg) : answer_trial(&launch);
}

/* RACE: a measurement per variant, each as a trial of it would give. */
static int on_race(const gb_msg *m)
{
    const gb_json *variants = gb_json_get(m->json, "variants");
    int n = (int)gb_json_len(variants);
    gb_strbuf json = GB_STRBUF_INIT;
    gb_jw w;
    gb_jw_init(&w, &json, false);
    gb_jw_obj_begin(&w);
    gb_jw_key(&w, "measurements");
    gb_jw_arr_begin(&w);
    for (int i = 0; i < n; i++) {
        gb_launch launch;
        gb_err err;
        double samples_ms[N_SAMPLES], clocks[N_SAMPLES];
        bool throttled[N_SAMPLES];
        if (gb_proto_read_launch(gb_json_get(gb_json_at(variants, (size_t)i), "launch"), &launch,
                                 &err) != GB_OK) {
            gb_sb_free(&json);
            return reply_error(GB_EPROTO, err.msg);
        }
        gb_measurement ms = fake_measurement(&launch, samples_ms, clocks, throttled);
        gb_proto_write_measurement(&w, &ms);
    }
    gb_jw_arr_end(&w);
    gb_jw_obj_end(&w);
    reply_built(GB_MSG_RACED, &json);
    return SERVE_ON;
}

static int serve(const gb_msg *m)
{
    static const char *const names[GB_MSG_TYPE_END] = {
        [GB_MSG_OPEN] = "OPEN",   [GB_MSG_PROBLEM] = "PROBLEM", [GB_MSG_REFERENCE] = "REFERENCE",
        [GB_MSG_TRIAL] = "TRIAL", [GB_MSG_QUIT] = "QUIT",       [GB_MSG_RACE] = "RACE",
    };
    record(names[m->type] ? names[m->type] : "OTHER");
    switch (m->type) {
    case GB_MSG_OPEN:
        return on_open(m);
    case GB_MSG_PROBLEM:
        return on_problem(m);
    case GB_MSG_REFERENCE:
        return on_reference(m);
    case GB_MSG_TRIAL: /* -1 without a state file: no trial number, so no misbehaviour */
        return on_trial(m, state_path ? count_records("TRIAL") : -1);
    case GB_MSG_RACE:
        return on_race(m);
    case GB_MSG_QUIT:
        return 0;
    default:
        return reply_error(GB_EPROTO, "unexpected message type");
    }
}

int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(argv[1], "--worker") != 0) {
        fprintf(stderr, "usage: fake_worker --worker (with the socket on fd 3)\n");
        return 2;
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test that started it */
    const char *spec = getenv("GB_FAKE_WORKER");
    if (spec && parse_misbehaviour(spec)) return 2;
    state_path = getenv("GB_FAKE_STATE");
    write_pid();
    int status = SERVE_ON;
    while (status == SERVE_ON) {
        gb_msg m;
        gb_err err;
        int rc = gb_proto_recv(WORKER_FD, -1, &m, &err);
        if (rc) {
            if (rc != GB_ECLOSED) fprintf(stderr, "fake_worker: %s\n", err.msg);
            return rc == GB_ECLOSED ? 0 : 2;
        }
        status = serve(&m);
        gb_msg_free(&m);
    }
    return status;
}
