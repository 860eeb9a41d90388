/* ds_perf_cache_install() through the C API, for what the CLI cannot
 * reach (tests/cli/perf_cache.sh has perf report as the oracle): a file of
 * another build ID or of none is refused before anything is created;
 * DSO paths that would leave the cache or are too long are refused; an
 * entry perf made (elf + link) is where a path-less install goes; a wrong
 * debug file is replaced; links that do not name an entry of this cache,
 * and symlinks planted in it, are not followed.  Build IDs come from
 * eu-readelf. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char hex_a[2 * DS_BUILD_ID_MAX + 1];
static struct ds_build_id bid_a;
static char *prog_a, *prog_b, *prog_nobid, *text, *root;

/* A path under the test's directory, in one of four static buffers (no
 * allocation for LeakSanitizer to report). */
static const char *tp(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static const char *tp(const char *fmt, ...)
{
	static char bufs[4][PATH_MAX];
	static unsigned int next;
	char *buf = bufs[next++ % 4];
	int n = snprintf(buf, PATH_MAX, "%s/", t_tmpdir());
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf + n, PATH_MAX - n, fmt, ap);
	va_end(ap);
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static char *link_of(const char *path)
{
	static char buf[PATH_MAX];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	buf[n < 0 ? 0 : n] = 0;
	return buf;
}

static char *linkpath(const char *r)
{
	static char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s/.build-id/%.2s/%s", r, hex_a, hex_a + 2);
	return buf;
}

static struct ds_context *context(const char *perf_dir)
{
	DS_OPTS(ds_context_opts, opts, .perf_buildid_dir = perf_dir);
	struct ds_context *ctx = ds_context_new(&opts);

	if (!ctx) {
		perror("ds_context_new");
		exit(2);
	}
	return ctx;
}

static void setup(void)
{
	prog_a = t_path("a");
	prog_b = t_path("b");
	prog_nobid = t_path("nobid");
	text = t_path("text");
	root = t_path("root/.debug");
	t_compile("cc", "-O1 -Wl,--build-id", "int main(void) { return 0; }\n", prog_a);
	t_compile("cc", "-O1 -Wl,--build-id", "int main(void) { return 3; }\n", prog_b);
	t_compile("cc", "-O1 -Wl,--build-id=none", "int main(void) { return 0; }\n", prog_nobid);
	t_write_file(text, "not an ELF file\n");
	snprintf(hex_a, sizeof(hex_a), "%s", t_readelf_build_id(prog_a));
	if (strlen(hex_a) < 4 || !strcmp(hex_a, t_readelf_build_id(prog_b))) {
		fprintf(stderr, "SKIP: eu-readelf gives no (distinct) build IDs\n");
		exit(77);
	}
	t_hex_to_bid(hex_a, &bid_a);
}

/* Refusals that must leave no trace: the root is not even created. */
static void test_refused(void)
{
	struct ds_context *ctx = context(root), *off = context("");
	struct ds_build_id one = { .size = 1, .data = { 0xab } };
	char *installed = NULL, longpath[PATH_MAX + 100], comp[300];

	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/usr/bin/a", &bid_a, prog_b, &installed),
		     -EBADMSG);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &bid_a, prog_nobid, &installed), -EBADMSG);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &bid_a, text, &installed), -ENOEXEC);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &bid_a, "/nonexistent/x", &installed),
		     -ENOENT);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "usr/bin/a", &bid_a, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/usr/../a", &bid_a, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/usr/./a", &bid_a, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/..", &bid_a, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "//", &bid_a, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/.build-id/ab", &bid_a, prog_a, &installed),
		     -EINVAL);
	memset(comp, 'c', sizeof(comp) - 1);
	comp[sizeof(comp) - 1] = 0;
	snprintf(longpath, sizeof(longpath), "/x/%s", comp);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, longpath, &bid_a, prog_a, &installed),
		     -ENAMETOOLONG);
	for (size_t i = 0; i + 1 < sizeof(longpath); i++)
		longpath[i] = i % 8 ? 'p' : '/';
	longpath[sizeof(longpath) - 1] = 0;
	CHECK_EQ_INT(ds_perf_cache_install(ctx, longpath, &bid_a, prog_a, &installed),
		     -ENAMETOOLONG);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &one, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, NULL, prog_a, &installed), -EINVAL);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &bid_a, NULL, &installed), -EINVAL);
	/* perf's cache disabled in the context. */
	CHECK_EQ_INT(ds_perf_cache_install(off, NULL, &bid_a, prog_a, &installed), -EINVAL);
	CHECK(installed == NULL);
	CHECK(!exists(root));
	ds_context_free(off);
	ds_context_free(ctx);
}

static void copy(const char *src, const char *dst)
{
	t_mkdir_parents(dst);
	if (t_sh("cp '%s' '%s'", src, dst) != 0)
		exit(2);
}

static void relink(const char *target)
{
	unlink(linkpath(root));
	t_mkdir_parents(linkpath(root));
	if (symlink(target, linkpath(root)) != 0) {
		perror("symlink");
		exit(2);
	}
}

/* perf recorded the binary (its entry has elf and the link): a path-less
 * install puts debug beside elf and leaves the link; a wrong debug there
 * is replaced; a path given moves the link, perf's elf stays. */
static void test_perf_entry(struct ds_context *ctx)
{
	char elf[PATH_MAX], debug[PATH_MAX], target[PATH_MAX], *installed = NULL;
	struct stat st;

	snprintf(elf, sizeof(elf), "%s/usr/bin/a/%s/elf", root, hex_a);
	snprintf(debug, sizeof(debug), "%s/usr/bin/a/%s/debug", root, hex_a);
	snprintf(target, sizeof(target), "../../usr/bin/a/%s", hex_a);
	copy(prog_a, elf);
	relink(target);

	CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &bid_a, prog_a, &installed), 0);
	CHECK(installed && !strcmp(installed, debug));
	free(installed);
	installed = NULL;
	CHECK(!strcmp(t_readelf_build_id(debug), hex_a));
	CHECK(!strcmp(link_of(linkpath(root)), target));
	CHECK(exists(elf));
	CHECK(!exists(tp("root/.debug/[dsostore]")));

	/* A debug of another build ID is replaced, in place. */
	unlink(debug);
	copy(prog_b, debug);
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/usr/bin/a", &bid_a, prog_a, NULL), 0);
	CHECK(!strcmp(t_readelf_build_id(debug), hex_a));
	CHECK(stat(debug, &st) == 0 && st.st_nlink == 2); /* linked to prog_a */

	/* Another path: the link names the new entry; perf's stays. */
	CHECK_EQ_INT(ds_perf_cache_install(ctx, "/opt//a/", &bid_a, prog_a, &installed), 0);
	snprintf(target, sizeof(target), "../../opt/a/%s", hex_a);
	CHECK(!strcmp(link_of(linkpath(root)), target));
	CHECK(installed && !strcmp(installed, tp("root/.debug/opt/a/%s/debug", hex_a)));
	CHECK(exists(elf) && exists(debug));
	free(installed);
}

/* Links that name no entry of this cache are not followed: the install
 * makes its own entry and replaces the link. */
static void test_foreign_links(struct ds_context *ctx)
{
	char anon[PATH_MAX], target[PATH_MAX], *installed = NULL;
	const char *bad[] = { "../../gone/", "../../../../outside/", "/abs/", "../..//", NULL };

	snprintf(anon, sizeof(anon), "%s", tp("root/.debug/[dsostore]/%s/%s/debug", hex_a, hex_a));
	t_sh("mkdir -p '%s'", tp("outside/%s", hex_a));
	snprintf(target, sizeof(target), "../../[dsostore]/%s/%s", hex_a, hex_a);
	for (int i = 0; bad[i]; i++) {
		char l[PATH_MAX];

		snprintf(l, sizeof(l), "%s%s", bad[i], hex_a);
		relink(l);
		CHECK_EQ_INT(ds_perf_cache_install(ctx, NULL, &bid_a, prog_a, &installed), 0);
		CHECK(installed && !strcmp(installed, anon));
		CHECK(!strcmp(link_of(linkpath(root)), target));
		free(installed);
		installed = NULL;
	}
	CHECK(!exists(tp("outside/%s/debug", hex_a)));

	/* A symlink planted where a directory of the entry goes. */
	CHECK(symlink(tp("outside"), tp("root/.debug/evil")) == 0);
	CHECK(ds_perf_cache_install(ctx, "/evil/a", &bid_a, prog_a, NULL) < 0);
	CHECK(!exists(tp("outside/a")));
	CHECK(!strcmp(link_of(linkpath(root)), target));
}

int main(void)
{
	struct ds_context *ctx;

	setup();
	test_refused();
	ctx = context(root);
	test_perf_entry(ctx);
	test_foreign_links(ctx);
	ds_context_free(ctx);
	return t_done("test_perf_cache");
}
