/*
 * Internal to the wire codec (base/wire.c writes, compares and frees;
 * base/wire_decode.c reads): where a field's items are in a struct, and what
 * counts as a field's zero.
 */
#ifndef GB_BASE_WIRE_INTERNAL_H
#define GB_BASE_WIRE_INTERNAL_H

#include "base/wire.h"

#include <stdbool.h>
#include <stddef.h>

/* The C size of one item of the field. */
size_t gb_wire_elem_size(const gb_wire_field *f);

/* INLINE, OWNED: the int member holding the count. */
int *gb_wire_count_of(const gb_wire_field *f, const void *obj);

/* How many items an inline array has room for. */
int gb_wire_capacity(const gb_wire_field *f);

/* NULLABLE: the bool member saying the field is there. */
bool *gb_wire_present_flag(const gb_wire_field *f, const void *obj);

/* True when the item at p is zero, false, "" or NULL (what GB_WIRE_NULL_ZERO
 * writes as null); never for FIELDS and STRUCT. */
bool gb_wire_value_is_zero(const gb_wire_field *f, const void *p);

#endif
