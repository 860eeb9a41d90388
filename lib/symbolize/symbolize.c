/* SPDX-License-Identifier: MIT */
/*
 * Symbolization: address -> function, file:line:column, inline frames,
 * answered from the index (symindex.c).  A lookup is two binary searches
 * and a short walk up the scope chain.  (libdw's own per-address path,
 * what eu-addr2line does, walks DIEs for every address: ~0.8 ms each with
 * inlines.)  Names as binutils or perf choose them, demangled (the
 * spellings are names.c's; the batch keeps what they give); and the
 * request lines of `dsostore symbolize`.
 */
#define _GNU_SOURCE
#include "names.h"
#include "symindex.h"

#include <ctype.h>
#include <errno.h>
#include <libiberty/demangle.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- the arena
 *
 * A batch's strings live in chunks that never move (a frame points into
 * them as soon as it is made) and are kept from call to call: a reset
 * rewinds, a warm batch allocates nothing.  Each chunk ends in
 * ARENA_SLACK bytes no string takes (zeroed), so that every string of it
 * is followed by that many readable bytes (dsostore.h's
 * DS_SYM_STRING_SLACK).  Under ASan the bytes of a chunk past its strings
 * and that slack are poisoned: a reader that goes further is caught
 * (test_symbolize reads the slack of every answer's strings). */
#define ARENA_SLACK DS_SYM_STRING_SLACK
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
/* Chunk c's bytes [from, used) taken: readable up to used + ARENA_SLACK
 * (from 0: a chunk begun again, all past that poisoned). */
#define arena_mark(c, from, used)                                                       \
	do {                                                                            \
		ASAN_UNPOISON_MEMORY_REGION((c)->data + (from), (used) - (from) + ARENA_SLACK); \
		if (!(from))                                                            \
			ASAN_POISON_MEMORY_REGION((c)->data + (used) + ARENA_SLACK,     \
						  (c)->size - (used));                  \
	} while (0)
#else
#define arena_mark(c, from, used) ((void)0)
#endif

#define CHUNK_MIN (4u << 10)
#define CHUNK_MAX (256u << 10)
/* The demangled names kept across calls: past this, dropped at a call's
 * start (a stream over many DSOs would otherwise keep them all). */
#define DEMANGLED_MAX (16u << 20)
/* The index's strings kept across calls (see struct strtab): past this
 * many bytes, dropped at the next call's lookup. */
#define INDEX_STRINGS_MAX (16u << 20)

struct chunk {
	struct chunk *next;
	size_t size;
	char data[];
};

struct arena {
	struct chunk *head, *cur; /* cur NULL: rewound, head is next */
	size_t pos; /* used bytes of cur */
	size_t bytes; /* of every chunk */
};

static char *arena_alloc(struct arena *a, size_t len)
{
	struct chunk **link, *c = a->cur;
	size_t size;

	if (c && c->size - a->pos >= len) {
		arena_mark(c, a->pos, a->pos + len);
		a->pos += len;
		return c->data + a->pos - len;
	}
	/* The next chunk kept from an earlier call, if it has room. */
	link = c ? &c->next : &a->head;
	while (*link && (*link)->size < len) {
		struct chunk *small = *link;

		*link = small->next;
		a->bytes -= small->size;
		free(small);
	}
	if (!*link) {
		size = a->bytes < CHUNK_MIN ? CHUNK_MIN : a->bytes < CHUNK_MAX ? a->bytes : CHUNK_MAX;
		if (size < len)
			size = len;
		c = malloc(sizeof(*c) + size + ARENA_SLACK);
		if (!c)
			return NULL;
		c->next = NULL;
		c->size = size;
		memset(c->data + size, 0, ARENA_SLACK);
		a->bytes += size;
		*link = c;
		/* (filled front to back: its pages made ready in one call,
		 * see POPULATE_MIN; the first small ones are left to fault) */
		if (size >= CHUNK_MAX / 4)
			ds__populate(c->data, size);
	}
	a->cur = *link;
	a->pos = len;
	arena_mark(a->cur, 0, len);
	return a->cur->data;
}

static char *arena_strdup(struct arena *a, const char *s, size_t len)
{
	char *p = arena_alloc(a, len + 1);

	if (p)
		memcpy(p, s, len + 1);
	return p;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct chunk *c = a->head;

		a->head = c->next;
		free(c);
	}
	*a = (struct arena){ 0 };
}

/* ---------------------------------------------------------- the batch */

struct pair {
	uint64_t key; /* the virtual address */
	uint32_t idx; /* its place in the input */
	uint32_t pad;
};

/* How a name is answered: as the index has it, or demangled and spelled
 * as binutils (addr2line -C, c++filt without -v) or llvm-symbolizer 14
 * print it. */
/* How names are demangled: not, as binutils, as LLVM, as perf (no parameters). */
enum { DM_NONE, DM_GNU, DM_LLVM, DM_PERF };

/* The index's string at key, as answered (copied, or demangled). */
struct pslot {
	const char *key, *val;
	uint32_t gen; /* a slot of an earlier generation is empty */
	uint32_t len; /* strlen(val) */
	uint8_t how; /* DM_* */
	bool plain; /* val is printable ASCII but '"' and '\\' (struct ds_frame) */
};

/* A mangled name and its demangling in one spelling (both in the batch's
 * demangled arena), kept across calls: a hot name is demangled once. */
struct dslot {
	const char *mangled, *demangled;
	uint64_t hash;
	size_t len; /* strlen(demangled) */
	uint8_t how;
};

#define RECENT 256 /* a power of two */
/* The entries of a batch's arrays that a call writes are made ready in
 * one call each (ds__populate()) when they are this many more than were
 * before: a million warm addresses took some 2,300 page faults in them
 * otherwise, a tenth of the run's CPU on a paravirtualized machine.  Only
 * what is written: room grown past it stays untouched. */
#define POPULATE_MIN 4096
#define PREFETCH_AHEAD 8 /* answers: see ds__sym_batch_lookup() */

/* Strings answered, by the pointer they were given as: open addressing
 * at half load, the slots of another generation empty, and in front of
 * the table the last string met at each of a few places (its address
 * hashed), in L1 cache: most frames repeat one.  A pointer names one
 * string only while the memory it points into is not freed, so a table
 * starts a new generation when that may no longer hold:
 *   - the call's table (ds__sym_batch_put()'s strings, from another
 *     batch's answers) at every call;
 *   - the index's table (the lookups' strings, pointers into one
 *     ds_symbols) when the index is another one (its uid) or freed
 *     strings since (its strings_epoch), when it holds
 *     INDEX_STRINGS_MAX bytes, or when the demangled names it points to
 *     are dropped.  Kept from call to call, a string a stream asks again
 *     (a hot function, a header's path) is measured, checked and copied
 *     once, not once per call. */
struct strtab {
	struct pslot recent[RECENT];
	struct pslot *tab;
	size_t cap, used;
	uint32_t gen;
	struct arena *arena; /* where its copies go */
};

/* ds__sym_batch_scratch()'s batches: one per DSO asked last, kept with
 * the batch they answer into. */
#define SCRATCH_MAX DS__SYM_SCRATCH_MAX
struct scratch {
	const void *key;
	struct ds_sym_batch *b;
	uint64_t used;
};

/* What a lookup says of answer i, stored to its place in input order
 * while the lookups go in address order: 16 bytes where the answer is 56
 * (two cache lines most often), so that the scattered stores miss less;
 * the answers are written from these in one pass in order.  meta:
 * nframes (24 bits), status (4), from_symtab, SLOT_SET (a lookup's
 * answer; else one ds__sym_batch_sort() wrote to ans itself).  first: the
 * first frame; with no frames, the error's errno (positive) or 0.  An
 * answer ds__sym_batch_put() copied keeps its first frame there too. */
struct slot {
	uint64_t addr;
	uint32_t first, meta;
};
#define SLOT_NFRAMES_MAX ((1u << 24) - 1)
#define SLOT_STATUS_SHIFT 24
#define SLOT_SYMTAB (1u << 28)
#define SLOT_SET (1u << 31)

struct ds_sym_batch {
	struct ds_sym_answer *ans;
	struct slot *slots; /* the lookups' answers; where a copied one's frames start */
	size_t n, cap; /* answers; room in ans, slots, pairs, tmp, vaddrs */
	/* Entries populated (ds__populate()): of ans, slots and vaddrs; of
	 * pairs; of tmp (the two trade places in a sort); of frames. */
	size_t ready, pairs_ready, tmp_ready, frames_ready;
	struct pair *pairs, *tmp;
	uint32_t *sort_count; /* radix_sort()'s counts (not on a host thread's stack) */
	size_t npairs;
	uint64_t *vaddrs;
	struct ds_frame *frames;
	size_t nframes, frame_cap;
	struct arena strings; /* this call's */
	struct strtab calltab; /* into strings */
	/* The lookups' strings, across calls (see struct strtab). */
	struct arena istrings;
	struct strtab itab;
	uint64_t iuid; /* the index itab's keys point into */
	uint32_t iepoch; /* its strings_epoch then */
	size_t ibytes; /* copied into istrings since itab's generation began */
	struct arena dm_strings; /* across calls */
	struct dslot *dtab;
	size_t dcap, dused;
	uint8_t demangle; /* this call's DM_*, from DS_SYM_DEMANGLE and _LLVM_NAMES */
	const char *last_module; /* put: the module copied last (in strings) */
	struct scratch scratch[SCRATCH_MAX];
	uint64_t scratch_clock;
};

DS_API struct ds_sym_batch *ds_sym_batch_new(void)
{
	struct ds_sym_batch *b = calloc(1, sizeof(*b));

	if (!b) {
		errno = ENOMEM;
		return NULL;
	}
	b->calltab.arena = &b->strings;
	b->itab.arena = &b->istrings;
	return b;
}

DS_API void ds_sym_batch_free(struct ds_sym_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < SCRATCH_MAX; i++)
		ds_sym_batch_free(b->scratch[i].b);
	free(b->ans);
	free(b->slots);
	free(b->pairs);
	free(b->tmp);
	free(b->sort_count);
	free(b->vaddrs);
	free(b->frames);
	free(b->calltab.tab);
	free(b->itab.tab);
	free(b->dtab);
	arena_free(&b->strings);
	arena_free(&b->istrings);
	arena_free(&b->dm_strings);
	free(b);
}

DS_API const struct ds_sym_answer *ds_sym_batch_answers(const struct ds_sym_batch *b, size_t *n)
{
	if (n)
		*n = b ? b->n : 0;
	return b && b->n ? b->ans : NULL;
}

static bool grow(void **p, size_t n, size_t size)
{
	void *q = realloc(*p, n * size);

	if (q)
		*p = q;
	return q != NULL;
}

int ds__sym_batch_start(struct ds_sym_batch *b, size_t n)
{
	b->n = b->npairs = b->nframes = 0;
	b->strings.cur = NULL;
	b->strings.pos = 0;
	ds__sym_batch_forget(b);
	if (n > INT_MAX) /* the count of found ones is an int */
		return -EINVAL;
	if (b->dm_strings.bytes > DEMANGLED_MAX) {
		arena_free(&b->dm_strings);
		if (b->dtab)
			memset(b->dtab, 0, b->dcap * sizeof(*b->dtab));
		b->dused = 0;
		b->iuid = 0; /* itab's demangled names are gone */
	}
	if (n > b->cap) {
		size_t cap = n < 2 * b->cap ? 2 * b->cap : n;

		/* An array grown stays grown; cap only counts once all are. */
		if (!grow((void **)&b->ans, cap, sizeof(*b->ans)) ||
		    !grow((void **)&b->slots, cap, sizeof(*b->slots)) ||
		    !grow((void **)&b->pairs, cap, sizeof(*b->pairs)) ||
		    !grow((void **)&b->tmp, cap, sizeof(*b->tmp)) ||
		    !grow((void **)&b->vaddrs, cap, sizeof(*b->vaddrs)))
			return -ENOMEM;
		b->cap = cap;
	}
	if (n >= b->ready + POPULATE_MIN) {
		/* The entries this call writes, not the room past them (a
		 * batch grown to twice what it was asked would hold it all). */
		size_t k = b->ready;

		ds__populate(b->ans + k, (n - k) * sizeof(*b->ans));
		ds__populate(b->slots + k, (n - k) * sizeof(*b->slots));
		ds__populate(b->vaddrs + k, (n - k) * sizeof(*b->vaddrs));
		b->ready = n;
	}
	if (n >= b->pairs_ready + POPULATE_MIN) {
		ds__populate(b->pairs + b->pairs_ready, (n - b->pairs_ready) * sizeof(*b->pairs));
		b->pairs_ready = n;
	}
	b->n = n;
	return 0;
}

static enum ds_sym_status status_of(int err)
{
	return err == -ERANGE				? DS_SYM_OUTSIDE
	       : err == -ENOENT || err == -ENODATA ? DS_SYM_NO_SYMBOLS
							: DS_SYM_ERROR;
}

static void answer_error(struct ds_sym_answer *a, uint64_t addr, int err)
{
	*a = (struct ds_sym_answer){ .addr = addr, .status = status_of(err), .error = err };
}

void ds__sym_batch_fail(struct ds_sym_batch *b, const uint64_t *addrs, int err)
{
	for (size_t i = 0; i < b->n; i++)
		answer_error(&b->ans[i], addrs[i], err);
}

/* ------------------------------------------------------------ sorting */

/* Below this many pairs, a run is insertion-sorted. */
#define SORT_SMALL 32

static void insertion_sort(struct pair *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct pair p = a[i];
		size_t j = i;

		for (; j && a[j - 1].key > p.key; j--)
			a[j] = a[j - 1];
		a[j] = p;
	}
}

/* The bits where keys of a[0..n) differ. */
static uint64_t keys_differ(const struct pair *a, size_t n)
{
	uint64_t all_and = UINT64_MAX, all_or = 0;

	for (size_t i = 0; i < n; i++) {
		all_and &= a[i].key;
		all_or |= a[i].key;
	}
	return all_and ^ all_or;
}

/* Stable LSD radix sort on key, 8 bits a pass, a pass skipped where every
 * key has the same byte (differ: the bits where keys differ).  Returns a
 * or tmp, whichever holds the result. */
static struct pair *lsd_sort(struct pair *a, struct pair *tmp, size_t n, uint64_t differ)
{
	uint32_t count[8][256];
	unsigned digits[8], nd = 0;

	for (unsigned d = 0; d < 8; d++)
		if ((differ >> (8 * d)) & 0xff)
			digits[nd++] = d;
	memset(count, 0, nd * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		for (unsigned j = 0; j < nd; j++)
			count[j][(a[i].key >> (8 * digits[j])) & 0xff]++;
	for (unsigned j = 0; j < nd; j++) {
		uint32_t *c = count[j], sum = 0;
		unsigned d = digits[j];
		struct pair *t;

		for (unsigned v = 0; v < 256; v++) {
			uint32_t k = c[v];

			c[v] = sum;
			sum += k;
		}
		for (size_t i = 0; i < n; i++)
			tmp[c[(a[i].key >> (8 * d)) & 0xff]++] = a[i];
		t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

/* Bits of the one pass by the top of the keys: two fewer than n has, so
 * that runs hold some four pairs, up to 2^MSD_BITS runs (the counts,
 * 64 KiB, are the batch's: a library's callers may run it on small
 * stacks). */
#define MSD_BITS 14
#define MSD_COUNTS ((1u << MSD_BITS) + 1)

/* Stable sort by key: one counting pass by the highest bits where keys
 * differ, then each run of keys alike there insertion-sorted (a large one
 * by lsd_sort()).  A block of a DSO's addresses (65,536 over a few MB of
 * text) leaves runs of a few pairs: one scattering pass instead of the
 * three or four of bytes (python3.11d's warm million: 89 instructions an
 * address in the sort before, 56 after; 12 bits, runs of 16, took 98).
 * count: MSD_COUNTS of room (NULL: lsd_sort() alone).  Returns a or tmp,
 * whichever holds the result. */
static struct pair *radix_sort(struct pair *a, struct pair *tmp, size_t n, uint32_t *count)
{
	unsigned shift, bits, top;
	uint32_t mask;
	uint64_t differ;

	if (n < SORT_SMALL) {
		insertion_sort(a, n); /* (stable too) */
		return a;
	}
	differ = keys_differ(a, n);
	if (!differ)
		return a; /* one key */
	if (!count) /* (no memory for them) */
		return lsd_sort(a, tmp, n, differ);
	bits = 64 - (unsigned)__builtin_clzll(n) - 2; /* (n >= SORT_SMALL: 4 and more) */
	if (bits > MSD_BITS)
		bits = MSD_BITS;
	top = 64 - (unsigned)__builtin_clzll(differ);
	shift = top > bits ? top - bits : 0;
	mask = (1u << bits) - 1;
	memset(count, 0, (mask + 2) * sizeof(count[0]));
	for (size_t i = 0; i < n; i++)
		count[((a[i].key >> shift) & mask) + 1]++;
	for (uint32_t v = 1; v <= mask + 1; v++)
		count[v] += count[v - 1]; /* count[v]: where run v starts */
	for (size_t i = 0; i < n; i++)
		tmp[count[(a[i].key >> shift) & mask]++] = a[i];
	/* (count[v] is now where run v ends, and run v starts where v - 1
	 * ends) */
	for (uint32_t v = 0, from = 0; v <= mask; from = count[v++]) {
		size_t m = count[v] - from;

		if (m < 2)
			continue;
		if (m < SORT_SMALL)
			insertion_sort(tmp + from, m);
		else if (lsd_sort(tmp + from, a + from, m, keys_differ(tmp + from, m)) != tmp + from)
			memcpy(tmp + from, a + from, m * sizeof(*a));
	}
	return tmp;
}

size_t ds__sym_batch_sort(struct ds_sym_batch *b, const struct ds_symbols *S,
			  const struct ds__loadmap *lm, const uint64_t *addrs, unsigned flags,
			  const uint64_t **vaddrs)
{
	bool sorted = true;
	size_t np = 0, nv = 0;

	for (size_t i = 0; i < b->n; i++) {
		uint64_t v = addrs[i];

		if (flags & DS_SYM_FILE_OFFSET) {
			int err = lm ? ds__loadmap_vaddr(lm, addrs[i], &v)
				     : ds__symbols_vaddr(S, addrs[i], &v);

			if (err) {
				answer_error(&b->ans[i], addrs[i], err);
				b->slots[i].meta = 0; /* (not a lookup's) */
				continue;
			}
		}
		sorted &= !np || b->pairs[np - 1].key <= v;
		b->pairs[np++] = (struct pair){ .key = v, .idx = (uint32_t)i };
	}
	if (!sorted) {
		struct pair *p;

		if (np >= b->tmp_ready + POPULATE_MIN) { /* (written by a sort alone) */
			ds__populate(b->tmp + b->tmp_ready, (np - b->tmp_ready) * sizeof(*b->tmp));
			b->tmp_ready = np;
		}
		if (!b->sort_count && np >= SORT_SMALL)
			b->sort_count = malloc(MSD_COUNTS * sizeof(*b->sort_count));
		p = radix_sort(b->pairs, b->tmp, np, b->sort_count);

		if (p != b->pairs) {
			size_t r = b->tmp_ready;

			b->tmp = b->pairs;
			b->tmp_ready = b->pairs_ready;
			b->pairs = p;
			b->pairs_ready = r;
		}
	}
	for (size_t k = 0; k < np; k++)
		if (!nv || b->vaddrs[nv - 1] != b->pairs[k].key)
			b->vaddrs[nv++] = b->pairs[k].key;
	b->npairs = np;
	*vaddrs = b->vaddrs;
	return nv;
}

/* ------------------------------------------------------------ strings */

static size_t hash_ptr(const char *p, unsigned how)
{
	uint64_t x = ((uintptr_t)p ^ how) * 0x9e3779b97f4a7c15ull;

	return (size_t)(x ^ x >> 29);
}

/* FNV-1a of s, then how; *len its length. */
static uint64_t hash_str(const char *s, unsigned how, size_t *len)
{
	uint64_t h = 0xcbf29ce484222325ull;
	const char *p = s;

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	*len = (size_t)(p - s);
	return (h ^ how) * 0x100000001b3ull;
}

/* Doubled; false: no memory (the caller goes on without the cache). */
static bool strtab_grow(struct strtab *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024;
	struct pslot *v = calloc(cap, sizeof(*v));

	if (!v)
		return false;
	/* (its slots are written all over it: every page, soon) */
	ds__populate(v, cap * sizeof(*v));
	for (size_t i = 0; i < t->cap; i++) {
		const struct pslot *s = &t->tab[i];
		size_t h;

		if (s->gen != t->gen)
			continue;
		for (h = hash_ptr(s->key, s->how) & (cap - 1); v[h].gen == t->gen;
		     h = (h + 1) & (cap - 1))
			;
		v[h] = *s;
	}
	free(t->tab);
	t->tab = v;
	t->cap = cap;
	return true;
}

/* A new generation: every slot empty (the copies stay where they are:
 * the caller rewinds the arena when nothing points into it any more). */
static void strtab_forget(struct strtab *t)
{
	if (++t->gen == 0) { /* wrapped: no slot may look current */
		if (t->tab)
			memset(t->tab, 0, t->cap * sizeof(*t->tab));
		memset(t->recent, 0, sizeof(t->recent));
		t->gen = 1;
	}
	t->used = 0;
}

static bool dtab_grow(struct ds_sym_batch *b)
{
	size_t cap = b->dcap ? 2 * b->dcap : 256;
	struct dslot *t = calloc(cap, sizeof(*t));

	if (!t)
		return false;
	for (size_t i = 0; i < b->dcap; i++) {
		size_t h;

		if (!b->dtab[i].mangled)
			continue;
		for (h = b->dtab[i].hash & (cap - 1); t[h].mangled; h = (h + 1) & (cap - 1))
			;
		t[h] = b->dtab[i];
	}
	free(b->dtab);
	b->dtab = t;
	b->dcap = cap;
	return true;
}

/* s demangled the way how says (s itself where it is no mangled name),
 * from the cache or demangled now and kept, its length in *dlen; NULL: no
 * memory. */
static const char *demangled(struct ds_sym_batch *b, const char *s, unsigned how, size_t *dlen)
{
	size_t len, h;
	uint64_t hash = hash_str(s, how, &len);
	const char *m, *d;
	char *dm;

	if (2 * (b->dused + 1) > b->dcap && !dtab_grow(b) && !b->dcap)
		return NULL;
	for (h = hash & (b->dcap - 1); b->dtab[h].mangled; h = (h + 1) & (b->dcap - 1))
		if (b->dtab[h].hash == hash && b->dtab[h].how == how &&
		    !strcmp(b->dtab[h].mangled, s)) {
			*dlen = b->dtab[h].len;
			return b->dtab[h].demangled;
		}
	if (b->dused + 1 >= b->dcap)
		return NULL; /* full and could not grow */
	dm = how == DM_LLVM  ? ds__demangle_llvm(s)
	     : how == DM_PERF ? ds__demangle_gnu(s, DMGL_NO_OPTS)
			      : ds__demangle_gnu(s, DMGL_PARAMS | DMGL_ANSI);
	m = arena_strdup(&b->dm_strings, s, len);
	if (dm)
		len = strlen(dm);
	d = !m ? NULL : dm ? arena_strdup(&b->dm_strings, dm, len) : m;
	free(dm);
	if (d) {
		b->dtab[h] = (struct dslot){ .mangled = m, .demangled = d, .hash = hash,
					     .len = len, .how = (uint8_t)how };
		b->dused++;
	}
	*dlen = len;
	return d;
}

static const char *answer_string_slow(struct ds_sym_batch *b, struct strtab *t,
				      struct pslot *r, const char *s, unsigned how,
				      unsigned *len, bool *plain);

/* The string answered for s through t: a copy, or demangled the way how
 * says; its length in *len, whether it is plain in *plain.  (The common
 * case, the string met last at its place, inline; the rest not, so that
 * it costs no saved registers.) */
static inline const char *answer_string(struct ds_sym_batch *b, struct strtab *t,
					const char *s, unsigned how, unsigned *len,
					bool *plain)
{
	struct pslot *r = &t->recent[((uintptr_t)s >> 3 ^ (uintptr_t)s >> 11 ^ how) & (RECENT - 1)];

	if (r->key == s && r->gen == t->gen && r->how == how) {
		*len = r->len;
		*plain = r->plain;
		return r->val;
	}
	return answer_string_slow(b, t, r, s, how, len, plain);
}

__attribute__((noinline)) static const char *
answer_string_slow(struct ds_sym_batch *b, struct strtab *t, struct pslot *r, const char *s,
		   unsigned how, unsigned *len, bool *plain)
{
	struct pslot *slot = NULL;
	const char *val;
	size_t n = 0;

	if (2 * (t->used + 1) <= t->cap || strtab_grow(t)) {
		size_t mask = t->cap - 1, h = hash_ptr(s, how) & mask;

		for (; t->tab[h].gen == t->gen; h = (h + 1) & mask)
			if (t->tab[h].key == s && t->tab[h].how == how) {
				*r = t->tab[h];
				*len = r->len;
				*plain = r->plain;
				return r->val;
			}
		slot = &t->tab[h];
	}
	if (how) {
		val = demangled(b, s, how, &n);
	} else {
		n = strlen(s);
		val = arena_strdup(t->arena, s, n);
		if (t == &b->itab)
			b->ibytes += n + 1;
	}
	if (!val || n > UINT32_MAX) /* (no index holds a name of 4 GiB) */
		return NULL;
	*len = (unsigned)n;
	/* (Plain for a terminal and for JSON alike: no tab, quote or
	 * backslash either; once a distinct string.) */
	*plain = ds__term_plain(val, n) == n && !val[strcspn(val, "\t\"\\")];
	if (slot) {
		*slot = (struct pslot){ .key = s, .val = val, .gen = t->gen, .len = *len,
					.how = (uint8_t)how, .plain = *plain };
		*r = *slot;
		t->used++;
	}
	return val;
}

/* ------------------------------------------------------------ lookups */

/* A lookup's frame, its strings as the index has them: answer_strings()
 * gives them their answers' strings once the lookups are done. */
static int emit_frame(void *arg, const struct ds__raw_frame *f)
{
	struct ds_sym_batch *b = arg;

	if (b->nframes == b->frame_cap) {
		size_t cap = b->frame_cap ? 2 * b->frame_cap : 64;

		if (!grow((void **)&b->frames, cap, sizeof(*b->frames)))
			return -ENOMEM;
		b->frame_cap = cap;
	}
	b->frames[b->nframes++] = (struct ds_frame){
		.function = f->function,
		.function_start = f->function_start,
		.file = f->file,
		.line = f->line,
		.column = f->column,
		.discriminator = f->discriminator,
		.inlined = f->inlined,
	};
	return 0;
}

/* Where answer_string() will look for s (t has a table): asked for ahead.
 * (Not under an if: gcc 12 drops a __builtin_prefetch() in a branch of an
 * inlined function like this one, without a word.) */
static inline void prefetch_string(const struct strtab *t, const char *s, unsigned how)
{
	__builtin_prefetch(&t->tab[hash_ptr(s, how) & (t->cap - 1)]);
}

/*
 * The strings of frames [from, b->nframes), lookups' frames still holding
 * the index's, become their answers' (answer_string(): copied once,
 * demangled, measured).  Done apart from the lookups, in one pass in
 * frame order, so that the string table's slots are asked for
 * RESOLVE_AHEAD frames ahead: looked up as each frame came, a slot was a
 * cache miss of its own (python3.11d, 1M addresses: 177k of the lookups
 * went to the table, 73% of that function's time on its first load).
 * Returns the first frame left without its strings (no memory), or
 * b->nframes.
 */
/* A frame's string as the index had it (raw) and as answered. */
struct last_string {
	const char *raw, *val;
	unsigned len;
	bool plain;
};

/* *s (a string of the index) answered: from *last when the frame before
 * had the same pointer, else by answer_string() with how, kept in *last.
 * false: no memory. */
static inline bool string_again(struct ds_sym_batch *b, struct strtab *t, struct last_string *last,
				unsigned how, const char **s, unsigned *len, bool *plain)
{
	if (*s != last->raw) {
		const char *val = answer_string(b, t, *s, how, &last->len, &last->plain);

		if (!val)
			return false;
		last->raw = *s;
		last->val = val;
	}
	*s = last->val;
	*len = last->len;
	*plain = last->plain;
	return true;
}

#define RESOLVE_AHEAD 8
static size_t answer_strings(struct ds_sym_batch *b, size_t from)
{
	struct strtab *t = &b->itab;
	/* The frame before's strings as the index had them, and as
	 * answered: a sorted batch's neighbours are most often in one
	 * function, and one file. */
	struct last_string fn = { 0 }, file = { 0 };

	if (from < b->nframes && !t->cap && !strtab_grow(t))
		return from; /* (the table every string goes through) */
	for (size_t i = from; i < b->nframes; i++) {
		struct ds_frame *f = &b->frames[i];

		if (i + RESOLVE_AHEAD < b->nframes) {
			const struct ds_frame *a = &b->frames[i + RESOLVE_AHEAD];

			/* (Not the one before it: that one's is answered
			 * from the frame before.) */
			if (a->function && a->function != a[-1].function) {
				prefetch_string(t, a->function, DM_NONE);
				if (b->demangle)
					prefetch_string(t, a->function, b->demangle);
			}
			if (a->file && a->file != a[-1].file)
				prefetch_string(t, a->file, DM_NONE);
		}
		if (f->function) {
			unsigned how = b->demangle && f->function != fn.raw &&
						       ds__maybe_mangled(f->function)
					       ? b->demangle
					       : DM_NONE;

			if (!string_again(b, t, &fn, how, &f->function, &f->function_len,
					  &f->function_plain))
				return i;
		}
		if (f->file && !string_again(b, t, &file, DM_NONE, &f->file, &f->file_len,
					     &f->file_plain))
			return i;
	}
	return b->nframes;
}

/* Why a has the answer it has; di_err: why the DSO has no debuginfo (0:
 * it has). */
static inline void answer_reason(struct ds_sym_answer *a, int di_err)
{
	a->debuginfo_error = 0;
	if (a->status == DS_SYM_OUTSIDE) {
		a->reason = DS_SYM_REASON_OUTSIDE;
	} else if (di_err) {
		a->reason = DS_SYM_REASON_NO_DEBUGINFO;
		a->debuginfo_error = di_err;
	} else {
		a->reason = a->status == DS_SYM_FOUND	    ? DS_SYM_REASON_NONE
			    : a->status == DS_SYM_ERROR ? DS_SYM_REASON_ERROR
							: DS_SYM_REASON_NO_SYMBOL;
	}
}

void ds__sym_batch_reasons(struct ds_sym_batch *b, int di_err)
{
	for (size_t i = 0; i < b->n; i++)
		answer_reason(&b->ans[i], di_err);
}

int ds__sym_batch_lookup(struct ds_sym_batch *b, struct ds_symbols *S, unsigned flags, int di_err)
{
	struct ds__find_hint hint = { 0 };
	size_t raw_from, resolved;
	int found = 0;

	b->demangle = !(flags & DS_SYM_DEMANGLE)  ? DM_NONE
		      : flags & DS_SYM_LLVM_NAMES ? DM_LLVM
		      : flags & DS_SYM_NO_PARAMS  ? DM_PERF
						  : DM_GNU;
	/* (S is pinned by the caller: nothing of it is freed until we
	 * return, so the epoch read now holds for every lookup below.) */
	if (b->iuid != S->uid || b->iepoch != atomic_load(&S->strings_epoch) ||
	    b->ibytes > INDEX_STRINGS_MAX) {
		strtab_forget(&b->itab);
		b->istrings.cur = NULL; /* (the answers of earlier calls are done) */
		b->istrings.pos = 0;
		b->iuid = S->uid;
		b->iepoch = atomic_load(&S->strings_epoch);
		b->ibytes = 0;
	}
	/* A frame an answer, most often: room for that many made ready at
	 * once (see POPULATE_MIN), the frames of more grown as they come. */
	if (b->npairs >= b->frames_ready + POPULATE_MIN &&
	    (b->frame_cap >= b->npairs || grow((void **)&b->frames, b->npairs, sizeof(*b->frames)))) {
		if (b->frame_cap < b->npairs)
			b->frame_cap = b->npairs;
		ds__populate(b->frames + b->frames_ready,
			     (b->npairs - b->frames_ready) * sizeof(*b->frames));
		b->frames_ready = b->npairs;
	}
	raw_from = b->nframes;
	for (size_t k = 0; k < b->npairs;) {
		uint64_t v = b->pairs[k].key;
		size_t first = b->nframes, nf;
		bool from_symtab = false;
		struct slot sl;
		int err;

		/* The answers go to input order: scattered stores, each a
		 * cache miss of its own; asked for ahead, they overlap. */
		if (k + PREFETCH_AHEAD < b->npairs)
			__builtin_prefetch(&b->slots[b->pairs[k + PREFETCH_AHEAD].idx], 1);
		err = ds__symbols_find(S, v, flags, &hint, &from_symtab, emit_frame, b);
		nf = b->nframes - first;
		if (!err && (first > UINT32_MAX || nf > SLOT_NFRAMES_MAX))
			err = -ENOMEM; /* (more frames than a slot counts) */
		if (err) { /* an error has no frames */
			b->nframes = first;
			err = err > 0 ? -EIO : err;
			sl = (struct slot){ .first = (uint32_t)-err,
					    .meta = SLOT_SET |
						    (uint32_t)status_of(err) << SLOT_STATUS_SHIFT };
		} else {
			sl = (struct slot){
				.first = nf ? (uint32_t)first : 0,
				.meta = SLOT_SET | (uint32_t)nf | (from_symtab ? SLOT_SYMTAB : 0) |
					(uint32_t)(nf ? DS_SYM_FOUND : DS_SYM_NOT_FOUND)
						<< SLOT_STATUS_SHIFT,
			};
		}
		/* Repeats of v share its frames, and so do the addresses
		 * after it that the same rows and scopes answer. */
		for (; k < b->npairs &&
		       (b->pairs[k].key == v ||
			(!err && b->pairs[k].key > v && b->pairs[k].key < hint.same_until));
		     k++) {
			sl.addr = b->pairs[k].key;
			b->slots[b->pairs[k].idx] = sl;
			found += !err && nf > 0;
		}
	}
	/* The frames have stopped moving: their strings, then the answers,
	 * in order, and their reasons, in one pass.  (A frame left without
	 * its strings, out of memory: its answer says so.) */
	resolved = answer_strings(b, raw_from);
	for (size_t i = 0; i < b->n; i++) {
		struct ds_sym_answer *a = &b->ans[i];
		struct slot sl = b->slots[i];

		if ((sl.meta & SLOT_SET) && (sl.meta & SLOT_NFRAMES_MAX) &&
		    sl.first + (size_t)(sl.meta & SLOT_NFRAMES_MAX) > resolved) {
			sl.first = ENOMEM;
			sl.meta = SLOT_SET | (uint32_t)DS_SYM_ERROR << SLOT_STATUS_SHIFT;
			found--;
		}
		if (sl.meta & SLOT_SET) {
			uint32_t nf = sl.meta & SLOT_NFRAMES_MAX;

			*a = (struct ds_sym_answer){
				.addr = sl.addr,
				.frames = nf ? b->frames + sl.first : NULL,
				.nframes = nf,
				.status = (enum ds_sym_status)(sl.meta >> SLOT_STATUS_SHIFT & 15),
				.error = nf ? 0 : -(int)sl.first,
				.from_symtab = (sl.meta & SLOT_SYMTAB) != 0,
			};
		} else {
			a->frames = NULL; /* (ds__sym_batch_sort()'s answer) */
		}
		answer_reason(a, di_err);
	}
	return found;
}

static bool put_frame(struct ds_sym_batch *b, struct ds_frame f, bool copy)
{
	if (b->nframes == b->frame_cap) {
		size_t cap = b->frame_cap ? 2 * b->frame_cap : 64;

		if (!grow((void **)&b->frames, cap, sizeof(*b->frames)))
			return false;
		b->frame_cap = cap;
	}
	/* (answer_string(): one copy per string, the next by its address) */
	if (copy && f.function &&
	    !(f.function = answer_string(b, &b->calltab, f.function, DM_NONE, &f.function_len,
					 &f.function_plain)))
		return false;
	if (copy && f.file &&
	    !(f.file = answer_string(b, &b->calltab, f.file, DM_NONE, &f.file_len, &f.file_plain)))
		return false;
	b->frames[b->nframes++] = f;
	return true;
}

struct ds_sym_batch *ds__sym_batch_scratch(struct ds_sym_batch *b, const void *key)
{
	struct scratch *pick = NULL;

	for (size_t i = 0; i < SCRATCH_MAX && !pick; i++)
		if (b->scratch[i].b && b->scratch[i].key == key)
			pick = &b->scratch[i];
	if (!pick) {
		/* An empty one, else the one asked least lately: its strings
		 * start anew when it meets another index (iuid). */
		pick = &b->scratch[0];
		for (size_t i = 0; i < SCRATCH_MAX; i++)
			if (!b->scratch[i].b || b->scratch[i].used < pick->used) {
				pick = &b->scratch[i];
				if (!pick->b)
					break;
			}
		if (!pick->b && !(pick->b = ds_sym_batch_new()))
			return NULL;
		pick->key = key;
	}
	pick->used = ++b->scratch_clock;
	return pick->b;
}

void ds__sym_batch_forget(struct ds_sym_batch *b)
{
	strtab_forget(&b->calltab);
	b->last_module = NULL;
}

static int batch_put(struct ds_sym_batch *b, size_t i, const struct ds_sym_answer *a,
		     const char *module, bool copy)
{
	struct ds_sym_answer c = *a;
	size_t first = b->nframes;

	c.frames = NULL;
	c.module = NULL;
	if (first > UINT32_MAX) /* (more frames than a slot counts) */
		goto nomem;
	b->slots[i].first = (uint32_t)first;
	/* Answers of one DSO come in a row: its name copied once. */
	if (module && b->last_module && !strcmp(module, b->last_module))
		c.module = b->last_module;
	else if (module && !(c.module = b->last_module =
				     arena_strdup(&b->strings, module, strlen(module))))
		goto nomem;
	for (uint32_t k = 0; k < a->nframes; k++)
		if (!put_frame(b, a->frames[k], copy))
			goto nomem;
	b->ans[i] = c;
	return 0;
nomem:
	b->nframes = first;
	answer_error(&b->ans[i], a->addr, -ENOMEM);
	b->ans[i].reason = DS_SYM_REASON_ERROR;
	return -ENOMEM;
}

int ds__sym_batch_put(struct ds_sym_batch *b, size_t i, const struct ds_sym_answer *a,
		      const char *module)
{
	return batch_put(b, i, a, module, true);
}

int ds__sym_batch_put_scratch(struct ds_sym_batch *b, size_t i, const struct ds_sym_answer *a,
			      const char *module)
{
	return batch_put(b, i, a, module, false);
}

void ds__sym_batch_done(struct ds_sym_batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		b->ans[i].frames = b->ans[i].nframes ? b->frames + b->slots[i].first : NULL;
}

DS_API const char *ds_sym_reason_name(enum ds_sym_reason r)
{
	switch (r) {
	case DS_SYM_REASON_NONE:
		return "found";
	case DS_SYM_REASON_NO_SYMBOL:
		return "no symbol at this address";
	case DS_SYM_REASON_NO_DEBUGINFO:
		return "no debuginfo";
	case DS_SYM_REASON_OUTSIDE:
		return "outside every loadable segment";
	case DS_SYM_REASON_UNMAPPED:
		return "in no mapping of the process";
	case DS_SYM_REASON_ANON:
		return "anonymous memory";
	case DS_SYM_REASON_NO_BUILD_ID:
		return "no build ID";
	case DS_SYM_REASON_KERNEL:
		return "a kernel address";
	case DS_SYM_REASON_JIT:
		return "JIT code";
	case DS_SYM_REASON_ERROR:
		return "error";
	}
	return "?";
}

/* s copied to *p (moved past it); NULL stays NULL. */
static const char *move_string(char **p, const char *s)
{
	size_t len = s ? strlen(s) + 1 : 0;
	char *to = *p;

	if (!s)
		return NULL;
	memcpy(to, s, len);
	*p += len;
	return to;
}

int ds__sym_result_from(const struct ds_sym_answer *a, struct ds_sym_result *out)
{
	size_t strs = 0, head = a->nframes * sizeof(struct ds_frame);
	char *p;

	*out = (struct ds_sym_result){ .addr = a->addr, .from_symtab = a->from_symtab };
	if (a->error || !a->nframes)
		return a->error;
	for (size_t i = 0; i < a->nframes; i++) {
		strs += a->frames[i].function ? strlen(a->frames[i].function) + 1 : 0;
		strs += a->frames[i].file ? strlen(a->frames[i].file) + 1 : 0;
	}
	/* Frames and strings in one block (frames first: aligned). */
	out->frames = malloc(head + strs);
	if (!out->frames)
		return -ENOMEM;
	memcpy(out->frames, a->frames, head);
	p = (char *)out->frames + head;
	for (size_t i = 0; i < a->nframes; i++) {
		struct ds_frame *f = &out->frames[i];

		f->function = move_string(&p, f->function);
		f->file = move_string(&p, f->file);
	}
	out->nframes = a->nframes;
	return 0;
}

DS_API void ds_sym_result_release(struct ds_sym_result *res)
{
	if (!res)
		return;
	free(res->frames);
	free(res->_strings);
	res->frames = NULL;
	res->_strings = NULL;
	res->nframes = 0;
}

/* ------------------------------------------------------- request lines */

/* A hexadecimal digit's value plus one; 0: no digit. */
static const uint8_t hex_digit[256] = {
	['0'] = 1,  ['1'] = 2,	['2'] = 3,  ['3'] = 4,	['4'] = 5,  ['5'] = 6,	['6'] = 7,
	['7'] = 8,  ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};

static bool parse_hex(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		len -= 2;
	}
	if (!len || len > 16)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned d = hex_digit[(unsigned char)s[i]];

		if (!d)
			return false;
		v = v << 4 | (d - 1);
	}
	*out = v;
	return true;
}

/* The common line, one address alone ("0x" optional, at most 16 digits,
 * then the end or a newline), in one pass; false: anything else, which
 * the general parser below reads (it agrees on these). */
static bool parse_bare_addr(const char *line, size_t len, uint64_t *addr)
{
	size_t i = len > 2 && line[0] == '0' && (line[1] | 0x20) == 'x' ? 2 : 0, from = i;
	uint64_t v = 0;
	unsigned d;

	for (; i < len && (d = hex_digit[(unsigned char)line[i]]); i++)
		v = v << 4 | (d - 1);
	if (i == from || i - from > 16 || (i < len && (i + 1 < len || line[i] != '\n')))
		return false;
	*addr = v;
	return true;
}

static int parse_words(const char *line, size_t len, char *key, size_t keylen,
		       struct ds_build_id *bid, uint64_t *addr);

DS_API int ds_sym_parse_line(const char *line, size_t len, char *key, size_t keylen,
			     struct ds_build_id *bid, uint64_t *addr)
{
	if (!line || !addr)
		return -EINVAL;
	/* (The common line here; the rest in a function of its own, whose
	 * frame a million bare addresses need not set up.) */
	if (parse_bare_addr(line, len, addr))
		return DS_SYM_LINE_ADDR;
	return parse_words(line, len, key, keylen, bid, addr);
}

__attribute__((noinline)) static int parse_words(const char *line, size_t len, char *key,
						 size_t keylen, struct ds_build_id *bid,
						 uint64_t *addr)
{
	const char *word[3];
	size_t wlen[3], n = 0, i = 0;

	/* Up to three words; a third is an error. */
	while (i < len && n < 3) {
		while (i < len && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r' ||
				   line[i] == '\n'))
			i++;
		if (i == len)
			break;
		word[n] = line + i;
		while (i < len && line[i] != ' ' && line[i] != '\t' && line[i] != '\r' &&
		       line[i] != '\n' && line[i] != 0)
			i++;
		if (i < len && line[i] == 0)
			return -EINVAL; /* a NUL inside the line */
		wlen[n] = (size_t)(line + i - word[n]);
		n++;
	}
	if (n == 0)
		return DS_SYM_LINE_EMPTY;
	if (n == 3 || !parse_hex(word[n - 1], wlen[n - 1], addr))
		return -EINVAL;
	if (n == 1)
		return DS_SYM_LINE_ADDR;
	if (!key || wlen[0] >= keylen)
		return -EINVAL;
	memcpy(key, word[0], wlen[0]);
	key[wlen[0]] = 0;
	/* A path has a '/'; a build ID is hex only. */
	if (!memchr(word[0], '/', wlen[0]) && bid && ds_build_id_parse(key, bid) == 0)
		return DS_SYM_LINE_BUILD_ID;
	return DS_SYM_LINE_PATH;
}
