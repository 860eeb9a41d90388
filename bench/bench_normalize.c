/* SPDX-License-Identifier: MIT */
/*
 * bench_normalize PID ADDR-FILE: a live process's absolute addresses (one
 * hex a line, as a profiler samples them) normalized (ds_normalize) and
 * then the whole agent path: normalized, grouped by DSO and symbolized
 * with inline frames (ds_dso_symbolize_batch).  Each cold (the first call:
 * maps read, files opened, indexes built) and warm (the same again: what
 * a long-running agent pays per batch).  Prints addresses per second.
 * bench/bench_normalize.sh makes the process and the input.
 */
#define _GNU_SOURCE
#include "benchutil.h"
#include "dsostore.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t *read_addrs(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	size_t cap = 1 << 20;
	uint64_t *v = xcalloc(cap, sizeof(*v));
	char line[64];

	if (!f)
		die("%s: cannot open", path);
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		if (*n == cap) {
			cap *= 2;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				die("out of memory");
		}
		v[(*n)++] = strtoull(line, NULL, 16);
	}
	fclose(f);
	return v;
}

static int cmp_dso(const void *a, const void *b)
{
	const struct ds_norm_addr *const *x = a, *const *y = b;
	uintptr_t p = (uintptr_t)(*x)->dso, q = (uintptr_t)(*y)->dso;

	return p < q ? -1 : p > q;
}

/* Normalize, then symbolize each DSO's addresses in one batch; how many
 * had a frame. */
static size_t whole_path(struct ds_normalizer *nz, const uint64_t *addrs, size_t n,
			 struct ds_norm_addr *out, const struct ds_norm_addr **by, uint64_t *va,
			 struct ds_sym_batch *b)
{
	size_t found = 0, m = 0;
	int rc;

	if (ds_normalize(nz, addrs, n, out) < 0)
		die("ds_normalize failed");
	for (size_t i = 0; i < n; i++)
		if (out[i].dso && out[i].vaddr_known)
			by[m++] = &out[i];
	qsort(by, m, sizeof(*by), cmp_dso);
	for (size_t i = 0; i < m;) {
		size_t j = i;

		while (j < m && by[j]->dso == by[i]->dso) {
			va[j - i] = by[j]->vaddr;
			j++;
		}
		rc = ds_dso_symbolize_batch(by[i]->dso, va, j - i, DS_SYM_INLINES, b);
		if (rc > 0)
			found += (size_t)rc;
		i = j;
	}
	ds_norm_release(out, n);
	return found;
}

int main(int argc, char **argv)
{
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_normalizer *nz;
	struct ds_sym_batch *b;
	struct ds_norm_addr *out;
	const struct ds_norm_addr **by;
	uint64_t *addrs, *va, t0, t1;
	size_t n, ok = 0, dsos = 0, found;
	double s;

	bench_name = "bench_normalize";
	if (argc != 3)
		die("usage: bench_normalize PID ADDR-FILE");
	addrs = read_addrs(argv[2], &n);
	out = xcalloc(n, sizeof(*out));
	by = xcalloc(n, sizeof(*by));
	va = xcalloc(n, sizeof(*va));
	ctx = ds_context_new(NULL);
	store = ctx ? ds_store_new(ctx, "host", NULL) : NULL;
	b = ds_sym_batch_new();
	if (!store || !b)
		die("cannot make a store");

	nz = ds_normalizer_new(store, atoi(argv[1]), NULL);
	if (!nz)
		die("cannot read process %s", argv[1]);
	for (int pass = 0; pass < 2; pass++) {
		t0 = now_ns();
		if (ds_normalize(nz, addrs, n, out) < 0)
			die("ds_normalize failed");
		t1 = now_ns();
		s = (double)(t1 - t0) / 1e9;
		printf("normalize %s: %zu addresses in %.3f s: %.0f addresses/s\n",
		       pass ? "warm (second call)" : "cold (maps read, files opened)", n, s, n / s);
		for (size_t i = 0; pass && i < n; i++) {
			ok += out[i].reason == DS_NORM_OK;
			dsos += i == 0 || out[i].dso != out[i - 1].dso;
		}
		ds_norm_release(out, n);
	}
	for (int w = 0; w < 2; w++) {
		t0 = now_ns();
		found = whole_path(nz, addrs, n, out, by, va, b);
		t1 = now_ns();
		s = (double)(t1 - t0) / 1e9;
		printf("normalize + symbolize (inline frames) %s: %zu addresses (%zu with a frame) "
		       "in %.3f s: %.0f addresses/s\n",
		       w ? "warm" : "cold (indexes built)", n, found, s, n / s);
	}
	ds_normalizer_free(nz);
	printf("normalized: %zu of %zu (%zu DSO changes in input order)\n", ok, n, dsos);
	ds_sym_batch_free(b);
	ds_store_free(store);
	ds_context_free(ctx);
	free(out);
	free(by);
	free(va);
	free(addrs);
	return 0;
}
