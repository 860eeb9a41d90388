/* SPDX-License-Identifier: MIT */
/* The symbol index's tiers: what a query builds, observed
 * through ds_store_stats().
 *
 * Fixtures: programs of NCU compilation units (one generated C file each,
 * NFN noinline functions with an always_inline helper), built by gcc
 * (DWARF 5 with .debug_aranges) and by clang (DWARF 5 without
 * .debug_aranges: CUs found from their top DIEs' ranges; -ffunction-
 * sections, so those are DW_AT_ranges lists).  Expected answers come from
 * addr2line -f -i, function addresses from nm.
 *   - names-only queries (DS_SYM_NO_LINES) build no CU and read no DWARF;
 *   - a query builds the one CU it lands in, and a CU once;
 *   - threads asking all addresses at once, in different orders, get the
 *     answers a lone thread gets, and each CU is built once (TSan runs
 *     this too);
 *   - under a memory budget smaller than the whole index, one DSO's cold
 *     CUs are freed and built again when asked: answers stay right;
 *   - an index made again from its parts (what the saved index maps)
 *     answers the same; a part with a flipped byte is refused when first
 *     used, and its addresses fall back to ELF symbols. */
#define _GNU_SOURCE
#include "dsostore.h"
#include "symindex.h" /* the saved parts' round trip, below */
#include "testutil.h"

#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>
#include <zlib.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCU 6
#define NFN 8
#define NADDR (NCU * NFN)
#define NTHREADS 4

struct fixture {
	const char *name, *cc, *flags;
	char *path;
	uint64_t addr[NADDR]; /* one inside each function, CU by CU */
	char *want[NADDR]; /* addr2line -f -i: "func\nfile:line\n..." */
};

static struct fixture fx[] = {
	{ .name = "gcc", .cc = "gcc", .flags = "-g -O2 -gdwarf-5" },
	{ .name = "clang", .cc = "clang", .flags = "-g -O2 -gdwarf-5 -ffunction-sections" },
};

static void build(struct fixture *f)
{
	char *dir = t_path("%s", f->name), *cmd = NULL;
	size_t cmdlen = 0;
	FILE *c = open_memstream(&cmd, &cmdlen), *p;
	char line[4096];

	t_sh("mkdir -p '%s'", dir);
	fprintf(c, "%s %s -o '%s/prog'", f->cc, f->flags, dir);
	for (int u = 0; u < NCU; u++) {
		char *src = t_path("%s/cu%d.c", f->name, u), *text = NULL;
		size_t len = 0;
		FILE *s = open_memstream(&text, &len);

		fprintf(s, "extern volatile int sink;\n%s", u ? "" : "volatile int sink;\n");
		for (int i = 0; i < NFN; i++)
			fprintf(s,
				"static inline __attribute__((always_inline)) int in_%d_%d(int x)\n"
				"{ return x * %d + (sink ^ x); }\n"
				"__attribute__((noinline)) int fn_%d_%d(int x)\n"
				"{\n\tint s = 0;\n\tfor (int i = 0; i < x; i++)\n"
				"\t\ts += in_%d_%d(i);\n\treturn s;\n}\n",
				u, i, u * 31 + i, u, i, u, i);
		if (!u) {
			fprintf(s, "int main(int argc, char **argv)\n{\n\tint s = 0;\n\t(void)argv;\n");
			for (int k = 0; k < NCU; k++)
				for (int i = 0; i < NFN; i++)
					fprintf(s, "\t{ extern int fn_%d_%d(int); s += fn_%d_%d(argc); }\n",
						k, i, k, i);
			fprintf(s, "\treturn s & 1;\n}\n");
		}
		fclose(s);
		t_write_file(src, text);
		fprintf(c, " '%s'", src);
		free(text);
		free(src);
	}
	fclose(c);
	if (t_sh("%s 2>/dev/null", cmd) != 0) {
		fprintf(stderr, "%s: cannot build the fixture (skipped)\n", f->name);
		exit(77);
	}
	free(cmd);
	f->path = t_path("%s/prog", f->name);
	free(dir);

	/* Addresses: each function's start + 4 (inside its body). */
	p = t_popen("nm '%s'", f->path);
	while (fgets(line, sizeof(line), p)) {
		uint64_t a;
		char type;
		int u, i;

		if (sscanf(line, "%" SCNx64 " %c fn_%d_%d", &a, &type, &u, &i) == 4 && u >= 0 &&
		    u < NCU && i >= 0 && i < NFN)
			f->addr[u * NFN + i] = a + 4;
	}
	pclose(p);
	for (int k = 0; k < NADDR; k++)
		CHECK(f->addr[k] != 0);

	/* addr2line's answers, one process for all. */
	{
		char *list = t_path("%s/addrs", f->name);
		FILE *l = fopen(list, "w");
		int cur = -1;
		size_t lens[NADDR] = { 0 };

		for (int k = 0; k < NADDR; k++)
			fprintf(l, "0x%" PRIx64 "\n", f->addr[k]);
		fclose(l);
		p = t_popen("addr2line -a -f -i -e '%s' < '%s'", f->path, list);
		while (fgets(line, sizeof(line), p)) {
			size_t n = strlen(line);

			if (!strncmp(line, "0x", 2) && n == 19 && cur + 1 < NADDR) {
				cur++;
				continue;
			}
			if (cur < 0)
				continue;
			f->want[cur] = realloc(f->want[cur], lens[cur] + n + 1);
			memcpy(f->want[cur] + lens[cur], line, n + 1);
			lens[cur] += n;
		}
		pclose(p);
		CHECK_EQ_INT(cur + 1, NADDR);
		free(list);
	}
}


static bool answer_ok(const struct fixture *f, struct ds_dso *d, int k)
{
	struct ds_sym_result r;
	char *got;
	bool ok;

	if (ds_dso_symbolize(d, f->addr[k], DS_SYM_INLINES | DS_SYM_BINUTILS, &r) != 0)
		return false;
	got = t_format_a2l(&r);
	ok = f->want[k] && !strcmp(got, f->want[k]);
	if (!ok)
		fprintf(stderr, "%s 0x%" PRIx64 ": got\n%swant\n%s", f->name, f->addr[k], got,
			f->want[k] ? f->want[k] : "(none)\n");
	free(got);
	ds_sym_result_release(&r);
	return ok;
}

static struct ds_context *context(void)
{
	static const char *const no_dirs[] = { NULL };
	char *cache = t_path("cache");
	DS_OPTS(ds_context_opts, o, .debug_dirs = no_dirs, .perf_buildid_dir = "", .urls = "",
		.cache_path = cache, .symindex = -1 /* what builds, not what loads */);
	struct ds_context *ctx = ds_context_new(&o);

	free(cache);
	if (!ctx)
		exit(1);
	return ctx;
}

/* Names only: ELF symbols, no CU, no DWARF index. */
static void test_names_only(struct ds_context *ctx, const struct fixture *f)
{
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = ds_store_findnew(s, f->path, NULL);

	for (int k = 0; k < NADDR; k++) {
		struct ds_sym_result r;
		char want[64];

		snprintf(want, sizeof(want), "fn_%d_%d", k / NFN, k % NFN);
		CHECK_EQ_INT(ds_dso_symbolize(d, f->addr[k], DS_SYM_NO_LINES, &r), 0);
		CHECK(r.nframes == 1 && r.frames[0].function &&
		      !strcmp(r.frames[0].function, want));
		ds_sym_result_release(&r);
	}
	CHECK_EQ_INT(t_stats(s).symtab_builds, 1);
	CHECK_EQ_INT(t_stats(s).dwarf_builds, 0);
	CHECK_EQ_INT(t_stats(s).units_built, 0);
	ds_dso_put(d);
	ds_store_free(s);
}

/* One CU per query, each once. */
static void test_one_unit(struct ds_context *ctx, const struct fixture *f)
{
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = ds_store_findnew(s, f->path, NULL);
	int cu = 3; /* a CU in the middle */

	CHECK(answer_ok(f, d, cu * NFN + 2));
	CHECK_EQ_INT(t_stats(s).dwarf_builds, 1);
	CHECK_EQ_INT(t_stats(s).units_built, 1);
	/* The rest of that CU: nothing more built. */
	for (int i = 0; i < NFN; i++)
		CHECK(answer_ok(f, d, cu * NFN + i));
	CHECK_EQ_INT(t_stats(s).units_built, 1);
	/* Another CU: one more. */
	CHECK(answer_ok(f, d, 0 * NFN + 5));
	CHECK_EQ_INT(t_stats(s).units_built, 2);
	/* Names only still reads nothing new. */
	{
		struct ds_sym_result r;

		CHECK_EQ_INT(ds_dso_symbolize(d, f->addr[NFN * 5], DS_SYM_NO_LINES, &r), 0);
		ds_sym_result_release(&r);
	}
	CHECK_EQ_INT(t_stats(s).units_built, 2);
	ds_dso_put(d);
	ds_store_free(s);
}

struct worker {
	const struct fixture *f;
	struct ds_dso *d;
	int start, bad;
	pthread_barrier_t *go;
};

static void *ask_all(void *arg)
{
	struct worker *w = arg;

	pthread_barrier_wait(w->go);
	for (int n = 0; n < NADDR; n++) {
		int k = (w->start + n * 7) % NADDR; /* 7 is prime to NADDR */

		if (!answer_ok(w->f, w->d, k))
			w->bad++;
	}
	return NULL;
}

/* Threads at once: right answers, each CU built once (with budget: CUs
 * trimmed between lookups, when no thread is in one; then built again). */
static void test_threads(struct ds_context *ctx, const struct fixture *f, uint64_t budget)
{
	struct ds_store *s = t_store_new(ctx, budget);
	struct ds_dso *d = ds_store_findnew(s, f->path, NULL);
	struct worker w[NTHREADS];
	pthread_t tid[NTHREADS];
	pthread_barrier_t go;

	pthread_barrier_init(&go, NULL, NTHREADS);
	for (int t = 0; t < NTHREADS; t++) {
		w[t] = (struct worker){ f, d, t * NADDR / NTHREADS, 0, &go };
		pthread_create(&tid[t], NULL, ask_all, &w[t]);
	}
	for (int t = 0; t < NTHREADS; t++) {
		pthread_join(tid[t], NULL);
		CHECK_EQ_INT(w[t].bad, 0);
	}
	pthread_barrier_destroy(&go);
	if (!budget)
		CHECK_EQ_INT(t_stats(s).units_built, NCU);
	CHECK_EQ_INT(t_stats(s).dwarf_builds, 1);
	ds_dso_put(d);
	ds_store_free(s);
}

static uint64_t held(struct ds_store *s)
{
	return t_stats(s).bytes_held;
}

/* A budget for the file and about two CUs: every CU asked in turn, twice. */
static void test_trim(struct ds_context *ctx, const struct fixture *f)
{
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d = ds_store_findnew(s, f->path, NULL);
	uint64_t one, two, budget;
	int bad = 0;

	CHECK(answer_ok(f, d, 0));
	one = held(s);
	CHECK(answer_ok(f, d, NFN));
	two = held(s);
	CHECK(two > one);
	ds_dso_put(d);
	ds_store_free(s);
	budget = one + (two - one) * 3 / 2;

	s = t_store_new(ctx, budget);
	d = ds_store_findnew(s, f->path, NULL);
	for (int round = 0; round < 2; round++)
		for (int u = 0; u < NCU; u++) {
			if (!answer_ok(f, d, u * NFN + round))
				bad++;
			CHECK(held(s) <= budget);
		}
	CHECK_EQ_INT(bad, 0);
	CHECK(t_stats(s).trims > 0);
	CHECK(t_stats(s).units_built > NCU); /* some built again */
	CHECK_EQ_INT(t_stats(s).evictions, 0); /* the CUs went, not the file */
	ds_dso_put(d);
	ds_store_free(s);
}

struct frames {
	char buf[4096];
	size_t len;
};

static int collect(void *arg, const struct ds__raw_frame *f)
{
	struct frames *fr = arg;
	int n = snprintf(fr->buf + fr->len, sizeof(fr->buf) - fr->len, "%s %s:%u:%u %d|",
			 f->function ? f->function : "??", f->file ? f->file : "??", f->line,
			 f->column, f->inlined);

	if (n > 0 && (size_t)n < sizeof(fr->buf) - fr->len)
		fr->len += (size_t)n;
	return 0;
}

static char *answer(struct ds_symbols *S, uint64_t addr)
{
	struct frames fr = { .len = 0 };
	bool symtab;

	fr.buf[0] = 0;
	CHECK_EQ_INT(ds__symbols_find(S, addr, DS_SYM_INLINES, NULL, &symtab, collect, &fr), 0);
	return strdup(fr.buf);
}

/* Parts out, an index back in: the same answers; a damaged CU refused. */
static void test_parts(const struct fixture *f)
{
	int fd = open(f->path, O_RDONLY);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct ds_symbols *S, *T, *U;
	struct ds__symbols_parts parts, damaged;
	struct ds__blob *cus;
	void *copy;

	CHECK_EQ_INT(ds__symbols_build(NULL, elf, f->path, NULL, NULL, true, NULL, &S), 0);
	CHECK_EQ_INT(ds__symbols_parts(S, &parts), 0);
	CHECK_EQ_INT(parts.ncus, NCU);
	CHECK_EQ_INT(ds__symbols_from_parts(&parts, NULL, NULL, &T), 0);
	for (int k = 0; k < NADDR; k++) {
		char *a = answer(S, f->addr[k]), *b = answer(T, f->addr[k]);

		CHECK(!strcmp(a, b));
		CHECK(strstr(a, "fn_") != NULL);
		free(a);
		free(b);
	}
	/* CU of fn_2_*, one byte flipped in the middle of its blob. */
	cus = malloc(parts.ncus * sizeof(*cus));
	memcpy(cus, parts.cus, parts.ncus * sizeof(*cus));
	damaged = parts;
	damaged.cus = cus;
	{
		uint32_t cu = UINT32_MAX;

		for (size_t i = 0; i < parts.nranges; i++)
			if (parts.ranges[i].lo <= f->addr[2 * NFN] && f->addr[2 * NFN] < parts.ranges[i].hi)
				cu = parts.ranges[i].cu;
		CHECK(cu != UINT32_MAX);
		if (cu == UINT32_MAX)
			return;
		copy = malloc(cus[cu].size);
		memcpy(copy, cus[cu].data, cus[cu].size);
		((unsigned char *)copy)[cus[cu].size / 2] ^= 0x40;
		cus[cu].data = copy;
	}
	CHECK_EQ_INT(ds__symbols_from_parts(&damaged, NULL, NULL, &U), 0);
	for (int i = 0; i < NFN; i++) {
		char *a = answer(U, f->addr[2 * NFN + i]), *want;

		/* ELF symbols only: the function, no line. */
		asprintf(&want, "fn_2_%d ??:0:0 0|", i);
		CHECK(!strcmp(a, want));
		if (strcmp(a, want))
			fprintf(stderr, "damaged CU: %s, want %s\n", a, want);
		free(a);
		free(want);
	}
	{ /* the others still answer from DWARF */
		char *a = answer(U, f->addr[4 * NFN]), *b = answer(S, f->addr[4 * NFN]);

		CHECK(!strcmp(a, b));
		free(a);
		free(b);
	}
	ds__symbols_free(U);
	/* An ELF blob that is not what its CRC says: no index at all. */
	damaged.elf.sum ^= 1;
	CHECK_EQ_INT(ds__symbols_from_parts(&damaged, NULL, NULL, &U), -EINVAL);
	CHECK(U == NULL);
	ds__symbols_free(T);
	ds__symbols_parts_free(S, &parts);
	ds__symbols_free(S);
	free(copy);
	free(cus);
	elf_end(elf);
	close(fd);
}

int main(void)
{
	struct ds_context *ctx = context();

	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		build(&fx[i]);
		test_names_only(ctx, &fx[i]);
		test_one_unit(ctx, &fx[i]);
		test_threads(ctx, &fx[i], 0);
		test_trim(ctx, &fx[i]);
		test_threads(ctx, &fx[i], 1); /* every CU over the budget */
		test_parts(&fx[i]);
	}
	ds_context_free(ctx);
	for (size_t i = 0; i < sizeof(fx) / sizeof(fx[0]); i++) {
		free(fx[i].path);
		for (int k = 0; k < NADDR; k++)
			free(fx[i].want[k]);
	}
	return t_done("test_symindex");
}
