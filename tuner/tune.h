/*
 * The tuning loop: for each shape, enumerate the kernel's configuration space,
 * compile every accepted configuration (ahead of the GPU, through the compiler
 * pool), check and time it on the executor, record each trial in the cache as it
 * finishes, and keep the fastest correct configuration as the shape's best.
 *
 * The tuner knows nothing of Lua: the script's functions reach it as hooks. A hook
 * that fails returns GB_ESCRIPT with the script's file:line in the message; that
 * stops the run (it is a bug in the script, not in a variant).
 *
 * Only one process measures on a GPU at a time: before a run first touches the
 * GPU for a shape it must measure, it claims the GPU (gb_gpu_claim: the
 * session's lease, session/session.h), which the session keeps until it ends. A measurement that
 * still saw another process on the GPU (contended, engine/measure.h) is measured again once after a
 * pause; a best whose race stays contended is reported as such and never stored.
 */
#ifndef GB_TUNER_TUNE_H
#define GB_TUNER_TUNE_H

#include "base/error.h"
#include "tuner/kernel.h"
#include "tuner/opts.h"
#include "tuner/result.h"

/* Tunes kernel over the request's shapes. Returns GB_OK when the run completed
 * (shapes may still have failed: see failure and has_best); GB_ESCRIPT for a
 * script error, GB_ENODRIVER / GB_ENOGPU when timing is impossible, GB_EINTR when
 * interrupted: out then holds what finished, every finished trial is in the cache,
 * and a rerun resumes from there. */
int gb_tune(const gb_tuner_opts *opts, const gb_kernel_def *kernel, const gb_tune_request *req,
            gb_tune_result *out, gb_err *err);

/* Calls the script's hooks for every shape and (up to 100000 in all) every
 * accepted configuration, without compiling or touching the GPU, so that a bug in
 * the script stops the run before anything starts. GB_ESCRIPT with the script's
 * line on failure. gb_tune does not call it: the front end does, before it opens
 * the GPU. */
int gb_tune_check(const gb_kernel_def *kernel, const gb_tune_request *req, gb_err *err);

#endif
