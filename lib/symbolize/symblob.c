/* SPDX-License-Identifier: MIT */
/*
 * A piece of the symbol index as one blob: what a reader filled (symbuild.c)
 * put in order (scopes by start with their nesting, line rows by sequence,
 * symbols by address), packed with sampled keys and the string pool, and a
 * blob viewed again or checked before its first use (one from a saved
 * index is any bytes).  symindex.c decides when a piece is built; this
 * file is its layout alone.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define BLOB_CU 0x55435344u /* "DSCU" */
#define BLOB_ELF 0x464c4544u /* "DELF" */

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

size_t ds__symblob_nkeys(uint32_t n)
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
void ds__symblob_cu_view(const void *blob, struct piece *P)
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
	p += ds__symblob_nkeys(h->nlines) * sizeof(uint64_t);
	P->scope_keys = (const uint64_t *)p;
	p += ds__symblob_nkeys(h->nscopes) * sizeof(uint64_t);
	P->pool = p;
}

static bool pool_ok(const char *pool, uint32_t len, uint32_t off)
{
	return off < len || (!off && !len);
}

/* A blob from a file: can every lookup read it without leaving it?
 * (Whether its answers are right is the CRC's business.) */
bool ds__symblob_cu_blob_ok(const void *blob, uint64_t size)
{
	const struct cu_hdr *h = blob;
	struct piece P;

	if (size < sizeof(*h) || h->magic != BLOB_CU ||
	    cu_blob_size(h->nscopes, h->nlines, h->nseqs, h->pool_len) != size)
		return false;
	ds__symblob_cu_view(blob, &P);
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

/* ------------------------------------------ saved blobs, chunk by chunk */

static bool chunk_sum_ok(struct ds__chunks *C, size_t k)
{
	unsigned st = atomic_load_explicit(&C->state[k], memory_order_relaxed);
	uint64_t off = (uint64_t)k << DS__SUM_CHUNK_SHIFT;
	bool ok;

	if (st & CK_BAD)
		return false;
	if (st & CK_SUM)
		return true;
	ok = ds__blob_sum(C->base + off, C->size - off < DS__SUM_CHUNK ? (size_t)(C->size - off)
								       : DS__SUM_CHUNK) == C->sums[k];
	atomic_fetch_or_explicit(&C->state[k], ok ? CK_SUM : CK_BAD, memory_order_relaxed);
	return ok;
}

/* The pool's bytes in chunk k: [*lo, *hi), empty when it has none. */
static void pool_in(const struct ds__chunks *C, size_t k, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = (uint64_t)k << DS__SUM_CHUNK_SHIFT, b = a + DS__SUM_CHUNK;

	*lo = a > C->pool_lo ? a : C->pool_lo;
	*hi = b < C->pool_hi ? b : C->pool_hi;
	if (*lo > *hi)
		*lo = *hi;
}

static bool pool_nul(const struct ds__chunks *C, uint64_t lo, uint64_t hi)
{
	return lo < hi && memchr(C->base + lo, 0, hi - lo);
}

/* The entries of an array at lo (n of size bytes) that start in chunk k:
 * [*first, *end). */
static void starts_in(size_t k, uint64_t lo, uint64_t n, size_t size, uint64_t *first,
		      uint64_t *end)
{
	uint64_t a = (uint64_t)k << DS__SUM_CHUNK_SHIFT, b = a + DS__SUM_CHUNK;

	*first = a <= lo ? 0 : (a - lo + size - 1) / size;
	*end = b <= lo ? 0 : (b - lo + size - 1) / size;
	if (*end > n)
		*end = n;
	if (*first > *end)
		*first = *end;
}

static bool pool_off_ok(const struct ds__chunks *C, uint32_t off)
{
	return !off || off < C->pool_hi - C->pool_lo;
}

/* The scopes and rows that start in chunk k lead nowhere outside the
 * piece.  (Their bytes in the next chunk are read before that chunk is
 * checked: whatever they are, they are bytes of the mapping, and if they
 * are wrong that chunk is never good.) */
static bool chunk_fields_ok(const struct ds__chunks *C, size_t k)
{
	const struct scope *sc = (const struct scope *)(const void *)(C->base + C->scopes_lo);
	const struct line *ln = (const struct line *)(const void *)(C->base + C->lines_lo);
	uint64_t i, e;

	starts_in(k, C->scopes_lo, C->nscopes, sizeof(*sc), &i, &e);
	for (; i < e; i++)
		if ((sc[i].parent != NO_PARENT && sc[i].parent >= C->nscopes) ||
		    !pool_off_ok(C, sc[i].name) || !pool_off_ok(C, sc[i].call_file))
			return false;
	starts_in(k, C->lines_lo, C->nlines, sizeof(*ln), &i, &e);
	for (; i < e; i++)
		if (!pool_off_ok(C, ln[i].file))
			return false;
	return true;
}

/* Chunk k made good: its sum, and for a chunk with pool bytes the chunks
 * after it up to the first NUL past its last pool byte and those before
 * it back to the NUL before its first (or the pool's start).  The pool's
 * last byte is a NUL (checked with the head), so the walk forward ends in
 * the pool. */
static bool chunk_check(struct ds__chunks *C, size_t k)
{
	uint64_t lo, hi;
	size_t j;

	if (!chunk_sum_ok(C, k))
		return false;
	if (!chunk_fields_ok(C, k)) {
		atomic_fetch_or_explicit(&C->state[k], CK_BAD, memory_order_relaxed);
		return false;
	}
	pool_in(C, j = k, &lo, &hi);
	while (lo < hi && C->base[hi - 1]) {
		if (++j >= C->n || !chunk_sum_ok(C, j))
			return false;
		pool_in(C, j, &lo, &hi);
		if (pool_nul(C, lo, hi))
			break;
	}
	pool_in(C, j = k, &lo, &hi);
	while (lo < hi && lo > C->pool_lo) {
		if (!chunk_sum_ok(C, --j))
			return false;
		pool_in(C, j, &lo, &hi);
		if (pool_nul(C, lo, hi))
			break;
	}
	if (!(atomic_fetch_or_explicit(&C->state[k], CK_GOOD, memory_order_relaxed) & CK_GOOD)) {
		size_t good = atomic_fetch_add(&C->good, 1) + 1;

		if (good == C->n)
			atomic_store(&C->all, true);
		/* Half of it checked for lookups (a busy piece): the rest
		 * now, once, so that lookups read it unchecked from then on
		 * (ds__symbols_unit_get()).  At most twice what they read. */
		else if (2 * good >= C->n && !atomic_exchange(&C->finishing, true))
			for (size_t i = 0; i < C->n; i++)
				if (!(atomic_load_explicit(&C->state[i], memory_order_relaxed) & CK_GOOD) &&
				    !chunk_check(C, i))
					break;
	}
	return true;
}

bool ds__chunks_check(struct ds__chunks *C, uint64_t off, uint64_t len)
{
	if (!len || off > C->size || len > C->size - off)
		return false;
	for (size_t k = (size_t)(off >> DS__SUM_CHUNK_SHIFT),
		    e = (size_t)((off + len - 1) >> DS__SUM_CHUNK_SHIFT);
	     k <= e; k++)
		if (!(atomic_load_explicit(&C->state[k], memory_order_relaxed) & CK_GOOD) &&
		    !chunk_check(C, k))
			return false;
	return true;
}

bool ds__symblob_cu_head_ok(struct ds__chunks *C)
{
	const struct cu_hdr *h = (const struct cu_hdr *)C->base;
	const char *seqs;
	struct piece P;

	/* The header's sum first (it is in chunk 0): it says where the rest
	 * lies, which checking a chunk needs. */
	if (C->size < sizeof(*h) || C->n != ds__chunks_of(C->size) || !chunk_sum_ok(C, 0) ||
	    h->magic != BLOB_CU || cu_blob_size(h->nscopes, h->nlines, h->nseqs, h->pool_len) != C->size)
		return false;
	ds__symblob_cu_view(h, &P);
	/* The sequences and both key arrays lie together. */
	seqs = (const char *)P.seqs;
	C->pool_lo = (uint64_t)(P.pool - (const char *)h);
	C->pool_hi = C->pool_lo + P.pool_len;
	C->scopes_lo = (uint64_t)((const char *)P.scopes - (const char *)h);
	C->lines_lo = (uint64_t)((const char *)P.lines - (const char *)h);
	C->nscopes = P.nscopes;
	C->nlines = P.nlines;
	if (!ds__chunks_check(C, 0, sizeof(*h)))
		return false;
	if (C->pool_lo > (uint64_t)(seqs - (const char *)h) &&
	    !ds__chunks_check(C, (uint64_t)(seqs - (const char *)h),
			      C->pool_lo - (uint64_t)(seqs - (const char *)h)))
		return false;
	if (P.pool_len && (!chunk_sum_ok(C, (size_t)((C->pool_hi - 1) >> DS__SUM_CHUNK_SHIFT)) ||
			   P.pool[P.pool_len - 1]))
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
int ds__symblob_cu_finish(struct sym_build *B, struct piece *P, void *own[5], uint64_t *bytes)
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
	nl = ds__symblob_nkeys((uint32_t)B->nlines);
	ns = ds__symblob_nkeys((uint32_t)B->nscopes);
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
			     (uint32_t)B->nlines, (uint32_t)nseqs, (uint32_t)B->pool_len, NULL };
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
_Static_assert(sizeof(struct ds__cu_hdr_buf) == sizeof(struct cu_hdr), "the header's room");

size_t ds__symblob_cu_segs(const struct piece *P, struct ds__cu_hdr_buf *hdr,
			   struct ds__seg segs[DS__BLOB_SEGS], uint64_t *size)
{
	static const char zeros[8];
	struct cu_hdr h = { BLOB_CU, P->nscopes, P->nlines, P->nseqs, P->pool_len, 0, 0 };
	size_t n = 0;

	memcpy(hdr, &h, sizeof(h));
#define SEG(src, bytes)                                             \
	do {                                                        \
		if ((bytes) != 0)                                   \
			segs[n++] = (struct ds__seg){ (src), (bytes) }; \
	} while (0)
	SEG(hdr, sizeof(h));
	SEG(P->scopes, (uint64_t)P->nscopes * sizeof(*P->scopes));
	SEG(P->lines, (uint64_t)P->nlines * sizeof(*P->lines));
	SEG(P->seqs, (uint64_t)P->nseqs * sizeof(*P->seqs));
	SEG(P->line_keys, ds__symblob_nkeys(P->nlines) * sizeof(uint64_t));
	SEG(P->scope_keys, ds__symblob_nkeys(P->nscopes) * sizeof(uint64_t));
	SEG(P->pool, (uint64_t)P->pool_len);
	SEG(zeros, align8(P->pool_len) - P->pool_len);
#undef SEG
	*size = cu_blob_size(P->nscopes, P->nlines, P->nseqs, P->pool_len);
	return n;
}

static size_t elf_blob_size(uint64_t nsyms, uint64_t nsecs, uint64_t nsegs, uint64_t pool_len)
{
	return sizeof(struct elf_hdr) + nsyms * sizeof(struct symbol) +
	       nsecs * sizeof(struct section) + nsegs * sizeof(struct segment) + align8(pool_len);
}

void ds__symblob_elf_view(const void *blob, struct elf_piece *E)
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

bool ds__symblob_elf_blob_ok(const void *blob, uint64_t size)
{
	const struct elf_hdr *h = blob;
	struct elf_piece E;

	if (size < sizeof(*h) || h->magic != BLOB_ELF ||
	    elf_blob_size(h->nsyms, h->nsecs, h->nsegs, h->pool_len) != size)
		return false;
	ds__symblob_elf_view(blob, &E);
	if (E.pool_len && E.pool[E.pool_len - 1])
		return false;
	for (uint32_t i = 0; i < E.nsyms; i++)
		if (!pool_ok(E.pool, E.pool_len, E.syms[i].name) ||
		    !pool_ok(E.pool, E.pool_len, E.syms[i].file))
			return false;
	return true;
}

int ds__symblob_elf_pack(struct sym_build *B, void **blob, uint64_t *size)
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
