/* SPDX-License-Identifier: MIT */
/*
 * A perf recording replayed as perf report replays it: the records of
 * lib/perf/perfdata.c in time order; each machine (the host, each guest) with
 * its kernel maps and its processes' maps (MMAP, MMAP2, FORK copying the
 * parent's, a new mapping replacing what it overlaps); every DSO put into
 * its machine's store; each sample decoded through its attr's sample_type
 * and its IP and callchain resolved to (DSO, file offset).
 *
 * DSOs are told apart as perf 6.1's dsos__findnew_id does: by path within
 * a machine, two at one path when their build IDs or inodes differ.  A
 * DSO's build ID: the header's table, else its MMAP2 event, else the file
 * at its path on this machine when it is the file that was mapped (the
 * same inode number, when the recording names it); a mapped file without
 * a build ID is put into the store by its path.
 */
#define _GNU_SOURCE
#include "perfsession_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* ------------------------------------------------------------- session */

static void machine_release(struct machine *m)
{
	ds__ps_ptab_release(&m->procs);
	ds__ps_ptab_release(&m->threads);
	free(m->kmaps.v);
	ds_store_free(m->store);
}

DS_API void ds_perf_session_free(struct ds_perf_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndsos; i++) {
		ds_dso_put(s->dsos[i].pub.dso);
		free(s->dsos[i].path);
		free(s->dsos[i].unwind_path);
		free(s->dsos[i].ref_symbol);
	}
	for (unsigned i = 0; i < s->nmachines; i++)
		machine_release(&s->machines[i]);
	free(s->machines);
	free(s->dsos);
	free(s->dso_hash);
	free(s->samples);
	free(s->cc_ip);
	free(s->cc_off);
	free(s->cc_dso);
	free(s->cc_mode);
	free(s->pub);
	for (size_t i = 0; i < s->ncomms; i++)
		free(s->comms[i]);
	free(s->comms);
	free(s->hostname);
	free(s->osrelease);
	free(s->rank);
	ds__unwind_free(s->unwind);
	free(s->unwind_ips);
	if (s->ctx)
		ds__context_put(s->ctx);
	free(s);
}

struct ds_context *ds__perf_session_context(const struct ds_perf_session *s)
{
	return s->ctx;
}

void ds__perf_session_host(const struct ds_perf_session *s, const char **hostname,
			   const char **osrelease)
{
	*hostname = s->hostname;
	*osrelease = s->osrelease;
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct ds_perf_session *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int32_t mx = s->machines[s->dsos[x].machine].pid, my = s->machines[s->dsos[y].machine].pid;

	/* The host (-1) first, then guests by pid; within one, creation order. */
	if (mx != my)
		return mx < my ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The public DSO array, host first, and every index remapped to it. */
static int publish(struct ds_perf_session *s)
{
	uint32_t *order = malloc((s->ndsos ? s->ndsos : 1) * sizeof(*order));
	uint32_t *rank = malloc((s->ndsos ? s->ndsos : 1) * sizeof(*rank));
	int rc = -ENOMEM;

	s->pub = calloc(s->ndsos ? s->ndsos : 1, sizeof(*s->pub));
	if (!order || !rank || !s->pub)
		goto out;
	for (uint32_t i = 0; i < s->ndsos; i++)
		order[i] = i;
	qsort_r(order, s->ndsos, sizeof(*order), cmp_order, s);
	for (uint32_t i = 0; i < s->ndsos; i++) {
		struct pdso *d = &s->dsos[order[i]];

		rank[order[i]] = i;
		s->pub[i] = d->pub;
		s->pub[i].path = d->path;
		s->pub[i].ref_symbol = d->ref_symbol;
		s->pub[i].machine = s->machines[d->machine].name;
	}
	for (size_t i = 0; i < s->nsamples; i++)
		if (s->samples[i].dso != UINT32_MAX)
			s->samples[i].dso = rank[s->samples[i].dso];
	for (size_t i = 0; i < s->ncc; i++)
		if (s->cc_dso[i] != SIZE_MAX)
			s->cc_dso[i] = rank[s->cc_dso[i]];
	s->rank = rank;
	rank = NULL;
	rc = 0;
out:
	free(order);
	free(rank);
	return rc;
}

/* The unwinder's view of a host process's maps (ds__unwind_map_fn). */
static bool unwind_map(void *user, int32_t pid, uint64_t addr, struct ds__unwind_map *out)
{
	struct ds_perf_session *s = user;
	const struct proc *pr = ds__ps_proc_find(&s->machines[0].procs, pid);
	const struct map *mp = pr ? ds__ps_maps_find(&pr->maps, addr) : NULL;
	struct pdso *d;

	if (!mp)
		return false;
	d = &s->dsos[mp->dso];
	if (!d->unwind_looked && !strcmp(d->path, "[vdso]")) {
		char buf[64];
		const char *vp = ds__unwind_vdso(s->unwind, &d->pub.build_id, buf, sizeof(buf));

		d->unwind_path = vp ? strdup(vp) : NULL;
		d->unwind_looked = true;
	}
	if (!d->unwind_looked && !d->pub.kernel && d->pub.dso) {
		/* Without local build IDs, no file is taken by its path
		 * either: only what the store finds by build ID. */
		d->unwind_path = ds__unwind_elf_path(s->ctx, &d->pub.build_id,
						     s->local_bids ? d->path : NULL,
						     d->mapped_file);
		d->unwind_looked = true;
	}
	*out = (struct ds__unwind_map){ .start = mp->start,
					.end = mp->end,
					.pgoff = mp->pgoff,
					.key = mp->dso,
					.path = d->unwind_path };
	return true;
}

/* An unwinder when some event recorded user stacks (the registers are
 * read as x86_64's: little-endian). */
static int unwind_setup(struct ds_perf_session *s)
{
	const uint64_t both = DS__PERF_SAMPLE_REGS_USER | DS__PERF_SAMPLE_STACK_USER;
	const uint16_t one = 1;
	unsigned int nattrs;
	const struct ds__perf_attr *attrs = ds__perf_attrs(s->p, &nattrs);
	bool host_le = *(const unsigned char *)&one == 1, want = false;

	for (unsigned i = 0; i < nattrs; i++)
		want |= (attrs[i].sample_type & both) == both;
	if (!want || ds_perf_data_swapped(s->p) == host_le) /* a big-endian file */
		return 0;
	s->unwind = ds__unwind_new(s->ctx, unwind_map, s);
	return s->unwind ? 0 : -ENOMEM;
}

static struct ds_perf_session *session_new(struct ds_context *ctx, const struct ds_perf_data *p,
					   const struct ds_perf_session_opts *opts, char *err,
					   size_t errlen, ds_perf_sample_fn stream, void *user)
{
	const struct ds_perf_build_id *table;
	const struct ds__perf_ent *recs;
	const struct ds_store_opts *so;
	struct ds_perf_session *s;
	uint64_t done = 0;
	size_t nrecs;
	int rc = 0, ntable;

	if (!ctx || !p) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->ctx = ds__context_get(ctx);
	s->p = p;
	s->stream = stream;
	s->stream_user = user;
	s->err = err;
	s->errlen = errlen;
	s->local_bids = !DS_OPT(opts, no_local_build_ids, false);
	s->unwind_max = DS_OPT(opts, unwind_max, 0);
	if (!s->unwind_max)
		s->unwind_max = UNWIND_MAX;
	else if (s->unwind_max > UINT16_MAX)
		s->unwind_max = UINT16_MAX;
	so = DS_OPT(opts, store_opts, NULL);
	if (so) {
		memset(&s->store_opts, 0, sizeof(s->store_opts));
		memcpy(&s->store_opts, so, so->sz < sizeof(*so) ? so->sz : sizeof(*so));
		s->store_opts.sz = sizeof(s->store_opts);
		s->have_store_opts = true;
	}
	{
		struct ds_perf_info info;

		ds_perf_data_info(p, &info);
		if ((info.hostname && !(s->hostname = strdup(info.hostname))) ||
		    (info.osrelease && !(s->osrelease = strdup(info.osrelease)))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	if (!ds__ps_machine_of(s, HOST_PID)) {
		rc = -errno ? -errno : -ENOMEM;
		goto out;
	}
	rc = unwind_setup(s);
	if (rc)
		goto out;
	/* perf makes the table's DSOs first, in table order. */
	ntable = ds_perf_data_build_ids(p, &table);
	for (int i = 0; i < ntable && !rc; i++) {
		struct machine *m = ds__ps_machine_of(s, table[i].pid == -1 ? HOST_PID : table[i].pid);
		struct dso_key k = { .path = table[i].filename,
				     .cpumode = table[i].cpumode,
				     .bid = &table[i].build_id,
				     .src = DS_PERF_BID_TABLE };
		int64_t idx;

		if (!m) {
			rc = -ENOMEM;
			break;
		}
		k.machine = (unsigned)(m - s->machines);
		idx = ds__ps_dso_findnew(s, &k);
		rc = idx < 0 ? (int)idx : 0;
	}
	recs = ds__perf_records(p, &nrecs);
	for (size_t i = 0; i < nrecs && !rc; i++) {
		struct ds__perf_rec r;

		ds__perf_records_done(p, i, &done);
		ds__perf_record(p, &recs[i], &r);
		switch (r.type) {
		case DS__PERF_REC_MMAP:
		case DS__PERF_REC_MMAP2:
			rc = ds__ps_do_mmap(s, &r);
			break;
		case DS__PERF_REC_FORK:
			rc = ds__ps_do_fork(s, &r);
			break;
		case DS__PERF_REC_COMM:
			rc = ds__ps_do_comm(s, &r);
			break;
		case DS__PERF_REC_SAMPLE:
			rc = ds__ps_do_sample(s, &r);
			break;
		case DS__PERF_REC_EXIT:
			rc = ds__ps_do_exit(s, &r);
			break;
		default:
			break;
		}
	}
	if (!rc)
		rc = publish(s);
out:
	s->p = NULL;
	s->err = NULL;
	if (rc) {
		if (rc == -ENOMEM && err && errlen && !err[0])
			snprintf(err, errlen, "out of memory");
		ds_perf_session_free(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

DS_API struct ds_perf_session *ds_perf_session_new(struct ds_context *ctx,
						   const struct ds_perf_data *p,
						   const struct ds_perf_session_opts *opts,
						   char *err, size_t errlen)
{
	return session_new(ctx, p, opts, err, errlen, NULL, NULL);
}

struct ds_perf_session *ds__perf_session_stream(struct ds_context *ctx,
						const struct ds_perf_data *p,
						const struct ds_perf_session_opts *opts,
						ds_perf_sample_fn fn, void *user, char *err,
						size_t errlen)
{
	return session_new(ctx, p, opts, err, errlen, fn, user);
}

const uint32_t *ds__perf_session_rank(const struct ds_perf_session *s)
{
	return s->rank;
}

DS_API const char *ds_perf_session_thread_name(const struct ds_perf_session *s, int32_t pid,
					       int32_t tid)
{
	for (unsigned i = 0; s && i < s->nmachines; i++) {
		const struct proc *t;

		if (s->machines[i].pid != HOST_PID)
			continue;
		t = ds__ps_proc_find(&s->machines[i].threads, tid);
		if (!t || !t->comm) /* as a sample's name: the process's */
			t = ds__ps_proc_find(&s->machines[i].threads, pid);
		return t ? t->comm : NULL;
	}
	return NULL;
}

DS_API size_t ds_perf_session_dsos(const struct ds_perf_session *s,
				   const struct ds_perf_dso **out)
{
	*out = s ? s->pub : NULL;
	return s ? s->ndsos : 0;
}


DS_API int ds_perf_session_samples(const struct ds_perf_session *s, ds_perf_sample_fn fn,
				   void *user)
{
	if (!s || !fn)
		return -EINVAL;
	if (s->stream)
		return -ENODATA; /* handed over as they came */
	for (size_t i = 0; i < s->nsamples; i++) {
		struct ds_perf_sample out;
		int rc;

		ds__ps_sample_out(s, &s->samples[i], &out);
		rc = fn(user, &out);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

	return x < y ? -1 : x > y;
}

/* A kernel module, not the kernel ("[kernel.kallsyms]", a guest's
 * "[guest.kernel.kallsyms...]"). */
static bool is_module(const struct ds_perf_dso *d)
{
	return d->kernel && !strstr(d->path, "kernel.kallsyms");
}

DS_API int ds_perf_session_prefetch(struct ds_perf_session *s, unsigned int flags,
				    const struct ds_fetch_opts *opts)
{
	struct ds_dso **v;
	size_t n = 0, u = 0;
	int rc;

	if (!s)
		return -EINVAL;
	v = malloc((s->ndsos ? s->ndsos : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndsos; i++) {
		const struct ds_perf_dso *d = &s->pub[i];

		if (!d->dso || (!d->samples && !d->callchain_hits && !(flags & DS_PERF_PREFETCH_ALL)) ||
		    (d->kernel && !(flags & DS_PERF_PREFETCH_KERNEL) &&
		     !((flags & DS_PERF_PREFETCH_MODULES) && is_module(d))))
			continue;
		v[n++] = d->dso;
	}
	/* One DSO of the store can stand for two of the recording. */
	qsort(v, n, sizeof(*v), cmp_ptr);
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	rc = ds__dsos_prefetch(v, u, !(flags & DS_PERF_PREFETCH_NAMES), opts);
	free(v);
	return rc;
}
