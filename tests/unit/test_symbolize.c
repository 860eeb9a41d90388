/* SPDX-License-Identifier: MIT */
/* Symbolization through the C API (include/dsostore.h, "symbolize"):
 * ds_dso_symbolize() and its batch form against binutils addr2line on the
 * same addresses, with and without inline frames, demangled C++, file
 * offsets of a shared library (unstripped and split), split debuginfo
 * found by build ID, debuginfo that turns up after the first call; the
 * index under threads (TSan) and under a memory budget; names-only
 * queries (DS_SYM_NO_LINES) that read no DWARF, against nm; and the
 * request line parser ds_sym_parse_line().
 *
 * Fixtures are compiled here from generated sources: a -g -O2 C program
 * whose functions call always_inline helpers two levels deep (one of them
 * from a header, so frames differ in file too), variants of it with other
 * constants (other build IDs, about the same size; two built by clang), a
 * C++ program with namespaces, templates and overloads, and a shared
 * library linked at a base address that is not its file offset.  Every
 * expected answer comes from addr2line -a -f [-i] [-C] (popen), or for
 * clang's DWARF 5 from llvm-symbolizer --inlines; segment and section
 * offsets from readelf, function bounds from nm. */
#define _GNU_SOURCE
#include "dsostore.h"
#include "testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define NFUNCS	    24	/* generated functions per program */
#define NADDRS	    200 /* addresses per binary */
#define NTHREADS    4
#define MAX_REPORTS 8 /* mismatches printed per comparison */

/* A binary, the addresses we ask about, and the oracle's answers. */
struct bin {
	const char *name, *cc, *flags;
	const char *prefix; /* the functions whose addresses we take */
	bool llvm;	    /* oracle: llvm-symbolizer, not addr2line */
	char *path;
	uint64_t addrs[NADDRS];
	size_t naddrs;
	char *want_inl[NADDRS]; /* addr2line -f -i (llvm-symbolizer --inlines) */
	char *want_one[NADDRS]; /* addr2line -f; NULL for llvm */
	uint64_t file_size;
};

/* binutils 2.40 misses clang's DWARF 5 inlined instances whose ranges are
 * DW_FORM_rnglistx (it reports the caller alone): D, clang's default
 * DWARF 5, is checked against llvm-symbolizer instead, columns included;
 * C, DWARF 4, against addr2line. */
enum { BIN_A, BIN_B, BIN_C, BIN_D, NBINS };
static struct bin bins[NBINS] = {
    {.name = "A (gcc)", .cc = "gcc", .flags = "-g -O2", .prefix = ""},
    {.name = "B (gcc)", .cc = "gcc", .flags = "-g -O2", .prefix = ""},
    {.name = "C (clang, DWARF 4)", .cc = "clang", .flags = "-g -gdwarf-4 -O2", .prefix = "f_"},
    {.name = "D (clang, DWARF 5)",
     .cc = "clang",
     .flags = "-g -gdwarf-5 -O2",
     .prefix = "f_",
     .llvm = true},
};
static const char *empty_dirs[2];

/* ------------------------------------------------------------- fixtures */

static const char helpers_h[] =
    "extern volatile int sink;\n"
    "static inline __attribute__((always_inline)) int h_leaf(int x, int k)\n"
    "{\n"
    "	int r = 0;\n"
    "	for (int i = 0; i < x; i++)\n"
    "		r += (i * k) ^ sink;\n"
    "	return r;\n"
    "}\n";

/* NFUNCS noinline functions, each calling its always_inline mid_N, which
 * inlines h_leaf from helpers.h: three-frame chains.  variant changes the
 * constants, so the build ID, not the shape. */
static char *program_source(int variant)
{
	char *src = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&src, &len);

	fprintf(f, "#include <stdio.h>\nvolatile int sink;\nint table_data[64] = { 1, 2, 3 };\n"
		   "#include \"helpers.h\"\n");
	for (int i = 0; i < NFUNCS; i++) {
		int k = i + 7 * variant;

		fprintf(f,
			"static inline __attribute__((always_inline)) int mid_%d(int x)\n"
			"{\n"
			"	if (x > %d)\n"
			"		return h_leaf(x, %d) + %d;\n"
			"	return h_leaf(x + 1, 2) * %d;\n"
			"}\n"
			"__attribute__((noinline)) int f_%d(int x)\n"
			"{\n"
			"	int s = 0;\n"
			"	for (int i = 0; i < x; i++)\n"
			"		s += mid_%d(i ^ sink);\n"
			"	if (s == %d)\n"
			"		printf(\"%%d\\n\", s);\n"
			"	return s;\n"
			"}\n",
			i, k % 5 + 1, k + 3, k * 11, k % 3 + 2, i, i, k * 101);
	}
	fprintf(f, "int (*const funcs[])(int) = {\n");
	for (int i = 0; i < NFUNCS; i++)
		fprintf(f, "	f_%d,\n", i);
	fprintf(f, "};\n"
		   "int main(int argc, char **argv)\n"
		   "{\n"
		   "	int s = 0;\n"
		   "	(void)argv;\n"
		   "	for (unsigned i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++)\n"
		   "		s += funcs[i](argc + (int)i);\n"
		   "	return s & table_data[argc & 63];\n"
		   "}\n");
	fclose(f);
	return src;
}

static const char cxx_source[] =
    "#include <cstdio>\n"
    "namespace geo {\n"
    "template <typename T> struct Box {\n"
    "	T v;\n"
    "	__attribute__((noinline)) T scaled(T k) const { return v * k + 1; }\n"
    "};\n"
    "__attribute__((noinline)) int area(int w, int h) { return w * h; }\n"
    "__attribute__((noinline)) double area(double w, double h) { return w * h / 2; }\n"
    "namespace detail {\n"
    "inline __attribute__((always_inline)) int twice(int x) { return 2 * x; }\n"
    "__attribute__((noinline)) int helper(int x) { return twice(x) + area(x, x); }\n"
    "}\n"
    "}\n"
    "int main(int argc, char **)\n"
    "{\n"
    "	geo::Box<int> bi{argc};\n"
    "	geo::Box<double> bd{argc * 0.5};\n"
    "	std::printf(\"%d %f %d %f\\n\", bi.scaled(3), bd.scaled(1.5), geo::detail::helper(argc),\n"
    "		    geo::area(argc * 1.0, 2.0));\n"
    "	return 0;\n"
    "}\n";

static const char lib_source[] =
    "#include \"helpers.h\"\n"
    "volatile int sink;\n"
    "static inline __attribute__((always_inline)) int lib_mid(int x)\n"
    "{ return x > 2 ? h_leaf(x, 3) : h_leaf(x + 4, 5); }\n"
    "__attribute__((noinline)) int lib_f(int x)\n"
    "{ int s = 0; for (int i = 0; i < x; i++) s += lib_mid(i ^ sink); return s; }\n"
    "__attribute__((noinline)) int lib_g(int x) { return lib_f(x) * 3 + lib_mid(x); }\n";

/* ------------------------------------------------------------ oracles */

/* addr2line -a OPTS on addrs: one block per address, the frame lines
 * (function, then location) joined with newlines. */
static void addr2line(const char *bin, const char *opts, const uint64_t *addrs, size_t n,
		      char **out)
{
	char *list = t_path("addrs-%d", getpid()), line[8192];
	FILE *f = fopen(list, "w"), *p;
	ptrdiff_t cur = -1;
	size_t lens[NADDRS] = {0};

	if (!f)
		exit(2);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
	fclose(f);
	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	p = t_popen("addr2line -a %s -e '%s' < '%s'", opts, bin, list);
	while (fgets(line, sizeof(line), p)) {
		/* "0x" and 16 digits: the next address's block */
		if (!strncmp(line, "0x", 2) && strlen(line) == 19 && cur + 1 < (ptrdiff_t)n) {
			cur++;
			continue;
		}
		if (cur < 0)
			continue;
		size_t l = strlen(line);

		out[cur] = realloc(out[cur], lens[cur] + l + 1);
		memcpy(out[cur] + lens[cur], line, l + 1);
		lens[cur] += l;
	}
	if (pclose(p) != 0 || cur + 1 != (ptrdiff_t)n) {
		fprintf(stderr, "addr2line on %s gave %td of %zu answers\n", bin, cur + 1, n);
		exit(1);
	}
	unlink(list);
	free(list);
}


/* llvm-symbolizer --inlines -a: blocks separated by blank lines, the
 * address first, then function and FILE:LINE:COLUMN per frame. */
static void llvm_symbolizer(const char *bin, const uint64_t *addrs, size_t n, char **out)
{
	char *list = t_path("addrs-%d", getpid()), line[8192];
	FILE *f = fopen(list, "w"), *p;
	size_t cur = 0, len = 0;
	bool at_start = true;

	if (!f)
		exit(2);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "0x%" PRIx64 "\n", addrs[i]);
		out[i] = NULL;
	}
	fclose(f);
	p = t_popen("llvm-symbolizer --inlines -a -e '%s' < '%s'", bin, list);
	while (fgets(line, sizeof(line), p) && cur < n) {
		size_t l = strlen(line);

		if (!strcmp(line, "\n")) { /* end of a block */
			cur += !at_start;
			at_start = true;
			len = 0;
			continue;
		}
		if (at_start) { /* the address */
			at_start = false;
			continue;
		}
		out[cur] = realloc(out[cur], len + l + 1);
		memcpy(out[cur] + len, line, l + 1);
		len += l;
	}
	if (pclose(p) != 0 || cur != n) {
		fprintf(stderr, "llvm-symbolizer on %s gave %zu of %zu answers\n", bin, cur, n);
		exit(1);
	}
	unlink(list);
	free(list);
}

/* As llvm-symbolizer prints it: "??" and "??:0:0" for what is unknown. */
static char *format_llvm(const struct ds_sym_result *r)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!r->nframes)
		fputs("??\n??:0:0\n", f);
	for (size_t i = 0; i < r->nframes; i++) {
		const struct ds_frame *fr = &r->frames[i];

		fprintf(f, "%s\n%s:%u:%u\n", fr->function ? fr->function : "??",
			fr->file ? fr->file : "??", fr->line, fr->column);
	}
	fclose(f);
	return s;
}

/* Compare one result with the oracle's block (llvm: llvm-symbolizer's);
 * a few mismatches are printed in full. */
static bool same_as_fmt(const char *what, uint64_t addr, const struct ds_sym_result *r,
			const char *want, int *reports, bool llvm)
{
	char *got = llvm ? format_llvm(r) : t_format_a2l(r);
	bool ok = want && !strcmp(got, want);

	if (!ok && (*reports)++ < MAX_REPORTS)
		fprintf(stderr, "%s 0x%" PRIx64 ":\n--- %s\n%s--- dsostore\n%s", what, addr,
			llvm ? "llvm-symbolizer" : "addr2line", want ? want : "(none)\n", got);
	free(got);
	return ok;
}

static bool same_as(const char *what, uint64_t addr, const struct ds_sym_result *r,
		    const char *want, int *reports)
{
	return same_as_fmt(what, addr, r, want, reports, false);
}

/* ------------------------------------------------------- address lists */

struct func {
	uint64_t lo, size;
};

/* Functions of bin whose name contains part (nm -S: they have a size). */
static size_t functions(const char *bin, const char *part, struct func *out, size_t max)
{
	FILE *p = t_popen("nm -S --defined-only '%s'", bin);
	char line[1024], type, name[512];
	unsigned long long lo, size;
	size_t n = 0;

	while (fgets(line, sizeof(line), p) && n < max) {
		if (sscanf(line, "%llx %llx %c %511s", &lo, &size, &type, name) != 4)
			continue;
		if ((type == 't' || type == 'T') && size && strstr(name, part))
			out[n++] = (struct func){lo, size};
	}
	pclose(p);
	return n;
}

static uint64_t rng_state = 0x5eed;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Boundaries of every function (first byte, second, last, one past the
 * end: padding or the next function), then random addresses inside them,
 * plus a few outside any function (0, a data object).  inside: only
 * addresses inside the functions (llvm-symbolizer names padding "??",
 * binutils after the symbol before it). */
static size_t pick_addresses(const char *bin, const char *prefix, uint64_t *out, size_t max,
			     bool inside)
{
	struct func fn[256];
	size_t nf = functions(bin, prefix, fn, 256), n = 0;

	if (!nf) {
		fprintf(stderr, "nm found no function *%s* in %s\n", prefix, bin);
		exit(1);
	}
	for (size_t i = 0; i < nf && n + 4 <= max / 2; i++) {
		out[n++] = fn[i].lo;
		out[n++] = fn[i].lo + 1;
		out[n++] = fn[i].lo + fn[i].size - 1;
		if (!inside)
			out[n++] = fn[i].lo + fn[i].size;
	}
	if (!inside) {
		unsigned long long data;
		char line[512];
		FILE *p = t_popen("nm '%s' | awk '$3 == \"table_data\" {print $1}'", bin);

		out[n++] = 0;
		if (fgets(line, sizeof(line), p) && sscanf(line, "%llx", &data) == 1)
			out[n++] = data + 8;
		pclose(p);
	}
	while (n < max) {
		const struct func *f = &fn[rnd() % nf];

		out[n++] = f->lo + rnd() % f->size;
	}
	return n;
}

static uint64_t file_size(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0) {
		perror(path);
		exit(2);
	}
	return (uint64_t)st.st_size;
}

static void build_fixtures(void)
{
	char *hdr = t_path("helpers.h"), *flags;

	t_write_file(hdr, helpers_h);
	free(hdr);
	for (int b = 0; b < NBINS; b++) {
		struct bin *bn = &bins[b];
		char *src = program_source(b);

		bn->path = t_path("prog%d", b);
		if (asprintf(&flags, "%s -Wl,--build-id", bn->flags) < 0)
			exit(2);
		t_compile(bn->cc, flags, src, bn->path);
		free(flags);
		free(src);
		bn->file_size = file_size(bn->path);
		bn->naddrs = pick_addresses(bn->path, bn->prefix, bn->addrs, NADDRS, bn->llvm);
		if (bn->llvm) {
			if (t_sh("command -v llvm-symbolizer >/dev/null") != 0) {
				fprintf(stderr, "SKIP: llvm-symbolizer is not installed\n");
				exit(77);
			}
			llvm_symbolizer(bn->path, bn->addrs, bn->naddrs, bn->want_inl);
			continue;
		}
		addr2line(bn->path, "-f -i", bn->addrs, bn->naddrs, bn->want_inl);
		addr2line(bn->path, "-f", bn->addrs, bn->naddrs, bn->want_one);
	}
}

/* ---------------------------------------------------------- contexts */

/* Nothing from this machine: an empty debug dir, no perf cache, no
 * debuginfod; what is found is what a test put there.  miss_ttl_s as the
 * header has it (0: the default, < 0: misses not remembered). */
static struct ds_context *new_context_ttl(const char *const *debug_dirs, int miss_ttl_s)
{
	char *cache = t_path("dcache");
	DS_OPTS(ds_context_opts, o, .debug_dirs = debug_dirs, .perf_buildid_dir = "", .urls = "",
		.cache_path = cache, .miss_ttl_s = miss_ttl_s,
		/* What builds: saved indexes are test_symfile's. */
		.symindex = -1);
	struct ds_context *ctx = ds_context_new(&o);

	free(cache);
	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	return ctx;
}

static struct ds_context *new_context(const char *const *debug_dirs)
{
	return new_context_ttl(debug_dirs, 0);
}

static struct ds_dso *dso_for(struct ds_store *s, const char *path)
{
	struct ds_dso *d = ds_store_findnew(s, path, NULL);

	if (!d) {
		perror(path);
		exit(1);
	}
	return d;
}

/* The style of bn's oracle: addr2line's (a pc past a function's .size is
 * still that function's), or llvm-symbolizer's, the library's default. */
static unsigned oracle_flags(const struct bin *bn)
{
	return bn->llvm ? 0 : DS_SYM_BINUTILS;
}

/* Every address of bn through dso, with inlines, against want (addr2line
 * on the binary with debug info).  Returns the mismatches. */
static int check_all(const char *what, struct ds_dso *dso, const struct bin *bn)
{
	int bad = 0, reports = 0;

	for (size_t i = 0; i < bn->naddrs; i++) {
		struct ds_sym_result r;
		int ret = ds_dso_symbolize(dso, bn->addrs[i], DS_SYM_INLINES | oracle_flags(bn), &r);

		if (ret != 0) {
			if (reports++ < MAX_REPORTS)
				fprintf(stderr, "%s 0x%" PRIx64 ": %s\n", what, bn->addrs[i],
					ds_strerror(ret));
			bad++;
			continue;
		}
		CHECK_EQ_INT(r.addr, bn->addrs[i]);
		if (!same_as_fmt(what, bn->addrs[i], &r, bn->want_inl[i], &reports, bn->llvm))
			bad++;
		ds_sym_result_release(&r);
	}
	return bad;
}

/* ------------------------------------------------------------- tests */

/* The three programs, each the DSO for its own (unstripped) path. */
static void test_against_addr2line(void)
{
	struct ds_context *ctx = new_context(empty_dirs);
	struct ds_store *s = t_store_new(ctx, 0);

	for (int b = 0; b < NBINS; b++) {
		const struct bin *bn = &bins[b];
		struct ds_dso *d = dso_for(s, bn->path);
		int bad = check_all(bn->name, d, bn), reports = 0, multi = 0;

		CHECK_EQ_INT(bad, 0);
		/* Without DS_SYM_INLINES: one frame, the innermost, as
		 * addr2line -f (no -i) gives it.  (llvm-symbolizer
		 * --no-inlines names the outermost function instead.) */
		bad = 0;
		for (size_t i = 0; i < bn->naddrs; i++) {
			struct ds_sym_result r, ri;

			CHECK_EQ_INT(ds_dso_symbolize(d, bn->addrs[i], oracle_flags(bn), &r), 0);
			CHECK(r.nframes <= 1);
			if (!bn->llvm &&
			    !same_as("no inlines", bn->addrs[i], &r, bn->want_one[i], &reports))
				bad++;
			CHECK_EQ_INT(ds_dso_symbolize(d, bn->addrs[i], DS_SYM_INLINES | oracle_flags(bn),
						      &ri),
				     0);
			if (r.nframes && ri.nframes) {
				/* The one frame is the chain's innermost. */
				CHECK(!strcmp(r.frames[0].function ?: "",
					      ri.frames[0].function ?: ""));
				CHECK(!strcmp(r.frames[0].file ?: "", ri.frames[0].file ?: ""));
				CHECK_EQ_INT(r.frames[0].line, ri.frames[0].line);
			}
			CHECK_EQ_INT(r.nframes, ri.nframes ? 1 : 0);
			if (ri.nframes > 1) {
				multi++;
				CHECK(ri.frames[0].inlined);
				CHECK(!ri.frames[ri.nframes - 1].inlined);
			}
			ds_sym_result_release(&r);
			ds_sym_result_release(&ri);
		}
		CHECK_EQ_INT(bad, 0);
		/* The fixture must exercise inline chains at all. */
		CHECK(multi >= 20);
		ds_dso_put(d);
	}
	ds_store_free(s);
	ds_context_free(ctx);
}

/* An answer seen as a result, for t_format_a2l(). */
static struct ds_sym_result view(const struct ds_sym_answer *a)
{
	return (struct ds_sym_result){ .addr = a->addr,
				       .nframes = a->nframes,
				       .frames = (struct ds_frame *)a->frames,
				       .from_symtab = a->from_symtab };
}

/* The status of an answer that ds_dso_symbolize() gave as ret, nframes. */
static enum ds_sym_status status_for(int ret, size_t nframes)
{
	if (ret == -ERANGE)
		return DS_SYM_OUTSIDE;
	if (ret == -ENOENT || ret == -ENODATA)
		return DS_SYM_NO_SYMBOLS;
	if (ret)
		return DS_SYM_ERROR;
	return nframes ? DS_SYM_FOUND : DS_SYM_NOT_FOUND;
}

/* Printable ASCII but '"' and '\\' only (a terminal and a JSON string
 * take it as it is): what ds_frame's *_plain say, from the bytes. */
static bool t_plain(const char *s)
{
	for (; s && *s; s++)
		if (*s < 0x20 || *s >= 0x7f || *s == '"' || *s == '\\')
			return false;
	return true;
}

/* Reads the DS_SYM_STRING_SLACK bytes after s's NUL (len: strlen(s)). */
static volatile unsigned slack_sum;
static unsigned slack_of(const char *s, size_t len)
{
	unsigned sum = 0;

	for (size_t k = 0; k < DS_SYM_STRING_SLACK; k++)
		sum += (unsigned char)s[len + 1 + k];
	return sum;
}

/* Each answer of a batch over addrs[0..n) is what ds_dso_symbolize()
 * gives for its address: error, address, frames (their lengths and
 * plain flags from the bytes, and the slack after each string).  Returns
 * the found ones. */
static int check_batch_answers(const char *what, struct ds_dso *d, const struct ds_sym_batch *b,
			       const uint64_t *addrs, size_t n, unsigned flags)
{
	const struct ds_sym_answer *ans;
	size_t na;
	int found = 0, reports = 0;

	ans = ds_sym_batch_answers(b, &na);
	CHECK_EQ_INT(na, n);
	for (size_t i = 0; i < n && i < na; i++) {
		const struct ds_sym_answer *a = &ans[i];
		struct ds_sym_result one, v = view(a);
		int ret = ds_dso_symbolize(d, addrs[i], flags, &one);
		char *x = t_format_a2l(&v), *y = t_format_a2l(&one);

		CHECK_EQ_INT(a->error, ret);
		CHECK_EQ_INT(a->addr, one.addr);
		CHECK_EQ_INT(a->status, status_for(ret, one.nframes));
		CHECK_EQ_INT(a->from_symtab, one.from_symtab);
		CHECK(!a->nframes == !a->frames);
		for (size_t k = 0; k < a->nframes; k++) {
			const struct ds_frame *f = &a->frames[k];

			CHECK_EQ_INT(f->function_plain, f->function && t_plain(f->function));
			CHECK_EQ_INT(f->file_plain, f->file && t_plain(f->file));
			CHECK_EQ_INT(f->function_len, f->function ? strlen(f->function) : 0);
			CHECK_EQ_INT(f->file_len, f->file ? strlen(f->file) : 0);
			/* DS_SYM_STRING_SLACK readable bytes past each NUL
			 * (what reads them, under ASan, fails if not). */
			if (f->function)
				slack_sum += slack_of(f->function, f->function_len);
			if (f->file)
				slack_sum += slack_of(f->file, f->file_len);
		}
		if (strcmp(x, y) && reports++ < MAX_REPORTS) {
			fprintf(stderr, "%s: batch 0x%" PRIx64 ":\n%s--- single:\n%s", what, addrs[i],
				x, y);
			t_failures++;
		}
		found += a->status == DS_SYM_FOUND;
		free(x);
		free(y);
		ds_sym_result_release(&one);
	}
	return found;
}

/* The batch form gives, address for address, what single calls give:
 * in input order however the addresses come (sorted, reversed, repeated,
 * unknown ones among them), one batch reused across calls and flags; a
 * repeated address is looked up once (its answers share frames). */
static void test_batch(void)
{
	struct ds_context *ctx = new_context(empty_dirs);
	struct ds_store *s = t_store_new(ctx, 0);
	const struct bin *bn = &bins[BIN_A];
	struct ds_dso *d = dso_for(s, bn->path);
	struct ds_sym_batch *b = ds_sym_batch_new();
	static const unsigned flag_sets[] = {DS_SYM_INLINES, 0, DS_SYM_INLINES | DS_SYM_DEMANGLE,
					     DS_SYM_INLINES | DS_SYM_BINUTILS,
					     DS_SYM_ELF_NAMES | DS_SYM_NO_LINES};
	uint64_t mixed[3 * NADDRS + 4], sorted[NADDRS];
	const struct ds_sym_answer *ans;
	size_t n = 0, na;
	int ret;

	CHECK(b != NULL);
	/* Sorted input: the sort is skipped. */
	memcpy(sorted, bn->addrs, bn->naddrs * sizeof(*sorted));
	for (size_t i = 1; i < bn->naddrs; i++)
		for (size_t j = i; j && sorted[j - 1] > sorted[j]; j--) {
			uint64_t t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	/* Reversed, each address twice in a row and once more at the end,
	 * and addresses nothing is known about. */
	mixed[n++] = 0;
	for (size_t i = bn->naddrs; i-- > 0;) {
		mixed[n++] = bn->addrs[i];
		mixed[n++] = bn->addrs[i];
	}
	mixed[n++] = UINT64_MAX;
	for (size_t i = 0; i < bn->naddrs; i++)
		mixed[n++] = bn->addrs[i];
	mixed[n++] = 1;
	for (int round = 0; round < 2; round++) {
		for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++) {
			unsigned fl = flag_sets[f];
			int found;

			ret = ds_dso_symbolize_batch(d, bn->addrs, bn->naddrs, fl, b);
			CHECK_EQ_INT(ret, check_batch_answers("input order", d, b, bn->addrs,
							      bn->naddrs, fl));
			CHECK(ret > 0);
			ret = ds_dso_symbolize_batch(d, sorted, bn->naddrs, fl, b);
			CHECK_EQ_INT(ret,
				     check_batch_answers("sorted", d, b, sorted, bn->naddrs, fl));
			ret = ds_dso_symbolize_batch(d, mixed, n, fl, b);
			found = check_batch_answers("mixed", d, b, mixed, n, fl);
			CHECK_EQ_INT(ret, found);
			ans = ds_sym_batch_answers(b, &na);
			CHECK_EQ_INT(na, n);
			CHECK_EQ_INT(ans[0].status, DS_SYM_NOT_FOUND);
			CHECK_EQ_INT(ans[0].nframes, 0);
			CHECK_EQ_INT(ans[2 * bn->naddrs + 1].status, DS_SYM_NOT_FOUND);
			CHECK_EQ_INT(ans[n - 1].status, DS_SYM_NOT_FOUND);
			/* Repeats share the frames of one lookup. */
			for (size_t i = 0; i < bn->naddrs; i++) {
				CHECK(ans[1 + 2 * i].frames == ans[2 + 2 * i].frames);
				CHECK(ans[2 + 2 * bn->naddrs + (bn->naddrs - 1 - i)].frames ==
				      ans[1 + 2 * i].frames);
			}
		}
	}
	/* A batch of 0, and the answers of a call that had none. */
	CHECK_EQ_INT(ds_dso_symbolize_batch(d, NULL, 0, DS_SYM_INLINES, b), 0);
	CHECK(ds_sym_batch_answers(b, &na) == NULL);
	CHECK_EQ_INT(na, 0);
	CHECK_EQ_INT(ds_dso_symbolize_batch(d, bn->addrs, 1, 0, NULL), -EINVAL);
	CHECK_EQ_INT(ds_dso_symbolize_batch(NULL, bn->addrs, 1, 0, b), -EINVAL);
	CHECK_EQ_INT(ds_dso_symbolize_batch(d, NULL, 1, 0, b), -EINVAL);
	ds_sym_batch_answers(b, &na);
	CHECK_EQ_INT(na, 0);
	CHECK(ds_sym_batch_answers(NULL, &na) == NULL && na == 0);
	ds_sym_batch_free(NULL);
	/* Answers outlive the DSO and its store. */
	CHECK(ds_dso_symbolize_batch(d, bn->addrs, bn->naddrs, DS_SYM_INLINES, b) > 0);
	{
		char *want[NADDRS];

		for (size_t i = 0; i < bn->naddrs; i++) {
			struct ds_sym_result v = view(&ds_sym_batch_answers(b, &na)[i]);

			want[i] = t_format_a2l(&v);
		}
		ds_dso_put(d);
		ds_store_free(s);
		ans = ds_sym_batch_answers(b, &na);
		for (size_t i = 0; i < bn->naddrs; i++) {
			struct ds_sym_result v = view(&ans[i]);
			char *got = t_format_a2l(&v);

			CHECK(!strcmp(got, want[i]));
			free(got);
			free(want[i]);
		}
	}
	ds_sym_batch_free(b);
	ds_context_free(ctx);
}

/* Every byte of the binary's code that the test addresses span, twice,
 * shuffled (a fixed seed), with addresses past both ends: a batch sorts
 * them (by its top bits; the outliers put nearly all in one run) and
 * shares one lookup's frames with the neighbours that the same rows and
 * scopes answer.  Each answer must be what that address alone gets. */
static void test_batch_dense(void)
{
	struct ds_context *ctx = new_context(empty_dirs);
	struct ds_store *s = t_store_new(ctx, 0);
	const struct bin *bn = &bins[BIN_A];
	struct ds_dso *d = dso_for(s, bn->path);
	struct ds_sym_batch *b = ds_sym_batch_new();
	static const unsigned flag_sets[] = {DS_SYM_INLINES, DS_SYM_INLINES | DS_SYM_BINUTILS, 0};
	uint64_t lo = UINT64_MAX, hi = 0, seed = 0x9e3779b97f4a7c15ull, *addrs;
	size_t n = 0, span;

	for (size_t i = 0; i < bn->naddrs; i++) {
		lo = bn->addrs[i] < lo ? bn->addrs[i] : lo;
		hi = bn->addrs[i] > hi ? bn->addrs[i] : hi;
	}
	span = hi - lo + 1 < 16384 ? (size_t)(hi - lo + 1) : 16384;
	addrs = calloc(2 * span + 2, sizeof(*addrs));
	CHECK(b != NULL && addrs != NULL);
	for (int twice = 0; twice < 2; twice++)
		for (size_t i = 0; i < span; i++)
			addrs[n++] = lo + i;
	for (int with_outliers = 0; with_outliers < 2 && addrs; with_outliers++) {
		size_t m = n;

		if (with_outliers) {
			addrs[m++] = 1;
			addrs[m++] = UINT64_MAX - 1;
		}
		for (size_t i = m - 1; i > 0; i--) { /* Fisher-Yates, xorshift */
			size_t j;
			uint64_t t;

			seed ^= seed << 13;
			seed ^= seed >> 7;
			seed ^= seed << 17;
			j = (size_t)(seed % (i + 1));
			t = addrs[i];
			addrs[i] = addrs[j];
			addrs[j] = t;
		}
		for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++) {
			int ret = ds_dso_symbolize_batch(d, addrs, m, flag_sets[f], b);

			CHECK(ret > 0);
			CHECK_EQ_INT(ret, check_batch_answers("dense", d, b, addrs, m, flag_sets[f]));
		}
	}
	free(addrs);
	ds_sym_batch_free(b);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* A DSO without any symbols: every answer of a batch says so.  (strip
 * keeps .dynsym, and with the relocations it names the PLT stubs: those
 * go too.) */
static void test_batch_no_symbols(void)
{
	const struct bin *bn = &bins[BIN_A];
	char *bin = t_path("nosyms.bin");
	struct ds_context *ctx = new_context(empty_dirs);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_sym_batch *b = ds_sym_batch_new();
	const struct ds_sym_answer *ans;
	struct ds_dso *d;
	size_t na;

	CHECK_EQ_INT(t_sh("strip -R .rela.plt -R .rela.dyn -o '%s' '%s'", bin, bn->path), 0);
	d = dso_for(s, bin);
	CHECK_EQ_INT(ds_dso_symbolize_batch(d, bn->addrs, 3, DS_SYM_INLINES, b), -ENOENT);
	ans = ds_sym_batch_answers(b, &na);
	CHECK_EQ_INT(na, 3);
	for (size_t i = 0; i < na; i++) {
		CHECK_EQ_INT(ans[i].status, DS_SYM_NO_SYMBOLS);
		CHECK_EQ_INT(ans[i].error, -ENOENT);
		CHECK_EQ_INT(ans[i].addr, bn->addrs[i]);
		CHECK_EQ_INT(ans[i].nframes, 0);
	}
	CHECK_EQ_INT(check_batch_answers("no symbols", d, b, bn->addrs, 3, DS_SYM_INLINES), 0);
	ds_dso_put(d);
	ds_store_free(s);
	ds_sym_batch_free(b);
	ds_context_free(ctx);
	free(bin);
}

/* C++: mangled names as addr2line prints them, demangled as -C does. */
static void test_cxx(void)
{
	char *bin = t_path("cxxprog"), *src = t_path("cxx.cc");
	char *want_raw[NADDRS], *want_dm[NADDRS];
	uint64_t addrs[NADDRS] = {0};
	struct func fn[32];
	size_t nf, n = 0;
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_dso *d;
	int reports = 0, bad = 0, demangled = 0;

	if (t_sh("command -v g++ >/dev/null") != 0) {
		fprintf(stderr, "SKIP C++ part: no g++\n");
		return;
	}
	t_write_file(src, cxx_source);
	if (t_sh("g++ -g -O2 -o '%s' '%s'", bin, src) != 0) {
		fprintf(stderr, "g++ failed\n");
		exit(1);
	}
	nf = functions(bin, "3geo", fn, 32);
	CHECK(nf >= 4);
	for (size_t i = 0; i < nf && n + 3 <= NADDRS; i++) {
		addrs[n++] = fn[i].lo;
		addrs[n++] = fn[i].lo + fn[i].size / 2;
		addrs[n++] = fn[i].lo + fn[i].size - 1;
	}
	addr2line(bin, "-f -i", addrs, n, want_raw);
	addr2line(bin, "-f -i -C", addrs, n, want_dm);

	ctx = new_context(empty_dirs);
	s = t_store_new(ctx, 0);
	d = dso_for(s, bin);
	for (size_t i = 0; i < n; i++) {
		struct ds_sym_result r;

		CHECK_EQ_INT(ds_dso_symbolize(d, addrs[i], DS_SYM_INLINES, &r), 0);
		if (!same_as("C++ mangled", addrs[i], &r, want_raw[i], &reports))
			bad++;
		ds_sym_result_release(&r);
		CHECK_EQ_INT(ds_dso_symbolize(d, addrs[i], DS_SYM_INLINES | DS_SYM_DEMANGLE, &r),
			     0);
		if (!same_as("C++ demangled", addrs[i], &r, want_dm[i], &reports))
			bad++;
		demangled +=
		    r.nframes && r.frames[0].function && strstr(r.frames[0].function, "geo::");
		ds_sym_result_release(&r);
		free(want_raw[i]);
		free(want_dm[i]);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(demangled >= (int)n / 2);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	free(bin);
	free(src);
}

struct segment {
	uint64_t offset, vaddr, filesz;
};

static size_t load_segments(const char *path, struct segment *out, size_t max)
{
	FILE *p = t_popen("readelf -lW '%s'", path);
	char line[512];
	unsigned long long off, va, pa, fsz, msz;
	size_t n = 0;

	while (fgets(line, sizeof(line), p) && n < max)
		if (sscanf(line, " LOAD %llx %llx %llx %llx %llx", &off, &va, &pa, &fsz, &msz) == 5)
			out[n++] = (struct segment){off, va, fsz};
	pclose(p);
	return n;
}

/* Split bin: a stripped copy at stripped, its --only-keep-debug file at
 * <dir>/.build-id/xx/rest.debug (found by build ID only: no debuglink).
 * Returns that path, malloc()ed. */
static char *split(const char *bin, const char *stripped, const char *dir)
{
	const char *hex = t_readelf_build_id(bin);
	char *dest;

	CHECK(strlen(hex) == 40);
	if (asprintf(&dest, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2) < 0)
		exit(2);
	CHECK_EQ_INT(t_sh("mkdir -p \"$(dirname '%s')\" && objcopy --only-keep-debug '%s' '%s' && "
			  "strip -o '%s' '%s'",
			  dest, bin, dest, stripped, bin),
		     0);
	/* Really stripped: no DWARF and no symbol table left. */
	CHECK(t_sh("readelf -SW '%s' | grep -qE '\\.(debug_info|symtab) '", stripped) != 0);
	return dest;
}

/* Each address of the library that a PT_LOAD maps, as a file offset:
 * the same frames as the vaddr, and those addr2line's.  Returns the
 * mismatches (a few are printed). */
static int check_offsets(const char *what, struct ds_dso *d, const struct segment *seg, size_t nseg,
			 const uint64_t *addrs, char *const *want, size_t n)
{
	size_t checked = 0;
	int reports = 0, bad = 0;

	for (size_t i = 0; i < n; i++) {
		const struct segment *sg = NULL;
		struct ds_sym_result v, r;
		uint64_t off;
		int ret;
		char *a, *b;

		for (size_t k = 0; k < nseg; k++)
			if (addrs[i] >= seg[k].vaddr && addrs[i] - seg[k].vaddr < seg[k].filesz)
				sg = &seg[k];
		if (!sg)
			continue;		/* 0, or past the text: no file offset */
		CHECK(sg->vaddr != sg->offset); /* or the test proves nothing */
		checked++;
		off = addrs[i] - sg->vaddr + sg->offset;
		CHECK_EQ_INT(ds_dso_symbolize(d, addrs[i], DS_SYM_INLINES | DS_SYM_BINUTILS, &v), 0);
		if (!same_as(what, addrs[i], &v, want[i], &reports))
			bad++;
		ret = ds_dso_symbolize(d, off, DS_SYM_INLINES | DS_SYM_BINUTILS | DS_SYM_FILE_OFFSET, &r);
		a = t_format_a2l(&r);
		b = t_format_a2l(&v);
		/* The result speaks of the virtual address. */
		if (ret || r.addr != addrs[i] || strcmp(a, b)) {
			if (reports++ < MAX_REPORTS)
				fprintf(stderr,
					"%s: offset 0x%" PRIx64 ": %s, addr 0x%" PRIx64 "\n%s"
					"--- vaddr 0x%" PRIx64 ":\n%s",
					what, off, ds_strerror(ret), r.addr, a, addrs[i], b);
			bad++;
		}
		free(a);
		free(b);
		ds_sym_result_release(&r);
		ds_sym_result_release(&v);
	}
	CHECK(checked >= n / 2);
	return bad;
}

/* A batch of file offsets, unsorted and repeated, two of them (bad1,
 * bad2) outside every segment: each answer as a single call's, the bad
 * ones DS_SYM_OUTSIDE with their offset as address, the others with
 * their virtual address. */
static void check_offset_batch(struct ds_dso *d, const struct segment *seg, size_t nseg,
			       const uint64_t *addrs, size_t n, uint64_t bad1, uint64_t bad2)
{
	struct ds_sym_batch *b = ds_sym_batch_new();
	const struct ds_sym_answer *ans;
	uint64_t offs[2 * NADDRS + 2], vaddr[2 * NADDRS + 2];
	size_t m = 0, na;
	int found;

	offs[m++] = bad1;
	for (size_t i = n; i-- > 0;)
		for (size_t k = 0; k < nseg; k++)
			if (addrs[i] >= seg[k].vaddr && addrs[i] - seg[k].vaddr < seg[k].filesz) {
				vaddr[m] = addrs[i];
				offs[m++] = addrs[i] - seg[k].vaddr + seg[k].offset;
				vaddr[m] = addrs[i];
				offs[m++] = addrs[i] - seg[k].vaddr + seg[k].offset;
				break;
			}
	offs[m++] = bad2;
	found = ds_dso_symbolize_batch(d, offs, m,
				       DS_SYM_INLINES | DS_SYM_BINUTILS | DS_SYM_FILE_OFFSET, b);
	CHECK_EQ_INT(found, check_batch_answers("file offsets", d, b, offs, m,
						DS_SYM_INLINES | DS_SYM_BINUTILS | DS_SYM_FILE_OFFSET));
	CHECK(found >= (int)(m - 2) / 2);
	ans = ds_sym_batch_answers(b, &na);
	CHECK_EQ_INT(na, m);
	CHECK(ans[0].status == DS_SYM_OUTSIDE && ans[0].error == -ERANGE && ans[0].addr == bad1);
	CHECK(ans[m - 1].status == DS_SYM_OUTSIDE && ans[m - 1].addr == bad2);
	for (size_t i = 1; i + 1 < m; i++)
		CHECK_EQ_INT(ans[i].addr, vaddr[i]);
	ds_sym_batch_free(b);
}

/* A shared library whose segments sit at 0x200000 + their file offset:
 * a file offset names the same code as its vaddr, and an offset no
 * PT_LOAD covers is -ERANGE.  The same for the library stripped, with its
 * debuginfo found by build ID: file offsets are the binary's, whatever
 * the debuginfo's program headers say (in an --only-keep-debug file the
 * text segment has p_filesz 0). */
static void test_file_offset(void)
{
	char *lib = t_path("libsym.so"), *flags, *stripped = t_path("libsym.stripped.so");
	char *dir = t_path("libdebug"), *dest;
	const char *dirs[2] = {dir, NULL};
	struct segment seg[8];
	uint64_t addrs[NADDRS];
	char *want[NADDRS];
	size_t nseg, n;
	unsigned long long dbg_off = 0;
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_dso *d;
	struct ds_sym_result r;
	FILE *p;
	char line[512];

	if (asprintf(&flags, "-g -O2 -shared -fPIC -I'%s' -Wl,-Ttext-segment=0x200000",
		     t_tmpdir()) < 0)
		exit(2);
	t_compile("gcc", flags, lib_source, lib);
	free(flags);
	nseg = load_segments(lib, seg, 8);
	CHECK(nseg >= 2);
	n = pick_addresses(lib, "lib_", addrs, 60, false);
	addr2line(lib, "-f -i", addrs, n, want);

	ctx = new_context(dirs);
	s = t_store_new(ctx, 0);
	d = dso_for(s, lib);
	CHECK_EQ_INT(check_offsets("shared library", d, seg, nseg, addrs, want, n), 0);

	/* Offsets no PT_LOAD holds: .debug_info's, and past the file. */
	p = t_popen("readelf -SW '%s' | sed -n 's/.*\\] \\.debug_info *[A-Z]* *[0-9a-f]* //p'", lib);
	if (fgets(line, sizeof(line), p))
		sscanf(line, "%llx", &dbg_off);
	pclose(p);
	CHECK(dbg_off != 0);
	for (size_t k = 0; k < nseg; k++)
		CHECK(dbg_off < seg[k].offset || dbg_off - seg[k].offset >= seg[k].filesz);
	CHECK_EQ_INT(ds_dso_symbolize(d, dbg_off, DS_SYM_FILE_OFFSET, &r), -ERANGE);
	CHECK_EQ_INT(r.nframes, 0);
	ds_sym_result_release(&r);
	CHECK_EQ_INT(ds_dso_symbolize(d, file_size(lib) + 0x100000, DS_SYM_FILE_OFFSET, &r),
		     -ERANGE);
	ds_sym_result_release(&r);
	check_offset_batch(d, seg, nseg, addrs, n, dbg_off, file_size(lib) + 0x100000);
	ds_dso_put(d);
	ds_store_free(s);

	/* The segments must come from the binary when there is one: the
	 * debuginfo's PT_LOADs gave -ERANGE for every offset in the text. */
	dest = split(lib, stripped, dir);
	s = t_store_new(ctx, 0);
	d = dso_for(s, stripped);
	CHECK_EQ_INT(check_offsets("stripped shared library", d, seg, nseg, addrs, want, n), 0);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	for (size_t i = 0; i < n; i++)
		free(want[i]);
	free(lib);
	free(stripped);
	free(dir);
	free(dest);
}

/* A stripped binary, its debuginfo only at <debugdir>/.build-id/xx/rest.debug:
 * the pair answers as addr2line does on the unstripped binary. */
static void test_split_debuginfo(void)
{
	const struct bin *bn = &bins[BIN_A];
	char *dir = t_path("splitdebug"), *stripped = t_path("prog0.stripped");
	const char *dirs[2] = {dir, NULL};
	char *dest = split(bn->path, stripped, dir);
	const struct ds_debuginfo *di;
	struct ds_context *ctx = new_context(dirs);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = dso_for(s, stripped);

	CHECK_EQ_INT(check_all("split debuginfo", d, bn), 0);
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), 0);
	CHECK_EQ_INT(ds_debuginfo_source(di), DS_SOURCE_BUILD_ID_DIR);
	CHECK(!strcmp(ds_debuginfo_path(di), dest));
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	free(dir);
	free(stripped);
	free(dest);
}

/* Debuginfo that turns up after the first call (installed, fetched by a
 * later prefetch, a miss whose TTL ran out): the next call searches again
 * (misses are not remembered here) and must answer from it, whether the
 * first call had nothing at all (-ENOENT: no symbols anywhere) or only
 * the binary's .symtab (names without file:line).  (The first index
 * used to stay, failed or symbols-only, forever.) */
static void test_late_debuginfo(void)
{
	const struct bin *bn = &bins[BIN_A];
	/* No symbols at all; its PLT stubs only (strip keeps .dynsym and the
	 * relocations that name them); its .symtab. */
	static const char *const how[] = {"strip -R .rela.plt -R .rela.dyn", "strip",
					  "strip --strip-debug"};

	for (int k = 0; k < 3; k++) {
		char *dir = t_path("late%d", k), *bin = t_path("late%d.bin", k), *dest;
		char *held = t_path("late%d.debug", k);
		const char *dirs[2] = {dir, NULL};
		struct ds_context *ctx;
		struct ds_store *s;
		struct ds_dso *d;
		struct ds_sym_result r;
		int ret;

		dest = split(bn->path, bin, dir);
		/* Out of reach first; the binary as how[k] leaves it. */
		CHECK_EQ_INT(
		    t_sh("mv '%s' '%s' && %s -o '%s' '%s'", dest, held, how[k], bin, bn->path), 0);
		ctx = new_context_ttl(dirs, -1); /* the next call looks again */
		s = t_store_new(ctx, 0);
		d = dso_for(s, bin);
		ret = ds_dso_symbolize(d, bn->addrs[0], DS_SYM_INLINES, &r);
		if (k == 0)
			CHECK_EQ_INT(ret, -ENOENT);
		else if (k == 1) /* an index of the stubs, none of them there */
			CHECK(ret == 0 && r.nframes == 0);
		else
			CHECK(ret == 0 && r.nframes == 1 && r.from_symtab);
		ds_sym_result_release(&r);
		CHECK_EQ_INT(t_sh("mv '%s' '%s'", held, dest), 0);
		CHECK_EQ_INT(check_all(k == 2   ? "late debuginfo, had .symtab"
				       : k == 1 ? "late debuginfo, had PLT stubs"
						: "late debuginfo",
				       d, bn),
			     0);
		ds_dso_put(d);
		ds_store_free(s);
		ds_context_free(ctx);
		free(dir);
		free(bin);
		free(held);
		free(dest);
	}
}

/* ---------------------------------------------------------- threads */

/* Our own single-threaded answers, to compare the threads' against. */
static char *single[NBINS][NADDRS];

struct job {
	struct ds_store *store;
	pthread_barrier_t *barrier;
	int first; /* the bin whose index this thread races to build */
	int tid;
	size_t stride; /* every stride-th address */
	int bad;       /* no CHECK() here: t_failures is not atomic */
};

static int thread_one(struct job *j, struct ds_dso *d, int b, size_t i)
{
	struct ds_sym_result r;
	int bad = 0;
	char *got;

	if (ds_dso_symbolize(d, bins[b].addrs[i], DS_SYM_INLINES, &r) != 0)
		return 1;
	got = t_format_a2l(&r);
	if (strcmp(got, single[b][i])) {
		if (j->bad < MAX_REPORTS)
			fprintf(stderr, "thread %d, %s 0x%" PRIx64 ":\n%s--- single-threaded\n%s",
				j->tid, bins[b].name, bins[b].addrs[i], got, single[b][i]);
		bad = 1;
	}
	free(got);
	ds_sym_result_release(&r);
	return bad;
}

static void *thread_main(void *arg)
{
	struct job *j = arg;
	struct ds_dso *d;

	pthread_barrier_wait(j->barrier);
	/* First call: races the other threads' findnew and index build. */
	d = ds_store_findnew(j->store, bins[j->first].path, NULL);
	if (!d) {
		j->bad++;
		return NULL;
	}
	j->bad += thread_one(j, d, j->first, (size_t)j->tid);
	ds_dso_put(d);
	for (int k = 0; k < NBINS; k++) {
		int b = (j->first + k) % NBINS;

		d = ds_store_findnew(j->store, bins[b].path, NULL);
		if (!d) {
			j->bad++;
			continue;
		}
		/* Each thread walks the list from its own place. */
		for (size_t n = 0; n < bins[b].naddrs; n += j->stride)
			j->bad += thread_one(j, d, b, (n + 37 * (size_t)j->tid) % bins[b].naddrs);
		ds_dso_put(d);
	}
	return NULL;
}

/* Round 0: every thread's first call is on the same DSO; round 1: on
 * different ones.  A fresh store each round, so the first calls race the
 * index builds. */
static void test_threads(void)
{
	struct ds_context *ctx = new_context(empty_dirs);
	struct ds_store *s = t_store_new(ctx, 0);

	for (int b = 0; b < NBINS; b++) {
		struct ds_dso *d = dso_for(s, bins[b].path);

		for (size_t i = 0; i < bins[b].naddrs; i++) {
			struct ds_sym_result r;

			CHECK_EQ_INT(ds_dso_symbolize(d, bins[b].addrs[i], DS_SYM_INLINES, &r), 0);
			single[b][i] = t_format_a2l(&r);
			ds_sym_result_release(&r);
		}
		ds_dso_put(d);
	}
	ds_store_free(s);

	for (int round = 0; round < 3; round++) {
		pthread_barrier_t barrier;
		pthread_t th[NTHREADS];
		struct job jobs[NTHREADS];
		struct ds_store_stats st;
		struct ds_dso *keep[NBINS];

		/* Held across the round: a DSO whose last reference a thread
		 * dropped would be searched again by the next findnew.
		 * Round 2 has a budget of a byte: every debuginfo nobody
		 * pins is closed, so indexes are dropped and rebuilt under
		 * the readers all the time. */
		s = t_store_new(ctx, round == 2 ? 1 : 0);
		for (int b = 0; b < NBINS; b++)
			keep[b] = dso_for(s, bins[b].path);
		pthread_barrier_init(&barrier, NULL, NTHREADS);
		for (int t = 0; t < NTHREADS; t++) {
			jobs[t] = (struct job){.store = s,
					       .barrier = &barrier,
					       .tid = t,
					       .first = round ? t % NBINS : BIN_A,
					       .stride = round == 2 ? 7 : 1};
			CHECK_EQ_INT(pthread_create(&th[t], NULL, thread_main, &jobs[t]), 0);
		}
		for (int t = 0; t < NTHREADS; t++) {
			pthread_join(th[t], NULL);
			CHECK_EQ_INT(jobs[t].bad, 0);
		}
		pthread_barrier_destroy(&barrier);
		/* One search per DSO however many threads asked; evictions
		 * are reopened, not searched again. */
		if (round == 2) {
			/* The threads may have kept each other's debuginfo
			 * pinned throughout; one thread alone evicts and
			 * reopens for sure. */
			struct job me = {.tid = -1};

			for (int pass = 0; pass < 2; pass++)
				for (int b = 0; b < NBINS; b++)
					CHECK_EQ_INT(thread_one(&me, keep[b], b, (size_t)pass), 0);
			ds_store_stats(s, &st);
			CHECK(st.evictions > 0 && st.reopens > 0);
		}
		ds_store_stats(s, &st);
		CHECK_EQ_INT(st.searches, NBINS);
		for (int b = 0; b < NBINS; b++)
			ds_dso_put(keep[b]);
		ds_store_stats(s, &st);
		CHECK_EQ_INT(st.dsos, 0);
		CHECK_EQ_INT(st.bytes_held, 0);
		ds_store_free(s);
	}
	for (int b = 0; b < NBINS; b++)
		for (size_t i = 0; i < bins[b].naddrs; i++)
			free(single[b][i]);
	ds_context_free(ctx);
}

/* ----------------------------------------------------------- memory */

static uint64_t held(struct ds_store *s)
{
	struct ds_store_stats st;

	ds_store_stats(s, &st);
	return st.bytes_held;
}

/* Debuginfo + index of one program, in a store of its own; the index is
 * counted and goes with the last reference. */
static uint64_t footprint(struct ds_context *ctx, const struct bin *bn)
{
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = dso_for(s, bn->path);
	const struct ds_debuginfo *di;
	struct ds_sym_result r;
	uint64_t with_index;

	CHECK_EQ_INT(held(s), 0);
	CHECK_EQ_INT(ds_dso_debuginfo(d, &di), 0);
	CHECK_EQ_INT(held(s), bn->file_size); /* the program is its own debuginfo */
	/* Every address the test asks: the CUs it builds (built lazily,
	 * the index grows with them). */
	for (size_t i = 0; i < bn->naddrs; i++) {
		CHECK_EQ_INT(ds_dso_symbolize(d, bn->addrs[i], DS_SYM_INLINES, &r), 0);
		ds_sym_result_release(&r);
	}
	with_index = held(s);
	CHECK(with_index > bn->file_size);
	ds_dso_put(d);
	CHECK_EQ_INT(held(s), 0);
	ds_store_free(s);
	return with_index;
}

/* Under a budget, first cold CUs go, then whole debuginfos:
 *   - one that holds both programs' debuginfo but one index only: B's
 *     CU pushes A's out (trimmed, nothing evicted), and A answers right
 *     again (its CU built again);
 *   - one that holds one program's debuginfo and index, not two: B
 *     evicts A, and A answers right again after (reopened, rebuilt). */
static void test_budget(void)
{
	struct ds_context *ctx = new_context(empty_dirs);
	const struct bin *A = &bins[BIN_A], *B = &bins[BIN_B];
	uint64_t fa = footprint(ctx, A), fb = footprint(ctx, B), budget, built;
	struct ds_store_stats st;
	struct ds_store *s;
	struct ds_dso *da, *db;

	/* Both files, the larger index, half of the smaller one. */
	budget = A->file_size + B->file_size +
		 (fa - A->file_size > fb - B->file_size ? fa - A->file_size : fb - B->file_size) +
		 (fa - A->file_size < fb - B->file_size ? fa - A->file_size : fb - B->file_size) / 2;
	CHECK(budget < fa + fb);
	s = t_store_new(ctx, budget);
	da = dso_for(s, A->path);
	db = dso_for(s, B->path);
	CHECK_EQ_INT(check_all("budget (trim), A", da, A), 0);
	CHECK_EQ_INT(held(s), fa);
	CHECK_EQ_INT(check_all("budget (trim), B", db, B), 0);
	ds_store_stats(s, &st);
	CHECK(st.trims > 0);
	CHECK_EQ_INT(st.evictions, 0);
	CHECK(st.bytes_held <= budget);
	built = st.units_built;
	CHECK_EQ_INT(check_all("budget (trim), A again", da, A), 0);
	ds_store_stats(s, &st);
	CHECK(st.units_built > built);
	CHECK_EQ_INT(st.evictions, 0);
	CHECK(st.bytes_held <= budget);
	/* A batch keeps the strings it answered from call to call while
	 * their index is unchanged: one batch for A, another for B between
	 * its calls (B's CUs push A's out, A's are built again, maybe where
	 * other strings were), and A's answers stay the single calls'. */
	{
		struct ds_sym_batch *ba = ds_sym_batch_new(), *bb = ds_sym_batch_new();

		for (int round = 0; round < 3; round++) {
			int ret = ds_dso_symbolize_batch(da, A->addrs, A->naddrs, DS_SYM_INLINES,
							 ba);

			CHECK(ret > 0);
			CHECK_EQ_INT(ret, check_batch_answers("budget, A's batch", da, ba, A->addrs,
							      A->naddrs, DS_SYM_INLINES));
			ret = ds_dso_symbolize_batch(db, B->addrs, B->naddrs, DS_SYM_INLINES, bb);
			CHECK(ret > 0);
		}
		ds_store_stats(s, &st);
		CHECK(st.trims > 1);
		ds_sym_batch_free(ba);
		ds_sym_batch_free(bb);
	}
	ds_dso_put(da);
	ds_dso_put(db);
	CHECK_EQ_INT(held(s), 0);
	ds_store_free(s);

	/* One program and its index; not both files. */
	budget = fa > fb ? fa : fb;
	CHECK(budget < A->file_size + B->file_size);
	s = t_store_new(ctx, budget);
	da = dso_for(s, A->path);
	db = dso_for(s, B->path);
	CHECK_EQ_INT(check_all("budget, A", da, A), 0);
	CHECK_EQ_INT(held(s), fa);
	CHECK_EQ_INT(check_all("budget, B", db, B), 0);
	ds_store_stats(s, &st);
	CHECK(st.evictions > 0);
	CHECK(st.bytes_held <= budget);
	CHECK_EQ_INT(check_all("budget, A again", da, A), 0);
	ds_store_stats(s, &st);
	CHECK(st.reopens > 0);
	CHECK(st.bytes_held <= budget);
	ds_dso_put(da);
	ds_dso_put(db);
	CHECK_EQ_INT(held(s), 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* ------------------------------------------------------ names only */

/* The function nm -S says holds each of addrs (a sized text symbol),
 * malloc()ed; NULL where none does. */
static void nm_functions_at(const char *bin, const uint64_t *addrs, size_t n, char **out)
{
	FILE *p = t_popen("nm -S --defined-only '%s'", bin);
	char line[1024], type, name[512];
	unsigned long long lo, size;

	for (size_t i = 0; i < n; i++)
		out[i] = NULL;
	while (fgets(line, sizeof(line), p)) {
		if (sscanf(line, "%llx %llx %c %511s", &lo, &size, &type, name) != 4 ||
		    !strchr("tTwW", type) || !size)
			continue;
		for (size_t i = 0; i < n; i++)
			if (!out[i] && addrs[i] >= lo && addrs[i] - lo < size)
				out[i] = strdup(name);
	}
	pclose(p);
}

/* Where nm puts a symbol (0: it has none). */
static uint64_t nm_address(const char *bin, const char *sym)
{
	FILE *p = t_popen("nm '%s' | awk '$3 == \"%s\" {print $1}'", bin, sym);
	unsigned long long a = 0;
	char line[256];

	if (!fgets(line, sizeof(line), p) || sscanf(line, "%llx", &a) != 1)
		a = 0;
	pclose(p);
	return a;
}

/* What a DS_SYM_NO_LINES answer names: the function, or NULL. */
static const char *only_name(const struct ds_sym_result *r)
{
	return r->nframes ? r->frames[r->nframes - 1].function : NULL;
}

static bool same_name(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* N names-only queries, in perf's and in binutils's naming, read no
 * DWARF (dwarf_builds stays 0) and name each address inside a function
 * as nm does, with no file:line; a full query then reads the DWARF once
 * and answers as addr2line -f -i, and names-only answers stay the same
 * with the full index in place.  Both for a program that is its own
 * debuginfo and for a stripped one whose .symtab and DWARF are in
 * separate debuginfo. */
static void test_names_only(void)
{
	const struct bin *bn = &bins[BIN_A];
	char *dir = t_path("tierdebug"), *stripped = t_path("prog0.tier");
	const char *dirs[2] = {dir, NULL};
	char *dest = split(bn->path, stripped, dir);
	const char *paths[2] = {bn->path, stripped};
	char *want[NADDRS];
	size_t named = 0;

	nm_functions_at(bn->path, bn->addrs, bn->naddrs, want);
	for (size_t i = 0; i < bn->naddrs; i++)
		named += want[i] != NULL;
	CHECK(named > bn->naddrs / 2);
	for (int k = 0; k < 2; k++) {
		struct ds_context *ctx = new_context(k ? dirs : empty_dirs);
		struct ds_store *s = t_store_new(ctx, 0);
		struct ds_dso *d = dso_for(s, paths[k]);
		const char *what = k ? "names only, split" : "names only";
		struct ds_store_stats st;
		uint64_t names_bytes;
		int bad = 0;

		for (int pass = 0; pass < 2; pass++) {
			for (size_t i = 0; i < bn->naddrs; i++) {
				unsigned fl = DS_SYM_NO_LINES | DS_SYM_INLINES |
					      (i % 2 ? DS_SYM_ELF_NAMES : 0);
				struct ds_sym_result r;
				int ret = ds_dso_symbolize(d, bn->addrs[i], fl, &r);

				CHECK_EQ_INT(ret, 0);
				/* No file:line, no inline frames, from ELF. */
				if (r.nframes) {
					CHECK_EQ_INT(r.nframes, 1);
					CHECK(r.frames[0].file == NULL && r.frames[0].line == 0);
					CHECK(r.from_symtab);
				}
				if (want[i] && !same_name(only_name(&r), want[i])) {
					if (bad++ < MAX_REPORTS)
						fprintf(stderr, "%s 0x%" PRIx64 ": %s, nm: %s\n",
							what, bn->addrs[i],
							only_name(&r) ? only_name(&r) : "(none)",
							want[i]);
				}
				ds_sym_result_release(&r);
			}
			st = t_stats(s);
			CHECK_EQ_INT(st.dwarf_builds, 0);
			CHECK_EQ_INT(st.symtab_builds, 1);
		}
		CHECK_EQ_INT(bad, 0);
		names_bytes = held(s);
		CHECK(names_bytes > 0);

		/* The full query reads the DWARF, once, and it shows. */
		CHECK_EQ_INT(check_all(k ? "full after names, split" : "full after names", d, bn),
			     0);
		st = t_stats(s);
		CHECK_EQ_INT(st.dwarf_builds, 1);
		CHECK_EQ_INT(st.symtab_builds, 1);
		CHECK(held(s) > names_bytes);

		/* Names only now, from the full index: the same names, the
		 * same as the full query's outermost perf-named frame. */
		for (size_t i = 0; i < bn->naddrs; i++) {
			struct ds_sym_result r, full;

			CHECK_EQ_INT(ds_dso_symbolize(d, bn->addrs[i],
						      DS_SYM_NO_LINES | DS_SYM_ELF_NAMES, &r),
				     0);
			CHECK_EQ_INT(ds_dso_symbolize(d, bn->addrs[i],
						      DS_SYM_INLINES | DS_SYM_ELF_NAMES, &full),
				     0);
			if (want[i] && (!same_name(only_name(&r), want[i]) ||
					!same_name(only_name(&full), want[i]))) {
				if (bad++ < MAX_REPORTS)
					fprintf(stderr, "%s 0x%" PRIx64 ": %s / full %s, nm: %s\n",
						what, bn->addrs[i],
						only_name(&r) ? only_name(&r) : "(none)",
						only_name(&full) ? only_name(&full) : "(none)",
						want[i]);
			}
			ds_sym_result_release(&r);
			ds_sym_result_release(&full);
		}
		CHECK_EQ_INT(bad, 0);
		st = t_stats(s);
		CHECK_EQ_INT(st.dwarf_builds, 1);
		CHECK_EQ_INT(st.symtab_builds, 1);
		ds_dso_put(d);
		CHECK_EQ_INT(held(s), 0);
		ds_store_free(s);
		ds_context_free(ctx);
	}
	for (size_t i = 0; i < bn->naddrs; i++)
		free(want[i]);
	free(dir);
	free(stripped);
	free(dest);
}

/* An address no ELF symbol holds, where the DWARF knows the function
 * (f_3's symbol removed by objcopy -N): names only gives no frame, as
 * perf report shows such a sample as an address, and still reads no
 * DWARF; the full query names it from the DWARF. */
static void test_names_only_no_symbol(void)
{
	const struct bin *bn = &bins[BIN_A];
	char *bin = t_path("prog0.nof3");
	uint64_t f3 = nm_address(bn->path, "f_3"), at[2];
	char *held_by[2];
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_dso *d;
	struct ds_sym_result r;

	CHECK(f3 != 0);
	CHECK_EQ_INT(t_sh("objcopy -N f_3 '%s' '%s'", bn->path, bin), 0);
	CHECK_EQ_INT(nm_address(bin, "f_3"), 0);
	/* What precedes f_3 ends before it: no symbol holds f_3's code. */
	at[0] = f3;
	at[1] = f3 + 1;
	nm_functions_at(bin, at, 2, held_by);
	CHECK(!held_by[0] && !held_by[1]);
	free(held_by[0]);
	free(held_by[1]);
	ctx = new_context(empty_dirs);
	s = t_store_new(ctx, 0);
	d = dso_for(s, bin);
	CHECK_EQ_INT(ds_dso_symbolize(d, f3 + 1, DS_SYM_NO_LINES | DS_SYM_ELF_NAMES, &r), 0);
	CHECK_EQ_INT(r.nframes, 0);
	ds_sym_result_release(&r);
	CHECK_EQ_INT(t_stats(s).dwarf_builds, 0);
	CHECK_EQ_INT(ds_dso_symbolize(d, f3 + 1, DS_SYM_ELF_NAMES, &r), 0);
	CHECK(same_name(only_name(&r), "f_3"));
	ds_sym_result_release(&r);
	CHECK_EQ_INT(t_stats(s).dwarf_builds, 1);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	free(bin);
}

/* Threads asking names-only and full queries of one DSO at once: each
 * tier is built once, every answer is right (TSan watches the index
 * being replaced under readers); with a budget of a byte, indexes are
 * dropped and rebuilt under them all the time. */
struct tier_job {
	struct ds_dso *d;
	pthread_barrier_t *barrier;
	char **names; /* nm's, per address */
	int tid, bad;
};

static void *tier_thread(void *arg)
{
	struct tier_job *j = arg;
	const struct bin *bn = &bins[BIN_A];

	pthread_barrier_wait(j->barrier);
	for (size_t n = 0; n < bn->naddrs; n++) {
		size_t i = (n + 37 * (size_t)j->tid) % bn->naddrs;
		bool full = n >= bn->naddrs / 2 && (n + (size_t)j->tid) % 2;
		struct ds_sym_result r;

		if (ds_dso_symbolize(j->d, bn->addrs[i],
				     full ? DS_SYM_INLINES | DS_SYM_BINUTILS : DS_SYM_NO_LINES | DS_SYM_ELF_NAMES,
				     &r) != 0) {
			j->bad++;
			continue;
		}
		if (full) {
			char *got = t_format_a2l(&r);

			j->bad += strcmp(got, bn->want_inl[i]) != 0;
			free(got);
		} else if (j->names[i]) {
			j->bad += !same_name(only_name(&r), j->names[i]);
		}
		ds_sym_result_release(&r);
	}
	return NULL;
}

static void test_names_only_threads(void)
{
	const struct bin *bn = &bins[BIN_A];
	struct ds_context *ctx = new_context(empty_dirs);
	char *names[NADDRS];

	nm_functions_at(bn->path, bn->addrs, bn->naddrs, names);
	for (int round = 0; round < 2; round++) {
		struct ds_store *s = t_store_new(ctx, round ? 1 : 0);
		struct ds_dso *d = dso_for(s, bn->path);
		pthread_barrier_t barrier;
		pthread_t th[NTHREADS];
		struct tier_job jobs[NTHREADS];
		struct ds_store_stats st;

		pthread_barrier_init(&barrier, NULL, NTHREADS);
		for (int t = 0; t < NTHREADS; t++) {
			jobs[t] = (struct tier_job){
			    .d = d, .barrier = &barrier, .names = names, .tid = t};
			CHECK_EQ_INT(pthread_create(&th[t], NULL, tier_thread, &jobs[t]), 0);
		}
		for (int t = 0; t < NTHREADS; t++) {
			pthread_join(th[t], NULL);
			CHECK_EQ_INT(jobs[t].bad, 0);
		}
		pthread_barrier_destroy(&barrier);
		st = t_stats(s);
		if (!round) { /* nothing evicted: once each */
			CHECK_EQ_INT(st.symtab_builds, 1);
			CHECK_EQ_INT(st.dwarf_builds, 1);
		} else {
			CHECK(st.dwarf_builds >= 1);
		}
		ds_dso_put(d);
		CHECK_EQ_INT(held(s), 0);
		ds_store_free(s);
	}
	for (size_t i = 0; i < bn->naddrs; i++)
		free(names[i]);
	ds_context_free(ctx);
}

/* ------------------------------------------------------- line parser */

struct line_case {
	const char *text;
	size_t len; /* 0: strlen(text) */
	size_t keylen;
	int kind;
	const char *key;
	uint64_t addr;
};

static const char bid40[] = "0123456789abcdef0123456789abcdef01234567";

static void test_parse_line(void)
{
	/* Key lengths count the NUL: "abcd" needs 5. */
	static const struct line_case cases[] = {
	    {"", 0, 64, DS_SYM_LINE_EMPTY, NULL, 0},
	    {" \t \r\n", 0, 64, DS_SYM_LINE_EMPTY, NULL, 0},
	    {"0x10", 0, 64, DS_SYM_LINE_ADDR, NULL, 0x10},
	    {"10", 0, 64, DS_SYM_LINE_ADDR, NULL, 0x10},
	    {"  0XfFfF\n", 0, 64, DS_SYM_LINE_ADDR, NULL, 0xffff},
	    {"ffffffffffffffff", 0, 64, DS_SYM_LINE_ADDR, NULL, UINT64_MAX},
	    {"0x00000000000000001", 0, 64, -EINVAL, NULL, 0}, /* 17 digits */
	    {"10000000000000000", 0, 64, -EINVAL, NULL, 0},
	    {"0x", 0, 64, -EINVAL, NULL, 0},
	    {"xyz", 0, 64, -EINVAL, NULL, 0},
	    {"0x1g", 0, 64, -EINVAL, NULL, 0},
	    {"-1", 0, 64, -EINVAL, NULL, 0},
	    {"abcd 0x20", 0, 64, DS_SYM_LINE_BUILD_ID, "abcd", 0x20},
	    {"ABCD\t20", 0, 64, DS_SYM_LINE_BUILD_ID, "ABCD", 0x20},
	    {"0123456789abcdef0123456789abcdef01234567 1000", 0, 64, DS_SYM_LINE_BUILD_ID, bid40,
	     0x1000},
	    /* Odd length: not a build ID, so a (relative) path. */
	    {"abc 10", 0, 64, DS_SYM_LINE_PATH, "abc", 0x10},
	    {"/path 0x1", 0, 64, DS_SYM_LINE_PATH, "/path", 1},
	    {"./rel 1", 0, 64, DS_SYM_LINE_PATH, "./rel", 1},
	    {"/usr/lib/x.so\t\t0x7f\r\n", 0, 64, DS_SYM_LINE_PATH, "/usr/lib/x.so", 0x7f},
	    {"/a/b 1 2", 0, 64, -EINVAL, NULL, 0},
	    {"abcd 10 20", 0, 64, -EINVAL, NULL, 0},
	    {"/path zz", 0, 64, -EINVAL, NULL, 0},
	    {"/path 0x10000000000000000", 0, 64, -EINVAL, NULL, 0},
	    {"/path", 0, 64, -EINVAL, NULL, 0},
	    /* The key and its NUL must fit in keylen. */
	    {"abcd 1", 0, 5, DS_SYM_LINE_BUILD_ID, "abcd", 1},
	    {"abcd 1", 0, 4, -EINVAL, NULL, 0},
	    {"/abc 1", 0, 5, DS_SYM_LINE_PATH, "/abc", 1},
	    {"/abcd 1", 0, 5, -EINVAL, NULL, 0},
	    {"/abcd 1", 0, 0, -EINVAL, NULL, 0},
	    /* len rules, not the NUL: a NUL inside the line is an error,
	     * and bytes past len are not read. */
	    {"10\0 20", 6, 64, -EINVAL, NULL, 0},
	    {"/p\0ath 1", 8, 64, -EINVAL, NULL, 0},
	    {"/path 1\0", 8, 64, -EINVAL, NULL, 0},
	    {"/path 12345", 8, 64, DS_SYM_LINE_PATH, "/path", 0x12},
	    {"0x1234", 3, 64, DS_SYM_LINE_ADDR, NULL, 0x1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct line_case *c = &cases[i];
		size_t len = c->len ? c->len : strlen(c->text);
		/* An exact-size copy: a read past len is a sanitizer error. */
		char *line = malloc(len ? len : 1), key[64];
		struct ds_build_id bid = {0};
		uint64_t addr = 0xdead;
		int ret;

		memcpy(line, c->text, len);
		memset(key, 'X', sizeof(key));
		ret = ds_sym_parse_line(line, len, key, c->keylen, &bid, &addr);
		if (ret != c->kind) {
			fprintf(stderr, "parse_line case %zu (\"%s\"): %d, expected %d\n", i,
				c->text, ret, c->kind);
			t_failures++;
		}
		if (ret == c->kind && (ret == DS_SYM_LINE_ADDR || ret == DS_SYM_LINE_PATH ||
				       ret == DS_SYM_LINE_BUILD_ID))
			CHECK_EQ_INT(addr, c->addr);
		if (ret == c->kind && c->key) {
			CHECK(!strcmp(key, c->key));
			CHECK(strlen(c->key) < c->keylen);
		}
		if (ret == DS_SYM_LINE_BUILD_ID && ret == c->kind) {
			char hex[2 * DS_BUILD_ID_MAX + 1];

			CHECK_EQ_INT(bid.size, strlen(c->key) / 2);
			CHECK(ds_build_id_format(&bid, hex, sizeof(hex)) > 0 &&
			      !strcasecmp(hex, c->key));
		}
		/* Nothing written past keylen. */
		for (size_t k = c->keylen; k < sizeof(key); k++)
			if (key[k] != 'X') {
				fprintf(stderr, "parse_line case %zu wrote key[%zu]\n", i, k);
				t_failures++;
				break;
			}
		free(line);
	}
	/* No key buffer: a line with a key is refused, a bare address not. */
	{
		uint64_t addr;

		CHECK_EQ_INT(ds_sym_parse_line("abcd 1", 6, NULL, 0, NULL, &addr), -EINVAL);
		CHECK_EQ_INT(ds_sym_parse_line("0x5", 3, NULL, 0, NULL, &addr), DS_SYM_LINE_ADDR);
		CHECK_EQ_INT(addr, 5);
		CHECK_EQ_INT(ds_sym_parse_line(NULL, 0, NULL, 0, NULL, &addr), -EINVAL);
	}
}

int main(void)
{
	empty_dirs[0] = t_path("nodebug");
	empty_dirs[1] = NULL;
	if (t_sh("mkdir -p '%s'", empty_dirs[0]) != 0 ||
	    t_sh("command -v addr2line nm readelf objcopy strip >/dev/null") != 0) {
		fprintf(stderr, "SKIP: binutils is not installed\n");
		return 77;
	}
	test_parse_line();
	build_fixtures();
	test_against_addr2line();
	test_batch();
	test_batch_dense();
	test_batch_no_symbols();
	test_cxx();
	test_file_offset();
	test_split_debuginfo();
	test_late_debuginfo();
	test_threads();
	test_budget();
	test_names_only();
	test_names_only_no_symbol();
	test_names_only_threads();
	for (int b = 0; b < NBINS; b++) {
		for (size_t i = 0; i < bins[b].naddrs; i++) {
			free(bins[b].want_inl[i]);
			free(bins[b].want_one[i]);
		}
		free(bins[b].path);
	}
	free((char *)empty_dirs[0]);
	return t_done("test_symbolize");
}
