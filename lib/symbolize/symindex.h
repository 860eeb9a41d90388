/* SPDX-License-Identifier: MIT */
/*
 * The symbol index's structures, shared by the files of the index: the
 * readers fill it (the dwarf*.c files, gopclntab.c, symtab.c, through
 * symbuild.c), symblob.c orders and packs it, symindex.c keeps its tiers,
 * symlookup.c and symbolize.c answer from it, symfile.c saves it.  Include
 * from those only; what the layers above need is in symbolize.h.
 */
#ifndef DS_SYMINDEX_H
#define DS_SYMINDEX_H

#include "symbolize.h"

#include <errno.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#define NO_PARENT UINT32_MAX
/* (The structures below have no implicit padding: a saved index is their
 * bytes, and those must depend on the input alone.) */
#define MAX_DEPTH 256 /* inline nesting we follow; deeper DWARF is cut */

/* ---- the saved index (lib/symbolize/symfile.c)
 *
 * An index is made of position-independent blocks ("blobs", 8-byte
 * aligned): one for the ELF tier, one per DWARF compilation unit, plus the
 * table of CU address ranges.  symfile.c writes and maps them; symindex.c
 * alone knows what is inside a blob, and checks a saved one the first
 * time a lookup needs it: a CU's head (its header, sequences and keys)
 * then, and the rest chunk by chunk as lookups read it (struct
 * ds__chunks below), where the file gives the chunks' sums. */
struct ds__blob {
	const void *data;
	uint64_t size; /* 0: the CU contributes nothing */
	/* ds__chunked_sum() of the bytes (filled by ds__symbols_parts) */
	uint32_t sum;
	/* The sums of its chunks, as a saved index holds them (sum is
	 * theirs); NULL: none, the blob is checked whole at first use. */
	const uint32_t *chunks;
};

/* A blob as the segments it is in memory (written without a copy), and
 * room for a CU blob's header (symblob.c). */
#define DS__BLOB_SEGS 8
struct ds__seg {
	const void *p;
	uint64_t len;
};
struct ds__cu_hdr_buf {
	uint64_t w[4];
};

struct ds__cu_range {
	uint64_t lo, hi; /* [lo, hi) */
	uint32_t cu; /* index into parts.cus */
	uint32_t pad; /* 0 */
};

struct ds__symbols_parts {
	struct ds__blob elf;
	size_t ncus;
	const struct ds__blob *cus;
	size_t nranges;
	const struct ds__cu_range *ranges; /* sorted by lo */
};

/* Build every CU not built yet, on all cores (DSOSTORE_THREADS: how
 * many threads, 1 to 16; default the online CPUs).  0 or -ENOMEM. */
int ds__symbols_build_all(struct ds_symbols *S);
/* S's parts but its CUs' blobs (out->cus NULL), every CU built first (on
 * all cores) and the saved ones checked; the ELF blob and the ranges are
 * S's, valid while S lives.  0, -ENOMEM, or -ENODATA when S is not a
 * DWARF index (names only).  Then CU i's blob by ds__symbols_cu_segs()
 * (what a save writes, no copy made: symfile.c). */
int ds__symbols_parts_head(struct ds_symbols *S, struct ds__symbols_parts *out);
/* CU i's blob for writing, without a copy: a saved CU's bytes (*sum is
 * theirs, *have_sum true), else the segments of its piece (the writer
 * sums them).  How many segments (0: a CU with nothing). */
size_t ds__symbols_cu_segs(struct ds_symbols *S, size_t i, struct ds__cu_hdr_buf *hdr,
			   struct ds__seg segs[DS__BLOB_SEGS], uint64_t *size, uint32_t *sum,
			   bool *have_sum);
/* The head and every CU's blob at once (out->cus malloc()ed), for tests
 * and the fuzz harness; ds__symbols_parts_free() frees what was made. */
int ds__symbols_parts(struct ds_symbols *S, struct ds__symbols_parts *out);
void ds__symbols_parts_free(const struct ds_symbols *S, struct ds__symbols_parts *parts);
/* An index over saved parts (their memory stays the caller's until
 * release(arg), called when the index is freed; release may be NULL).
 * The ELF blob is checked now, each CU's when first used.  0, -EINVAL
 * (parts that cannot be an index), -ENOMEM. */
int ds__symbols_from_parts(const struct ds__symbols_parts *parts, void (*release)(void *),
			   void *arg, struct ds_symbols **out);
/* A CU of that index that fails its check is built from debug's DWARF
 * instead (which must stay open as long as the index, and give the same
 * CUs), with its auxiliary files from aux (NULL: none); without this, its
 * addresses fall back to ELF symbols.  binary (may be NULL): the binary's
 * path, where split DWARF is also looked for. */
void ds__symbols_fallback(struct ds_symbols *S, struct ds_context *ctx, struct Elf *debug,
			  const char *name, const char *binary, const struct ds__aux_src *aux);
/* A CU of S was built without its split unit (.dwo or .dwp not found),
 * or its DWARF without the dwz alt file it names: S is not worth saving. */
bool ds__symbols_partial(const struct ds_symbols *S);

struct scope {
	uint64_t lo, hi;
	uint32_t parent; /* enclosing scope's entry, or NO_PARENT */
	uint32_t name; /* offset in the pool, 0: none */
	uint32_t call_file; /* pool offset of the caller's file (inlined) */
	uint32_t call_line;
	uint32_t call_discriminator; /* DW_AT_GNU_discriminator of the call */
	uint16_t call_column;
	uint8_t inlined;
	uint8_t depth;
	uint8_t is_linkage; /* the name is what binutils calls a linkage name */
	uint8_t pad[7]; /* 0: every byte is a field (saved bytes are deterministic) */
};

struct line {
	uint64_t addr;
	uint32_t file; /* pool offset */
	uint32_t line;
	uint32_t discriminator;
	uint16_t column;
	uint8_t end; /* end of a sequence: no line from here */
	uint8_t pad; /* 0 */
};

struct symbol {
	uint64_t lo, size;
	uint32_t name;
	uint32_t file; /* the STT_FILE it is under, as binutils reports it */
	uint32_t shndx;
	uint32_t order : 30; /* in the symbol table: ties keep it */
	uint32_t bind : 2; /* SYM_LOCAL, SYM_GLOBAL, SYM_WEAK */
};

enum { SYM_LOCAL, SYM_GLOBAL, SYM_WEAK };

struct section {
	uint64_t lo, hi;
	uint32_t shndx, pad; /* pad: 0 */
};

struct segment {
	uint64_t offset, filesz, vaddr;
};

#define BLOCK 64 /* rows per entry of the sampled key arrays */

/* A sequence of line rows: a sorted run [first, first + n) covering
 * addresses [lo, hi]. */
struct seq {
	uint64_t lo, hi;
	uint32_t first, n;
};

/* What dwarf.c and symtab.c fill: growing arrays and a string pool with
 * its interning table.  One per CU being built (reused from CU to CU by a
 * thread), one for the ELF tier.  Packed into a blob when done. */
struct sym_build {
	struct scope *scopes;
	size_t nscopes, scap;
	struct line *lines;
	size_t nlines, lcap;
	struct symbol *syms;
	size_t nsyms, symcap;
	struct segment *segs;
	size_t nsegs;
	struct section *secs;
	size_t nsecs, seccap;
	char *pool;
	size_t pool_len, pool_cap;
	/* Interning: open addressing over pool offsets. */
	uint32_t *intern;
	size_t intern_cap, intern_used;
	/* In front of it, strings that stay put (see
	 * ds__symbols_intern_stable()), by address: direct-mapped, an entry
	 * good while its gen is B's. */
	struct intern_hit {
		const char *s;
		uint32_t off, gen;
	} *hits;
	uint32_t hits_gen;
	bool partial; /* a CU lacks what its split unit would give (no .dwo) */
};

/* A saved CU blob checked chunk by chunk (DS__SUM_CHUNK bytes), as
 * lookups reach its bytes: the sums from the file, and a state per chunk
 * (CK_* bits), set by whichever reader checks it first (the mapping's
 * bytes never change, so nothing needs ordering beyond the atomic byte).
 * CK_SUM: its sum is right; CK_GOOD: so is every chunk that a string met
 * in it reaches, forward to its NUL and back to the NUL before it (for
 * binutils' walk back to a path's start), and every scope and row that
 * starts in it leads nowhere outside the piece (a parent, a pool offset):
 * whatever a lookup reads from a good chunk is checked.  all: every chunk
 * is good, and lookups read the piece as a built one (once half of them
 * are, the rest are checked at once). */
enum { CK_SUM = 1, CK_GOOD = 2, CK_BAD = 4 };
struct ds__chunks {
	const unsigned char *base;
	uint64_t size;
	const uint32_t *sums;
	size_t n;
	uint64_t pool_lo, pool_hi; /* the string pool's bytes in the blob */
	uint64_t scopes_lo, lines_lo; /* where the scopes and the rows start */
	uint32_t nscopes, nlines;
	_Atomic uint8_t *state;
	_Atomic size_t good; /* chunks in CK_GOOD */
	atomic_bool all, finishing;
};
/* Bytes [off, off + len) of C's blob, every chunk under them good (checked
 * now where not yet).  false: damaged. */
bool ds__chunks_check(struct ds__chunks *C, uint64_t off, uint64_t len);
static inline bool ds__chunks_have(struct ds__chunks *C, const void *p, size_t len)
{
	uint64_t off = (uint64_t)((const unsigned char *)p - C->base);
	size_t a = (size_t)(off >> DS__SUM_CHUNK_SHIFT),
	       b = (size_t)((off + len - 1) >> DS__SUM_CHUNK_SHIFT);

	if (b - a <= 1 && (atomic_load_explicit(&C->state[a], memory_order_relaxed) &
			   atomic_load_explicit(&C->state[b], memory_order_relaxed) & CK_GOOD))
		return true;
	return ds__chunks_check(C, off, len);
}

/* A built CU, as lookups read it: views into its blob.  Scope parents and
 * pool offsets are the CU's own. */
struct piece {
	const struct scope *scopes;
	const struct line *lines;
	const struct seq *seqs;
	/* Every BLOCK-th address of lines and scopes: a search first narrows
	 * to a block in this small array, which stays in cache, then looks
	 * at one block of the large one. */
	const uint64_t *line_keys, *scope_keys;
	const char *pool;
	uint32_t nscopes, nlines, nseqs, pool_len;
	/* A saved blob checked as it is read: every scope, row and string a
	 * lookup reads goes through it.  NULL: built here, or checked (whole
	 * or every chunk). */
	struct ds__chunks *ck;
};

/* The ELF tier, the same way. */
struct elf_piece {
	const struct symbol *syms;
	const struct section *secs;
	const struct segment *segs;
	const char *pool;
	uint32_t nsyms, nsecs, nsegs, pool_len;
};

enum { CU_NEW, CU_BUILDING, CU_READY, CU_SAVED, CU_BAD };

struct cu {
	_Atomic int state; /* CU_*; CU_SAVED: a saved blob, not checked yet */
	atomic_bool recent; /* looked up since the last trim (CLOCK) */
	/* CU_READY: what lookups read, &view or &piece (set before the
	 * state, with release). */
	const struct piece *_Atomic live;
	struct piece piece; /* built here */
	/* A saved blob's view: set once at its first use, never changed
	 * (a lookup may still read it after a damaged chunk sent the CU to
	 * be built into piece); plain is the same without ck, what lookups
	 * read once every chunk is checked. */
	struct piece view, plain;
	const void *blob; /* saved: the piece's bytes; NULL: built here (under mu) */
	uint64_t size;
	uint32_t sum; /* of a saved blob (ds__chunked_sum()) */
	const uint32_t *chunks; /* its chunks' sums, from the file (or NULL) */
	struct ds__chunks *ck; /* their states, from its first use */
	void *own[5]; /* built here: the piece's arrays */
};

struct ds__dwarf; /* dwarf_int.h: what lazy CU builds read */

struct ds_symbols {
	struct elf_piece elf;
	struct ds__blob elf_blob;
	bool elf_own;
	/* DWARF tier: the CUs with code, and their address ranges. */
	struct cu *cus;
	size_t ncus;
	struct ds__cu_range *ranges;
	uint64_t *range_maxhi; /* the greatest hi of ranges[0..i] */
	size_t nranges;
	bool ranges_own;
	struct ds__dwarf *dwarf; /* NULL once every CU is built, or saved */
	/* Or the units are Go's (no DWARF with code): NULL once all built. */
	struct ds__go *go;
	bool go_units;
	pthread_mutex_t mu; /* builders' hand-off (with cv); dwarf's end */
	pthread_cond_t cv;
	_Atomic size_t built; /* CUs in CU_READY, CU_BAD or CU_SAVED */
	_Atomic uint64_t bytes;
	_Atomic uint64_t *acct_bytes, *acct_units; /* the store's (under mu) */
	void (*release)(void *);
	void *release_arg;
	bool full; /* see ds__symbols_full() */
	bool read_dwarf;
	bool complete; /* every CU built (under mu) */
	atomic_bool reported; /* ds__symbols_newly_complete() said so (set under mu) */
	/* Where a saved index's damaged CUs are built from (see
	 * ds__symbols_fallback()); fb_failed: that DWARF did not match. */
	struct ds_context *fb_ctx;
	struct Elf *fb_elf;
	char *fb_name, *fb_binary;
	bool fb_failed;
	/* Where the DWARF's auxiliary files come from (the store; S->dwarf
	 * holds what it reads, and gives it back when it is let go). */
	struct ds__aux_src aux;
	atomic_bool partial; /* see ds__symbols_partial() */
	/* Which strings a pointer into this index may name: uid is this
	 * index's alone among every index the process makes, and
	 * strings_epoch moves whenever memory of its strings is freed (a
	 * trim), so a cache keyed by string pointers (symbolize.c's batch)
	 * that saw both unchanged can trust its keys. */
	uint64_t uid;
	_Atomic uint32_t strings_epoch;
};

#define GROW(S, arr, n, cap)                                                     \
	({                                                                       \
		int _err = 0;                                                    \
		if ((S)->n == (S)->cap) {                                        \
			size_t _c = (S)->cap ? 2 * (S)->cap : 1024;              \
			void *_p = realloc((S)->arr, _c * sizeof(*(S)->arr));    \
			if (_p) {                                                \
				(S)->arr = _p;                                   \
				(S)->cap = _c;                                   \
			} else {                                                 \
				_err = -ENOMEM;                                  \
			}                                                        \
		}                                                                \
		_err;                                                            \
	})

/* ---- a piece as a blob (symblob.c) */

/* How many sampled keys n rows (or scopes) have. */
size_t ds__symblob_nkeys(uint32_t n);
/* Views into a CU blob whose size fits its header. */
void ds__symblob_cu_view(const void *blob, struct piece *P);
/* A blob from a file: can every lookup read it without leaving it?
 * (Whether its answers are right is the CRC's business.) */
bool ds__symblob_cu_blob_ok(const void *blob, uint64_t size);
/* The same for a blob checked chunk by chunk: only its head (header,
 * sequences, keys, the pool's last byte: what every lookup reads), its
 * chunks checked through C (base, size, sums and n filled in; this sets
 * the pool's place).  The rest is checked where lookups read it. */
bool ds__symblob_cu_head_ok(struct ds__chunks *C);
/* A built CU made a piece: sorted scopes, ordered sequences (or sorted
 * rows), keys; the arrays are taken from B (no copy) into own[] and
 * *bytes.  B keeps its interning table for the next CU. */
int ds__symblob_cu_finish(struct sym_build *B, struct piece *P, void *own[5], uint64_t *bytes);
/* A piece as the blob a saved index holds, in the segments it is in
 * memory (written without a copy): *hdr is filled (the blob's header),
 * segs[0..return) point at it and at P's arrays, DS__BLOB_SEGS at most;
 * *size the blob's. */
size_t ds__symblob_cu_segs(const struct piece *P, struct ds__cu_hdr_buf *hdr,
			   struct ds__seg segs[DS__BLOB_SEGS], uint64_t *size);
void ds__symblob_elf_view(const void *blob, struct elf_piece *E);
bool ds__symblob_elf_blob_ok(const void *blob, uint64_t size);
int ds__symblob_elf_pack(struct sym_build *B, void **blob, uint64_t *size);

/* ---- symindex (lib/symbolize/symindex.c) */

/* CU i, ready; NULL when it has nothing (or building it failed: *err). */
const struct piece *ds__symbols_unit_get(struct ds_symbols *S, size_t i, int *err);
/* A lookup found P, CU i's saved piece, damaged (a chunk's sum, or a field
 * leading out of it): the CU is built from the DWARF (ds__symbols_fallback)
 * for the next ds__symbols_unit_get(), and the index saved again; readers
 * still in P finish there. */
void ds__symbols_unit_damaged(struct ds_symbols *S, size_t i, const struct piece *P);
/* Build the CUs of want (NULL: all) on up to the machine's cores. */
int ds__symbols_build_units(struct ds_symbols *S, const uint8_t *want, size_t nwant);

/* The pool offset of s, interned (0 for NULL or on allocation failure). */
uint32_t ds__symbols_intern(struct sym_build *B, const char *s);
/* The same for a string that does not move or change until B is reset (a
 * name in a mapped string section): a string met again is found by its
 * address, not hashed and compared again. */
uint32_t ds__symbols_intern_stable(struct sym_build *B, const char *s);
/* Empty B for the next CU, keeping its memory. */
void ds__sym_build_reset(struct sym_build *B);
void ds__sym_build_release(struct sym_build *B);

/* One frame of an answer.  Strings point into the index (valid while it
 * lives), function names as the DWARF or ELF symbol has them (mangled). */
struct ds__raw_frame {
	const char *function; /* NULL: unknown */
	uint64_t function_start;
	const char *file; /* NULL: unknown */
	unsigned line, column, discriminator;
	bool inlined; /* inlined into the next frame */
};

typedef int (*ds__frame_fn)(void *arg, const struct ds__raw_frame *f);

/* A caller's place in an index: where its last lookup landed.  Lookups in
 * ascending order (a sorted batch) start their searches there.  Zero it
 * before the first lookup; it belongs to one caller (thread), and is good
 * only while the CUs it points into are (one batch call). */
#define DS__FIND_CANDIDATES 16 /* CUs claiming one address that are looked into */
#define DS__FIND_FRAMES 8 /* frames of an answer a hint keeps */

struct ds__find_hint {
	const struct ds_symbols *S;
	const void *piece;
	size_t range, seq, scope, row;
	/* The CUs that hold every address in [units_from, units_until), in
	 * unit order, and the piece of the one (when one) as it was got. */
	uint64_t units_from, units_until;
	uint32_t ncus;
	uint32_t cus[DS__FIND_CANDIDATES];
	const struct piece *unit;
	/* Set by each ds__symbols_find(): every address from the one asked
	 * up to this one (exclusive) has the same frames, from the same
	 * strings, as it (the address itself when that is not known); a
	 * sorted batch answers them without a lookup. */
	uint64_t same_until;
	/* The line row's file of the last answer: file_of() of (pool, off). */
	const char *file_pool, *file;
	uint32_t file_off;
	unsigned file_flags;
	/* The frames of the last answer where one CU answered with a scope
	 * and a row (nframes 0: not kept), and up to where, with the same
	 * flags, a later address has the same scopes, in the same sequence
	 * of rows: its frames are these, the innermost with the row's
	 * file and line (ds__symbols_find()'s quick way). */
	uint64_t frames_from, frames_until;
	unsigned frames_flags, nframes;
	struct ds__raw_frame frames[DS__FIND_FRAMES];
};


/* The frames of addr (a virtual address), innermost first, each passed to
 * emit, as flags ask (DS_SYM_INLINES, _BINUTILS, _ELF_NAMES, _NO_LINES;
 * DS_SYM_DEMANGLE is the caller's); hint may be NULL.  *from_symtab: the
 * name came from ELF symbols.  0 (no frame is an answer too), emit's nonzero return, or a
 * negative errno when the index could not be completed for addr. */
int ds__symbols_find(struct ds_symbols *S, uint64_t addr, unsigned flags,
		     struct ds__find_hint *hint, bool *from_symtab, ds__frame_fn emit, void *arg);

/* ---- dwarf (lib/symbolize/dwarf.c) */

/* Open debug's DWARF for CU builds; name is debug's path, binary the
 * binary's (may be NULL): split DWARF is looked for beside both.  src
 * (copied; NULL: none) gives the auxiliary files: the dwz alt file debug
 * names (held and pinned as long as D; not found: names in it stay
 * unknown, and ds__dwarf_partial() says so), the .dwp package of its
 * split units (held as long as D), and each unit's .dwo (held from its
 * first build); src's store must outlive D.  0; -ENODATA: no DWARF to
 * read; -ENOMEM. */
int ds__dwarf_open(struct ds_context *ctx, struct Elf *debug, const char *name,
		   const char *binary, const struct ds__aux_src *src, struct ds__dwarf **out);
/* Let D go, and its holds on auxiliary files. */
void ds__dwarf_close(struct ds__dwarf *D);
/* D names a dwz alt file it was not given. */
bool ds__dwarf_partial(const struct ds__dwarf *D);
/* The CUs that have code (numbered 0..n-1) and their address ranges,
 * sorted by (lo, hi, cu); *ranges is malloc()ed. */
size_t ds__dwarf_units(const struct ds__dwarf *D);
int ds__dwarf_ranges(struct ds__dwarf *D, struct ds__cu_range **ranges, size_t *n);
/* Memory D holds (decompressed sections, tables). */
uint64_t ds__dwarf_bytes(const struct ds__dwarf *D);

/* A builder's scratch (abbreviation tables, resolved names); one per
 * thread.  Building different CUs from several threads at once is safe. */
struct ds__dwarf_worker;
struct ds__dwarf_worker *ds__dwarf_worker_new(struct ds__dwarf *D);
void ds__dwarf_worker_free(struct ds__dwarf_worker *W);
/* Add unit's scopes and line rows to B (reset first).  0 or -ENOMEM;
 * malformed DWARF ends what is read of the unit, never the build.  A
 * skeleton unit's scopes come from its split unit, in the package or its
 * .dwo (the store's, pinned for the build); B->partial when it was not
 * found. */
int ds__dwarf_build_unit(struct ds__dwarf_worker *W, size_t unit, struct sym_build *B);

/* ---- gopclntab (lib/symbolize/gopclntab.c): Go's table, units like DWARF CUs */

struct ds__go;
/* Where a Go table lies (for tests and the fuzz harness; ds__go_open()
 * finds it in an ELF): mem holds [vaddr, vaddr + size) of the binary, the
 * table starts at tab_off and has tab_size bytes (0: to the end of mem).
 * gofunc: the address of go.func.* (Go >= 1.18; 0: unknown, no inline
 * frames); text: the base of entry offsets when the header's is 0;
 * [code_lo, code_hi): where the first function must start (0, 0: not
 * checked). */
struct ds__go_image {
	const unsigned char *mem;
	size_t size;
	uint64_t vaddr;
	size_t tab_off, tab_size;
	uint64_t gofunc, text, code_lo, code_hi;
	/* go.func.* (the inline trees) when another segment than mem's
	 * holds it (Go's PIE link: the table in .data.rel.ro, go.func.* in
	 * .rodata): [fn_vaddr, fn_vaddr + fn_size) at fn_mem; else NULL. */
	const unsigned char *fn_mem;
	size_t fn_size;
	uint64_t fn_vaddr;
};
/* The .gopclntab of elf (by section, else by scanning its segments),
 * copied: elf need not outlive it.  0; -ENODATA: none; -ENOMEM. */
int ds__go_open(struct ds_context *ctx, struct Elf *elf, const char *name, struct ds__go **out);
/* The same from an image (copied).  -ENODATA: no table there. */
int ds__go_open_image(const struct ds__go_image *im, struct ds__go **out);
void ds__go_close(struct ds__go *G);
/* Units of a few hundred functions each, and their ranges (malloc()ed,
 * sorted), as ds__dwarf_units() and ds__dwarf_ranges(). */
size_t ds__go_units(const struct ds__go *G);
int ds__go_ranges(struct ds__go *G, struct ds__cu_range **ranges, size_t *n);
uint64_t ds__go_bytes(const struct ds__go *G);
/* unit's functions (scopes), inlined calls (scopes with their call site)
 * and line rows into B (reset first).  0 or -ENOMEM; a malformed table
 * ends what is read, never the build.  Safe from several threads. */
int ds__go_build_unit(struct ds__go *G, size_t unit, struct sym_build *B);

/* G's functions as ELF symbols of B, in table order: each named as Go
 * prints it, from its entry for the size its pc-value tables give (its
 * symbol's size, as `go tool nm -size` shows it: padding up to the next
 * function excluded), in the section of B that holds the entry (a
 * function no section holds is left out).  When B has no sections (no
 * section headers) the span of the functions becomes one, index 0.  How
 * many, or -ENOMEM. */
int ds__go_symbols(const struct ds__go *G, struct sym_build *B);

/* ---- symtab (lib/symbolize/symtab.c) */

/* Add the symbols of elf's symbol tables of this type (SHT_SYMTAB or
 * SHT_DYNSYM), and its allocated sections; how many, or -ENOMEM. */
int ds__symtab_add(struct ds_context *ctx, const char *elf_name, struct sym_build *B,
		   struct Elf *elf, uint32_t type);
/* The same for the .symtab of MiniDebugInfo (.gnu_debugdata). */
int ds__symtab_add_minidebuginfo(struct ds_context *ctx, const char *elf_name,
				 struct sym_build *B, struct Elf *elf);
/* NAME@plt symbols for the PLT stubs of elf (x86-64, aarch64), where no
 * symbol read before names anything in their section; how many, or
 * -ENOMEM. */
int ds__symtab_add_plt(struct ds_context *ctx, const char *elf_name, struct sym_build *B,
		       struct Elf *elf);
/* B's PT_LOAD segments from elf's program headers (none if it has none). */
int ds__symtab_read_segments(struct sym_build *B, struct Elf *elf);

#endif
