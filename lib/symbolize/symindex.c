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
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BLOB_CU 0x55435344u /* "DSCU" */
#define BLOB_ELF 0x464c4544u /* "DELF" */
#define THREADS_MAX 16
#define CANDIDATES 16 /* CUs claiming one address that we look into */

/* ------------------------------------------------------------- ordering */

static int cmp_scope(const struct scope *x, const struct scope *y)
{
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (int)x->depth - (int)y->depth; /* outer first: inner wins */
}

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->end != y->end)
		return x->end ? -1 : 1; /* a sequence's end before another's start */
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int cmp_sec(const void *a, const void *b)
{
	const struct section *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->shndx < y->shndx ? -1 : x->shndx > y->shndx;
}

static bool lines_sorted(const struct line *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (cmp_line(&v[i - 1], &v[i]) > 0)
			return false;
	return true;
}

static int cmp_seq(const void *a, const void *b)
{
	const struct seq *x = a, *y = b;

	/* An empty sequence (a lone end) before one starting there. */
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Each sequence (rows up to and including an end row) is a sorted run;
 * sequences of different functions do not overlap.  Ordering the (few)
 * sequences orders the (many) rows without moving them.  -EAGAIN when
 * they overlap after all: the caller sorts the rows and makes them one
 * sequence. */
static int order_sequences(const struct line *lines, size_t nlines, struct seq **out,
			   size_t *nout)
{
	struct seq *v = NULL;
	size_t n = 0, cap = 0, start = 0;

	for (size_t i = 0; i < nlines; i++) {
		if (!lines[i].end && i + 1 < nlines)
			continue;
		if (n == cap) {
			struct seq *nv = realloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));

			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (struct seq){ lines[start].addr, lines[i].addr, (uint32_t)start,
				       (uint32_t)(i + 1 - start) };
		start = i + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), cmp_seq);
	for (size_t i = 0; i < n; i++) {
		/* Rows of a sequence in address order, sequences apart. */
		bool ok = i == 0 || v[i - 1].hi <= v[i].lo;

		for (size_t k = v[i].first + 1; ok && k < (size_t)v[i].first + v[i].n; k++)
			ok = lines[k - 1].addr <= lines[k].addr;
		if (!ok) {
			free(v);
			return -EAGAIN;
		}
	}
	*out = v;
	*nout = n;
	return 0;
}

/* A stable LSD radix sort of the indexes perm[0..n) by key[perm[i]]
 * (bytes of the key the same in every element cost nothing: they are
 * skipped); tmp has room for n.  Stable, so ties keep perm's order: the
 * sort is deterministic, and several passes compose (the last the most
 * significant).  qsort() of 20k symbols of 32 bytes was 12% of a build. */
static void radix_perm(const uint64_t *key, size_t n, uint32_t *perm, uint32_t *tmp,
		       unsigned nbytes)
{
	for (unsigned shift = 0; shift < 8 * nbytes; shift += 8) {
		size_t count[257] = { 0 };

		for (size_t i = 0; i < n; i++)
			count[((key[perm[i]] >> shift) & 0xff) + 1]++;
		if (count[((key[perm[0]] >> shift) & 0xff) + 1] == n)
			continue; /* one value of this byte */
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (size_t i = 0; i < n; i++)
			tmp[count[(key[perm[i]] >> shift) & 0xff]++] = perm[i];
		memcpy(perm, tmp, n * sizeof(*perm));
	}
}

/* The permutation that orders n elements by (major, minor) key, ties in
 * their order: two stable radix passes.  NULL: no memory. */
static uint32_t *order_by(size_t n, const uint64_t *minor, unsigned minor_bytes,
			  const uint64_t *major)
{
	uint32_t *perm = malloc(n * sizeof(*perm)), *tmp = malloc(n * sizeof(*tmp));

	if (perm && tmp) {
		for (size_t i = 0; i < n; i++)
			perm[i] = (uint32_t)i;
		radix_perm(minor, n, perm, tmp, minor_bytes);
		radix_perm(major, n, perm, tmp, 8);
	} else {
		free(perm);
		perm = NULL;
	}
	free(tmp);
	return perm;
}

/* The order of scopes: by start, outer (lower depth) first, then as read.
 * The parents' indexes are remapped. */
static int sort_scopes(struct sym_build *B)
{
	size_t i, n = B->nscopes;
	uint64_t *minor, *major;
	uint32_t *perm = NULL, *inv;
	struct scope *sorted;

	if (!n)
		return 0;
	for (i = 1; i < n && cmp_scope(&B->scopes[i - 1], &B->scopes[i]) <= 0; i++)
		;
	if (i >= n)
		return 0; /* in order already (ties stay in DIE order either way) */
	minor = malloc(n * sizeof(*minor));
	major = malloc(n * sizeof(*major));
	inv = malloc(n * sizeof(*inv));
	sorted = malloc(n * sizeof(*sorted));
	if (minor && major) {
		for (i = 0; i < n; i++) {
			minor[i] = B->scopes[i].depth;
			major[i] = B->scopes[i].lo;
		}
		perm = order_by(n, minor, 1, major);
	}
	free(minor);
	free(major);
	if (!perm || !inv || !sorted) {
		free(perm);
		free(inv);
		free(sorted);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		inv[perm[i]] = (uint32_t)i;
		memcpy(&sorted[i], &B->scopes[perm[i]], sizeof(*sorted));
	}
	for (i = 0; i < n; i++)
		if (sorted[i].parent != NO_PARENT)
			sorted[i].parent = inv[sorted[i].parent];
	free(B->scopes);
	B->scopes = sorted;
	B->scap = n;
	free(perm);
	free(inv);
	return 0;
}

/* Symbols by address, then their order in the symbol table (the order
 * they were added in; a table of over 2^30 symbols wraps order, which is
 * why it is a key and not the index). */
static int sort_symbols(struct sym_build *B)
{
	size_t n = B->nsyms, i;
	uint64_t *minor, *major;
	uint32_t *perm = NULL;
	struct symbol *sorted;

	for (i = 1; i < n && cmp_sym(&B->syms[i - 1], &B->syms[i]) <= 0; i++)
		;
	if (i >= n)
		return 0;
	minor = malloc(n * sizeof(*minor));
	major = malloc(n * sizeof(*major));
	sorted = malloc(n * sizeof(*sorted));
	if (minor && major) {
		for (i = 0; i < n; i++) {
			minor[i] = B->syms[i].order;
			major[i] = B->syms[i].lo;
		}
		perm = order_by(n, minor, 4, major);
	}
	free(minor);
	free(major);
	if (!perm || !sorted) {
		free(perm);
		free(sorted);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		sorted[i] = B->syms[perm[i]];
	free(B->syms);
	B->syms = sorted;
	B->symcap = n;
	free(perm);
	return 0;
}

/* ---------------------------------------------------------------- blobs */

struct cu_hdr {
	uint32_t magic, nscopes, nlines, nseqs, pool_len, pad;
	uint64_t reserved; /* 0 */
};

struct elf_hdr {
	uint32_t magic, nsyms, nsecs, nsegs, pool_len, pad;
	uint64_t reserved; /* 0 */
};

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t nkeys(uint32_t n)
{
	return n / BLOCK + 1;
}

static size_t cu_blob_size(uint64_t nscopes, uint64_t nlines, uint64_t nseqs, uint64_t pool_len)
{
	return sizeof(struct cu_hdr) + nscopes * sizeof(struct scope) +
	       nlines * sizeof(struct line) + nseqs * sizeof(struct seq) +
	       (nlines / BLOCK + 1 + nscopes / BLOCK + 1) * sizeof(uint64_t) + align8(pool_len);
}

/* Views into a CU blob whose size fits its header. */
static void cu_view(const void *blob, struct piece *P)
{
	const struct cu_hdr *h = blob;
	const char *p = (const char *)(h + 1);

	P->nscopes = h->nscopes;
	P->nlines = h->nlines;
	P->nseqs = h->nseqs;
	P->pool_len = h->pool_len;
	P->scopes = (const struct scope *)p;
	p += (size_t)h->nscopes * sizeof(struct scope);
	P->lines = (const struct line *)p;
	p += (size_t)h->nlines * sizeof(struct line);
	P->seqs = (const struct seq *)p;
	p += (size_t)h->nseqs * sizeof(struct seq);
	P->line_keys = (const uint64_t *)p;
	p += nkeys(h->nlines) * sizeof(uint64_t);
	P->scope_keys = (const uint64_t *)p;
	p += nkeys(h->nscopes) * sizeof(uint64_t);
	P->pool = p;
}

static bool pool_ok(const char *pool, uint32_t len, uint32_t off)
{
	return off < len || (!off && !len);
}

/* A blob from a file: can every lookup read it without leaving it?
 * (Whether its answers are right is the CRC's business.) */
static bool cu_blob_ok(const void *blob, uint64_t size)
{
	const struct cu_hdr *h = blob;
	struct piece P;

	if (size < sizeof(*h) || h->magic != BLOB_CU ||
	    cu_blob_size(h->nscopes, h->nlines, h->nseqs, h->pool_len) != size)
		return false;
	cu_view(blob, &P);
	if (P.pool_len && P.pool[P.pool_len - 1])
		return false;
	for (uint32_t i = 0; i < P.nscopes; i++) {
		const struct scope *sc = &P.scopes[i];

		if ((sc->parent != NO_PARENT && sc->parent >= P.nscopes) ||
		    !pool_ok(P.pool, P.pool_len, sc->name) ||
		    !pool_ok(P.pool, P.pool_len, sc->call_file))
			return false;
	}
	for (uint32_t i = 0; i < P.nlines; i++)
		if (!pool_ok(P.pool, P.pool_len, P.lines[i].file))
			return false;
	for (uint32_t i = 0; i < P.nseqs; i++)
		if ((uint64_t)P.seqs[i].first + P.seqs[i].n > P.nlines)
			return false;
	return true;
}

static void *shrink(void *p, size_t n)
{
	void *q = n ? realloc(p, n) : NULL;

	return q ? q : p;
}

/* A built CU made a piece: sorted scopes, ordered sequences (or sorted
 * rows), keys; the arrays are taken from B (no copy) into own[] and
 * *bytes.  B keeps its interning table for the next CU. */
static int cu_finish(struct sym_build *B, struct piece *P, void *own[5], uint64_t *bytes)
{
	struct seq *seqs = NULL;
	size_t nseqs = 0, nl, ns;
	uint64_t *keys;
	int err = sort_scopes(B);

	if (err)
		return err;
	if (B->nlines > UINT32_MAX / 2 || B->nscopes > UINT32_MAX / 2 || B->pool_len > UINT32_MAX)
		return -E2BIG;
	if (!lines_sorted(B->lines, B->nlines)) {
		err = order_sequences(B->lines, B->nlines, &seqs, &nseqs);
		if (err == -ENOMEM)
			return err;
		if (err)
			qsort(B->lines, B->nlines, sizeof(*B->lines), cmp_line);
	}
	if (!seqs) {
		seqs = malloc(sizeof(*seqs));
		if (!seqs)
			return -ENOMEM;
		seqs[0] = (struct seq){ B->nlines ? B->lines[0].addr : 0,
					B->nlines ? B->lines[B->nlines - 1].addr : 0, 0,
					(uint32_t)B->nlines };
		nseqs = 1;
	}
	nl = nkeys((uint32_t)B->nlines);
	ns = nkeys((uint32_t)B->nscopes);
	keys = calloc(nl + ns, sizeof(*keys));
	if (!keys) {
		free(seqs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < B->nlines; i += BLOCK)
		keys[i / BLOCK] = B->lines[i].addr;
	for (size_t i = 0; i < B->nscopes; i += BLOCK)
		keys[nl + i / BLOCK] = B->scopes[i].lo;
	own[0] = B->nscopes ? shrink(B->scopes, B->nscopes * sizeof(*B->scopes)) : NULL;
	own[1] = B->nlines ? shrink(B->lines, B->nlines * sizeof(*B->lines)) : NULL;
	own[2] = seqs;
	own[3] = keys;
	own[4] = B->pool_len ? shrink(B->pool, B->pool_len) : NULL;
	*P = (struct piece){ own[0], own[1], seqs, keys, keys + nl, own[4], (uint32_t)B->nscopes,
			     (uint32_t)B->nlines, (uint32_t)nseqs, (uint32_t)B->pool_len };
	*bytes = B->nscopes * sizeof(*B->scopes) + B->nlines * sizeof(*B->lines) +
		 nseqs * sizeof(*seqs) + (nl + ns) * sizeof(*keys) + B->pool_len;
	/* Handed over: B grows new arrays for the next CU. */
	if (!B->nscopes)
		free(B->scopes);
	if (!B->nlines)
		free(B->lines);
	if (!B->pool_len)
		free(B->pool);
	B->scopes = NULL;
	B->lines = NULL;
	B->pool = NULL;
	B->scap = B->lcap = B->pool_cap = 0;
	return 0;
}

/* A piece as one blob, for saving. */
static void *cu_blob(const struct piece *P, uint64_t *size)
{
	size_t sz = cu_blob_size(P->nscopes, P->nlines, P->nseqs, P->pool_len);
	struct cu_hdr *h = calloc(1, sz);
	char *p;

	if (!h)
		return NULL;
	*h = (struct cu_hdr){ BLOB_CU, P->nscopes, P->nlines, P->nseqs, P->pool_len, 0, 0 };
	p = (char *)(h + 1);
#define PUT(src, n)                                 \
	do {                                        \
		if ((n) != 0)                       \
			memcpy(p, (src), (n));      \
		p += (n);                           \
	} while (0)
	PUT(P->scopes, (size_t)P->nscopes * sizeof(*P->scopes));
	PUT(P->lines, (size_t)P->nlines * sizeof(*P->lines));
	PUT(P->seqs, (size_t)P->nseqs * sizeof(*P->seqs));
	PUT(P->line_keys, nkeys(P->nlines) * sizeof(uint64_t));
	PUT(P->scope_keys, nkeys(P->nscopes) * sizeof(uint64_t));
	PUT(P->pool, (size_t)P->pool_len);
#undef PUT
	*size = sz;
	return h;
}

static size_t elf_blob_size(uint64_t nsyms, uint64_t nsecs, uint64_t nsegs, uint64_t pool_len)
{
	return sizeof(struct elf_hdr) + nsyms * sizeof(struct symbol) +
	       nsecs * sizeof(struct section) + nsegs * sizeof(struct segment) + align8(pool_len);
}

static void elf_view(const void *blob, struct elf_piece *E)
{
	const struct elf_hdr *h = blob;
	const char *p = (const char *)(h + 1);

	E->nsyms = h->nsyms;
	E->nsecs = h->nsecs;
	E->nsegs = h->nsegs;
	E->pool_len = h->pool_len;
	E->syms = (const struct symbol *)p;
	p += (size_t)h->nsyms * sizeof(struct symbol);
	E->secs = (const struct section *)p;
	p += (size_t)h->nsecs * sizeof(struct section);
	E->segs = (const struct segment *)p;
	p += (size_t)h->nsegs * sizeof(struct segment);
	E->pool = p;
}

static bool elf_blob_ok(const void *blob, uint64_t size)
{
	const struct elf_hdr *h = blob;
	struct elf_piece E;

	if (size < sizeof(*h) || h->magic != BLOB_ELF ||
	    elf_blob_size(h->nsyms, h->nsecs, h->nsegs, h->pool_len) != size)
		return false;
	elf_view(blob, &E);
	if (E.pool_len && E.pool[E.pool_len - 1])
		return false;
	for (uint32_t i = 0; i < E.nsyms; i++)
		if (!pool_ok(E.pool, E.pool_len, E.syms[i].name) ||
		    !pool_ok(E.pool, E.pool_len, E.syms[i].file))
			return false;
	return true;
}

static int elf_pack(struct sym_build *B, void **blob, uint64_t *size)
{
	size_t sz;
	struct elf_hdr *h;
	char *p;

	if (B->nsyms > UINT32_MAX / 2 || B->nsecs > UINT32_MAX / 2)
		return -E2BIG;
	if (B->nsyms && sort_symbols(B))
		return -ENOMEM;
	if (B->nsecs)
		qsort(B->secs, B->nsecs, sizeof(*B->secs), cmp_sec);
	sz = elf_blob_size(B->nsyms, B->nsecs, B->nsegs, B->pool_len);
	h = calloc(1, sz);
	if (!h)
		return -ENOMEM;
	*h = (struct elf_hdr){ BLOB_ELF, (uint32_t)B->nsyms, (uint32_t)B->nsecs,
			       (uint32_t)B->nsegs, (uint32_t)B->pool_len, 0, 0 };
	p = (char *)(h + 1);
	if (B->nsyms)
		memcpy(p, B->syms, B->nsyms * sizeof(*B->syms));
	p += B->nsyms * sizeof(*B->syms);
	/* Field by field: the padding stays zero (saved bytes are
	 * deterministic). */
	for (size_t i = 0; i < B->nsecs; i++, p += sizeof(struct section)) {
		struct section *sec = (struct section *)p;

		sec->lo = B->secs[i].lo;
		sec->hi = B->secs[i].hi;
		sec->shndx = B->secs[i].shndx;
	}
	if (B->nsegs)
		memcpy(p, B->segs, B->nsegs * sizeof(*B->segs));
	p += B->nsegs * sizeof(*B->segs);
	if (B->pool_len)
		memcpy(p, B->pool, B->pool_len);
	*blob = h;
	*size = sz;
	return 0;
}

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
	struct ds_symbols *S = calloc(1, sizeof(*S));

	if (!S)
		return NULL;
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
	for (size_t i = 0; i < S->ncus; i++)
		for (int k = 0; k < 5; k++)
			free(S->cus[i].own[k]);
	if (S->parts_cus)
		for (size_t i = 0; i < S->ncus; i++)
			if (!S->cus[i].blob)
				free((void *)S->parts_cus[i].data);
	free(S->parts_cus);
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
		err = elf_pack(&EB, &blob, &size);
	ds__sym_build_release(&EB);
	if (!err) {
		S->elf_blob = (struct ds__blob){ blob, size, 0 };
		S->elf_own = true;
		elf_view(blob, &S->elf);
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
		err = cu_finish(B, &cu->piece, cu->own, &bytes);
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

/* A saved CU's first use: its CRC, then its structure. */
static void unit_check(struct ds_symbols *S, size_t i)
{
	struct cu *cu = &S->cus[i];
	bool ok = cu->size && ds__blob_sum(cu->blob, cu->size) == cu->sum &&
		  cu_blob_ok(cu->blob, cu->size);
	int state = CU_BAD;

	if (ok)
		cu_view(cu->blob, &cu->piece);
	pthread_mutex_lock(&S->mu);
	if (ok)
		state = CU_READY;
	else if (fallback_locked(S, i))
		state = CU_NEW;
	atomic_store_explicit(&cu->state, state, memory_order_release);
	pthread_cond_broadcast(&S->cv);
	pthread_mutex_unlock(&S->mu);
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
static const struct piece *unit_get(struct ds_symbols *S, size_t i, int *err)
{
	struct cu *cu = &S->cus[i];

	*err = 0;
	for (;;) {
		int st = atomic_load_explicit(&cu->state, memory_order_acquire);

		if (st == CU_READY) {
			/* (Read first: no store, no cache line bouncing, once set.) */
			if (!atomic_load_explicit(&cu->recent, memory_order_relaxed))
				atomic_store_explicit(&cu->recent, true, memory_order_relaxed);
			return &cu->piece;
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
static int build_units(struct ds_symbols *S, const uint8_t *want, size_t nwant)
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
			unit_get(S, i, &err);
	}
	return atomic_load(&J.err);
}

/* -------------------------------------------------------------- lookup */

static const char *str(const char *pool, uint32_t off)
{
	return off ? pool + off : NULL;
}

int ds__symbols_vaddr(const struct ds_symbols *S, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < S->elf.nsegs; i++) {
		const struct segment *sg = &S->elf.segs[i];

		if (offset >= sg->offset && offset - sg->offset < sg->filesz) {
			*vaddr = offset - sg->offset + sg->vaddr;
			return 0;
		}
	}
	return -ERANGE;
}

/* Last entry with key <= addr, or -1. */
#define UPPER(arr, n, field, addr)                                 \
	({                                                         \
		size_t _lo = 0, _hi = (n);                         \
		while (_lo < _hi) {                                \
			size_t _mid = _lo + (_hi - _lo) / 2;       \
			if ((arr)[_mid].field <= (addr))           \
				_lo = _mid + 1;                    \
			else                                       \
				_hi = _mid;                        \
		}                                                  \
		(ptrdiff_t)_lo - 1;                                \
	})

/* Last element with key <= addr, through the sampled keys. */
#define UPPER2(arr, n, keys, field, addr)                                          \
	({                                                                         \
		size_t _lo = 0, _hi = ((n) + BLOCK - 1) / BLOCK, _b, _end;         \
		while (_lo < _hi) {                                                \
			size_t _mid = _lo + (_hi - _lo) / 2;                       \
			if ((keys)[_mid] <= (addr))                                \
				_lo = _mid + 1;                                    \
			else                                                       \
				_hi = _mid;                                        \
		}                                                                  \
		_b = _lo ? (_lo - 1) * BLOCK : 0;                                  \
		_end = _lo ? (_b + BLOCK < (n) ? _b + BLOCK : (n)) : 0;            \
		_lo = _b;                                                          \
		_hi = _end;                                                        \
		while (_lo < _hi) {                                                \
			size_t _mid = _lo + (_hi - _lo) / 2;                       \
			if ((arr)[_mid].field <= (addr))                           \
				_lo = _mid + 1;                                    \
			else                                                       \
				_hi = _mid;                                        \
		}                                                                  \
		(ptrdiff_t)_lo - 1;                                                \
	})

/* UPPER, from a guess h: the entries a caller's sorted lookups land on
 * move forward, usually by little, so a search gallops ahead from the last
 * answer (steps 1, 2, 4, ...) and ends with a binary search of the last
 * step; where h is past addr (unsorted lookups), a whole search. */
#define GALLOP(arr, n, field, addr, h, whole)                                       \
	({                                                                          \
		size_t _n = (n), _g = (h);                                          \
		ptrdiff_t _r;                                                       \
		if (_g >= _n || (arr)[_g].field > (addr)) {                         \
			_r = (whole);                                               \
		} else {                                                            \
			size_t _step = 1, _end;                                     \
			while (_g + _step < _n && (arr)[_g + _step].field <= (addr)) { \
				_g += _step;                                        \
				_step *= 2;                                         \
			}                                                           \
			_end = _g + _step < _n ? _g + _step : _n;                   \
			_r = (ptrdiff_t)_g + UPPER((arr) + _g, _end - _g, field, addr); \
		}                                                                   \
		_r;                                                                 \
	})

static const struct scope *innermost(const struct piece *P, uint64_t addr, size_t *hint)
{
	ptrdiff_t i = GALLOP(P->scopes, P->nscopes, lo, addr, *hint,
			     UPPER2(P->scopes, P->nscopes, P->scope_keys, lo, addr));

	if (i >= 0)
		*hint = (size_t)i;

	/* Ranges nest: if the last one starting at or below addr does not
	 * hold it, any range that does holds that one's start too, so it is
	 * among its ancestors. */
	for (int steps = 0; i >= 0 && steps < MAX_DEPTH; steps++) {
		const struct scope *sc = &P->scopes[i];

		if (addr < sc->hi)
			return sc;
		if (sc->parent == NO_PARENT)
			return NULL;
		i = sc->parent;
	}
	return NULL;
}

/* The last row at or below addr among rows [f, e), which are sorted: the
 * sampled keys of the blocks inside the range first, then one block. */
static ptrdiff_t rows_upper(const struct piece *P, size_t f, size_t e, uint64_t addr)
{
	size_t kb = (f + BLOCK - 1) / BLOCK, ke = e ? (e - 1) / BLOCK + 1 : 0, lo, hi;

	lo = kb;
	hi = ke > kb ? ke : kb;
	while (lo < hi) { /* last block start in the range with key <= addr */
		size_t mid = lo + (hi - lo) / 2;

		if (P->line_keys[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > kb) { /* within block lo - 1 */
		size_t b = (lo - 1) * BLOCK;

		lo = b;
		hi = b + BLOCK < e ? b + BLOCK : e;
	} else { /* before the first block start of the range */
		lo = f;
		hi = kb * BLOCK < e ? kb * BLOCK : e;
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (P->lines[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo - 1;
}

static const struct line *line_at(const struct piece *P, uint64_t addr, size_t *seq_hint,
				  size_t *hint)
{
	ptrdiff_t q = GALLOP(P->seqs, P->nseqs, lo, addr, *seq_hint,
			     UPPER(P->seqs, P->nseqs, lo, addr)),
		  i;
	const struct seq *sq;
	size_t f, e;

	if (q < 0)
		return NULL;
	*seq_hint = (size_t)q;
	sq = &P->seqs[q];
	f = sq->first;
	e = f + sq->n;
	/* (The guess only within this sequence: rows are sorted per
	 * sequence.) */
	i = *hint >= f && *hint < e
		    ? (ptrdiff_t)f + GALLOP(P->lines + f, e - f, addr, addr, *hint - f, -1)
		    : -1;
	if (i < (ptrdiff_t)f)
		i = rows_upper(P, f, e, addr);
	if (i < (ptrdiff_t)f || P->lines[i].end)
		return NULL;
	*hint = (size_t)i;
	/* Several rows at one address: binutils takes the last of them. */
	return &P->lines[i];
}

static const struct section *section_at(const struct elf_piece *E, uint64_t addr)
{
	ptrdiff_t i = UPPER(E->secs, E->nsecs, lo, addr);

	return i >= 0 && addr < E->secs[i].hi ? &E->secs[i] : NULL;
}

/* binutils: the closest symbol at or below addr in addr's section, its
 * size notwithstanding (so padding after a function is named after it);
 * among symbols at one address, the largest. */
static const struct symbol *symbol_at(const struct elf_piece *E, uint64_t addr)
{
	const struct section *sec = section_at(E, addr);
	const struct symbol *best = NULL;
	ptrdiff_t i = UPPER(E->syms, E->nsyms, lo, addr);

	if (!sec)
		return NULL;
	for (; i >= 0 && E->syms[i].lo >= sec->lo; i--) {
		const struct symbol *sym = &E->syms[i];

		if (sym->shndx != sec->shndx)
			continue;
		if (best && sym->lo != best->lo)
			break;
		if (!best || sym->size >= best->size)
			best = sym;
	}
	return best;
}

static size_t leading_underscores(const char *name)
{
	size_t n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol() (tools/perf/util/symbol.c): of two symbols
 * at one address, the one with a size, then not weak, then global, then
 * with fewer leading underscores, then with the longer name; else the one
 * first in the symbol table. */
static bool perf_prefers(const struct elf_piece *E, const struct symbol *a,
			 const struct symbol *b)
{
	const char *na = str(E->pool, a->name) ?: "", *nb = str(E->pool, b->name) ?: "";
	size_t ua, ub, la, lb;

	if (!a->size != !b->size)
		return a->size != 0;
	if ((a->bind == SYM_WEAK) != (b->bind == SYM_WEAK))
		return a->bind != SYM_WEAK;
	if ((a->bind == SYM_GLOBAL) != (b->bind == SYM_GLOBAL))
		return a->bind == SYM_GLOBAL;
	ua = leading_underscores(na);
	ub = leading_underscores(nb);
	if (ua != ub)
		return ua < ub;
	la = strlen(na);
	lb = strlen(nb);
	if (la != lb)
		return la > lb;
	return a->order < b->order;
}

/* The symbol perf report names an address after: of the symbols at the
 * greatest start at or below addr, perf's choice, which holds addr up to
 * its size or, when it has none, up to the next symbol (the last one: to
 * the page after its own; perf's symbols__fixup_end). */
static const struct symbol *perf_symbol_at(const struct elf_piece *E, uint64_t addr)
{
	ptrdiff_t i = UPPER(E->syms, E->nsyms, lo, addr), j;
	const struct symbol *best;
	uint64_t end;

	if (i < 0)
		return NULL;
	best = &E->syms[i];
	for (j = i - 1; j >= 0 && E->syms[j].lo == best->lo; j--)
		if (perf_prefers(E, &E->syms[j], best))
			best = &E->syms[j];
	if (best->size)
		end = best->lo + best->size;
	else if ((size_t)i + 1 < E->nsyms)
		end = E->syms[i + 1].lo;
	else /* the last one: to the end of its page, and one more */
		end = ((best->lo + 4095) & ~(uint64_t)4095) + 4096;
	return addr < end ? best : NULL;
}

/* The CUs whose ranges hold addr, the one with the greatest start first:
 * up to CANDIDATES. */
static size_t units_at(const struct ds_symbols *S, uint64_t addr, uint32_t *out, size_t *hint)
{
	ptrdiff_t i = GALLOP(S->ranges, S->nranges, lo, addr, *hint,
			     UPPER(S->ranges, S->nranges, lo, addr));
	size_t n = 0;

	if (i >= 0)
		*hint = (size_t)i;
	for (; i >= 0 && S->range_maxhi[i] > addr && n < CANDIDATES; i--) {
		bool seen = false;

		if (addr >= S->ranges[i].hi)
			continue;
		for (size_t k = 0; k < n; k++)
			seen |= out[k] == S->ranges[i].cu;
		if (!seen)
			out[n++] = S->ranges[i].cu;
	}
	return n;
}

/* The DWARF at addr: the innermost scope and the line row, both of one
 * CU (*scp == *lnp).  Several CUs claim an address where the linker folded
 * identical functions (ICF, COMDAT copies of one inline function) or where
 * a CU's range is wider than its code: the first of them in .debug_info
 * order that has a scope or a row there answers, as in binutils (the
 * first unit that finds a line or a function) and LLVM (the CU of the
 * lowest offset among those whose ranges cover it).  Scopes of one CU and
 * rows of another would make up frames no program has. */
static int dwarf_at(struct ds_symbols *S, uint64_t addr, struct ds__find_hint *H,
		    const struct piece **scp, const struct scope **sc, const struct piece **lnp,
		    const struct line **ln)
{
	uint32_t cus[CANDIDATES];
	size_t n = S->nranges ? units_at(S, addr, cus, &H->range) : 0;

	*sc = NULL;
	*ln = NULL;
	/* In unit order (insertion sort: n is small). */
	for (size_t k = 1; k < n; k++)
		for (size_t j = k; j && cus[j - 1] > cus[j]; j--) {
			uint32_t t = cus[j];

			cus[j] = cus[j - 1];
			cus[j - 1] = t;
		}
	for (size_t k = 0; k < n && !*sc && !*ln; k++) {
		int err;
		const struct piece *P = unit_get(S, cus[k], &err);

		if (err)
			return err;
		if (!P)
			continue;
		if (P != H->piece) {
			H->piece = P;
			H->seq = H->scope = H->row = SIZE_MAX;
		}
		*sc = innermost(P, addr, &H->scope);
		*ln = line_at(P, addr, &H->seq, &H->row);
		*scp = *lnp = P;
	}
	return 0;
}

/* The frames of addr, innermost first, through emit; see symindex.h. */
int ds__symbols_find(struct ds_symbols *S, uint64_t addr, unsigned flags,
		     struct ds__find_hint *hint, bool *from_symtab, ds__frame_fn emit, void *arg)
{
	struct ds__find_hint none = { 0 };
	const struct elf_piece *E = &S->elf;
	const struct piece *scp = NULL, *lnp = NULL;
	const struct scope *sc;
	const struct line *ln;
	const struct symbol *sym;
	int err = 0;

	*from_symtab = false;
	if (flags & DS_SYM_NO_LINES) {
		/* ELF symbols alone, whichever tier S is, so the answer does
		 * not depend on what an earlier query built. */
		sym = (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(E, addr) : symbol_at(E, addr);
		if (!sym)
			return 0;
		*from_symtab = true;
		return emit(arg, &(struct ds__raw_frame){ .function = str(E->pool, sym->name),
							  .function_start = sym->lo });
	}
	if (!hint)
		hint = &none;
	if (hint->S != S)
		*hint = (struct ds__find_hint){ .S = S };
	err = dwarf_at(S, addr, hint, &scp, &sc, &lnp, &ln);
	if (err)
		return err;
	if (sc) {
		struct ds__raw_frame f = {
			.file = ln ? str(lnp->pool, ln->file) : NULL,
			.line = ln ? ln->line : 0,
			.column = ln ? ln->column : 0,
			.discriminator = ln ? ln->discriminator : 0,
		};

		/* Innermost first; each inlined scope's call site is where
		 * its caller (the next frame) is. */
		for (int depth = 0; sc && depth < MAX_DEPTH && !err; depth++) {
			const struct scope *up =
				sc->parent != NO_PARENT ? &scp->scopes[sc->parent] : NULL;

			f.function = str(scp->pool, sc->name);
			/* binutils: an innermost function whose DWARF name is not
			 * a linkage name (C++ DW_AT_name only) is named after
			 * the ELF symbol that holds the address, and without a
			 * line row there its file is the symbol's too (the
			 * STT_FILE before it: _bfd_elf_find_function). */
			if (!depth && !sc->is_linkage && (flags & DS_SYM_BINUTILS)) {
				sym = symbol_at(E, addr);
				if (sym) {
					f.function = str(E->pool, sym->name);
					if (!ln)
						f.file = str(E->pool, sym->file);
				}
			}
			/* perf: the function holding the address is named after
			 * its ELF symbol. */
			if ((flags & DS_SYM_ELF_NAMES) && !(sc->inlined && up)) {
				sym = perf_symbol_at(E, addr);
				if (sym)
					f.function = str(E->pool, sym->name);
			}
			f.function_start = sc->lo;
			f.inlined = sc->inlined && up;
			err = emit(arg, &f);
			if (!sc->inlined || !(flags & DS_SYM_INLINES) || !up)
				break;
			f.file = str(scp->pool, sc->call_file);
			f.line = sc->call_line;
			f.column = sc->call_column;
			f.discriminator = sc->call_discriminator;
			sc = up;
		}
		return err;
	}
	sym = (flags & DS_SYM_ELF_NAMES) ? perf_symbol_at(E, addr) : symbol_at(E, addr);
	if (!sym && !ln)
		return 0;
	*from_symtab = sym != NULL;
	return emit(arg, &(struct ds__raw_frame){
				 .function = sym ? str(E->pool, sym->name) : NULL,
				 .function_start = sym ? sym->lo : 0,
				 .file = ln    ? str(lnp->pool, ln->file)
					 : sym ? str(E->pool, sym->file)
					       : NULL,
				 .line = ln ? ln->line : 0,
				 .column = ln ? ln->column : 0,
				 .discriminator = ln ? ln->discriminator : 0,
			 });
}

/* ------------------------------------------------------- batches, saving */

int ds__symbols_prepare(struct ds_symbols *S, const uint64_t *vaddrs, size_t n)
{
	uint8_t *want = NULL;
	size_t nwant = 0, range_hint = SIZE_MAX;
	bool done;
	int err = 0;

	/* (Every CU built: the common case, and no lock on this per-call
	 * path.) */
	if (!S->ncus || !n || atomic_load(&S->built) == S->ncus)
		return 0;
	pthread_mutex_lock(&S->mu);
	done = S->complete || (!S->dwarf && !S->go);
	pthread_mutex_unlock(&S->mu);
	if (!done) {
		want = calloc(S->ncus, 1);
		if (!want)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++) {
			uint32_t cus[CANDIDATES];
			size_t k = units_at(S, vaddrs[i], cus, &range_hint);

			while (k--)
				if (!want[cus[k]] && atomic_load(&S->cus[cus[k]].state) == CU_NEW) {
					want[cus[k]] = 1;
					nwant++;
				}
		}
		/* Most of them: all of them (and the index can be saved). */
		if (nwant > S->ncus / 4 + 1)
			err = build_units(S, NULL, S->ncus);
		else if (nwant)
			err = build_units(S, want, nwant);
		free(want);
	}
	return err;
}

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
			(nkeys(cu->piece.nlines) + nkeys(cu->piece.nscopes)) * sizeof(uint64_t) +
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
	pthread_mutex_unlock(&S->mu);
	return freed;
}

int ds__symbols_build_all(struct ds_symbols *S)
{
	bool done;

	pthread_mutex_lock(&S->mu);
	done = S->complete || (!S->dwarf && !S->go);
	pthread_mutex_unlock(&S->mu);
	return done ? 0 : build_units(S, NULL, S->ncus);
}

int ds__symbols_parts(struct ds_symbols *S, struct ds__symbols_parts *out)
{
	struct ds__blob *cus;
	int err;

	memset(out, 0, sizeof(*out));
	if (!S->read_dwarf && !S->go_units)
		return -ENODATA;
	if ((err = ds__symbols_build_all(S)))
		return err;
	for (size_t i = 0; i < S->ncus; i++) /* saved CUs: checked first */
		if (atomic_load(&S->cus[i].state) == CU_SAVED)
			unit_get(S, i, &err);
	pthread_mutex_lock(&S->mu);
	if (S->parts_cus) /* made already: the same */
		goto out;
	cus = calloc(S->ncus ? S->ncus : 1, sizeof(*cus));
	if (!cus) {
		pthread_mutex_unlock(&S->mu);
		return -ENOMEM;
	}
	for (size_t i = 0; i < S->ncus; i++) {
		const struct cu *cu = &S->cus[i];

		if (atomic_load(&cu->state) != CU_READY)
			continue; /* nothing (a saved CU that failed its check too) */
		if (cu->blob) { /* saved: the same bytes */
			cus[i] = (struct ds__blob){ cu->blob, cu->size, cu->sum };
			continue;
		}
		cus[i].data = cu_blob(&cu->piece, &cus[i].size);
		if (!cus[i].data) {
			for (size_t k = 0; k < i; k++)
				if (!S->cus[k].blob)
					free((void *)cus[k].data);
			free(cus);
			pthread_mutex_unlock(&S->mu);
			return -ENOMEM;
		}
		cus[i].sum = ds__blob_sum(cus[i].data, cus[i].size);
	}
	S->parts_cus = cus;
	S->parts_elf_sum = ds__blob_sum(S->elf_blob.data, S->elf_blob.size);
out:
	pthread_mutex_unlock(&S->mu);
	out->elf = (struct ds__blob){ S->elf_blob.data, S->elf_blob.size, S->parts_elf_sum };
	out->ncus = S->ncus;
	out->cus = S->parts_cus;
	out->nranges = S->nranges;
	out->ranges = S->ranges;
	return 0;
}

int ds__symbols_from_parts(const struct ds__symbols_parts *parts, void (*release)(void *),
			   void *arg, struct ds_symbols **out)
{
	struct ds_symbols *S;
	int err;

	*out = NULL;
	if (!parts->elf.data || parts->elf.size > UINT32_MAX * (uint64_t)64 ||
	    ds__blob_sum(parts->elf.data, parts->elf.size) != parts->elf.sum ||
	    !elf_blob_ok(parts->elf.data, parts->elf.size) || parts->ncus > UINT32_MAX ||
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
	elf_view(parts->elf.data, &S->elf);
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
