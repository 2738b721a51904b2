#include "tuner/ordmap.h"

#include <stdlib.h>
#include <string.h>

#define FIRST_CAP 256

static size_t hash(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static uint64_t key_at(const unsigned char *slots, size_t entry_size, size_t i)
{
    uint64_t key;
    memcpy(&key, slots + i * entry_size, sizeof key);
    return key;
}

void gb_ordmap_init(gb_ordmap *m, size_t entry_size)
{
    *m = (gb_ordmap){.entry_size = entry_size};
}

void gb_ordmap_free(gb_ordmap *m)
{
    if (!m) return;
    free(m->slots);
    gb_ordmap_init(m, m->entry_size);
}

/* The slot holding key, or the empty one where it would go. */
static size_t probe(const unsigned char *slots, size_t entry_size, size_t cap, uint64_t key)
{
    size_t i = hash(key, cap);
    for (uint64_t k; (k = key_at(slots, entry_size, i)) && k != key; i = (i + 1) & (cap - 1))
        ;
    return i;
}

void *gb_ordmap_find(const gb_ordmap *m, uint64_t ordinal)
{
    if (!m->cap) return NULL;
    size_t i = probe(m->slots, m->entry_size, m->cap, ordinal + 1);
    return key_at(m->slots, m->entry_size, i) ? m->slots + i * m->entry_size : NULL;
}

static bool grow(gb_ordmap *m)
{
    size_t cap = m->cap ? 2 * m->cap : FIRST_CAP, size = m->entry_size;
    unsigned char *slots = calloc(cap, size);
    if (!slots) return false;
    for (size_t i = 0; i < m->cap; i++) {
        uint64_t key = key_at(m->slots, size, i);
        if (key) memcpy(slots + probe(slots, size, cap, key) * size, m->slots + i * size, size);
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return true;
}

void *gb_ordmap_add(gb_ordmap *m, uint64_t ordinal, bool *out_new)
{
    void *found = gb_ordmap_find(m, ordinal);
    *out_new = !found;
    if (m->entry_size < sizeof(uint64_t)) return NULL; /* never initialised */
    if (found) return found;
    if (2 * (m->n + 1) > m->cap && !grow(m)) return NULL;
    uint64_t key = ordinal + 1;
    unsigned char *e = m->slots + probe(m->slots, m->entry_size, m->cap, key) * m->entry_size;
    memcpy(e, &key, sizeof key);
    m->n++;
    return e;
}
