/* ds_dirindex_*: directories indexed by build ID, as `dsostore serve -F`
 * uses them.  A program is compiled here and split the standard way
 * (objcopy --only-keep-debug, strip -g); every expected path is one this
 * test placed, every build ID comes from readelf -n. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The test's paths are short (t_tmpdir() under $TMPDIR): buffers of
 * TPATH keep every command line below within its buffer. */
#define TPATH 1024
static char root[TPATH], outside[TPATH];

/* The build ID readelf -n prints for path, parsed by the test's own hex
 * reader; exits when there is none. */
static void readelf_bid(const char *path, struct ds_build_id *bid, char *hex)
{
	FILE *p = t_popen("readelf -n '%s' 2>/dev/null | awk '/Build ID:/ {print $3; exit}'", path);
	char line[256] = "";

	if (!fgets(line, sizeof(line), p) || !line[0]) {
		fprintf(stderr, "readelf -n %s: no build ID\n", path);
		exit(2);
	}
	pclose(p);
	line[strcspn(line, "\n")] = 0;
	snprintf(hex, 2 * DS_BUILD_ID_MAX + 1, "%.*s", 2 * DS_BUILD_ID_MAX, line);
	t_hex_to_bid(hex, bid);
}

static void sh(const char *cmd)
{
	if (t_sh("%s", cmd) != 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		exit(2);
	}
}

/* What find() gives, "" for -ENOENT, "error" otherwise: in buf. */
static const char *found(struct ds_dirindex *ix, const struct ds_build_id *bid,
			 enum ds_artifact what)
{
	static char buf[2][PATH_MAX];
	static int turn;
	char *path = NULL;
	int err = ds_dirindex_find(ix, bid, what, &path);
	char *out = buf[turn++ & 1];

	snprintf(out, PATH_MAX, "%s", err == 0 ? path : err == -ENOENT ? "" : "error");
	free(path);
	return out;
}

#define CHECK_FOUND(ix, bid, what, rel)                                                  \
	do {                                                                               \
		char _want[2 * PATH_MAX + 2];                                                    \
		const char *_got = found(ix, bid, what);                                   \
		snprintf(_want, sizeof(_want), "%s%s%s", *(rel) ? root : "", *(rel) ? "/" : "", \
			 rel);                                                             \
		if (strcmp(_got, _want)) {                                                 \
			fprintf(stderr, "%s:%d: found '%s', expected '%s'\n", __FILE__,     \
				__LINE__, _got, _want);                                    \
			t_failures++;                                                      \
		}                                                                          \
	} while (0)

static const char prog1_c[] = "int main(void) { return 1; }\n";
static const char prog2_c[] = "int main(void) { return 2 + 2; }\nint two(void) { return 2; }\n";

struct finder {
	struct ds_dirindex *ix;
	const struct ds_build_id *bid;
	const char *want;
	atomic_bool *stop;
	atomic_long finds;
	long wrong;
};

static void *find_loop(void *arg)
{
	struct finder *f = arg;

	while (!atomic_load(f->stop)) {
		char *path = NULL;
		int err = ds_dirindex_find(f->ix, f->bid, DS_ARTIFACT_DEBUGINFO, &path);

		/* Always the debug file, whatever the scan in progress has
		 * read so far. */
		if (err != 0 || strcmp(path, f->want) != 0)
			f->wrong++;
		atomic_fetch_add(&f->finds, 1);
		free(path);
	}
	return NULL;
}

static void test_threads(const struct ds_build_id *bid, const char *debug_path)
{
	const char *dirs[] = { root, NULL };
	struct ds_dirindex *ix = ds_dirindex_new(dirs, NULL);
	atomic_bool stop = false;
	struct finder f[2];
	pthread_t th[2];
	struct ds_dirindex_stats st;

	CHECK(ix != NULL);
	CHECK(ds_dirindex_scan(ix) >= 0);
	for (int i = 0; i < 2; i++) {
		f[i] = (struct finder){ ix, bid, debug_path, &stop, 0, 0 };
		CHECK(pthread_create(&th[i], NULL, find_loop, &f[i]) == 0);
	}
	/* Both finders are running before the scans start... */
	for (int i = 0; i < 2; i++)
		while (atomic_load(&f[i].finds) == 0)
			sched_yield();
	/* Each scan reads one file again (its mtime set to another second)
	 * and swaps a new table in while the finders read the old one. */
	for (int i = 0; i < 40; i++) {
		char cmd[PATH_MAX + 64];

		snprintf(cmd, sizeof(cmd), "touch -d '@%d' '%s/README.txt'", 1000000 + i, root);
		sh(cmd);
		CHECK_EQ_INT(ds_dirindex_scan(ix), 1);
	}
	/* ...and stop after them. */
	atomic_store(&stop, true);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		CHECK_EQ_INT(f[i].wrong, 0);
	}
	ds_dirindex_stats(ix, &st);
	CHECK_EQ_INT(st.scans, 41);
	ds_dirindex_free(ix);
}

/* Other forms of the two artifacts, in a directory of their own:
 * debuginfo whose .debug_info is compressed (gABI SHF_COMPRESSED, and
 * GNU .zdebug_info), and an executable without section headers (its
 * header's e_shoff, e_shnum and e_shstrndx zeroed, as sstrip leaves it:
 * its code is its PT_LOAD with PF_X, its build ID its PT_NOTE). */
static void test_forms(const char *tmp, const char *prog2, const struct ds_build_id *bid2,
		       const char *other, const struct ds_build_id *bido)
{
	char cmd[16 * TPATH], dir[TPATH], want[2 * TPATH];
	const char *dirs[] = { dir, NULL };
	struct ds_dirindex *ix;

	snprintf(dir, sizeof(dir), "%s/forms", tmp);
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s'; "
		 "objcopy --only-keep-debug --compress-debug-sections=zlib '%s' '%s/gabi.debug'; "
		 "objcopy --only-keep-debug --compress-debug-sections=zlib-gnu '%s' '%s/gnu.debug'; "
		 "readelf -S '%s/gabi.debug' 2>/dev/null | grep -A1 ' .debug_info ' | grep -q ' C '; "
		 "readelf -S '%s/gnu.debug' 2>/dev/null | grep -q ' .zdebug_info '; "
		 "strip -o '%s/noshdr' '%s'; "
		 "python3 -c 'import sys, struct; f = open(sys.argv[1], \"r+b\"); "
		 "f.seek(0x28); f.write(bytes(8)); f.seek(0x3c); f.write(bytes(4))' '%s/noshdr'",
		 dir, prog2, dir, other, dir, dir, dir, dir, other, dir);
	sh(cmd);
	ix = ds_dirindex_new(dirs, NULL);
	CHECK(ix != NULL);
	CHECK_EQ_INT(ds_dirindex_scan(ix), 3);
	snprintf(want, sizeof(want), "%s/gabi.debug", dir);
	CHECK(!strcmp(found(ix, bid2, DS_ARTIFACT_DEBUGINFO), want));
	CHECK(!strcmp(found(ix, bid2, DS_ARTIFACT_EXECUTABLE), ""));
	snprintf(want, sizeof(want), "%s/gnu.debug", dir);
	CHECK(!strcmp(found(ix, bido, DS_ARTIFACT_DEBUGINFO), want));
	snprintf(want, sizeof(want), "%s/noshdr", dir);
	CHECK(!strcmp(found(ix, bido, DS_ARTIFACT_EXECUTABLE), want));
	ds_dirindex_free(ix);
}

/* libc6-dbg's file for the system's libc, by readelf's build ID. */
static void test_system_libc(void)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	const char *dirs[] = { "/usr/lib/debug", NULL };
	char hex[2 * DS_BUILD_ID_MAX + 1], want[PATH_MAX], got_hex[2 * DS_BUILD_ID_MAX + 1];
	struct ds_build_id bid, got_bid;
	struct ds_dirindex *ix;
	char *path = NULL;

	if (access(libc, R_OK) != 0 || access("/usr/lib/debug", R_OK) != 0) {
		printf("skipped: the system's libc (no %s or /usr/lib/debug)\n", libc);
		return;
	}
	readelf_bid(libc, &bid, hex);
	snprintf(want, sizeof(want), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (access(want, R_OK) != 0) {
		printf("skipped: the system's libc (no %s: libc6-dbg)\n", want);
		return;
	}
	ix = ds_dirindex_new(dirs, NULL);
	CHECK(ix != NULL);
	CHECK(ds_dirindex_scan(ix) > 0);
	CHECK_EQ_INT(ds_dirindex_find(ix, &bid, DS_ARTIFACT_DEBUGINFO, &path), 0);
	if (path) {
		/* Whichever of its names (libc6-dbg may link it twice):
		 * a file under the directory with readelf's build ID. */
		readelf_bid(path, &got_bid, got_hex);
		CHECK(t_same_bid(&got_bid, &bid));
		CHECK(strncmp(path, "/usr/lib/debug/", 15) == 0);
		free(path);
	}
	ds_dirindex_free(ix);
}

/* A context given the index (ds_context_opts.dirindex): ds_find() finds
 * the index's file, and says where from; without it, nothing. */
static void test_context(const struct ds_build_id *bid, const char *debug_path)
{
	static const char *const no_dirs[] = { NULL };
	const char *dirs[] = { root, NULL };
	struct ds_dirindex *ix = ds_dirindex_new(dirs, NULL);
	enum ds_source src = DS_SOURCE_NONE;
	char *path = NULL;

	CHECK(ix != NULL);
	CHECK(ds_dirindex_scan(ix) > 0);
	{
		DS_OPTS(ds_context_opts, co, .debug_dirs = no_dirs, .perf_buildid_dir = "",
			.urls = "", .dirindex = ix);
		struct ds_context *ctx = ds_context_new(&co);

		CHECK(ctx != NULL);
		CHECK_EQ_INT(ds_find(ctx, bid, NULL, DS_ARTIFACT_DEBUGINFO, &path, &src, NULL, 0), 0);
		CHECK(path && !strcmp(path, debug_path));
		CHECK(src == DS_SOURCE_DIRINDEX);
		CHECK(!strcmp(ds_source_name(src), "indexed-dir"));
		free(path);
		ds_context_free(ctx);
	}
	{
		DS_OPTS(ds_context_opts, co, .debug_dirs = no_dirs, .perf_buildid_dir = "",
			.urls = "");
		struct ds_context *ctx = ds_context_new(&co);

		CHECK(ctx != NULL);
		CHECK_EQ_INT(ds_find(ctx, bid, NULL, DS_ARTIFACT_DEBUGINFO, &path, &src, NULL, 0),
			     -ENOENT);
		ds_context_free(ctx);
	}
	ds_dirindex_free(ix);
}

/* ds_dirindex_open(): the file the scan read, opened; -ESTALE once what
 * is at its path is not that file (touched: another mtime), until a
 * rescan reads it again. */
static void test_open(const struct ds_build_id *bid, const char *debug_path)
{
	const char *dirs[] = { root, NULL };
	struct ds_dirindex *ix = ds_dirindex_new(dirs, NULL);
	char *path = NULL, cmd[4 * TPATH];
	struct stat a, b;
	int fd = -2;

	CHECK(ix != NULL);
	CHECK(ds_dirindex_scan(ix) > 0);
	CHECK_EQ_INT(ds_dirindex_open(ix, bid, DS_ARTIFACT_DEBUGINFO, &path, &fd), 0);
	CHECK(fd >= 0 && path && !strcmp(path, debug_path));
	if (fd >= 0) {
		CHECK(fstat(fd, &a) == 0 && stat(debug_path, &b) == 0 && a.st_ino == b.st_ino);
		close(fd);
	}
	free(path);
	snprintf(cmd, sizeof(cmd), "touch -d @1700000000 '%s'", debug_path);
	sh(cmd);
	path = (char *)1;
	CHECK_EQ_INT(ds_dirindex_open(ix, bid, DS_ARTIFACT_DEBUGINFO, &path, &fd), -ESTALE);
	CHECK(fd == -1 && path == NULL);
	CHECK_EQ_INT(ds_dirindex_scan(ix), 1);
	CHECK_EQ_INT(ds_dirindex_open(ix, bid, DS_ARTIFACT_DEBUGINFO, &path, &fd), 0);
	if (fd >= 0)
		close(fd);
	free(path);
	CHECK_EQ_INT(ds_dirindex_open(ix, bid, DS_ARTIFACT_SOURCE, &path, &fd), -EINVAL);
	ds_dirindex_free(ix);
}

int main(void)
{
	const char *tmp = t_tmpdir();
	char *src1 = t_path("prog1.c"), *src2 = t_path("prog2.c");
	char prog[TPATH], prog2[TPATH], other[TPATH];
	char hex[2 * DS_BUILD_ID_MAX + 1], hex2[2 * DS_BUILD_ID_MAX + 1],
		hexo[2 * DS_BUILD_ID_MAX + 1];
	char cmd[32 * TPATH], dbg[2 * TPATH], strp[2 * TPATH];
	struct ds_build_id bid, bid2, bido;
	struct ds_dirindex_stats st;
	struct ds_dirindex *ix;

	if (strlen(tmp) > TPATH / 2) {
		fprintf(stderr, "%s: too long for this test\n", tmp);
		return 2;
	}
	snprintf(root, sizeof(root), "%s/root", tmp);
	snprintf(outside, sizeof(outside), "%s/outside", tmp);
	snprintf(prog, sizeof(prog), "%s/prog", tmp);
	snprintf(prog2, sizeof(prog2), "%s/prog2", tmp);
	snprintf(other, sizeof(other), "%s/other", tmp);
	t_write_file(src1, prog1_c);
	t_write_file(src2, prog2_c);
	snprintf(cmd, sizeof(cmd),
		 "gcc -g -O0 -Wl,--build-id -o '%s' '%s' && gcc -g -O0 -Wl,--build-id -o '%s' '%s' "
		 "&& gcc -g -O1 -Wl,--build-id -o '%s' '%s'",
		 prog, src1, prog2, src2, other, src2);
	if (t_sh("%s", cmd) != 0) {
		printf("skipped: no gcc\n");
		return 77;
	}
	readelf_bid(prog, &bid, hex);
	readelf_bid(prog2, &bid2, hex2);
	readelf_bid(other, &bido, hexo);
	CHECK(!t_same_bid(&bid, &bid2) && !t_same_bid(&bid, &bido) && !t_same_bid(&bid2, &bido));

	/* root/sub/prog           the whole program (debuginfo and code)
	 * root/.build-id/xx/rest.debug   its --only-keep-debug file
	 * root/.build-id/xx/rest         its strip -g copy
	 * root/.build-id/xx/rest.link    a symlink to the debug file
	 * root/README.txt         not ELF
	 * root/out -> outside/    a symlink to a directory holding other's files
	 * root/other.debug -> outside/other.debug */
	snprintf(dbg, sizeof(dbg), "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	snprintf(strp, sizeof(strp), "%s/.build-id/%.2s/%s", root, hex, hex + 2);
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s/sub' '%s/.build-id/%.2s' '%s'; cp '%s' '%s/sub/prog'; "
		 "objcopy --only-keep-debug '%s' '%s'; strip -g -o '%s' '%s'; "
		 "ln -s '%s.debug' '%s.link'; echo hello > '%s/README.txt'; "
		 "cp '%s' '%s/other'; objcopy --only-keep-debug '%s' '%s/other.debug'; "
		 "ln -s '%s' '%s/out'; ln -s '%s/other.debug' '%s/other.debug'",
		 root, root, hex, outside, prog, root, prog, dbg, strp, prog, hex + 2, strp, root,
		 other, outside, other, outside, outside, root, outside, root);
	sh(cmd);

	{
		const char *bad[] = { "", NULL };

		errno = 0;
		CHECK(ds_dirindex_new(bad, NULL) == NULL && errno == EINVAL);
		errno = 0;
		CHECK(ds_dirindex_new(NULL, NULL) == NULL && errno == EINVAL);
	}

	const char *dirs[] = { root, NULL };
	DS_OPTS(ds_dirindex_opts, opts, .log_level = DS_LOG_ERROR);
	ix = ds_dirindex_new(dirs, &opts);
	CHECK(ix != NULL);
	/* Nothing is read before the first scan. */
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_DEBUGINFO, "");
	ds_dirindex_stats(ix, &st);
	CHECK_EQ_INT(st.scans, 0);
	CHECK_EQ_INT(st.files, 0);

	/* Four regular files: prog, its debug and stripped copies, README. */
	CHECK_EQ_INT(ds_dirindex_scan(ix), 4);
	ds_dirindex_stats(ix, &st);
	CHECK_EQ_INT(st.files, 4);
	CHECK_EQ_INT(st.elf_files, 3);
	CHECK_EQ_INT(st.build_ids, 1);
	CHECK_EQ_INT(st.scans, 1);
	CHECK_EQ_INT(st.files_read, 4);
	{
		char *p = t_path("root/sub/prog"), *d = t_path("root/README.txt");
		size_t n1, n2, n3, n4;

		free(t_read_all(p, &n1));
		free(t_read_all(dbg, &n2));
		free(t_read_all(strp, &n3));
		free(t_read_all(d, &n4));
		CHECK_EQ_INT(st.bytes_read, n1 + n2 + n3 + n4);
		free(p);
		free(d);
	}

	/* The debug file for debuginfo, the stripped one for the executable;
	 * nothing of what the symlinks point to. */
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_DEBUGINFO, dbg + strlen(root) + 1);
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_EXECUTABLE, strp + strlen(root) + 1);
	CHECK_FOUND(ix, &bido, DS_ARTIFACT_DEBUGINFO, "");
	CHECK_FOUND(ix, &bido, DS_ARTIFACT_EXECUTABLE, "");
	CHECK_FOUND(ix, &bid2, DS_ARTIFACT_EXECUTABLE, "");
	{
		char *path = (char *)1;

		CHECK_EQ_INT(ds_dirindex_find(ix, &bid, DS_ARTIFACT_SOURCE, &path), -EINVAL);
		CHECK_EQ_INT(ds_dirindex_find(ix, &bid, DS_ARTIFACT_SECTION, &path), -EINVAL);
	}

	/* Nothing changed: nothing read. */
	CHECK_EQ_INT(ds_dirindex_scan(ix), 0);
	ds_dirindex_stats(ix, &st);
	CHECK_EQ_INT(st.files_read, 4);
	CHECK_EQ_INT(st.scans, 2);

	/* Of two files with code and no debuginfo, the newer: a second
	 * stripped copy, dated after the first, then before. */
	snprintf(cmd, sizeof(cmd),
		 "set -e; mkdir -p '%s/old'; cp '%s' '%s/old/prog'; touch -d @2000000000 '%s/old/prog'; "
		 "touch -d @1900000000 '%s'",
		 root, strp, root, root, strp);
	sh(cmd);
	CHECK_EQ_INT(ds_dirindex_scan(ix), 2); /* the new file, the one touched */
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_EXECUTABLE, "old/prog");
	snprintf(cmd, sizeof(cmd), "touch -d @1800000000 '%s/old/prog'", root);
	sh(cmd);
	CHECK_EQ_INT(ds_dirindex_scan(ix), 1);
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_EXECUTABLE, strp + strlen(root) + 1);

	/* Without its debug file, prog's debuginfo is the whole program. */
	snprintf(cmd, sizeof(cmd), "mv '%s' '%s/moved'", dbg, tmp);
	sh(cmd);
	CHECK_EQ_INT(ds_dirindex_scan(ix), 0);
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_DEBUGINFO, "sub/prog");
	ds_dirindex_stats(ix, &st);
	CHECK_EQ_INT(st.files, 4);

	/* sub/prog replaced (a new inode) by prog2: found by its new ID,
	 * and prog has no debuginfo left. */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/sub/.new' && mv '%s/sub/.new' '%s/sub/prog'", prog2,
		 root, root, root);
	sh(cmd);
	CHECK_EQ_INT(ds_dirindex_scan(ix), 1);
	CHECK_FOUND(ix, &bid2, DS_ARTIFACT_EXECUTABLE, "sub/prog");
	CHECK_FOUND(ix, &bid2, DS_ARTIFACT_DEBUGINFO, "sub/prog");
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_DEBUGINFO, "");
	CHECK_FOUND(ix, &bid, DS_ARTIFACT_EXECUTABLE, strp + strlen(root) + 1);
	ds_dirindex_stats(ix, &st);
	CHECK_EQ_INT(st.build_ids, 2);
	CHECK_EQ_INT(st.elf_files, 3);
	ds_dirindex_free(ix);

	/* A directory that cannot be opened is an error; the others are
	 * indexed all the same. */
	{
		char *missing = t_path("missing");
		const char *two[] = { missing, root, NULL };

		ix = ds_dirindex_new(two, NULL);
		CHECK(ix != NULL);
		CHECK_EQ_INT(ds_dirindex_scan(ix), -ENOENT);
		CHECK_FOUND(ix, &bid2, DS_ARTIFACT_EXECUTABLE, "sub/prog");
		ds_dirindex_free(ix);
		free(missing);
	}

	/* Put the debug file back for the thread test. */
	snprintf(cmd, sizeof(cmd), "mv '%s/moved' '%s'", tmp, dbg);
	sh(cmd);
	test_context(&bid, dbg);
	test_open(&bid, dbg);
	test_threads(&bid, dbg);
	test_forms(tmp, prog2, &bid2, other, &bido);
	test_system_libc();

	free(src1);
	free(src2);
	return t_done("test_dirindex");
}
