/*
 * Reading a whole file that may be gzipped. Every command that reads a JSON file
 * (replay, report, compare, repro, cache load, export's fallbacks) reads it
 * through here, so a table kept as .json.gz opens as the plain one does: zlib
 * reads a plain file as it is and inflates a gzip stream.
 */
#ifndef GB_BASE_FILE_H
#define GB_BASE_FILE_H

#include "base/error.h"

#include <stddef.h>

/* The whole of path ("-": standard input), inflated when it is gzip, into *out
 * (NUL-terminated, *out_len bytes; free it). More than max bytes once inflated:
 * GB_ELIMIT. A file that cannot be opened or read, a directory, or a damaged
 * gzip stream: GB_EIO. Messages read "<what><path>: <why>", what being the
 * caller's prefix ("reading ", "table ", or ""). */
int gb_read_file(const char *path, size_t max, const char *what, char **out, size_t *out_len,
                 gb_err *err);

#endif
