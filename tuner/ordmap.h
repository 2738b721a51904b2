/*
 * A hash map keyed by a configuration's ordinal (open addressing, linear
 * probing), for what the search and the strategies remember about the
 * configurations they have met. Entries are of one size the caller chooses; each
 * begins with the uint64_t key (the ordinal + 1; 0 marks an empty slot). A pointer
 * to an entry lasts until the next gb_ordmap_add.
 */
#ifndef GB_TUNER_ORDMAP_H
#define GB_TUNER_ORDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct gb_ordmap {
    unsigned char *slots;
    size_t entry_size; /* bytes of an entry, the key included */
    size_t n, cap;     /* cap is 0 or a power of two */
} gb_ordmap;

void gb_ordmap_init(gb_ordmap *m, size_t entry_size);
void gb_ordmap_free(gb_ordmap *m);

/* The entry of ordinal, or NULL. */
void *gb_ordmap_find(const gb_ordmap *m, uint64_t ordinal);

/* The entry of ordinal, made (zeroed but for its key) when missing; *out_new says
 * it was. NULL when memory runs out. */
void *gb_ordmap_add(gb_ordmap *m, uint64_t ordinal, bool *out_new);

#endif
