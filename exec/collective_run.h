/*
 * Running the collectives (engine/collective.h) in a child process.
 *
 * A collective that never completes blocks in the driver for good, so the GPUs
 * belong to a child: this same program started with "--collective"
 * (gb_collective_main, exec/collective_worker.c), supervised by exec/child.h like
 * the tuner's worker. The parent (gb_collective_run, exec/collective_run.c) sends
 * it the request and reads one JSON line per step, each under a deadline
 * (exec/collective_lines.c).
 */
#ifndef GB_EXEC_COLLECTIVE_RUN_H
#define GB_EXEC_COLLECTIVE_RUN_H

#include "base/error.h"
#include "base/json.h"
#include "base/wire.h"
#include "engine/collective.h"
#include "exec/child.h"

#include <stddef.h>

/* ---- running it ---------------------------------------------------------- */

typedef struct gb_collective_opts {
    const char *exe;        /* started with "--collective"; NULL: this program */
    double step_timeout_s;  /* each (dtype, size): check, warm-up, samples (default 60) */
    double setup_timeout_s; /* driver, NCCL, communicators, buffers (default 120) */
} gb_collective_opts;

/* Checks the request (gb_collective_check), starts the child with NCCL_NVLS_ENABLE=0
 * in its environment unless req->nvls, and collects its rows into out (the
 * caller's; gb_collective_result_free). Errors, with out holding the rows that
 * finished before:
 *   GB_EINVAL      the request, or GPUs that do not exist (the child's word)
 *   GB_ENODRIVER   no CUDA driver, or no NCCL (one sentence naming the library)
 *   GB_ENOGPU      a driver but no GPU
 *   GB_ETIMEOUT    a step or the set-up missed its deadline; the child was killed
 *   GB_EFAULT      the child died (its signal or exit status is named)
 *   GB_EINTR       gb_interrupted() became true; the child was killed
 *   GB_ECUDA, ...  a CUDA or NCCL call failed in the child (the call is named)
 *   GB_EPROTO      the child sent something that does not read
 * Every message names the step ("all_reduce bf16 1 GiB on GPUs 0,1: ..."). */
int gb_collective_run(const gb_collective_opts *opts, const gb_collective_request *req,
                      gb_collective_result *out, gb_err *err);

/* The child: reads the request from fd, answers on it and returns the process's
 * exit status (0 when every step was sent). */
int gb_collective_main(int fd);

/* ---- the child's lines ----------------------------------------------------- */

/* One JSON object per line, {"<kind>": payload}: the parent sends "request"
 * (gb_wire_collective_request); the child answers "ready", then one "row" per
 * step, then "done" ({}), or "error" (exec/proto.h's gb_proto_error) at any
 * point, after which it exits. Exposed for the tests' stand-in child. */

/* Writes {"<kind>": obj encoded by t} and a newline (t NULL: {}). */
int gb_collective_send(int fd, const char *kind, const gb_wire_type *t, const void *obj,
                       gb_err *err);

typedef struct gb_collective_reader {
    int fd;
    char *buf;
    size_t len, cap;
} gb_collective_reader;

/* Reads the next line as {"<kind>": payload}; *out_kind points into *out (the
 * caller's reference, json_decref). deadline_ms as exec/proto.h's gb_proto_recv:
 * an absolute gb_now_ms() time, < 0 for none. GB_ETIMEOUT, GB_EINTR (Ctrl-C),
 * GB_ECLOSED (end of file), GB_EPROTO (not such a line, or over 1 MiB). */
int gb_collective_recv(gb_collective_reader *r, double deadline_ms, json_t **out,
                       const char **out_kind, const json_t **out_payload, gb_err *err);

void gb_collective_reader_free(gb_collective_reader *r);

#endif
