/* SPDX-License-Identifier: MIT */
/*
 * ds_perfchains PERF.DATA: a helper of the shell tests (not a test).
 * Replays the recording (ds_perf_session_new(), which unwinds the user
 * stacks of --call-graph dwarf samples) and prints each sample as perf
 * script -F tid,time,ip,dso does, in a form a script can read: a line
 * "TID TIME_NS", then one line per callchain entry, "ADDR DSO" where ADDR
 * is, as perf script prints it, the address for the kernel and the file
 * offset (map-relative address) for a mapped user entry, and DSO the
 * recorded path ("[unknown]" without a map); then a blank line.
 */
#define _GNU_SOURCE
#include <dsostore.h>

#include <inttypes.h>
#include <stdio.h>

static const struct ds_perf_dso *dsos;

static void entry(uint64_t ip, size_t dso, uint64_t off, uint16_t mode)
{
	const char *path = dso == SIZE_MAX ? "[unknown]" : dsos[dso].path;
	bool user = mode == 2 || mode == 5;

	printf("%" PRIx64 " %s\n", user && dso != SIZE_MAX ? off : ip, path);
}

static int on_sample(void *user, const struct ds_perf_sample *s)
{
	size_t i = 0;

	(void)user;
	printf("%d %" PRIu64 "\n", s->tid, s->time);
	/* perf script: the sampled address is the callchain's first entry */
	if (!s->nr_callchain || s->callchain[0] != s->ip)
		entry(s->ip, s->dso, s->dso_offset, s->cpumode);
	for (; i < s->nr_callchain; i++)
		entry(s->callchain[i], s->callchain_dso[i], s->callchain_offset[i],
		      s->callchain_cpumode[i]);
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct ds_context *ctx;
	struct ds_perf_data *p = NULL;
	struct ds_perf_session *s = NULL;
	char err[512] = "";
	int rc = 1;

	if (argc != 2) {
		fprintf(stderr, "usage: ds_perfchains PERF.DATA\n");
		return 2;
	}
	ctx = ds_context_new(NULL);
	if (!ctx || ds_perf_data_open(argv[1], &p, err, sizeof(err)) != 0) {
		fprintf(stderr, "ds_perfchains: %s: %s\n", argv[1], err[0] ? err : "cannot open");
		goto out;
	}
	s = ds_perf_session_new(ctx, p, NULL, err, sizeof(err));
	if (!s) {
		fprintf(stderr, "ds_perfchains: %s: %s\n", argv[1], err);
		goto out;
	}
	ds_perf_session_dsos(s, &dsos);
	rc = ds_perf_session_samples(s, on_sample, NULL) ? 1 : 0;
out:
	ds_perf_session_free(s);
	ds_perf_data_close(p);
	ds_context_free(ctx);
	return rc;
}
