/* SPDX-License-Identifier: MIT */
/* The live layer's offer to the layers above: /proc maps and JIT perf
 * maps, the kernel's symbols and modules. */
#ifndef DS_LIVE_H
#define DS_LIVE_H

#include "store.h"

/* ---- normalize (normalize.c) */

/* One line of /proc/PID/maps ("START-END PERMS PGOFF MAJ:MIN INODE NAME"),
 * its name borrowed from the text (not NUL-terminated). */
#define DS__VMA_R 1u
#define DS__VMA_W 2u
#define DS__VMA_X 4u
#define DS__VMA_SHARED 8u
struct ds__vma {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	unsigned int prot; /* DS__VMA_* */
	const char *name;
	size_t name_len;
};
/* Parse maps text (untrusted: any bytes, no NUL needed), calling fn for
 * each well-formed line in order; a malformed line is skipped (and
 * counted in *bad when not NULL).  Returns the lines given to fn, or the
 * first negative value fn returned. */
int ds__procmaps_parse(const char *buf, size_t len, int (*fn)(void *arg, const struct ds__vma *v),
		       void *arg, size_t *bad);

/* A perf map (/tmp/perf-PID.map: "START SIZE NAME" lines, hex, written by
 * JITs), sorted by start, a later line winning over an earlier one of the
 * same start; names copied. */
struct ds__perfmap_sym {
	uint64_t start, size;
	const char *name;
};
struct ds__perfmap {
	size_t n;
	struct ds__perfmap_sym *syms;
	char *names;
};
/* A perf map past either bound is refused whole (-EFBIG), not read in
 * part: a JIT appends, and a later line of a start wins, so a cut map
 * could name an address after code that no longer lives there.  (A
 * 10M-line map took 12 s and 500 MB to read, on each normalize call.) */
#define DS__PERFMAP_MAX_BYTES (64u << 20)
#define DS__PERFMAP_MAX_LINES (1u << 20)
/* -EFBIG past a bound, -ENOMEM, else 0. */
int ds__perfmap_parse(const char *buf, size_t len, struct ds__perfmap *out, size_t *bad);
/* The symbol holding addr, or NULL. */
const struct ds__perfmap_sym *ds__perfmap_find(const struct ds__perfmap *m, uint64_t addr);
void ds__perfmap_release(struct ds__perfmap *m);
/* Open, check and parse the perf map at path (normalize.c says the rules:
 * owned by us, root, or owner (the live process's uid; (uid_t)-1: none),
 * writable by nobody else): 0; -ENOENT none; -ELOOP a symlink; -EACCES
 * another user's, writable by others or not a file; -EFBIG past a bound;
 * else a negative errno.  why (whylen bytes) says what is wrong; *st is
 * what the file (or symlink) was when opened, zeros when it could not be,
 * for the caller to see whether it changed. */
int ds__perfmap_load(const char *path, uid_t owner, struct ds__perfmap *out, struct stat *st,
		     char *why, size_t whylen);

/* ---- kernel (kernel.c) */

/* The running kernel's build ID, from /sys/kernel/notes (under the
 * context's kernel root). */
bool ds__kernel_build_id(const struct ds_context *ctx, struct ds_build_id *out);
/* The GNU build ID among raw ELF notes; of a notes file (4 KiB read). */
bool ds__notes_build_id(const unsigned char *buf, size_t len, struct ds_build_id *out);
bool ds__notes_file_build_id(const char *path, struct ds_build_id *out);
/* rel ("/proc/kallsyms", "/sys/module") under the context's kernel root. */
void ds__kernel_path(const struct ds_context *ctx, const char *rel, char *buf, size_t len);

/* The running kernel's text symbols, sorted, one per address. */
struct ds__kallsyms;
/* From the cache of this boot's core kernel symbols unless all (modules,
 * BPF programs too: a fresh /proc/kallsyms, which refreshes the cache);
 * ref: a symbol whose address to note (perf's "_text", NULL: none).
 * -EPERM: kptr_restrict hides the addresses. */
int ds__kallsyms_load(struct ds_context *ctx, const char *ref, bool all,
		      struct ds__kallsyms **out);
/* Parse kallsyms text (text[len] NUL; cut up in place, then k's). */
int ds__kallsyms_parse(char *text, size_t len, const char *ref, struct ds__kallsyms **out);
/* The cache file of k's core symbols (malloc()ed) for kernel bid in boot. */
int ds__kallsyms_serialize(const struct ds__kallsyms *k, const struct ds_build_id *bid,
			   const char *boot, const char *ref, void **out, size_t *len_out);
/* Check a cache file's bytes (8-byte aligned): *out points into them
 * (free it before them).  -EBADMSG and *why. */
int ds__kallsyms_check(const void *buf, size_t len, struct ds__kallsyms **out, const char **why);
void ds__kallsyms_free(struct ds__kallsyms *k);
/* The symbol holding addr and its start; NULL: none, or not covered. */
const char *ds__kallsyms_find(const struct ds__kallsyms *k, uint64_t addr, uint64_t *start);
/* The same, and its module's name ("ext4"; NULL: the core kernel). */
const char *ds__kallsyms_find_mod(const struct ds__kallsyms *k, uint64_t addr, uint64_t *start,
				  const char **module);
/* The lowest address of a symbol of module (a full read only). */
bool ds__kallsyms_module_start(const struct ds__kallsyms *k, const char *module, uint64_t *start);
/* ---- kernel addresses (ksym.c) */

/* Where module is loaded now: the kernel root's /proc/modules, else the
 * lowest address of its symbols in k (may be NULL). */
bool ds__kernel_module_start(struct ds_context *ctx, const struct ds__kallsyms *k,
			     const char *module, uint64_t *start);
/* A .ko image as the kernel root's /sys/module/module/sections placed it
 * (modified in place: DWARF relocated, ET_EXEC).  0, -EINVAL. */
int ds__ko_relocate(struct ds_context *ctx, const char *module, unsigned char *img, size_t len);
/* A module's name ("ext4") from a perf DSO path ("[ext4]", a .ko file). */
bool ds__kernel_module_name(const char *path, char *out, size_t len);
/* perf's places for the vmlinux of release (/usr/lib/debug/boot/vmlinux-R
 * and the like, under the kernel root): the first whose build ID is bid. */
bool ds__vmlinux_place(const struct ds_context *ctx, const char *release,
		       const struct ds_build_id *bid, char *path, size_t len);
/* dso if its debuginfo has DWARF and the symbol ref (*link: its link-time
 * address); else dso is put and NULL. */
struct ds_dso *ds__vmlinux_usable(struct ds_context *ctx, struct ds_dso *dso, const char *ref,
				  uint64_t *link);
/* The DWARF answer for module's code at addr (where it is loaded now),
 * valid as ds_kernel_symbolize()'s; false: no DWARF for it. */
bool ds__kernel_module_dwarf(struct ds_kernel *k, const char *module, uint64_t addr,
			     unsigned int flags, struct ds_sym_batch *batch,
			     const struct ds_sym_answer **answer);
/* One /proc/modules line: module's load address, if it is its line. */
bool ds__modules_line(const char *line, size_t len, const char *module, size_t mlen,
		      uint64_t *start);

/* k (the cached core symbols) can answer for addr. */
bool ds__kallsyms_covers(const struct ds__kallsyms *k, uint64_t addr);
bool ds__kallsyms_ref(const struct ds__kallsyms *k, uint64_t *addr);

/* The store the normalizer puts its DSOs into (normalize.c; for pidsym.c). */
struct ds_store *ds__normalizer_store(const struct ds_normalizer *n);
/* A symbolizer batch kept with the normalizer (made on first use; NULL:
 * ENOMEM), so that its memory stays warm from call to call. */
struct ds_sym_batch *ds__normalizer_scratch(struct ds_normalizer *n);

#endif
