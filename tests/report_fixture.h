/*
 * A fixed run for the outputs' tests (golden files): a context on an H200-like
 * device with a fixed date and host, and four entries:
 *   gemm_f32 M=N=K=1024: tuned, a best with samples, a baseline, five trials
 *                        (three ok, one wrong, one compile_error);
 *   gemm_f32 M=N=K=2048: tuned, no valid variant (two failed trials);
 *   gemm_f32 M=N=K=4096: answered from the cache (a best, no trials);
 *   copy_f32 N=16777216: gb.bench of a fixed configuration (memory-bound, no flops).
 * Every number is made up but consistent (the statistics are those of the samples).
 */
#ifndef GB_TESTS_REPORT_FIXTURE_H
#define GB_TESTS_REPORT_FIXTURE_H

#include "report/result.h"

/* Fills out (free with gb_report_free). Fails the test on out of memory. */
void report_fixture(gb_report *out);

/* The text of a file (free it); NULL when it cannot be read. */
char *report_fixture_read(const char *path);

/* Compares text with the golden file tests/report/NAME (under $GB_SOURCE_DIR); with
 * GB_UPDATE_GOLDEN=1 in the environment, writes it instead. Fails the test on a
 * difference, printing the first differing line. */
void report_fixture_golden(const char *text, const char *name);

#endif
