/*
 * What a kernel in a cubin uses, read from the cubin itself (an ELF image), so
 * the figures do not depend on ptxas's verbose log: NVRTC 13.0.88 writes that
 * log for the first compile of a process only.
 *
 *   registers      the EIATTR_REGCOUNT attribute in .nv.info (sm_80 also keeps
 *                  it in the high byte of the .text section's sh_info)
 *   stack bytes    EIATTR_FRAME_SIZE: local memory per thread, where spills and
 *                  arrays indexed at run time live
 *   static smem    the size of .nv.shared.<kernel>, less the 1 KiB that ptxas
 *                  reserves there for the system on targets that mark it with a
 *                  .nv.shared.reserved section
 *
 * Spill stores and loads are not recorded in the cubin; they stay -1 here.
 */
#ifndef GB_ENGINE_CUBIN_H
#define GB_ENGINE_CUBIN_H

#include "base/error.h"
#include "engine/nvrtc.h"

#include <stddef.h>

/* Fills out for the kernel with the given lowered name. GB_EINVAL when the image
 * is not a 64-bit ELF or is truncated; GB_ENOTFOUND when the kernel is not in it. */
int gb_cubin_resources(const void *cubin, size_t bytes, const char *lowered_name,
                       gb_resources *out);

/* The kernel's parameters as the cubin lists them (EIATTR_KPARAM_INFO): *out_n
 * of them, each one's size in bytes in sizes[ordinal] (at most max; -1 for an
 * ordinal it does not list). GB_EINVAL
 * for an image that is not a 64-bit ELF, is truncated or lists more than max;
 * GB_ENOTFOUND when the kernel is not in it. */
int gb_cubin_params(const void *cubin, size_t bytes, const char *lowered_name, int *out_n,
                    int sizes[], int max);

#endif
