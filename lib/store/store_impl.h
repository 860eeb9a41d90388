/* SPDX-License-Identifier: MIT */
/* The store's insides, for the store's own files (store.c: DSOs and their
 * debuginfo; storeaux.c: the auxiliary files their DWARF names;
 * prefetch.c: the batch over both).  The layers above use store.h. */
#ifndef DS_STORE_IMPL_H
#define DS_STORE_IMPL_H

#include "store.h"

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
	bool keep; /* the store keeps DSOs no one holds (keep_dsos) */
	/* On the store's kept list, with no reference (store.c, "Kept
	 * DSOs": only a hint without keep_lock). */
	atomic_bool kept;
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
	 * (the key of its saved file, lib/symbolize/symfile.c). */
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

	/* Under store->keep_lock: the kept list, while kept. */
	struct ds_dso *kept_prev, *kept_next;
};

enum { EXEC_UNKNOWN = 0, EXEC_LOADING, EXEC_KNOWN };

/* An auxiliary debug file (lib/symbolize/symbolize.h): a dwz alt file by build ID, a
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

struct save_job;

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

	/* DSOs no one holds, kept for the next lookup (keep_dsos; store.c,
	 * "Kept DSOs"), under keep_lock: taken under lock, never the other
	 * way round. */
	unsigned int keep_max;
	pthread_mutex_t keep_lock;
	struct ds_dso *kept_head, *kept_tail; /* least recently put first */
	bool keep_closed; /* ds_store_free(): a last put frees */

	/* Indexes completed by a batch, saved by a thread of their own
	 * after the batch has answered (store.c, "Saving"), under save_lock. */
	pthread_mutex_t save_lock;
	pthread_cond_t save_cond, save_idle;
	struct save_job *save_head, **save_tail;
	pthread_t saver;
	bool saver_started, saver_busy, save_closed;
	unsigned int saves_pending; /* queued, or being written */

	atomic_uint_fast64_t n_dsos, n_open, bytes_held, searches, hits, misses, evictions, reopens,
	    symtab_builds, dwarf_builds, units_built, symindex_loads, symindex_saves,
	    units_trimmed, aux_open, aux_bytes, aux_searches, aux_opens, aux_closes, aux_reopens,
	    dwp_opens, dwo_opens, dwo_searches, aux_fds, n_kept, kept_hits;
};

/* ---- lib/store/store.c: the budget, read by the auxiliary files' table too */
static inline bool ds__over_mem(struct ds_store *s)
{
	return s->budget && atomic_load(&s->bytes_held) > s->budget;
}
/* Descriptors held: one per open debuginfo, and the auxiliary files'. */
static inline bool ds__over_fds(struct ds_store *s)
{
	return s->fd_budget &&
	       atomic_load(&s->n_open) + atomic_load(&s->aux_fds) > (uint64_t)s->fd_budget;
}
/* Over the memory budget (bytes_held), or the descriptor one. */
static inline bool ds__over_budget(struct ds_store *s)
{
	return ds__over_mem(s) || ds__over_fds(s);
}

/* ---- lib/store/store.c, for prefetch.c */
/* d's debuginfo the slow way: searched (local_only: locally, a miss not
 * remembered; fetched: the batch's answer for it) and published. */
int ds__dso_debuginfo_slow(struct ds_dso *d, const struct ds_debuginfo **out, bool local_only,
			   const struct ds_fetch_req *fetched);
/* Every DSO of s not searched yet (or whose miss expired), each with a
 * reference; *n_out of them (NULL with *n_out > 0: no memory). */
struct ds_dso **ds__store_unsearched(struct ds_store *s, size_t *n_out);
/* The DSO has a binary here, or a local executable: its file offsets need
 * nothing fetched. */
bool ds__dso_exec_local(struct ds_dso *d);
/* A prefetched executable's headers (path: the batch's file), kept. */
void ds__dso_exec_adopt(struct ds_dso *d, const char *path);

/* ---- lib/store/storeaux.c, for store.c */
/* s->aux_src: what the indexes call for their auxiliary files. */
void ds__aux_init(struct ds_store *s);
/* The table and every file still open in it (the store goes). */
void ds__aux_free_all(struct ds_store *s);
/* Over the budget, the files held but not pinned (di_lock held). */
void ds__aux_trim(struct ds_store *s);

/* ---- lib/store/storeaux.c, for prefetch.c: the table's entries */
struct aux *ds__aux_entry(struct ds_store *s, const struct aux_key *k, bool create);
bool ds__aux_claim(struct ds_store *s, struct aux *e, bool open, const char *where, int *prev);
void ds__aux_found(struct ds_store *s, struct aux *e, const struct ds_found *found);
void ds__aux_missed(struct ds_store *s, struct aux *e, int err, const char *where, const char *why);
int ds__aux_search(struct ds_store *s, const struct ds_build_id *bid, const char *named,
		   bool local_only, struct ds_found *found, struct ds_strbuf *why);
char *ds__aux_alt_path(const char *name, const char *from);
int ds__aux_dwo_lookup(struct ds_store *s, const struct ds__dwo_want *w, bool open,
		       struct aux **out);
bool ds__aux_id_in(const uint64_t *ids, size_t n, uint64_t id);
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

bool ds__aux_dwp_try(void *arg, const char *path);

#endif
