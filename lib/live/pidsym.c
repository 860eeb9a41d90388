// SPDX-License-Identifier: MIT
/*
 * ds_symbolize_pid(): a live process's absolute addresses symbolized in one
 * call (what blazesym's Symbolizer::symbolize(Source::Process(pid),
 * Input::AbsAddr(addrs)) offers): normalized (normalize.c), grouped by
 * DSO, each DSO's addresses in one symbolizer batch, the answers put back
 * in input order with the reason of each (symbolize.c's assembly).
 */
#define _GNU_SOURCE
#include "live.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An address of a DSO, by the DSO's pointer then the input's order. */
struct slot {
	uintptr_t dso;
	size_t idx;
};

static int by_dso(const void *x, const void *y)
{
	const struct slot *a = x, *b = y;

	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
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
		 * its own symbols. */
		if (na[i].dso && (na[i].reason == DS_NORM_OK || na[i].reason == DS_NORM_NO_BUILD_ID))
			slots[ns++] = (struct slot){ (uintptr_t)na[i].dso, i };
		else if (put_plain(batch, i, &na[i]))
			err = -ENOMEM;
	}
	qsort(slots, ns, sizeof(*slots), by_dso);
	/* Every DSO's debuginfo found at once: local, then one parallel
	 * debuginfod batch for the rest. */
	if (ns)
		ds_store_prefetch(store, NULL);
	/* File offsets, not the normalizer's vaddrs: the DSO places them
	 * through its program headers, also where the normalizer could not
	 * read them (vaddr_known false). */
	for (size_t g = 0, e; g < ns; g = e) {
		struct ds_dso *dso = na[slots[g].idx].dso;
		const struct ds_sym_answer *ans;
		size_t m;

		for (e = g; e < ns && slots[e].dso == slots[g].dso; e++)
			offs[e] = na[slots[e].idx].file_offset;
		ds_dso_symbolize_batch(dso, offs + g, e - g, flags | DS_SYM_FILE_OFFSET, tmp);
		ans = ds_sym_batch_answers(tmp, &m);
		ds__sym_batch_forget(batch); /* tmp's strings were reused */
		for (size_t k = g; k < e; k++) {
			size_t i = slots[k].idx;
			struct ds_sym_answer a = { .addr = addrs[i], .status = DS_SYM_ERROR,
						   .error = -ENOMEM, .reason = DS_SYM_REASON_ERROR };

			if (m == e - g)
				a = ans[k - g];
			if (ds__sym_batch_put(batch, i, &a, na[i].path))
				err = -ENOMEM;
			else
				found += a.status == DS_SYM_FOUND;
		}
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
