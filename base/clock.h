/* The monotonic clock, in milliseconds from an arbitrary start: for deadlines and
 * for how long things took (never for GPU timings, which come from CUDA events). */
#ifndef GB_BASE_CLOCK_H
#define GB_BASE_CLOCK_H

double gb_now_ms(void);

#endif
