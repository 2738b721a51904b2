/*
 * A stand-in for the GPU worker (exec/worker.c) that needs no GPU and misbehaves
 * on request, so tests/test_worker.c can pin what the supervisor
 * (exec/supervisor.c) makes of a worker that crashes, hangs, talks garbage or
 * reports a fault.
 *
 * Run as `fake_worker --worker`, it serves exec/proto.h on fd 3: OPEN gets a
 * fake device, PROBLEM and REFERENCE get OK once their fields read back, and TRIAL
 * gets an ok result whose samples all equal launch.grid[0] milliseconds (and
 * phases: a warm-up of twice that, fixed load and check times). Each
 * ordinal is a GPU of its own: its UUID and PCI bus id end in the ordinal.
 *
 * GB_FAKE_WORKER lists misbehaviours, comma-separated (see `options` below).
 * GB_FAKE_STATE names a file to which every message received is appended as a
 * line (OPEN, PROBLEM, REFERENCE, TRIAL, QUIT). Trials are numbered from that
 * file, so the count goes on across the workers the supervisor restarts; without
 * it no trial misbehaves. Each worker writes its pid to GB_FAKE_STATE.pid.
 */
#include "exec/proto.h"

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
    int others; /* other processes every measurement sees on the GPU (contended when > 0) */
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
        {"others", &bad.others, true},
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

/* Sends a message of the given type with its payload struct (a lost parent shows
 * up as end of file on the next read, so errors are not looked at here). */
static void reply(gb_msg_type type, const void *payload)
{
    gb_err ignored;
    if (!bad.bad_version) {
        gb_proto_send(WORKER_FD, type, payload, NULL, 0, &ignored);
        return;
    }
    const gb_wire_type *t = gb_proto_payload(type);
    json_t *json = t ? gb_wire_encode(t, payload) : json_object();
    char *text = gb_json_dump(json, false);
    json_decref(json);
    if (!text) return;
    uint32_t json_bytes = (uint32_t)strlen(text);
    uint8_t header[GB_PROTO_HEADER_BYTES] = {'G', 'B', 'W', 'P', 0, 99, 0, (uint8_t)type};
    for (int i = 0; i < 4; i++) /* the JSON length, big-endian; no blob */
        header[8 + i] = (uint8_t)(json_bytes >> (24 - 8 * i));
    write_raw(header, sizeof header);
    write_raw(text, json_bytes);
    free(text);
}

static int reply_ok(void)
{
    reply(GB_MSG_OK, NULL);
    return SERVE_ON;
}

static int reply_error(int code, const char *message)
{
    gb_proto_error e = {.code = code};
    snprintf(e.message, sizeof e.message, "%s", message);
    reply(GB_MSG_ERROR, &e);
    return SERVE_ON;
}

/* ---- requests ----------------------------------------------------------- */

static int on_open(const gb_msg *m)
{
    if (bad.exit_on_open >= 0) return bad.exit_on_open;
    if (bad.no_gpu)
        return reply_error(GB_ENODRIVER, "no CUDA driver: libcuda.so.1 could not be loaded");
    gb_proto_open open;
    gb_err err;
    if (gb_proto_decode(m, &open, &err)) return reply_error(err.code, err.msg);
    gb_device_info device = {
        .ordinal = open.ordinal,
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
    /* One fake GPU per ordinal: each its own UUID (so its own lease) and bus id. */
    snprintf(device.uuid, sizeof device.uuid, "GPU-00000000-0000-0000-0000-%012d",
             open.ordinal % 1000000);
    snprintf(device.pci_bus_id, sizeof device.pci_bus_id, "0000:%02X:00.0",
             (0x3B + open.ordinal) % 256);
    reply(GB_MSG_DEVICE, &device);
    return SERVE_ON;
}

/* Reads a request's payload, or answers with why it does not read. */
static bool decoded(const gb_msg *m, void *payload)
{
    gb_err err = {0};
    if (gb_proto_decode(m, payload, &err) == GB_OK) return true;
    reply_error(err.code, err.msg);
    return false;
}

static int on_problem(const gb_msg *m)
{
    gb_proto_problem problem;
    return decoded(m, &problem) ? reply_ok() : SERVE_ON;
}

static int on_reference(const gb_msg *m)
{
    gb_proto_variant ref;
    if (!decoded(m, &ref)) return SERVE_ON;
    gb_proto_free(GB_MSG_REFERENCE, &ref);
    return m->blob_bytes ? reply_ok() : reply_error(GB_EPROTO, "a variant needs a cubin");
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
                            .clock_steady = true,
                            .contended = bad.others > 0,
                            .n_other_procs = bad.others};
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
    /* Phases that add up the way a real session's do: the samples are the
     * measurement's wall time, the kernel all of it, the session a little more. */
    result.phases = (gb_trial_phases){.load_ms = 0.25,
                                      .check_ms = 0.5,
                                      .warmup_ms = 2 * launch->grid[0],
                                      .sample_ms = result.measurement.wall_ms,
                                      .kernel_ms = result.measurement.wall_ms};
    result.phases.session_ms =
        0.25 + 0.5 + 2 * launch->grid[0] + result.measurement.wall_ms + 0.125;
    reply(GB_MSG_RESULT, &result);
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
    gb_proto_trial request;
    if (!decoded(m, &request)) return SERVE_ON;
    gb_launch launch = request.variant.launch;
    gb_proto_free(GB_MSG_TRIAL, &request);
    return m->blob_bytes ? answer_trial(&launch) : reply_error(GB_EPROTO, "a trial needs a cubin");
}

/* RACE: a measurement per variant, each as a trial of it would give. */
static int on_race(const gb_msg *m)
{
    gb_proto_race race;
    if (!decoded(m, &race)) return SERVE_ON;
    static double samples_ms[GB_MAX_RACE][N_SAMPLES], clocks[GB_MAX_RACE][N_SAMPLES];
    static bool throttled[GB_MAX_RACE][N_SAMPLES];
    gb_proto_raced raced = {.n_measurements = race.n_variants};
    for (int i = 0; i < race.n_variants; i++)
        raced.measurements[i] = fake_measurement(&race.variants[i].variant.launch, samples_ms[i],
                                                 clocks[i], throttled[i]);
    gb_proto_free(GB_MSG_RACE, &race);
    reply(GB_MSG_RACED, &raced);
    return SERVE_ON;
}

static int serve(const gb_msg *m)
{
    record(gb_msg_type_name(m->type));
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
