/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the core-file reader (ds_core_open_mem): the ELF and
 * program headers, the PT_NOTE segments (NT_PRSTATUS, NT_SIGINFO,
 * NT_PRPSINFO, NT_AUXV, NT_FILE) and the modules found in the core's
 * memory (ELF headers, program headers and build-ID notes there).
 *
 * The input is in a heap buffer of exactly its size (ASan sees a read
 * past it).  On success: at least one thread; every module has a path
 * that is NUL-terminated, start < end, a build ID of at most
 * DS_BUILD_ID_MAX bytes whose bytes occur in the input, and the modules
 * are in address order; memory reads never return more than asked.  A
 * failure must be -EBADMSG or -ENOEXEC with a message, or -ENOMEM.
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

static struct {
	unsigned long ok, modules, badmsg, noexec;
} stats;

void fuzz_summary(void)
{
	fprintf(stderr, "fuzz_core: %lu opened (%lu modules), %lu -EBADMSG, %lu -ENOEXEC\n",
		stats.ok, stats.modules, stats.badmsg, stats.noexec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf = malloc(size ? size : 1);
	const struct ds_core_module *m;
	struct ds_core_info info;
	struct ds_core *core;
	char err[128];
	uint8_t mem[64];
	size_t n;
	int rc;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	rc = ds_core_open_mem(buf, size, &core, err, sizeof(err));
	if (rc) {
		if (rc == -EBADMSG)
			stats.badmsg++;
		else if (rc == -ENOEXEC)
			stats.noexec++;
		else if (rc != -ENOMEM)
			abort();
		if (!err[0] && rc != -ENOMEM)
			abort();
		if (core)
			abort();
		free(buf);
		return 0;
	}
	stats.ok++;
	ds_core_info(core, &info);
	if (!info.nthreads || info.crash_tid != info.tids[0])
		abort();
	n = ds_core_modules(core, &m);
	stats.modules += n;
	for (size_t i = 0; i < n; i++) {
		if (!m[i].path || strlen(m[i].path) > size || m[i].start >= m[i].end)
			abort();
		if (i && m[i - 1].start > m[i].start)
			abort();
		if (m[i].build_id.size > DS_BUILD_ID_MAX)
			abort();
		if (m[i].build_id.size &&
		    !memmem(buf, size, m[i].build_id.data, m[i].build_id.size))
			abort();
		if (ds_core_read(core, m[i].start, mem, sizeof(mem)) > sizeof(mem))
			abort();
	}
	if (ds_core_read(core, UINT64_MAX - 8, mem, sizeof(mem)) > 9)
		abort();
	ds_core_close(core);
	free(buf);
	return 0;
}
