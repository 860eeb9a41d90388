// SPDX-License-Identifier: MIT
/*
 * The call tree of a profile's stacks, keyed by function: what perf report
 * draws its call graphs from (util/callchain.c keeps the same paths in a
 * radix tree of frame runs; one node per frame holds the same counts, and
 * a printer finds perf's runs again where a node has one child and no path
 * ending at it).  Nodes live in one array, found by (parent, key) in an
 * open-addressed table; each node's children are a linked list while
 * paths are added, laid out and sorted in one array when asked for.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ds_calltree {
	const struct ds_profile_loc *locs;
	size_t nlocs;
	unsigned int flags;
	struct ds_calltree_node *nodes;
	uint32_t *first_child, *next_sibling; /* per node, UINT32_MAX: none */
	uint32_t *kids; /* the children arrays, laid out by ds_calltree_nodes() */
	size_t n, cap;
	uint32_t *slots; /* index + 1, 0 empty */
	size_t nslots;
	bool sorted;
};

static uint64_t node_hash(uint32_t parent, size_t dso, uint64_t addr, const char *function)
{
	uint64_t h = addr * 0x9e3779b97f4a7c15ull;

	h ^= ((uint64_t)parent << 32 | (uint32_t)dso) * 0xff51afd7ed558ccdull;
	h ^= (uintptr_t)function * 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 31;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 29);
}

static uint64_t slot_of(const struct ds_calltree *t, const struct ds_calltree_node *nd)
{
	return node_hash(nd->parent, nd->dso, nd->addr, nd->function) & (t->nslots - 1);
}

/* Room for `more` nodes, so that adding a path cannot fail halfway. */
static int reserve(struct ds_calltree *t, size_t more)
{
	size_t want = t->n + more, nslots = t->nslots;

	if (want > UINT32_MAX - 1)
		return -ENOMEM;
	if (want > t->cap) {
		size_t cap = t->cap ? t->cap : 16;
		void *v;

		while (cap < want)
			cap *= 2;
		if (!(v = reallocarray(t->nodes, cap, sizeof(*t->nodes))))
			return -ENOMEM;
		t->nodes = v;
		if (!(v = reallocarray(t->first_child, cap, sizeof(uint32_t))))
			return -ENOMEM;
		t->first_child = v;
		if (!(v = reallocarray(t->next_sibling, cap, sizeof(uint32_t))))
			return -ENOMEM;
		t->next_sibling = v;
		if (!(v = reallocarray(t->kids, cap, sizeof(uint32_t))))
			return -ENOMEM;
		t->kids = v;
		t->cap = cap;
	}
	while (nslots < 2 * want)
		nslots = nslots ? 2 * nslots : 32;
	if (nslots != t->nslots) {
		uint32_t *v = calloc(nslots, sizeof(*v));

		if (!v)
			return -ENOMEM;
		free(t->slots);
		t->slots = v;
		t->nslots = nslots;
		for (size_t i = 1; i < t->n; i++) { /* the root is never looked up */
			size_t k;

			for (k = slot_of(t, &t->nodes[i]); t->slots[k]; k = (k + 1) & (nslots - 1))
				;
			t->slots[k] = (uint32_t)i + 1;
		}
	}
	return 0;
}

DS_API void ds_calltree_free(struct ds_calltree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t->first_child);
	free(t->next_sibling);
	free(t->kids);
	free(t->slots);
	free(t);
}

DS_API struct ds_calltree *ds_calltree_new(const struct ds_profile *p, unsigned int flags)
{
	struct ds_calltree *t;

	if (!p || (flags & ~DS_CALLTREE_CALLER)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(t = calloc(1, sizeof(*t))))
		return NULL;
	t->nlocs = ds_profile_locs(p, &t->locs);
	t->flags = flags;
	if (reserve(t, 1)) {
		ds_calltree_free(t);
		errno = ENOMEM;
		return NULL;
	}
	t->nodes[0] = (struct ds_calltree_node){ .dso = SIZE_MAX,
						 .loc = UINT32_MAX,
						 .parent = UINT32_MAX };
	t->first_child[0] = t->next_sibling[0] = UINT32_MAX;
	t->n = 1;
	return t;
}

/* The child of parent for the frame, made if it is new (room reserved). */
static uint32_t child_of(struct ds_calltree *t, uint32_t parent, uint32_t loc, uint64_t raw)
{
	const struct ds_profile_loc *l = &t->locs[loc];
	const char *fn = l->function;
	uint64_t addr = fn ? l->function_start : raw;
	size_t k = node_hash(parent, l->dso, addr, fn) & (t->nslots - 1);
	uint32_t i;

	for (; t->slots[k]; k = (k + 1) & (t->nslots - 1)) {
		const struct ds_calltree_node *nd = &t->nodes[t->slots[k] - 1];

		/* The profile interns names: one name, one pointer. */
		if (nd->parent == parent && nd->dso == l->dso && nd->addr == addr &&
		    nd->function == fn)
			return t->slots[k] - 1;
	}
	i = (uint32_t)t->n++;
	t->nodes[i] = (struct ds_calltree_node){
		.dso = l->dso, .function = fn, .addr = addr, .loc = loc, .parent = parent
	};
	t->first_child[i] = UINT32_MAX;
	t->next_sibling[i] = t->first_child[parent];
	t->first_child[parent] = i;
	t->nodes[parent].nchildren++;
	t->slots[k] = i + 1;
	return i;
}

DS_API int ds_calltree_add(struct ds_calltree *t, const struct ds_profile_sample *s, size_t first,
			   size_t n)
{
	bool caller;
	uint32_t cur = 0;
	int rc;

	if (!t || !s || first > s->nlocs || n > s->nlocs - first || (n && (!s->locs || !s->ips)))
		return -EINVAL;
	for (size_t i = first; i < first + n; i++)
		if (s->locs[i] >= t->nlocs)
			return -EINVAL;
	if (!n)
		return 0;
	if ((rc = reserve(t, n)))
		return rc;
	caller = t->flags & DS_CALLTREE_CALLER;
	for (size_t j = 0; j < n; j++) {
		size_t i = caller ? first + n - 1 - j : first + j;

		cur = child_of(t, cur, s->locs[i], s->ips[i]);
		t->nodes[cur].count += s->count;
		t->nodes[cur].period += s->period;
	}
	t->nodes[cur].self_count += s->count;
	t->nodes[cur].self_period += s->period;
	t->nodes[0].count += s->count;
	t->nodes[0].period += s->period;
	t->sorted = false;
	return 0;
}

/* perf sorts siblings by period, descending, and keeps the order it
 * found them in for ties: descending (DSO, address), its rb-tree of
 * children being ordered that way (util/callchain.c, match_chain(): a new
 * path that compares greater goes left).  perf compares DSO pointers,
 * mostly in the order the DSOs were made; the session's indexes follow
 * that order, no map (perf's NULL) lowest. */
static int by_weight(const void *x, const void *y, void *arg)
{
	const struct ds_calltree_node *v = arg, *a = &v[*(const uint32_t *)x],
					  *b = &v[*(const uint32_t *)y];
	uint64_t da = a->dso + 1, db = b->dso + 1; /* SIZE_MAX first */

	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	if (da != db)
		return da > db ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr > b->addr ? -1 : 1;
	if (a->function != b->function) /* aliases at one address: any fixed order */
		return !a->function ? 1 : !b->function ? -1 : strcmp(a->function, b->function);
	return a->loc < b->loc ? -1 : a->loc > b->loc;
}

DS_API size_t ds_calltree_nodes(struct ds_calltree *t, const struct ds_calltree_node **out)
{
	size_t at = 0;

	if (!t) {
		*out = NULL;
		return 0;
	}
	if (!t->sorted) {
		for (size_t i = 0; i < t->n; i++) {
			struct ds_calltree_node *nd = &t->nodes[i];
			uint32_t *k = t->kids + at;
			size_t m = 0;

			for (uint32_t c = t->first_child[i]; c != UINT32_MAX;
			     c = t->next_sibling[c])
				k[m++] = c;
			qsort_r(k, m, sizeof(*k), by_weight, t->nodes);
			nd->children = m ? k : NULL;
			at += m;
		}
		t->sorted = true;
	}
	*out = t->nodes;
	return t->n;
}
