/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the small kernel- and perf-side readers: perf's config
 * syntax (lib/common/perfconfig.c: ~/.perfconfig, $PERF_CONFIG are the user's,
 * anything may be in them), raw ELF notes (/sys/kernel/notes, a module's
 * notes/.note.gnu.build-id: lib/live/kernel.c) and /proc/modules lines
 * (lib/live/ksym.c: a kernel root's files are the caller's).  Each input goes
 * through all three; what each accepts must keep its contract.
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

static unsigned long values, notes, modules;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_kconf: %lu config values, %lu build IDs, %lu module lines\n", values,
		notes, modules);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Exactly its size: the parsers must not read past it. */
	char *text = malloc(size ? size : 1);
	static const char *const names[] = { "buildid.dir", "core.proc-map-timeout", "a.b.c" };
	struct ds_build_id bid;
	const char *p;

	if (!text)
		abort();
	memcpy(text, data, size);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char out[64];
		int rc;

		memset(out, 0x55, sizeof(out));
		rc = ds__perfconfig_get(text, size, names[i], out, sizeof(out));
		if (rc < -ENAMETOOLONG || (rc != 0 && rc != 1 && rc != -ENAMETOOLONG))
			abort();
		if (rc && !memchr(out, 0, sizeof(out)))
			abort(); /* a value is always terminated */
		values += rc == 1;
	}
	if (ds__notes_build_id(data, size, &bid)) {
		if (!bid.size || bid.size > DS_BUILD_ID_MAX)
			abort();
		notes++;
	}
	p = text;
	while (p < text + size) {
		const char *nl = memchr(p, '\n', (size_t)(text + size - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(text + size - p);
		uint64_t start = 0;

		if (ds__modules_line(p, len, "ext4", 4, &start)) {
			if (!start)
				abort();
			modules++;
		}
		p += len + 1;
	}
	free(text);
	return 0;
}
