/* SPDX-License-Identifier: MIT */
/* The symbolize layer's offer to the layers above: the symbol index, its
 * saved form, the auxiliary debug files it reads, the batch queries. */
#ifndef DS_SYMBOLIZE_H
#define DS_SYMBOLIZE_H

#include "debuginfod.h"

/* ---- symfile (symfile.c): saved symbol indexes
 *
 * A complete index is saved as one file per build ID (the format is
 * described in symfile.c), next to its debuginfo: in its debuginfod cache
 * entry (<cache>/<hex>/dsostore-index) when the debuginfo came from
 * debuginfod, else in the cache's symindex_root (<root>/<hex>).  Whatever
 * goes wrong costs a rebuild and a debug message, nothing more. */

struct ds_debuginfo;
struct ds_symbols;
struct ds__loadmap;
struct ds__blob;
struct ds__symbols_parts;

/* What the index of a build ID also depends on: the debuginfo file and the
 * binary (its segments, and its symbols when the debuginfo has none),
 * each known by its size and the CRC-32 of its ELF header, program header
 * table and section header table, as the file has them. */
struct ds__symfile_key {
	struct ds_build_id bid;
	uint64_t debug_size, binary_size; /* binary_size 0: no binary of its own */
	uint32_t debug_crc, binary_crc;
};

/* Bump when what symindex.c writes into a blob changes: an index of
 * another blob version is not loaded.  2: the ELF tier names PLT stubs,
 * and split DWARF is read (indexes of split binaries saved before lack
 * its functions and inlines).  3: a line table's file offset is where
 * elfutils' path starts inside binutils' (dwarf_line.c). */
#define DS__SYMFILE_BLOB_VERSION 3

/* The key of an index built from debug (fd, Elf) and binary (may be -1,
 * NULL: none).  0, or a negative errno. */
int ds__symfile_key(struct ds__symfile_key *k, const struct ds_build_id *bid, int debug_fd,
		    struct Elf *debug, int binary_fd, struct Elf *binary);
struct ds__aux_src;
/* The saved index of di for key, mapped: 0 and *out; -ENOENT none;
 * -ENOTSUP switched off; -ESTALE a file of other inputs or another
 * version; -EBADMSG a damaged one (logged, to be overwritten by the next
 * save); other negative errnos.  A damaged CU is built from di's DWARF,
 * with its auxiliary files from aux (ds__symbols_fallback()). */
int ds__symfile_load(struct ds_context *ctx, const struct ds_debuginfo *di,
		     const struct ds__symfile_key *key, const struct ds__aux_src *aux,
		     struct ds_symbols **out);
/* Save S (completed first: every CU) for di, atomically; its path in
 * *path_out when not NULL (malloc()ed).  0, or a negative errno (logged
 * at debug level: a saved index is a cache). */
int ds__symfile_save(struct ds_context *ctx, const struct ds_debuginfo *di,
		     const struct ds__symfile_key *key, struct ds_symbols *S, char **path_out);

/* The container alone, for the loader, its fuzz harness and tests.  Write
 * parts (valid as the loader checks them) for key to fd; 0, -EINVAL for
 * parts the loader would refuse, or a write's negative errno. */
int ds__symfile_write(int fd, const struct ds__symfile_key *key,
		      const struct ds__symbols_parts *parts);
/* Check len bytes at map as a saved index of key (key NULL: whatever
 * inputs it names) and fill *parts, pointing into map, with *cus a
 * malloc()ed array the caller frees.  0; -ESTALE (other inputs, version,
 * byte order) or -EBADMSG (damaged), with why; -ENOMEM. */
int ds__symfile_parse(const void *map, size_t len, const struct ds__symfile_key *key,
		      struct ds__symbols_parts *parts, struct ds__blob **cus, char *why,
		      size_t whylen);

/* ---- auxiliary debug files: the DWARF reader reads them, the store owns
 * them (lib/store/storeaux.c)
 *
 * dwz alt files (by build ID), .dwp packages (by file: resolved path and
 * identity) and .dwo files (by dwo id) belong to the store, like a DSO's
 * debuginfo: found once for the whole store (alt files locally, then
 * debuginfod; split DWARF locally only: debuginfod serves no .dwo), opened
 * once, shared by every DSO index that names them, counted once in the
 * budget (bytes_held), freed with their last user.  The index's readers never
 * search or open files: they ask the store through a struct ds__aux_src. */

enum ds__aux_kind { DS__AUX_ALT, DS__AUX_DWP, DS__AUX_DWO };

struct ds__dwarf_aux;
/* The DWARF of an opened auxiliary file (found stays the caller's, open as
 * long as the result, whose sections point into its map): its sections
 * loaded (decompressed) and, by kind, an alt file's units scanned, a
 * package's unit index read and checked, a .dwo checked to hold the split
 * compile unit dwo_id (for_name: the file whose skeleton names it, for the
 * warning when it holds another).  Immutable after, read by any number of
 * threads.  0; -ENODATA: no DWARF in it (or implausible, or a package
 * without a valid index: logged); -ESTALE: a .dwo of another unit (warned);
 * -ENOMEM. */
int ds__dwarf_aux_open(struct ds_context *ctx, enum ds__aux_kind kind, const struct ds_found *found,
		       uint64_t dwo_id, const char *for_name, struct ds__dwarf_aux **out);
void ds__dwarf_aux_close(struct ds__dwarf_aux *A);
/* Memory it holds (decompressed sections, tables; not the file's map). */
uint64_t ds__dwarf_aux_bytes(const struct ds__dwarf_aux *A);
/* A package's units: their dwo ids, sorted, in a malloc()ed *ids.  0 or
 * -ENOMEM. */
int ds__dwarf_dwp_ids(const struct ds__dwarf_aux *A, uint64_t **ids, size_t *n);

/* A skeleton unit: the split unit it needs, by its dwo id, DW_AT_dwo_name
 * (or the GNU one) and DW_AT_comp_dir (NULL: none). */
struct ds__skeleton {
	uint64_t id;
	const char *dwo_name, *comp_dir;
};
/* The skeleton units of debug's DWARF (name: its path, for messages) in a
 * malloc()ed *out that holds their strings too (NULL, 0: none: no DWARF,
 * or none split).  A file whose .debug_abbrev names no dwo attribute is
 * not read further.  0 or -ENOMEM. */
int ds__dwarf_skeletons(struct ds_context *ctx, struct Elf *debug, const char *name,
			struct ds__skeleton **out, size_t *n);

/* What a DWARF asks of the store.  for_name: the debuginfo's path, for
 * messages. */
struct ds__dwp_want {
	const char *binary, *debug; /* paths; binary may be NULL */
	const uint64_t *ids; /* the skeletons' dwo ids */
	size_t nids;
	const char *for_name;
};
struct ds__dwo_want {
	uint64_t id;
	const char *dwo_name, *comp_dir; /* the skeleton's */
	const char *binary, *debug;
	const char *for_name;
};

/* A hold on one of the store's auxiliary files (opaque). */
struct ds__aux;
struct ds__aux_src {
	/* The alt file of bid (name: the .gnu_debugaltlink path, looked at
	 * first, relative to the directory of from, the debug file naming
	 * it, when it is relative), opened. */
	struct ds__aux *(*alt)(void *arg, const struct ds_build_id *bid, const char *name,
			       const char *from);
	/* The first package of w's places (<binary>.dwp, <debug>.dwp) that
	 * holds one of its ids at least (one that holds none is refused with
	 * a warning). */
	struct ds__aux *(*dwp)(void *arg, const struct ds__dwp_want *w);
	/* The .dwo of a skeleton, found where ds__dwo_candidates() says, of
	 * its dwo id (one of another id is refused with a warning). */
	struct ds__aux *(*dwo)(void *arg, const struct ds__dwo_want *w);
	/* Each returns a hold, NULL when there is none (the store said why);
	 * each may block on another thread's search of the same file.  Holds
	 * keep the file's record (where it is); the file itself is only
	 * sure to stay open while pinned: pin gives its DWARF, opened again
	 * if the budget closed it (NULL: it cannot be, the store said why),
	 * unpin ends the pin.  Pins nest; put gives the hold back, the last
	 * one closes the file. */
	const struct ds__dwarf_aux *(*pin)(void *arg, struct ds__aux *h);
	void (*unpin)(void *arg, struct ds__aux *h);
	void (*put)(void *arg, struct ds__aux *h);
	void *arg;
};

/* ---- symindex (symindex.c); its readers share symindex.h */

struct ds_symbols;
/* dwarf: read the debuginfo's DWARF too; without, the index holds ELF
 * symbols only (the names-only tier).  aux: where the auxiliary files the
 * DWARF names come from (copied; NULL: nowhere: no alt file, no split
 * units), asked by the DWARF, their holds given back when it is let go. */
int ds__symbols_build(struct ds_context *ctx, struct Elf *debug, const char *debug_name,
		      struct Elf *binary, const char *binary_name, bool dwarf,
		      const struct ds__aux_src *aux, struct ds_symbols **out);
/* S holds all its DSO can give: its DWARF was read, or there was none. */
bool ds__symbols_full(const struct ds_symbols *S);
/* Its DWARF was read. */
bool ds__symbols_read_dwarf(const struct ds_symbols *S);
void ds__symbols_free(struct ds_symbols *S);
/* What S holds now; CU builds add to it later. */
uint64_t ds__symbols_bytes(const struct ds_symbols *S);
/* Count S's memory in *bytes, now and as CUs are built (their number in
 * *units); once, before S is published. */
void ds__symbols_account(struct ds_symbols *S, _Atomic uint64_t *bytes, _Atomic uint64_t *units);
/* Free the CUs of S built here (saved ones are the file's) that were not
 * looked up since the last call, to be built again when asked;
 * returns the bytes freed.  Only while no lookup runs on S (the store
 * calls it for a DSO nobody pins, under the eviction protocol). */
uint64_t ds__symbols_trim(struct ds_symbols *S);
/* Take S's memory out of that count (before S is freed or retired). */
void ds__symbols_unaccount(struct ds_symbols *S);

/* A file offset to a virtual address through the PT_LOAD segments;
 * -ERANGE outside every one. */
int ds__symbols_vaddr(const struct ds_symbols *S, uint64_t offset, uint64_t *vaddr);

/* Build, before a batch's lookups, what the sorted virtual addresses
 * vaddrs[0..n) will need (their CUs; every CU when more than a quarter
 * of them, on all cores).  0 or -ENOMEM.  Lookups build what is missing
 * anyway: this is for speed only. */
int ds__symbols_prepare(struct ds_symbols *S, const uint64_t *vaddrs, size_t n);
/* S, an index of DWARF, is complete (every CU built, by a batch or by
 * lookups) and not from a file (or from one found damaged), and this is
 * the first caller told: the moment to save it (symfile.c). */
bool ds__symbols_newly_complete(struct ds_symbols *S);

/* ---- symbolize (symbolize.c) */

/* ds_dso_symbolize_batch() in three steps around the DSO's index (store.c
 * holds the DSO's side).  start: room for n answers, the last call's
 * dropped; 0, -EINVAL (n above INT_MAX) or -ENOMEM (then the batch holds
 * no answers). */
int ds__sym_batch_start(struct ds_sym_batch *b, size_t n);
/* Every answer says err: the DSO has no index. */
void ds__sym_batch_fail(struct ds_sym_batch *b, const uint64_t *addrs, int err);
/* The distinct virtual addresses of addrs, sorted, in *vaddrs (the batch's,
 * valid until lookup); file offsets translated through lm when given (the
 * executable's headers of a DSO known by its debuginfo alone), else
 * through S, those outside every segment answered now.  How many. */
size_t ds__sym_batch_sort(struct ds_sym_batch *b, const struct ds_symbols *S,
			  const struct ds__loadmap *lm, const uint64_t *addrs, unsigned flags,
			  const uint64_t **vaddrs);
/* Looks them up in S and answers every address, with its reason (see
 * ds__sym_batch_reasons()); how many were found. */
int ds__sym_batch_lookup(struct ds_sym_batch *b, struct ds_symbols *S, unsigned flags,
			 int di_err);
/* Every answer's reason from its status; di_err: why the DSO has no
 * debuginfo (0: it has). */
void ds__sym_batch_reasons(struct ds_sym_batch *b, int di_err);
/* ds_symbolize_pid()'s assembly (lib/live/pidsym.c), after start: answer
 * i becomes a copy of a (frames and strings copied into b), with module
 * (copied; may be NULL); 0, or -ENOMEM (answer i then says it).  done:
 * once every answer is put, their frame pointers set. */
int ds__sym_batch_put(struct ds_sym_batch *b, size_t i, const struct ds_sym_answer *a,
		      const char *module);
void ds__sym_batch_done(struct ds_sym_batch *b);
/* put copies a string once however many answers carry it, by its
 * address: call this when the answers put next come from another call
 * (their strings may lie where earlier ones did). */
void ds__sym_batch_forget(struct ds_sym_batch *b);
/* A batch of b's own for the calls about key (a DSO), kept until b is
 * freed (a few: the least lately asked is taken for another key), so that
 * what a batch keeps from call to call (the index's strings measured,
 * checked and copied, names demangled) serves every call on b, not one.
 * NULL: no memory. */
#define DS__SYM_SCRATCH_MAX 4
struct ds_sym_batch *ds__sym_batch_scratch(struct ds_sym_batch *b, const void *key);
/* ds__sym_batch_put() of an answer of one of b's scratch batches, its
 * strings not copied: they stay where that scratch batch keeps them (its
 * index strings and demangled names), which holds until b's next call
 * only if that scratch batch is not asked again before: the caller's
 * word (no other key took it meanwhile, nor the same key again). */
int ds__sym_batch_put_scratch(struct ds_sym_batch *b, size_t i, const struct ds_sym_answer *a,
			      const char *module);
/* An answer as a ds_sym_result of its own: answer's error, or -ENOMEM. */
int ds__sym_result_from(const struct ds_sym_answer *a, struct ds_sym_result *out);

#endif
