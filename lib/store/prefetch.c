/* SPDX-License-Identifier: MIT */
/*
 * Prefetching for a list of DSOs: their debuginfo (and, where file offsets
 * need it, their executables) found locally or in one debuginfod batch,
 * then the dwz alt files their DWARF names (local, then one more batch),
 * then their split DWARF surveyed; and the DSO-level questions that share
 * that code (which alt file, which split units).  Above both the store's
 * DSOs (store.c) and its table of auxiliary files (storeaux.c).
 */
#define _GNU_SOURCE
#include "store_impl.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
		*named = ds__aux_alt_path(name, atomic_load(&d->di.path));
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
	e = ds__aux_entry(s, &k, true);
	if (!e) {
		pthread_mutex_unlock(&s->aux_lock);
		free(named);
		return -ENOMEM;
	}
	if (ds__aux_claim(s, e, false, NULL, &prev)) {
		pthread_mutex_unlock(&s->aux_lock);
		err = ds__aux_search(s, bid, named, false, &found, &why);
		pthread_mutex_lock(&s->aux_lock);
		if (err)
			ds__aux_missed(s, e, err, NULL, why.buf);
		else
			ds__aux_found(s, e, &found);
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
		e = ds__aux_entry(s, &k, true);
		/* (One this round has claimed already: not waited for.) */
		for (size_t j = 0; e && j < nwant && !mine; j++)
			mine = want[j].e == e;
		if (!e || mine || !ds__aux_claim(s, e, false, NULL, &prev)) {
			pthread_mutex_unlock(&s->aux_lock);
			free(named);
			continue; /* known already (or no memory: asked later) */
		}
		pthread_mutex_unlock(&s->aux_lock);
		lerr = ds__aux_search(s, &k.bid, named, true, &found, NULL);
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
				ds__aux_missed(s, e, lerr, NULL, NULL);
			else
				ds__aux_found(s, e, &found);
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
			ds__aux_missed(s, want[i].e, ferr, NULL, why.buf);
		} else {
			ds__aux_found(s, want[i].e, &found);
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
	ds__dwp_candidates(binary, debug, ds__aux_dwp_try, &t);
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
		in_pkg = t.e && ds__aux_id_in(t.e->ids, t.e->nids, sk[i].id);
		pthread_mutex_unlock(&s->aux_lock);
		if (in_pkg)
			continue;
		err = ds__aux_dwo_lookup(s, &w, false, &e);
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



/* Prefetch for a list of DSOs of one context (any of its stores). */
int ds__dsos_prefetch(struct ds_dso **dsos, size_t n, bool dwarf,
		      const struct ds_fetch_opts *opts)
{
	return ds__dsos_prefetch_with(dsos, n, dwarf, NULL, 0, opts);
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
		if (ds__dso_debuginfo_slow(dsos[i], &di, true, NULL) != -ENOENT ||
		    !dsos[i]->id.build_id.size)
			continue;
		reqs[nreq].build_id = dsos[i]->id.build_id;
		reqs[nreq].what = DS_ARTIFACT_DEBUGINFO;
		of[i] = nreq++;
		/* No binary here to read file offsets from: the executable's
		 * headers, in the same batch. */
		if (dsos[i]->store->file_offsets && !ds__dso_exec_local(dsos[i])) {
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
			ds__dso_exec_adopt(dsos[i], reqs[x].path);
		if (of[i] != SIZE_MAX)
			left += ds__dso_debuginfo_slow(dsos[i], &di, false, &reqs[of[i]]) != 0;
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
	dsos = ds__store_unsearched(s, &n);
	if (!dsos && n)
		return -ENOMEM;
	rc = ds__dsos_prefetch(dsos, n, true, opts);
	for (size_t i = 0; i < n; i++)
		ds_dso_put(dsos[i]);
	free(dsos);
	return rc;
}
