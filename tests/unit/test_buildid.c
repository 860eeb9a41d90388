/* SPDX-License-Identifier: MIT */
/*
 * The buildid module: parsing, formatting and comparing build IDs, and
 * reading the GNU build-ID note from files, fds and memory.
 *
 * Expected build IDs come from eu-readelf on binaries compiled here (gcc
 * and clang, 32 and 64 bit, every --build-id style), from first principles
 * for --build-id=0xHEX, and from ELF files built byte by byte (fuzz/mkelf.h)
 * for what no local compiler makes: big-endian, notes only in sections,
 * decoy notes, odd alignments, hostile sizes.
 */
#define _GNU_SOURCE
#include "testutil.h"
#include "../fuzz/mkelf.h"

#include <dsostore.h>

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static const char prog_src[] =
    "#include <stdio.h>\n"
    "int main(int argc, char **argv) { puts(argv[0]); return argc > 5; }\n";

static const char lib_src[] = "int dsostore_test_fn(int x) { return x * 3; }\n";

/* A note of another owner, with type NT_GNU_BUILD_ID and a 20-byte desc,
 * linked into the same PT_NOTE as the real build ID: owner must count. */
static const char decoy_src[] = "__asm__(\".pushsection .note.decoy,\\\"a\\\",@note\\n\"\n"
				"\".balign 4\\n\"\n"
				"\".long 4, 20, 3\\n\"\n"
				"\".asciz \\\"XYZ\\\"\\n\"\n"
				"\".fill 20, 1, 0xee\\n\"\n"
				"\".popsection\\n\");\n"
				"int main(void) { return 0; }\n";

/* ------------------------------------------------------------- helpers */

/* t_path() hands out memory it never frees; keeping every path reachable
 * from here keeps LeakSanitizer's report for the library's own leaks. */
static char *kept_paths[1024];
static size_t nkept;

static char *keep(char *p)
{
	if (nkept < sizeof(kept_paths) / sizeof(kept_paths[0]))
		kept_paths[nkept++] = p;
	return p;
}

#define tpath(...) keep(t_path(__VA_ARGS__))

/* t_compile() (same skip rule) without its unreachable source path. */
static void compile(const char *cc, const char *flags, const char *source, const char *out)
{
	char *src = tpath("%s.c", strrchr(out, '/') + 1);

	if (t_sh("command -v %s >/dev/null", cc) != 0) {
		fprintf(stderr, "SKIP: %s is not installed\n", cc);
		exit(77);
	}
	t_write_file(src, source);
	if (t_sh("%s %s -o '%s' '%s'", cc, flags, out, src) != 0) {
		fprintf(stderr, "compiling %s with %s %s failed\n", out, cc, flags);
		exit(1);
	}
}

static const char *bid_hex(const struct ds_build_id *bid)
{
	static char hex[2 * DS_BUILD_ID_MAX + 1];

	hex[0] = 0;
	for (int i = 0; i < bid->size && i < DS_BUILD_ID_MAX; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid->data[i]);
	return hex;
}

/* A read-only copy of data that ends exactly where an inaccessible page
 * begins: a write faults, and so does a read past the end, sanitizer or
 * not.  (Its start is only as aligned as len makes it, as a caller's
 * buffer may be.) */
struct ro_buf {
	uint8_t *map;
	size_t maplen;
	const uint8_t *data;
};

static void ro_copy(struct ro_buf *rb, const void *data, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	size_t span = (len + pg - 1) / pg * pg;

	rb->maplen = span + pg;
	rb->map =
	    mmap(NULL, rb->maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (rb->map == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	if (len)
		memcpy(rb->map + span - len, data, len);
	if (mprotect(rb->map, span, PROT_READ) || mprotect(rb->map + span, pg, PROT_NONE)) {
		perror("mprotect");
		exit(2);
	}
	rb->data = rb->map + span - len;
}

static void ro_free(struct ro_buf *rb)
{
	munmap(rb->map, rb->maplen);
}

static int read_mem_ro(const void *data, size_t len, struct ds_build_id *out)
{
	struct ro_buf rb;
	int ret;

	ro_copy(&rb, data, len);
	ret = ds_build_id_read_mem(rb.data, len, out);
	ro_free(&rb);
	return ret;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(path);
		exit(2);
	}
	buf = malloc(st.st_size ? st.st_size : 1);
	if (!buf || read(fd, buf, st.st_size) != st.st_size) {
		perror(path);
		exit(2);
	}
	close(fd);
	*len = st.st_size;
	return buf;
}

static void write_bytes(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len || close(fd) < 0) {
		perror(path);
		exit(2);
	}
}

/* Reads path through all three entry points; each must give the same
 * answer: want_hex when it is not empty, else want_err. */
static void expect_all(const char *path, const char *want_hex, int want_err)
{
	struct ds_build_id bid;
	size_t len;
	uint8_t *buf = slurp(path, &len);
	int ret, fd;
	const char *how[3] = {"file", "fd", "mem"};

	for (int i = 0; i < 3; i++) {
		memset(&bid, 0, sizeof(bid));
		if (i == 0) {
			ret = ds_build_id_read_file(path, &bid);
		} else if (i == 1) {
			fd = open(path, O_RDONLY);
			/* The ELF starts at offset 0 whatever the fd's position. */
			lseek(fd, 7, SEEK_SET);
			ret = ds_build_id_read_fd(fd, &bid);
			/* The caller's fd stays open. */
			CHECK(fcntl(fd, F_GETFD) >= 0);
			close(fd);
		} else {
			ret = read_mem_ro(buf, len, &bid);
		}
		if (want_hex[0]) {
			if (ret != 0 || strcmp(bid_hex(&bid), want_hex) != 0)
				fprintf(stderr, "%s via %s: ret %d (%s) id '%s', expected '%s'\n",
					path, how[i], ret, ds_strerror(ret), bid_hex(&bid),
					want_hex);
			CHECK_EQ_INT(ret, 0);
			CHECK_EQ_INT(bid.size, strlen(want_hex) / 2);
			CHECK(strcmp(bid_hex(&bid), want_hex) == 0);
		} else {
			if (ret != want_err)
				fprintf(stderr, "%s via %s: ret %d (%s), expected %d (%s)\n", path,
					how[i], ret, ds_strerror(ret), want_err,
					ds_strerror(want_err));
			CHECK_EQ_INT(ret, want_err);
		}
	}
	free(buf);
}

/* Compile prog_src (or src) with cc and flags; returns the output path. */
static char *build(const char *cc, const char *flags, const char *src, const char *name)
{
	char *out = tpath("%s-%s", cc, name);

	compile(cc, flags, src ? src : prog_src, out);
	return out;
}

/* ------------------------------------------------- parse, format, equal */

static void test_parse_valid(void)
{
	static const struct {
		const char *hex;
		int size;
		uint8_t first, last;
	} ok[] = {
	    {"00", 1, 0x00, 0x00},
	    {"fF", 1, 0xff, 0xff},
	    {"0123456789abcdef", 8, 0x01, 0xef},
	    {"0123456789ABCDEF", 8, 0x01, 0xef},
	    {"aBcD", 2, 0xab, 0xcd},
	    {"9f1e6cb9f46e59f41f1b4bd2a8cc8a1a12e6f4ff", 20, 0x9f, 0xff},
	};
	struct ds_build_id bid;
	char hex128[129];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&bid, 0, sizeof(bid));
		CHECK_EQ_INT(ds_build_id_parse(ok[i].hex, &bid), 0);
		CHECK_EQ_INT(bid.size, ok[i].size);
		CHECK_EQ_INT(bid.data[0], ok[i].first);
		CHECK_EQ_INT(bid.data[ok[i].size - 1], ok[i].last);
	}
	/* The longest: 128 digits, 64 bytes; byte i is i. */
	for (int i = 0; i < 64; i++)
		snprintf(hex128 + 2 * i, 3, "%02X", i);
	CHECK_EQ_INT(ds_build_id_parse(hex128, &bid), 0);
	CHECK_EQ_INT(bid.size, 64);
	for (int i = 0; i < 64; i++)
		CHECK_EQ_INT(bid.data[i], i);
}

static void test_parse_invalid(void)
{
	static const char *const bad[] = {
	    "",
	    "0",
	    "abc",
	    "0x12",
	    "0X12",
	    "12 ",
	    " 12",
	    "1 2",
	    "zz",
	    "g0",
	    "0g",
	    "12\n",
	    "+12",
	    "-1",
	    "12-34",
	    "ab:cd",
	    "\t12",
	    "ab\xff",
	    "\xc2\xb9\xc2\xb2", /* superscript digits */
	};
	struct ds_build_id bid, before;
	char longhex[140];

	memset(&before, 0xa5, sizeof(before));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		bid = before;
		if (ds_build_id_parse(bad[i], &bid) != -EINVAL)
			fprintf(stderr, "parse accepted bad input #%zu '%s'\n", i, bad[i]);
		CHECK_EQ_INT(ds_build_id_parse(bad[i], &bid), -EINVAL);
		/* *out is untouched on error. */
		CHECK(memcmp(&bid, &before, sizeof(bid)) == 0);
	}
	/* 129 and 130 digits: one and two past the maximum. */
	memset(longhex, 'a', sizeof(longhex));
	for (int n = 129; n <= 130; n++) {
		longhex[n] = 0;
		bid = before;
		CHECK_EQ_INT(ds_build_id_parse(longhex, &bid), -EINVAL);
		CHECK(memcmp(&bid, &before, sizeof(bid)) == 0);
	}
	longhex[128] = 0;
	CHECK_EQ_INT(ds_build_id_parse(longhex, &bid), 0);
}

static void test_format(void)
{
	static const char *const in[] = {"00", "AbCdEf", "0123456789ABCDEF0123456789abcdef"};
	struct ds_build_id bid = {0};
	char buf[2 * DS_BUILD_ID_MAX + 1], want[sizeof(buf)];
	size_t n;

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		n = strlen(in[i]);
		for (size_t j = 0; j <= n; j++)
			want[j] = (char)tolower((unsigned char)in[i][j]);
		CHECK_EQ_INT(ds_build_id_parse(in[i], &bid), 0);
		/* Exactly enough room: 2 * size digits and the NUL. */
		memset(buf, 'X', sizeof(buf));
		CHECK_EQ_INT(ds_build_id_format(&bid, buf, n + 1), n);
		CHECK(strcmp(buf, want) == 0);
		/* One byte short, or none at all. */
		CHECK_EQ_INT(ds_build_id_format(&bid, buf, n), -ENOSPC);
		CHECK_EQ_INT(ds_build_id_format(&bid, buf, 1), -ENOSPC);
		CHECK_EQ_INT(ds_build_id_format(&bid, buf, 0), -ENOSPC);
	}
	/* 64 bytes round trip through 128 digits. */
	for (int i = 0; i < DS_BUILD_ID_MAX; i++)
		bid.data[i] = (uint8_t)(0xf0 ^ i);
	bid.size = DS_BUILD_ID_MAX;
	CHECK_EQ_INT(ds_build_id_format(&bid, buf, sizeof(buf)), 2 * DS_BUILD_ID_MAX);
	CHECK(strcmp(buf, bid_hex(&bid)) == 0);
	bid.size = 0;
	CHECK_EQ_INT(ds_build_id_format(&bid, buf, sizeof(buf)), -EINVAL);
}

static void test_equal(void)
{
	struct ds_build_id a, b, none = {0};

	CHECK_EQ_INT(ds_build_id_parse("0011223344", &a), 0);
	b = a;
	CHECK(ds_build_id_equal(&a, &b));
	CHECK(ds_build_id_equal(&a, &a));
	/* Only the first size bytes count: stale bytes after them do not. */
	memset(b.data + b.size, 0x5a, DS_BUILD_ID_MAX - b.size);
	CHECK(ds_build_id_equal(&a, &b));
	CHECK_EQ_INT(ds_build_id_parse("0011223345", &b), 0);
	CHECK(!ds_build_id_equal(&a, &b));
	/* A prefix is not equal. */
	CHECK_EQ_INT(ds_build_id_parse("00112233", &b), 0);
	CHECK(!ds_build_id_equal(&a, &b));
	CHECK(!ds_build_id_equal(&b, &a));
	/* "Both are set": none never equals anything, not even none. */
	CHECK(!ds_build_id_equal(&a, &none));
	CHECK(!ds_build_id_equal(&none, &a));
	CHECK(!ds_build_id_equal(&none, &none));
}

/* ------------------------------------------------- compiled binaries */

static void test_styles(const char *cc)
{
	static const struct {
		const char *style;
		int size;
	} styles[] = {{"sha1", 20}, {"md5", 16}, {"uuid", 16}};
	char flags[128];

	for (size_t i = 0; i < sizeof(styles) / sizeof(styles[0]); i++) {
		char *bin;
		const char *want;

		snprintf(flags, sizeof(flags), "-O1 -Wl,--build-id=%s", styles[i].style);
		bin = build(cc, flags, NULL, styles[i].style);
		want = t_readelf_build_id(bin);
		CHECK_EQ_INT(strlen(want), 2 * styles[i].size);
		expect_all(bin, want, 0);
	}
	/* A chosen value: the answer is the value itself, and eu-readelf
	 * agrees when the length is a multiple of 4. */
	expect_all(build(cc, "-Wl,--build-id=0x00112233445566778899AABBCCDDEEFF", NULL, "hex16"),
		   "00112233445566778899aabbccddeeff", 0);
	CHECK(strcmp(t_readelf_build_id(tpath("%s-hex16", cc)),
		     "00112233445566778899aabbccddeeff") == 0);
	/* 10 bytes: ld leaves .note.gnu.build-id 26 bytes long, so readers of
	 * the section alone (eu-readelf, binutils readelf) see garbage; the
	 * PT_NOTE covers the padding and gives the value. */
	expect_all(build(cc, "-Wl,--build-id=0x0123456789abcdef00ff", NULL, "hex10"),
		   "0123456789abcdef00ff", 0);
	expect_all(build(cc, "-Wl,--build-id=none", NULL, "none"), "", -ENODATA);
}

static void test_kinds(const char *cc)
{
	char *bin, *lib, *obj, *rel;

	lib = build(cc, "-shared -fPIC -Wl,--build-id=sha1", lib_src, "lib.so");
	expect_all(lib, t_readelf_build_id(lib), 0);
	bin = build(cc, "-Wl,--build-id=sha1", decoy_src, "decoy");
	CHECK(strlen(t_readelf_build_id(bin)) == 40);
	expect_all(bin, t_readelf_build_id(bin), 0);

	/* An object file has notes but no build ID (ld adds it). */
	obj = build(cc, "-c", NULL, "prog.o");
	expect_all(obj, "", -ENODATA);
	/* ld -r --build-id: a note in a section, no program headers at all. */
	rel = tpath("%s-rel.o", cc);
	CHECK_EQ_INT(t_sh("ld -r --build-id=md5 -o '%s' '%s'", rel, obj), 0);
	CHECK(strlen(t_readelf_build_id(rel)) == 32);
	expect_all(rel, t_readelf_build_id(rel), 0);

	/* What debuginfo lookups read: a stripped binary and the debug files
	 * split off by objcopy and eu-strip (notes kept, code NOBITS). */
	bin = build(cc, "-g -Wl,--build-id=sha1", NULL, "g");
	CHECK_EQ_INT(t_sh("objcopy --only-keep-debug '%s' '%s.dbg' && "
			  "eu-strip -f '%s.eu.debug' -o '%s.eu.stripped' '%s' && "
			  "strip -o '%s.stripped' '%s'",
			  bin, bin, bin, bin, bin, bin, bin),
		     0);
	expect_all(tpath("%s-g.dbg", cc), t_readelf_build_id(bin), 0);
	expect_all(tpath("%s-g.eu.debug", cc), t_readelf_build_id(bin), 0);
	expect_all(tpath("%s-g.eu.stripped", cc), t_readelf_build_id(bin), 0);
	expect_all(tpath("%s-g.stripped", cc), t_readelf_build_id(bin), 0);
}

static void test_32bit(const char *cc)
{
	char *out = tpath("%s-m32", cc), *src = tpath("%s-m32.c", cc);

	t_write_file(src, prog_src);
	if (t_sh("%s -m32 -Wl,--build-id=sha1 -o '%s' '%s' 2>/dev/null", cc, out, src) != 0) {
		fprintf(stderr, "note: %s -m32 does not link here; 32-bit part skipped\n", cc);
		return;
	}
	CHECK(strlen(t_readelf_build_id(out)) == 40);
	expect_all(out, t_readelf_build_id(out), 0);
	CHECK_EQ_INT(t_sh("%s -m32 -shared -fPIC -Wl,--build-id=md5 -o '%s.so' '%s'", cc, out, src),
		     0);
	expect_all(tpath("%s-m32.so", cc), t_readelf_build_id(tpath("%s-m32.so", cc)), 0);
}

/* Cut a real binary at interesting lengths.  Before the end of the build
 * ID's desc there is no way to know it: an error.  After, the reader may
 * still give it (the note is whole) or refuse the file, but a different ID
 * is always wrong. */
static void test_truncated_compiled(void)
{
	char *bin = build("gcc", "-Wl,--build-id=sha1", NULL, "trunc");
	struct ds_build_id want, bid;
	size_t len, desc_end, cuts[32], n = 0;
	uint8_t *buf = slurp(bin, &len), *at;

	CHECK_EQ_INT(ds_build_id_parse(t_readelf_build_id(bin), &want), 0);
	at = memmem(buf, len, want.data, want.size);
	CHECK(at != NULL);
	if (!at)
		return;
	desc_end = (size_t)(at - buf) + want.size;
	size_t fixed[] = {0,
			  1,
			  4,
			  5,
			  16,
			  17,
			  51,
			  52,
			  63,
			  64,
			  64 + 56 - 1,
			  64 + 56 + 3,
			  desc_end - want.size - 4,
			  desc_end - 1,
			  desc_end,
			  desc_end + 1,
			  len / 2,
			  len - 1};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (fixed[i] < len)
			cuts[n++] = fixed[i];
	for (size_t i = 0; i < n; i++) {
		char *path = tpath("trunc-%zu", cuts[i]);
		int ret;

		ret = read_mem_ro(buf, cuts[i], &bid);
		write_bytes(path, buf, cuts[i]);
		for (int via = 0; via < 2; via++) {
			if (via)
				ret = ds_build_id_read_file(path, &bid);
			if (ret == 0 && cuts[i] >= desc_end && ds_build_id_equal(&bid, &want))
				continue;
			if (ret == 0 || (ret != -ENOEXEC && ret != -ENODATA))
				fprintf(stderr, "cut at %zu of %zu (desc ends at %zu): %d %s\n",
					cuts[i], len, desc_end, ret,
					ret ? ds_strerror(ret) : bid_hex(&bid));
			CHECK(ret == -ENOEXEC || ret == -ENODATA);
		}
	}
	free(buf);
}

/* ---------------------------------------------------- hand-built ELFs */

/* The builder's bytes, checked once against the peers, so that a wrong
 * builder cannot make a wrong library look right. */
static void check_builder(const char *path, const char *want)
{
	const char *eu = t_readelf_build_id(path);
	char cmd[512], got[256] = "";
	FILE *p;

	if (eu[0]) {
		CHECK(strcmp(eu, want) == 0);
		return;
	}
	/* eu-readelf reads only sections when there are any; binutils
	 * readelf falls back to PT_NOTE. */
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null | awk '/Build ID:/ {print $3}'",
		 path);
	p = popen(cmd, "r");
	if (p && fgets(got, sizeof(got), p))
		got[strcspn(got, "\n")] = 0;
	if (p)
		pclose(p);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "builder check %s: readelf says '%s', want '%s'\n", path, got,
			want);
	CHECK(strcmp(got, want) == 0);
}

static void test_handbuilt_cuts(const struct mkelf_variant *v, const uint8_t *buf,
				const struct mkelf_layout *lay, const char *want)
{
	size_t desc_end = 0;
	struct ds_build_id bid;

	if (v->expect == MKELF_ID)
		desc_end = lay->desc_off[v->expect_group][v->expect_note] + strlen(want) / 2;
	for (size_t cut = 0; cut < lay->len; cut++) {
		int ret = read_mem_ro(buf, cut, &bid);

		if (ret == 0 && v->expect == MKELF_ID && cut >= desc_end &&
		    strcmp(bid_hex(&bid), want) == 0)
			continue;
		if (ret == 0 || (ret != -ENOEXEC && ret != -ENODATA)) {
			fprintf(stderr, "%s cut at %zu: %d %s\n", v->name, cut, ret,
				ret ? ds_strerror(ret) : bid_hex(&bid));
			t_failures++;
		}
	}
}

static void test_handbuilt(void)
{
	static uint8_t buf[MKELF_MAX_LEN];
	char want[2 * 256 + 1];

	for (size_t i = 0; i < MKELF_NVARIANTS; i++) {
		const struct mkelf_variant *v = &mkelf_variants[i];
		struct mkelf_layout lay;
		struct ds_build_id bid;
		char *path = tpath("hand-%s", v->name);
		int ret;

		mkelf_build(v, buf, &lay);
		mkelf_expected_hex(v, want, sizeof(want));
		write_bytes(path, buf, lay.len);
		if (v->expect == MKELF_ID) {
			check_builder(path, want);
			expect_all(path, want, 0);
		} else if (v->expect == MKELF_ERR) {
			expect_all(path, "", v->expect_err);
		} else {
			ret = read_mem_ro(buf, lay.len, &bid);
			if (ret == 0 || (ret != -ENOEXEC && ret != -ENODATA))
				fprintf(stderr, "%s: %d %s, expected an error\n", v->name, ret,
					ret ? ds_strerror(ret) : bid_hex(&bid));
			CHECK(ret == -ENOEXEC || ret == -ENODATA);
			CHECK(ds_build_id_read_file(path, &bid) == ret);
		}
		test_handbuilt_cuts(v, buf, &lay, want);
	}
}

/* ------------------------------------------------------------ errors */

static void test_errors(void)
{
	struct ds_build_id bid;
	char *text = tpath("text"), *empty = tpath("empty"), *dir = tpath("dir");
	char *magic = tpath("magic-only");
	int fd;

	t_write_file(text, "#!/bin/sh\necho this is not ELF\n");
	t_write_file(empty, "");
	t_write_file(magic, "\177ELF");
	CHECK_EQ_INT(mkdir(dir, 0755), 0);

	expect_all(text, "", -ENOEXEC);
	expect_all(empty, "", -ENOEXEC);
	expect_all(magic, "", -ENOEXEC);
	CHECK_EQ_INT(ds_build_id_read_file(dir, &bid), -EISDIR);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	CHECK_EQ_INT(ds_build_id_read_fd(fd, &bid), -EISDIR);
	close(fd);
	CHECK_EQ_INT(ds_build_id_read_file(tpath("no-such-file"), &bid), -ENOENT);
	CHECK_EQ_INT(ds_build_id_read_file(tpath("no-such-dir/file"), &bid), -ENOENT);
	CHECK_EQ_INT(ds_build_id_read_fd(-1, &bid), -EBADF);
	CHECK_EQ_INT(read_mem_ro("", 0, &bid), -ENOEXEC);
	CHECK_EQ_INT(read_mem_ro("\177ELF\2\1\1", 7, &bid), -ENOEXEC);
	/* The messages the CLI will print are not empty. */
	CHECK(ds_strerror(-ENODATA)[0] != 0);
	CHECK(ds_strerror(-ENOEXEC)[0] != 0);
	CHECK(strcmp(ds_strerror(-ENODATA), ds_strerror(-ENOEXEC)) != 0);
}

/* A FIFO nobody writes to is not ELF; opening it must not wait for a
 * writer (dsostore buildid on one would hang).  Checked in a child with an
 * alarm so that a hang fails the test instead of stalling it. */
static void test_fifo(void)
{
	char *fifo = tpath("fifo");
	int status = 0;
	pid_t pid;

	CHECK_EQ_INT(mkfifo(fifo, 0644), 0);
	pid = fork();
	if (pid == 0) {
		struct ds_build_id bid;
		int ret;

		alarm(5);
		ret = ds_build_id_read_file(fifo, &bid);
		if (ret >= 0)
			fprintf(stderr, "FIFO: read_file returned %d\n", ret);
		_exit(ret < 0 ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	if (WIFSIGNALED(status))
		fprintf(stderr, "ds_build_id_read_file() on a FIFO blocked (killed by signal %d)\n",
			WTERMSIG(status));
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
	test_parse_valid();
	test_parse_invalid();
	test_format();
	test_equal();
	test_handbuilt();
	test_errors();
	test_fifo();
	test_styles("gcc");
	test_styles("clang");
	test_kinds("gcc");
	test_kinds("clang");
	test_32bit("gcc");
	test_32bit("clang");
	test_truncated_compiled();
	return t_done("test_buildid");
}
