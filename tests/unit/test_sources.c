/* SPDX-License-Identifier: MIT */
/* What dsostore serve needs to answer /section/ and /source/ requests:
 * where a section's bytes are in a file (as readelf -S -W gives them,
 * compressed ones as they are), source paths compared as debuginfod
 * compares them, and the source files the DWARF of a file names (the
 * program here is written and compiled by the test, so the answer is
 * known; readelf's line tables confirm the compiler named no others). */
#define _GNU_SOURCE
#include "dsostore.h"
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------- section ranges */

/* Offset and size of section name in file, as readelf -S -W prints them;
 * false when readelf lists no such section.  *nobits: its type. */
static bool readelf_section(const char *file, const char *name, uint64_t *off, uint64_t *size,
			    bool *nobits)
{
	FILE *p = t_popen("LC_ALL=C readelf -S -W '%s' 2>/dev/null", file);
	char line[512];
	bool found = false;

	while (!found && fgets(line, sizeof(line), p)) {
		const char *rb = strchr(line, ']');
		char sname[256], type[64];
		unsigned long long addr, o, s;

		if (!rb || sscanf(rb + 1, "%255s %63s %llx %llx %llx", sname, type, &addr, &o, &s) != 5)
			continue;
		if (strcmp(sname, name))
			continue;
		*off = o;
		*size = s;
		*nobits = !strcmp(type, "NOBITS");
		found = true;
	}
	pclose(p);
	return found;
}

static void check_section(const char *file, const char *name)
{
	uint64_t off = 0, size = 0, want_off, want_size;
	bool nobits;
	int fd = open(file, O_RDONLY | O_CLOEXEC), err;

	CHECK(fd >= 0);
	err = ds_elf_section_range(fd, name, &off, &size);
	close(fd);
	if (!readelf_section(file, name, &want_off, &want_size, &nobits) || nobits) {
		if (err != -ENOENT)
			fprintf(stderr, "  %s %s: %d, readelf: none or NOBITS\n", file, name, err);
		CHECK_EQ_INT(err, -ENOENT);
		return;
	}
	if (err || off != want_off || size != want_size)
		fprintf(stderr, "  %s %s: %d [0x%llx +0x%llx), readelf [0x%llx +0x%llx)\n", file,
			name, err, (unsigned long long)off, (unsigned long long)size,
			(unsigned long long)want_off, (unsigned long long)want_size);
	CHECK_EQ_INT(err, 0);
	CHECK_EQ_INT(off, want_off);
	CHECK_EQ_INT(size, want_size);
}

static int range_of(const char *file, const char *name)
{
	uint64_t off, size;
	int fd = open(file, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = ds_elf_section_range(fd, name, &off, &size);
	close(fd);
	return err;
}

static const char prog_src[] = "int counter;\n"
			       "int work(int x) { return x * 7 + counter; }\n"
			       "int main(int argc, char **argv) { (void)argv; return work(argc); }\n";

static void case_sections(void)
{
	char *prog = t_path("prog"), *gz = t_path("prog-gz"), *dbg = t_path("prog.debug"),
	     *stripped = t_path("prog-stripped"), *cut = t_path("prog-cut"),
	     *past = t_path("prog-past"), *text = t_path("not-elf");
	const char *names[] = {".text", ".debug_info", ".debug_line", ".data", ".bss",
			       ".note.gnu.build-id", ".symtab", ".no_such_section"};
	uint64_t off, size, tsize;
	bool nobits;
	size_t len;
	char *bytes;

	printf("case: section ranges against readelf -S -W\n");
	t_compile("cc", "-g -O1", prog_src, prog);
	t_compile("cc", "-g -O1 -gz=zlib", prog_src, gz);
	if (t_sh("objcopy --only-keep-debug '%s' '%s' && objcopy --strip-debug "
		 "--add-gnu-debuglink='%s' '%s' '%s'",
		 prog, dbg, dbg, prog, stripped) != 0) {
		fprintf(stderr, "objcopy failed\n");
		exit(1);
	}
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		check_section(prog, names[i]);
		check_section(gz, names[i]);
		check_section(dbg, names[i]); /* (its .text is NOBITS) */
	}
	check_section(stripped, ".gnu_debuglink");
	/* The compressed one is what is in the file: smaller than the same
	 * program's plain .debug_info, with the gABI compression header. */
	CHECK(readelf_section(gz, ".debug_info", &off, &size, &nobits));
	CHECK(readelf_section(prog, ".debug_info", &off, &tsize, &nobits));
	CHECK(size < tsize);
	CHECK_EQ_INT(range_of(prog, ".bss"), -ENOENT);
	CHECK_EQ_INT(range_of(dbg, ".text"), -ENOENT);

	/* Not ELF; the section headers cut off; a section past the end. */
	t_write_file(text, "not an ELF file\n");
	CHECK_EQ_INT(range_of(text, ".text"), -ENOEXEC);
	bytes = t_read_all(prog, &len);
	{
		FILE *f = fopen(cut, "wb");

		CHECK(f && fwrite(bytes, 1, len - 64, f) == len - 64);
		fclose(f);
	}
	CHECK_EQ_INT(range_of(cut, ".text"), -ENOEXEC);
	/* .comment's sh_offset moved to the file's end (ELF64 little-endian:
	 * e_shoff at 0x28, sh_offset 24 bytes into a 64-byte header). */
	if (len > 64 && bytes[4] == 2 && bytes[5] == 1) {
		FILE *p = t_popen("LC_ALL=C readelf -S -W '%s' | sed -n 's/^ *\\[ *\\([0-9]*\\)\\] "
				  "\\.comment .*/\\1/p'",
				  prog);
		unsigned idx = 0;
		uint64_t shoff, end = len;

		CHECK(fscanf(p, "%u", &idx) == 1);
		pclose(p);
		memcpy(&shoff, bytes + 0x28, 8);
		CHECK(idx > 0 && shoff + (idx + 1) * 64 <= len);
		memcpy(bytes + shoff + idx * 64 + 24, &end, 8);
		{
			FILE *f = fopen(past, "wb");

			CHECK(f && fwrite(bytes, 1, len, f) == len);
			fclose(f);
		}
		CHECK_EQ_INT(range_of(past, ".comment"), -ENOEXEC);
		CHECK_EQ_INT(range_of(past, ".text"), 0); /* the others still are */
	}
	free(bytes);
	free(prog);
	free(gz);
	free(dbg);
	free(stripped);
	free(cut);
	free(past);
	free(text);
}

/* ----------------------------------------------------- canonical paths */

/* RFC 3986 5.2.4 by hand, with "//" as "/": each case worked out from the
 * rules, not from our output. */
static const struct {
	const char *in, *out;
} canon_cases[] = {
	{"/", "/"},
	{"/a/b/c.c", "/a/b/c.c"},
	{"//a//b///c.c", "/a/b/c.c"},
	{"/a/./b/./c.c", "/a/b/c.c"},
	{"/a/b/../c.c", "/a/c.c"},
	{"/a/../../b", "/b"},
	{"/../../x.c", "/x.c"},
	{"/a/b/c/../../d.c", "/a/d.c"},
	{"/a/b/", "/a/b/"},
	{"/a/b/.", "/a/b/"},
	{"/a/b/..", "/a/"},
	{"/a/..", "/"},
	{"/..", "/"},
	{"/.", "/"},
	{"/a/.hidden/..x/...", "/a/.hidden/..x/..."},
	{"/src/./sub/../inc/h.h", "/src/inc/h.h"},
};

static void case_canon(void)
{
	char out[64], small[8];
	int fails = 0;

	printf("case: ds_source_canon, %zu paths\n", sizeof(canon_cases) / sizeof(canon_cases[0]));
	for (size_t i = 0; i < sizeof(canon_cases) / sizeof(canon_cases[0]); i++) {
		int err = ds_source_canon(canon_cases[i].in, out, sizeof(out));

		if (err || strcmp(out, canon_cases[i].out)) {
			fprintf(stderr, "  '%s': %d '%s', expected '%s'\n", canon_cases[i].in, err,
				err ? "" : out, canon_cases[i].out);
			fails++;
		}
	}
	CHECK_EQ_INT(fails, 0);
	/* Where python's posixpath.normpath agrees (no trailing slash, no
	 * leading "//", which it keeps): the same answers. */
	{
		FILE *p = t_popen("python3 -c 'import posixpath\n"
				  "for s in (\"/a/./b/../c.c\", \"/a/../../b\", \"/x//y/./z.h\","
				  " \"/p/q/r/../../s.c\"): print(posixpath.normpath(s))' 2>/dev/null");
		const char *ins[] = {"/a/./b/../c.c", "/a/../../b", "/x//y/./z.h", "/p/q/r/../../s.c"};
		char line[64];
		size_t k = 0;

		while (k < 4 && fgets(line, sizeof(line), p)) {
			line[strcspn(line, "\n")] = 0;
			CHECK_EQ_INT(ds_source_canon(ins[k], out, sizeof(out)), 0);
			if (strcmp(out, line))
				fprintf(stderr, "  '%s': '%s', normpath '%s'\n", ins[k], out, line);
			CHECK(!strcmp(out, line));
			k++;
		}
		if (pclose(p) == 0)
			CHECK_EQ_INT(k, 4);
	}
	CHECK_EQ_INT(ds_source_canon("a/b.c", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(ds_source_canon("", out, sizeof(out)), -EINVAL);
	CHECK_EQ_INT(ds_source_canon("/abcdefg", small, sizeof(small)), -ENAMETOOLONG);
	CHECK_EQ_INT(ds_source_canon("/abcdef", small, sizeof(small)), 0);
	CHECK(!strcmp(small, "/abcdef"));
	/* It fits once the dots are out. */
	CHECK_EQ_INT(ds_source_canon("/./././a/../b", small, sizeof(small)), 0);
	CHECK(!strcmp(small, "/b"));
	CHECK_EQ_INT(ds_source_canon("/x", small, 2), -ENAMETOOLONG);
}

/* --------------------------------------------------------- source names */

/* The file names of every line table readelf shows in file (DWARF 4's
 * "Entry Dir Time Size Name", DWARF 5's "Entry Dir Name" rows): their
 * last field, as one string "a|b|..." in table order. */
static char *readelf_line_files(const char *file)
{
	FILE *p = t_popen("LC_ALL=C readelf --debug-dump=rawline '%s' 2>/dev/null", file);
	char line[1024], *out = calloc(1, 4096);
	bool in_files = false;
	size_t n = 0;

	while (out && fgets(line, sizeof(line), p)) {
		const char *last;

		line[strcspn(line, "\n")] = 0;
		if (strstr(line, "The File Name Table")) {
			in_files = true;
			continue;
		}
		if (!line[0] || strstr(line, "Line Number Statements"))
			in_files = false;
		if (!in_files || strstr(line, "Entry"))
			continue;
		last = strrchr(line, ' ');
		last = last ? last + 1 : line;
		if (strrchr(last, '\t'))
			last = strrchr(last, '\t') + 1;
		if (n + strlen(last) + 2 < 4096)
			n += (size_t)sprintf(out + n, "%s%s", n ? "|" : "", last);
	}
	pclose(p);
	return out;
}

static const char x_src[] = "#include \"../inc/hdr.h\"\n"
			    "int v;\n"
			    "void _start(void) { v = helper(v); for (;;) ; }\n";
static const char hdr_src[] = "static inline int helper(int x) { return x * 3 + 1; }\n";

static void check_names(const char *file, const char *proj, const char *ver)
{
	char **names = NULL, *want_x, *want_h, *files;
	size_t n = 0;
	int err = ds_source_names(file, &names, &n);

	CHECK_EQ_INT(err, 0);
	if (asprintf(&want_x, "%s/sub/x.c", proj) < 0 || asprintf(&want_h, "%s/inc/hdr.h", proj) < 0)
		exit(2);
	/* The compiler named x.c (DWARF 5: twice, as file 0 and 1) and hdr.h
	 * (under "sub/../inc"), nothing else: no libc here. */
	files = readelf_line_files(file);
	if (strcmp(files, "x.c|hdr.h") && strcmp(files, "x.c|x.c|hdr.h") &&
	    strcmp(files, "x.c|hdr.h|x.c")) {
		fprintf(stderr, "  %s: readelf's file tables: %s\n", ver, files);
		CHECK(!"readelf names x.c and hdr.h only");
	}
	CHECK_EQ_INT(n, 2);
	if (!err && n == 2) {
		/* Sorted: "inc" before "sub". */
		if (strcmp(names[0], want_h) || strcmp(names[1], want_x))
			fprintf(stderr, "  %s: '%s' '%s', expected '%s' '%s'\n", ver, names[0],
				names[1], want_h, want_x);
		CHECK(!strcmp(names[0], want_h));
		CHECK(!strcmp(names[1], want_x));
		CHECK(names[2] == NULL);
	}
	for (size_t i = 0; !err && i < n; i++) {
		CHECK(strcmp(names[i], "/etc/passwd") != 0);
		CHECK(!strstr(names[i], "/./") && !strstr(names[i], "/../") && !strstr(names[i], "//"));
	}
	free(names);
	free(files);
	free(want_x);
	free(want_h);
}

static void case_source_names(void)
{
	char *proj = t_path("proj"), real[PATH_MAX], *x, *h, *x4, *x5, *split, *cut, *stripped;
	char **names = (char **)1;
	size_t n = 7, len;
	char *bytes;

	printf("case: ds_source_names of DWARF 4 and 5 programs\n");
	x = t_path("proj/sub/x.c");
	h = t_path("proj/inc/hdr.h");
	t_mkdir_parents(x);
	t_mkdir_parents(h);
	t_write_file(x, x_src);
	t_write_file(h, hdr_src);
	if (!realpath(proj, real))
		exit(2);
	x4 = t_path("x4");
	x5 = t_path("x5");
	split = t_path("proj/xsplit");
	cut = t_path("x5-cut");
	stripped = t_path("x5-stripped");
	/* A relative source path, compiled where it is relative to. */
	if (t_sh("cd '%s' && cc -g -gdwarf-4 -O0 -c sub/x.c -o x4.o && cc -nostdlib -static "
		 "-o '%s' x4.o && cc -g -gdwarf-5 -O0 -c ./sub/x.c -o x5.o && cc -nostdlib -static "
		 "-o '%s' x5.o && cc -g -gsplit-dwarf -O0 -nostdlib -static -o xsplit sub/x.c",
		 real, x4, x5) != 0) {
		fprintf(stderr, "compiling in %s failed\n", real);
		exit(1);
	}
	check_names(x4, real, "DWARF 4");
	check_names(x5, real, "DWARF 5");
	/* A split DWARF skeleton: its own line table names the files. */
	CHECK_EQ_INT(ds_source_names(split, &names, &n), 0);
	if (names) {
		bool has_x = false;

		for (size_t i = 0; i < n; i++)
			has_x |= !strcmp(names[i], x) || (strstr(names[i], "/proj/sub/x.c") != NULL);
		CHECK(has_x);
		free(names);
	}

	/* dwz: units moved into partial units, some into the alt file; with
	 * the alt file gone, an answer or an error, never a crash. */
	if (t_sh("command -v dwz >/dev/null") == 0) {
		char *a = t_path("dwz-a"), *b = t_path("dwz-b"), *alt = t_path("dwz-alt");

		if (t_sh("cp '%s' '%s' && cp '%s' '%s' && dwz -q -m '%s' '%s' '%s'", x5, a, x5, b, alt,
			 a, b) != 0 ||
		    access(alt, F_OK) != 0) {
			fprintf(stderr, "dwz -m failed\n");
			exit(1);
		}
		check_names(a, real, "DWARF 5 after dwz");
		unlink(alt);
		if (ds_source_names(a, &names, &n) == 0)
			free(names);
		free(a);
		free(b);
		free(alt);
	}

	/* No DWARF; not ELF; cut short. */
	names = (char **)1;
	if (t_sh("objcopy --strip-debug '%s' '%s'", x5, stripped) != 0)
		exit(1);
	CHECK_EQ_INT(ds_source_names(stripped, &names, &n), -ENODATA);
	CHECK_EQ_INT(ds_source_names(h, &names, &n), -ENOEXEC);
	CHECK_EQ_INT(ds_source_names(t_tmpdir(), &names, &n), -EISDIR);
	bytes = t_read_all(x5, &len);
	for (size_t keep = len / 2; keep >= 64; keep /= 2) {
		FILE *f = fopen(cut, "wb");

		CHECK(f && fwrite(bytes, 1, keep, f) == keep);
		fclose(f);
		CHECK(ds_source_names(cut, &names, &n) < 0);
	}
	/* Garbled DWARF: every byte of .debug_line and .debug_info flipped;
	 * an answer or an error, never a crash. */
	{
		uint64_t off, size;
		bool nobits;
		const char *secs[] = {".debug_line", ".debug_info", ".debug_abbrev", ".debug_line_str"};

		for (size_t s = 0; s < sizeof(secs) / sizeof(secs[0]); s++) {
			char *copy = malloc(len);
			FILE *f;
			int err;

			if (!copy || !readelf_section(x5, secs[s], &off, &size, &nobits))
				exit(2);
			memcpy(copy, bytes, len);
			for (uint64_t i = off; i < off + size && i < len; i++)
				copy[i] = (char)(copy[i] ^ 0x5a);
			f = fopen(cut, "wb");
			CHECK(f && fwrite(copy, 1, len, f) == len);
			fclose(f);
			err = ds_source_names(cut, &names, &n);
			if (!err)
				free(names);
			free(copy);
		}
	}
	free(bytes);
	free(proj);
	free(x);
	free(h);
	free(x4);
	free(x5);
	free(split);
	free(cut);
	free(stripped);
}

int main(void)
{
	case_sections();
	case_canon();
	case_source_names();
	return t_done("test_sources");
}
