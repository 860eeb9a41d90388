/* Local debuginfo lookup through the C API: ds_find() and a store's
 * ds_dso_debuginfo().  Binaries are compiled here and split the standard
 * way (objcopy --only-keep-debug / --strip-debug / --add-gnu-debuglink);
 * every expected path is one this test placed, every expected build ID
 * comes from eu-readelf. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct prog {
	char full[PATH_MAX];		   /* -g, unstripped */
	char debug[PATH_MAX];		   /* --only-keep-debug */
	char stripped[PATH_MAX];	   /* --strip-debug, debuglink to <name>.debug */
	char hex[2 * DS_BUILD_ID_MAX + 1]; /* from eu-readelf */
	struct ds_build_id bid;
};

static struct prog prog, other;
static char nobid[PATH_MAX]; /* an ELF without a build ID */

/* snprintf into a PATH_MAX buffer; the test's paths are short. */
static char *fmt_path(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static char *fmt_path(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(buf, PATH_MAX, fmt, ap) >= PATH_MAX) {
		fprintf(stderr, "path too long\n");
		exit(2);
	}
	va_end(ap);
	return buf;
}

/* Copy src to dst, creating dst's directory. */
static void put(const char *src, const char *dst)
{
	if (t_sh("mkdir -p \"$(dirname '%s')\" && cp '%s' '%s'", dst, src, dst) != 0) {
		fprintf(stderr, "cannot copy %s to %s\n", src, dst);
		exit(2);
	}
}

static char *bid_path(char *buf, const char *dir, const char *hex, const char *suffix)
{
	return fmt_path(buf, "%s/.build-id/%.2s/%s%s", dir, hex, hex + 2, suffix);
}

static void hex_decode(const char *hex, struct ds_build_id *out)
{
	size_t n = strlen(hex) / 2;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n && i < DS_BUILD_ID_MAX; i++)
		sscanf(hex + 2 * i, "%2hhx", &out->data[i]);
	out->size = (uint8_t)n;
}

/* buf holds 2 * DS_BUILD_ID_MAX + 1; an impossible size gives "". */
static void hex_encode(const struct ds_build_id *bid, char *buf)
{
	buf[0] = 0;
	for (unsigned int i = 0; i < bid->size && bid->size <= DS_BUILD_ID_MAX; i++)
		sprintf(buf + 2 * i, "%02x", bid->data[i]);
}

/* t_compile() without its t_path() allocation, which LeakSanitizer
 * reports as a leak under SANITIZE=address. */
static void compile(const char *flags, const char *source, const char *out)
{
	char src[PATH_MAX];

	if (t_sh("command -v gcc >/dev/null") != 0) {
		fprintf(stderr, "SKIP: gcc is not installed\n");
		exit(77);
	}
	t_write_file(fmt_path(src, "%s.c", out), source);
	if (t_sh("gcc %s -o '%s' '%s'", flags, out, src) != 0) {
		fprintf(stderr, "compiling %s with gcc %s failed\n", out, flags);
		exit(1);
	}
}

static void build(struct prog *p, const char *name, int salt)
{
	char src[512];
	const char *dir = t_tmpdir();

	snprintf(src, sizeof(src),
		 "int %s_fn(int x) { return x * 3 + %d; }\n"
		 "int main(int c, char **v) { (void)v; return %s_fn(c); }\n",
		 name, salt, name);
	fmt_path(p->full, "%s/build/%s", dir, name);
	fmt_path(p->debug, "%s/build/%s.debug", dir, name);
	fmt_path(p->stripped, "%s/build/%s.stripped", dir, name);
	if (t_sh("mkdir -p '%s/build'", dir) != 0)
		exit(2);
	compile("-g -O0 -Wl,--build-id=sha1", src, p->full);
	if (t_sh("objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug '%s' '%s' && "
		 "objcopy --add-gnu-debuglink='%s' '%s'",
		 p->full, p->debug, p->full, p->stripped, p->debug, p->stripped) != 0) {
		fprintf(stderr, "objcopy failed for %s\n", name);
		exit(2);
	}
	snprintf(p->hex, sizeof(p->hex), "%s", t_readelf_build_id(p->full));
	if (strlen(p->hex) != 40) {
		fprintf(stderr, "eu-readelf gave build ID '%s' for %s\n", p->hex, p->full);
		exit(2);
	}
	hex_decode(p->hex, &p->bid);
}

/* A fresh directory for one case. */
static char *case_dir(char *buf, const char *name)
{
	fmt_path(buf, "%s/%s", t_tmpdir(), name);
	if (t_sh("mkdir -p '%s/bin' '%s/debug'", buf, buf) != 0)
		exit(2);
	return buf;
}

/* A context searching only dir (perf's cache off, so ~/.debug is out). */
static struct ds_context *ctx_for(const char *dir, int miss_ttl_s)
{
	const char *dirs[] = {dir, NULL};
	DS_OPTS(ds_context_opts, opts, .debug_dirs = dirs, .perf_buildid_dir = "",
		.miss_ttl_s = miss_ttl_s);
	struct ds_context *ctx = ds_context_new(&opts);

	if (!ctx) {
		perror("ds_context_new");
		exit(2);
	}
	return ctx;
}

/* ds_find() must return exactly want from source src. */
static void expect_find(const char *name, struct ds_context *ctx, const struct ds_build_id *bid,
			const char *hint, enum ds_artifact what, const char *want,
			enum ds_source src)
{
	char errbuf[4096] = "";
	enum ds_source got_src = DS_SOURCE_NONE;
	char *path = NULL;
	int err = ds_find(ctx, bid, hint, what, &path, &got_src, errbuf, sizeof(errbuf));

	if (err != 0 || !path || strcmp(path, want) != 0 || got_src != src) {
		fprintf(stderr, "%s: ds_find gave %d (%s) '%s' from %s; want '%s' from %s\n%s\n",
			name, err, ds_strerror(err), path ? path : "(null)",
			ds_source_name(got_src), want, ds_source_name(src), errbuf);
		t_failures++;
	}
	free(path);
}

/* ds_find() must say -ENOENT, allocate nothing, and list each of the
 * places (NULL-terminated) in errbuf. */
static void expect_enoent(const char *name, struct ds_context *ctx, const struct ds_build_id *bid,
			  const char *hint, enum ds_artifact what, ...)
{
	char errbuf[8192] = "";
	char *path = NULL;
	const char *place;
	va_list ap;
	int err = ds_find(ctx, bid, hint, what, &path, NULL, errbuf, sizeof(errbuf));

	if (err != -ENOENT || path) {
		fprintf(stderr, "%s: ds_find gave %d (%s) '%s'; want -ENOENT\n", name, err,
			ds_strerror(err), path ? path : "(null)");
		t_failures++;
	}
	free(path);
	va_start(ap, what);
	while ((place = va_arg(ap, const char *))) {
		if (!strstr(errbuf, place)) {
			fprintf(stderr, "%s: errbuf does not name %s:\n%s\n", name, place, errbuf);
			t_failures++;
		}
	}
	va_end(ap);
}

/* ---------------------------------------------------------- ds_find() */

static void case_find_build_id_dir(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], want[PATH_MAX], bin[PATH_MAX];
	struct ds_context *ctx;

	case_dir(dir, "find_build_id_dir");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	put(prog.debug, bid_path(want, dbg, prog.hex, ".debug"));
	expect_find(__func__, ctx, &prog.bid, NULL, DS_ARTIFACT_DEBUGINFO, want,
		    DS_SOURCE_BUILD_ID_DIR);
	expect_find(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_DEBUGINFO, want,
		    DS_SOURCE_BUILD_ID_DIR);
	/* A hint that is gone (a deleted binary) only loses self and debuglink. */
	expect_find(__func__, ctx, &prog.bid, fmt_path(bin, "%s/bin/gone", dir),
		    DS_ARTIFACT_DEBUGINFO, want, DS_SOURCE_BUILD_ID_DIR);
	ds_context_free(ctx);
}

static void case_find_enoent_lists_candidates(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], bin[PATH_MAX], bp[PATH_MAX], l1[PATH_MAX], l2[PATH_MAX],
	    l3[PATH_MAX];
	struct ds_context *ctx;

	case_dir(dir, "find_enoent");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	bid_path(bp, dbg, prog.hex, ".debug");
	fmt_path(l1, "%s/bin/prog.debug", dir);
	fmt_path(l2, "%s/bin/.debug/prog.debug", dir);
	fmt_path(l3, "%s%s/bin/prog.debug", dbg, dir);
	expect_enoent(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_DEBUGINFO, bin, bp, l1, l2, l3,
		      NULL);
	expect_enoent(__func__, ctx, &prog.bid, NULL, DS_ARTIFACT_DEBUGINFO, bp, NULL);
	ds_context_free(ctx);
}

/* A short errbuf is truncated and terminated; none at all is fine. */
static void case_find_enoent_small_errbuf(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], small[8];
	struct ds_context *ctx;
	char *path = NULL;

	case_dir(dir, "find_small_errbuf");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	memset(small, 'x', sizeof(small));
	CHECK_EQ_INT(
	    ds_find(ctx, &prog.bid, NULL, DS_ARTIFACT_DEBUGINFO, &path, NULL, small, sizeof(small)),
	    -ENOENT);
	CHECK(memchr(small, 0, sizeof(small)) != NULL);
	CHECK_EQ_INT(ds_find(ctx, &prog.bid, NULL, DS_ARTIFACT_DEBUGINFO, &path, NULL, NULL, 0),
		     -ENOENT);
	CHECK(path == NULL);
	ds_context_free(ctx);
}

static void case_find_wrong_build_id_rejected(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], want[PATH_MAX], bp[PATH_MAX], bin[PATH_MAX];
	struct ds_context *ctx;

	case_dir(dir, "find_wrong_bid");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	put(other.debug, bid_path(bp, dbg, prog.hex, ".debug"));
	expect_enoent(__func__, ctx, &prog.bid, NULL, DS_ARTIFACT_DEBUGINFO, bp, NULL);
	expect_enoent(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_DEBUGINFO, bp, NULL);
	/* A right file later in the order is still found. */
	put(prog.debug, fmt_path(want, "%s/bin/prog.debug", dir));
	expect_find(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_DEBUGINFO, want,
		    DS_SOURCE_DEBUGLINK);
	ds_context_free(ctx);
}

/* The hint binary is "self" only when its build ID is the wanted one. */
static void case_find_hint_with_other_build_id(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX];
	struct ds_context *ctx;

	case_dir(dir, "find_hint_other_bid");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	expect_enoent(__func__, ctx, &other.bid, prog.full, DS_ARTIFACT_DEBUGINFO, NULL);
	expect_enoent(__func__, ctx, &other.bid, prog.full, DS_ARTIFACT_EXECUTABLE, NULL);
	expect_find(__func__, ctx, &prog.bid, prog.full, DS_ARTIFACT_DEBUGINFO, prog.full,
		    DS_SOURCE_SELF);
	ds_context_free(ctx);
}

static void case_find_debuglink_crc(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], bin[PATH_MAX], link[PATH_MAX], junk[PATH_MAX];
	struct ds_context *ctx;

	case_dir(dir, "find_debuglink_crc");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	fmt_path(link, "%s/bin/prog.debug", dir);
	put(prog.debug, link);
	expect_find(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_DEBUGINFO, link,
		    DS_SOURCE_DEBUGLINK);
	/* Same build ID note, one more section: the CRC no longer matches. */
	t_write_file(fmt_path(junk, "%s/junk", dir), "not debug info\n");
	CHECK_EQ_INT(t_sh("objcopy --add-section .junk='%s' '%s'", junk, link), 0);
	CHECK(strcmp(t_readelf_build_id(link), prog.hex) == 0);
	expect_enoent(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_DEBUGINFO, link, NULL);
	ds_context_free(ctx);
}

static void case_find_executable(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], bin[PATH_MAX], exe[PATH_MAX], d[PATH_MAX];
	struct ds_context *ctx;

	case_dir(dir, "find_executable");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	expect_find(__func__, ctx, &prog.bid, bin, DS_ARTIFACT_EXECUTABLE, bin, DS_SOURCE_SELF);
	/* A .debug (NOBITS .text) is not an executable, wherever it is. */
	put(prog.debug, bid_path(exe, dbg, prog.hex, ""));
	put(prog.debug, fmt_path(d, "%s/bin/prog.debug", dir));
	expect_enoent(__func__, ctx, &prog.bid, NULL, DS_ARTIFACT_EXECUTABLE, exe, NULL);
	expect_enoent(__func__, ctx, &prog.bid, d, DS_ARTIFACT_EXECUTABLE, d, exe, NULL);
	/* The real binary under the build-id name is. */
	put(prog.stripped, exe);
	expect_find(__func__, ctx, &prog.bid, NULL, DS_ARTIFACT_EXECUTABLE, exe,
		    DS_SOURCE_BUILD_ID_DIR);
	ds_context_free(ctx);
}

/* ---------------------------------------------------- the store level */

static bool has_section(struct Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr shdr;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &shdr))
			continue;
		name = elf_strptr(elf, shstrndx, shdr.sh_name);
		if (name && strcmp(name, want) == 0 && shdr.sh_type != SHT_NOBITS) {
			Elf_Data *data = elf_getdata(scn, NULL);

			return data && data->d_size > 0;
		}
	}
	return false;
}

/* The accessors agree with each other and with the file at want. */
static void check_debuginfo(const struct ds_debuginfo *di, const char *want, enum ds_source src,
			    const char *hex)
{
	struct stat st_fd, st_path;
	char got_hex[2 * DS_BUILD_ID_MAX + 1] = "";
	const struct ds_build_id *bid = ds_debuginfo_build_id(di);
	const char *path = ds_debuginfo_path(di);
	int fd = ds_debuginfo_fd(di);

	CHECK(path && strcmp(path, want) == 0);
	CHECK_EQ_INT(ds_debuginfo_source(di), src);
	CHECK(bid != NULL);
	if (bid)
		hex_encode(bid, got_hex);
	CHECK(strcmp(got_hex, hex) == 0);
	CHECK(fd >= 0);
	CHECK(fstat(fd, &st_fd) == 0);
	CHECK(stat(want, &st_path) == 0);
	CHECK(st_fd.st_dev == st_path.st_dev && st_fd.st_ino == st_path.st_ino);
	CHECK(ds_debuginfo_elf(di) != NULL);
	if (ds_debuginfo_elf(di)) {
		CHECK_EQ_INT(elf_kind(ds_debuginfo_elf(di)), ELF_K_ELF);
		CHECK(has_section(ds_debuginfo_elf(di), ".debug_info"));
	}
}

/* A DSO known by the path of a stripped binary only: it reads the build
 * ID from the file, finds the debuginfo, and keeps it open even when the
 * file is deleted. */
static void case_store_learns_build_id(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], want[PATH_MAX], bin[PATH_MAX];
	const struct ds_debuginfo *di = NULL, *again = NULL;
	struct ds_dso_id id = {0};
	struct ds_store_stats stats;
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;
	unsigned char magic[4];
	struct stat st;
	int fd;

	case_dir(dir, "store_learns_build_id");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	put(prog.debug, bid_path(want, dbg, prog.hex, ".debug"));
	store = ds_store_new(ctx, "host", NULL);
	CHECK(store != NULL);
	if (!store)
		goto out;
	dso = ds_store_findnew(store, bin, &id);
	CHECK(dso != NULL);
	if (!dso)
		goto out_store;
	CHECK_EQ_INT(ds_dso_debuginfo(dso, &di), 0);
	CHECK(di != NULL);
	if (!di)
		goto out_dso;
	check_debuginfo(di, want, DS_SOURCE_BUILD_ID_DIR, prog.hex);
	ds_dso_id(dso, &id);
	CHECK(id.flags & DS_DSO_ID_BUILD_ID);
	CHECK(ds_build_id_equal(&id.build_id, &prog.bid));
	CHECK(ds_dso_path(dso) && strcmp(ds_dso_path(dso), bin) == 0);

	/* The DSO holds the file: deleting it takes nothing away. */
	fd = ds_debuginfo_fd(di);
	CHECK_EQ_INT(unlink(want), 0);
	CHECK(fstat(fd, &st) == 0 && st.st_nlink == 0);
	CHECK_EQ_INT(pread(fd, magic, sizeof(magic), 0), 4);
	CHECK(memcmp(magic, "\177ELF", 4) == 0);
	CHECK(has_section(ds_debuginfo_elf(di), ".debug_info"));
	CHECK_EQ_INT(ds_dso_debuginfo(dso, &again), 0);
	CHECK(again == di);
	CHECK(strcmp(ds_debuginfo_path(again), want) == 0);
	ds_store_stats(store, &stats);
	CHECK_EQ_INT(stats.searches, 1);
	CHECK_EQ_INT(stats.hits, 1);
	CHECK_EQ_INT(stats.debuginfos_open, 1);
out_dso:
	ds_dso_put(dso);
out_store:
	ds_store_free(store);
out:
	ds_context_free(ctx);
}

static void case_store_debuglink(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], bin[PATH_MAX], link[PATH_MAX];
	const struct ds_debuginfo *di = NULL;
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;

	case_dir(dir, "store_debuglink");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	put(prog.debug, fmt_path(link, "%s/bin/.debug/prog.debug", dir));
	store = ds_store_new(ctx, "host", NULL);
	dso = store ? ds_store_findnew(store, bin, NULL) : NULL;
	CHECK(dso != NULL);
	if (dso && ds_dso_debuginfo(dso, &di) == 0)
		check_debuginfo(di, link, DS_SOURCE_DEBUGLINK, prog.hex);
	else
		CHECK(!"ds_dso_debuginfo found the debuglink file");
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
}

/* Known by build ID only: no path, so only the build-id dirs can answer. */
static void case_store_build_id_only(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], want[PATH_MAX];
	const struct ds_debuginfo *di = NULL;
	struct ds_dso_id id = {.flags = DS_DSO_ID_BUILD_ID, .build_id = prog.bid};
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;

	case_dir(dir, "store_build_id_only");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.debug, bid_path(want, dbg, prog.hex, ".debug"));
	store = ds_store_new(ctx, "host", NULL);
	dso = store ? ds_store_findnew(store, NULL, &id) : NULL;
	CHECK(dso != NULL);
	if (dso && ds_dso_debuginfo(dso, &di) == 0)
		check_debuginfo(di, want, DS_SOURCE_BUILD_ID_DIR, prog.hex);
	else
		CHECK(!"ds_dso_debuginfo found the build-id dir file");
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
}

/* The file at a DSO's path was replaced since the DSO was seen (a
 * rebuilt binary): the build ID the DSO was created with wins, so the -g
 * binary now at the path must not be taken as "self". */
static void case_store_path_with_other_build_id(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX], want[PATH_MAX], bin[PATH_MAX];
	const struct ds_debuginfo *di = NULL;
	struct ds_dso_id id = {.flags = DS_DSO_ID_BUILD_ID, .build_id = other.bid};
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;

	case_dir(dir, "store_path_other_bid");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	put(prog.full, fmt_path(bin, "%s/bin/prog", dir));
	put(other.debug, bid_path(want, dbg, other.hex, ".debug"));
	store = ds_store_new(ctx, "host", NULL);
	dso = store ? ds_store_findnew(store, bin, &id) : NULL;
	CHECK(dso != NULL);
	if (dso && ds_dso_debuginfo(dso, &di) == 0)
		check_debuginfo(di, want, DS_SOURCE_BUILD_ID_DIR, other.hex);
	else
		CHECK(!"ds_dso_debuginfo found the debuginfo of the DSO's build ID");
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
}

/* Not found: -ENOENT, ds_dso_error() says where it looked, and the miss is
 * remembered (default TTL) or not (negative TTL). */
static void case_store_missing(int ttl)
{
	char dir[PATH_MAX], dbg[PATH_MAX], bin[PATH_MAX], bp[PATH_MAX], why[4096] = "";
	const struct ds_debuginfo *di = NULL;
	struct ds_store_stats stats;
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;

	case_dir(dir, ttl < 0 ? "store_missing_no_ttl" : "store_missing");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), ttl);
	put(prog.stripped, fmt_path(bin, "%s/bin/prog", dir));
	bid_path(bp, dbg, prog.hex, ".debug");
	store = ds_store_new(ctx, "host", NULL);
	dso = store ? ds_store_findnew(store, bin, NULL) : NULL;
	CHECK(dso != NULL);
	if (!dso)
		goto out;
	CHECK_EQ_INT(ds_dso_debuginfo(dso, &di), -ENOENT);
	CHECK_EQ_INT(ds_dso_error(dso, why, sizeof(why)), -ENOENT);
	if (!strstr(why, bp)) {
		fprintf(stderr, "ds_dso_error does not name %s: %s\n", bp, why);
		t_failures++;
	}
	put(prog.debug, bp);
	if (ttl < 0) {
		CHECK_EQ_INT(ds_dso_debuginfo(dso, &di), 0);
		ds_store_stats(store, &stats);
		CHECK_EQ_INT(stats.searches, 2);
	} else {
		CHECK_EQ_INT(ds_dso_debuginfo(dso, &di), -ENOENT);
		ds_store_stats(store, &stats);
		CHECK_EQ_INT(stats.searches, 1);
		CHECK_EQ_INT(stats.misses, 1);
	}
out:
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
}

static void case_store_no_build_id(void)
{
	char dir[PATH_MAX], dbg[PATH_MAX];
	const struct ds_debuginfo *di = NULL;
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_dso *dso;

	case_dir(dir, "store_no_build_id");
	ctx = ctx_for(fmt_path(dbg, "%s/debug", dir), 0);
	store = ds_store_new(ctx, "host", NULL);
	dso = store ? ds_store_findnew(store, nobid, NULL) : NULL;
	CHECK(dso != NULL);
	if (dso)
		CHECK_EQ_INT(ds_dso_debuginfo(dso, &di), -ENODATA);
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
}

int main(void)
{
	if (t_sh("command -v eu-readelf >/dev/null && command -v objcopy >/dev/null") != 0) {
		fprintf(stderr, "SKIP: needs eu-readelf and objcopy\n");
		return 77;
	}
	build(&prog, "prog", 1);
	build(&other, "other", 2);
	if (strcmp(prog.hex, other.hex) == 0) {
		fprintf(stderr, "prog and other have one build ID\n");
		return 2;
	}
	fmt_path(nobid, "%s/build/nobid", t_tmpdir());
	compile("-O0 -Wl,--build-id=none", "int main(void) { return 0; }\n", nobid);

	case_find_build_id_dir();
	case_find_enoent_lists_candidates();
	case_find_enoent_small_errbuf();
	case_find_wrong_build_id_rejected();
	case_find_hint_with_other_build_id();
	case_find_debuglink_crc();
	case_find_executable();
	case_store_learns_build_id();
	case_store_debuglink();
	case_store_build_id_only();
	case_store_path_with_other_build_id();
	case_store_missing(0);
	case_store_missing(-1);
	case_store_no_build_id();
	return t_done("test_locate");
}
