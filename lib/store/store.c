/* SPDX-License-Identifier: MIT */
/*
 * The store: one machine's DSOs, indexed by build ID, path and inode, each
 * DSO owning its debuginfo, rather than a global list of fetched paths:
 * the memory comes back when the DSO goes, and each machine's store has
 * locks of its own.
 *
 * Locking:
 *   store->lock (rwlock)   the three indexes and every DSO's id;
 *   store->di_lock (mutex) debuginfo state changes, the CLOCK ring of open
 *                          debuginfos, budget accounting, miss messages.
 *   store->aux_lock (mutex) the table of auxiliary files (dwz alt files,
 *                          .dwp and .dwo files: lib/store/storeaux.c); a leaf:
 *                          nothing else is taken under it (the budget
 *                          takes it under di_lock).
 *   store->keep_lock (mutex) the kept list (keep_dsos, below); a leaf,
 *                          taken under store->lock by lookups.
 * The structures are in lib/store/store_impl.h.
 * Searching and opening files happen with neither held.
 *
 * Lifetime: the indexes hold no reference.  The last ds_dso_put() unlinks
 * the DSO under the write lock and frees it; a lookup racing with it skips
 * a DSO whose count already reached zero (get-unless-zero), so a dying DSO
 * is never handed out.  Each DSO holds a reference on its store, and each
 * store one on its context, so the caller may free them in any order.
 *
 * Kept DSOs (keep_dsos > 0): the last put may leave the DSO in the indexes
 * with no reference, on the store's kept list, instead of freeing it.  The
 * invariant, true whenever no one holds keep_lock:
 *   d->kept  <=>  d is on the kept list  =>  d->refcnt == 0, and the store
 *   (not a dying put) owns d.
 * A count of zero with kept false is a dying DSO, as without keep_dsos.
 * Both edges of the zero window are crossed under keep_lock only: the
 * put that may be the last (count 1) sets kept, then decrements, and
 * clears kept again if a lookup took a reference meanwhile; a lookup whose
 * get-unless-zero failed revives a kept DSO (off the list, count 0 -> 1)
 * under keep_lock, else skips it.  So a lookup either revives the DSO or
 * finds it gone, and a DSO taken off the list to be freed (the least
 * recently put one past keep_dsos, or all at ds_store_free()) has kept
 * false before keep_lock is let go: no lookup can revive it while
 * dso_free() unlinks it under the write lock.  Lookups read DSOs under
 * store->lock, which dso_free() needs to unlink them before the memory
 * goes.
 */
#define _GNU_SOURCE

#include <gelf.h>
#include <unistd.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store_impl.h"

/* ------------------------------------------------------------- hashing */

static uint64_t hash_ino(const struct ds_dso_id *id)
{
	return ds__mix64(id->ino ^ ds__mix64(((uint64_t)id->maj << 32) | id->min));
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
	return which == T_BID ? ds__hash_bid(&d->id.build_id)
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

/* A count of zero read in a store that keeps DSOs: held after all, or
 * kept.  (A last put sets kept before its release of the count: a zero
 * read with acquire sees kept set, or cleared since by whoever took it off
 * the list.) */
static __attribute__((noinline, cold)) bool kept_or_held(struct ds_dso *d)
{
	return atomic_load_explicit(&d->refcnt, memory_order_acquire) > 0 ||
	       atomic_load_explicit(&d->kept, memory_order_relaxed);
}

/* Held, or kept: worth a take().  Held already, no ordering is needed:
 * the store without keep_dsos reads what it did. */
static inline bool alive(struct ds_dso *d)
{
	return atomic_load_explicit(&d->refcnt, memory_order_relaxed) > 0 ||
	       (d->keep && kept_or_held(d));
}

struct path_key {
	const char *path;
	uint64_t hash;
	bool hashed;
};

static uint64_t path_hash(struct path_key *k)
{
	if (!k->hashed) {
		k->hash = ds__hash_bytes(k->path, strlen(k->path));
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
		d = s->by_bid.buckets[ds__hash_bid(&id->build_id) & s->by_bid.mask];
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

/* ------------------------------------------------------------ kept DSOs */

/* keep_lock held for all three. */
static void kept_append(struct ds_store *s, struct ds_dso *d)
{
	d->kept_next = NULL;
	d->kept_prev = s->kept_tail;
	if (s->kept_tail)
		s->kept_tail->kept_next = d;
	else
		s->kept_head = d;
	s->kept_tail = d;
	atomic_fetch_add(&s->n_kept, 1);
}

static void kept_unlink(struct ds_store *s, struct ds_dso *d)
{
	if (d->kept_prev)
		d->kept_prev->kept_next = d->kept_next;
	else
		s->kept_head = d->kept_next;
	if (d->kept_next)
		d->kept_next->kept_prev = d->kept_prev;
	else
		s->kept_tail = d->kept_prev;
	d->kept_prev = d->kept_next = NULL;
	atomic_fetch_sub(&s->n_kept, 1);
}

/* The least recently put kept DSO, off the list to be freed. */
static struct ds_dso *kept_pop_oldest(struct ds_store *s)
{
	struct ds_dso *d = s->kept_head;

	kept_unlink(s, d);
	atomic_store(&d->kept, false);
	return d;
}

/* A lookup's reference to d, whose get_unless_zero() failed: d off the
 * kept list if it is on it, else (dying) none. */
static __attribute__((noinline, cold)) bool revive(struct ds_store *s, struct ds_dso *d)
{
	bool ok = true;

	pthread_mutex_lock(&s->keep_lock);
	if (atomic_load(&d->kept)) {
		kept_unlink(s, d);
		atomic_store(&d->kept, false);
		atomic_store(&d->refcnt, 1);
		atomic_fetch_add(&s->kept_hits, 1);
	} else {
		ok = get_unless_zero(d); /* revived meanwhile by another */
	}
	pthread_mutex_unlock(&s->keep_lock);
	return ok;
}

/* A reference to d, found by a lookup under store->lock. */
static inline bool take(struct ds_store *s, struct ds_dso *d)
{
	return get_unless_zero(d) || (d->keep && revive(s, d));
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

static void store_destroy(struct ds_store *s)
{
	ds__aux_free_all(s);
	pthread_mutex_destroy(&s->save_lock);
	pthread_cond_destroy(&s->save_cond);
	pthread_cond_destroy(&s->save_idle);
	pthread_mutex_destroy(&s->keep_lock);
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
	s->keep_max = DS_OPT(opts, keep_dsos, 0);
	pthread_mutex_init(&s->keep_lock, NULL);
	pthread_rwlock_init(&s->lock, NULL);
	pthread_mutex_init(&s->di_lock, NULL);
	pthread_cond_init(&s->di_cond, NULL);
	pthread_mutex_init(&s->aux_lock, NULL);
	pthread_cond_init(&s->aux_cond, NULL);
	pthread_mutex_init(&s->save_lock, NULL);
	pthread_cond_init(&s->save_cond, NULL);
	pthread_cond_init(&s->save_idle, NULL);
	s->save_tail = &s->save_head;
	ds__aux_init(s);
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

static void dso_free(struct ds_dso *d);
static void saver_stop(struct ds_store *s);

/* The kept DSOs go with the caller's handle (each holds the store); DSOs
 * still held go with their last put. */
DS_API void ds_store_free(struct ds_store *s)
{
	struct ds_dso *gone = NULL;

	if (!s)
		return;
	saver_stop(s); /* the indexes completed so far are saved first */
	pthread_mutex_lock(&s->keep_lock);
	s->keep_closed = true;
	while (s->kept_head) {
		struct ds_dso *d = kept_pop_oldest(s);

		d->kept_next = gone;
		gone = d;
	}
	pthread_mutex_unlock(&s->keep_lock);
	while (gone) {
		struct ds_dso *d = gone;

		gone = d->kept_next;
		dso_free(d);
	}
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
	out->kept = atomic_load(&s->n_kept);
	out->kept_hits = atomic_load(&s->kept_hits);
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
	d->keep = s->keep_max > 0;
	atomic_init(&d->kept, false);
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
	if (d && !id_improves(d, id) && take(s, d)) {
		pthread_rwlock_unlock(&s->lock);
		return d;
	}
	pthread_rwlock_unlock(&s->lock);

	pthread_rwlock_wrlock(&s->lock);
	d = lookup(s, &pk, id);
	if (d && take(s, d)) {
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

/* ds_dso_put() in a store that keeps DSOs: a put that may be the last
 * crosses into the zero window under keep_lock (see the top of the file).
 * Out of line: ds_dso_put() without keep_dsos stays a flag test and an
 * atomic decrement, saving no registers. */
static __attribute__((noinline)) void put_keep(struct ds_dso *d)
{
	struct ds_store *s = d->store;
	struct ds_dso *gone = NULL;
	int n = atomic_load_explicit(&d->refcnt, memory_order_relaxed);

	while (n > 1)
		if (atomic_compare_exchange_weak_explicit(&d->refcnt, &n, n - 1,
							  memory_order_acq_rel,
							  memory_order_relaxed))
			return;
	pthread_mutex_lock(&s->keep_lock);
	if (s->keep_closed) {
		pthread_mutex_unlock(&s->keep_lock);
		if (atomic_fetch_sub_explicit(&d->refcnt, 1, memory_order_acq_rel) == 1)
			dso_free(d);
		return;
	}
	atomic_store(&d->kept, true);
	if (atomic_fetch_sub_explicit(&d->refcnt, 1, memory_order_acq_rel) == 1) {
		kept_append(s, d); /* the most recently used last */
		if (atomic_load(&s->n_kept) > s->keep_max)
			gone = kept_pop_oldest(s);
	} else {
		atomic_store(&d->kept, false); /* a lookup took it meanwhile */
	}
	pthread_mutex_unlock(&s->keep_lock);
	if (gone)
		dso_free(gone);
}

DS_API void ds_dso_put(struct ds_dso *d)
{
	if (!d)
		return;
	if (unlikely(d->keep))
		put_keep(d);
	else if (atomic_fetch_sub_explicit(&d->refcnt, 1, memory_order_acq_rel) == 1)
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


static bool has_budget(const struct ds_store *s)
{
	return s->budget || s->fd_budget;
}

/* Over the budget, first the CUs of indexes nobody reads that were not
 * looked up lately (CLOCK: two passes, the second takes what the first
 * spared), then the auxiliary files no build reads now (ds__aux_trim()),
 * then whole debuginfos (and their indexes).  Second chance: a
 * debuginfo used since the hand last passed keeps its place once.  Two
 * turns of the ring bound the walk.  di_lock held. */
static void enforce_budget(struct ds_store *s, struct ds_dso *keep)
{
	size_t steps = 2 * (size_t)atomic_load(&s->n_open) + 2;

	/* Trimming CUs frees memory, no descriptor. */
	for (int pass = 0; pass < 2 && ds__over_mem(s); pass++) {
		struct ds_dso *d = s->ring_hand;

		for (size_t k = 0; d && k < (size_t)atomic_load(&s->n_open) && ds__over_mem(s);
		     k++, d = d->ring_next)
			try_trim(s, d);
	}
	if (ds__over_budget(s))
		ds__aux_trim(s);

	while (ds__over_budget(s) && s->ring_hand && steps--) {
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
	atomic_store(&d->miss_until_ns, ttl < 0 ? 0 : ds__now_ns() + (int64_t)ttl * 1000000000);
	atomic_store_explicit(&d->di_state, DI_MISSING, memory_order_release);
	return err;
}

static bool miss_still_valid(struct ds_dso *d)
{
	return ds__now_ns() < atomic_load(&d->miss_until_ns);
}

/* local_only: a miss is not remembered (prefetch asks debuginfod next);
 * fetched: see search(). */
/* Kept out of line so that the ready path stays a few instructions. */
__attribute__((noinline, cold)) int ds__dso_debuginfo_slow(struct ds_dso *d,
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
	return ds__dso_debuginfo_slow(d, out, false, NULL);
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

/* Every DSO not searched yet (or whose miss expired), with a reference. */
struct ds_dso **ds__store_unsearched(struct ds_store *s, size_t *n_out)
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

static int loadmap_of_found(struct ds_found *f, struct ds__loadmap **out)
{
	int err = ds__loadmap_read(f->elf, out);

	ds__found_release(f);
	return err;
}

/* The executable's headers for bid: a local executable (ds__locate),
 * else, when fetch, debuginfod's executable artifact (cache, servers);
 * or, when path is not NULL, that file (a fetched one).  -ENOENT none. */
static int loadmap_find(struct ds_context *ctx, const struct ds_build_id *bid, const char *path,
			bool fetch, struct ds__loadmap **out)
{
	struct ds_found f = { .fd = -1 };
	const char *why = NULL;
	char *fetched = NULL;
	int err;

	*out = NULL;
	if (path)
		err = ds__open_candidate(path, bid, DS_ARTIFACT_EXECUTABLE, &f, &why);
	else
		err = ds__locate(ctx, bid, NULL, DS_ARTIFACT_EXECUTABLE, &f, NULL);
	if (err == -ENOENT && !path && fetch) {
		err = ds_fetch(ctx, bid, DS_ARTIFACT_EXECUTABLE, NULL, &fetched, NULL);
		if (!err)
			err = ds__open_candidate(fetched, bid, DS_ARTIFACT_EXECUTABLE, &f, &why);
		free(fetched);
	}
	if (err)
		return err;
	return loadmap_of_found(&f, out);
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
	if (bid.size && loadmap_find(s->ctx, &bid, NULL, true, &lm) == 0)
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
void ds__dso_exec_adopt(struct ds_dso *d, const char *path)
{
	struct ds_store *s = d->store;
	struct ds__loadmap *lm = NULL;

	if (loadmap_find(s->ctx, &d->id.build_id, path, false, &lm))
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
bool ds__dso_exec_local(struct ds_dso *d)
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
 * full; *pinned says whether to unpin, *di_err (may be NULL) why there is
 * no debuginfo (0: there is). */
static int symbols_get(struct ds_dso *d, bool full, struct ds_symbols **out, bool *pinned,
		       int *di_err)
{
	const struct ds_debuginfo *di = NULL;
	int err;

	*pinned = false;
	err = ds_dso_debuginfo(d, &di);
	if (di_err)
		*di_err = err;
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

	if (!ds__over_budget(s))
		return;
	pthread_mutex_lock(&s->di_lock);
	enforce_budget(s, d);
	pthread_mutex_unlock(&s->di_lock);
}

/* ---- Saving
 *
 * A batch that completes an index (every CU built) does not save it: it
 * hands it to the store's saver thread (started with the first one) and
 * returns, so the host writes its answers while the index is written
 * (from the index's own arrays, no copy: symfile.c), and a cold run that
 * saves costs about what one that does not costs.  The job holds
 * a reference to the DSO and a pin, so the index and its debuginfo stay.
 * ds_store_flush() waits for the jobs queued; ds_store_free() does, then
 * ends the thread; a host that exits without either loses only a cache
 * file.  Without a thread (pthread_create() failed, or after
 * ds_store_free()) the batch saves, as before.
 *
 * A job's pin keeps its debuginfo open and its index in memory, past
 * what the store's budgets would let stay, so the jobs not yet done are
 * bounded (SAVES_PENDING_MAX, SAVES_PENDING_BUDGETED with a budget): a
 * batch that finds them all taken saves itself.  (Unbounded, a stream
 * over 40 binaries under --fd-budget 8 and `ulimit -n 20` ran out of
 * descriptors whenever the saver fell behind: each queued job held a
 * debuginfo's.) */
#define SAVES_PENDING_MAX      16
#define SAVES_PENDING_BUDGETED 2
struct save_job {
	struct save_job *next;
	struct ds_dso *d;
	struct ds_symbols *S;
	struct ds__symfile_key key;
};

static void save_now(struct ds_dso *d, struct ds_symbols *S, const struct ds__symfile_key *key)
{
	if (ds__symfile_save(d->store->ctx, &d->di, key, S, NULL) == 0)
		atomic_fetch_add(&d->store->symindex_saves, 1);
}

static void *saver_main(void *arg)
{
	struct ds_store *s = arg;

	pthread_mutex_lock(&s->save_lock);
	for (;;) {
		struct save_job *j = s->save_head;

		if (!j) {
			s->saver_busy = false;
			pthread_cond_broadcast(&s->save_idle);
			if (s->save_closed)
				break;
			pthread_cond_wait(&s->save_cond, &s->save_lock);
			continue;
		}
		s->save_head = j->next;
		if (!s->save_head)
			s->save_tail = &s->save_head;
		s->saver_busy = true;
		pthread_mutex_unlock(&s->save_lock);
		save_now(j->d, j->S, &j->key);
		ds_dso_unpin(j->d);
		ds_dso_put(j->d);
		free(j);
		pthread_mutex_lock(&s->save_lock);
		s->saves_pending--;
	}
	pthread_mutex_unlock(&s->save_lock);
	return NULL;
}

/* Queue S, of d, for the saver; false when there is none to take it. */
static bool save_later(struct ds_dso *d, struct ds_symbols *S, const struct ds__symfile_key *key)
{
	struct ds_store *s = d->store;
	struct save_job *j = malloc(sizeof(*j));
	bool queued = false;

	if (!j)
		return false;
	pthread_mutex_lock(&s->save_lock);
	if (!s->save_closed && !s->saver_started &&
	    pthread_create(&s->saver, NULL, saver_main, s) == 0)
		s->saver_started = true;
	if (!s->save_closed && s->saver_started &&
	    s->saves_pending < (s->budget || s->fd_budget ? SAVES_PENDING_BUDGETED
							  : SAVES_PENDING_MAX)) {
		/* (The caller's pin says the debuginfo is ready: another one
		 * needs no wait.) */
		s->saves_pending++;
		atomic_fetch_add(&d->pins, 1);
		*j = (struct save_job){ .d = ds_dso_get(d), .S = S, .key = *key };
		*s->save_tail = j;
		s->save_tail = &j->next;
		s->saver_busy = true;
		pthread_cond_signal(&s->save_cond);
		queued = true;
	}
	pthread_mutex_unlock(&s->save_lock);
	if (!queued)
		free(j);
	return queued;
}

DS_API void ds_store_flush(struct ds_store *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->save_lock);
	while (s->saver_started && s->saver_busy)
		pthread_cond_wait(&s->save_idle, &s->save_lock);
	pthread_mutex_unlock(&s->save_lock);
}

static void saver_stop(struct ds_store *s)
{
	bool started;

	pthread_mutex_lock(&s->save_lock);
	s->save_closed = true;
	started = s->saver_started;
	pthread_cond_signal(&s->save_cond);
	pthread_mutex_unlock(&s->save_lock);
	if (started)
		pthread_join(s->saver, NULL); /* it empties the queue first */
}

/* S, of d, has just been completed (every CU built) by a batch (holding
 * d's pin: an index of DWARF has debuginfo): save it for the next process
 * (lib/symbolize/symfile.c), after the batch (above).  Failures are only
 * logged. */
static void symbols_completed(struct ds_dso *d, struct ds_symbols *S, bool pinned)
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
	if (save && !(pinned && save_later(d, S, &key)))
		save_now(d, S, &key);
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
	err = symbols_get(d, true, &S, &pinned, NULL);
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
	int err, di_err = 0;

	if (!b)
		return -EINVAL;
	if (!d || (!addrs && n)) {
		ds__sym_batch_start(b, 0);
		return -EINVAL;
	}
	err = ds__sym_batch_start(b, n);
	if (err || !n)
		return err; /* a batch of 0 builds nothing */
	err = symbols_get(d, !(flags & DS_SYM_NO_LINES), &S, &pinned, &di_err);
	if (err) {
		ds__sym_batch_fail(b, addrs, err);
		ds__sym_batch_reasons(b, di_err);
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
	/* (An index built without debuginfo: every answer says why.) */
	err = ds__sym_batch_lookup(b, S, flags, di_err);
	/* Complete now (by this batch, or a saved index's damaged CU built
	 * again by its lookups): then save it, once. */
	if (nv && !(flags & DS_SYM_NO_LINES) && ds__symbols_newly_complete(S))
		symbols_completed(d, S, pinned);
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
