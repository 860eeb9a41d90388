/* SPDX-License-Identifier: MIT */
/*
 * The store: one machine's DSOs, indexed by build ID, path and inode, each
 * DSO owning its debuginfo (the design the perf review in shared/seed asked
 * for instead of a global list of fetched paths).
 *
 * Locking:
 *   store->lock (rwlock)   the three indexes and every DSO's id;
 *   store->di_lock (mutex) debuginfo state changes, the CLOCK ring of open
 *                          debuginfos, budget accounting, miss messages.
 *   store->aux_lock (mutex) the table of auxiliary files (dwz alt files,
 *                          .dwp and .dwo files); a leaf: nothing else is
 *                          taken under it (the budget takes it under
 *                          di_lock).
 * Searching and opening files happen with neither held.
 *
 * Lifetime: the indexes hold no reference.  The last ds_dso_put() unlinks
 * the DSO under the write lock and frees it; a lookup racing with it skips
 * a DSO whose count already reached zero (get-unless-zero), so a dying DSO
 * is never handed out.  Each DSO holds a reference on its store, and each
 * store one on its context, so the caller may free them in any order.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <gelf.h>
#include <unistd.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum sym_state { SYM_NONE = 0, SYM_BUILDING, SYM_READY, SYM_FAILED };

enum di_state {
	DI_UNKNOWN = 0, /* never searched */
	DI_LOADING, /* one thread searches or reopens; others wait */
	DI_READY,
	DI_MISSING, /* searched, none: retried after miss_until */
	DI_EVICTED, /* closed for the budget; the path is remembered */
};

/* Allocated 64-byte aligned: the first line holds what the ready path and
 * a lookup by build ID read (state, refcount, chain, the build ID itself),
 * so a random lookup in a large store costs one miss for the bucket and
 * one for the DSO. */
struct ds_dso {
	atomic_int di_state;
	atomic_int refcnt;
	bool track_use; /* the store has a budget: keep the CLOCK bit */
	bool in_bid_index, in_ino_index;
	struct ds_dso *next_bid;
	struct ds_dso_id id; /* under store->lock */

	struct ds_debuginfo di;
	atomic_int pins;
	struct ds_store *store;
	char *path;
	uint64_t path_hash;
	struct ds_dso *next_path, *next_ino;

	/* The symbolization index: built once per tier (one builder, others
	 * wait, as for the debuginfo), then read without a lock.  The
	 * names-only tier (ELF symbols) is built for DS_SYM_NO_LINES queries,
	 * replaced by the full one (with DWARF) when a query needs it.  One
	 * built from the debuginfo goes with it on eviction; readers hold a
	 * pin. */
	_Atomic(struct ds_symbols *) sym;
	atomic_int sym_state; /* SYM_NONE, SYM_BUILDING, SYM_READY, SYM_FAILED */
	atomic_bool sym_from_debuginfo;
	/* Under di_lock: the last build's error, and whether it was of the
	 * full tier (a names-only failure does not answer a full query). */
	int sym_err;
	bool sym_err_full;
	/* Indexes replaced since (built before the debuginfo turned up, or
	 * names-only ones): a reader may still hold one.  Those built without
	 * the debuginfo are read without a pin, so they go with the DSO;
	 * those built from it go when it is evicted (no pins, no readers).
	 * Under di_lock. */
	struct retired_sym {
		struct ds_symbols *S;
		struct retired_sym *next;
		bool from_debuginfo;
	} *sym_retired;
	/* Under di_lock: what the full index in use was built from, if known
	 * (the key of its saved file, lib/symfile.c). */
	struct ds__symfile_key sym_key;
	bool sym_keyed;

	/* Under store->di_lock. */
	struct ds_dso *ring_prev, *ring_next; /* open debuginfos */
	_Atomic int64_t miss_until_ns;
	atomic_int miss_err;
	char *miss_msg;

	/* File offsets of a DSO whose index came from a debug file alone
	 * (offsets_bad: its code segment has no file bytes): its
	 * executable's program headers, looked for once (exec_state, under
	 * di_lock: EXEC_* below), kept while the DSO lives. */
	atomic_bool offsets_bad;
	int exec_state;
	struct ds__loadmap *exec_map;
};

enum { EXEC_UNKNOWN = 0, EXEC_LOADING, EXEC_KNOWN };

/* An auxiliary debug file (lib/internal.h): a dwz alt file by build ID, a
 * .dwp package by its file's identity, a .dwo file by its dwo id.  Its
 * states, like a DSO's debuginfo: AUX_NEW (never searched, or a miss
 * expired), AUX_LOADING (one thread searches or opens it; others wait),
 * AUX_FOUND (its path is known; closed), AUX_OPEN (open, counted in
 * bytes_held), AUX_MISSING (searched, none, until miss_until).  Indexes
 * hold it (holds: as long as their DWARF names it) and pin it while they
 * read it (pins: a CU build of split units, an alt file's whole DWARF);
 * the last hold closes it, the budget closes one held but not pinned
 * (pins reopen it where it was).  The record stays until the store goes
 * (it is small: the file's memory goes when it closes). */
enum aux_state { AUX_NEW = 0, AUX_LOADING, AUX_FOUND, AUX_OPEN, AUX_MISSING };

struct aux_key {
	enum ds__aux_kind kind;
	struct ds_build_id bid; /* an alt file's */
	uint64_t id; /* a .dwo's dwo id */
	dev_t dev; /* a package's file */
	ino_t ino;
	off_t size;
	int64_t mtime_ns;
};

struct aux {
	struct aux *next; /* in its bucket */
	struct aux_key key;
	int state;
	int holds, pins;
	bool recent; /* CLOCK reference bit, set by pins */
	char *path; /* AUX_FOUND, AUX_OPEN: where it is */
	enum ds_source source;
	struct ds_found found; /* AUX_OPEN: the file */
	struct ds__dwarf_aux *dw; /* AUX_OPEN: its DWARF */
	uint64_t bytes; /* AUX_OPEN: what it adds to bytes_held */
	uint64_t *ids; /* a package's units' dwo ids, sorted, once opened */
	size_t nids;
	char *where; /* a .dwo's AUX_MISSING: the places looked in */
	int err; /* AUX_MISSING */
	int64_t miss_until_ns;
};

struct htab {
	struct ds_dso **buckets;
	size_t mask; /* nbuckets - 1 */
	size_t count;
};

struct ds_store {
	atomic_int refcnt; /* the caller's handle + one per live DSO */
	struct ds_context *ctx;
	char *machine;
	uint64_t budget;
	unsigned int fd_budget;
	bool file_offsets; /* prefetch fetches executables' headers too */

	pthread_rwlock_t lock;
	struct htab by_bid, by_path, by_ino;

	pthread_mutex_t di_lock;
	pthread_cond_t di_cond;
	struct ds_dso *ring_hand; /* CLOCK hand into the ring */

	/* Auxiliary files, under aux_lock: a hash table of chains. */
	pthread_mutex_t aux_lock;
	pthread_cond_t aux_cond;
	struct aux **aux_tab;
	size_t aux_mask, aux_count;
	struct ds__aux_src aux_src; /* what the indexes ask */

	atomic_uint_fast64_t n_dsos, n_open, bytes_held, searches, hits, misses, evictions, reopens,
	    symtab_builds, dwarf_builds, units_built, symindex_loads, symindex_saves,
	    units_trimmed, aux_open, aux_bytes, aux_searches, aux_opens, aux_closes, aux_reopens,
	    dwp_opens, dwo_opens, dwo_searches, aux_fds;
};

/* ------------------------------------------------------------- hashing */

static uint64_t mix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

static uint64_t hash_bytes(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a, then mixed */

	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return mix64(h);
}

/* Build IDs are hashes already (sha1, md5, uuid): their first bytes do;
 * short ones, set by hand with --build-id=0x..., go through FNV. */
static uint64_t hash_bid(const struct ds_build_id *bid)
{
	uint64_t h;

	if (bid->size < 8)
		return hash_bytes(bid->data, bid->size);
	memcpy(&h, bid->data, 8);
	return mix64(h ^ bid->size);
}

static uint64_t hash_ino(const struct ds_dso_id *id)
{
	return mix64(id->ino ^ mix64(((uint64_t)id->maj << 32) | id->min));
}

static int htab_init(struct htab *t)
{
	t->buckets = calloc(64, sizeof(*t->buckets));
	t->mask = 63;
	t->count = 0;
	return t->buckets ? 0 : -ENOMEM;
}

/* Intrusive chains: each table links DSOs through its own next field. */
enum { T_BID, T_PATH, T_INO };

static struct ds_dso **next_of(struct ds_dso *d, int which)
{
	return which == T_BID ? &d->next_bid : which == T_PATH ? &d->next_path : &d->next_ino;
}

static uint64_t key_of(struct ds_dso *d, int which)
{
	return which == T_BID ? hash_bid(&d->id.build_id)
	       : which == T_PATH ? d->path_hash
				 : hash_ino(&d->id);
}

static void htab_grow(struct htab *t, int which)
{
	size_t n = (t->mask + 1) * 2;
	struct ds_dso **nb = calloc(n, sizeof(*nb));

	if (!nb)
		return; /* longer chains, still correct */
	for (size_t i = 0; i <= t->mask; i++) {
		struct ds_dso *d = t->buckets[i], *next;

		for (; d; d = next) {
			size_t b = key_of(d, which) & (n - 1);

			next = *next_of(d, which);
			*next_of(d, which) = nb[b];
			nb[b] = d;
		}
	}
	free(t->buckets);
	t->buckets = nb;
	t->mask = n - 1;
}

static void htab_add(struct htab *t, int which, struct ds_dso *d)
{
	size_t b;

	if (t->count >= t->mask + 1)
		htab_grow(t, which);
	b = key_of(d, which) & t->mask;
	*next_of(d, which) = t->buckets[b];
	t->buckets[b] = d;
	t->count++;
}

static void htab_del(struct htab *t, int which, struct ds_dso *d)
{
	struct ds_dso **pp = &t->buckets[key_of(d, which) & t->mask];

	for (; *pp; pp = next_of(*pp, which)) {
		if (*pp == d) {
			*pp = *next_of(d, which);
			t->count--;
			return;
		}
	}
}

/* ------------------------------------------------------------ matching */

static bool has(const struct ds_dso_id *id, unsigned flag)
{
	return id && (id->flags & flag);
}

/* perf's dso_id__cmp: only parts both sides know are compared. */
static bool id_compatible(const struct ds_dso_id *a, const struct ds_dso_id *b)
{
	if (has(a, DS_DSO_ID_BUILD_ID) && has(b, DS_DSO_ID_BUILD_ID))
		return ds_build_id_equal(&a->build_id, &b->build_id);
	if (has(a, DS_DSO_ID_INODE) && has(b, DS_DSO_ID_INODE)) {
		if (a->maj != b->maj || a->min != b->min || a->ino != b->ino)
			return false;
		if (has(a, DS_DSO_ID_INO_GENERATION) && has(b, DS_DSO_ID_INO_GENERATION) &&
		    a->ino_generation != b->ino_generation)
			return false;
	}
	return true;
}

static bool same_inode(const struct ds_dso_id *a, const struct ds_dso_id *b)
{
	return has(a, DS_DSO_ID_INODE) && has(b, DS_DSO_ID_INODE) && id_compatible(a, b);
}

static bool alive(struct ds_dso *d)
{
	return atomic_load_explicit(&d->refcnt, memory_order_relaxed) > 0;
}

struct path_key {
	const char *path;
	uint64_t hash;
	bool hashed;
};

static uint64_t path_hash(struct path_key *k)
{
	if (!k->hashed) {
		k->hash = hash_bytes(k->path, strlen(k->path));
		k->hashed = true;
	}
	return k->hash;
}

/* Under store->lock (read or write).  The path is hashed only when the
 * build ID did not answer. */
static struct ds_dso *lookup(struct ds_store *s, struct path_key *pk, const struct ds_dso_id *id)
{
	const char *path = pk ? pk->path : NULL;
	struct ds_dso *d;

	if (has(id, DS_DSO_ID_BUILD_ID)) {
		d = s->by_bid.buckets[hash_bid(&id->build_id) & s->by_bid.mask];
		for (; d; d = d->next_bid)
			if (alive(d) && ds_build_id_equal(&d->id.build_id, &id->build_id))
				return d;
	}
	if (path) {
		uint64_t ph = path_hash(pk);

		d = s->by_path.buckets[ph & s->by_path.mask];
		for (; d; d = d->next_path)
			if (alive(d) && d->path_hash == ph && !strcmp(d->path, path) &&
			    id_compatible(&d->id, id))
				return d;
	}
	if (has(id, DS_DSO_ID_INODE)) {
		d = s->by_ino.buckets[hash_ino(id) & s->by_ino.mask];
		for (; d; d = d->next_ino)
			if (alive(d) && same_inode(&d->id, id))
				return d;
	}
	return NULL;
}

static bool get_unless_zero(struct ds_dso *d)
{
	int n = atomic_load_explicit(&d->refcnt, memory_order_relaxed);

	while (n > 0)
		if (atomic_compare_exchange_weak_explicit(&d->refcnt, &n, n + 1,
							  memory_order_acquire,
							  memory_order_relaxed))
			return true;
	return false;
}

/* Would matching d with id teach d something? */
static bool id_improves(const struct ds_dso *d, const struct ds_dso_id *id)
{
	if (!id)
		return false;
	return (has(id, DS_DSO_ID_BUILD_ID) && !has(&d->id, DS_DSO_ID_BUILD_ID)) ||
	       (has(id, DS_DSO_ID_INODE) && !has(&d->id, DS_DSO_ID_INODE)) ||
	       (has(id, DS_DSO_ID_INO_GENERATION) && !has(&d->id, DS_DSO_ID_INO_GENERATION));
}

/* Under the write lock.  Two DSOs can end up with one build ID (a DSO
 * known by path reads its build ID from the file while another DSO was
 * made from that build ID alone); both are indexed, and a lookup returns
 * the first live one, so the build ID stays findable whichever goes first. */
static void learn_build_id(struct ds_store *s, struct ds_dso *d, const struct ds_build_id *bid)
{
	d->id.build_id = *bid;
	d->id.flags |= DS_DSO_ID_BUILD_ID;
	htab_add(&s->by_bid, T_BID, d);
	d->in_bid_index = true;
}

static void improve_id(struct ds_store *s, struct ds_dso *d, const struct ds_dso_id *id)
{
	if (has(id, DS_DSO_ID_BUILD_ID) && !has(&d->id, DS_DSO_ID_BUILD_ID))
		learn_build_id(s, d, &id->build_id);
	if (has(id, DS_DSO_ID_INODE) && !has(&d->id, DS_DSO_ID_INODE)) {
		d->id.maj = id->maj;
		d->id.min = id->min;
		d->id.ino = id->ino;
		d->id.flags |= DS_DSO_ID_INODE;
		htab_add(&s->by_ino, T_INO, d);
		d->in_ino_index = true;
	}
	if (has(id, DS_DSO_ID_INO_GENERATION) && !has(&d->id, DS_DSO_ID_INO_GENERATION)) {
		d->id.ino_generation = id->ino_generation;
		d->id.flags |= DS_DSO_ID_INO_GENERATION;
	}
}

/* ------------------------------------------------------------- the store */

static void aux_free_all(struct ds_store *s);
static struct ds__aux *alt_get(void *arg, const struct ds_build_id *bid, const char *name,
			       const char *from);
static struct ds__aux *dwp_get(void *arg, const struct ds__dwp_want *w);
static struct ds__aux *dwo_get(void *arg, const struct ds__dwo_want *w);
static const struct ds__dwarf_aux *aux_pin(void *arg, struct ds__aux *h);
static void aux_unpin(void *arg, struct ds__aux *h);
static void aux_put(void *arg, struct ds__aux *h);

static void store_destroy(struct ds_store *s)
{
	aux_free_all(s);
	pthread_mutex_destroy(&s->aux_lock);
	pthread_cond_destroy(&s->aux_cond);
	free(s->by_bid.buckets);
	free(s->by_path.buckets);
	free(s->by_ino.buckets);
	pthread_rwlock_destroy(&s->lock);
	pthread_mutex_destroy(&s->di_lock);
	pthread_cond_destroy(&s->di_cond);
	free(s->machine);
	ds__context_put(s->ctx);
	free(s);
}

static void store_put(struct ds_store *s)
{
	if (atomic_fetch_sub_explicit(&s->refcnt, 1, memory_order_acq_rel) == 1)
		store_destroy(s);
}

struct ds_context *ds__store_context(const struct ds_store *s)
{
	return s->ctx;
}

DS_API struct ds_store *ds_store_new(struct ds_context *ctx, const char *machine,
				     const struct ds_store_opts *opts)
{
	struct ds_store *s;

	if (!ctx) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	atomic_init(&s->refcnt, 1);
	s->ctx = ds__context_get(ctx);
	s->budget = DS_OPT(opts, mem_budget, 0);
	s->fd_budget = DS_OPT(opts, fd_budget, 0);
	s->file_offsets = DS_OPT(opts, file_offsets, false);
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->di_lock, NULL);
	pthread_cond_init(&s->di_cond, NULL);
	pthread_mutex_init(&s->aux_lock, NULL);
	pthread_cond_init(&s->aux_cond, NULL);
	s->aux_src = (struct ds__aux_src){ alt_get, dwp_get, dwo_get, aux_pin, aux_unpin, aux_put, s };
	s->aux_tab = calloc(64, sizeof(*s->aux_tab));
	s->aux_mask = 63;
	s->machine = strdup(machine ? machine : "host");
	if (!s->machine || !s->aux_tab || htab_init(&s->by_bid) || htab_init(&s->by_path) ||
	    htab_init(&s->by_ino)) {
		store_destroy(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

DS_API void ds_store_free(struct ds_store *s)
{
	if (s)
		store_put(s);
}

DS_API const char *ds_store_machine(const struct ds_store *s)
{
	return s ? s->machine : NULL;
}

DS_API void ds_store_stats(struct ds_store *s, struct ds_store_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!s)
		return;
	out->dsos = atomic_load(&s->n_dsos);
	out->debuginfos_open = atomic_load(&s->n_open);
	out->bytes_held = atomic_load(&s->bytes_held);
	out->searches = atomic_load(&s->searches);
	out->hits = atomic_load(&s->hits);
	out->misses = atomic_load(&s->misses);
	out->evictions = atomic_load(&s->evictions);
	out->reopens = atomic_load(&s->reopens);
	out->symtab_builds = atomic_load(&s->symtab_builds);
	out->dwarf_builds = atomic_load(&s->dwarf_builds);
	out->units_built = atomic_load(&s->units_built);
	out->trims = atomic_load(&s->units_trimmed);
	out->symindex_loads = atomic_load(&s->symindex_loads);
	out->symindex_saves = atomic_load(&s->symindex_saves);
	out->aux_open = atomic_load(&s->aux_open);
	out->aux_bytes = atomic_load(&s->aux_bytes);
	out->aux_searches = atomic_load(&s->aux_searches);
	out->aux_opens = atomic_load(&s->aux_opens);
	out->aux_closes = atomic_load(&s->aux_closes);
	out->aux_reopens = atomic_load(&s->aux_reopens);
	out->dwp_opens = atomic_load(&s->dwp_opens);
	out->dwo_opens = atomic_load(&s->dwo_opens);
	out->dwo_searches = atomic_load(&s->dwo_searches);
	out->files_open = atomic_load(&s->n_open) + atomic_load(&s->aux_fds);
}

/* --------------------------------------------------------------- DSOs */

static struct ds_dso *dso_new(struct ds_store *s, struct path_key *pk)
{
	size_t size = (sizeof(struct ds_dso) + 63) & ~(size_t)63;
	struct ds_dso *d = aligned_alloc(64, size);

	if (!d)
		return NULL;
	memset(d, 0, size);
	if (pk->path && !(d->path = strdup(pk->path))) {
		free(d);
		return NULL;
	}
	d->path_hash = pk->path ? path_hash(pk) : 0;
	atomic_init(&d->refcnt, 1);
	atomic_init(&d->pins, 0);
	atomic_init(&d->di_state, DI_UNKNOWN);
	atomic_init(&d->miss_until_ns, 0);
	atomic_init(&d->miss_err, 0);
	atomic_init(&d->sym, NULL);
	atomic_init(&d->sym_state, SYM_NONE);
	atomic_init(&d->sym_from_debuginfo, false);
	d->track_use = s->budget || s->fd_budget;
	ds__debuginfo_init(&d->di, &d->id.build_id);
	d->store = s;
	atomic_fetch_add(&s->refcnt, 1);
	return d;
}

static struct ds_dso *findnew(struct ds_store *s, const char *path, const struct ds_dso_id *id,
			      bool create)
{
	struct path_key pk = { .path = path };
	struct ds_dso *d;

	if (!s || (!path && !has(id, DS_DSO_ID_BUILD_ID))) {
		errno = EINVAL;
		return NULL;
	}
	if (has(id, DS_DSO_ID_BUILD_ID) &&
	    (!id->build_id.size || id->build_id.size > DS_BUILD_ID_MAX)) {
		errno = EINVAL;
		return NULL;
	}
	pthread_rwlock_rdlock(&s->lock);
	d = lookup(s, &pk, id);
	if (d && !id_improves(d, id) && get_unless_zero(d)) {
		pthread_rwlock_unlock(&s->lock);
		return d;
	}
	pthread_rwlock_unlock(&s->lock);

	pthread_rwlock_wrlock(&s->lock);
	d = lookup(s, &pk, id);
	if (d && get_unless_zero(d)) {
		improve_id(s, d, id);
	} else if (create && (d = dso_new(s, &pk))) {
		if (d->path)
			htab_add(&s->by_path, T_PATH, d);
		improve_id(s, d, id);
		atomic_fetch_add(&s->n_dsos, 1);
	} else {
		errno = create ? ENOMEM : ENOENT;
		d = NULL;
	}
	pthread_rwlock_unlock(&s->lock);
	return d;
}

DS_API struct ds_dso *ds_store_findnew(struct ds_store *s, const char *path,
				       const struct ds_dso_id *id)
{
	return findnew(s, path, id, true);
}

DS_API struct ds_dso *ds_store_find(struct ds_store *s, const char *path,
				    const struct ds_dso_id *id)
{
	return findnew(s, path, id, false);
}

DS_API struct ds_dso *ds_store_find_build_id(struct ds_store *s, const struct ds_build_id *bid)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };

	if (!bid) {
		errno = EINVAL;
		return NULL;
	}
	id.build_id = *bid;
	return findnew(s, NULL, &id, false);
}

DS_API struct ds_dso *ds_dso_get(struct ds_dso *d)
{
	if (d)
		atomic_fetch_add_explicit(&d->refcnt, 1, memory_order_relaxed);
	return d;
}

static void ring_unlink(struct ds_store *s, struct ds_dso *d);

/* Free d's retired indexes (only_debuginfo: those built from the
 * debuginfo, which no reader holds once no one pins it).  di_lock held, or
 * d is going. */
static void free_retired(struct ds_dso *d, bool only_debuginfo)
{
	struct retired_sym **pp = &d->sym_retired;

	while (*pp) {
		struct retired_sym *r = *pp;

		if (only_debuginfo && !r->from_debuginfo) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		ds__symbols_free(r->S);
		free(r);
	}
}

static void dso_free(struct ds_dso *d)
{
	struct ds_store *s = d->store;

	pthread_rwlock_wrlock(&s->lock);
	htab_del(&s->by_path, T_PATH, d);
	if (d->in_bid_index)
		htab_del(&s->by_bid, T_BID, d);
	if (d->in_ino_index)
		htab_del(&s->by_ino, T_INO, d);
	pthread_rwlock_unlock(&s->lock);
	atomic_fetch_sub(&s->n_dsos, 1);

	pthread_mutex_lock(&s->di_lock);
	if (ds__debuginfo_is_open(&d->di)) {
		ring_unlink(s, d);
		atomic_fetch_sub(&s->bytes_held, ds__debuginfo_close(&d->di));
		atomic_fetch_sub(&s->n_open, 1);
	}
	pthread_mutex_unlock(&s->di_lock);

	if (atomic_load(&d->sym)) {
		ds__symbols_unaccount(atomic_load(&d->sym));
		ds__symbols_free(atomic_load(&d->sym));
	}
	free_retired(d, false);
	ds__debuginfo_release(&d->di);
	free(d->exec_map);
	free(d->miss_msg);
	free(d->path);
	free(d);
	store_put(s);
}

DS_API void ds_dso_put(struct ds_dso *d)
{
	if (d && atomic_fetch_sub_explicit(&d->refcnt, 1, memory_order_acq_rel) == 1)
		dso_free(d);
}

DS_API const char *ds_dso_path(const struct ds_dso *d)
{
	return d ? d->path : NULL;
}

DS_API void ds_dso_id(struct ds_dso *d, struct ds_dso_id *out)
{
	pthread_rwlock_rdlock(&d->store->lock);
	*out = d->id;
	pthread_rwlock_unlock(&d->store->lock);
}

/* ----------------------------------------------------- debuginfo states */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The ring of open debuginfos, walked by the CLOCK hand.  di_lock held. */
static void ring_link(struct ds_store *s, struct ds_dso *d)
{
	if (!s->ring_hand) {
		d->ring_prev = d->ring_next = d;
		s->ring_hand = d;
		return;
	}
	/* Just behind the hand: the last to be looked at. */
	d->ring_next = s->ring_hand;
	d->ring_prev = s->ring_hand->ring_prev;
	d->ring_prev->ring_next = d;
	s->ring_hand->ring_prev = d;
}

static void ring_unlink(struct ds_store *s, struct ds_dso *d)
{
	if (!d->ring_next)
		return;
	if (d->ring_next == d) {
		s->ring_hand = NULL;
	} else {
		d->ring_prev->ring_next = d->ring_next;
		d->ring_next->ring_prev = d->ring_prev;
		if (s->ring_hand == d)
			s->ring_hand = d->ring_next;
	}
	d->ring_prev = d->ring_next = NULL;
}

/* A use the ready path does not see (building the index): counts as a
 * recent use for CLOCK.  di_lock held. */
static void ring_touch(struct ds_dso *d)
{
	atomic_store_explicit(&d->di.recent, true, memory_order_relaxed);
}

/* Close d's debuginfo unless someone pinned it.  The state goes to EVICTED
 * before pins is read, and ds_dso_pin() raises pins before reading the
 * state (both sequentially consistent), so one of the two always sees the
 * other.  di_lock held. */
static bool try_evict(struct ds_store *s, struct ds_dso *d)
{
	atomic_store(&d->di_state, DI_EVICTED);
	if (atomic_load(&d->pins) != 0) {
		atomic_store(&d->di_state, DI_READY);
		return false;
	}
	ring_unlink(s, d);
	atomic_fetch_sub(&s->bytes_held, ds__debuginfo_close(&d->di));
	atomic_fetch_sub(&s->n_open, 1);
	atomic_fetch_add(&s->evictions, 1);
	if (atomic_load(&d->sym_from_debuginfo) && atomic_load(&d->sym_state) == SYM_READY) {
		struct ds_symbols *S = atomic_exchange(&d->sym, NULL);

		ds__symbols_unaccount(S);
		atomic_store(&d->sym_state, SYM_NONE);
		ds__symbols_free(S);
	}
	free_retired(d, true);
	ds_debug(s->ctx, "evicted debuginfo %s", ds_debuginfo_path(&d->di));
	return true;
}

/* Free the cold CUs of d's index if nobody pins d, under the protocol of
 * try_evict(): no lookup runs on the index meanwhile, and one that starts
 * waits for di_lock.  di_lock held. */
static void try_trim(struct ds_store *s, struct ds_dso *d)
{
	struct ds_symbols *S = atomic_load(&d->sym);

	if (!S || atomic_load(&d->sym_state) != SYM_READY || !atomic_load(&d->sym_from_debuginfo) ||
	    atomic_load(&d->di_state) != DI_READY)
		return;
	atomic_store(&d->di_state, DI_EVICTED);
	if (atomic_load(&d->pins) == 0 && ds__symbols_trim(S))
		atomic_fetch_add(&s->units_trimmed, 1);
	atomic_store(&d->di_state, DI_READY);
}

static void aux_trim(struct ds_store *s);

static bool has_budget(const struct ds_store *s)
{
	return s->budget || s->fd_budget;
}

static bool over_mem(struct ds_store *s)
{
	return s->budget && atomic_load(&s->bytes_held) > s->budget;
}

/* Descriptors held: one per open debuginfo, and the auxiliary files'. */
static bool over_fds(struct ds_store *s)
{
	return s->fd_budget &&
	       atomic_load(&s->n_open) + atomic_load(&s->aux_fds) > (uint64_t)s->fd_budget;
}

static bool over_budget(struct ds_store *s)
{
	return over_mem(s) || over_fds(s);
}

/* Over the budget, first the CUs of indexes nobody reads that were not
 * looked up lately (CLOCK: two passes, the second takes what the first
 * spared), then the auxiliary files no build reads now (aux_trim()),
 * then whole debuginfos (and their indexes).  Second chance: a
 * debuginfo used since the hand last passed keeps its place once.  Two
 * turns of the ring bound the walk.  di_lock held. */
static void enforce_budget(struct ds_store *s, struct ds_dso *keep)
{
	size_t steps = 2 * (size_t)atomic_load(&s->n_open) + 2;

	/* Trimming CUs frees memory, no descriptor. */
	for (int pass = 0; pass < 2 && over_mem(s); pass++) {
		struct ds_dso *d = s->ring_hand;

		for (size_t k = 0; d && k < (size_t)atomic_load(&s->n_open) && over_mem(s);
		     k++, d = d->ring_next)
			try_trim(s, d);
	}
	if (over_budget(s))
		aux_trim(s);

	while (over_budget(s) && s->ring_hand && steps--) {
		struct ds_dso *d = s->ring_hand;

		s->ring_hand = d->ring_next;
		if (d == keep)
			continue;
		if (atomic_exchange_explicit(&d->di.recent, false, memory_order_relaxed))
			continue;
		try_evict(s, d);
	}
}

/* The DSO has a path but no build ID yet: read it from the file. */
static int learn_from_file(struct ds_dso *d)
{
	struct ds_store *s = d->store;
	struct ds_build_id bid;
	bool known;
	int err;

	pthread_rwlock_rdlock(&s->lock);
	known = has(&d->id, DS_DSO_ID_BUILD_ID);
	pthread_rwlock_unlock(&s->lock);
	if (known)
		return 0;
	if (!d->path)
		return -ENODATA;
	err = ds_build_id_read_file(d->path, &bid);
	if (err)
		return err == -ENOENT || err == -ENOEXEC || err == -EISDIR ? -ENODATA : err;
	pthread_rwlock_wrlock(&s->lock);
	if (!has(&d->id, DS_DSO_ID_BUILD_ID))
		learn_build_id(s, d, &bid);
	pthread_rwlock_unlock(&s->lock);
	return 0;
}

/* The search proper, with no lock held.  Fills d->di on success. */
/* local_only: this machine only.  fetched: a debuginfod request already
 * answered for this DSO, after a local search that found nothing: its
 * answer is taken, nothing is searched again. */
static int search(struct ds_dso *d, bool local_only, const struct ds_fetch_req *fetched,
		  struct ds_strbuf *why)
{
	struct ds_store *s = d->store;
	struct ds_found found;
	int err;

	atomic_fetch_add(&s->searches, 1);
	err = learn_from_file(d);
	if (err) {
		ds__strbuf_addf(why, "%s: cannot read a build ID: %s", d->path ? d->path : "?",
				ds_strerror(err));
		return err;
	}
	if (fetched) {
		err = ds__fetch_found_req(s->ctx, fetched, &found, why);
	} else {
		err = ds__locate(s->ctx, &d->id.build_id, d->path, DS_ARTIFACT_DEBUGINFO, &found,
				 why);
		if (err == -ENOENT && !local_only) /* then debuginfod's cache, servers */
			err = ds__fetch_found(s->ctx, &d->id.build_id, &found, why);
	}
	if (err)
		return err;
	ds__debuginfo_adopt(&d->di, &found);
	return 0;
}

/* di_lock held.  Publishes the outcome of a search or reopen. */
static int publish(struct ds_dso *d, int err, struct ds_strbuf *why)
{
	struct ds_store *s = d->store;
	int ttl = s->ctx->miss_ttl_s;

	if (!err) {
		ring_link(s, d);
		atomic_store_explicit(&d->di.recent, false, memory_order_relaxed);
		atomic_fetch_add(&s->bytes_held, d->di.size);
		atomic_fetch_add(&s->n_open, 1);
		atomic_store_explicit(&d->di_state, DI_READY, memory_order_release);
		if (has_budget(s))
			enforce_budget(s, d);
		return 0;
	}
	free(d->miss_msg);
	d->miss_msg = why->buf;
	why->buf = NULL;
	atomic_store(&d->miss_err, err);
	atomic_store(&d->miss_until_ns, ttl < 0 ? 0 : now_ns() + (int64_t)ttl * 1000000000);
	atomic_store_explicit(&d->di_state, DI_MISSING, memory_order_release);
	return err;
}

static bool miss_still_valid(struct ds_dso *d)
{
	return now_ns() < atomic_load(&d->miss_until_ns);
}

/* local_only: a miss is not remembered (prefetch asks debuginfod next);
 * fetched: see search(). */
/* Kept out of line so that the ready path stays a few instructions. */
__attribute__((noinline, cold)) static int debuginfo_slow(struct ds_dso *d,
							  const struct ds_debuginfo **out,
							  bool local_only,
							  const struct ds_fetch_req *fetched)
{
	struct ds_store *s = d->store;
	struct ds_strbuf why = { 0 };
	int state, err;

	/* A remembered miss is answered without the lock. */
	if (atomic_load_explicit(&d->di_state, memory_order_acquire) == DI_MISSING &&
	    miss_still_valid(d))
		return atomic_load(&d->miss_err);

	pthread_mutex_lock(&s->di_lock);
	for (;;) {
		state = atomic_load(&d->di_state);
		if (state == DI_READY) {
			*out = &d->di;
			err = 0;
			goto out;
		}
		if (state == DI_MISSING && miss_still_valid(d)) {
			err = atomic_load(&d->miss_err);
			goto out;
		}
		if (state != DI_LOADING)
			break;
		pthread_cond_wait(&s->di_cond, &s->di_lock);
	}

	atomic_store(&d->di_state, DI_LOADING);
	pthread_mutex_unlock(&s->di_lock);
	if (state == DI_EVICTED && ds__debuginfo_reopen(&d->di) == 0) {
		atomic_fetch_add(&s->reopens, 1);
		err = 0;
	} else {
		/* A file gone since it was found: search again. */
		err = search(d, local_only, fetched, &why);
		if (!err)
			atomic_fetch_add(&s->hits, 1);
		else if (!local_only)
			atomic_fetch_add(&s->misses, 1);
	}
	pthread_mutex_lock(&s->di_lock);
	if (local_only && err == -ENOENT)
		atomic_store(&d->di_state, state == DI_EVICTED ? DI_UNKNOWN : state);
	else
		err = publish(d, err, &why);
	if (!err)
		*out = &d->di;
	pthread_cond_broadcast(&s->di_cond);
out:
	pthread_mutex_unlock(&s->di_lock);
	ds__strbuf_release(&why);
	return err;
}

DS_API int ds_dso_debuginfo(struct ds_dso *d, const struct ds_debuginfo **out)
{
	if (likely(atomic_load_explicit(&d->di_state, memory_order_acquire) == DI_READY)) {
		if (d->track_use && !atomic_load_explicit(&d->di.recent, memory_order_relaxed))
			atomic_store_explicit(&d->di.recent, true, memory_order_relaxed);
		*out = &d->di;
		return 0;
	}
	return debuginfo_slow(d, out, false, NULL);
}

DS_API int ds_dso_error(struct ds_dso *d, char *buf, size_t len)
{
	struct ds_store *s = d->store;
	int err = 0;

	pthread_mutex_lock(&s->di_lock);
	if (atomic_load(&d->di_state) == DI_MISSING) {
		err = atomic_load(&d->miss_err);
		if (buf && len)
			snprintf(buf, len, "%s%s%s", ds_strerror(err), d->miss_msg ? ": " : "",
				 d->miss_msg ? d->miss_msg : "");
	} else if (buf && len) {
		buf[0] = 0;
	}
	pthread_mutex_unlock(&s->di_lock);
	return err;
}

DS_API int ds_dso_pin(struct ds_dso *d)
{
	const struct ds_debuginfo *di;
	int err;

	for (;;) {
		atomic_fetch_add(&d->pins, 1);
		if (atomic_load(&d->di_state) == DI_READY)
			return 0;
		atomic_fetch_sub(&d->pins, 1);
		err = ds_dso_debuginfo(d, &di);
		if (err)
			return err;
	}
}

DS_API void ds_dso_unpin(struct ds_dso *d)
{
	atomic_fetch_sub(&d->pins, 1);
}

/* ------------------------------------------------- auxiliary files */

static const char *const aux_what[] = { "dwz alt file", ".dwp package", ".dwo file" };

static uint64_t aux_hash(const struct aux_key *k)
{
	switch (k->kind) {
	case DS__AUX_ALT:
		return hash_bid(&k->bid);
	case DS__AUX_DWP:
		return mix64((uint64_t)k->ino ^ mix64((uint64_t)k->dev + 1));
	default:
		return mix64(k->id ^ 0x2d776f); /* (a dwo id is a hash already; not 0) */
	}
}

static bool aux_key_eq(const struct aux_key *a, const struct aux_key *b)
{
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case DS__AUX_ALT:
		return ds_build_id_equal(&a->bid, &b->bid);
	case DS__AUX_DWP:
		return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
		       a->mtime_ns == b->mtime_ns;
	default:
		return a->id == b->id;
	}
}

/* The key's name for messages (a build ID, a path, a dwo id). */
static const char *aux_name(const struct aux *e, char *buf, size_t len)
{
	if (e->key.kind == DS__AUX_ALT)
		ds_build_id_format(&e->key.bid, buf, len);
	else if (e->key.kind == DS__AUX_DWO)
		snprintf(buf, len, "%016llx", (unsigned long long)e->key.id);
	else
		snprintf(buf, len, "%s", e->path ? e->path : "?");
	return buf;
}

/* aux_lock held.  The record of k, made if there is none and create (NULL:
 * none, or no memory). */
static struct aux *aux_entry(struct ds_store *s, const struct aux_key *k, bool create)
{
	size_t b = aux_hash(k) & s->aux_mask;
	struct aux *e;

	for (e = s->aux_tab[b]; e; e = e->next)
		if (aux_key_eq(&e->key, k))
			return e;
	if (!create || !(e = calloc(1, sizeof(*e))))
		return NULL;
	/* (A full table grows; one that cannot keeps longer chains.) */
	if (s->aux_count > s->aux_mask) {
		size_t n = 2 * (s->aux_mask + 1);
		struct aux **nt = calloc(n, sizeof(*nt));

		for (size_t i = 0; nt && i <= s->aux_mask; i++) {
			for (struct aux *x = s->aux_tab[i], *next; x; x = next) {
				size_t nb = aux_hash(&x->key) & (n - 1);

				next = x->next;
				x->next = nt[nb];
				nt[nb] = x;
			}
		}
		if (nt) {
			free(s->aux_tab);
			s->aux_tab = nt;
			s->aux_mask = n - 1;
			b = aux_hash(k) & s->aux_mask;
		}
	}
	e->key = *k;
	e->found.fd = -1;
	e->next = s->aux_tab[b];
	s->aux_tab[b] = e;
	s->aux_count++;
	return e;
}

/* aux_lock held.  Wait while another thread has e; then true when e is to
 * be searched or opened by the caller (it is AUX_LOADING now, *prev the
 * state it had), false when its state answers: open, a miss still valid
 * (for a .dwo, one looked for in the same places: where), or found when
 * the caller does not want it open. */
static bool aux_claim(struct ds_store *s, struct aux *e, bool open, const char *where, int *prev)
{
	while (e->state == AUX_LOADING)
		pthread_cond_wait(&s->aux_cond, &s->aux_lock);
	if (e->state == AUX_OPEN || (e->state == AUX_FOUND && !open))
		return false;
	if (e->state == AUX_MISSING && now_ns() < e->miss_until_ns &&
	    (!where || !e->where || !strcmp(where, e->where)))
		return false;
	*prev = e->state;
	e->state = AUX_LOADING;
	return true;
}

/* aux_lock held.  Remember path as e's (false: no memory). */
static bool aux_set_path(struct aux *e, const char *path)
{
	char *p;

	if (e->path && !strcmp(e->path, path))
		return true;
	if (!(p = strdup(path)))
		return false;
	free(e->path);
	e->path = p;
	return true;
}

/* aux_lock held.  e found (its path and source kept, the file not): the
 * caller closes found. */
static void aux_found(struct ds_store *s, struct aux *e, const struct ds_found *found)
{
	if (!aux_set_path(e, found->path)) {
		e->state = AUX_NEW; /* (no memory is no answer to remember) */
	} else {
		e->source = found->source;
		e->state = AUX_FOUND;
	}
	pthread_cond_broadcast(&s->aux_cond);
}

/* aux_lock held.  e searched, none: err remembered (with where, for a
 * .dwo) until the miss TTL, why (may be NULL) in a debug message. */
static void aux_missed(struct ds_store *s, struct aux *e, int err, const char *where,
		       const char *why)
{
	char name[PATH_MAX];
	int ttl = s->ctx->miss_ttl_s;

	ds_debug(s->ctx, "%s %s: %s%s", aux_what[e->key.kind], aux_name(e, name, sizeof(name)),
		 ds_strerror(err), why ? why : "");
	free(e->where);
	e->where = where ? strdup(where) : NULL;
	e->err = err;
	/* (No memory is no answer to remember.) */
	e->miss_until_ns = ttl < 0 || err == -ENOMEM ? 0 : now_ns() + (int64_t)ttl * 1000000000;
	e->state = AUX_MISSING;
	pthread_cond_broadcast(&s->aux_cond);
}

/* aux_lock held.  e's file is open now (found and dw taken over): counted
 * in bytes_held.  false: no memory to remember where (found, dw left to
 * the caller, e not open). */
static bool aux_opened(struct ds_store *s, struct aux *e, struct ds_found *found,
		       struct ds__dwarf_aux **dw)
{
	char name[PATH_MAX];

	if (!aux_set_path(e, found->path)) {
		e->state = AUX_NEW;
		pthread_cond_broadcast(&s->aux_cond);
		return false;
	}
	if (e->key.kind == DS__AUX_DWP && !e->ids)
		ds__dwarf_dwp_ids(*dw, &e->ids, &e->nids); /* (none: every id is let in) */
	e->source = found->source;
	e->found = *found;
	*found = (struct ds_found){ .fd = -1 };
	e->dw = *dw;
	*dw = NULL;
	e->bytes = e->found.size + ds__dwarf_aux_bytes(e->dw);
	e->state = AUX_OPEN;
	e->recent = true;
	atomic_fetch_add(&s->bytes_held, e->bytes);
	atomic_fetch_add(&s->aux_bytes, e->bytes);
	atomic_fetch_add(&s->aux_open, 1);
	atomic_fetch_add(&s->aux_opens, 1);
	if (e->found.fd >= 0)
		atomic_fetch_add(&s->aux_fds, 1);
	if (e->key.kind == DS__AUX_DWP)
		atomic_fetch_add(&s->dwp_opens, 1);
	else if (e->key.kind == DS__AUX_DWO)
		atomic_fetch_add(&s->dwo_opens, 1);
	ds_debug(s->ctx, "%s %s: open, %llu bytes", aux_what[e->key.kind],
		 aux_name(e, name, sizeof(name)), (unsigned long long)e->bytes);
	pthread_cond_broadcast(&s->aux_cond);
	return true;
}

/* aux_lock held.  Close e's file; its record (where it is) stays. */
static void aux_close(struct ds_store *s, struct aux *e)
{
	atomic_fetch_sub(&s->bytes_held, e->bytes);
	atomic_fetch_sub(&s->aux_bytes, e->bytes);
	atomic_fetch_sub(&s->aux_open, 1);
	if (e->found.fd >= 0)
		atomic_fetch_sub(&s->aux_fds, 1);
	ds__dwarf_aux_close(e->dw);
	ds__found_release(&e->found);
	e->dw = NULL;
	e->bytes = 0;
	e->state = AUX_FOUND;
	pthread_cond_broadcast(&s->aux_cond);
}

/* aux_lock held.  Nobody holds or reads e: its file goes. */
static void aux_unused(struct ds_store *s, struct aux *e)
{
	if (e->state == AUX_OPEN && !e->holds && !e->pins)
		aux_close(s, e);
}

/* Open k's file at path, as its kind is checked (an alt file's build ID,
 * a package's identity and unit index, a .dwo's dwo id), no lock held.
 * A split file's descriptor is closed once it is mapped (a binary may
 * name thousands of .dwo files). */
static int aux_open_at(struct ds_store *s, const struct aux_key *k, const char *path,
		       const char *for_name, struct ds_found *found, struct ds__dwarf_aux **dw)
{
	const char *reason = "";
	struct stat st;
	int err;

	*dw = NULL;
	if (k->kind == DS__AUX_ALT) {
		err = ds__open_candidate(path, &k->bid, DS_ARTIFACT_DEBUGINFO, found, &reason);
	} else {
		err = ds__open_split(path, found, &st);
		if (!err && k->kind == DS__AUX_DWP &&
		    (st.st_dev != k->dev || st.st_ino != k->ino || st.st_size != k->size ||
		     (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != k->mtime_ns)) {
			reason = "another file now";
			err = -ESTALE;
		}
		if (!err && elf_cntl(found->elf, ELF_C_FDREAD) == 0) {
			close(found->fd);
			found->fd = -1;
		}
	}
	if (!err)
		err = ds__dwarf_aux_open(s->ctx, k->kind, found, k->id, for_name, dw);
	if (err) {
		ds_debug(s->ctx, "%s %s: %s", aux_what[k->kind], path,
			 *reason ? reason : ds_strerror(err));
		ds__found_release(found);
	}
	return err;
}

/* An alt file's search proper, with no lock held: the path its debug file
 * names (named: resolved by alt_path(); NULL: none), then the rules of
 * debuginfo (this machine, then debuginfod's cache and servers unless
 * local_only). */
static int aux_search(struct ds_store *s, const struct ds_build_id *bid, const char *named,
		      bool local_only, struct ds_found *found, struct ds_strbuf *why)
{
	const char *reason = "";
	int err;

	atomic_fetch_add(&s->aux_searches, 1);
	/* Where the debug file says it is (dwz -r's relative names too),
	 * if its build ID is the one asked for; then by build ID. */
	if (named && ds__open_candidate(named, bid, DS_ARTIFACT_DEBUGINFO, found, &reason) == 0)
		return 0;
	if (named && why)
		ds__strbuf_addf(why, " (at %s: %s)", named, *reason ? reason : "not there");
	err = ds__locate(s->ctx, bid, NULL, DS_ARTIFACT_DEBUGINFO, found, why);
	if (err == -ENOENT && !local_only)
		err = ds__fetch_found(s->ctx, bid, found, why);
	return err;
}

/* The path an alt file's name (from .gnu_debugaltlink) stands for: as it
 * is when absolute, else relative to the directory of the debug file that
 * names it (from; dwz -r writes such names).  NULL: none, or no memory. */
static char *alt_path(const char *name, const char *from)
{
	const char *slash = from ? strrchr(from, '/') : NULL;
	char *p;

	if (!name || !*name)
		return NULL;
	if (name[0] == '/')
		return strdup(name);
	if (!slash)
		return NULL;
	if (asprintf(&p, "%.*s/%s", (int)(slash - from), from, name) < 0)
		return NULL;
	return p;
}

/* The indexes' alt files (struct ds__aux_src): a hold on the opened DWARF
 * of bid, searched and opened by the first asker. */
static struct ds__aux *alt_get(void *arg, const struct ds_build_id *bid, const char *name,
			       const char *from)
{
	struct ds_store *s = arg;
	struct aux_key k = { .kind = DS__AUX_ALT, .bid = *bid };
	struct ds_found found = { .fd = -1 };
	struct ds_strbuf why = { 0 };
	struct ds__dwarf_aux *dw = NULL;
	struct aux *e, *out = NULL;
	char *path = NULL;
	enum ds_source source = DS_SOURCE_SELF;
	int prev = AUX_NEW, err = -ENOENT;

	pthread_mutex_lock(&s->aux_lock);
	e = aux_entry(s, &k, true);
	if (!e || !aux_claim(s, e, true, NULL, &prev)) {
		if (e && e->state == AUX_OPEN) {
			e->holds++;
			out = e;
		}
		pthread_mutex_unlock(&s->aux_lock);
		return (struct ds__aux *)out;
	}
	/* Found before (by prefetch, or by a reader since gone): opened
	 * where it was, else searched again. */
	if (prev == AUX_FOUND && e->path && !(path = strdup(e->path)))
		err = -ENOMEM;
	source = e->source;
	pthread_mutex_unlock(&s->aux_lock);

	if (path) {
		err = aux_open_at(s, &k, path, NULL, &found, &dw);
		found.source = source;
		free(path);
	}
	if (err && err != -ENOMEM) {
		char *named = alt_path(name, from);

		err = aux_search(s, bid, named, false, &found, &why);
		free(named);
		if (!err)
			err = ds__dwarf_aux_open(s->ctx, DS__AUX_ALT, &found, 0, NULL, &dw);
	}

	pthread_mutex_lock(&s->aux_lock);
	if (!err && aux_opened(s, e, &found, &dw)) {
		e->holds++;
		out = e;
		ds_debug(s->ctx, "dwz alt file %s (for %s)", e->path, name ? name : "?");
	} else {
		aux_missed(s, e, err ? err : -ENOMEM, NULL, why.buf);
	}
	pthread_mutex_unlock(&s->aux_lock);
	ds__dwarf_aux_close(dw);
	ds__found_release(&found);
	ds__strbuf_release(&why);
	return (struct ds__aux *)out;
}

/* A .dwo of w's id: searched where ds__dwo_candidates() says, each
 * candidate opened to check its id. */
struct dwo_try {
	struct ds_store *s;
	const struct aux_key *k;
	const struct ds__dwo_want *w;
	struct ds_found *found;
	struct ds__dwarf_aux **dw;
	int err;
};

static bool dwo_try(void *arg, const char *path)
{
	struct dwo_try *t = arg;

	t->err = aux_open_at(t->s, t->k, path, t->w->for_name, t->found, t->dw);
	if (t->err == -ENOMEM)
		return true;
	if (t->err)
		t->err = -ENOENT; /* (absent, or not it: the next place) */
	return !t->err;
}

/* The .dwo of w (open: opened, and a hold on it in *out; else only found,
 * nothing kept open).  0; -ENOENT: none; -ENOMEM. */
static int dwo_lookup(struct ds_store *s, const struct ds__dwo_want *w, bool open, struct aux **out)
{
	struct aux_key k = { .kind = DS__AUX_DWO, .id = w->id };
	struct ds_found found = { .fd = -1 };
	struct ds__dwarf_aux *dw = NULL;
	struct dwo_try t = { s, &k, w, &found, &dw, -ENOENT };
	char *where = NULL, *path = NULL;
	struct aux *e;
	int prev = AUX_NEW, err = 0;

	*out = NULL;
	/* A miss holds for the places it was looked in: those of the
	 * binary's and the debuginfo's directories (comp_dir and the debug
	 * directories are the same for every asker of one id). */
	if (asprintf(&where, "%s\n%s", w->binary ? w->binary : "", w->debug ? w->debug : "") < 0)
		return -ENOMEM;
	pthread_mutex_lock(&s->aux_lock);
	e = aux_entry(s, &k, true);
	if (!e || !aux_claim(s, e, open, where, &prev)) {
		err = !e ? -ENOMEM : e->state == AUX_MISSING ? e->err : 0;
		if (!err && open) {
			e->holds++;
			*out = e;
		}
		pthread_mutex_unlock(&s->aux_lock);
		free(where);
		return err;
	}
	if (prev == AUX_FOUND && e->path)
		path = strdup(e->path);
	pthread_mutex_unlock(&s->aux_lock);

	/* Where it was, else where it may be. */
	if (path)
		t.err = aux_open_at(s, &k, path, w->for_name, &found, &dw);
	if (t.err && t.err != -ENOMEM) {
		atomic_fetch_add(&s->aux_searches, 1);
		atomic_fetch_add(&s->dwo_searches, 1);
		ds__dwo_candidates(s->ctx, w->dwo_name, w->comp_dir, w->binary, w->debug, dwo_try,
				   &t);
	}
	err = t.err;

	pthread_mutex_lock(&s->aux_lock);
	if (!err) {
		ds_debug(s->ctx, "%s: split unit %016llx from %s", w->for_name,
			 (unsigned long long)w->id, found.path);
		if (!open) {
			aux_found(s, e, &found);
		} else if (aux_opened(s, e, &found, &dw)) {
			e->holds++;
			*out = e;
		} else {
			err = -ENOMEM;
		}
	} else {
		aux_missed(s, e, err, where, NULL);
	}
	pthread_mutex_unlock(&s->aux_lock);
	ds__dwarf_aux_close(dw);
	ds__found_release(&found);
	free(path);
	free(where);
	return err;
}

static struct ds__aux *dwo_get(void *arg, const struct ds__dwo_want *w)
{
	struct aux *e;

	dwo_lookup(arg, w, true, &e);
	return (struct ds__aux *)e;
}

/* A package of w: each candidate by its real path and identity, opened
 * (once) to read its unit index, refused unless it holds one of w's ids. */
struct dwp_try {
	struct ds_store *s;
	const struct ds__dwp_want *w;
	bool open;
	struct aux *e; /* the one taken (held if open) */
	char *path; /* its path (malloc()ed) */
	size_t held; /* how many of w's ids it holds */
	int err;
};

static bool id_in(const uint64_t *ids, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ids[mid] == id)
			return true;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* aux_lock held.  How many of w's ids the package e holds (all when its
 * index could not be copied). */
static size_t dwp_holds(const struct aux *e, const struct ds__dwp_want *w)
{
	size_t n = 0;

	if (!e->ids)
		return w->nids;
	for (size_t i = 0; i < w->nids; i++)
		n += id_in(e->ids, e->nids, w->ids[i]);
	return n;
}

static bool dwp_try(void *arg, const char *path)
{
	struct dwp_try *t = arg;
	struct ds_store *s = t->s;
	struct aux_key k = { .kind = DS__AUX_DWP };
	struct ds_found found = { .fd = -1 };
	struct ds__dwarf_aux *dw = NULL;
	char *rp = realpath(path, NULL);
	struct stat st;
	struct aux *e;
	int prev = AUX_NEW, err = 0;
	bool claimed, taken = false;

	if (!rp || stat(rp, &st) != 0 || !S_ISREG(st.st_mode)) {
		ds_debug(s->ctx, "%s: %s: %s", t->w->for_name, path, rp ? "not a file" : "absent");
		free(rp);
		return false;
	}
	k.dev = st.st_dev;
	k.ino = st.st_ino;
	k.size = st.st_size;
	k.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	pthread_mutex_lock(&s->aux_lock);
	e = aux_entry(s, &k, true);
	claimed = e && aux_claim(s, e, t->open, NULL, &prev);
	if (claimed) {
		pthread_mutex_unlock(&s->aux_lock);
		/* (Its identity is checked again on the descriptor.) */
		err = aux_open_at(s, &k, rp, t->w->for_name, &found, &dw);
		pthread_mutex_lock(&s->aux_lock);
		if (err)
			aux_missed(s, e, err, NULL, NULL);
		else if (!aux_opened(s, e, &found, &dw))
			err = -ENOMEM;
		else
			ds_debug(s->ctx, "%s: split units from %s (%zu units)", t->w->for_name, rp,
				 e->nids);
	}
	if (e && (e->state == AUX_OPEN || e->state == AUX_FOUND)) {
		t->held = dwp_holds(e, t->w);
		taken = t->held > 0;
		if (!taken)
			ds_warn(s->ctx, "%s: %s holds none of its %zu split units: not used",
				t->w->for_name, rp, t->w->nids);
		else if (t->open)
			e->holds++;
		if (taken && !(t->path = strdup(e->path ? e->path : rp)))
			t->err = -ENOMEM;
		t->e = taken ? e : NULL;
		/* (Opened to be read here only: closed now.) */
		aux_unused(s, e);
	} else if (!e) {
		t->err = -ENOMEM;
	}
	pthread_mutex_unlock(&s->aux_lock);
	ds__dwarf_aux_close(dw);
	ds__found_release(&found);
	free(rp);
	return taken || t->err == -ENOMEM;
}

static struct ds__aux *dwp_get(void *arg, const struct ds__dwp_want *w)
{
	struct dwp_try t = { arg, w, true, NULL, NULL, 0, 0 };

	ds__dwp_candidates(w->binary, w->debug, dwp_try, &t);
	free(t.path);
	return (struct ds__aux *)t.e;
}

/* A pin: the file open (again, where it was, if the budget closed it). */
static const struct ds__dwarf_aux *aux_pin(void *arg, struct ds__aux *h)
{
	struct ds_store *s = arg;
	struct aux *e = (struct aux *)h;
	struct ds_found found = { .fd = -1 };
	struct ds__dwarf_aux *dw = NULL;
	const struct ds__dwarf_aux *out = NULL;
	char *path = NULL;
	enum ds_source source;
	int err = -ENOMEM;

	pthread_mutex_lock(&s->aux_lock);
	e->pins++;
	while (e->state == AUX_LOADING)
		pthread_cond_wait(&s->aux_cond, &s->aux_lock);
	if (e->state == AUX_OPEN) {
		e->recent = true;
		out = e->dw;
		pthread_mutex_unlock(&s->aux_lock);
		return out;
	}
	if (e->state != AUX_FOUND || !e->path || !(path = strdup(e->path))) {
		e->pins--;
		pthread_mutex_unlock(&s->aux_lock);
		return NULL;
	}
	source = e->source;
	e->state = AUX_LOADING;
	pthread_mutex_unlock(&s->aux_lock);

	err = aux_open_at(s, &e->key, path, NULL, &found, &dw);
	found.source = source;

	pthread_mutex_lock(&s->aux_lock);
	if (!err && aux_opened(s, e, &found, &dw)) {
		atomic_fetch_add(&s->aux_reopens, 1);
		out = e->dw;
	} else {
		/* Gone, or another file there: the next asker searches. */
		ds_warn(s->ctx, "%s %s: cannot be opened again: %s", aux_what[e->key.kind], path,
			ds_strerror(err ? err : -ENOMEM));
		e->state = AUX_NEW;
		e->pins--;
		pthread_cond_broadcast(&s->aux_cond);
	}
	pthread_mutex_unlock(&s->aux_lock);
	ds__dwarf_aux_close(dw);
	ds__found_release(&found);
	free(path);
	return out;
}

static void aux_unpin(void *arg, struct ds__aux *h)
{
	struct ds_store *s = arg;
	struct aux *e = (struct aux *)h;

	pthread_mutex_lock(&s->aux_lock);
	e->pins--;
	aux_unused(s, e);
	pthread_mutex_unlock(&s->aux_lock);
}

/* A hold given back: the last one closes the file (its record, with the
 * path, stays for the next reader). */
static void aux_put(void *arg, struct ds__aux *h)
{
	struct ds_store *s = arg;
	struct aux *e = (struct aux *)h;

	pthread_mutex_lock(&s->aux_lock);
	e->holds--;
	aux_unused(s, e);
	pthread_mutex_unlock(&s->aux_lock);
}

/* Over the budget: the files nobody reads now (held by indexes, not
 * pinned), those not read since the last pass first (CLOCK); they are
 * opened again when read.  di_lock held (aux_lock is taken under it). */
static void aux_trim(struct ds_store *s)
{
	pthread_mutex_lock(&s->aux_lock);
	for (int pass = 0; pass < 2 && over_budget(s); pass++) {
		for (size_t b = 0; b <= s->aux_mask; b++) {
			for (struct aux *e = s->aux_tab[b]; e; e = e->next) {
				if (!over_budget(s))
					goto out;
				if (e->state != AUX_OPEN || e->pins)
					continue;
				/* Over the descriptors alone: a mapped .dwo holds none. */
				if (!over_mem(s) && e->found.fd < 0)
					continue;
				if (pass == 0 && e->recent) {
					e->recent = false;
					continue;
				}
				aux_close(s, e);
				atomic_fetch_add(&s->aux_closes, 1);
			}
		}
	}
out:
	pthread_mutex_unlock(&s->aux_lock);
}

/* The store goes: no index is left to read any. */
static void aux_free_all(struct ds_store *s)
{
	for (size_t b = 0; s->aux_tab && b <= s->aux_mask; b++) {
		while (s->aux_tab[b]) {
			struct aux *e = s->aux_tab[b];

			s->aux_tab[b] = e->next;
			ds__dwarf_aux_close(e->dw);
			ds__found_release(&e->found);
			free(e->path);
			free(e->ids);
			free(e->where);
			free(e);
		}
	}
	free(s->aux_tab);
}

/* The alt file d's debuginfo names (size 0: none, or no debuginfo). */
/* The alt file d's debuginfo names: its build ID, and (named, may be
 * NULL) the path the name stands for, malloc()ed. */
static void altlink_of(struct ds_dso *d, struct ds_build_id *bid, char **named)
{
	const char *name;

	bid->size = 0;
	if (named)
		*named = NULL;
	if (ds_dso_pin(d) != 0)
		return;
	if (!ds__elf_altlink(d->di.elf, &name, bid))
		bid->size = 0;
	else if (named)
		*named = alt_path(name, atomic_load(&d->di.path));
	ds_dso_unpin(d);
}

DS_API int ds_dso_alt_file(struct ds_dso *d, struct ds_build_id *bid, char **path)
{
	struct ds_store *s;
	struct aux_key k = { .kind = DS__AUX_ALT };
	struct ds_found found = { .fd = -1 };
	struct ds_strbuf why = { 0 };
	char *named = NULL;
	struct aux *e;
	int prev, err;

	if (path)
		*path = NULL;
	if (!d || !bid)
		return -EINVAL;
	s = d->store;
	altlink_of(d, bid, &named);
	if (!bid->size)
		return -ENODATA;
	k.bid = *bid;
	pthread_mutex_lock(&s->aux_lock);
	e = aux_entry(s, &k, true);
	if (!e) {
		pthread_mutex_unlock(&s->aux_lock);
		free(named);
		return -ENOMEM;
	}
	if (aux_claim(s, e, false, NULL, &prev)) {
		pthread_mutex_unlock(&s->aux_lock);
		err = aux_search(s, bid, named, false, &found, &why);
		pthread_mutex_lock(&s->aux_lock);
		if (err)
			aux_missed(s, e, err, NULL, why.buf);
		else
			aux_found(s, e, &found);
	}
	err = e->state == AUX_MISSING ? e->err : e->state == AUX_NEW ? -ENOMEM : 0;
	if (!err && path && !(*path = strdup(e->path)))
		err = -ENOMEM;
	pthread_mutex_unlock(&s->aux_lock);
	ds__found_release(&found);
	ds__strbuf_release(&why);
	free(named);
	return err;
}

/* Prefetch's second round: the alt files the debuginfo of dsos names
 * (each build ID once, whichever stores ask), those not found locally
 * fetched in one batch.  The store keeps where each is (AUX_FOUND) or its
 * miss; nothing is opened.  0, or the batch's negative error. */
struct alt_want {
	struct ds_store *s;
	struct aux *e; /* claimed (AUX_LOADING) */
	size_t req; /* SIZE_MAX: found locally */
};

static int prefetch_alts(struct ds_dso **dsos, size_t n, const struct ds_fetch_opts *opts)
{
	struct alt_want *want = calloc(n, sizeof(*want));
	struct ds_fetch_req *reqs = calloc(n, sizeof(*reqs));
	size_t nwant = 0, nreq = 0;
	int err = 0;

	if (!want || !reqs) {
		free(want);
		free(reqs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		struct ds_store *s = dsos[i]->store;
		struct ds_found found = { .fd = -1 };
		struct aux_key k = { .kind = DS__AUX_ALT };
		struct aux *e;
		bool mine = false;
		int lerr, prev;

		char *named = NULL;

		altlink_of(dsos[i], &k.bid, &named);
		if (!k.bid.size)
			continue;
		pthread_mutex_lock(&s->aux_lock);
		e = aux_entry(s, &k, true);
		/* (One this round has claimed already: not waited for.) */
		for (size_t j = 0; e && j < nwant && !mine; j++)
			mine = want[j].e == e;
		if (!e || mine || !aux_claim(s, e, false, NULL, &prev)) {
			pthread_mutex_unlock(&s->aux_lock);
			free(named);
			continue; /* known already (or no memory: asked later) */
		}
		pthread_mutex_unlock(&s->aux_lock);
		lerr = aux_search(s, &k.bid, named, true, &found, NULL);
		free(named);
		named = NULL;
		want[nwant] = (struct alt_want){ s, e, SIZE_MAX };
		if (lerr == -ENOENT) {
			for (size_t j = 0; j < nreq; j++)
				if (ds_build_id_equal(&reqs[j].build_id, &k.bid))
					want[nwant].req = j;
			if (want[nwant].req == SIZE_MAX) {
				reqs[nreq].build_id = k.bid;
				reqs[nreq].what = DS_ARTIFACT_DEBUGINFO;
				want[nwant].req = nreq++;
			}
		} else {
			pthread_mutex_lock(&s->aux_lock);
			if (lerr)
				aux_missed(s, e, lerr, NULL, NULL);
			else
				aux_found(s, e, &found);
			pthread_mutex_unlock(&s->aux_lock);
		}
		ds__found_release(&found);
		nwant++;
	}
	if (nreq)
		err = ds_fetch_batch(dsos[0]->store->ctx, reqs, nreq, opts);
	for (size_t i = 0; i < nwant; i++) {
		struct ds_store *s = want[i].s;
		struct ds_found found = { .fd = -1 };
		struct ds_strbuf why = { 0 };
		int ferr = -ECANCELED;

		if (want[i].req == SIZE_MAX)
			continue;
		if (err >= 0)
			ferr = ds__fetch_found_req(s->ctx, &reqs[want[i].req], &found, &why);
		pthread_mutex_lock(&s->aux_lock);
		if (ferr == -ECANCELED) { /* not answered: the next asker searches */
			want[i].e->state = AUX_NEW;
			pthread_cond_broadcast(&s->aux_cond);
		} else if (ferr) {
			aux_missed(s, want[i].e, ferr, NULL, why.buf);
		} else {
			aux_found(s, want[i].e, &found);
		}
		pthread_mutex_unlock(&s->aux_lock);
		ds__found_release(&found);
		ds__strbuf_release(&why);
	}
	for (size_t j = 0; j < nreq; j++)
		free(reqs[j].path);
	free(reqs);
	free(want);
	return err < 0 ? err : 0;
}

/* What the store has of the split units d's debuginfo needs (search: look
 * for what it does not know yet, locally: debuginfod serves no split
 * DWARF), nothing kept open.  0; -ENODATA: no debuginfo, or not split;
 * -ENOMEM. */
static int split_survey(struct ds_dso *d, struct ds_split_files *out)
{
	struct ds_store *s = d->store;
	struct ds__skeleton *sk = NULL;
	struct dwp_try t = { s, NULL, false, NULL, NULL, 0, 0 };
	const char *debug, *binary;
	uint64_t *ids = NULL;
	size_t n = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if (ds_dso_pin(d) != 0)
		return -ENODATA;
	debug = ds_debuginfo_path(&d->di);
	binary = d->path && strcmp(d->path, debug) ? d->path : NULL;
	err = ds__dwarf_skeletons(s->ctx, d->di.elf, debug, &sk, &n);
	ds_dso_unpin(d);
	if (!err && !n)
		err = -ENODATA;
	if (!err && !(ids = malloc(n * sizeof(*ids))))
		err = -ENOMEM;
	if (err)
		goto out;
	for (size_t i = 0; i < n; i++)
		ids[i] = sk[i].id;
	/* The package first, as the index reads them; the units it lacks
	 * from their .dwo files. */
	t.w = &(struct ds__dwp_want){ binary, debug, ids, n, debug };
	ds__dwp_candidates(binary, debug, dwp_try, &t);
	if ((err = t.err))
		goto out;
	out->units = n;
	out->in_dwp = t.held;
	out->dwp = t.path;
	t.path = NULL;
	for (size_t i = 0; i < n; i++) {
		struct ds__dwo_want w = { sk[i].id, sk[i].dwo_name, sk[i].comp_dir, binary, debug,
					  debug };
		struct aux *e;
		bool in_pkg;

		pthread_mutex_lock(&s->aux_lock);
		in_pkg = t.e && id_in(t.e->ids, t.e->nids, sk[i].id);
		pthread_mutex_unlock(&s->aux_lock);
		if (in_pkg)
			continue;
		err = dwo_lookup(s, &w, false, &e);
		if (err == -ENOMEM)
			goto out;
		if (err)
			out->missing++;
		else
			out->in_dwo++;
		err = 0;
	}
out:
	if (err) {
		free(out->dwp);
		memset(out, 0, sizeof(*out));
	}
	free(t.path);
	free(ids);
	free(sk);
	return err;
}

DS_API int ds_dso_split_files(struct ds_dso *d, struct ds_split_files *out)
{
	if (!d || !out)
		return -EINVAL;
	return split_survey(d, out);
}

/* Prefetch's split round: the .dwp and .dwo files of every DSO's split
 * units, found locally.  debuginfod has none to give: it indexes and
 * serves files by build ID (debuginfo, executable, source, section;
 * elfutils 0.188's debuginfod(8)), and neither a .dwo nor a .dwp has one.
 * The store remembers what it found; nothing is kept open. */
static void prefetch_split(struct ds_dso **dsos, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ds_split_files sf;

		if (atomic_load(&dsos[i]->di_state) == DI_MISSING)
			continue;
		if (split_survey(dsos[i], &sf) == 0)
			free(sf.dwp);
	}
}

/* Every DSO not searched yet (or whose miss expired), with a reference. */
static struct ds_dso **unsearched(struct ds_store *s, size_t *n_out)
{
	struct ds_dso **v = NULL;
	size_t n = 0, cap = 0;

	pthread_rwlock_rdlock(&s->lock);
	for (int t = T_BID; t <= T_PATH; t++) {
		struct htab *tab = t == T_BID ? &s->by_bid : &s->by_path;

		for (size_t b = 0; b <= tab->mask; b++) {
			for (struct ds_dso *d = tab->buckets[b]; d; d = *next_of(d, t)) {
				int st = atomic_load(&d->di_state);

				/* by_path has them all but those with no path */
				if (t == T_BID && d->path)
					continue;
				if (st != DI_UNKNOWN && !(st == DI_MISSING && !miss_still_valid(d)))
					continue;
				if (n == cap) {
					size_t nc = cap ? 2 * cap : 64;
					struct ds_dso **nv = realloc(v, nc * sizeof(*v));

					if (!nv)
						goto out;
					v = nv;
					cap = nc;
				}
				if (get_unless_zero(d))
					v[n++] = d;
			}
		}
	}
out:
	pthread_rwlock_unlock(&s->lock);
	*n_out = n;
	return v;
}

/* The executable's program headers of a DSO whose index has only a debug
 * file's (offsets_bad), found once (locally, else fetched) and kept;
 * NULL when there is none: the debug file's segments answer then. */
static const struct ds__loadmap *exec_loadmap(struct ds_dso *d)
{
	struct ds_store *s = d->store;
	struct ds__loadmap *lm = NULL;
	struct ds_build_id bid;

	pthread_mutex_lock(&s->di_lock);
	while (d->exec_state == EXEC_LOADING)
		pthread_cond_wait(&s->di_cond, &s->di_lock);
	if (d->exec_state == EXEC_KNOWN) {
		lm = d->exec_map;
		pthread_mutex_unlock(&s->di_lock);
		return lm;
	}
	d->exec_state = EXEC_LOADING;
	pthread_mutex_unlock(&s->di_lock);
	pthread_rwlock_rdlock(&s->lock);
	bid = d->id.build_id;
	pthread_rwlock_unlock(&s->lock);
	if (bid.size && ds__loadmap_find(s->ctx, &bid, NULL, true, &lm) == 0)
		ds_debug(s->ctx, "file offsets of %s through its executable's headers",
			 d->path ? d->path : "a DSO");
	pthread_mutex_lock(&s->di_lock);
	d->exec_map = lm;
	d->exec_state = EXEC_KNOWN;
	pthread_cond_broadcast(&s->di_cond);
	pthread_mutex_unlock(&s->di_lock);
	return lm;
}

/* A prefetched executable's headers (path: the batch's file). */
static void exec_adopt(struct ds_dso *d, const char *path)
{
	struct ds_store *s = d->store;
	struct ds__loadmap *lm = NULL;

	if (ds__loadmap_find(s->ctx, &d->id.build_id, path, false, &lm))
		return;
	pthread_mutex_lock(&s->di_lock);
	if (d->exec_state == EXEC_UNKNOWN) {
		d->exec_map = lm;
		d->exec_state = EXEC_KNOWN;
		lm = NULL;
	}
	pthread_mutex_unlock(&s->di_lock);
	free(lm);
}

/* The DSO has a binary on this machine, or a local executable: its file
 * offsets need nothing fetched. */
static bool exec_local(struct ds_dso *d)
{
	struct ds_found f = { .fd = -1 };
	struct stat st;

	if (d->path && stat(d->path, &st) == 0)
		return true;
	if (ds__locate(d->store->ctx, &d->id.build_id, NULL, DS_ARTIFACT_EXECUTABLE, &f, NULL))
		return false;
	ds__found_release(&f);
	return true;
}

/* Prefetch for a list of DSOs of one context (any of its stores). */
int ds__dsos_prefetch(struct ds_dso **dsos, size_t n, bool dwarf,
		      const struct ds_fetch_opts *opts)
{
	return ds__dsos_prefetch_with(dsos, n, dwarf, NULL, 0, opts);
}

struct ds_context *ds__store_ctx(struct ds_store *s)
{
	return s->ctx;
}

/* The same, with nextra requests of the caller's (executables the
 * unwinder needs) in the one batch; their results are the caller's. */
int ds__dsos_prefetch_with(struct ds_dso **dsos, size_t n, bool dwarf, struct ds_fetch_req *extra,
			   size_t nextra, const struct ds_fetch_opts *opts)
{
	const struct ds_debuginfo *di;
	struct ds_fetch_req *reqs;
	size_t nreq = 0, *of;
	int left = 0, err = 0;

	if (!n)
		return nextra ? -EINVAL : 0; /* the context is the DSOs' */
	/* a DSO's debuginfo, maybe its executable (file offsets); the extra */
	reqs = calloc(2 * n + nextra, sizeof(*reqs));
	of = calloc(n, sizeof(*of));
	if (!reqs || !of) {
		free(reqs);
		free(of);
		return -ENOMEM;
	}
	/* Local sources first; what they lack goes into one batch. */
	for (size_t i = 0; i < n; i++) {
		of[i] = SIZE_MAX;
		if (debuginfo_slow(dsos[i], &di, true, NULL) != -ENOENT ||
		    !dsos[i]->id.build_id.size)
			continue;
		reqs[nreq].build_id = dsos[i]->id.build_id;
		reqs[nreq].what = DS_ARTIFACT_DEBUGINFO;
		of[i] = nreq++;
		/* No binary here to read file offsets from: the executable's
		 * headers, in the same batch. */
		if (dsos[i]->store->file_offsets && !exec_local(dsos[i])) {
			reqs[nreq].build_id = dsos[i]->id.build_id;
			reqs[nreq].what = DS_ARTIFACT_EXECUTABLE;
			nreq++;
		}
	}
	for (size_t i = 0; i < nextra; i++)
		reqs[nreq + i] = extra[i];
	if (nreq + nextra)
		err = ds_fetch_batch(dsos[0]->store->ctx, reqs, nreq + nextra, opts);
	for (size_t i = 0; i < nextra; i++)
		extra[i] = reqs[nreq + i];
	/* Each takes its answer: the batch's (neither the local search nor
	 * the servers asked again), else what it has (or a remembered miss). */
	for (size_t i = 0; err >= 0 && i < n; i++) {
		size_t x = of[i] + 1;

		if (of[i] != SIZE_MAX && x < nreq && reqs[x].what == DS_ARTIFACT_EXECUTABLE &&
		    !reqs[x].err && ds_build_id_equal(&reqs[x].build_id, &reqs[of[i]].build_id))
			exec_adopt(dsos[i], reqs[x].path);
		if (of[i] != SIZE_MAX)
			left += debuginfo_slow(dsos[i], &di, false, &reqs[of[i]]) != 0;
		else
			left += ds_dso_debuginfo(dsos[i], &di) != 0;
	}
	/* Now that the debuginfo is here, the alt files and the split DWARF
	 * it names. */
	if (err >= 0 && dwarf)
		err = prefetch_alts(dsos, n, opts);
	if (err >= 0 && dwarf)
		prefetch_split(dsos, n);
	for (size_t i = 0; i < nreq; i++)
		free(reqs[i].path);
	free(reqs);
	free(of);
	return err < 0 ? err : left;
}

DS_API int ds_store_prefetch(struct ds_store *s, const struct ds_fetch_opts *opts)
{
	struct ds_dso **dsos;
	size_t n;
	int rc;

	if (!s)
		return -EINVAL;
	dsos = unsearched(s, &n);
	if (!dsos && n)
		return -ENOMEM;
	rc = ds__dsos_prefetch(dsos, n, true, opts);
	for (size_t i = 0; i < n; i++)
		ds_dso_put(dsos[i]);
	free(dsos);
	return rc;
}

/* ------------------------------------------------------------ symbolize */

/* Whether d's index answers a query (full: one that needs DWARF); or,
 * through *err, that its last build failed for such a query.  Built
 * without debuginfo that has turned up since (installed, fetched, a miss
 * whose TTL ran out) answers nothing: build again.  di_lock held. */
static bool symbols_settled(struct ds_dso *d, const struct ds_debuginfo *di, bool full, int *err)
{
	int state = atomic_load(&d->sym_state);

	*err = 0;
	if (state != SYM_READY && state != SYM_FAILED)
		return false;
	if (di && !atomic_load(&d->sym_from_debuginfo))
		return false;
	if (state == SYM_READY && (!full || ds__symbols_full(atomic_load(&d->sym))))
		return true;
	if (d->sym_err && (d->sym_err_full || !full)) {
		*err = d->sym_err;
		return true;
	}
	return false;
}

/* A replaced index: a reader may hold it still. */
static void retire(struct ds_dso *d, struct ds_symbols *old)
{
	struct retired_sym *r = malloc(sizeof(*r));

	ds__symbols_unaccount(old);
	if (!r)
		return; /* leaked rather than freed under a reader */
	r->S = old;
	r->from_debuginfo = atomic_load(&d->sym_from_debuginfo);
	r->next = d->sym_retired;
	d->sym_retired = r;
}

/* Build the DSO's index (full: with DWARF; else names only, unless it has
 * a full one already), or wait for the thread that builds it.  The caller
 * holds a pin when the DSO has debuginfo. */
static int symbols_slow(struct ds_dso *d, const struct ds_debuginfo *di, bool full)
{
	struct ds_store *s = d->store;
	struct ds_symbols *S = NULL;
	struct ds__symfile_key key = { .debug_size = 0 };
	bool keyed = false, loaded = false, stripped;
	Elf *binary = NULL;
	int err, fd = -1;

	pthread_mutex_lock(&s->di_lock);
	while (atomic_load(&d->sym_state) == SYM_BUILDING)
		pthread_cond_wait(&s->di_cond, &s->di_lock);
	if (symbols_settled(d, di, full, &err)) {
		pthread_mutex_unlock(&s->di_lock);
		return err;
	}
	atomic_store(&d->sym_state, SYM_BUILDING);
	pthread_mutex_unlock(&s->di_lock);

	/* The binary itself gives ELF symbols when the debuginfo has none
	 * (MiniDebugInfo, .dynsym), and is the whole story without one. */
	if (d->path && (!di || strcmp(d->path, ds_debuginfo_path(di)))) {
		fd = ds__elf_open_fd(d->path);
		if (fd >= 0)
			binary = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	/* A full index may have been saved by an earlier process. */
	if (full && di && !s->ctx->cache.symindex_off)
		keyed = ds__symfile_key(&key, di->bid, di->fd, di->elf, fd, binary) == 0;
	if (keyed)
		loaded = ds__symfile_load(s->ctx, di, &key, &s->aux_src, &S) == 0;
	err = loaded ? 0
		     : ds__symbols_build(s->ctx, di ? di->elf : NULL,
					 di ? ds_debuginfo_path(di) : NULL, binary, d->path, full,
					 &s->aux_src, &S);
	/* (Without the binary, the segments are the debuginfo's.) */
	stripped = !err && !binary && di && ds__loadmap_stripped(di->elf);
	if (binary)
		elf_end(binary);
	if (fd >= 0)
		close(fd);

	pthread_mutex_lock(&s->di_lock);
	if (!err) {
		struct ds_symbols *old = atomic_load(&d->sym);

		/* (An old one from the debuginfo has readers with pins; one
		 * from before it, readers without.) */
		if (old)
			retire(d, old);
		if (loaded)
			atomic_fetch_add(&s->symindex_loads, 1);
		else
			atomic_fetch_add(ds__symbols_read_dwarf(S) ? &s->dwarf_builds
								   : &s->symtab_builds,
					 1);
		d->sym_key = key;
		d->sym_keyed = keyed;
		atomic_store(&d->sym_from_debuginfo, di != NULL);
		atomic_store(&d->offsets_bad, stripped);
		ds__symbols_account(S, &s->bytes_held, &s->units_built);
		if (di)
			ring_touch(d);
		d->sym_err = 0;
		atomic_store_explicit(&d->sym, S, memory_order_release);
		atomic_store(&d->sym_state, SYM_READY);
		if (has_budget(s))
			enforce_budget(s, d);
	} else {
		d->sym_err = err;
		d->sym_err_full = full || !di; /* without debuginfo, one tier */
		/* Keep what we had: a names-only index still answers
		 * names-only queries. */
		atomic_store(&d->sym_state, atomic_load(&d->sym) ? SYM_READY : SYM_FAILED);
	}
	pthread_cond_broadcast(&s->di_cond);
	pthread_mutex_unlock(&s->di_lock);
	return err;
}

/* Pinned (if the DSO has debuginfo) and the index ready, with DWARF if
 * full; *pinned says whether to unpin. */
static int symbols_get(struct ds_dso *d, bool full, struct ds_symbols **out, bool *pinned)
{
	const struct ds_debuginfo *di = NULL;
	int err;

	*pinned = false;
	err = ds_dso_debuginfo(d, &di);
	if (!err) {
		err = ds_dso_pin(d);
		if (err)
			return err;
		*pinned = true;
	} else if (err != -ENOENT && err != -ENODATA) {
		return err; /* a real failure, not "there is none" */
	} else {
		di = NULL;
	}
	/* The index only changes under a builder's pin or, built without
	 * debuginfo, is retired, never freed: what we load stays valid. */
	*out = NULL;
	if (atomic_load_explicit(&d->sym_state, memory_order_acquire) == SYM_READY &&
	    !(di && !atomic_load(&d->sym_from_debuginfo)))
		*out = atomic_load_explicit(&d->sym, memory_order_acquire);
	if (!*out || (full && !ds__symbols_full(*out))) {
		err = symbols_slow(d, di, full);
		if (err)
			goto fail;
		*out = atomic_load_explicit(&d->sym, memory_order_acquire);
	}
	if (*out)
		return 0;
	err = -ENOENT;
fail:
	if (*pinned)
		ds_dso_unpin(d);
	*pinned = false;
	return err;
}

/* CU builds grow an index after it was counted: past the budget, other
 * DSOs' debuginfo (and indexes) make room, as when it was built. */
static void symbols_budget(struct ds_dso *d)
{
	struct ds_store *s = d->store;

	if (!over_budget(s))
		return;
	pthread_mutex_lock(&s->di_lock);
	enforce_budget(s, d);
	pthread_mutex_unlock(&s->di_lock);
}

/* S, of d, has just been completed (every CU built): save it for the
 * next process (lib/symfile.c).  Failures are only logged. */
static void symbols_completed(struct ds_dso *d, struct ds_symbols *S)
{
	struct ds_store *s = d->store;
	struct ds__symfile_key key;
	bool save;

	pthread_mutex_lock(&s->di_lock);
	/* (A mapped index is only reported complete when one of its parts
	 * failed its check: the file is then written anew.) */
	save = d->sym_keyed && atomic_load(&d->sym) == S;
	key = d->sym_key;
	pthread_mutex_unlock(&s->di_lock);
	/* (The caller holds the pin of an index built from the debuginfo.) */
	if (save && ds__symfile_save(s->ctx, &d->di, &key, S, NULL) == 0)
		atomic_fetch_add(&s->symindex_saves, 1);
}

DS_API int ds_dso_save_index(struct ds_dso *d, char **path_out)
{
	struct ds__symfile_key key;
	struct ds_symbols *S;
	bool pinned, keyed;
	int err;

	if (path_out)
		*path_out = NULL;
	if (!d)
		return -EINVAL;
	if (d->store->ctx->cache.symindex_off)
		return -ENOTSUP;
	err = symbols_get(d, true, &S, &pinned);
	if (err)
		return err;
	pthread_mutex_lock(&d->store->di_lock);
	keyed = pinned && d->sym_keyed && atomic_load(&d->sym) == S;
	key = d->sym_key;
	pthread_mutex_unlock(&d->store->di_lock);
	/* (A mapped index is written again: the same bytes, renamed over
	 * the file it maps, whose inode stays while it is mapped.) */
	err = keyed ? ds__symfile_save(d->store->ctx, &d->di, &key, S, path_out) : -ENODATA;
	if (!err)
		atomic_fetch_add(&d->store->symindex_saves, 1);
	if (pinned)
		ds_dso_unpin(d);
	return err;
}

DS_API int ds_dso_symbolize_batch(struct ds_dso *d, const uint64_t *addrs, size_t n,
				  unsigned int flags, struct ds_sym_batch *b)
{
	const uint64_t *vaddrs;
	struct ds_symbols *S;
	size_t nv;
	bool pinned;
	int err;

	if (!b)
		return -EINVAL;
	if (!d || (!addrs && n)) {
		ds__sym_batch_start(b, 0);
		return -EINVAL;
	}
	err = ds__sym_batch_start(b, n);
	if (err || !n)
		return err; /* a batch of 0 builds nothing */
	err = symbols_get(d, !(flags & DS_SYM_NO_LINES), &S, &pinned);
	if (err) {
		ds__sym_batch_fail(b, addrs, err);
		return err;
	}
	nv = ds__sym_batch_sort(b, S,
				(flags & DS_SYM_FILE_OFFSET) && atomic_load(&d->offsets_bad)
					? exec_loadmap(d)
					: NULL,
				addrs, flags, &vaddrs);
	/* Names only never read DWARF: nothing to build ahead. */
	if (nv && !(flags & DS_SYM_NO_LINES))
		ds__symbols_prepare(S, vaddrs, nv); /* (-ENOMEM: lookups say it) */
	err = ds__sym_batch_lookup(b, S, flags);
	/* Complete now (by this batch, or a saved index's damaged CU built
	 * again by its lookups): then save it, once. */
	if (nv && !(flags & DS_SYM_NO_LINES) && ds__symbols_newly_complete(S))
		symbols_completed(d, S);
	if (pinned)
		ds_dso_unpin(d);
	symbols_budget(d);
	return err;
}

/* One address: a batch of one, its answer copied out. */
DS_API int ds_dso_symbolize(struct ds_dso *d, uint64_t addr, unsigned int flags,
			    struct ds_sym_result *out)
{
	struct ds_sym_batch *b;
	const struct ds_sym_answer *a;
	size_t n;
	int err;

	if (!d || !out)
		return -EINVAL;
	*out = (struct ds_sym_result){ .addr = addr };
	b = ds_sym_batch_new();
	if (!b)
		return -ENOMEM;
	err = ds_dso_symbolize_batch(d, &addr, 1, flags, b);
	a = ds_sym_batch_answers(b, &n);
	if (n == 1)
		err = ds__sym_result_from(a, out);
	ds_sym_batch_free(b);
	return err;
}
