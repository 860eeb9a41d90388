/* SPDX-License-Identifier: MIT */
/*
 * The symbol index of a DSO, in tiers, each built when first needed:
 *   - the ELF tier: ELF symbols (.symtab, else .gnu_debugdata's, else
 *     .dynsym; symtab.c), the allocated sections and the PT_LOAD segments.
 *     Built with the index; enough for names-only queries, which never
 *     read DWARF;
 *   - the DWARF tier, per compilation unit: the map of which CU holds
 *     which addresses comes with the index (dwarf.c: .debug_aranges or
 *     the CUs' top DIEs); a CU's functions, inlined instances and line
 *     rows are built the first time a lookup lands in it, by whichever
 *     thread gets there first (others wait for that one), or ahead of a
 *     batch by ds__symbols_prepare(), on all cores.
 * A built CU is one blob: its scopes (one entry per address range of every
 * function and inlined instance, sorted by start, each knowing its
 * enclosing scope; ranges nest, so the innermost scope of an address is
 * the last range that starts at or below it, or the first of its
 * ancestors that contains it), its line rows by sequence, sampled keys and
 * its string pool.  The ELF tier is a blob too.  Blobs are what the saved
 * index (symfile.c) writes and maps back; one read from a file is checked
 * (CRC, then structure) before its first use.
 *
 * This file builds and keeps the tiers; symblob.c orders what a reader
 * filled and packs, views and checks blobs; symlookup.c answers queries.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS_MAX 16

/* -------------------------------------------------------------- the tiers */

static void account(struct ds_symbols *S, int64_t bytes, bool unit)
{
	pthread_mutex_lock(&S->mu);
	atomic_fetch_add(&S->bytes, (uint64_t)bytes);
	if (S->acct_bytes)
		atomic_fetch_add(S->acct_bytes, (uint64_t)bytes);
	if (unit && S->acct_units)
		atomic_fetch_add(S->acct_units, 1);
	pthread_mutex_unlock(&S->mu);
}

void ds__symbols_account(struct ds_symbols *S, _Atomic uint64_t *bytes, _Atomic uint64_t *units)
{
	pthread_mutex_lock(&S->mu);
	atomic_fetch_add(bytes, atomic_load(&S->bytes));
	S->acct_units = units;
	S->acct_bytes = bytes;
	pthread_mutex_unlock(&S->mu);
}

void ds__symbols_unaccount(struct ds_symbols *S)
{
	if (!S)
		return;
	pthread_mutex_lock(&S->mu);
	if (S->acct_bytes)
		atomic_fetch_sub(S->acct_bytes, atomic_load(&S->bytes));
	S->acct_bytes = S->acct_units = NULL;
	pthread_mutex_unlock(&S->mu);
}

static struct ds_symbols *symbols_new(void)
{
	static _Atomic uint64_t next_uid = 1;
	struct ds_symbols *S = calloc(1, sizeof(*S));

	if (!S)
		return NULL;
	S->uid = atomic_fetch_add(&next_uid, 1);
	pthread_mutex_init(&S->mu, NULL);
	pthread_cond_init(&S->cv, NULL);
	atomic_init(&S->bytes, sizeof(*S));
	return S;
}

/* debug's DWARF into *D, its auxiliary files from S->aux.  Without the
 * alt file it names the DWARF is read all the same (names in it stay
 * unknown), and S is not saved. */
static int dwarf_open(struct ds_symbols *S, struct ds_context *ctx, Elf *debug, const char *name,
		      const char *binary, struct ds__dwarf **D)
{
	int err = ds__dwarf_open(ctx, debug, name, binary, S->aux.pin ? &S->aux : NULL, D);

	if (!err && ds__dwarf_partial(*D))
		atomic_store(&S->partial, true);
	return err;
}

void ds__symbols_free(struct ds_symbols *S)
{
	if (!S)
		return;
	for (size_t i = 0; i < S->ncus; i++) {
		for (int k = 0; k < 5; k++)
			free(S->cus[i].own[k]);
		if (S->cus[i].ck)
			free((void *)S->cus[i].ck->state);
		free(S->cus[i].ck);
	}
	free(S->cus);
	if (S->ranges_own)
		free(S->ranges);
	free(S->range_maxhi);
	if (S->elf_own)
		free((void *)S->elf_blob.data);
	ds__dwarf_close(S->dwarf);
	ds__go_close(S->go);
	free(S->fb_name);
	free(S->fb_binary);
	if (S->release)
		S->release(S->release_arg);
	pthread_mutex_destroy(&S->mu);
	pthread_cond_destroy(&S->cv);
	free(S);
}

uint64_t ds__symbols_bytes(const struct ds_symbols *S)
{
	return S ? atomic_load(&((struct ds_symbols *)S)->bytes) : 0;
}

bool ds__symbols_full(const struct ds_symbols *S)
{
	return S && S->full;
}

bool ds__symbols_read_dwarf(const struct ds_symbols *S)
{
	return S && S->read_dwarf;
}

static int set_ranges(struct ds_symbols *S)
{
	S->range_maxhi = malloc((S->nranges ? S->nranges : 1) * sizeof(*S->range_maxhi));
	if (!S->range_maxhi)
		return -ENOMEM;
	for (size_t i = 0; i < S->nranges; i++)
		S->range_maxhi[i] = i && S->range_maxhi[i - 1] > S->ranges[i].hi
					    ? S->range_maxhi[i - 1]
					    : S->ranges[i].hi;
	return 0;
}

/* Units from the .gopclntab of elf (or of nothing: 0); *go: the table
 * if it is open already (S takes it). */
static int go_units(struct ds_symbols *S, struct ds_context *ctx, Elf *elf, const char *name,
		    struct ds__go **go)
{
	int err = *go ? 0 : ds__go_open(ctx, elf, name, go);

	S->go = *go;
	*go = NULL;
	if (err)
		return err == -ENOMEM ? err : 0;
	S->go_units = true;
	S->ncus = ds__go_units(S->go);
	free(S->cus);
	S->cus = calloc(S->ncus ? S->ncus : 1, sizeof(*S->cus));
	if (S->ranges_own)
		free(S->ranges);
	free(S->range_maxhi);
	S->range_maxhi = NULL;
	S->ranges = NULL;
	err = S->cus ? ds__go_ranges(S->go, &S->ranges, &S->nranges) : -ENOMEM;
	S->ranges_own = true;
	return err ? err : set_ranges(S);
}

/* Whether addr lies in one of the n symbols at syms, sorted and
 * disjoint. */
static bool in_symbols(const struct symbol *syms, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr - syms[lo - 1].lo < syms[lo - 1].size;
}

/* Go's functions from the .gopclntab of elf, after the .dynsym symbols B
 * may hold, which keep only what starts outside every Go function (the C
 * code of cgo; Go functions it exports are named by both, Go's name
 * wins).  No table: B unchanged.  *go: the table, opened (NULL if
 * none).  0 or -ENOMEM. */
static int go_symbols(struct ds_context *ctx, struct sym_build *B, Elf *elf, const char *name,
		      struct ds__go **go)
{
	size_t ndyn = B->nsyms, n = 0;
	int err = ds__go_open(ctx, elf, name, go), added;

	if (err)
		return err == -ENOMEM ? err : 0;
	added = ds__go_symbols(*go, B);
	if (added <= 0)
		return added;
	for (size_t i = 0; i < ndyn; i++)
		if (!in_symbols(B->syms + ndyn, (size_t)added, B->syms[i].lo))
			B->syms[n++] = B->syms[i];
	memmove(B->syms + n, B->syms + ndyn, (size_t)added * sizeof(*B->syms));
	B->nsyms = n + (size_t)added;
	for (size_t i = 0; i < B->nsyms; i++)
		B->syms[i].order = (uint32_t)i & ((1u << 30) - 1);
	ds_debug(ctx, "%s: %d Go functions as symbols, %zu of %zu .dynsym symbols kept", name,
		 added, n, ndyn);
	return 0;
}

/* Build the index from a debuginfo ELF (may be NULL) and the binary itself
 * (may be NULL); their names (paths) are for messages.  The ELF tier is
 * built now; with dwarf, the DWARF is opened and its CUs mapped, each
 * built when first asked.  debug must stay open as long as the index
 * (the store drops the index with its debuginfo); binary need not.
 * Without dwarf, the ELF symbols are exactly those of a DWARF index (same
 * sources, same order), so a names-only answer is the same from either
 * tier. */
int ds__symbols_build(struct ds_context *ctx, Elf *debug, const char *debug_name, Elf *binary,
		      const char *binary_name, bool dwarf, const struct ds__aux_src *aux,
		      struct ds_symbols **out)
{
	struct ds_symbols *S = symbols_new();
	struct sym_build EB = { 0 };
	struct ds__go *go = NULL;
	bool symtab = false;
	/* (Split DWARF is looked for beside the binary: its real path.) */
	const char *binary_path = binary ? binary_name : NULL;
	void *blob = NULL;
	uint64_t size = 0;
	int err = 0;

	if (!S)
		return -ENOMEM;
	if (!debug_name)
		debug_name = "debuginfo";
	if (!binary_name)
		binary_name = "binary";
	S->full = dwarf || !debug;
	S->read_dwarf = dwarf && debug;
	if (aux)
		S->aux = *aux;
	if (debug && dwarf) {
		err = dwarf_open(S, ctx, debug, debug_name, binary_path, &S->dwarf);
		if (err == -ENODATA)
			err = 0;
	}
	if (!err && debug && ds__symtab_add(ctx, debug_name, &EB, debug, SHT_SYMTAB) < 0)
		err = -ENOMEM;
	symtab = EB.nsyms != 0;
	/* Segments from the binary when there is one: objcopy
	 * --only-keep-debug rewrites the debug file's offsets, and file
	 * offsets (perf's) are the binary's. */
	if (!err && binary)
		err = ds__symtab_read_segments(&EB, binary);
	if (!err && debug && !EB.nsegs)
		err = ds__symtab_read_segments(&EB, debug);
	if (!err && binary) {
		if (!EB.nsyms)
			err = ds__symtab_add(ctx, binary_name, &EB, binary, SHT_SYMTAB) < 0 ? -ENOMEM
											    : 0;
		if (!err && !EB.nsyms)
			err = ds__symtab_add_minidebuginfo(ctx, binary_name, &EB, binary) < 0
				  ? -ENOMEM
				  : 0;
		symtab = EB.nsyms != 0;
		if (!err && !EB.nsyms)
			err = ds__symtab_add(ctx, binary_name, &EB, binary, SHT_DYNSYM) < 0 ? -ENOMEM
											    : 0;
	}
	/* No .symtab: Go's table, if there is one, names the Go code. */
	if (!err && !symtab && (binary || debug))
		err = go_symbols(ctx, &EB, binary ? binary : debug, binary ? binary_name : debug_name,
				 &go);
	/* PLT stubs from the file that has their code (a debug file's .plt
	 * is NOBITS), after the real symbols, which win. */
	if (!err && (binary || debug) &&
	    ds__symtab_add_plt(ctx, binary ? binary_name : debug_name, &EB,
			       binary ? binary : debug) < 0)
		err = -ENOMEM;
	if (!err)
		err = ds__symblob_elf_pack(&EB, &blob, &size);
	ds__sym_build_release(&EB);
	if (!err) {
		S->elf_blob = (struct ds__blob){ blob, size, 0, NULL };
		S->elf_own = true;
		ds__symblob_elf_view(blob, &S->elf);
	}
	if (!err && S->dwarf) {
		S->ncus = ds__dwarf_units(S->dwarf);
		S->cus = calloc(S->ncus ? S->ncus : 1, sizeof(*S->cus));
		err = S->cus ? ds__dwarf_ranges(S->dwarf, &S->ranges, &S->nranges) : -ENOMEM;
		S->ranges_own = true;
		if (!err)
			err = set_ranges(S);
		if (!err && !S->ncus) {
			ds__dwarf_close(S->dwarf); /* DWARF without code */
			S->dwarf = NULL;
		}
	}
	/* No DWARF with code: Go's table, if there is one, gives the units
	 * (lookups then go DWARF, gopclntab, .symtab, .dynsym). */
	if (!err && !S->ncus && dwarf)
		err = go_units(S, ctx, binary ? binary : debug, binary ? binary_name : debug_name,
			       &go);
	ds__go_close(go);
	if (!err && !S->ncus && !S->elf.nsyms)
		err = -ENOENT;
	if (err) {
		ds__symbols_free(S);
		return err;
	}
	S->complete = !S->ncus;
	/* (Nothing to save without CUs.) */
	atomic_init(&S->reported, !S->ncus);
	/* CUs trimmed are built again from it (it lives as long); Go's
	 * units are not trimmed (the binary is not kept open). */
	if (S->ncus && !S->go_units)
		ds__symbols_fallback(S, ctx, debug, debug_name, binary_path, aux);
	atomic_fetch_add(&S->bytes, size + S->ncus * sizeof(*S->cus) +
					    S->nranges * (sizeof(*S->ranges) + sizeof(uint64_t)) +
					    ds__dwarf_bytes(S->dwarf) + ds__go_bytes(S->go));
	*out = S;
	return 0;
}

/* --------------------------------------------------------------- CU builds */

static int threads_wanted(void)
{
	const char *env = getenv("DSOSTORE_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : n > THREADS_MAX ? THREADS_MAX : (int)n;
}

/* A CU reached a final state: the last one lets the DWARF go (no builder
 * can need it: none is building). */
static void unit_settled(struct ds_symbols *S)
{
	struct ds__dwarf *D = NULL;
	struct ds__go *G = NULL;

	pthread_mutex_lock(&S->mu);
	if (atomic_fetch_add(&S->built, 1) + 1 == S->ncus) {
		S->complete = true;
		D = S->dwarf;
		S->dwarf = NULL;
		G = S->go;
		S->go = NULL;
	}
	pthread_cond_broadcast(&S->cv);
	pthread_mutex_unlock(&S->mu);
	if (D) {
		account(S, -(int64_t)ds__dwarf_bytes(D), false);
		ds__dwarf_close(D);
	}
	if (G) {
		account(S, -(int64_t)ds__go_bytes(G), false);
		ds__go_close(G);
	}
}

/* Go's table, while units are left to build from it. */
static struct ds__go *go_get(struct ds_symbols *S)
{
	struct ds__go *G;

	pthread_mutex_lock(&S->mu);
	G = S->go;
	pthread_mutex_unlock(&S->mu);
	return G;
}

/* Build CU i, which this thread has claimed (CU_BUILDING): from the
 * DWARF through W, or from Go's table (W NULL). */
static int unit_build(struct ds_symbols *S, size_t i, struct ds__dwarf_worker *W,
		      struct sym_build *B)
{
	struct cu *cu = &S->cus[i];
	uint64_t bytes = 0;
	int err = W ? ds__dwarf_build_unit(W, i, B) : ds__go_build_unit(go_get(S), i, B);

	if (!err && B->partial)
		atomic_store(&S->partial, true);
	if (!err)
		err = ds__symblob_cu_finish(B, &cu->piece, cu->own, &bytes);
	if (err == -ENOMEM) {
		atomic_store(&cu->state, CU_NEW); /* another query tries again */
		pthread_mutex_lock(&S->mu);
		pthread_cond_broadcast(&S->cv);
		pthread_mutex_unlock(&S->mu);
		return err;
	}
	if (err) {
		atomic_store(&cu->state, CU_BAD);
	} else {
		account(S, (int64_t)bytes, true);
		atomic_store_explicit(&cu->live, &cu->piece, memory_order_release);
		atomic_store_explicit(&cu->state, CU_READY, memory_order_release);
	}
	unit_settled(S);
	return 0;
}

/* The DWARF that CU builds read: open since the index was made, or again
 * (from the debuginfo ds__symbols_fallback() named) after it was let go
 * and CUs were trimmed or found damaged.  Under mu.  NULL: none. */
static struct ds__dwarf *dwarf_locked(struct ds_symbols *S)
{
	if (!S->dwarf && S->fb_elf && !S->fb_failed) {
		struct ds__dwarf *D = NULL;

		if (dwarf_open(S, S->fb_ctx, S->fb_elf, S->fb_name, S->fb_binary, &D) == 0 &&
		    ds__dwarf_units(D) == S->ncus) {
			S->dwarf = D;
			atomic_fetch_add(&S->bytes, ds__dwarf_bytes(D));
			if (S->acct_bytes)
				atomic_fetch_add(S->acct_bytes, ds__dwarf_bytes(D));
		} else {
			ds__dwarf_close(D);
			S->fb_failed = true;
		}
	}
	return S->dwarf;
}

static struct ds__dwarf *dwarf_get(struct ds_symbols *S)
{
	struct ds__dwarf *D;

	pthread_mutex_lock(&S->mu);
	D = dwarf_locked(S);
	pthread_mutex_unlock(&S->mu);
	return D;
}

/* A saved CU that fails its check is built from the DWARF when the index
 * knows its debuginfo (ds__symbols_fallback()): its DWARF is opened again,
 * once, and must map the same CUs.  true: CU i is CU_NEW again, S->dwarf
 * open.  Under mu. */
static bool fallback_locked(struct ds_symbols *S, size_t i)
{
	struct cu *cu = &S->cus[i];

	if (!dwarf_locked(S))
		return false;
	cu->blob = NULL;
	cu->size = 0;
	S->complete = false;
	/* The file is wrong: the index complete again replaces it. */
	atomic_store(&S->reported, false);
	atomic_fetch_sub(&S->built, 1);
	return true;
}

static void say_damaged(struct ds_symbols *S, size_t i)
{
	if (S->fb_ctx)
		ds_warn(S->fb_ctx,
			"saved index of %s: CU %zu is damaged: not used, built from the debuginfo "
			"where it can be, and the index saved again",
			S->fb_name ? S->fb_name : "?", i);
}

/* A saved CU blob's chunk states (chunks: its sums), or NULL. */
static struct ds__chunks *chunks_new(const void *blob, uint64_t size, const uint32_t *chunks)
{
	struct ds__chunks *C = calloc(1, sizeof(*C));
	uint64_t n = ds__chunks_of(size);

	if (!C || n > SIZE_MAX || !(C->state = calloc(n ? (size_t)n : 1, 1))) {
		free(C);
		return NULL;
	}
	C->base = blob;
	C->size = size;
	C->sums = chunks;
	C->n = (size_t)n;
	return C;
}

/* A saved CU's first use.  Its sum is over its chunks' sums: checked, and
 * its head (what every lookup reads), the rest as lookups read it; a blob
 * without its chunks' sums is summed and checked whole. */
static void unit_check(struct ds_symbols *S, size_t i)
{
	struct cu *cu = &S->cus[i];
	bool ok = false;
	int state = CU_BAD;

	if (cu->size && cu->chunks && !cu->ck)
		cu->ck = chunks_new(cu->blob, cu->size, cu->chunks);
	if (cu->ck)
		ok = ds__blob_sum(cu->chunks, cu->ck->n * sizeof(uint32_t)) == cu->sum &&
		     ds__symblob_cu_head_ok(cu->ck);
	else if (cu->size) /* (or no memory for the chunks' states) */
		ok = ds__chunked_sum(cu->blob, cu->size, NULL) == cu->sum &&
		     ds__symblob_cu_blob_ok(cu->blob, cu->size);
	if (ok) {
		ds__symblob_cu_view(cu->blob, &cu->view);
		cu->plain = cu->view;
		cu->view.ck = cu->ck;
		atomic_store_explicit(&cu->live, &cu->view, memory_order_release);
	}
	if (!ok)
		say_damaged(S, i);
	pthread_mutex_lock(&S->mu);
	if (ok)
		state = CU_READY;
	else if (fallback_locked(S, i))
		state = CU_NEW;
	atomic_store_explicit(&cu->state, state, memory_order_release);
	pthread_cond_broadcast(&S->cv);
	pthread_mutex_unlock(&S->mu);
}

void ds__symbols_unit_damaged(struct ds_symbols *S, size_t i, const struct piece *P)
{
	struct cu *cu = &S->cus[i];
	bool moved = false;

	pthread_mutex_lock(&S->mu);
	/* (Once: a second reader that found it finds the CU moved on.) */
	if (P == &cu->view && atomic_load(&cu->state) == CU_READY &&
	    atomic_load(&cu->live) == &cu->view) {
		/* (A CU_BAD one stays counted in built: settled.) */
		atomic_store(&cu->state, fallback_locked(S, i) ? CU_NEW : CU_BAD);
		pthread_cond_broadcast(&S->cv);
		moved = true;
	}
	pthread_mutex_unlock(&S->mu);
	if (moved) /* (the host's log hook, outside the lock) */
		say_damaged(S, i);
}

void ds__symbols_fallback(struct ds_symbols *S, struct ds_context *ctx, struct Elf *debug,
			  const char *name, const char *binary, const struct ds__aux_src *aux)
{
	if (aux)
		S->aux = *aux;
	S->fb_ctx = ctx;
	S->fb_elf = debug;
	S->fb_name = name ? strdup(name) : NULL;
	S->fb_binary = binary ? strdup(binary) : NULL;
}

bool ds__symbols_partial(const struct ds_symbols *S)
{
	return atomic_load(&((struct ds_symbols *)S)->partial);
}

/* CU i, ready; NULL when it has nothing (or building it failed: *err). */
const struct piece *ds__symbols_unit_get(struct ds_symbols *S, size_t i, int *err)
{
	struct cu *cu = &S->cus[i];

	*err = 0;
	for (;;) {
		int st = atomic_load_explicit(&cu->state, memory_order_acquire);

		if (st == CU_READY) {
			/* (Read first: no store, no cache line bouncing, once set.) */
			if (!atomic_load_explicit(&cu->recent, memory_order_relaxed))
				atomic_store_explicit(&cu->recent, true, memory_order_relaxed);
			const struct piece *P = atomic_load_explicit(&cu->live, memory_order_acquire);

			/* Every chunk checked: read as a built piece. */
			if (P->ck && atomic_load_explicit(&P->ck->all, memory_order_relaxed)) {
				atomic_store_explicit(&cu->live, &cu->plain, memory_order_release);
				P = &cu->plain;
			}
			return P;
		}
		if (st == CU_BAD)
			return NULL;
		if ((st == CU_NEW || st == CU_SAVED) &&
		    atomic_compare_exchange_strong(&cu->state, &st, CU_BUILDING)) {
			if (st == CU_SAVED) {
				unit_check(S, i);
				continue;
			}
			struct ds__dwarf *D = S->go_units ? NULL : dwarf_get(S);
			struct ds__dwarf_worker *W = D ? ds__dwarf_worker_new(D) : NULL;
			struct sym_build B = { 0 };

			if (S->go_units) { /* Go's units need no worker */
				*err = unit_build(S, i, NULL, &B);
				ds__sym_build_release(&B);
				if (*err)
					return NULL;
				continue;
			}
			if (!D) { /* trimmed, and its DWARF cannot be read again */
				atomic_store(&cu->state, CU_BAD);
				unit_settled(S);
				continue;
			}
			if (!W) {
				atomic_store(&cu->state, CU_NEW);
				*err = -ENOMEM;
				return NULL;
			}
			*err = unit_build(S, i, W, &B);
			ds__dwarf_worker_free(W);
			ds__sym_build_release(&B);
			if (*err)
				return NULL;
			continue;
		}
		if (st == CU_BUILDING) {
			pthread_mutex_lock(&S->mu);
			while (atomic_load(&cu->state) == CU_BUILDING)
				pthread_cond_wait(&S->cv, &S->mu);
			pthread_mutex_unlock(&S->mu);
		}
	}
}

struct pool_job {
	struct ds_symbols *S;
	const uint8_t *want; /* NULL: every CU */
	_Atomic size_t next;
	_Atomic int err;
};

static void *pool_worker(void *arg)
{
	struct pool_job *J = arg;
	struct ds_symbols *S = J->S;
	struct ds__dwarf_worker *W = NULL;
	struct sym_build B = { 0 };

	for (;;) {
		size_t i = atomic_fetch_add(&J->next, 1);
		int st = CU_NEW, err;

		if (i >= S->ncus)
			break;
		if (J->want && !J->want[i])
			continue;
		if (!atomic_compare_exchange_strong(&S->cus[i].state, &st, CU_BUILDING)) {
			if (st == CU_SAVED) {
				int exp = CU_SAVED;

				if (atomic_compare_exchange_strong(&S->cus[i].state, &exp,
								   CU_BUILDING))
					unit_check(S, i);
			}
			continue; /* built, or being built by someone else */
		}
		if (!S->go_units && !W && !(W = ds__dwarf_worker_new(dwarf_get(S)))) {
			atomic_store(&S->cus[i].state, CU_NEW);
			atomic_store(&J->err, -ENOMEM);
			break;
		}
		err = unit_build(S, i, W, &B);
		if (err) {
			atomic_store(&J->err, err);
			break;
		}
	}
	ds__dwarf_worker_free(W);
	ds__sym_build_release(&B);
	return NULL;
}

/* Build the CUs of want (NULL: all) on up to the machine's cores. */
int ds__symbols_build_units(struct ds_symbols *S, const uint8_t *want, size_t nwant)
{
	struct pool_job J = { .S = S, .want = want };
	pthread_t tid[THREADS_MAX];
	int nt = threads_wanted(), started = 0;

	if (nwant < (size_t)nt * 2)
		nt = nwant >= 2 ? (int)(nwant / 2) : 1;
	for (int k = 1; k < nt; k++)
		if (pthread_create(&tid[started], NULL, pool_worker, &J) == 0)
			started++;
	pool_worker(&J);
	for (int k = 0; k < started; k++)
		pthread_join(tid[k], NULL);
	/* Claimed by another caller meanwhile: wait for those. */
	for (size_t i = 0; i < S->ncus && !atomic_load(&J.err); i++) {
		int err;

		if (!want || want[i])
			ds__symbols_unit_get(S, i, &err);
	}
	return atomic_load(&J.err);
}

/* ------------------------------------------------------- batches, saving */
bool ds__symbols_newly_complete(struct ds_symbols *S)
{
	bool news;

	/* (Lock-free no, as the batch asks after every call.) */
	if (atomic_load(&S->reported) || atomic_load(&S->built) != S->ncus)
		return false;
	pthread_mutex_lock(&S->mu);
	news = S->complete && !atomic_load(&S->reported);
	if (news)
		atomic_store(&S->reported, true);
	pthread_mutex_unlock(&S->mu);
	return news;
}

uint64_t ds__symbols_trim(struct ds_symbols *S)
{
	uint64_t freed = 0;

	pthread_mutex_lock(&S->mu);
	if (!S->fb_elf || S->fb_failed) {
		pthread_mutex_unlock(&S->mu); /* could not be built again */
		return 0;
	}
	for (size_t i = 0; i < S->ncus; i++) {
		struct cu *cu = &S->cus[i];
		uint64_t bytes;

		if (atomic_load(&cu->state) != CU_READY || cu->blob)
			continue; /* not built here (a saved one is the mapping's) */
		if (atomic_exchange_explicit(&cu->recent, false, memory_order_relaxed))
			continue; /* used since the last pass: a second chance */
		bytes = (uint64_t)cu->piece.nscopes * sizeof(struct scope) +
			(uint64_t)cu->piece.nlines * sizeof(struct line) +
			(uint64_t)cu->piece.nseqs * sizeof(struct seq) +
			(ds__symblob_nkeys(cu->piece.nlines) + ds__symblob_nkeys(cu->piece.nscopes)) * sizeof(uint64_t) +
			cu->piece.pool_len;
		for (int k = 0; k < 5; k++) {
			free(cu->own[k]);
			cu->own[k] = NULL;
		}
		memset(&cu->piece, 0, sizeof(cu->piece));
		atomic_store(&cu->recent, false);
		atomic_store(&cu->state, CU_NEW);
		atomic_fetch_sub(&S->built, 1);
		S->complete = false;
		atomic_fetch_sub(&S->bytes, bytes);
		if (S->acct_bytes)
			atomic_fetch_sub(S->acct_bytes, bytes);
		freed += bytes;
	}
	if (freed) /* (no lookup runs: the caller made sure nobody pins S) */
		atomic_fetch_add(&S->strings_epoch, 1);
	pthread_mutex_unlock(&S->mu);
	return freed;
}

int ds__symbols_build_all(struct ds_symbols *S)
{
	bool done;

	pthread_mutex_lock(&S->mu);
	done = S->complete || (!S->dwarf && !S->go);
	pthread_mutex_unlock(&S->mu);
	return done ? 0 : ds__symbols_build_units(S, NULL, S->ncus);
}

int ds__symbols_parts_head(struct ds_symbols *S, struct ds__symbols_parts *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (!S->read_dwarf && !S->go_units)
		return -ENODATA;
	if ((err = ds__symbols_build_all(S)))
		return err;
	/* Saved CUs: checked first, and whole (a chunk no lookup read is
	 * written again only once its sum is known good); a damaged one is
	 * built from the DWARF. */
	for (size_t i = 0; i < S->ncus; i++) {
		struct cu *cu = &S->cus[i];
		const struct piece *P;

		if (atomic_load(&cu->state) == CU_SAVED)
			ds__symbols_unit_get(S, i, &err);
		P = atomic_load(&cu->state) == CU_READY ? atomic_load(&cu->live) : NULL;
		if (P && P == &cu->view && P->ck && !ds__chunks_check(P->ck, 0, P->ck->size)) {
			ds__symbols_unit_damaged(S, i, P);
			ds__symbols_unit_get(S, i, &err);
		}
	}
	out->elf = (struct ds__blob){ S->elf_blob.data, S->elf_blob.size,
				      ds__chunked_sum(S->elf_blob.data, S->elf_blob.size, NULL),
				      NULL };
	out->ncus = S->ncus;
	out->nranges = S->nranges;
	out->ranges = S->ranges;
	return 0;
}

size_t ds__symbols_cu_segs(struct ds_symbols *S, size_t i, struct ds__cu_hdr_buf *hdr,
			   struct ds__seg segs[DS__BLOB_SEGS], uint64_t *size, uint32_t *sum,
			   bool *have_sum)
{
	struct cu *cu = &S->cus[i];
	size_t n = 0;

	*size = 0;
	*sum = 0;
	*have_sum = true;
	/* (Under mu: a lookup that finds a saved CU damaged moves it to be
	 * built again.) */
	pthread_mutex_lock(&S->mu);
	if (atomic_load(&cu->state) != CU_READY) {
		/* nothing (a saved CU that failed its check too) */
	} else if (cu->blob) { /* saved: the same bytes */
		segs[0] = (struct ds__seg){ cu->blob, cu->size };
		*size = cu->size;
		*sum = cu->sum;
		n = cu->size ? 1 : 0;
	} else {
		*have_sum = false;
		n = ds__symblob_cu_segs(&cu->piece, hdr, segs, size);
	}
	pthread_mutex_unlock(&S->mu);
	return n;
}

int ds__symbols_parts(struct ds_symbols *S, struct ds__symbols_parts *out)
{
	struct ds__blob *cus;
	bool have_sum;
	int err = ds__symbols_parts_head(S, out);

	if (err)
		return err;
	cus = calloc(S->ncus ? S->ncus : 1, sizeof(*cus));
	if (!cus)
		return -ENOMEM;
	out->cus = cus;
	for (size_t i = 0; i < S->ncus; i++) {
		struct ds__seg segs[DS__BLOB_SEGS];
		struct ds__cu_hdr_buf hdr;
		size_t n = ds__symbols_cu_segs(S, i, &hdr, segs, &cus[i].size, &cus[i].sum,
					       &have_sum);
		char *p;

		if (have_sum) { /* a saved CU's bytes, or none */
			cus[i].data = n ? segs[0].p : NULL;
			continue;
		}
		/* Built here: its segments joined, a copy. */
		if (!(p = malloc(cus[i].size))) {
			ds__symbols_parts_free(S, out);
			return -ENOMEM;
		}
		cus[i].data = p;
		for (size_t k = 0; k < n; k++) {
			memcpy(p, segs[k].p, segs[k].len);
			p += segs[k].len;
		}
		cus[i].sum = ds__chunked_sum(cus[i].data, cus[i].size, NULL);
	}
	return 0;
}

void ds__symbols_parts_free(const struct ds_symbols *S, struct ds__symbols_parts *parts)
{
	if (parts->cus)
		for (size_t i = 0; i < parts->ncus && i < S->ncus; i++)
			if (parts->cus[i].data != S->cus[i].blob)
				free((void *)parts->cus[i].data);
	free((void *)parts->cus);
	parts->cus = NULL;
}

int ds__symbols_from_parts(const struct ds__symbols_parts *parts, void (*release)(void *),
			   void *arg, struct ds_symbols **out)
{
	struct ds_symbols *S;
	int err;

	*out = NULL;
	if (!parts->elf.data || parts->elf.size > UINT32_MAX * (uint64_t)64 ||
	    ds__chunked_sum(parts->elf.data, parts->elf.size, NULL) != parts->elf.sum ||
	    !ds__symblob_elf_blob_ok(parts->elf.data, parts->elf.size) || parts->ncus > UINT32_MAX ||
	    (parts->nranges && !parts->ranges) || (parts->ncus && !parts->cus))
		return -EINVAL;
	for (size_t i = 0; i < parts->nranges; i++) {
		const struct ds__cu_range *r = &parts->ranges[i];

		if (r->cu >= parts->ncus || r->lo >= r->hi ||
		    (i && r->lo < parts->ranges[i - 1].lo))
			return -EINVAL;
	}
	for (size_t i = 0; i < parts->ncus; i++)
		if ((uintptr_t)parts->cus[i].data % 8 || parts->cus[i].size > UINT32_MAX * (uint64_t)64)
			return -EINVAL;
	if ((uintptr_t)parts->elf.data % 8)
		return -EINVAL;
	S = symbols_new();
	if (!S)
		return -ENOMEM;
	S->full = S->read_dwarf = true;
	S->elf_blob = parts->elf;
	ds__symblob_elf_view(parts->elf.data, &S->elf);
	S->ncus = parts->ncus;
	S->cus = calloc(S->ncus ? S->ncus : 1, sizeof(*S->cus));
	S->ranges = (struct ds__cu_range *)parts->ranges;
	S->nranges = parts->nranges;
	err = S->cus ? set_ranges(S) : -ENOMEM;
	if (err) {
		ds__symbols_free(S);
		return err;
	}
	for (size_t i = 0; i < S->ncus; i++) {
		struct cu *cu = &S->cus[i];

		cu->blob = parts->cus[i].data;
		cu->size = parts->cus[i].size;
		cu->sum = parts->cus[i].sum;
		cu->chunks = parts->cus[i].chunks;
		atomic_init(&cu->state, cu->size ? CU_SAVED : CU_BAD);
	}
	atomic_init(&S->built, S->ncus);
	S->complete = true;
	atomic_init(&S->reported, true); /* it is its file already */
	S->release = release;
	S->release_arg = arg;
	atomic_fetch_add(&S->bytes, S->ncus * sizeof(*S->cus) + S->nranges * sizeof(uint64_t));
	*out = S;
	return 0;
}
