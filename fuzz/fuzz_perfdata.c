/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the perf.data reader (ds_perf_data_open_mem) and the
 * session that replays its events (ds_perf_session_new).
 *
 * The input is given in a heap buffer of exactly its size (ASan sees a
 * read past it).  On success every build ID must have a size of 1..20
 * and bytes that occur in the input, every file name must be
 * NUL-terminated and occur, with its NUL, in the input (the reader can
 * neither invent an entry nor run off the end of the table), and the
 * byte order reported must be the magic's.  A failure must be -EBADMSG or
 * -EPROTONOSUPPORT with a message, -EFBIG (decompressing too much), or
 * -ENOMEM.  The error buffer is given at a few sizes, 0 and 1 included,
 * and must stay NUL-terminated.  A file that opens is replayed (no files
 * of this machine read, no network): a failure must be -EBADMSG with a
 * message; on success every sample's DSO index is in range, its callchain
 * resolved entry by entry, and no DSO has more samples than the file has
 * sample records.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include <dsostore.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

#define PERF_BUILD_ID_MAX 20

static struct {
	unsigned long ok, entries, badmsg, pipe, nomem, sessions, samples;
} stats;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_perfdata: %lu read (%lu build IDs), %lu -EBADMSG, %lu -EPROTONOSUPPORT, "
		"%lu -ENOMEM; %lu replayed (%lu samples)\n",
		stats.ok, stats.entries, stats.badmsg, stats.pipe, stats.nomem, stats.sessions,
		stats.samples);
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "fuzz_perfdata: %s (ret %d)\n", what, ret);
	abort();
}

static void check_entries(const uint8_t *data, size_t size, const struct ds_perf_data *pd)
{
	const struct ds_perf_build_id *b;
	int rc = ds_perf_data_build_ids(pd, &b);
	size_t n = rc > 0 ? (size_t)rc : 0;

	if (rc < 0 && rc != -ENOENT) /* -ENOENT: no build-ID table */
		die("unexpected error from ds_perf_data_build_ids", rc);

	/* A record takes at least 36 bytes of the input. */
	if (n > size / 36)
		die("more build IDs than the input has room for", (int)n);
	for (size_t i = 0; i < n; i++) {
		size_t len;

		if (b[i].build_id.size < 1 || b[i].build_id.size > PERF_BUILD_ID_MAX)
			die("build ID size out of 1..20", b[i].build_id.size);
		if (!memmem(data, size, b[i].build_id.data, b[i].build_id.size))
			die("build ID bytes not in the input", 0);
		if (!b[i].filename)
			die("NULL file name", 0);
		len = strnlen(b[i].filename, size);
		if (len >= size || !memmem(data, size, b[i].filename, len + 1))
			die("file name (with its NUL) not in the input", (int)len);
		if (b[i].cpumode > 7)
			die("cpumode beyond the 3 bits of misc", b[i].cpumode);
	}
	stats.entries += n;
}

static void check_error(int ret, const char *err, size_t errlen)
{
	if (errlen && !memchr(err, '\0', errlen))
		die("error message not terminated", ret);
	if ((ret == -EBADMSG || ret == -EPROTONOSUPPORT) && errlen > 1 && !err[0])
		die("error without a message", ret);
	if (ret == -EBADMSG)
		stats.badmsg++;
	else if (ret == -EPROTONOSUPPORT)
		stats.pipe++;
	else if (ret == -ENOMEM || ret == -EFBIG)
		stats.nomem++;
	else
		die("unexpected error code", ret);
}

struct walk {
	size_t ndsos;
	uint64_t n;
};

static int on_sample(void *user, const struct ds_perf_sample *s)
{
	struct walk *w = user;

	if (s->dso != SIZE_MAX && s->dso >= w->ndsos)
		die("sample DSO index out of range", (int)s->dso);
	for (size_t i = 0; i < s->nr_callchain; i++) {
		if (s->callchain_dso[i] != SIZE_MAX && s->callchain_dso[i] >= w->ndsos)
			die("callchain DSO index out of range", (int)i);
		if (s->callchain[i] >= (uint64_t)-4095)
			die("a callchain context marker left in the callchain", (int)i);
	}
	w->n++;
	return 0;
}

static void replay(const struct ds_perf_data *pd, char *err, size_t errlen)
{
	static const char *const no_dirs[] = { "/nonexistent/dsostore-fuzz", NULL };
	static struct ds_context *ctx;
	DS_OPTS(ds_perf_session_opts, so, .no_local_build_ids = true);
	const struct ds_perf_dso *dsos;
	struct ds_perf_session *s;
	struct ds_perf_info info;
	struct walk w = { 0 };

	if (!ctx) {
		DS_OPTS(ds_context_opts, co, .debug_dirs = no_dirs, .perf_buildid_dir = "",
			.urls = "");
		ctx = ds_context_new(&co);
		if (!ctx)
			die("no context", -errno);
	}
	ds_perf_data_info(pd, &info);
	{
		/* the header's machine: its strings are read whole (ASan sees
		 * one that is not terminated) */
		struct ds_perf_host host = { .sz = sizeof(host) };
		volatile size_t n = 0;

		ds_perf_data_host(pd, &host);
		n += host.cpudesc ? strlen(host.cpudesc) : 0;
		n += host.cpuid ? strlen(host.cpuid) : 0;
		(void)n;
	}
	if (errlen)
		err[0] = 0;
	s = ds_perf_session_new(ctx, pd, &so, errlen ? err : NULL, errlen);
	if (!s) {
		if (errno == ENOMEM)
			return;
		if (errno != EBADMSG && errno != E2BIG)
			die("unexpected session error", -errno);
		if (errlen > 1 && !err[0])
			die("session error without a message", -errno);
		return;
	}
	stats.sessions++;
	w.ndsos = ds_perf_session_dsos(s, &dsos);
	for (size_t i = 0; i < w.ndsos; i++) {
		if (!dsos[i].path || !dsos[i].machine)
			die("DSO without a path or machine", (int)i);
		if (dsos[i].samples > info.nr_samples)
			die("a DSO with more samples than the file has", (int)i);
	}
	if (ds_perf_session_samples(s, on_sample, &w))
		die("sample walk stopped", 0);
	if (w.n > info.nr_samples)
		die("more samples replayed than read", (int)w.n);
	stats.samples += w.n;
	if (w.ndsos)
		(void)ds_perf_session_thread_name(s, 0, 0);
	ds_perf_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t errlens[] = {256, 1, 0, 24};
	static unsigned turn;
	size_t errlen = errlens[turn++ % 4];
	uint8_t *copy = malloc(size ? size : 1);
	char *err = malloc(errlen ? errlen : 1);
	struct ds_perf_data *pd = NULL;
	/* The magic as this machine writes it: anything else read is swapped. */
	const uint64_t magic = 0x32454c4946524550ULL; /* "PERFILE2" */
	char native[8];
	int ret;

	memcpy(native, &magic, 8);

	if (!copy || !err)
		abort();
	memcpy(copy, data, size);
	memset(err, 'x', errlen);
	ret = ds_perf_data_open_mem(copy, size, &pd, errlen ? err : NULL, errlen);
	if (ret == 0) {
		if (!pd)
			die("success without a handle", 0);
		stats.ok++;
		/* The reader copies: the caller's buffer may go at once. */
		memset(copy, 0, size);
		check_entries(data, size, pd);
		if (ds_perf_data_swapped(pd) != (size < 8 || memcmp(data, native, 8) != 0))
			die("byte order not the magic's", 0);
		replay(pd, err, errlen);
		ds_perf_data_close(pd);
	} else {
		check_error(ret, err, errlen);
	}
	free(err);
	free(copy);
	return 0;
}
