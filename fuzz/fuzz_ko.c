/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the .ko relocation of lib/live/ksym.c (ds__ko_relocate): a
 * module's debuginfo comes from a debug directory or a debuginfod server,
 * and its section headers, symbols and relocations are used to write into
 * the copy.  What it accepts comes out ET_EXEC and the same size; nothing
 * is read or written outside the image (ASan says if it is).
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check (seeds: fuzz/gen_ko_corpus.sh).
 */
#define _GNU_SOURCE
#include "live.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long relocated, refused;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_ko: %lu relocated, %lu refused\n", relocated, refused);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Aligned as a malloc()ed file is; exactly its size. */
	unsigned char *img = malloc(size ? size : 1);
	int rc;

	if (!img)
		abort();
	memcpy(img, data, size);
	/* No such module: every section stays at 0 (no /sys file read). */
	rc = ds__ko_relocate(NULL, "dsostore-fuzz-no-such-module", img, size);
	if (rc == 0) {
		Elf64_Ehdr eh;

		memcpy(&eh, img, sizeof(eh));
		if (eh.e_type != ET_EXEC)
			abort();
		relocated++;
	} else if (rc != -EINVAL) {
		abort();
	} else {
		refused++;
	}
	free(img);
	return 0;
}
