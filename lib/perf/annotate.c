/* SPDX-License-Identifier: MIT */
/*
 * annotate: a profile's samples by function and source line.
 *
 * One pass over the samples (stacks) counts each (event, location) once;
 * then each location with samples is put under its function (event, DSO,
 * start, name) and, within it, under the file:line of its innermost
 * frame.  Three hashed sets, nothing per sample but a probe; the result
 * borrows the profile's strings.
 */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* What the caller gets; every array one allocation of its own. */
struct ds_annotation {
	struct ds_annotate_func *funcs;
	size_t nfuncs;
	struct ds_annotate_line *lines; /* funcs[i].lines point into it */
	/* Per function, its sampled addresses: addrs[addr_at[i]..addr_at[i + 1]). */
	struct ds_annotate_addr *addrs;
	size_t *addr_at;
};

/* A growing array of entries with a hash table over it: slot[] holds
 * index + 1 (0: empty), hash[i] is entry i's. */
struct set {
	char *v;
	size_t n, cap, elem;
	uint64_t *hash;
	uint32_t *slot;
	size_t mask;
};

static void set_release(struct set *s)
{
	free(s->v);
	free(s->hash);
	free(s->slot);
}

static int set_rehash(struct set *s)
{
	size_t n = s->mask ? 2 * (s->mask + 1) : 1024;
	uint32_t *slot = calloc(n, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		size_t h = s->hash[i] & (n - 1);

		while (slot[h])
			h = (h + 1) & (n - 1);
		slot[h] = (uint32_t)(i + 1);
	}
	free(s->slot);
	s->slot = slot;
	s->mask = n - 1;
	return 0;
}

/* The entry with this hash that eq() finds equal to key, or a new one,
 * a copy of key.  NULL when out of memory. */
static void *set_findnew(struct set *s, uint64_t hash, bool (*eq)(const void *, const void *),
			 const void *key)
{
	size_t h;

	if ((2 * (s->n + 1) > s->mask + 1 || !s->slot) && set_rehash(s))
		return NULL;
	for (h = hash & s->mask; s->slot[h]; h = (h + 1) & s->mask) {
		size_t i = s->slot[h] - 1;

		if (s->hash[i] == hash && eq(s->v + i * s->elem, key))
			return s->v + i * s->elem;
	}
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 256;
		char *v = s->n < UINT32_MAX - 1 ? reallocarray(s->v, cap, s->elem) : NULL;
		uint64_t *hv;

		if (!v)
			return NULL;
		s->v = v;
		hv = reallocarray(s->hash, cap, sizeof(*hv));
		if (!hv)
			return NULL;
		s->hash = hv;
		s->cap = cap;
	}
	memcpy(s->v + s->n * s->elem, key, s->elem);
	s->hash[s->n] = hash;
	s->slot[h] = (uint32_t)++s->n;
	return s->v + (s->n - 1) * s->elem;
}

static uint64_t hash_of(const uint64_t *k, size_t n, const char *str)
{
	return XXH3_64bits_withSeed(k, n * sizeof(*k), str ? XXH3_64bits(str, strlen(str)) : 0);
}

/* The samples of one event at one location. */
struct hit {
	unsigned int attr;
	uint32_t loc;
	uint64_t samples, period;
};

/* A line while it is counted: its function's index first. */
struct tline {
	size_t func;
	const char *file;
	unsigned int line;
	uint64_t samples, period;
};

static bool hit_eq(const void *entry, const void *key)
{
	const struct hit *a = entry, *b = key;

	return a->attr == b->attr && a->loc == b->loc;
}

static bool func_eq(const void *entry, const void *key)
{
	const struct ds_annotate_func *a = entry, *b = key;

	return a->attr == b->attr && a->dso == b->dso && a->function_start == b->function_start &&
	       !strcmp(a->function, b->function);
}

static bool line_eq(const void *entry, const void *key)
{
	const struct tline *a = entry, *b = key;

	return a->func == b->func && a->line == b->line &&
	       (a->file == b->file || (a->file && b->file && !strcmp(a->file, b->file)));
}

/* An address while it is counted: its function's index first. */
struct taddr {
	size_t func;
	struct ds_annotate_addr a;
};

struct build {
	const struct ds_profile_loc *locs;
	struct set hits, funcs, lines; /* of struct hit, ds_annotate_func, tline */
	struct taddr *addrs; /* one per hit with a vaddr: merged in finish() */
	size_t naddrs;
};

/* Each (event, location) of the samples once, with their sums. */
static int count_hits(struct build *b, const struct ds_profile_sample *smp, size_t ns)
{
	for (size_t i = 0; i < ns; i++) {
		const struct ds_profile_sample *s = &smp[i];
		struct hit key, *h;

		if (!s->nlocs || !b->locs[s->locs[0]].function)
			continue;
		key = (struct hit){ .attr = s->attr, .loc = s->locs[0] };
		h = set_findnew(&b->hits, hash_of((uint64_t[]){ s->attr, s->locs[0] }, 2, NULL),
				hit_eq, &key);
		if (!h)
			return -ENOMEM;
		h->samples += s->count;
		h->period += s->period;
	}
	return 0;
}

/* Each hit under its function and, in it, its innermost frame's file and
 * line (NULL and 0 where nothing is known) and its address. */
static int group(struct build *b)
{
	b->addrs = calloc(b->hits.n ? b->hits.n : 1, sizeof(*b->addrs));
	if (!b->addrs)
		return -ENOMEM;
	for (size_t i = 0; i < b->hits.n; i++) {
		const struct hit *x = (const struct hit *)b->hits.v + i;
		const struct ds_profile_loc *l = &b->locs[x->loc];
		struct ds_annotate_func fkey = { .attr = x->attr,
						 .dso = l->dso,
						 .function = l->function,
						 .function_start = l->function_start };
		struct ds_annotate_func *f;
		struct tline lkey = { 0 }, *t;

		f = set_findnew(&b->funcs,
				hash_of((uint64_t[]){ x->attr, l->dso, l->function_start }, 3,
					l->function),
				func_eq, &fkey);
		if (!f)
			return -ENOMEM;
		f->samples += x->samples;
		f->period += x->period;
		lkey.func = (size_t)(f - (struct ds_annotate_func *)b->funcs.v);
		lkey.file = l->nframes ? l->frames[0].file : NULL;
		lkey.line = lkey.file ? l->frames[0].line : 0;
		t = set_findnew(&b->lines, hash_of((uint64_t[]){ lkey.func, lkey.line }, 2, lkey.file),
				line_eq, &lkey);
		if (!t)
			return -ENOMEM;
		t->samples += x->samples;
		t->period += x->period;
		if (l->vaddr)
			b->addrs[b->naddrs++] = (struct taddr){ .func = lkey.func,
							       .a = { .vaddr = l->vaddr,
								      .samples = x->samples,
								      .period = x->period } };
	}
	return 0;
}

/* Events in order; within one, the most samples first (then period,
 * name, DSO: a stable order for equal counts).  Sorts indexes. */
static int func_cmp(const void *pa, const void *pb, void *funcs_v)
{
	const struct ds_annotate_func *funcs = funcs_v;
	const struct ds_annotate_func *a = &funcs[*(const size_t *)pa];
	const struct ds_annotate_func *b = &funcs[*(const size_t *)pb];
	int c;

	if (a->attr != b->attr)
		return a->attr < b->attr ? -1 : 1;
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	c = strcmp(a->function, b->function);
	if (c)
		return c;
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return a->function_start < b->function_start ? -1 : a->function_start > b->function_start;
}

/* By function (its rank), file name (unknown last), line. */
static int line_cmp(const void *pa, const void *pb, void *rank_v)
{
	const struct tline *a = pa, *b = pb;
	const size_t *rank = rank_v;
	int c;

	if (rank[a->func] != rank[b->func])
		return rank[a->func] < rank[b->func] ? -1 : 1;
	if (!a->file != !b->file)
		return a->file ? -1 : 1;
	c = a->file ? strcmp(a->file, b->file) : 0;
	if (c)
		return c;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* By function (its rank), address. */
static int addr_cmp(const void *pa, const void *pb, void *rank_v)
{
	const struct taddr *a = pa, *b = pb;
	const size_t *rank = rank_v;

	if (rank[a->func] != rank[b->func])
		return rank[a->func] < rank[b->func] ? -1 : 1;
	return a->a.vaddr < b->a.vaddr ? -1 : a->a.vaddr > b->a.vaddr;
}

/* The addresses by function, each once (two locations of one address,
 * as two mappings of one file give, summed). */
static int finish_addrs(struct build *b, struct ds_annotation *a, const size_t *rank)
{
	size_t n = 0, last = SIZE_MAX;

	a->addrs = calloc(b->naddrs ? b->naddrs : 1, sizeof(*a->addrs));
	a->addr_at = calloc(a->nfuncs + 1, sizeof(*a->addr_at));
	if (!a->addrs || !a->addr_at)
		return -ENOMEM;
	qsort_r(b->addrs, b->naddrs, sizeof(*b->addrs), addr_cmp, (void *)rank);
	for (size_t i = 0; i < b->naddrs; i++) {
		const struct taddr *t = &b->addrs[i];
		size_t r = rank[t->func];

		if (r == last && a->addrs[n - 1].vaddr == t->a.vaddr) {
			a->addrs[n - 1].samples += t->a.samples;
			a->addrs[n - 1].period += t->a.period;
			continue;
		}
		a->addrs[n++] = t->a;
		a->addr_at[r + 1]++; /* counts, summed below */
		last = r;
	}
	for (size_t f = 1; f <= a->nfuncs; f++)
		a->addr_at[f] += a->addr_at[f - 1];
	return 0;
}

/* The functions in their order, each with its slice of the lines. */
static int finish(struct build *b, struct ds_annotation *a)
{
	const struct ds_annotate_func *funcs = (const struct ds_annotate_func *)b->funcs.v;
	struct tline *tl = (struct tline *)b->lines.v;
	size_t nf = b->funcs.n, nl = b->lines.n;
	size_t *order = calloc(nf ? nf : 1, sizeof(*order)), *rank = calloc(nf ? nf : 1, sizeof(*rank));
	int err = -ENOMEM;

	a->funcs = calloc(nf ? nf : 1, sizeof(*a->funcs));
	a->lines = calloc(nl ? nl : 1, sizeof(*a->lines));
	if (!order || !rank || !a->funcs || !a->lines)
		goto out;
	for (size_t i = 0; i < nf; i++)
		order[i] = i;
	qsort_r(order, nf, sizeof(*order), func_cmp, (void *)funcs);
	for (size_t i = 0; i < nf; i++) {
		rank[order[i]] = i;
		a->funcs[i] = funcs[order[i]];
	}
	a->nfuncs = nf;
	qsort_r(tl, nl, sizeof(*tl), line_cmp, rank);
	for (size_t i = 0; i < nl; i++) {
		struct ds_annotate_func *f = &a->funcs[rank[tl[i].func]];

		a->lines[i] = (struct ds_annotate_line){ .file = tl[i].file,
							 .line = tl[i].line,
							 .samples = tl[i].samples,
							 .period = tl[i].period };
		if (!f->nlines)
			f->lines = &a->lines[i];
		f->nlines++;
	}
	err = finish_addrs(b, a, rank);
out:
	free(order);
	free(rank);
	return err;
}

DS_API struct ds_annotation *ds_profile_annotate(const struct ds_profile *p)
{
	const struct ds_profile_sample *smp;
	struct build b = { .hits.elem = sizeof(struct hit),
			   .funcs.elem = sizeof(struct ds_annotate_func),
			   .lines.elem = sizeof(struct tline) };
	struct ds_annotation *a = NULL;
	size_t ns;
	int err = -EINVAL;

	if (!p)
		goto out;
	ns = ds_profile_samples(p, &smp);
	ds_profile_locs(p, &b.locs);
	err = -ENOMEM;
	a = calloc(1, sizeof(*a));
	if (!a)
		goto out;
	err = count_hits(&b, smp, ns);
	if (!err)
		err = group(&b);
	if (!err)
		err = finish(&b, a);
out:
	set_release(&b.hits);
	set_release(&b.funcs);
	set_release(&b.lines);
	free(b.addrs);
	if (err) {
		ds_annotation_free(a);
		errno = -err;
		return NULL;
	}
	return a;
}

DS_API size_t ds_annotation_funcs(const struct ds_annotation *a,
				  const struct ds_annotate_func **out)
{
	*out = a ? a->funcs : NULL;
	return a ? a->nfuncs : 0;
}

DS_API void ds_annotation_free(struct ds_annotation *a)
{
	if (!a)
		return;
	free(a->funcs);
	free(a->lines);
	free(a->addrs);
	free(a->addr_at);
	free(a);
}

DS_API size_t ds_annotation_addrs(const struct ds_annotation *a, size_t func,
				  const struct ds_annotate_addr **out)
{
	if (!a || func >= a->nfuncs) {
		*out = NULL;
		return 0;
	}
	*out = a->addrs + a->addr_at[func];
	return a->addr_at[func + 1] - a->addr_at[func];
}
