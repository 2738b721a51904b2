/*
 * A kernel's source closure: its text plus the local headers it includes
 * (#include "file", found in the include directories, followed recursively).
 * The closure's hash is the kernel fingerprint's core and part of every cubin key,
 * so editing a template or one of its headers makes old results show as stale and
 * old cubins unused.
 */
#ifndef GB_TUNER_SOURCE_H
#define GB_TUNER_SOURCE_H

#include "base/error.h"
#include "cache/key.h"
#include "cache/record.h"

/* Hashes source and every local header it reaches. A header that is not found is
 * hashed by name only (NVRTC will say it is missing when it compiles). */
int gb_source_fingerprint(const char *source, const char *const *include_dirs, int n_dirs,
                          gb_key *out, gb_err *err);

/* gb_source_fingerprint, also listing the closure's files with the hashes of their
 * content (absolute paths, each once), for telling later whether the kernel's
 * templates changed. The source itself is listed when source_name names a file that
 * holds exactly source. out_files may be NULL; free the list with
 * gb_source_files_free. */
int gb_source_closure(const char *source, const char *source_name, const char *const *include_dirs,
                      int n_dirs, gb_key *out_fp, gb_record_source **out_files, int *out_n,
                      gb_err *err);
void gb_source_files_free(gb_record_source *files, int n);

#endif
