/* SPDX-License-Identifier: MIT */
/*
 * The store's auxiliary files: dwz alt files, .dwp packages and .dwo
 * files that DSOs' DWARF names, in one table per store (lib/store/store_impl.h),
 * found, opened, pinned and closed for the budget like debuginfo.
 */
#define _GNU_SOURCE
#include "store_impl.h"

#include <gelf.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------- auxiliary files */

static const char *const aux_what[] = { "dwz alt file", ".dwp package", ".dwo file" };

static uint64_t aux_hash(const struct aux_key *k)
{
	switch (k->kind) {
	case DS__AUX_ALT:
		return ds__hash_bid(&k->bid);
	case DS__AUX_DWP:
		return ds__mix64((uint64_t)k->ino ^ ds__mix64((uint64_t)k->dev + 1));
	default:
		return ds__mix64(k->id ^ 0x2d776f); /* (a dwo id is a hash already; not 0) */
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
struct aux *ds__aux_entry(struct ds_store *s, const struct aux_key *k, bool create)
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
bool ds__aux_claim(struct ds_store *s, struct aux *e, bool open, const char *where, int *prev)
{
	while (e->state == AUX_LOADING)
		pthread_cond_wait(&s->aux_cond, &s->aux_lock);
	if (e->state == AUX_OPEN || (e->state == AUX_FOUND && !open))
		return false;
	if (e->state == AUX_MISSING && ds__now_ns() < e->miss_until_ns &&
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
void ds__aux_found(struct ds_store *s, struct aux *e, const struct ds_found *found)
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
void ds__aux_missed(struct ds_store *s, struct aux *e, int err, const char *where, const char *why)
{
	char name[PATH_MAX];
	int ttl = s->ctx->miss_ttl_s;

	ds_debug(s->ctx, "%s %s: %s%s", aux_what[e->key.kind], aux_name(e, name, sizeof(name)),
		 ds_strerror(err), why ? why : "");
	free(e->where);
	e->where = where ? strdup(where) : NULL;
	e->err = err;
	/* (No memory is no answer to remember.) */
	e->miss_until_ns = ttl < 0 || err == -ENOMEM ? 0 : ds__now_ns() + (int64_t)ttl * 1000000000;
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
 * names (named: resolved by ds__aux_alt_path(); NULL: none), then the rules of
 * debuginfo (this machine, then debuginfod's cache and servers unless
 * local_only). */
int ds__aux_search(struct ds_store *s, const struct ds_build_id *bid, const char *named,
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
char *ds__aux_alt_path(const char *name, const char *from)
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
	e = ds__aux_entry(s, &k, true);
	if (!e || !ds__aux_claim(s, e, true, NULL, &prev)) {
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
		char *named = ds__aux_alt_path(name, from);

		err = ds__aux_search(s, bid, named, false, &found, &why);
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
		ds__aux_missed(s, e, err ? err : -ENOMEM, NULL, why.buf);
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
int ds__aux_dwo_lookup(struct ds_store *s, const struct ds__dwo_want *w, bool open,
		       struct aux **out)
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
	e = ds__aux_entry(s, &k, true);
	if (!e || !ds__aux_claim(s, e, open, where, &prev)) {
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
			ds__aux_found(s, e, &found);
		} else if (aux_opened(s, e, &found, &dw)) {
			e->holds++;
			*out = e;
		} else {
			err = -ENOMEM;
		}
	} else {
		ds__aux_missed(s, e, err, where, NULL);
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

	ds__aux_dwo_lookup(arg, w, true, &e);
	return (struct ds__aux *)e;
}

bool ds__aux_id_in(const uint64_t *ids, size_t n, uint64_t id)
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
		n += ds__aux_id_in(e->ids, e->nids, w->ids[i]);
	return n;
}

bool ds__aux_dwp_try(void *arg, const char *path)
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
	e = ds__aux_entry(s, &k, true);
	claimed = e && ds__aux_claim(s, e, t->open, NULL, &prev);
	if (claimed) {
		pthread_mutex_unlock(&s->aux_lock);
		/* (Its identity is checked again on the descriptor.) */
		err = aux_open_at(s, &k, rp, t->w->for_name, &found, &dw);
		pthread_mutex_lock(&s->aux_lock);
		if (err)
			ds__aux_missed(s, e, err, NULL, NULL);
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

	ds__dwp_candidates(w->binary, w->debug, ds__aux_dwp_try, &t);
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
void ds__aux_trim(struct ds_store *s)
{
	pthread_mutex_lock(&s->aux_lock);
	for (int pass = 0; pass < 2 && ds__over_budget(s); pass++) {
		for (size_t b = 0; b <= s->aux_mask; b++) {
			for (struct aux *e = s->aux_tab[b]; e; e = e->next) {
				if (!ds__over_budget(s))
					goto out;
				if (e->state != AUX_OPEN || e->pins)
					continue;
				/* Over the descriptors alone: a mapped .dwo holds none. */
				if (!ds__over_mem(s) && e->found.fd < 0)
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
void ds__aux_free_all(struct ds_store *s)
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

void ds__aux_init(struct ds_store *s)
{
	s->aux_src = (struct ds__aux_src){ alt_get, dwp_get, dwo_get, aux_pin, aux_unpin, aux_put, s };
}
