/*
 * Ctrl-C. The front end's signal handler calls gb_interrupt_request(); the parts
 * that wait (the worker protocol, the tuning loop) poll gb_interrupted() and stop
 * cleanly: finished work is kept, the worker is ended, the summary is printed.
 */
#ifndef GB_EXEC_INTERRUPT_H
#define GB_EXEC_INTERRUPT_H

#include <stdbool.h>

/* Async-signal-safe. */
void gb_interrupt_request(void);
bool gb_interrupted(void);
void gb_interrupt_clear(void);

#endif
