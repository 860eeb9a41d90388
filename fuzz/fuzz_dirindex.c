/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the directory index (lib/store/dirindex.c): the bytes
 * become the one file of a private directory, which a fresh ds_dirindex
 * scans.  The index reads a file through libelf's pread() path
 * (ELF_C_READ), not the map the other harnesses go through, so this is
 * where that path meets hostile headers.
 *
 * What must hold, whatever the bytes: the first scan reads the one file
 * and the second reads nothing (nothing changed); the stats count one
 * file, at most one of them ELF with a build ID, as many build IDs; the
 * build ID the memory reader (ds_build_id_read_mem()) finds in the same
 * bytes finds that file or nothing, and no other build ID finds anything.
 * It must not crash, leak or hang.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "fuzzfile.h"

#include <dsostore.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

static char dir[64], path[96];

static struct {
	unsigned long inputs, elf, debuginfo, executable;
} stats;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_dirindex: %lu inputs, %lu indexed by build ID, found as %lu debuginfo, "
		"%lu executable\n",
		stats.inputs, stats.elf, stats.debuginfo, stats.executable);
}

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

/* Once per process: libFuzzer's -fork and -jobs run several. */
static int setup(void)
{
	if (dir[0])
		return 0;
	if (fuzz_private_dir("dirindex", dir, sizeof(dir)) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/input", dir);
	atexit(cleanup);
	return 0;
}

/* The file or nothing; true when the file. */
static bool find_is_input(struct ds_dirindex *ix, const struct ds_build_id *bid,
			  enum ds_artifact what)
{
	char *got = NULL;
	int err = ds_dirindex_find(ix, bid, what, &got);

	if (err == -ENOENT && !got)
		return false;
	if (err != 0 || !got || strcmp(got, path) != 0)
		abort();
	free(got);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dirs[] = { dir, NULL };
	struct ds_build_id bid, other;
	struct ds_dirindex_stats st;
	struct ds_dirindex *ix;

	if (setup() != 0 || fuzz_write_file(path, data, size) != 0)
		abort();
	stats.inputs++;
	ix = ds_dirindex_new(dirs, NULL);
	if (!ix)
		abort();
	if (ds_dirindex_scan(ix) != 1 || ds_dirindex_scan(ix) != 0)
		abort();
	ds_dirindex_stats(ix, &st);
	if (st.files != 1 || st.elf_files > 1 || st.build_ids != st.elf_files || st.scans != 2 ||
	    st.files_read != 1 || st.bytes_read != size)
		abort();
	stats.elf += st.elf_files;
	if (ds_build_id_read_mem(data, size, &bid) == 0) {
		stats.debuginfo += find_is_input(ix, &bid, DS_ARTIFACT_DEBUGINFO);
		stats.executable += find_is_input(ix, &bid, DS_ARTIFACT_EXECUTABLE);
		other = bid;
		other.data[0] ^= 1;
		if (find_is_input(ix, &other, DS_ARTIFACT_DEBUGINFO) ||
		    find_is_input(ix, &other, DS_ARTIFACT_EXECUTABLE))
			abort();
	}
	ds_dirindex_free(ix);
	return 0;
}
