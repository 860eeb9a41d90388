/* SPDX-License-Identifier: MIT */
/* The DSO store (include/dsostore.h, "store" section): perf's findnew
 * matching rules, refcounts and memory return, the debuginfo state machine
 * (one search however many callers, misses remembered for the TTL), the
 * memory budget (CLOCK eviction, pins, reopen), DSOs kept after their
 * last put (keep_dsos: LRU, revival with the index built), and
 * concurrency stresses for TSan.
 *
 * Fixtures: one small -g program, linked once, split with objcopy into a
 * stripped binary and its debuginfo (--only-keep-debug); copies with
 * distinct build IDs get their debuginfo under
 * <tmp>/debug/.build-id/xx/rest.debug.  Build IDs are confirmed with
 * readelf/eu-readelf, sizes come from stat(). */
#define _GNU_SOURCE
#include "dsostore.h"
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NBINS	 22
#define NCONC	 20 /* bins[0..19]: debuginfo in the build-id dir */
#define BIN_LATE 20 /* its debuginfo appears only after a miss */
#define BIN_NONE 21 /* its debuginfo is never anywhere */
#define NTHREADS 8

struct bin {
	char *path;		/* the stripped binary */
	char *debug;		/* <debugdir>/.build-id/xx/rest.debug */
	char *held;		/* where BIN_LATE/BIN_NONE keep theirs out of reach */
	struct ds_build_id bid; /* as eu-readelf reads it */
	uint64_t debug_size;
	ino_t debug_ino;
};

static struct bin bins[NBINS];
static const char *debug_dirs[2];

static const char prog_src[] =
    "#include <stdio.h>\n"
    "static int square(int x) { return x * x; }\n"
    "int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += square(i); return s; }\n"
    "int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", sum(argc)); return 0; }\n";

/* The build ID the program is linked with; the fixtures are copies with
 * these 20 bytes (the note's descriptor, present once per file) replaced.
 * Linking once and patching keeps the setup fast on a loaded machine. */
#define TEMPLATE_HEX "7e3b1a7e0123456789abcdef0123456789abcdef"

/* Copy src to dst with the template build ID replaced by bid. */
static void copy_with_build_id(const char *src, const char *dst, const struct ds_build_id *bid)
{
	struct ds_build_id tmpl;
	size_t len;
	char *buf = t_read_all(src, &len), *hit, *again;
	int fd;

	t_hex_to_bid(TEMPLATE_HEX, &tmpl);
	hit = memmem(buf, len, tmpl.data, tmpl.size);
	again = hit ? memmem(hit + 1, len - (hit + 1 - buf), tmpl.data, tmpl.size) : NULL;
	if (!hit || again) {
		fprintf(stderr, "%s: the template build ID is not there exactly once\n", src);
		exit(1);
	}
	memcpy(hit, bid->data, bid->size);
	t_mkdir_parents(dst);
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0755);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) != 0) {
		perror(dst);
		exit(1);
	}
	free(buf);
}

static void make_bin(int i, const char *prog, const char *prog_debug)
{
	struct bin *b = &bins[i];
	char want[41];
	const char *dst;
	struct stat st;

	snprintf(want, sizeof(want), "%08x0123456789abcdef0123456789abcdef", 0x5eed0000u + i);
	t_hex_to_bid(want, &b->bid);
	b->path = t_path("bin/prog-%02d", i);
	b->debug = t_path("debug/.build-id/%.2s/%s.debug", want, want + 2);
	b->held = t_path("held/prog-%02d.debug", i);
	dst = i >= BIN_LATE ? b->held : b->debug;
	t_mkdir_parents(b->debug);
	copy_with_build_id(prog, b->path, &b->bid);
	copy_with_build_id(prog_debug, dst, &b->bid);
	if (stat(dst, &st) != 0) {
		perror(dst);
		exit(1);
	}
	b->debug_size = st.st_size;
	b->debug_ino = st.st_ino;
}

/* Every fixture's build ID as binutils' readelf reads it, in one run. */
static void check_fixture_build_ids(void)
{
	size_t cap = 64 + NBINS * 2 * 300, n = 0;
	char *cmd = malloc(cap), line[1024], file[512] = "";
	int seen = 0;
	FILE *p;

	n += snprintf(cmd + n, cap - n, "LC_ALL=C readelf -n 2>/dev/null");
	for (int i = 0; i < NBINS; i++)
		n += snprintf(cmd + n, cap - n, " '%s' '%s'", bins[i].path,
			      i >= BIN_LATE ? bins[i].held : bins[i].debug);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char hex[200];

		if (sscanf(line, "File: %511s", file) == 1)
			continue;
		if (sscanf(line, " Build ID: %199s", hex) != 1)
			continue;
		for (int i = 0; i < NBINS; i++) {
			struct ds_build_id got;

			if (strcmp(file, bins[i].path) && strcmp(file, bins[i].debug) &&
			    strcmp(file, bins[i].held))
				continue;
			t_hex_to_bid(hex, &got);
			CHECK(t_same_bid(&got, &bins[i].bid));
			seen++;
		}
	}
	if (!p || pclose(p) != 0 || seen != 2 * NBINS) {
		fprintf(stderr, "readelf -n confirmed %d of %d build IDs\n", seen, 2 * NBINS);
		exit(1);
	}
	free(cmd);
}

static void setup_bins(void)
{
	char *src = t_path("prog.c"), *prog = t_path("prog"), *prog_debug = t_path("prog.debug");

	if (t_sh("{ command -v gcc && command -v objcopy && command -v readelf && "
		 "command -v eu-readelf; } >/dev/null") != 0) {
		fprintf(stderr, "SKIP: gcc, objcopy, readelf or eu-readelf is not installed\n");
		exit(77);
	}
	/* Not t_compile(): it leaks a string, which LeakSanitizer reports. */
	t_write_file(src, prog_src);
	if (t_sh("gcc -g -O1 -Wl,--build-id=0x" TEMPLATE_HEX " -o '%s' '%s' && "
		 "objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug '%s'",
		 prog, src, prog, prog_debug, prog) != 0) {
		fprintf(stderr, "building the fixture program failed\n");
		exit(1);
	}
	for (int i = 0; i < NBINS; i++)
		make_bin(i, prog, prog_debug);
	free(src);
	free(prog);
	free(prog_debug);
	check_fixture_build_ids();
	debug_dirs[0] = t_path("debug");
	debug_dirs[1] = NULL;
}

/* ------------------------------------------------------------- helpers */

static struct ds_context *new_ctx(int miss_ttl_s)
{
	DS_OPTS(ds_context_opts, o, .debug_dirs = debug_dirs, .perf_buildid_dir = "",
		.miss_ttl_s = miss_ttl_s);
	struct ds_context *ctx = ds_context_new(&o);

	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	return ctx;
}

static struct ds_dso_id id_bid(const struct ds_build_id *bid)
{
	struct ds_dso_id id = {.flags = DS_DSO_ID_BUILD_ID, .build_id = *bid};

	return id;
}

static struct ds_dso_id id_inode(uint32_t maj, uint32_t min, uint64_t ino)
{
	struct ds_dso_id id = {.flags = DS_DSO_ID_INODE, .maj = maj, .min = min, .ino = ino};

	return id;
}

static const struct ds_dso_id id_none;

/* Stats, checked for the invariants that hold at any quiet moment. */
#define STATS(s) stats_at(s, __LINE__)
static struct ds_store_stats stats_at(struct ds_store *s, int line)
{
	struct ds_store_stats st;

	memset(&st, 0xa5, sizeof(st));
	ds_store_stats(s, &st);
	if (st.hits + st.misses != st.searches || st.debuginfos_open > st.dsos ||
	    (st.bytes_held == 0) != (st.debuginfos_open == 0) || st.reopens > st.evictions) {
		fprintf(stderr,
			"%s:%d: inconsistent stats: dsos %llu open %llu bytes %llu searches %llu "
			"hits %llu misses %llu evictions %llu reopens %llu\n",
			__FILE__, line, (unsigned long long)st.dsos,
			(unsigned long long)st.debuginfos_open, (unsigned long long)st.bytes_held,
			(unsigned long long)st.searches, (unsigned long long)st.hits,
			(unsigned long long)st.misses, (unsigned long long)st.evictions,
			(unsigned long long)st.reopens);
		t_failures++;
	}
	return st;
}

/* Everything given back: no DSO, no open debuginfo, no bytes held. */
#define CHECK_STORE_EMPTY(s)                                  \
	do {                                                  \
		struct ds_store_stats _st = STATS(s);         \
		CHECK_EQ_INT(_st.dsos, 0);                    \
		CHECK_EQ_INT(_st.debuginfos_open, 0);         \
		CHECK_EQ_INT(_st.bytes_held, 0);              \
	} while (0)

/* The fd is open on the file we expect and reads like an ELF file. */
static bool fd_is(int fd, const struct bin *b)
{
	char magic[4];
	struct stat st;

	return fd >= 0 && pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4) &&
	       fstat(fd, &st) == 0 && st.st_ino == b->debug_ino &&
	       (uint64_t)st.st_size == b->debug_size;
}

static struct ds_dso *findnew_bin(struct ds_store *s, int i)
{
	struct ds_dso_id id = id_bid(&bins[i].bid);
	struct ds_dso *d = ds_store_findnew(s, bins[i].path, &id);

	CHECK(d != NULL);
	if (!d)
		exit(1);
	return d;
}

/* ds_dso_debuginfo() that must succeed with bins[i]'s debuginfo. */
static const struct ds_debuginfo *debuginfo_of(struct ds_dso *d, int i)
{
	const struct ds_debuginfo *di = NULL;
	int rc = ds_dso_debuginfo(d, &di);

	CHECK_EQ_INT(rc, 0);
	CHECK(di != NULL);
	if (rc || !di)
		return NULL;
	CHECK(strcmp(ds_debuginfo_path(di), bins[i].debug) == 0);
	CHECK(t_same_bid(ds_debuginfo_build_id(di), &bins[i].bid));
	return di;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------ findnew matching */

static void test_findnew_build_id_rules(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_build_id a, b;
	struct ds_dso_id ida, idb;
	struct ds_dso *d1, *d2, *d3, *f;

	t_hex_to_bid("aaaa000000000000000000000000000000000001", &a);
	t_hex_to_bid("bbbb000000000000000000000000000000000002", &b);
	ida = id_bid(&a);
	idb = id_bid(&b);

	/* One path, two build IDs: two DSOs (a library replaced mid-session). */
	d1 = ds_store_findnew(s, "/usr/lib/libx.so.1", &ida);
	d2 = ds_store_findnew(s, "/usr/lib/libx.so.1", &idb);
	CHECK(d1 && d2 && d1 != d2);
	CHECK_EQ_INT(STATS(s).dsos, 2);
	CHECK((f = ds_store_find_build_id(s, &a)) == d1);
	ds_dso_put(f);
	CHECK((f = ds_store_find_build_id(s, &b)) == d2);
	ds_dso_put(f);

	/* Another path, same build ID: the same DSO, one more reference. */
	d3 = ds_store_findnew(s, "/opt/other/libx.so", &ida);
	CHECK(d3 == d1);
	CHECK_EQ_INT(STATS(s).dsos, 2);
	CHECK(d3 && strcmp(ds_dso_path(d3), "/usr/lib/libx.so.1") == 0);
	ds_dso_put(d3);
	CHECK_EQ_INT(STATS(s).dsos, 2); /* d1's own reference remains */
	CHECK((f = ds_store_find_build_id(s, &a)) == d1);
	ds_dso_put(f);
	ds_dso_put(d1);
	CHECK_EQ_INT(STATS(s).dsos, 1);
	ds_dso_put(d2);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

static void test_findnew_learns_build_id(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_build_id a;
	struct ds_dso_id ida, got;
	struct ds_dso *d1, *d2, *f;

	t_hex_to_bid("cccc000000000000000000000000000000000003", &a);
	ida = id_bid(&a);

	d1 = ds_store_findnew(s, "/lib/liby.so", &id_none);
	CHECK(d1 != NULL);
	ds_dso_id(d1, &got);
	CHECK(!(got.flags & DS_DSO_ID_BUILD_ID));
	errno = 0;
	CHECK(ds_store_find_build_id(s, &a) == NULL);

	/* Same path, now with a build ID: the DSO learns it, no twin. */
	d2 = ds_store_findnew(s, "/lib/liby.so", &ida);
	CHECK(d2 == d1);
	CHECK_EQ_INT(STATS(s).dsos, 1);
	memset(&got, 0, sizeof(got));
	ds_dso_id(d1, &got);
	CHECK(got.flags & DS_DSO_ID_BUILD_ID);
	CHECK(t_same_bid(&got.build_id, &a));
	CHECK((f = ds_store_find_build_id(s, &a)) == d1);
	ds_dso_put(f);
	CHECK((f = ds_store_findnew(s, NULL, &ida)) == d1);
	ds_dso_put(f);
	CHECK((f = ds_store_findnew(s, "/elsewhere/liby.so", &ida)) == d1);
	ds_dso_put(f);
	CHECK_EQ_INT(STATS(s).dsos, 1);

	ds_dso_put(d2);
	ds_dso_put(d1);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

static void test_findnew_inode_rules(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso_id ino1 = id_inode(8, 1, 1234), ino2 = id_inode(8, 1, 5678);
	struct ds_dso_id other_dev = id_inode(9, 1, 1234);
	struct ds_dso_id g1 = id_inode(8, 2, 42), g2 = id_inode(8, 2, 42), nog = id_inode(8, 2, 42);
	struct ds_dso *d1, *d2, *d3, *d4, *d5, *d6, *d7;

	/* A hard link or bind mount: another path, same inode, same DSO. */
	d1 = ds_store_findnew(s, "/a/libz.so", &ino1);
	d2 = ds_store_findnew(s, "/b/libz-link.so", &ino1);
	CHECK(d1 && d2 == d1);
	CHECK_EQ_INT(STATS(s).dsos, 1);

	/* Same path, another inode (or device): replaced on disk. */
	d3 = ds_store_findnew(s, "/a/libz.so", &ino2);
	CHECK(d3 && d3 != d1);
	d4 = ds_store_findnew(s, "/a/libz.so", &other_dev);
	CHECK(d4 && d4 != d1 && d4 != d3);
	CHECK_EQ_INT(STATS(s).dsos, 3);

	/* Generations compare only when both sides know theirs. */
	g1.flags |= DS_DSO_ID_INO_GENERATION;
	g1.ino_generation = 1;
	g2.flags |= DS_DSO_ID_INO_GENERATION;
	g2.ino_generation = 2;
	d5 = ds_store_findnew(s, "/c/libg.so", &g1);
	d6 = ds_store_findnew(s, "/c/libg.so", &g2);
	CHECK(d5 && d6 && d5 != d6);
	CHECK_EQ_INT(STATS(s).dsos, 5);
	d7 = ds_store_findnew(s, "/c/libg.so", &nog);
	CHECK(d7 && (d7 == d5 || d7 == d6));
	CHECK_EQ_INT(STATS(s).dsos, 5);

	ds_dso_put(d1);
	ds_dso_put(d2);
	ds_dso_put(d3);
	ds_dso_put(d4);
	ds_dso_put(d5);
	ds_dso_put(d6);
	ds_dso_put(d7);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

static void test_findnew_partial_id(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_build_id a, b;
	struct ds_dso_id ino = id_inode(8, 3, 77), ida, idb, both, got;
	struct ds_dso *d1, *d2, *d3, *d4, *e1, *e2;

	t_hex_to_bid("dddd000000000000000000000000000000000004", &a);
	t_hex_to_bid("eeee000000000000000000000000000000000005", &b);
	ida = id_bid(&a);
	idb = id_bid(&b);

	/* Inode known first, build ID later: they do not conflict. */
	d1 = ds_store_findnew(s, "/lib/libp.so", &ino);
	d2 = ds_store_findnew(s, "/lib/libp.so", &ida);
	CHECK(d1 && d2 == d1);
	memset(&got, 0, sizeof(got));
	ds_dso_id(d1, &got);
	CHECK((got.flags & (DS_DSO_ID_BUILD_ID | DS_DSO_ID_INODE)) ==
	      (DS_DSO_ID_BUILD_ID | DS_DSO_ID_INODE));
	CHECK(t_same_bid(&got.build_id, &a));
	CHECK(got.maj == 8 && got.min == 3 && got.ino == 77);
	both = ino;
	both.flags |= DS_DSO_ID_BUILD_ID;
	both.build_id = a;
	CHECK((d3 = ds_store_findnew(s, "/lib/libp.so", &both)) == d1);
	CHECK((d4 = ds_store_findnew(s, "/moved/libp.so", &ino)) == d1);
	CHECK_EQ_INT(STATS(s).dsos, 1);

	/* Build ID first, inode later. */
	e1 = ds_store_findnew(s, "/lib/libq.so", &idb);
	e2 = ds_store_findnew(
	    s, "/lib/libq.so",
	    &(struct ds_dso_id){.flags = DS_DSO_ID_INODE, .maj = 8, .min = 3, .ino = 88});
	CHECK(e1 && e2 == e1);
	CHECK_EQ_INT(STATS(s).dsos, 2);

	ds_dso_put(d1);
	ds_dso_put(d2);
	ds_dso_put(d3);
	ds_dso_put(d4);
	ds_dso_put(e1);
	ds_dso_put(e2);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

static void test_find_and_invalid(void)
{
	struct ds_context *ctx = new_ctx(0);
	char machine[] = "guest-1";
	struct ds_store *s = ds_store_new(ctx, machine, NULL), *other;
	struct ds_build_id a;
	struct ds_dso_id ida, ino = id_inode(8, 4, 99);
	struct ds_dso *d, *f;

	CHECK(s != NULL);
	if (!s)
		exit(1);
	machine[0] = 'X'; /* the store copied it */
	CHECK(strcmp(ds_store_machine(s), "guest-1") == 0);
	t_hex_to_bid("ffff000000000000000000000000000000000006", &a);
	ida = id_bid(&a);

	/* find never creates. */
	errno = 0;
	CHECK(ds_store_find(s, "/nope/libn.so", &id_none) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	errno = 0;
	CHECK(ds_store_find(s, NULL, &ida) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK(ds_store_find_build_id(s, &a) == NULL);
	CHECK_EQ_INT(STATS(s).dsos, 0);

	/* Only a build ID (a perf.data build-ID table entry, a crash report). */
	d = ds_store_findnew(s, NULL, &ida);
	CHECK(d != NULL);
	if (!d)
		exit(1);
	CHECK(ds_dso_path(d) == NULL);
	CHECK_EQ_INT(STATS(s).dsos, 1);
	CHECK((f = ds_store_find(s, NULL, &ida)) == d);
	ds_dso_put(f);
	CHECK((f = ds_store_find(s, "/any/where.so", &ida)) == d);
	ds_dso_put(f);

	/* Neither path nor build ID: nothing to key the DSO on. */
	errno = 0;
	CHECK(ds_store_findnew(s, NULL, &id_none) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	errno = 0;
	CHECK(ds_store_findnew(s, NULL, &ino) == NULL);
	CHECK_EQ_INT(errno, EINVAL);
	CHECK_EQ_INT(STATS(s).dsos, 1);

	/* Stores are per machine: another one does not see this DSO. */
	other = t_store_new(ctx, 0);
	CHECK(ds_store_find_build_id(other, &a) == NULL);
	CHECK((f = ds_store_findnew(other, NULL, &ida)) != NULL && f != d);
	ds_dso_put(f);
	ds_store_free(other);

	ds_dso_put(d);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	errno = 0;
	CHECK(ds_store_find(s, NULL, &ida) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	ds_store_free(s);
	ds_context_free(ctx);
	errno = 0;
	CHECK(ds_store_new(NULL, "host", NULL) == NULL);
	CHECK(errno != 0);
	ds_store_free(NULL);
	ds_context_free(NULL);
}

/* ------------------------------------------------ refcounts and memory */

static void test_refcounts(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso_id id0 = id_bid(&bins[0].bid);
	struct ds_dso *d, *g, *f, *many[4];
	struct ds_store_stats st;
	uint64_t sum = 0;

	d = findnew_bin(s, 0);
	g = ds_dso_get(d);
	CHECK(g == d);
	debuginfo_of(d, 0);
	st = STATS(s);
	CHECK_EQ_INT(st.dsos, 1);
	CHECK_EQ_INT(st.debuginfos_open, 1);
	CHECK_EQ_INT(st.bytes_held, bins[0].debug_size);

	ds_dso_put(g);
	CHECK_EQ_INT(STATS(s).dsos, 1);
	CHECK((f = ds_store_find(s, bins[0].path, &id0)) == d);
	ds_dso_put(f);

	/* The last put frees the DSO, its debuginfo, and its index entries. */
	ds_dso_put(d);
	CHECK_STORE_EMPTY(s);
	errno = 0;
	CHECK(ds_store_find(s, bins[0].path, &id0) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK(ds_store_find(s, bins[0].path, &id_none) == NULL);
	CHECK(ds_store_find_build_id(s, &bins[0].bid) == NULL);

	for (int i = 0; i < 4; i++) {
		many[i] = findnew_bin(s, i);
		debuginfo_of(many[i], i);
		sum += bins[i].debug_size;
	}
	st = STATS(s);
	CHECK_EQ_INT(st.dsos, 4);
	CHECK_EQ_INT(st.debuginfos_open, 4);
	CHECK_EQ_INT(st.bytes_held, sum);
	for (int i = 0; i < 4; i++)
		ds_dso_put(many[i]);
	CHECK_STORE_EMPTY(s);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* The caller's store handle may go first; the DSOs keep it alive.  ASan
 * checks that nothing is used after free or leaked. */
static void test_store_free_first(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	const struct ds_debuginfo *di0, *again = NULL;
	struct ds_dso *d0 = findnew_bin(s, 0), *d1 = findnew_bin(s, 1);

	di0 = debuginfo_of(d0, 0);
	ds_store_free(s);

	CHECK(strcmp(ds_dso_path(d0), bins[0].path) == 0);
	CHECK_EQ_INT(ds_dso_debuginfo(d0, &again), 0);
	CHECK(again == di0);
	/* A first search with only the DSO holding the store. */
	debuginfo_of(d1, 1);
	ds_dso_put(d0);
	ds_dso_put(d1);
	ds_context_free(ctx);
}

static void test_context_free_first(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d;

	ds_context_free(ctx);
	/* The store's reference keeps the debug dirs for the search. */
	d = findnew_bin(s, 2);
	debuginfo_of(d, 2);
	CHECK_EQ_INT(STATS(s).debuginfos_open, 1);
	ds_store_free(s);
	debuginfo_of(d, 2);
	ds_dso_put(d);
}

/* ------------------------------------------------------------ debuginfo */

static void test_debuginfo(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_build_id want;
	const struct ds_debuginfo *di = NULL, *di2 = NULL;
	struct ds_dso *d = findnew_bin(s, 0);
	struct ds_store_stats st;
	char buf[256];

	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), 0);
	CHECK(di != NULL);
	if (!di)
		exit(1);
	CHECK(strcmp(ds_debuginfo_path(di), bins[0].debug) == 0);
	t_hex_to_bid(t_readelf_build_id(ds_debuginfo_path(di)), &want);
	CHECK(t_same_bid(ds_debuginfo_build_id(di), &want));
	CHECK(t_same_bid(ds_debuginfo_build_id(di), &bins[0].bid));
	CHECK_EQ_INT(ds_debuginfo_source(di), DS_SOURCE_BUILD_ID_DIR);
	CHECK(fd_is(ds_debuginfo_fd(di), &bins[0]));
	CHECK(ds_debuginfo_elf(di) != NULL);

	/* The hot path: same answer, no new search. */
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di2), 0);
	CHECK(di2 == di);
	st = STATS(s);
	CHECK_EQ_INT(st.searches, 1);
	CHECK_EQ_INT(st.hits, 1);
	CHECK_EQ_INT(st.misses, 0);
	CHECK_EQ_INT(st.debuginfos_open, 1);
	CHECK_EQ_INT(st.bytes_held, bins[0].debug_size);
	CHECK_EQ_INT(ds_dso_error(d, buf, sizeof(buf)), 0);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* A DSO known only by path reads its build ID from the file. */
static void test_debuginfo_path_only(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	const struct ds_debuginfo *di = NULL;
	struct ds_dso *d = ds_store_findnew(s, bins[3].path, &id_none), *f;
	struct ds_dso *text, *gone;
	char *txt = t_path("not-elf.txt"), *missing = t_path("does/not/exist.so");
	struct ds_dso_id got;

	CHECK(d != NULL);
	if (!d)
		exit(1);
	debuginfo_of(d, 3);
	memset(&got, 0, sizeof(got));
	ds_dso_id(d, &got);
	CHECK(got.flags & DS_DSO_ID_BUILD_ID);
	CHECK(t_same_bid(&got.build_id, &bins[3].bid));
	CHECK((f = ds_store_find_build_id(s, &bins[3].bid)) == d);
	ds_dso_put(f);

	t_write_file(txt, "not an ELF file\n");
	text = ds_store_findnew(s, txt, &id_none);
	gone = ds_store_findnew(s, missing, &id_none);
	CHECK(text && gone);
	CHECK_EQ_INT(ds_dso_debuginfo(text, &di), -ENODATA);
	CHECK_EQ_INT(ds_dso_debuginfo(gone, &di), -ENODATA);
	ds_dso_put(text);
	ds_dso_put(gone);
	ds_dso_put(d);
	free(txt);
	free(missing);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* ----------------------------------------------------- exactly one search */

struct same_arg {
	struct ds_dso *dso;
	pthread_barrier_t *bar;
	const struct ds_debuginfo *seen;
	int errors;
};

static void *same_dso_thread(void *p)
{
	struct same_arg *a = p;

	pthread_barrier_wait(a->bar);
	for (int i = 0; i < 100; i++) {
		const struct ds_debuginfo *di = NULL;

		if (ds_dso_debuginfo(a->dso, &di) != 0 || !di || (a->seen && di != a->seen))
			a->errors++;
		a->seen = di;
	}
	return NULL;
}

static void test_one_search_same_dso(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct same_arg args[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t bar;
	struct ds_store_stats st;

	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		args[t] = (struct same_arg){.dso = findnew_bin(s, 4), .bar = &bar};
		pthread_create(&th[t], NULL, same_dso_thread, &args[t]);
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&bar);

	st = STATS(s);
	CHECK_EQ_INT(st.dsos, 1);
	CHECK_EQ_INT(st.searches, 1);
	CHECK_EQ_INT(st.hits, 1);
	for (int t = 0; t < NTHREADS; t++) {
		CHECK_EQ_INT(args[t].errors, 0);
		CHECK(args[t].seen == args[0].seen);
		CHECK(args[t].seen && !strcmp(ds_debuginfo_path(args[t].seen), bins[4].debug));
		ds_dso_put(args[t].dso);
	}
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

struct many_arg {
	struct ds_store *store;
	pthread_barrier_t *bar;
	int t;
	struct ds_dso *dso[NCONC];
	const struct ds_debuginfo *di[NCONC];
	int errors;
};

/* Each thread findnews all DSOs itself (no twins may appear) and asks
 * each for its debuginfo a few times, in its own order. */
static void *many_dso_thread(void *p)
{
	struct many_arg *a = p;

	pthread_barrier_wait(a->bar);
	for (int j = 0; j < NCONC; j++) {
		int k = (j + 3 * a->t) % NCONC;
		struct ds_dso_id id = id_bid(&bins[k].bid);

		a->dso[k] = ds_store_findnew(a->store, bins[k].path, &id);
	}
	for (int round = 0; round < 5; round++) {
		for (int j = 0; j < NCONC; j++) {
			int k = (NCONC - 1 - j + 7 * a->t) % NCONC;
			const struct ds_debuginfo *di = NULL;

			if (!a->dso[k] || ds_dso_debuginfo(a->dso[k], &di) != 0 ||
			    !t_same_bid(ds_debuginfo_build_id(di), &bins[k].bid) ||
			    (a->di[k] && a->di[k] != di))
				a->errors++;
			a->di[k] = di;
		}
	}
	return NULL;
}

static void test_one_search_per_dso(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	static struct many_arg args[NTHREADS];
	pthread_t th[NTHREADS];
	pthread_barrier_t bar;
	struct ds_store_stats st;

	pthread_barrier_init(&bar, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		memset(&args[t], 0, sizeof(args[t]));
		args[t].store = s;
		args[t].bar = &bar;
		args[t].t = t;
		pthread_create(&th[t], NULL, many_dso_thread, &args[t]);
	}
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&bar);

	st = STATS(s);
	CHECK_EQ_INT(st.dsos, NCONC);
	CHECK_EQ_INT(st.searches, NCONC);
	CHECK_EQ_INT(st.hits, NCONC);
	CHECK_EQ_INT(st.debuginfos_open, NCONC);
	for (int t = 0; t < NTHREADS; t++) {
		CHECK_EQ_INT(args[t].errors, 0);
		for (int k = 0; k < NCONC; k++) {
			CHECK(args[t].dso[k] == args[0].dso[k]);
			CHECK(args[t].di[k] == args[0].di[k]);
			ds_dso_put(args[t].dso[k]);
		}
	}
	CHECK_STORE_EMPTY(s);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* --------------------------------------------------------------- misses */

static void test_miss(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = findnew_bin(s, BIN_NONE), *nopath;
	const struct ds_debuginfo *di = NULL;
	struct ds_build_id nowhere;
	struct ds_dso_id idn;
	struct ds_store_stats st;
	char buf[4096], small[8];

	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(ds_dso_error(d, buf, sizeof(buf)), -ENOENT);
	CHECK(buf[0] != 0);
	/* It says where it looked: our only debug dir. */
	CHECK(strstr(buf, debug_dirs[0]) != NULL);
	memset(small, 'x', sizeof(small));
	CHECK_EQ_INT(ds_dso_error(d, small, sizeof(small)), -ENOENT);
	CHECK(memchr(small, 0, sizeof(small)) != NULL);

	/* Remembered: no second search within the TTL (600 s by default). */
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	st = STATS(s);
	CHECK_EQ_INT(st.searches, 1);
	CHECK_EQ_INT(st.misses, 1);
	CHECK_EQ_INT(st.hits, 0);
	CHECK_EQ_INT(st.debuginfos_open, 0);

	/* Only a build ID, known nowhere. */
	t_hex_to_bid("0badc0de00000000000000000000000000000007", &nowhere);
	idn = id_bid(&nowhere);
	nopath = ds_store_findnew(s, NULL, &idn);
	CHECK(nopath != NULL);
	CHECK_EQ_INT(ds_dso_debuginfo(nopath, &di), -ENOENT);
	CHECK_EQ_INT(STATS(s).misses, 2);
	ds_dso_put(nopath);
	ds_dso_put(d);
	CHECK_EQ_INT(STATS(s).dsos, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

static void test_miss_ttl(void)
{
	struct ds_context *ctx = new_ctx(1);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = findnew_bin(s, BIN_NONE);
	const struct ds_debuginfo *di = NULL;

	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(STATS(s).searches, 1);
	usleep(1100 * 1000);
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(STATS(s).searches, 2);
	CHECK_EQ_INT(STATS(s).misses, 2);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
}

static void test_miss_not_remembered(void)
{
	struct ds_context *ctx = new_ctx(-1);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = findnew_bin(s, BIN_NONE);
	const struct ds_debuginfo *di = NULL;

	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(STATS(s).searches, 3);
	CHECK_EQ_INT(STATS(s).misses, 3);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* Debuginfo installed after a miss is found once the TTL has passed. */
static void test_miss_then_found(void)
{
	struct ds_context *ctx = new_ctx(1);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = findnew_bin(s, BIN_LATE);
	const struct ds_debuginfo *di = NULL;
	struct ds_store_stats st;

	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	if (rename(bins[BIN_LATE].held, bins[BIN_LATE].debug) != 0) {
		perror("rename");
		exit(1);
	}
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), -ENOENT);
	CHECK_EQ_INT(STATS(s).searches, 1);
	usleep(1100 * 1000);
	debuginfo_of(d, BIN_LATE);
	st = STATS(s);
	CHECK_EQ_INT(st.searches, 2);
	CHECK_EQ_INT(st.hits, 1);
	CHECK_EQ_INT(st.misses, 1);
	CHECK_EQ_INT(st.debuginfos_open, 1);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* --------------------------------------------------------- memory budget */

/* Room for any two of bins[0..2]'s debuginfo, not for all three. */
static uint64_t budget_for_two(void)
{
	uint64_t a = bins[0].debug_size, b = bins[1].debug_size, c = bins[2].debug_size;
	uint64_t min = a < b ? (a < c ? a : c) : (b < c ? b : c);

	return a + b + c - min / 2;
}

static void test_budget_eviction(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, budget_for_two());
	struct ds_dso *da = findnew_bin(s, 0), *db = findnew_bin(s, 1), *dc = findnew_bin(s, 2);
	const struct ds_debuginfo *dia, *dib, *x = NULL;
	const char *pathb;
	struct ds_store_stats st;

	dia = debuginfo_of(da, 0);
	CHECK_EQ_INT(STATS(s).bytes_held, bins[0].debug_size);
	dib = debuginfo_of(db, 1);
	st = STATS(s);
	CHECK_EQ_INT(st.debuginfos_open, 2);
	CHECK_EQ_INT(st.bytes_held, bins[0].debug_size + bins[1].debug_size);
	CHECK_EQ_INT(st.evictions, 0);
	if (!dia || !dib)
		exit(1);
	pathb = ds_debuginfo_path(dib);

	/* A used again: B is now the least recently used. */
	CHECK_EQ_INT(ds_dso_debuginfo(da, &x), 0);
	CHECK(x == dia);
	debuginfo_of(dc, 2);
	st = STATS(s);
	CHECK_EQ_INT(st.evictions, 1);
	CHECK_EQ_INT(st.debuginfos_open, 2);
	CHECK_EQ_INT(st.bytes_held, bins[0].debug_size + bins[2].debug_size);
	/* Borrowed strings outlive the eviction (ASan would see otherwise). */
	CHECK(strcmp(pathb, bins[1].debug) == 0);
	CHECK(strcmp(ds_debuginfo_path(dib), bins[1].debug) == 0);
	CHECK(t_same_bid(ds_debuginfo_build_id(dib), &bins[1].bid));

	/* A and C were kept: using them reopens nothing. */
	debuginfo_of(da, 0);
	debuginfo_of(dc, 2);
	st = STATS(s);
	CHECK_EQ_INT(st.reopens, 0);
	CHECK_EQ_INT(st.evictions, 1);

	/* B comes back, pushing out one of the others. */
	x = debuginfo_of(db, 1);
	st = STATS(s);
	CHECK_EQ_INT(st.reopens, 1);
	CHECK_EQ_INT(st.evictions, 2);
	CHECK_EQ_INT(st.debuginfos_open, 2);
	CHECK(st.bytes_held == bins[0].debug_size + bins[1].debug_size ||
	      st.bytes_held == bins[1].debug_size + bins[2].debug_size);
	CHECK(st.bytes_held <= budget_for_two());
	CHECK_EQ_INT(st.searches, 3); /* a reopen is not a search */
	CHECK_EQ_INT(st.hits, 3);
	CHECK_EQ_INT(ds_dso_pin(db), 0);
	CHECK(x && fd_is(ds_debuginfo_fd(x), &bins[1]));
	CHECK(x && ds_debuginfo_elf(x) != NULL);
	ds_dso_unpin(db);

	ds_dso_put(da);
	ds_dso_put(db);
	ds_dso_put(dc);
	CHECK_STORE_EMPTY(s);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* Descriptors this process has open, as the kernel lists them. */
static int fds_open(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		return -1;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* A budget of two descriptors over three DSOs: the third debuginfo closes
 * the least recently used one, the process holds two more descriptors
 * than before (the kernel's count, not ours), and the one closed is opened
 * again, right, when it is asked for. */
static void test_fd_budget(void)
{
	struct ds_context *ctx = new_ctx(0);
	DS_OPTS(ds_store_opts, o, .fd_budget = 2);
	struct ds_store *s = ds_store_new(ctx, "host", &o);
	struct ds_dso *d[3];
	const struct ds_debuginfo *x;
	struct ds_store_stats st;
	int base = fds_open();

	if (!s)
		exit(1);
	for (int i = 0; i < 3; i++) {
		d[i] = findnew_bin(s, i);
		debuginfo_of(d[i], i);
		CHECK(STATS(s).files_open <= 2);
		CHECK(fds_open() <= base + 2);
	}
	st = STATS(s);
	CHECK_EQ_INT(st.files_open, 2);
	CHECK_EQ_INT(st.debuginfos_open, 2);
	CHECK_EQ_INT(st.evictions, 1);
	CHECK_EQ_INT(fds_open(), base + 2);
	/* The first was the one closed: asked again, it is reopened. */
	x = debuginfo_of(d[0], 0);
	st = STATS(s);
	CHECK_EQ_INT(st.reopens, 1);
	CHECK_EQ_INT(st.files_open, 2);
	CHECK_EQ_INT(fds_open(), base + 2);
	CHECK_EQ_INT(ds_dso_pin(d[0]), 0);
	CHECK(x && fd_is(ds_debuginfo_fd(x), &bins[0]));
	ds_dso_unpin(d[0]);
	for (int i = 0; i < 3; i++)
		ds_dso_put(d[i]);
	CHECK_STORE_EMPTY(s);
	ds_store_free(s);
	CHECK_EQ_INT(fds_open(), base);
	ds_context_free(ctx);
}

/* A pinned debuginfo is never the victim, even the least recently used;
 * pins nest. */
static void test_budget_pin(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = t_store_new(ctx, budget_for_two());
	struct ds_dso *da = findnew_bin(s, 0), *db = findnew_bin(s, 1), *dc = findnew_bin(s, 2);
	const struct ds_debuginfo *dia;
	struct ds_store_stats st;
	int fda;

	dia = debuginfo_of(da, 0);
	debuginfo_of(db, 1);
	if (!dia)
		exit(1);
	CHECK_EQ_INT(ds_dso_pin(da), 0);
	CHECK_EQ_INT(ds_dso_pin(da), 0);
	fda = ds_debuginfo_fd(dia);
	CHECK(fd_is(fda, &bins[0]));
	debuginfo_of(db, 1); /* B recent, A pinned: B must go anyway */
	debuginfo_of(dc, 2);
	st = STATS(s);
	CHECK_EQ_INT(st.evictions, 1);
	CHECK_EQ_INT(st.debuginfos_open, 2);
	CHECK_EQ_INT(st.bytes_held, bins[0].debug_size + bins[2].debug_size);
	CHECK(fd_is(fda, &bins[0]));
	CHECK(ds_debuginfo_fd(dia) == fda);

	/* One pin left: A is the least recently used (C was just used), but
	 * bringing B back must evict C, not A. */
	ds_dso_unpin(da);
	debuginfo_of(dc, 2);
	debuginfo_of(db, 1);
	st = STATS(s);
	CHECK_EQ_INT(st.evictions, 2);
	CHECK_EQ_INT(st.reopens, 1);
	CHECK_EQ_INT(st.bytes_held, bins[0].debug_size + bins[1].debug_size);
	CHECK(fd_is(fda, &bins[0]));
	debuginfo_of(da, 0);
	CHECK_EQ_INT(STATS(s).reopens, 1);
	ds_dso_unpin(da);

	ds_dso_put(da);
	ds_dso_put(db);
	ds_dso_put(dc);
	st = STATS(s);
	CHECK_EQ_INT(st.dsos, 0);
	CHECK_EQ_INT(st.bytes_held, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* ------------------------------------------------------------ keep_dsos */

static struct ds_store *keep_store_new(struct ds_context *ctx, unsigned int keep, uint64_t budget)
{
	DS_OPTS(ds_store_opts, o, .keep_dsos = keep, .mem_budget = budget);
	struct ds_store *s = ds_store_new(ctx, "host", &o);

	if (!s) {
		perror("ds_store_new");
		exit(1);
	}
	return s;
}

/* sum's first address in the fixture program, as nm -S gives it (every
 * bin is a copy of one program: the same address in each). */
static uint64_t sum_addr(void)
{
	static uint64_t lo;
	uint64_t hi;

	if (!lo)
		t_symbol_range(bins[0].debug, "sum", &lo, &hi);
	return lo;
}

/* d names sum's first address "sum" (its outermost frame).  Then the
 * index that completed is saved (s's thread holds d meanwhile: the puts
 * the tests count come after; s NULL: its handle is gone, nothing saves
 * in the background). */
static bool names_sum(struct ds_store *s, struct ds_dso *d)
{
	struct ds_sym_result r;
	bool ok = ds_dso_symbolize(d, sum_addr(), 0, &r) == 0 && r.nframes > 0 &&
		  r.frames[r.nframes - 1].function &&
		  !strcmp(r.frames[r.nframes - 1].function, "sum");

	ds_sym_result_release(&r);
	ds_store_flush(s);
	return ok;
}

/* Indexes made for the store so far: built from DWARF, or mapped from a
 * saved file (either way, work a kept DSO does not do again). */
static uint64_t indexes_made(struct ds_store *s)
{
	struct ds_store_stats st = STATS(s);

	return st.dwarf_builds + st.symtab_builds + st.symindex_loads;
}

/* keep_dsos 2 over three DSOs: the two put last stay, found again with
 * their debuginfo open and their index built; the third put pushes out the
 * least recently put; the store's free closes the kept ones (the kernel's
 * count of descriptors, and LeakSanitizer, say so). */
static void test_keep_lru(void)
{
	int base = fds_open();
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = keep_store_new(ctx, 2, 0);
	struct ds_dso *d[3], *again;
	struct ds_store_stats st;
	uint64_t made, searches;

	for (int i = 0; i < 3; i++) {
		d[i] = findnew_bin(s, i);
		CHECK(names_sum(s, d[i]));
	}
	CHECK_EQ_INT(indexes_made(s), 3);
	for (int i = 0; i < 3; i++)
		ds_dso_put(d[i]);
	/* bins[0] was put first: gone, its debuginfo closed. */
	st = STATS(s);
	CHECK_EQ_INT(st.kept, 2);
	CHECK_EQ_INT(st.dsos, 2);
	CHECK_EQ_INT(st.debuginfos_open, 2);
	CHECK_EQ_INT(st.bytes_held > bins[1].debug_size + bins[2].debug_size, 1);
	CHECK_EQ_INT(st.kept_hits, 0);
	errno = 0;
	CHECK(ds_store_find_build_id(s, &bins[0].bid) == NULL);
	CHECK_EQ_INT(errno, ENOENT);
	CHECK_EQ_INT(fds_open(), base + 2);

	/* bins[1] found again: the same index answers, nothing searched. */
	made = indexes_made(s);
	searches = STATS(s).searches;
	again = ds_store_find_build_id(s, &bins[1].bid);
	CHECK(again != NULL);
	if (!again)
		exit(1);
	CHECK(strcmp(ds_dso_path(again), bins[1].path) == 0);
	st = STATS(s);
	CHECK_EQ_INT(st.kept, 1);
	CHECK_EQ_INT(st.kept_hits, 1);
	CHECK_EQ_INT(st.dsos, 2);
	CHECK(names_sum(s, again));
	debuginfo_of(again, 1);
	CHECK_EQ_INT(indexes_made(s), made);
	CHECK_EQ_INT(STATS(s).searches, searches);
	/* Put again, it is the most recently used: bins[2] goes next. */
	ds_dso_put(again);
	CHECK_EQ_INT(STATS(s).kept, 2);
	d[0] = findnew_bin(s, 0);
	CHECK(names_sum(s, d[0])); /* a new DSO: its index made again */
	CHECK_EQ_INT(indexes_made(s), made + 1);
	ds_dso_put(d[0]);
	st = STATS(s);
	CHECK_EQ_INT(st.kept, 2);
	CHECK_EQ_INT(st.dsos, 2);
	CHECK(ds_store_find_build_id(s, &bins[2].bid) == NULL);
	CHECK_EQ_INT(fds_open(), base + 2);

	/* findnew by path and build ID revives as well. */
	again = findnew_bin(s, 0);
	CHECK(names_sum(s, again));
	CHECK_EQ_INT(indexes_made(s), made + 1);
	st = STATS(s);
	CHECK_EQ_INT(st.kept_hits, 2);
	CHECK_EQ_INT(st.kept, 1);
	ds_dso_put(again);

	ds_store_free(s);
	CHECK_EQ_INT(fds_open(), base);
	ds_context_free(ctx);
}

/* With keep_dsos 0 (as before the option), the last put frees. */
static void test_keep_none(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = keep_store_new(ctx, 0, 0);
	struct ds_dso *d = findnew_bin(s, 0);

	CHECK(names_sum(s, d));
	ds_dso_put(d);
	CHECK_STORE_EMPTY(s);
	CHECK_EQ_INT(STATS(s).kept, 0);
	CHECK(ds_store_find_build_id(s, &bins[0].bid) == NULL);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* A DSO still held when the store's handle goes is freed by its last put,
 * not kept (nothing could find it any more). */
static void test_keep_after_store_free(void)
{
	int base = fds_open();
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *s = keep_store_new(ctx, 2, 0);
	struct ds_dso *d0 = findnew_bin(s, 0), *d1 = findnew_bin(s, 1);

	debuginfo_of(d0, 0);
	debuginfo_of(d1, 1);
	ds_dso_put(d0); /* kept */
	CHECK_EQ_INT(fds_open(), base + 2);
	ds_store_free(s);
	CHECK_EQ_INT(fds_open(), base + 1);
	CHECK(names_sum(NULL, d1));
	ds_dso_put(d1);
	CHECK_EQ_INT(fds_open(), base);
	ds_context_free(ctx);
}

#define KEEP_BINS 8
#define KEEP_ITER 300

struct keep_arg {
	struct ds_store **stores; /* [0] no budget, [1] a budget */
	pthread_barrier_t *bar;
	unsigned int seed;
	int errors;
};

/* Lookups, symbolization and last puts racing each other on few DSOs,
 * a fixed number of times (TSan watches the refcount-0 window). */
static void *keep_thread(void *p)
{
	struct keep_arg *a = p;

	pthread_barrier_wait(a->bar);
	for (int it = 0; it < KEEP_ITER; it++) {
		int k = rand_r(&a->seed) % KEEP_BINS;
		struct ds_store *s = a->stores[rand_r(&a->seed) % 2];
		struct ds_dso_id id = id_bid(&bins[k].bid);
		struct ds_dso *d = rand_r(&a->seed) % 2 ? ds_store_findnew(s, bins[k].path, &id)
							 : ds_store_findnew(s, NULL, &id);

		if (!d) {
			a->errors++;
			continue;
		}
		if (!names_sum(s, d))
			a->errors++;
		if (rand_r(&a->seed) % 4 == 0) {
			struct ds_dso *f = ds_store_find_build_id(s, &bins[k].bid);

			if (f != d)
				a->errors++;
			ds_dso_put(f);
		}
		ds_dso_put(d);
	}
	return NULL;
}

static void test_keep_stress(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *stores[2] = {keep_store_new(ctx, 3, 0),
				      keep_store_new(ctx, 3, budget_for_two())};
	struct keep_arg args[4];
	pthread_t th[4];
	pthread_barrier_t bar;

	pthread_barrier_init(&bar, NULL, 4);
	for (int t = 0; t < 4; t++) {
		args[t] = (struct keep_arg){.stores = stores, .bar = &bar, .seed = 99 + t};
		pthread_create(&th[t], NULL, keep_thread, &args[t]);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		CHECK_EQ_INT(args[t].errors, 0);
	}
	pthread_barrier_destroy(&bar);
	for (int w = 0; w < 2; w++) {
		struct ds_store_stats st;

		/* The indexes the threads completed are being saved, each job
		 * holding its DSO: done first. */
		ds_store_flush(stores[w]);
		st = STATS(stores[w]);
		int found = 0;

		/* Three distinct DSOs (at least) were put last: three kept,
		 * nothing else alive; each found once more, the rest gone. */
		CHECK_EQ_INT(st.kept, 3);
		CHECK_EQ_INT(st.dsos, 3);
		CHECK_EQ_INT(st.misses, 0);
		for (int k = 0; k < KEEP_BINS; k++) {
			struct ds_dso *d = ds_store_find_build_id(stores[w], &bins[k].bid);

			if (d) {
				found++;
				CHECK(names_sum(stores[w], d));
			}
			ds_dso_put(d);
		}
		CHECK_EQ_INT(found, 3);
		CHECK_EQ_INT(STATS(stores[w]).kept_hits, st.kept_hits + 3);
		CHECK_EQ_INT(STATS(stores[w]).kept, 3);
		ds_store_free(stores[w]);
	}
	ds_context_free(ctx);
}

/* ---------------------------------------------------- concurrency stress */

#define STRESS_BINS 6
#define STRESS_HOLD 4

struct stress_arg {
	struct ds_store **stores; /* [0] unlimited, [1] with a budget */
	pthread_barrier_t *bar;
	double deadline;
	unsigned int seed;
	long iterations;
	int errors;
};

static void stress_use(struct stress_arg *a, struct ds_dso *d, int k, bool budget)
{
	const struct ds_debuginfo *di = NULL;
	const char *path = ds_dso_path(d);

	if (path && strcmp(path, bins[k].path) != 0)
		a->errors++;
	if (ds_dso_debuginfo(d, &di) != 0 || !t_same_bid(ds_debuginfo_build_id(di), &bins[k].bid) ||
	    strcmp(ds_debuginfo_path(di), bins[k].debug) != 0)
		a->errors++;
	if (budget && rand_r(&a->seed) % 4 == 0) {
		if (ds_dso_pin(d) != 0 || ds_dso_debuginfo(d, &di) != 0 ||
		    !fd_is(ds_debuginfo_fd(di), &bins[k]))
			a->errors++;
		ds_dso_unpin(d);
	}
}

static struct ds_dso *stress_lookup(struct stress_arg *a, struct ds_store *s, int k)
{
	struct ds_dso_id id = id_bid(&bins[k].bid);

	switch (rand_r(&a->seed) % 4) {
	case 0:
		return ds_store_findnew(s, NULL, &id);
	case 1:
		return ds_store_find(s, bins[k].path, &id); /* may be NULL */
	default:
		return ds_store_findnew(s, bins[k].path, &id);
	}
}

static void *stress_thread(void *p)
{
	struct stress_arg *a = p;
	struct ds_dso *held[2][STRESS_HOLD] = {{NULL}};

	pthread_barrier_wait(a->bar);
	while (now_s() < a->deadline) {
		int which = rand_r(&a->seed) % 2, k = rand_r(&a->seed) % STRESS_BINS;
		int slot = rand_r(&a->seed) % STRESS_HOLD;
		struct ds_dso *d = stress_lookup(a, a->stores[which], k);
		struct ds_store_stats st;

		a->iterations++;
		if (!d)
			continue;
		stress_use(a, d, k, which == 1);
		if (rand_r(&a->seed) % 8 == 0)
			ds_store_stats(a->stores[which], &st);
		/* Keep some references a while, so DSOs both live on and die. */
		if (rand_r(&a->seed) % 2) {
			if (held[which][slot])
				ds_dso_put(held[which][slot]);
			held[which][slot] = d;
		} else {
			ds_dso_put(ds_dso_get(d));
			ds_dso_put(d);
		}
	}
	for (int w = 0; w < 2; w++)
		for (int i = 0; i < STRESS_HOLD; i++)
			if (held[w][i])
				ds_dso_put(held[w][i]);
	return NULL;
}

static void test_concurrency_stress(void)
{
	struct ds_context *ctx = new_ctx(0);
	struct ds_store *stores[2] = {t_store_new(ctx, 0), t_store_new(ctx, budget_for_two())};
	struct stress_arg args[4];
	pthread_t th[4];
	pthread_barrier_t bar;
	double deadline = now_s() + 1.0;
	long iterations = 0;

	pthread_barrier_init(&bar, NULL, 4);
	for (int t = 0; t < 4; t++) {
		args[t] = (struct stress_arg){
		    .stores = stores, .bar = &bar, .deadline = deadline, .seed = 1234 + t};
		pthread_create(&th[t], NULL, stress_thread, &args[t]);
	}
	for (int t = 0; t < 4; t++) {
		pthread_join(th[t], NULL);
		CHECK_EQ_INT(args[t].errors, 0);
		iterations += args[t].iterations;
	}
	pthread_barrier_destroy(&bar);
	CHECK(iterations > 0);
	for (int w = 0; w < 2; w++) {
		struct ds_store_stats st = STATS(stores[w]);

		CHECK_EQ_INT(st.dsos, 0);
		CHECK_EQ_INT(st.debuginfos_open, 0);
		CHECK_EQ_INT(st.bytes_held, 0);
		CHECK_EQ_INT(st.misses, 0);
		ds_store_free(stores[w]);
	}
	ds_context_free(ctx);
}

int main(void)
{
	setup_bins();
	test_findnew_build_id_rules();
	test_findnew_learns_build_id();
	test_findnew_inode_rules();
	test_findnew_partial_id();
	test_find_and_invalid();
	test_refcounts();
	test_store_free_first();
	test_context_free_first();
	test_debuginfo();
	test_debuginfo_path_only();
	test_one_search_same_dso();
	test_one_search_per_dso();
	test_miss();
	test_miss_ttl();
	test_miss_not_remembered();
	test_miss_then_found();
	test_budget_eviction();
	test_budget_pin();
	test_fd_budget();
	test_concurrency_stress();
	test_keep_lru();
	test_keep_none();
	test_keep_after_store_free();
	test_keep_stress();
	return t_done("test_store");
}
