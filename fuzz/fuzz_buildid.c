/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the build-ID note reader (ds_build_id_read_mem).
 *
 * The input is copied into read-only pages that end exactly where an
 * inaccessible page begins, so a write to the caller's buffer faults and so
 * does a read past its end, with or without a sanitizer.  A success is
 * checked against the input itself: the bytes returned must be the desc of
 * a GNU build-ID note in it (header namesz 4, descsz = size, type 3, name
 * "GNU\0", either byte order), so the reader can neither invent an ID nor
 * hand out a piece of the wrong note.
 *
 * The same bytes then go through the check a download gets
 * (ds__elf_artifact_bad(): the build ID, and a whole ELF, not cut short
 * nor padded), from memory as the fetcher checks a body still in its
 * spool, and from a file (a memfd) as it checks a larger one: both must
 * say the same, word for word, for a debuginfo and an executable.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include <dsostore.h>
#include "elf/elfinfo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

/* How inputs ended, for the replay driver's summary: a corpus whose
 * mutations all fail the same way is not exercising much. */
static struct {
	unsigned long found, nodata, noexec, nomem, whole;
} stats;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_buildid: %lu build IDs, %lu -ENODATA, %lu -ENOEXEC, %lu -ENOMEM; "
		"%lu whole artifacts\n",
		stats.found, stats.nodata, stats.noexec, stats.nomem, stats.whole);
}

static void die(const char *what, int ret, const struct ds_build_id *bid)
{
	fprintf(stderr, "fuzz_buildid: %s (ret %d, size %d)\n", what, ret, bid->size);
	abort();
}

static uint32_t load32(const uint8_t *p, int msb)
{
	return msb ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
		   : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Is bid the desc of some GNU build-ID note somewhere in data? */
static int is_note_desc(const uint8_t *data, size_t size, const struct ds_build_id *bid)
{
	for (size_t p = 16; p + bid->size <= size; p++) {
		const uint8_t *h = data + p - 16;

		if (memcmp(data + p, bid->data, bid->size) || memcmp(data + p - 4, "GNU", 4))
			continue;
		for (int msb = 0; msb < 2; msb++)
			if (load32(h, msb) == 4 && load32(h + 4, msb) == bid->size &&
			    load32(h + 8, msb) == 3)
				return 1;
	}
	return 0;
}

/* The download check, from memory and from a file of the same bytes. */
static void check_artifact(const uint8_t *mem, size_t size, const struct ds_build_id *bid)
{
	static const enum ds_artifact whats[] = { DS_ARTIFACT_DEBUGINFO, DS_ARTIFACT_EXECUTABLE };
	int fd = memfd_create("fuzz_buildid", MFD_CLOEXEC);

	if (fd < 0)
		return; /* not the reader's fault: skip */
	if (size && write(fd, mem, size) != (ssize_t)size) {
		close(fd);
		return;
	}
	for (size_t i = 0; i < sizeof(whats) / sizeof(whats[0]); i++) {
		char mwhy[160], fwhy[160];
		const char *m = ds__elf_artifact_bad_mem(mem, size, bid, whats[i], mwhy, sizeof(mwhy));
		const char *f = ds__elf_artifact_bad(fd, size, bid, whats[i], fwhy, sizeof(fwhy));

		if (!m != !f || (m && strcmp(m, f))) {
			fprintf(stderr, "fuzz_buildid: memory: %s; file: %s\n", m ? m : "good",
				f ? f : "good");
			die("the check from memory and from a file disagree", 0, bid);
		}
		stats.whole += !m;
	}
	close(fd);
}

static void check_success(const uint8_t *data, size_t size, const struct ds_build_id *bid)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	struct ds_build_id back;

	if (bid->size < 1 || bid->size > DS_BUILD_ID_MAX)
		die("success with an impossible size", 0, bid);
	if (ds_build_id_format(bid, hex, sizeof(hex)) != 2 * bid->size ||
	    strlen(hex) != 2u * bid->size)
		die("format failed on a build ID just read", 0, bid);
	if (ds_build_id_parse(hex, &back) != 0 || !ds_build_id_equal(&back, bid))
		die("format/parse round trip changed the build ID", 0, bid);
	if (!is_note_desc(data, size, bid))
		die("the build ID is not the desc of a GNU build-ID note in the input", 0, bid);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static size_t pg;
	struct ds_build_id bid = {0};
	size_t span, maplen;
	uint8_t *map;
	int ret;

	if (!pg)
		pg = (size_t)sysconf(_SC_PAGESIZE);
	span = (size + pg - 1) / pg * pg;
	maplen = span + pg;
	map = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return 0; /* not the reader's fault: skip this input */
	if (size)
		memcpy(map + span - size, data, size);
	if (mprotect(map, span, PROT_READ) || mprotect(map + span, pg, PROT_NONE))
		abort();

	ret = ds_build_id_read_mem(map + span - size, size, &bid);
	if (ret == 0) {
		stats.found++;
		check_success(data, size, &bid);
	} else if (ret == -ENODATA) {
		stats.nodata++;
	} else if (ret == -ENOEXEC) {
		stats.noexec++;
	} else if (ret == -ENOMEM) {
		stats.nomem++;
	} else {
		/* The memory reader has no other failure to report. */
		die("unexpected error code", ret, &bid);
	}
	check_artifact(map + span - size, size, &bid);
	munmap(map, maplen);
	return 0;
}
