/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the perf.data reader (ds_perf_data_open_mem).
 *
 * The input is given in a heap buffer of exactly its size (ASan sees a
 * read past it).  On success every build ID must have a size of 1..20
 * and bytes that occur in the input, every file name must be
 * NUL-terminated and occur, with its NUL, in the input (the reader can
 * neither invent an entry nor run off the end of the table), and the
 * byte order reported must be the magic's.  A failure must be -EBADMSG or
 * -EPROTONOSUPPORT with a message, or -ENOMEM.  The error buffer is given
 * at a few sizes, 0 and 1 included, and must stay NUL-terminated.
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
	unsigned long ok, entries, badmsg, pipe, nomem;
} stats;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_perfdata: %lu read (%lu build IDs), %lu -EBADMSG, %lu pipe mode, "
		"%lu -ENOMEM\n",
		stats.ok, stats.entries, stats.badmsg, stats.pipe, stats.nomem);
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
	else if (ret == -ENOMEM)
		stats.nomem++;
	else
		die("unexpected error code", ret);
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
		ds_perf_data_close(pd);
	} else {
		check_error(ret, err, errlen);
	}
	free(err);
	free(copy);
	return 0;
}
