#include "engine/cubin.h"

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum {
    EIFMT_NVAL = 1,
    EIFMT_BVAL = 2,
    EIFMT_HVAL = 3,
    EIFMT_SVAL = 4,
    EIATTR_FRAME_SIZE = 0x11,
    EIATTR_REGCOUNT = 0x2f,
    EIATTR_KPARAM_INFO = 0x17,
};

#define RESERVED_SMEM_BYTES 1024

typedef struct image {
    const uint8_t *bytes;
    size_t size;
    const Elf64_Shdr *sections;
    int n_sections;
    const char *names; /* the section name table */
    size_t names_size;
} image;

static int open_image(const void *cubin, size_t size, image *out)
{
    const Elf64_Ehdr *eh = cubin;
    if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shentsize != sizeof(Elf64_Shdr))
        return GB_EINVAL;
    if (eh->e_shoff > size || eh->e_shnum > (size - eh->e_shoff) / sizeof(Elf64_Shdr) ||
        eh->e_shstrndx >= eh->e_shnum)
        return GB_EINVAL;
    *out = (image){.bytes = cubin, .size = size, .n_sections = eh->e_shnum};
    out->sections = (const Elf64_Shdr *)(out->bytes + eh->e_shoff);
    const Elf64_Shdr *names = &out->sections[eh->e_shstrndx];
    if (names->sh_offset > size || names->sh_size > size - names->sh_offset) return GB_EINVAL;
    out->names = (const char *)out->bytes + names->sh_offset;
    out->names_size = names->sh_size;
    return GB_OK;
}

static const char *section_name(const image *im, const Elf64_Shdr *sh)
{
    if (sh->sh_name >= im->names_size) return "";
    const char *name = im->names + sh->sh_name;
    return memchr(name, '\0', im->names_size - sh->sh_name) ? name : "";
}

/* The section called prefix + kernel, or NULL. */
static const Elf64_Shdr *find_section(const image *im, const char *prefix, const char *kernel)
{
    size_t n = strlen(prefix);
    for (int i = 0; i < im->n_sections; i++) {
        const char *name = section_name(im, &im->sections[i]);
        if (strncmp(name, prefix, n) == 0 && (!kernel || strcmp(name + n, kernel) == 0))
            return &im->sections[i];
    }
    return NULL;
}

static bool contents(const image *im, const Elf64_Shdr *sh, const uint8_t **out, size_t *n)
{
    if (sh->sh_type == SHT_NOBITS || sh->sh_offset > im->size ||
        sh->sh_size > im->size - sh->sh_offset)
        return false;
    *out = im->bytes + sh->sh_offset;
    *n = sh->sh_size;
    return true;
}

/* The symbol table index of the kernel's symbol, or -1. */
static long symbol_index(const image *im, const char *kernel)
{
    const Elf64_Shdr *symtab = NULL;
    for (int i = 0; i < im->n_sections && !symtab; i++)
        if (im->sections[i].sh_type == SHT_SYMTAB) symtab = &im->sections[i];
    const uint8_t *syms, *strs;
    size_t n_syms, n_strs;
    if (!symtab || symtab->sh_link >= (Elf64_Word)im->n_sections ||
        !contents(im, symtab, &syms, &n_syms) ||
        !contents(im, &im->sections[symtab->sh_link], &strs, &n_strs))
        return -1;
    for (size_t i = 0; i < n_syms / sizeof(Elf64_Sym); i++) {
        Elf64_Sym sym;
        memcpy(&sym, syms + i * sizeof sym, sizeof sym);
        if (sym.st_name < n_strs && memchr(strs + sym.st_name, '\0', n_strs - sym.st_name) &&
            strcmp((const char *)strs + sym.st_name, kernel) == 0)
            return (long)i;
    }
    return -1;
}

/* Walks the .nv.info attributes, keeping those that name the kernel's symbol:
 * each is a format byte, an attribute byte and a value whose size the format
 * gives; per-symbol values are (u32 symbol index, u32 value). */
static void read_info(const image *im, long sym, gb_resources *out)
{
    const Elf64_Shdr *info = find_section(im, ".nv.info", "");
    const uint8_t *p, *end;
    size_t n;
    if (!info || sym < 0 || !contents(im, info, &p, &n)) return;
    for (end = p + n; end - p >= 4;) {
        uint8_t format = p[0], attr = p[1];
        uint16_t size = 0;
        memcpy(&size, p + 2, sizeof size);
        size_t len = format == EIFMT_SVAL ? 4u + size : 4u;
        if ((size_t)(end - p) < len) return;
        uint32_t entry[2];
        if (format == EIFMT_SVAL && size == 8) {
            memcpy(entry, p + 4, sizeof entry);
            if (entry[0] == (uint32_t)sym && attr == EIATTR_REGCOUNT)
                out->registers = (int)entry[1];
            if (entry[0] == (uint32_t)sym && attr == EIATTR_FRAME_SIZE)
                out->stack_bytes = (int)entry[1];
        }
        p += len;
    }
}

int gb_cubin_resources(const void *cubin, size_t bytes, const char *kernel, gb_resources *out)
{
    *out = (gb_resources){-1, -1, -1, -1, -1};
    image im;
    if (!cubin || open_image(cubin, bytes, &im) != GB_OK) return GB_EINVAL;
    const Elf64_Shdr *text = find_section(&im, ".text.", kernel);
    if (!text) return GB_ENOTFOUND;
    if (text->sh_info >> 24) out->registers = (int)(text->sh_info >> 24);
    read_info(&im, symbol_index(&im, kernel), out);
    const Elf64_Shdr *smem = find_section(&im, ".nv.shared.", kernel);
    long smem_bytes = smem ? (long)smem->sh_size : 0;
    if (smem && find_section(&im, ".nv.shared.reserved.", NULL) &&
        smem_bytes >= RESERVED_SMEM_BYTES)
        smem_bytes -= RESERVED_SMEM_BYTES;
    out->smem_static_bytes = (int)smem_bytes;
    if (out->stack_bytes < 0) out->stack_bytes = 0;
    return GB_OK;
}

/* EIATTR_KPARAM_INFO, one per parameter in .nv.info.<kernel>: u32 index, u16
 * ordinal, u16 offset, u32 flags whose bits 18 and up are the size in bytes. */
int gb_cubin_params(const void *cubin, size_t bytes, const char *kernel, int *out_n, int sizes[],
                    int max)
{
    *out_n = -1;
    for (int i = 0; i < max; i++)
        sizes[i] = -1; /* an ordinal the cubin skips stays unknown */
    image im;
    if (!cubin || open_image(cubin, bytes, &im) != GB_OK) return GB_EINVAL;
    if (!find_section(&im, ".text.", kernel)) return GB_ENOTFOUND;
    const Elf64_Shdr *info = find_section(&im, ".nv.info.", kernel);
    const uint8_t *p, *end;
    size_t n;
    int count = 0;
    if (info && contents(&im, info, &p, &n)) {
        for (end = p + n; end - p >= 4;) {
            uint8_t format = p[0], attr = p[1];
            uint16_t size = 0;
            memcpy(&size, p + 2, sizeof size);
            size_t len = format == EIFMT_SVAL ? 4u + size : 4u;
            if ((size_t)(end - p) < len) return GB_EINVAL;
            if (format == EIFMT_SVAL && attr == EIATTR_KPARAM_INFO && size == 12) {
                uint16_t ordinal;
                uint32_t flags;
                memcpy(&ordinal, p + 8, sizeof ordinal);
                memcpy(&flags, p + 12, sizeof flags);
                if (ordinal >= max) return GB_EINVAL;
                sizes[ordinal] = (int)(flags >> 18);
                count = ordinal + 1 > count ? ordinal + 1 : count;
            }
            p += len;
        }
    }
    *out_n = count;
    return GB_OK;
}
