/*
 * Status codes and error messages shared by every layer.
 *
 * Functions return an int: 0 on success, a negative GB_E* code for errors of our
 * own, or a positive errno passed through from the C library. LMDB's own codes
 * never leave cache/: it turns them into GB_ECACHE with mdb_strerror's text. The message that says
 * what failed, where and through which call is recorded once, where the error
 * happens, in a gb_err that the caller passes down or that a handle keeps; callers
 * add context with gb_err_prefix instead of printing it again.
 */
#ifndef GB_BASE_ERROR_H
#define GB_BASE_ERROR_H

#include <stddef.h>

enum {
    GB_OK = 0,
    GB_EINVAL = -30000, /* a bad argument, option or field */
    GB_ENOMEM,          /* out of host memory */
    GB_EIO,             /* a file could not be read or written */
    GB_ESCRIPT,         /* the Lua script failed or broke the contract */
    GB_ENODRIVER,       /* no usable CUDA driver on this machine */
    GB_ENOGPU,          /* a driver but no usable device */
    GB_ECUDA,           /* a CUDA driver call failed */
    GB_ENVRTC,          /* NVRTC itself failed (not the source) */
    GB_ECOMPILE,        /* the kernel source did not compile */
    GB_ELAUNCH,         /* the launch was refused (resources, geometry) */
    GB_EFAULT,          /* the kernel faulted; the context is unusable */
    GB_ETIMEOUT,        /* a watchdog expired */
    GB_ECACHE,          /* the cache is corrupt, locked or from a newer schema */
    GB_ENOTFOUND,       /* no such record */
    GB_EPROTO,          /* a malformed message between processes */
    GB_EINTR,           /* interrupted by the user */
    GB_ELIMIT,          /* a configured limit was reached */
    GB_ECLOSED,         /* the other process closed the connection */
    GB_EBUSY,           /* another process holds what we waited for (a GPU's lease) */
};

#define GB_ERR_MSG_BYTES 4096

/* The last error of an operation: its code and a message naming what failed. */
typedef struct gb_err {
    int code;
    char msg[GB_ERR_MSG_BYTES];
} gb_err;

/* Records code and a formatted message in err (which may be NULL) and returns
 * code, so that `return gb_err_set(err, GB_EINVAL, "...")` reads naturally. */
int gb_err_set(gb_err *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Puts "context: " in front of the message already recorded; returns err->code. */
int gb_err_prefix(gb_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Length of the "file:LINE: " position a script message starts with, or 0. */
size_t gb_err_position_length(const char *msg);

/* Like gb_err_prefix, but after the message's leading "file:LINE: " position when
 * it has one, so script errors keep starting with their position. */
int gb_err_context(gb_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Copies src into dst (either may be NULL) and returns src's code. */
int gb_err_copy(gb_err *dst, const gb_err *src);

void gb_err_clear(gb_err *err);

/* Text for any status: ours or an errno. Never NULL. */
const char *gb_strerror(int code);

#endif
