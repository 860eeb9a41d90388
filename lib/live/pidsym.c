// SPDX-License-Identifier: MIT
/*
 * ds_symbolize_pid(): a live process's absolute addresses symbolized in one
 * call (what blazesym's Symbolizer::symbolize(Source::Process(pid),
 * Input::AbsAddr(addrs)) offers): normalized (normalize.c), grouped by
 * DSO, each DSO's addresses in one symbolizer batch, the answers put back
 * in input order with the reason of each (symbolize.c's assembly).
 * ds_symbolize_build_ids(): the same grouping and assembly for (build ID,
 * address) pairs sent from another machine.
 */
#define _GNU_SOURCE
#include "live.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An address to ask of a DSO: sorted by group (a DSO and how it is
 * asked: one ds_dso_symbolize_batch() each) then by the input's order. */
struct slot {
	uint64_t group;
	size_t idx; /* the answer's place in the input */
	struct ds_dso *dso;
	uint64_t look; /* what the DSO is asked */
	uint64_t addr; /* the answer's address when it is not the DSO's */
	unsigned int flags; /* of the DSO's call */
	bool keep_addr; /* the answer says addr, not what was looked up */
	const char *module; /* the answer's (may be NULL) */
};

static int by_group(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Sort slots[0..ns) and answer them, one ds_dso_symbolize_batch() per
 * group (into tmp; NULL: into batch's scratch batch of the group's DSO,
 * ds__sym_batch_scratch()), each answer put into batch at its input index
 * (the batch started for them).  look: room for ns addresses.  How many
 * were found, or -ENOMEM when an answer could not be put (it says so). */
static int answer_slots(struct ds_sym_batch *batch, struct ds_sym_batch *tmp, struct slot *slots,
			size_t ns, uint64_t *look, bool sorted)
{
	const struct ds_dso *seen[DS__SYM_SCRATCH_MAX];
	size_t ngroups = 0;
	bool by_ref = !tmp;
	int err = 0, found = 0;

	if (!sorted)
		qsort(slots, ns, sizeof(*slots), by_group);
	/* Each group's answers taken from its scratch batch where they are
	 * (no string copied again) when every group has a scratch batch of
	 * its own in this call: as many groups as scratch batches at most,
	 * each of another DSO (one DSO asked by vaddr and by offset is two
	 * calls on one scratch batch; the second may reuse the first's
	 * memory).  Else copied, group by group, as with tmp. */
	for (size_t k = 0; k < ns && by_ref; k++) {
		if (k && slots[k].group == slots[k - 1].group)
			continue;
		for (size_t j = 0; j < ngroups && by_ref; j++)
			by_ref = seen[j] != slots[k].dso;
		if (ngroups == sizeof(seen) / sizeof(seen[0]))
			by_ref = false;
		else
			seen[ngroups++] = slots[k].dso;
	}
	for (size_t g = 0, e; g < ns; g = e) {
		struct ds_sym_batch *into = tmp ? tmp : ds__sym_batch_scratch(batch, slots[g].dso);
		const struct ds_sym_answer *ans = NULL;
		size_t m = 0;

		for (e = g; e < ns && slots[e].group == slots[g].group; e++)
			look[e] = slots[e].look;
		if (into) {
			ds_dso_symbolize_batch(slots[g].dso, look + g, e - g, slots[g].flags, into);
			ans = ds_sym_batch_answers(into, &m);
		}
		if (!by_ref)
			ds__sym_batch_forget(batch); /* tmp's strings were reused */
		for (size_t k = g; k < e; k++) {
			const struct slot *s = &slots[k];
			struct ds_sym_answer a = { .addr = s->addr, .status = DS_SYM_ERROR,
						   .error = -ENOMEM, .reason = DS_SYM_REASON_ERROR };

			if (m == e - g) {
				a = ans[k - g];
				if (s->keep_addr)
					a.addr = s->addr;
			}
			if (by_ref && m == e - g ? ds__sym_batch_put_scratch(batch, s->idx, &a, s->module)
						 : ds__sym_batch_put(batch, s->idx, &a, s->module))
				err = -ENOMEM;
			else
				found += a.status == DS_SYM_FOUND;
		}
	}
	return err ? err : found;
}

/* Answer i without a DSO to ask: what the normalizer said of addr. */
static int put_plain(struct ds_sym_batch *b, size_t i, const struct ds_norm_addr *o)
{
	struct ds_frame jit = { 0 };
	struct ds_sym_answer a = { .addr = o->addr, .status = DS_SYM_NOT_FOUND };

	/* (A JIT answer always has its name; without one, it is anonymous.) */
	switch (o->reason == DS_NORM_JIT && !o->jit_name ? DS_NORM_ANON : o->reason) {
	case DS_NORM_UNMAPPED:
		a.status = DS_SYM_OUTSIDE;
		a.error = -ERANGE;
		a.reason = DS_SYM_REASON_UNMAPPED;
		break;
	case DS_NORM_ANON:
		a.reason = DS_SYM_REASON_ANON;
		break;
	case DS_NORM_KERNEL:
		a.reason = DS_SYM_REASON_KERNEL;
		break;
	case DS_NORM_JIT:
		jit.function = o->jit_name;
		jit.function_start = o->jit_start;
		jit.function_len = (unsigned)strlen(o->jit_name);
		a.frames = &jit;
		a.nframes = 1;
		a.status = DS_SYM_FOUND;
		a.from_symtab = true;
		a.reason = DS_SYM_REASON_JIT;
		break;
	case DS_NORM_NO_BUILD_ID: /* (a file that could not be opened) */
		a.status = DS_SYM_NO_SYMBOLS;
		a.error = -ENODATA;
		a.reason = DS_SYM_REASON_NO_BUILD_ID;
		break;
	case DS_NORM_OK: /* (a DSO whose offset no segment holds) */
	case DS_NORM_ERROR:
	default:
		a.status = DS_SYM_ERROR;
		a.error = o->reason == DS_NORM_ERROR && o->error ? o->error : -EIO;
		a.reason = DS_SYM_REASON_ERROR;
		break;
	}
	return ds__sym_batch_put(b, i, &a, o->path);
}

/* Every answer the same failure. */
static void fail_all(struct ds_sym_batch *b, const uint64_t *addrs, size_t n, int err)
{
	for (size_t i = 0; i < n; i++) {
		struct ds_sym_answer a = { .addr = addrs[i], .status = DS_SYM_ERROR, .error = err,
					   .reason = DS_SYM_REASON_ERROR };

		ds__sym_batch_put(b, i, &a, NULL);
	}
}

/* ds_normalizer_symbolize() once its arguments are checked and the
 * batch started for n > 0 answers; norm NULL: it could not be made (err). */
static int symbolize_norm(struct ds_normalizer *norm, int norm_err, const uint64_t *addrs,
			  size_t n, unsigned int flags, struct ds_sym_batch *batch)
{
	struct ds_store *store = norm ? ds__normalizer_store(norm) : NULL;
	struct ds_norm_addr *na = calloc(n, sizeof(*na));
	struct slot *slots = calloc(n, sizeof(*slots));
	uint64_t *offs = calloc(n, sizeof(*offs));
	struct ds_sym_batch *tmp = norm ? ds__normalizer_scratch(norm) : NULL;
	size_t ns = 0;
	int err = 0, found = 0;
	bool gone = false;

	if (!na || !slots || !offs || (norm && !tmp)) {
		ds__sym_batch_start(batch, 0);
		err = -ENOMEM;
		goto out;
	}
	if (!norm) {
		err = norm_err;
		fail_all(batch, addrs, n, err);
		goto done;
	}
	/* -ESRCH (gone meanwhile): every answer is DS_NORM_ERROR, said below. */
	err = ds_normalize(norm, addrs, n, na);
	if (err < 0 && err != -ESRCH) {
		fail_all(batch, addrs, n, err);
		goto done;
	}
	gone = err == -ESRCH;
	err = 0;
	for (size_t i = 0; i < n; i++) {
		/* A file without a build ID that was opened is still read:
		 * its own symbols.  By file offset, not the normalizer's
		 * vaddr: the DSO places it through its program headers, also
		 * where the normalizer could not read them (vaddr_known
		 * false). */
		if (na[i].dso && (na[i].reason == DS_NORM_OK || na[i].reason == DS_NORM_NO_BUILD_ID))
			slots[ns++] = (struct slot){ .group = (uintptr_t)na[i].dso,
						     .idx = i,
						     .dso = na[i].dso,
						     .look = na[i].file_offset,
						     .addr = addrs[i],
						     .flags = flags | DS_SYM_FILE_OFFSET,
						     .module = na[i].path };
		else if (put_plain(batch, i, &na[i]))
			err = -ENOMEM;
	}
	/* Every DSO's debuginfo found at once: local, then one parallel
	 * debuginfod batch for the rest. */
	if (ns)
		ds_store_prefetch(store, NULL);
	found = answer_slots(batch, tmp, slots, ns, offs, false);
	if (found < 0) {
		err = found;
		found = 0;
	}
done:
	ds__sym_batch_done(batch);
out:
	if (na)
		ds_norm_release(na, n);
	free(na);
	free(slots);
	free(offs);
	return err ? err : gone ? -ESRCH : found;
}

DS_API int ds_normalizer_symbolize(struct ds_normalizer *norm, const uint64_t *addrs,
				   size_t n, unsigned int flags, struct ds_sym_batch *batch)
{
	int err;

	if (!batch)
		return -EINVAL;
	if (!norm || (!addrs && n)) {
		ds__sym_batch_start(batch, 0);
		return -EINVAL;
	}
	err = ds__sym_batch_start(batch, n);
	return err || !n ? err : symbolize_norm(norm, 0, addrs, n, flags, batch);
}

DS_API int ds_symbolize_pid(struct ds_store *store, int32_t pid, const uint64_t *addrs, size_t n,
			    unsigned int flags, struct ds_sym_batch *batch)
{
	struct ds_normalizer *norm;
	int err;

	if (!batch)
		return -EINVAL;
	if (!store || (!addrs && n) || pid <= 0) {
		ds__sym_batch_start(batch, 0);
		return -EINVAL;
	}
	err = ds__sym_batch_start(batch, n);
	if (err || !n)
		return err;
	norm = ds_normalizer_new(store, pid, NULL);
	err = symbolize_norm(norm, norm ? 0 : -errno, addrs, n, flags, batch);
	ds_normalizer_free(norm);
	return err;
}

/* slots[0..ns), made in input order, into the order by_group() says: a
 * stable counting sort of their groups (below ngroups), what qsort() would
 * give at a fraction of its cost (it was 4% of dsostore serve's
 * instructions for /symbolize).  false: no memory (slots unchanged). */
static bool sort_groups(struct slot **slots, size_t ns, size_t ngroups)
{
	size_t *at = calloc(ngroups + 1, sizeof(*at));
	struct slot *out = malloc((ns ? ns : 1) * sizeof(*out));

	if (!at || !out) {
		free(at);
		free(out);
		return false;
	}
	for (size_t k = 0; k < ns; k++)
		at[(*slots)[k].group + 1]++;
	for (size_t g = 1; g <= ngroups; g++)
		at[g] += at[g - 1];
	for (size_t k = 0; k < ns; k++)
		out[at[(*slots)[k].group]++] = (*slots)[k];
	free(at);
	free(*slots);
	*slots = out;
	return true;
}

/* ds_symbolize_build_ids() once its arguments are checked and the batch
 * started for n > 0 answers.  dsos[0..nids): room for the DSOs. */
static int symbolize_refs(struct ds_store *store, const struct ds_build_id *ids, size_t nids,
			  const struct ds_sym_ref *refs, size_t n, unsigned int flags,
			  struct ds_sym_batch *batch, struct ds_dso **dsos, int *dso_err)
{
	struct slot *slots = calloc(n, sizeof(*slots));
	uint64_t *look = calloc(n, sizeof(*look));
	size_t ns = 0;
	int err = 0, found;
	bool sorted;

	if (!slots || !look) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t m = 0; m < nids; m++) {
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = ids[m] };

		bool valid = ids[m].size && ids[m].size <= DS_BUILD_ID_MAX;

		/* (An ID of size 0 is none: no DSO, its refs -EINVAL.) */
		errno = 0;
		dsos[m] = valid ? ds_store_findnew(store, NULL, &id) : NULL;
		dso_err[m] = dsos[m] ? 0 : !valid ? -EINVAL : errno ? -errno : -ENOMEM;
	}
	flags &= ~(unsigned)DS_SYM_FILE_OFFSET;
	for (size_t i = 0; i < n; i++) {
		const struct ds_sym_ref *r = &refs[i];
		bool ret = r->flags & DS_SYM_REF_RETURN, off = r->flags & DS_SYM_REF_OFFSET;
		int e = r->module >= nids ? -EINVAL : dso_err[r->module];

		if (e) {
			struct ds_sym_answer a = { .addr = r->addr, .status = DS_SYM_ERROR,
						   .error = e, .reason = DS_SYM_REASON_ERROR };

			if (ds__sym_batch_put(batch, i, &a, NULL))
				err = -ENOMEM;
			continue;
		}
		/* A return address names the call before it: addr - 1 is in
		 * the call instruction (as unwinders and llvm-symbolizer's
		 * users do); unsigned, 0 - 1 is past every segment. */
		slots[ns++] = (struct slot){ .group = (uint64_t)r->module * 2 + off,
					     .idx = i,
					     .dso = dsos[r->module],
					     .look = ret ? r->addr - 1 : r->addr,
					     .addr = r->addr,
					     .flags = flags | (off ? DS_SYM_FILE_OFFSET : 0),
					     .keep_addr = ret };
	}
	/* Every DSO's debuginfo looked for at once (those searched before
	 * are not again): local, then one parallel debuginfod batch.  Each
	 * DSO's lookups go through a scratch batch kept in batch: a caller
	 * that asks block after block (dsostore serve's /symbolize, 16,384
	 * frames a call) finds the strings of the last block measured and
	 * copied, not every one anew. */
	if (ns)
		ds_store_prefetch(store, NULL);
	sorted = sort_groups(&slots, ns, 2 * nids);
	found = answer_slots(batch, NULL, slots, ns, look, sorted);
	if (found < 0)
		err = found;
out:
	/* A failure leaves no answers, as the header says. */
	if (err)
		ds__sym_batch_start(batch, 0);
	else
		ds__sym_batch_done(batch);
	free(slots);
	free(look);
	return err ? err : found;
}

DS_API int ds_symbolize_build_ids(struct ds_store *store, const struct ds_build_id *ids,
				  size_t nids, const struct ds_sym_ref *refs, size_t n,
				  unsigned int flags, struct ds_sym_batch *batch)
{
	struct ds_dso **dsos;
	int *dso_err, err;

	if (!batch)
		return -EINVAL;
	if (!store || (!ids && nids) || (!refs && n)) {
		ds__sym_batch_start(batch, 0);
		return -EINVAL;
	}
	err = ds__sym_batch_start(batch, n);
	if (err || !n)
		return err;
	dsos = calloc(nids ? nids : 1, sizeof(*dsos));
	dso_err = calloc(nids ? nids : 1, sizeof(*dso_err));
	if (!dsos || !dso_err) {
		ds__sym_batch_start(batch, 0);
		err = -ENOMEM;
	} else {
		err = symbolize_refs(store, ids, nids, refs, n, flags, batch, dsos, dso_err);
	}
	/* The store keeps what keep_dsos says; the rest go now. */
	for (size_t m = 0; dsos && m < nids; m++)
		ds_dso_put(dsos[m]);
	free(dsos);
	free(dso_err);
	return err;
}
