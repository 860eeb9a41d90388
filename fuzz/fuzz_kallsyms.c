/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the kernel's two readers (lib/live/kernel.c): the
 * /proc/kallsyms text parser and the check of a kallsyms cache file
 * (a file of the user's cache directory: anything may be in it).
 *
 * Each input is read three ways:
 *   - as kallsyms text (copied into a buffer of exactly its size plus the
 *     NUL the parser is promised): what it accepts must hold the parser's
 *     contract (addresses ascending, one symbol per address, names inside
 *     the text, lookups landing on a symbol at or below the address);
 *   - the parsed symbols serialized as a cache file, which the check must
 *     accept with the same symbols, and then that file with one byte
 *     changed (which byte and how from the input), which the check may
 *     refuse but must not misread;
 *   - as a cache file itself.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "live.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static unsigned long parsed, unparsed, checked, refused;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_kallsyms: %lu texts parsed, %lu refused; %lu cache files accepted, "
			"%lu refused\n",
		parsed, unparsed, checked, refused);
}

static void check_bytes(const void *bytes, size_t len)
{
	/* The check reads the arrays in place: 8-byte aligned, as mmap()ed. */
	uint64_t *buf = malloc((len / 8 + 1) * 8);
	struct ds__kallsyms *k = NULL;
	const char *why = NULL;

	if (!buf)
		abort();
	memcpy(buf, bytes, len);
	if (ds__kallsyms_check(buf, len, &k, &why) == 0) {
		uint64_t start;

		checked++;
		/* Lookups stay inside what was checked (ASan says if not). */
		for (uint64_t a = 1; a; a <<= 1)
			if (ds__kallsyms_find(k, a - 1, &start) && start > a - 1)
				abort();
	} else if (!why) {
		abort();
	} else {
		refused++;
	}
	ds__kallsyms_free(k);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct ds__kallsyms *k = NULL;
	struct ds_build_id bid = { .size = 20 };
	void *file = NULL;
	size_t flen = 0;
	uint64_t h = 1469598103934665603ull;

	if (!text)
		abort();
	memcpy(text, data, size);
	text[size] = 0;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ull;
	memset(bid.data, 0xab, bid.size);
	if (ds__kallsyms_parse(text, size, "_text", &k) == 0) {
		parsed++;
		/* k owns text now. */
		if (ds__kallsyms_serialize(k, &bid, "boot-id", "_text", &file, &flen) == 0) {
			uint64_t *copy = malloc((flen / 8 + 1) * 8);
			struct ds__kallsyms *c = NULL;
			const char *why = NULL;

			if (!copy)
				abort();
			memcpy(copy, file, flen);
			if (ds__kallsyms_check(copy, flen, &c, &why) != 0)
				abort(); /* what we write we must read */
			for (uint64_t a = 0; a < 64; a++) {
				uint64_t s1 = 0, s2 = 0;
				uint64_t probe = (h + a * 0x9e3779b97f4a7c15ull) >> (a % 48);
				const char *n1 = ds__kallsyms_find(k, probe, &s1);
				const char *n2 = ds__kallsyms_find(c, probe, &s2);

				const char *mod = NULL;
				uint64_t s3 = 0, ms = 0;
				const char *n3 = ds__kallsyms_find_mod(k, probe, &s3, &mod);

				/* With its module: the same symbol; the module's
				 * lowest symbol at or below it. */
				if (n3 != n1 || (n1 && s3 != s1) || (mod && !n3))
					abort();
				if (mod && (!ds__kallsyms_module_start(k, mod, &ms) || ms > s3))
					abort();
				/* The cache answers what the text answered, where it covers. */
				if (ds__kallsyms_covers(c, probe) &&
				    (!n1 != !n2 || (n1 && (strcmp(n1, n2) || s1 != s2))))
					abort();
			}
			ds__kallsyms_free(c);
			free(copy);
			((unsigned char *)file)[h % flen] ^= (unsigned char)(1u << (h >> 60 & 7));
			check_bytes(file, flen);
			free(file);
		}
		ds__kallsyms_free(k);
	} else {
		unparsed++;
		free(text);
	}
	check_bytes(data, size);
	return 0;
}
