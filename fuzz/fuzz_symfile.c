/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the saved symbol index (lib/symbolize/symfile.c, then symindex.c
 * on what it accepts): the bytes are a saved index file.
 *
 * Each input goes three ways:
 *  1. as memory (a heap buffer of exactly its size) to ds__symfile_parse()
 *     without a key, so that any inputs it names are taken: on success,
 *     every part must lie inside the input, 8-aligned, the ranges sorted
 *     and naming CUs that exist;
 *  2. again with the header's checksum and every blob's sum (and a CU's
 *     chunks' sums) made right,
 *     so that mutations of the tables and of the blobs get past the
 *     checksums to the structure checks (ours, then symindex.c's);
 *  3. as a file, in the directory of local saved indexes of a private
 *     context, through ds__symfile_load() (open, mmap, checks, the index)
 *     with the key its own header names.
 * Whatever index results is asked for the frames of every range's ends
 * and middle and of addresses taken from the input, with inlines, and
 * every string of every frame is read.  It must not crash, leak or hang;
 * a refusal is a negative errno.
 *
 * Built with -fsanitize=fuzzer by scripts/fuzz, and linked with
 * fuzz/replay.c for make check.
 */
#define _GNU_SOURCE
#include "symindex.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
void fuzz_summary(void);

#define HDR 168

static struct {
	unsigned long inputs, parsed, fixed_parsed, indexes, loads, frames, lookups;
} stats;

static char dir[64], index_dir[96];
static int released;

void fuzz_summary(void)
{
	fprintf(stderr,
		"fuzz_symfile: %lu inputs, %lu parsed, %lu parsed once checksums were fixed, "
		"%lu indexes from parts, %lu loaded from files, %lu lookups, %lu frames\n",
		stats.inputs, stats.parsed, stats.fixed_parsed, stats.indexes, stats.loads,
		stats.lookups, stats.frames);
}

static void cleanup(void)
{
	char path[PATH_MAX];
	DIR *d;

	/* The index directory holds the input's file, and maybe temporary
	 * files of nothing (nothing is saved here). */
	d = opendir(index_dir);
	if (d) {
		struct dirent *de;

		while ((de = readdir(d)))
			if (de->d_name[0] != '.') {
				snprintf(path, sizeof(path), "%s/%s", index_dir, de->d_name);
				unlink(path);
			}
		closedir(d);
	}
	rmdir(index_dir);
	snprintf(path, sizeof(path), "%s/cache", dir);
	rmdir(path);
	rmdir(dir);
}

static int setup(void)
{
	const char *tmp = getenv("TMPDIR");

	if (dir[0])
		return 0;
	snprintf(dir, sizeof(dir), "%s/fuzz_symfile.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		dir[0] = 0;
		return -1;
	}
	snprintf(index_dir, sizeof(index_dir), "%s/index", dir);
	if (mkdir(index_dir, 0700) != 0)
		return -1;
	atexit(cleanup);
	return 0;
}

static int emit(void *arg, const struct ds__raw_frame *f)
{
	size_t *sum = arg;

	*sum += f->function ? strlen(f->function) : 0;
	*sum += f->file ? strlen(f->file) : 0;
	stats.frames++;
	return stats.frames > (1ul << 40); /* never: every frame is read */
}

static uint64_t load64(const uint8_t *p, size_t avail)
{
	uint64_t v = 0;

	for (size_t i = 0; i < 8 && i < avail; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* One hint for every lookup of an input: a hostile index must not lead a
 * search that starts from an earlier answer astray either. */
static struct ds__find_hint hint;

static void lookup(struct ds_symbols *S, uint64_t addr)
{
	static const unsigned flag_sets[] = { DS_SYM_INLINES, DS_SYM_INLINES | DS_SYM_ELF_NAMES,
					      DS_SYM_BINUTILS, DS_SYM_NO_LINES };
	size_t sum = 0;

	for (size_t i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++) {
		bool from_symtab = false;
		int r = ds__symbols_find(S, addr, flag_sets[i], i & 1 ? &hint : NULL, &from_symtab,
					 emit, &sum);

		if (r > 0)
			abort(); /* emit never stops it */
		stats.lookups++;
	}
	(void)sum;
}

static void query(struct ds_symbols *S, const struct ds__symbols_parts *p, const uint8_t *data,
		  size_t size)
{
	for (size_t i = 0; i < p->nranges && i < 64; i++) {
		lookup(S, p->ranges[i].lo);
		lookup(S, p->ranges[i].lo + (p->ranges[i].hi - p->ranges[i].lo) / 2);
		lookup(S, p->ranges[i].hi - 1);
	}
	for (size_t off = 0; off + 8 <= size && off < 256; off += 40)
		lookup(S, load64(data + size - 8 - off, 8));
	lookup(S, 0);
	lookup(S, UINT64_MAX);
}

static void check_parts(const struct ds__symbols_parts *p, const uint8_t *base, size_t size)
{
	for (size_t i = 0; i <= p->ncus; i++) {
		const struct ds__blob *b = i ? &p->cus[i - 1] : &p->elf;
		const uint8_t *d = b->data;

		if (!b->size)
			continue;
		if (d < base || (size_t)(d - base) > size || b->size > size - (size_t)(d - base) ||
		    (size_t)(d - base) % 8)
			abort();
	}
	for (size_t i = 0; i < p->nranges; i++)
		if (p->ranges[i].cu >= p->ncus || p->ranges[i].lo >= p->ranges[i].hi ||
		    (i && p->ranges[i].lo < p->ranges[i - 1].lo))
			abort();
}

static void release(void *arg)
{
	(void)arg;
	released++;
}

/* Parse, and on success build an index over the parts and query it. */
static bool through_parts(const uint8_t *buf, size_t size, const uint8_t *data)
{
	struct ds__symbols_parts parts;
	struct ds__blob *cus = NULL;
	struct ds_symbols *S;
	char why[256];
	int err = ds__symfile_parse(buf, size, NULL, &parts, &cus, why, sizeof(why));

	if (err) {
		if (err != -EBADMSG && err != -ESTALE && err != -ENOMEM && err != -EINVAL)
			abort();
		if (!why[0])
			abort(); /* a refusal says why */
		return false;
	}
	check_parts(&parts, buf, size);
	released = 0;
	if (ds__symbols_from_parts(&parts, release, NULL, &S) == 0) {
		stats.indexes++;
		query(S, &parts, data, size);
		ds__symbols_free(S);
		if (released != 1)
			abort();
	}
	free(cus);
	return true;
}

/* The input with its checksums made right, where its sizes let them be. */
static void fix_checksums(uint8_t *b, size_t size)
{
	uint32_t ncus, nranges, crc;
	uint64_t tables;

	if (size < HDR)
		return;
	memcpy(&ncus, b + 56, 4);
	memcpy(&nranges, b + 60, 4);
	tables = HDR + 24 * ((uint64_t)ncus + nranges);
	if (tables > size)
		return;
	for (uint32_t i = 0; i <= ncus; i++) {
		/* The ELF blob (offset, size at 80; sum at 96), then each
		 * CU's table entry (offset, size; sum 16 bytes in). */
		size_t at = i ? HDR + 24 * (size_t)(i - 1) : 80;
		size_t crc_at = i ? at + 16 : 96;
		uint64_t off, len;

		memcpy(&off, b + at, 8);
		memcpy(&len, b + at + 8, 8);
		if (!len || off > size || len > size - off)
			continue;
		if (!i) {
			crc = ds__chunked_sum(b + off, (size_t)len, NULL);
		} else {
			/* A CU's chunks' sums follow it (8-aligned), and its sum
			 * is theirs: both made right where they fit. */
			uint64_t at_sums = (off + len + 7) & ~(uint64_t)7, n = ds__chunks_of(len);

			if (at_sums > size || n * 4 > size - at_sums)
				continue;
			crc = ds__chunked_sum(b + off, (size_t)len, (uint32_t *)(void *)(b + at_sums));
		}
		memcpy(b + crc_at, &crc, 4);
	}
	memset(b + 100, 0, 4);
	crc = (uint32_t)crc32(0, b, (uInt)tables);
	memcpy(b + 100, &crc, 4);
}

static void through_file(const uint8_t *data, size_t size)
{
	DS_OPTS(ds_context_opts, o, .perf_buildid_dir = "", .urls = "", .debug_dirs = NULL,
		.symindex = 1, .symindex_path = index_dir, .log_level = DS_LOG_ERROR);
	char path[PATH_MAX], hex[2 * DS_BUILD_ID_MAX + 1], cache[96];
	struct ds__symfile_key key = { .debug_size = 0 };
	struct ds_debuginfo di;
	struct ds_context *ctx;
	struct ds_symbols *S;
	int fd;

	if (size < HDR)
		return;
	key.bid.size = data[17];
	if (!key.bid.size || key.bid.size > DS_BUILD_ID_MAX)
		return;
	memcpy(key.bid.data, data + 104, key.bid.size);
	memcpy(&key.debug_size, data + 32, 8);
	memcpy(&key.binary_size, data + 40, 8);
	memcpy(&key.debug_crc, data + 48, 4);
	memcpy(&key.binary_crc, data + 52, 4);
	if (ds_build_id_format(&key.bid, hex, sizeof(hex)) < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", index_dir, hex);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return;
	}
	close(fd);
	snprintf(cache, sizeof(cache), "%s/cache", dir);
	o.cache_path = cache;
	ctx = ds_context_new(&o);
	if (!ctx)
		abort();
	ds__debuginfo_init(&di, &key.bid);
	di.source = DS_SOURCE_BUILD_ID_DIR;
	atomic_store(&di.path, (char *)"fuzz-debuginfo");
	if (ds__symfile_load(ctx, &di, &key, NULL, &S) == 0) {
		struct ds__symbols_parts none = { .nranges = 0 };

		stats.loads++;
		query(S, &none, data, size);
		ds__symbols_free(S);
	}
	ds_context_free(ctx);
	unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *buf;

	if (setup() != 0)
		return 0;
	stats.inputs++;
	hint = (struct ds__find_hint){ 0 }; /* (a new index may reuse the old one's address) */
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	stats.parsed += through_parts(buf, size, data);
	fix_checksums(buf, size);
	stats.fixed_parsed += through_parts(buf, size, data);
	through_file(buf, size);
	free(buf);
	return 0;
}
