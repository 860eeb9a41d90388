// SPDX-License-Identifier: MIT
/*
 * perf report's tables (util/hist.c, util/sort.c), made from a profile:
 * the samples of one event become sites, one per (DSO, address, level,
 * thread name when a key), and in children mode one more per caller
 * entry; sites become rows by hashing the numbers their keys compare
 * (interned strings, function starts), and rows are sorted in perf's
 * order.  Nothing is stored per callchain entry: the Children periods,
 * and ds_table_row_of(), find a stack's sites again by hashing.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 8

/* Strings by their text, each a number: what rows are told apart by
 * (thread names, DSO names, srclines).  Not copied: they outlive the
 * table. */
struct names {
	struct nslot {
		const char *s;
		uint64_t hash;
		uint32_t id;
	} *v;
	size_t n, cap; /* cap: a power of two, or 0 */
};

/* An inline chain: the location's frames, and them as one string, what
 * makes two chains one. */
struct chain {
	const struct ds_frame *f;
	size_t n;
	char *key;
};

/* What one address of a DSO is, shared by the sites at that address. */
struct loc {
	char *srcline; /* perf's srcline, with DS_SORT_SRCLINE */
	uint32_t srcline_id;
	struct chain *chain; /* DS_TABLE_INLINES, in inlined code; else NULL */
};

/* The samples at one address: what the recording adds up. */
struct site {
	/* The profile's location: one per (DSO, address).  A big recording
	 * has a million sites; this is kept to 56 bytes. */
	uint32_t li;
	int32_t pid; /* for perf's ":PID" when there is no name */
	const char *comm; /* with DS_SORT_COMM or _PID; NULL: none */
	uint64_t raw_ip;
	uint64_t samples, period;
	uint32_t entry; /* its row, before the sort */
	char level;
	/* A callchain entry's site: perf shows an unnamed one at its raw
	 * address, not its file offset, so it is its own row. */
	bool caller;
	int32_t tid; /* with DS_SORT_PID; else 0 */
};

struct ds_table {
	const struct ds_profile *prof;
	unsigned int attr, flags;
	size_t max_stack; /* perf's --max-stack; SIZE_MAX: every entry */
	enum ds_sort_key keys[MAX_KEYS];
	size_t nkeys;
	bool by_comm, by_tid, srcline;
	bool (*keep)(void *, const struct ds_profile *, const struct ds_profile_sample *);
	void *keep_user;
	struct names names;
	uint32_t *dso_name_id; /* per DSO */
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	const struct ds_profile_loc *pl;
	size_t npl;
	const struct ds_profile_sample *ps;
	size_t nps;
	struct loc *locs; /* per location; NULL: none needed */
	struct site *sites;
	size_t nsites, cap;
	uint32_t *slots; /* index + 1, 0 empty */
	size_t nslots;
	uint64_t total_samples, total_period;
	struct ds_table_row *rows;
	size_t nrows;
	uint32_t *pos; /* per row before the sort: its index after */
	char *levels; /* the levels of stack lv_stack's callers */
	size_t nlevels, lv_stack;
	char lv_dup;
};

static char level_of(uint16_t cpumode)
{
	switch (cpumode) {
	case 1:
		return 'k';
	case 2:
		return '.';
	case 4:
		return 'g';
	case 5:
		return 'u';
	default:
		return 'H';
	}
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h ^ (h >> 29);
}

/* The number of s; UINT32_MAX when out of memory. */
static uint32_t names_id(struct names *t, const char *s)
{
	uint64_t h = str_hash(s);
	size_t i;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct nslot *v = calloc(cap, sizeof(*v));

		if (!v)
			return UINT32_MAX;
		for (size_t k = 0; k < t->cap; k++) {
			if (!t->v[k].s)
				continue;
			for (i = t->v[k].hash & (cap - 1); v[i].s; i = (i + 1) & (cap - 1))
				;
			v[i] = t->v[k];
		}
		free(t->v);
		t->v = v;
		t->cap = cap;
	}
	for (i = h & (t->cap - 1); t->v[i].s; i = (i + 1) & (t->cap - 1))
		if (t->v[i].hash == h && !strcmp(t->v[i].s, s))
			return t->v[i].id;
	t->v[i] = (struct nslot){ .s = s, .hash = h, .id = (uint32_t)t->n++ };
	return t->v[i].id;
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* perf's srcline (util/srcline.c): the base name of the innermost frame's
 * file and its line; without a file, "SYM+OFFSET" (decimal) or "DSO[ADDR]".
 * A known file with line 0 is "FILE:0": perf 6.1 without libbfd reads
 * addr2line's "FILE:?" (a line-table row of line 0, as Rust and clang
 * emit) through filename_split(), which takes only "??:0" for unknown and
 * strtoul("?") for the line, so srcline_from_fileline() prints "FILE:0",
 * one row for all of the function's line-0 addresses. */
static char *srcline_of(const char *file, unsigned line, const char *sym, uint64_t sym_off,
			const char *dso_name, uint64_t vaddr)
{
	char *s;
	int n;

	if (file)
		n = asprintf(&s, "%s:%u", basename_of(file), line);
	else if (sym)
		n = asprintf(&s, "%s+%" PRIu64, sym, sym_off);
	else
		n = asprintf(&s, "%s[%" PRIx64 "]", dso_name, vaddr);
	return n < 0 ? NULL : s;
}

static void chain_free(struct chain *c)
{
	if (!c)
		return;
	free(c->key);
	free(c);
}

/* The location's inline chain; *c NULL when not in inlined code. */
static int chain_of(const struct ds_profile_loc *pl, struct chain **c)
{
	char *key = NULL;
	size_t klen = 0;
	FILE *f;

	*c = NULL;
	if (pl->nframes < 2)
		return 0;
	f = open_memstream(&key, &klen);
	if (!f)
		return -ENOMEM;
	for (size_t i = 0; i < pl->nframes; i++) {
		const struct ds_frame *fr = &pl->frames[i];

		fprintf(f, "%s\t%s\t%u\n", fr->function ? fr->function : "??",
			fr->file ? fr->file : "??", fr->line);
	}
	if (fclose(f) || !(*c = calloc(1, sizeof(**c)))) {
		free(key);
		return -ENOMEM;
	}
	**c = (struct chain){ .f = pl->frames, .n = pl->nframes, .key = key };
	return 0;
}

/* The per-location strings the keys need: srcline and inline chains only
 * when asked for (they are what needs DWARF). */
static int locs_of(struct ds_table *t)
{
	bool inlines = t->flags & DS_TABLE_INLINES;

	t->dso_name_id = calloc(t->ndsos ? t->ndsos : 1, sizeof(*t->dso_name_id));
	if (!t->dso_name_id)
		return -ENOMEM;
	for (size_t i = 0; i < t->ndsos; i++)
		if ((t->dso_name_id[i] = names_id(&t->names, ds_profile_dso_name(t->prof, i))) ==
		    UINT32_MAX)
			return -ENOMEM;
	if (!t->srcline && !inlines)
		return 0;
	t->locs = calloc(t->npl ? t->npl : 1, sizeof(*t->locs));
	if (!t->locs)
		return -ENOMEM;
	for (size_t i = 0; i < t->npl; i++) {
		const struct ds_profile_loc *pl = &t->pl[i];
		struct loc *l = &t->locs[i];
		const struct ds_frame *in = pl->nframes ? &pl->frames[0] : NULL;
		/* No DSO, or one that could not be read: the address as given. */
		uint64_t vaddr = pl->vaddr ? pl->vaddr : pl->ip;

		if (t->srcline) {
			if (pl->dso == SIZE_MAX)
				l->srcline = strdup("??:0"); /* perf's SRCLINE_UNKNOWN */
			else
				l->srcline = srcline_of(in ? in->file : NULL, in ? in->line : 0,
							pl->function, vaddr - pl->function_start,
							ds_profile_dso_name(t->prof, pl->dso), vaddr);
			if (!l->srcline ||
			    (l->srcline_id = names_id(&t->names, l->srcline)) == UINT32_MAX)
				return -ENOMEM;
		}
		if (inlines && chain_of(pl, &l->chain))
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------- sites */

static size_t site_hash(const struct site *s)
{
	uint64_t h = s->raw_ip * 0x9e3779b97f4a7c15ull ^ (uintptr_t)s->comm;

	h ^= ((uint64_t)s->li * 0xff51afd7ed558ccdull) ^ ((uint64_t)(uint32_t)s->pid << 32) ^
	     (uint8_t)s->level ^ ((uint64_t)s->caller << 8) ^ ((uint64_t)(uint32_t)s->tid << 12);
	h ^= h >> 29;
	return (size_t)(h * 0xc4ceb9fe1a85ec53ull);
}

static int sites_rehash(struct ds_table *t)
{
	size_t n = t->nslots ? 2 * t->nslots : 1024;
	uint32_t *slots;

	if (n > UINT32_MAX || !(slots = calloc(n, sizeof(*slots))))
		return -ENOMEM;
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	for (size_t i = 0; i < t->nsites; i++) {
		const struct site *s = &t->sites[i];
		size_t h = site_hash(s) & (n - 1);

		while (t->slots[h])
			h = (h + 1) & (n - 1);
		t->slots[h] = (uint32_t)(i + 1);
	}
	return 0;
}

/* The site of (DSO, address, level, thread) and, for a caller, its raw
 * address: made when `make`, else NULL when there is none. */
static struct site *site_get(struct ds_table *t, const struct site *want, bool make)
{
	size_t h;

	if (make && 2 * (t->nsites + 1) > t->nslots && sites_rehash(t))
		return NULL;
	if (!t->nslots)
		return NULL;
	h = site_hash(want) & (t->nslots - 1);
	for (; t->slots[h]; h = (h + 1) & (t->nslots - 1)) {
		struct site *s = &t->sites[t->slots[h] - 1];

		if (s->li == want->li && s->level == want->level && s->comm == want->comm &&
		    s->pid == want->pid && s->caller == want->caller && s->raw_ip == want->raw_ip &&
		    s->tid == want->tid)
			return s;
	}
	if (!make)
		return NULL;
	if (t->nsites == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		struct site *v = reallocarray(t->sites, cap, sizeof(*v));

		if (!v)
			return NULL;
		t->sites = v;
		t->cap = cap;
	}
	t->sites[t->nsites] = *want;
	t->slots[h] = (uint32_t)++t->nsites;
	return &t->sites[t->nsites - 1];
}

/* A caller's level: its DSO's, kernel or user; with no map, perf keeps the
 * level of the entry it filled before, walking from the outermost caller
 * (-g callee: from the sample), starting with the sample's.  Into
 * levels[1..nlocs); returns the level of the callchain's own copy of the
 * sampled address (see stack_site()). */
static char caller_levels(const struct ds_table *t, const struct ds_profile_sample *ps,
			  char *levels)
{
	char cur = level_of(ps->cpumodes[0]), dup = cur;
	bool callee = t->flags & DS_TABLE_CALLEE;

	for (size_t j = 0; j < ps->nlocs; j++) {
		size_t i = callee ? j : ps->nlocs - 1 - j, d = t->pl[ps->locs[i]].dso;

		if (d < t->ndsos)
			cur = t->dsos[d].kernel ? 'k' : '.';
		if (i)
			levels[i] = cur;
		else
			dup = cur;
	}
	return dup;
}

static int levels_room(struct ds_table *t, size_t n)
{
	char *v;

	if (n <= t->nlevels)
		return 0;
	v = realloc(t->levels, n);
	if (!v)
		return -ENOMEM;
	t->levels = v;
	t->nlevels = n;
	return 0;
}

/* The site of element i of stack p (levels: its callers', from
 * caller_levels()).  i == nlocs: the callchain's first entry, the sampled
 * address again (the profile leaves it out): perf makes it a caller entry
 * of its own, which shows an unnamed address raw, not as the file offset
 * the sample's row shows. */
static struct site *stack_site(struct ds_table *t, const struct ds_profile_sample *p, size_t i,
			       const char *levels, char dup_level, bool make)
{
	bool named = t->by_comm || t->by_tid;
	struct site want = { .li = p->locs[i < p->nlocs ? i : 0],
			     .comm = named ? p->comm : NULL,
			     .pid = (named && !p->comm) || t->by_tid ? p->pid : 0,
			     .tid = t->by_tid ? p->tid : 0 };

	if (!i) {
		want.level = level_of(p->cpumodes[0]);
	} else {
		want.caller = true;
		want.level = i == p->nlocs ? dup_level : levels[i];
		want.raw_ip = p->ips[i == p->nlocs ? 0 : i];
	}
	return site_get(t, &want, make);
}

/* Whether --max-stack keeps the site of element i of stack p, as
 * stack_site() numbers them (nlocs: the callchain's first entry). */
static bool site_kept(const struct ds_table *t, const struct ds_profile_sample *p, size_t i)
{
	return ds_profile_frame_kept(p, i == p->nlocs ? 0 : i, t->max_stack,
				     !(t->flags & DS_TABLE_CALLEE));
}

/* Whether the filters (ds_table_opts keep) leave stack p in the rows. */
static bool kept(const struct ds_table *t, const struct ds_profile_sample *p)
{
	return !t->keep || t->keep(t->keep_user, t->prof, p);
}

/* The sites of the event's stacks: each sample's own and, with children,
 * its callers'. */
static int collect(struct ds_table *t)
{
	for (size_t k = 0; k < t->nps; k++) {
		const struct ds_profile_sample *p = &t->ps[k];
		struct site *s;

		if (p->attr != t->attr)
			continue;
		t->total_samples += p->count;
		t->total_period += p->period;
		if (!kept(t, p))
			continue;
		if (!(s = stack_site(t, p, 0, NULL, 0, true)))
			return -ENOMEM;
		s->samples += p->count;
		s->period += p->period;
		if ((t->flags & DS_TABLE_CHILDREN) && p->callchain) {
			char dup;

			if (levels_room(t, p->nlocs))
				return -ENOMEM;
			dup = caller_levels(t, p, t->levels);
			for (size_t i = 1; i < p->nlocs + p->leaf_in_callchain; i++)
				if (site_kept(t, p, i) &&
				    !stack_site(t, p, i, t->levels, dup, true))
					return -ENOMEM;
		}
	}
	return 0;
}

/* -------------------------------------------------------------- rows */

static int str_cmp_null_last(const char *a, const char *b)
{
	if (a == b) /* the same string (the profile's names are interned) */
		return 0;
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

/* A row while the sites are gathered: its first site (what it shows)
 * and its sums.  The public rows are made once, sorted, at the end. */
struct agg {
	const struct site *s;
	uint64_t samples, period, children;
	struct ds_table_inline *inlines;
	size_t ninlines;
};

static const struct ds_profile_loc *pl_of(const struct ds_table *t, const struct site *s)
{
	return &t->pl[s->li];
}

/* NULL unless srcline or chains are wanted. */
static const struct loc *loc_of(const struct ds_table *t, const struct site *s)
{
	return t->locs ? &t->locs[s->li] : NULL;
}

static const char *dso_name_of(const struct ds_table *t, const struct site *s)
{
	size_t dso = pl_of(t, s)->dso;

	return dso == SIZE_MAX ? NULL : ds_profile_dso_name(t->prof, dso);
}

/* The address perf shows for an unnamed site: the location's (a file
 * offset; kernel, no map: the address), a caller's raw address. */
static uint64_t shown_ip(const struct ds_table *t, const struct site *s)
{
	return s->caller ? s->raw_ip : pl_of(t, s)->ip;
}

/* perf's comm column: the thread's name, ":PID" when it has none. */
static int comm_cmp(const struct site *a, const struct site *b)
{
	char x[16], y[16];

	if (!a->comm)
		snprintf(x, sizeof(x), ":%d", a->pid);
	if (!b->comm)
		snprintf(y, sizeof(y), ":%d", b->pid);
	return strcmp(a->comm ? a->comm : x, b->comm ? b->comm : y);
}

/* perf's pid key (sort__thread_cmp()): the thread's number, ascending. */
static int tid_cmp(const struct site *a, const struct site *b)
{
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* perf's se_cmp of one key: ascending names, then addresses. */
static int identity_cmp(const struct ds_table *t, const struct site *a, const struct site *b,
			enum ds_sort_key k)
{
	int c;

	switch (k) {
	case DS_SORT_COMM:
		return comm_cmp(a, b);
	case DS_SORT_PID:
		return tid_cmp(a, b);
	case DS_SORT_DSO:
		return str_cmp_null_last(dso_name_of(t, a), dso_name_of(t, b));
	case DS_SORT_SYM: {
		const struct ds_profile_loc *x = pl_of(t, a), *y = pl_of(t, b);

		if (!x->function != !y->function)
			return x->function ? -1 : 1;
		/* perf's sort__sym_cmp(): two unnamed addresses by the address
		 * alone, whatever their DSOs (a dso key before tells them
		 * apart) */
		if (!x->function)
			return shown_ip(t, a) < shown_ip(t, b) ? -1 : shown_ip(t, a) > shown_ip(t, b);
		c = str_cmp_null_last(dso_name_of(t, a), dso_name_of(t, b));
		if (c)
			return c;
		if (x->function_start != y->function_start)
			return x->function_start < y->function_start ? -1 : 1;
		return strcmp(x->function, y->function);
	}
	case DS_SORT_SRCLINE:
		return strcmp(loc_of(t, a)->srcline, loc_of(t, b)->srcline);
	}
	return 0;
}

/* perf's output order (hists__output_resort()): the period, descending,
 * then each key's se_sort (se_cmp when it has none): DSO and symbol names
 * ascending, entries with a name before those without. */
static int agg_order(const void *x, const void *y, void *arg)
{
	const struct agg *a = x, *b = y;
	const struct ds_table *t = arg;

	/* --children: perf sorts by the children's share, then the self one. */
	if ((t->flags & DS_TABLE_CHILDREN) && a->children != b->children)
		return a->children > b->children ? -1 : 1;
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	for (size_t i = 0; i < t->nkeys; i++) {
		int c = 0;

		switch (t->keys[i]) {
		case DS_SORT_COMM:
			c = comm_cmp(a->s, b->s);
			break;
		case DS_SORT_PID:
			c = tid_cmp(a->s, b->s);
			break;
		case DS_SORT_DSO:
			c = str_cmp_null_last(dso_name_of(t, a->s), dso_name_of(t, b->s));
			break;
		case DS_SORT_SYM:
			c = str_cmp_null_last(pl_of(t, a->s)->function, pl_of(t, b->s)->function);
			break;
		case DS_SORT_SRCLINE:
			c = strcmp(loc_of(t, a->s)->srcline, loc_of(t, b->s)->srcline);
			break;
		}
		if (c)
			return c;
	}
	for (size_t i = 0; i < t->nkeys; i++) {
		int c = identity_cmp(t, a->s, b->s, t->keys[i]);

		if (c)
			return c;
	}
	return 0;
}

/* How many numbers a site's key has: what identity_cmp() compares, as
 * numbers (key_of()). */
static size_t key_len(const struct ds_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->nkeys; i++)
		n += t->keys[i] == DS_SORT_SYM ? 3 : 1;
	return n;
}

/* The numbers that tell a site's row apart, into v[key_len()]: two sites
 * are one row exactly when they are equal.  -ENOMEM from interning a
 * name. */
static int key_of(struct ds_table *t, const struct site *s, uint64_t *v)
{
	const struct ds_profile_loc *pl = pl_of(t, s);
	uint64_t dso = pl->dso == SIZE_MAX ? UINT64_MAX : t->dso_name_id[pl->dso];
	size_t n = 0;

	for (size_t i = 0; i < t->nkeys; i++) {
		switch (t->keys[i]) {
		case DS_SORT_COMM:
			if (s->comm) {
				uint32_t id = names_id(&t->names, s->comm);

				if (id == UINT32_MAX)
					return -ENOMEM;
				v[n++] = id;
			} else {
				v[n++] = (1ull << 63) | (uint32_t)s->pid;
			}
			break;
		case DS_SORT_PID:
			v[n++] = (uint32_t)s->tid;
			break;
		case DS_SORT_DSO:
			v[n++] = dso;
			break;
		case DS_SORT_SYM:
			v[n++] = dso;
			if (pl->function) {
				v[n++] = pl->function_start;
				/* One name, one string: the profile interns them. */
				v[n++] = (uintptr_t)pl->function;
			} else {
				v[n++] = shown_ip(t, s);
				v[n++] = 0;
			}
			break;
		case DS_SORT_SRCLINE:
			v[n++] = loc_of(t, s)->srcline_id;
			break;
		}
	}
	return 0;
}

static uint64_t key_hash(const uint64_t *v, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (size_t i = 0; i < n; i++) {
		h ^= v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xff51afd7ed558ccdull;
	}
	return h ^ (h >> 31);
}

/* A chain's samples while a row's are gathered: the chain's text sorts
 * them and tells equal chains apart. */
struct cref {
	const struct chain *c;
	uint64_t samples, period;
};

static int cref_by_key(const void *x, const void *y)
{
	const struct cref *a = x, *b = y;

	return strcmp(a->c->key, b->c->key);
}

static int cref_by_period(const void *x, const void *y)
{
	const struct cref *a = x, *b = y;

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return strcmp(a->c->key, b->c->key);
}

/* The row's inline chains from its sites (v, n): merged by their text,
 * heaviest first. */
static int row_chains(const struct ds_table *t, struct agg *r, struct site **v, size_t n)
{
	struct cref *c;
	struct ds_table_inline *in;
	size_t m = 0, k = 0;

	for (size_t i = 0; i < n; i++)
		if (loc_of(t, v[i])->chain)
			m++;
	if (!m)
		return 0;
	c = calloc(m, sizeof(*c));
	if (!c)
		return -ENOMEM;
	m = 0;
	for (size_t i = 0; i < n; i++)
		if (loc_of(t, v[i])->chain)
			c[m++] = (struct cref){ loc_of(t, v[i])->chain, v[i]->samples,
						v[i]->period };
	qsort(c, m, sizeof(*c), cref_by_key);
	for (size_t i = 0; i < m; i++) {
		if (k && !strcmp(c[k - 1].c->key, c[i].c->key)) {
			c[k - 1].samples += c[i].samples;
			c[k - 1].period += c[i].period;
		} else {
			c[k++] = c[i];
		}
	}
	qsort(c, k, sizeof(*c), cref_by_period);
	in = calloc(k, sizeof(*in));
	if (!in) {
		free(c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k; i++)
		in[i] = (struct ds_table_inline){ .samples = c[i].samples,
						  .period = c[i].period,
						  .nframes = c[i].c->n,
						  .frames = c[i].c->f };
	free(c);
	r->inlines = in;
	r->ninlines = k;
	return 0;
}

/* The inline chains of every row: the sites gathered by row (a counting
 * sort), each row's merged. */
static int rows_chains(struct ds_table *t, struct agg *rows, size_t ne)
{
	size_t n = t->nsites, *at = calloc(ne + 1, sizeof(*at));
	struct site **by = calloc(n ? n : 1, sizeof(*by));
	int rc = 0;

	if (!at || !by) {
		free(at);
		free(by);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		at[t->sites[i].entry + 1]++;
	for (size_t i = 0; i < ne; i++)
		at[i + 1] += at[i];
	for (size_t i = 0; i < n; i++)
		by[at[t->sites[i].entry]++] = &t->sites[i];
	for (size_t i = ne; i-- > 0;)
		at[i + 1] = at[i];
	at[0] = 0;
	for (size_t i = 0; !rc && i < ne; i++)
		rc = row_chains(t, &rows[i], by + at[i], at[i + 1] - at[i]);
	free(by);
	free(at);
	return rc;
}

/* perf's --children: each row gets the period of every sample whose
 * address or callchain passes through it, once per sample (recursion
 * counts once). */
static int add_children(struct ds_table *t, struct agg *rows, size_t nrows)
{
	size_t *stamp = calloc(nrows ? nrows : 1, sizeof(*stamp));

	if (!stamp)
		return -ENOMEM;
	for (size_t k = 0; k < t->nps; k++) {
		const struct ds_profile_sample *p = &t->ps[k];
		char dup;

		if (p->attr != t->attr || !kept(t, p))
			continue;
		if (levels_room(t, p->nlocs)) {
			free(stamp);
			return -ENOMEM;
		}
		dup = caller_levels(t, p, t->levels);
		for (size_t i = 0; i < p->nlocs + p->leaf_in_callchain; i++) {
			const struct site *s = i && !site_kept(t, p, i)
						       ? NULL
						       : stack_site(t, p, i, t->levels, dup, false);

			/* Without a callchain the callers have no site. */
			if (s && stamp[s->entry] != k + 1) {
				stamp[s->entry] = k + 1;
				rows[s->entry].children += p->period;
			}
		}
	}
	free(stamp);
	return 0;
}

/* Sites made rows by hashing their keys (kept only while they are made),
 * their inline chains and Children periods added, sorted, and made the
 * public rows. */
static int rows_of(struct ds_table *t)
{
	size_t n = t->nsites, kl = key_len(t), ne = 0, cap = 16, acap = 0;
	struct agg *rows = NULL;
	uint64_t *keys = NULL;
	uint32_t *slots = NULL;
	int rc = -ENOMEM;

	if (n > UINT32_MAX - 1)
		goto out;
	while (cap < 2 * n)
		cap *= 2;
	if (!(slots = calloc(cap, sizeof(*slots))))
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct site *s = &t->sites[i];
		uint64_t k[3 * MAX_KEYS];
		size_t h;

		if (key_of(t, s, k))
			goto out;
		for (h = key_hash(k, kl) & (cap - 1); slots[h]; h = (h + 1) & (cap - 1))
			if (!memcmp(&keys[(size_t)(slots[h] - 1) * kl], k, kl * sizeof(*k)))
				break;
		if (!slots[h]) {
			void *v;

			if (ne == acap) {
				/* both grow together, keys by kl numbers a row */
				size_t c = acap;

				if (!(v = ds__grow(rows, &c, ne, sizeof(*rows))))
					goto out;
				rows = v;
				if (!(v = reallocarray(keys, c, kl * sizeof(*keys))))
					goto out;
				keys = v;
				acap = c;
			}
			memcpy(&keys[ne * kl], k, kl * sizeof(*k));
			rows[ne] = (struct agg){ .s = s };
			slots[h] = (uint32_t)++ne;
		}
		s->entry = slots[h] - 1;
		rows[s->entry].samples += s->samples;
		rows[s->entry].period += s->period;
	}
	free(slots);
	slots = NULL;
	free(keys);
	keys = NULL;
	if ((t->flags & DS_TABLE_INLINES) && (rc = rows_chains(t, rows, ne)))
		goto out;
	rc = -ENOMEM;
	if ((t->flags & DS_TABLE_CHILDREN) && add_children(t, rows, ne))
		goto out;
	/* The sort moves the rows: where each went is remembered through the
	 * first site, whose entry is the row's old index. */
	if (!(t->pos = calloc(ne ? ne : 1, sizeof(*t->pos))) ||
	    !(t->rows = calloc(ne ? ne : 1, sizeof(*t->rows))))
		goto out;
	if (ne > 1) /* (qsort's base may not be NULL, even for 0) */
		qsort_r(rows, ne, sizeof(*rows), agg_order, t);
	for (size_t i = 0; i < ne; i++) {
		const struct site *s = rows[i].s;
		const struct ds_profile_loc *pl = pl_of(t, s);

		t->pos[s->entry] = (uint32_t)i;
		t->rows[i] = (struct ds_table_row){ .samples = rows[i].samples,
						    .period = rows[i].period,
						    .children = rows[i].children,
						    .dso = pl->dso,
						    .dso_name = dso_name_of(t, s),
						    .level = s->level,
						    .function = pl->function,
						    .function_start = pl->function_start,
						    .ip = shown_ip(t, s),
						    .srcline = loc_of(t, s) ? loc_of(t, s)->srcline : NULL,
						    .comm = s->comm,
						    .pid = s->pid,
						    .tid = s->tid,
						    .ninlines = rows[i].ninlines,
						    .inlines = rows[i].inlines };
		rows[i].inlines = NULL;
	}
	t->nrows = ne;
	rc = 0;
out:
	for (size_t i = 0; rows && i < ne; i++)
		free(rows[i].inlines);
	free(rows);
	free(keys);
	free(slots);
	return rc;
}

/* ------------------------------------------------------------- the API */

DS_API void ds_table_free(struct ds_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->locs && i < t->npl; i++) {
		free(t->locs[i].srcline);
		chain_free(t->locs[i].chain);
	}
	for (size_t i = 0; t->rows && i < t->nrows; i++)
		free((void *)t->rows[i].inlines);
	free(t->rows);
	free(t->pos);
	free(t->locs);
	free(t->names.v);
	free(t->dso_name_id);
	free(t->sites);
	free(t->slots);
	free(t->levels);
	free(t);
}

DS_API struct ds_table *ds_table_new(const struct ds_profile *p, unsigned int attr,
				     const struct ds_table_opts *opts)
{
	static const enum ds_sort_key dflt[] = { DS_SORT_DSO, DS_SORT_SYM };
	const enum ds_sort_key *keys = DS_OPT(opts, keys, NULL);
	size_t nkeys = keys ? DS_OPT(opts, nkeys, 0) : 2;
	struct ds_table *t;
	int rc;

	if (!keys)
		keys = dflt;
	if (!p || !nkeys || nkeys > MAX_KEYS) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < nkeys; i++)
		if ((unsigned)keys[i] > DS_SORT_PID) {
			errno = EINVAL;
			return NULL;
		}
	t = calloc(1, sizeof(*t));
	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->prof = p;
	t->attr = attr;
	t->flags = DS_OPT(opts, flags, 0);
	t->keep = DS_OPT(opts, keep, NULL);
	t->keep_user = DS_OPT(opts, keep_user, NULL);
	t->max_stack = t->flags & DS_TABLE_MAX_STACK ? DS_OPT(opts, max_stack, 0) : SIZE_MAX;
	t->nkeys = nkeys;
	memcpy(t->keys, keys, nkeys * sizeof(*keys));
	for (size_t i = 0; i < nkeys; i++) {
		t->by_comm |= keys[i] == DS_SORT_COMM;
		t->by_tid |= keys[i] == DS_SORT_PID;
		t->srcline |= keys[i] == DS_SORT_SRCLINE;
	}
	t->ndsos = ds_perf_session_dsos(ds_profile_session(p), &t->dsos);
	t->npl = ds_profile_locs(p, &t->pl);
	t->nps = ds_profile_samples(p, &t->ps);
	t->lv_stack = SIZE_MAX;
	rc = locs_of(t);
	if (!rc)
		rc = collect(t);
	if (!rc)
		rc = rows_of(t);
	if (rc) {
		ds_table_free(t);
		errno = -rc;
		return NULL;
	}
	return t;
}

DS_API size_t ds_table_rows(const struct ds_table *t, const struct ds_table_row **out)
{
	*out = t->rows;
	return t->nrows;
}

DS_API void ds_table_total(const struct ds_table *t, uint64_t *samples, uint64_t *period)
{
	if (samples)
		*samples = t->total_samples;
	if (period)
		*period = t->total_period;
}

DS_API size_t ds_table_row_of(struct ds_table *t, size_t stack, size_t frame, bool own)
{
	const struct ds_profile_sample *p;
	const struct site *s;

	if (stack >= t->nps || (p = &t->ps[stack])->attr != t->attr)
		return SIZE_MAX;
	if (own) {
		s = stack_site(t, p, 0, NULL, 0, false);
	} else {
		if (!ds_profile_frame_kept(p, frame, t->max_stack, !(t->flags & DS_TABLE_CALLEE)))
			return SIZE_MAX; /* also past the stack */
		if (t->lv_stack != stack) {
			if (levels_room(t, p->nlocs))
				return SIZE_MAX;
			t->lv_dup = caller_levels(t, p, t->levels);
			t->lv_stack = stack;
		}
		/* The chain's first entry: its own caller entry when the
		 * callchain held the sampled address too (the profile left it
		 * out), else the sample's own row. */
		s = stack_site(t, p, frame ? frame : p->leaf_in_callchain ? p->nlocs : 0, t->levels,
			       t->lv_dup, false);
	}
	return s ? t->pos[s->entry] : SIZE_MAX;
}
