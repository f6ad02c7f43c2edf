/* SPDX-License-Identifier: Apache-2.0 */
/* What a plugin library and the loader cache say, read as data (doctor_deploy.h): the doctor
 * never loads a library it inspects, so nothing in a snapshot (or named by a configuration
 * file) runs. Every offset, size and count is checked against the buffer before it is used;
 * structures are copied out (no unaligned access). Pure: no I/O. */
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "doctor_deploy.h"
#include "strutil.h"

#if defined(__x86_64__)
#define HOST_MACHINE    EM_X86_64
#define REL_RELATIVE    R_X86_64_RELATIVE
#define REL_ABS64       R_X86_64_64
#define REL_GLOB_DAT    R_X86_64_GLOB_DAT
#define CACHE_ARCH_FLAG 0x0300 /* glibc's FLAG_X8664_LIB64 */
#elif defined(__aarch64__)
#define HOST_MACHINE    EM_AARCH64
#define REL_RELATIVE    R_AARCH64_RELATIVE
#define REL_ABS64       R_AARCH64_ABS64
#define REL_GLOB_DAT    R_AARCH64_GLOB_DAT
#define CACHE_ARCH_FLAG 0x0a00 /* FLAG_AARCH64_LIB64 */
#else
#error "doctor_elf.c knows x86_64 and aarch64"
#endif

struct img {
    const unsigned char *p;
    size_t len;
    Elf64_Ehdr eh;
};

static bool in(const struct img *m, uint64_t off, uint64_t n)
{
    return off <= m->len && n <= m->len - off;
}

static bool phdr(const struct img *m, size_t i, Elf64_Phdr *ph)
{
    uint64_t off = m->eh.e_phoff + (uint64_t)i * sizeof(*ph);
    if (i >= m->eh.e_phnum || !in(m, off, sizeof(*ph)))
        return false;
    memcpy(ph, m->p + off, sizeof(*ph));
    return true;
}

static bool shdr(const struct img *m, size_t i, Elf64_Shdr *sh)
{
    uint64_t off = m->eh.e_shoff + (uint64_t)i * sizeof(*sh);
    if (i >= m->eh.e_shnum || !in(m, off, sizeof(*sh)))
        return false;
    memcpy(sh, m->p + off, sizeof(*sh));
    if (sh->sh_type == SHT_NOBITS)
        sh->sh_size = 0; /* no bytes in the file: nothing to read there */
    return in(m, sh->sh_offset, sh->sh_size);
}

/* File offset of n bytes at virtual address v (a PT_LOAD segment's file part), or -1. */
static int64_t vaddr_off(const struct img *m, uint64_t v, uint64_t n)
{
    Elf64_Phdr ph;
    for (size_t i = 0; phdr(m, i, &ph); i++)
        if (ph.p_type == PT_LOAD && v >= ph.p_vaddr && v - ph.p_vaddr < ph.p_filesz &&
            n <= ph.p_filesz - (v - ph.p_vaddr) && in(m, ph.p_offset + (v - ph.p_vaddr), n))
            return (int64_t)(ph.p_offset + (v - ph.p_vaddr));
    return -1;
}

/* The pointer stored at v once relocated: a RELA relocation at v (RELATIVE: its addend; ABS64,
 * GLOB_DAT: symbol + addend), else the bytes in the file. 0 when unknown. */
static uint64_t pointer_at(const struct img *m, uint64_t v)
{
    Elf64_Shdr sh, symsh;
    uint64_t stored = 0;
    int64_t off = vaddr_off(m, v, 8);
    if (off >= 0)
        memcpy(&stored, m->p + off, 8);
    for (size_t i = 0; shdr(m, i, &sh); i++) {
        if (sh.sh_type != SHT_RELA || sh.sh_entsize != sizeof(Elf64_Rela))
            continue;
        for (uint64_t k = 0; k < sh.sh_size / sizeof(Elf64_Rela); k++) {
            Elf64_Rela r;
            memcpy(&r, m->p + sh.sh_offset + k * sizeof(r), sizeof(r));
            if (r.r_offset != v)
                continue;
            uint32_t type = (uint32_t)ELF64_R_TYPE(r.r_info);
            if (type == REL_RELATIVE)
                return (uint64_t)r.r_addend;
            if ((type == REL_ABS64 || type == REL_GLOB_DAT) && shdr(m, sh.sh_link, &symsh) &&
                symsh.sh_entsize == sizeof(Elf64_Sym) &&
                ELF64_R_SYM(r.r_info) < symsh.sh_size / sizeof(Elf64_Sym)) {
                Elf64_Sym s;
                memcpy(&s, m->p + symsh.sh_offset + ELF64_R_SYM(r.r_info) * sizeof(s), sizeof(s));
                return s.st_shndx != SHN_UNDEF ? s.st_value + (uint64_t)r.r_addend : 0;
            }
        }
    }
    return stored;
}

/* The NUL-terminated string at virtual address v, printable, into out ("" when unknown). */
static void string_at(const struct img *m, uint64_t v, char *out, size_t outlen)
{
    int64_t off = v ? vaddr_off(m, v, 1) : -1;
    size_t k = 0;
    out[0] = '\0';
    if (off < 0)
        return;
    for (; k + 1 < outlen && (uint64_t)off + k < m->len && m->p[off + k]; k++)
        out[k] = (char)m->p[off + k];
    if ((uint64_t)off + k >= m->len || m->p[off + k]) {
        out[0] = '\0'; /* no terminator where it should be: not a name */
        return;
    }
    out[k] = '\0';
    rail_text_sanitize(out);
}

int doctor_elf_tables(const void *data, size_t len, struct doctor_lib_probe *out, char *why,
                      size_t whylen)
{
    static const char *const net_syms[] = {"ncclNetPlugin_v11", "ncclNetPlugin_v10",
                                           "ncclNetPlugin_v9",  "ncclNetPlugin_v8",
                                           "ncclNetPlugin_v7",  "ncclNetPlugin_v6"};
    static const char *const tuner_syms[] = {"ncclTunerPlugin_v5", "ncclTunerPlugin_v4",
                                             "ncclTunerPlugin_v3", "ncclTunerPlugin_v2"};
    struct img m = {.p = data, .len = data ? len : 0};
    Elf64_Shdr dyn, str;
    bool found = false;

    out->net_abi = out->tuner_abi = 0;
    out->net_name[0] = out->tuner_name[0] = '\0';
    if (m.len < EI_NIDENT || memcmp(m.p, ELFMAG, SELFMAG) != 0) {
        rail_set_err(why, whylen, "not an ELF file");
        return -ENOEXEC;
    }
    if (m.p[EI_CLASS] != ELFCLASS64 || m.p[EI_DATA] != ELFDATA2LSB || m.len < sizeof(m.eh)) {
        rail_set_err(why, whylen, "not a 64-bit little-endian ELF file: the loader skips it");
        return -ENOEXEC;
    }
    memcpy(&m.eh, m.p, sizeof(m.eh));
    if (m.eh.e_machine != HOST_MACHINE || m.eh.e_type != ET_DYN) {
        rail_set_err(why, whylen, "%s: the loader skips it",
                     m.eh.e_type != ET_DYN ? "not a shared object" : "built for another machine");
        return -ENOEXEC;
    }
    if ((m.eh.e_phnum && m.eh.e_phentsize != sizeof(Elf64_Phdr)) ||
        (m.eh.e_shnum && m.eh.e_shentsize != sizeof(Elf64_Shdr))) {
        rail_set_err(why, whylen, "malformed ELF headers");
        return -ENOEXEC;
    }
    for (size_t i = 0; !found && shdr(&m, i, &dyn); i++)
        found = dyn.sh_type == SHT_DYNSYM;
    if (!found || dyn.sh_entsize != sizeof(Elf64_Sym) || !shdr(&m, dyn.sh_link, &str)) {
        rail_set_err(why, whylen,
                     "no readable dynamic symbol table (truncated or stripped of "
                     "section headers)");
        return -ENOEXEC;
    }
    for (uint64_t k = 0; k < dyn.sh_size / sizeof(Elf64_Sym); k++) {
        Elf64_Sym s;
        char name[32];
        memcpy(&s, m.p + dyn.sh_offset + k * sizeof(s), sizeof(s));
        if (s.st_shndx == SHN_UNDEF || s.st_name >= str.sh_size ||
            ELF64_ST_TYPE(s.st_info) != STT_OBJECT)
            continue;
        size_t n = 0, max = str.sh_size - s.st_name;
        const unsigned char *sn = m.p + str.sh_offset + s.st_name;
        while (n < max && n < sizeof(name) - 1 && sn[n])
            n++;
        if (n == max || sn[n])
            continue; /* unterminated, or longer than any name we look for */
        memcpy(name, sn, n + 1);
        /* Every table starts with its const char *name (all net and tuner versions). */
        for (int v = 0; v < 6; v++)
            if (strcmp(name, net_syms[v]) == 0 && (!out->net_abi || 11 - v > out->net_abi)) {
                out->net_abi = 11 - v;
                string_at(&m, pointer_at(&m, s.st_value), out->net_name, sizeof(out->net_name));
            }
        for (int v = 0; v < 4; v++)
            if (strcmp(name, tuner_syms[v]) == 0 && (!out->tuner_abi || 5 - v > out->tuner_abi)) {
                out->tuner_abi = 5 - v;
                string_at(&m, pointer_at(&m, s.st_value), out->tuner_name, sizeof(out->tuner_name));
            }
    }
    return 0;
}

/* glibc's ld.so.cache, new format ("glibc-ld.so.cache1.1"): a 48-byte header (nlibs at 20),
 * then nlibs entries of 24 bytes (flags, key, value, osversion, hwcap); key and value are
 * offsets of NUL-terminated strings from the start of the file. */
#define CACHE_MAGIC "glibc-ld.so.cache1.1"

static const char *cache_str(const unsigned char *p, size_t len, uint32_t off)
{
    return off < len && memchr(p + off, '\0', len - off) ? (const char *)p + off : NULL;
}

int doctor_ldcache_lookup(const void *data, size_t len, const char *name, char *out, size_t outlen)
{
    const unsigned char *p = data;
    uint32_t nlibs;
    if (!p || len < 48 || memcmp(p, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
        return -EINVAL;
    memcpy(&nlibs, p + 20, 4);
    if (nlibs > (len - 48) / 24)
        return -EINVAL;
    for (uint32_t i = 0; i < nlibs; i++) {
        int32_t flags;
        uint32_t key, value;
        const char *k, *v;
        memcpy(&flags, p + 48 + (size_t)i * 24, 4);
        memcpy(&key, p + 48 + (size_t)i * 24 + 4, 4);
        memcpy(&value, p + 48 + (size_t)i * 24 + 8, 4);
        if ((flags & 0xff) != 3 /* FLAG_ELF_LIBC6 */ || (flags & 0xff00) != CACHE_ARCH_FLAG)
            continue;
        k = cache_str(p, len, key);
        v = cache_str(p, len, value);
        if (k && v && strcmp(k, name) == 0 && v[0] == '/' &&
            (size_t)snprintf(out, outlen, "%s", v) < outlen)
            return 0;
    }
    return -ENOENT;
}
