/*
 * The compile target (--arch) and what a block may ask of it, known without a GPU.
 *
 * A target is named as NVRTC takes it: sm_XY for compute capability X.Y (sm_80,
 * sm_120), sm_XYa for its architecture-specific features (runs on X.Y only) or
 * sm_XYf for its family's features. gb_arch_validate checks a name against the
 * NVRTC in use, before anything is compiled, and says what that NVRTC supports.
 * gb_arch_limits_for gives the per-block limits NVIDIA's programming guide lists
 * for the capability; gb_arch_check compares a variant's launch and its compiled
 * resources with them, so a variant that could never launch is found by
 * --compile-only, with a reason, instead of failing later on the GPU.
 */
#ifndef GB_ENGINE_ARCH_H
#define GB_ENGINE_ARCH_H

#include "base/error.h"
#include "engine/device.h"
#include "engine/nvrtc.h"
#include "engine/spec.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A parsed target name. */
typedef struct gb_arch {
    int cc;      /* major * 10 + minor: 90 for sm_90a, 121 for sm_121 */
    char suffix; /* '\0', 'a' (architecture-specific) or 'f' (family-specific) */
} gb_arch;

/* Parses "sm_90", "sm_90a", "sm_100f". GB_EINVAL, with a message that says what
 * a target looks like, for anything else (a virtual compute_XY target included:
 * gpubench needs a cubin). Checks the form only, not that NVRTC supports it. */
int gb_arch_parse(const char *name, gb_arch *out, gb_err *err);

/* Whether the NVRTC in use compiles for name: the capability must be in NVRTC's
 * own list (nvrtcGetSupportedArchs), and a suffixed target must be accepted by
 * NVRTC itself (an empty program compiled for it, a few tens of ms). GB_EINVAL
 * otherwise, with a message listing every target this NVRTC supports; GB_ENVRTC
 * if NVRTC cannot say. */
int gb_arch_validate(const char *name, gb_err *err);

/* Writes "sm_75 sm_80 ... sm_90 sm_90a sm_100 sm_100a sm_100f ..." (every target
 * the NVRTC in use compiles for) into out. Probes the suffixed ones: about half a
 * second, meant for error messages. */
void gb_arch_supported(char *out, size_t out_bytes);

/* What one block may use on a target. -1 where the guide gives no figure for the
 * capability (a capability newer than this table): that limit is not checked. */
typedef struct gb_arch_limits {
    char arch[16]; /* the target's name, for messages: "sm_90a" */
    int cc;
    int64_t max_threads_per_block;
    int64_t max_block[3]; /* x, y, z */
    int64_t max_grid[3];
    int64_t smem_static_max_bytes; /* __shared__ arrays: beyond, it must be dynamic */
    int64_t smem_optin_max_bytes;  /* static + dynamic, after the opt-in the engine does */
    int64_t regs_per_thread_max;
    int64_t regs_per_block_max;
} gb_arch_limits;

/* The limits of the target named arch (see gb_arch_parse for the form; NVRTC is
 * not consulted). GB_EINVAL for a malformed name. */
int gb_arch_limits_for(const char *arch, gb_arch_limits *out, gb_err *err);

/* The limits of the device in hand: its arch's, with the shared memory and
 * threads per block the driver reports where it reports them. */
void gb_arch_limits_from_device(const gb_device_info *info, gb_arch_limits *out);

/* Whether a variant fits: its launch (grid, block, dynamic shared memory) and the
 * resources its cubin uses (registers, static shared memory; -1 fields are not
 * checked). Either may be NULL: a launch can be checked before compiling. Returns
 * true when it fits; otherwise false with every reason, joined by "; ", in reason
 * ("needs 1536 threads per block (block 512x3x1); sm_90a allows 1024"). reason may
 * be NULL; it is "" when the variant fits. */
bool gb_arch_check(const gb_arch_limits *lim, const gb_launch *launch, const gb_resources *res,
                   char *reason, size_t reason_bytes);

#endif
