/* SPDX-License-Identifier: MIT */
/*
 * Split DWARF's files are the store's auxiliary files.  Two programs built
 * here with -gsplit-dwarf share two of their three units (a static
 * library's objects, as in a real tree), once by gcc (DWARF 4, packaged by
 * binutils' dwp) and once by clang (DWARF 5, llvm-dwp):
 *   - with one package for both (p1.dwp a symlink to it, p2.dwp a hard
 *     link), symbolized by two threads at once: the package is opened
 *     once and counted once, and every answer is the plain build's (the
 *     same sources without -gsplit-dwarf: docs/oracles.md);
 *   - with .dwo files: a unit both programs have is searched and opened
 *     once;
 *   - under a budget of one byte: the package is closed between batches
 *     and opened again by the next build, answers unchanged;
 *   - a .dwo of another unit at the name a skeleton gives is refused with
 *     a warning, a missing one gives the skeleton's lines: both answer as
 *     addr2line 2.40 does (it reads no split DWARF);
 *   - prefetch finds them, and ds_dso_split_files() says where.
 */
#define _GNU_SOURCE
#include "testutil.h"

#include "dsostore.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/stat.h>

static const char common_h[] =
	"static inline __attribute__((always_inline)) unsigned long mix(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 200; i++)\n"
	"\t\tx ^= x << 13, x ^= x >> 7, x ^= x << 17;\n"
	"\treturn x;\n"
	"}\n"
	"static inline __attribute__((always_inline)) unsigned long twice(unsigned long x)\n"
	"{\n"
	"\treturn mix(mix(x) + 3);\n"
	"}\n";
static const char lib_a[] = "#include \"common.h\"\n"
			    "__attribute__((noinline)) unsigned long lib_a(unsigned long x)\n"
			    "{\n"
			    "\treturn twice(x) + 1;\n"
			    "}\n";
static const char lib_b[] = "#include \"common.h\"\n"
			    "__attribute__((noinline)) unsigned long lib_b(unsigned long x)\n"
			    "{\n"
			    "\treturn mix(x * 7) - 1;\n"
			    "}\n";
/* NAME: m1 or m2.  The main unit stays unbuilt in most tests: an index
 * with a CU left to build keeps its DWARF, and its holds. */
static const char main_c[] = "#include \"common.h\"\n"
			     "unsigned long lib_a(unsigned long), lib_b(unsigned long);\n"
			     "int main(int argc, char **argv)\n"
			     "{\n"
			     "\t(void)argv;\n"
			     "\treturn (int)mix(lib_a((unsigned long)argc) ^ lib_b(NAME));\n"
			     "}\n";

struct variant {
	const char *name, *cc, *flags, *dwp;
};
static const struct variant variants[] = {
	{ "gcc", "gcc", "-O2 -gdwarf-4", "dwp" },
	{ "clang", "clang", "-O2 -gdwarf-5", "llvm-dwp-14" },
};

/* The functions whose addresses are asked, and their ranges (the same in
 * every build of a variant: .text is the plain build's). */
static const char *const funcs[] = { "lib_a", "lib_b" };
static uint64_t lo[2][2], hi[2][2]; /* [program][func] */

/* No debug directory, no server, no saved index; log: where warnings go
 * (NULL: nowhere). */
static struct ds_context *new_ctx(void (*log)(void *, enum ds_log_level, const char *), void *user)
{
	static const char *const none[] = { NULL };
	DS_OPTS(ds_context_opts, o, .debug_dirs = none, .perf_buildid_dir = "",
		.urls = "", .symindex = -1, .log_fn = log, .log_user = user,
		.log_level = DS_LOG_WARN);
	struct ds_context *ctx = ds_context_new(&o);

	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	return ctx;
}

/* V/{plain,dwo,pkg}/p{1,2} for variant V: plain, with .dwo files beside
 * the objects, and with a package alone (the .dwo files gone).  All
 * compiled in the same directory from the same names, so that file names
 * (comp_dir and name) are the same in every build. */
static void build(const struct variant *v)
{
	if (t_sh("cd '%s' && for k in plain dwo pkg; do mkdir -p %s/$k; "
		 "f=; [ $k = plain ] || f=-gsplit-dwarf; for s in a b m1 m2; do "
		 "%s %s $f -c $s.c -o %s/$k/$s.o || exit 1; done; "
		 "for p in 1 2; do %s %s -Wl,--build-id=sha1 -o %s/$k/p$p %s/$k/a.o %s/$k/b.o "
		 "%s/$k/m$p.o || exit 1; done; done && cd %s/pkg && "
		 "%s -o all.dwp a.dwo b.dwo m1.dwo m2.dwo && "
		 "rm ./*.dwo && ln -s all.dwp p1.dwp && ln all.dwp p2.dwp",
		 t_tmpdir(), v->name, v->cc, v->flags, v->name, v->cc, v->flags, v->name, v->name,
		 v->name, v->name, v->name, v->dwp) != 0) {
		fprintf(stderr, "%s: building the programs or the package failed\n", v->name);
		exit(1);
	}
}

static void setup(void)
{
	char *p;

	if (t_sh("{ command -v gcc && command -v clang && command -v dwp && command -v "
		 "llvm-dwp-14 && command -v nm && command -v addr2line; } >/dev/null") != 0) {
		fprintf(stderr, "SKIP: gcc, clang, dwp, llvm-dwp-14, nm or addr2line is missing\n");
		exit(77);
	}
	p = t_path("common.h");
	t_write_file(p, common_h);
	free(p);
	p = t_path("a.c");
	t_write_file(p, lib_a);
	free(p);
	p = t_path("b.c");
	t_write_file(p, lib_b);
	free(p);
	for (int i = 1; i <= 2; i++) {
		char *text = strdup(main_c), *n = strstr(text, "NAME");

		memcpy(n, i == 1 ? "11UL" : "22UL", 4);
		p = t_path("m%d.c", i);
		t_write_file(p, text);
		free(p);
		free(text);
	}
}

/* Every address of the functions fs (a mask of funcs) in program i, as
 * lines of frames; saw_inline: a frame of mix inlined somewhere. */
struct job {
	struct ds_dso *d;
	int i;
	unsigned fs;
	unsigned step; /* every step-th address (0: every one) */
	char *out;
	size_t len;
	bool saw_inline;
};

static void *symbolize_all(void *arg)
{
	struct job *j = arg;
	FILE *f = open_memstream(&j->out, &j->len);

	for (int k = 0; k < 2; k++) {
		if (!(j->fs & (1u << k)))
			continue;
		for (uint64_t a = lo[j->i][k]; a < hi[j->i][k]; a += j->step ? j->step : 1) {
			struct ds_sym_result r;

			if (ds_dso_symbolize(j->d, a, DS_SYM_INLINES, &r) != 0) {
				fprintf(f, "%llx error\n", (unsigned long long)a);
				continue;
			}
			fprintf(f, "%llx", (unsigned long long)a);
			for (size_t n = 0; n < r.nframes; n++) {
				const char *fn = r.frames[n].function ? r.frames[n].function : "??";

				fprintf(f, " %s:%s:%u:%u", fn,
					r.frames[n].file ? r.frames[n].file : "??",
					r.frames[n].line, r.frames[n].column);
				if (r.frames[n].inlined && !strcmp(fn, "mix"))
					j->saw_inline = true;
			}
			fputc('\n', f);
			ds_sym_result_release(&r);
		}
	}
	fclose(f);
	return NULL;
}

static char *answers_step(struct ds_dso *d, int i, unsigned fs, unsigned step, bool *saw_inline)
{
	struct job j = { .d = d, .i = i, .fs = fs, .step = step };

	symbolize_all(&j);
	if (saw_inline)
		*saw_inline = j.saw_inline;
	return j.out;
}

static char *answers(struct ds_dso *d, int i, unsigned fs, bool *saw_inline)
{
	return answers_step(d, i, fs, 1, saw_inline);
}

static void check_same(const char *what, const char *got, const char *want)
{
	CHECK(got && want && !strcmp(got, want));
	if (got && want && strcmp(got, want))
		fprintf(stderr, "%s:\n%.2000s\nwanted (the plain build's):\n%.2000s\n", what, got,
			want);
}

/* The oracle: the plain build's answers, [program] for both functions. */
static char *want[2];

static void oracle(const struct variant *v)
{
	struct ds_context *ctx = new_ctx(NULL, NULL);
	struct ds_store *s = t_store_new(ctx, 0);

	for (int i = 0; i < 2; i++) {
		char *plain = t_path("%s/plain/p%d", v->name, i + 1);
		struct ds_dso *d = ds_store_findnew(s, plain, NULL);
		bool inl = false;

		for (int k = 0; k < 2; k++)
			t_symbol_range(plain, funcs[k], &lo[i][k], &hi[i][k]);
		want[i] = answers(d, i, 3, &inl);
		CHECK(inl);
		ds_dso_put(d);
		free(plain);
	}
	/* (Their plain DWARF asks for no auxiliary file.) */
	CHECK_EQ_INT(t_stats(s).aux_opens, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* The answers of lib_a (1) or lib_b (2) alone, every step-th address,
 * cut from want[i]. */
static char *want_step(int i, unsigned fs, unsigned step)
{
	char *out = NULL, *line, *save = NULL, *copy = strdup(want[i]);
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		uint64_t a = strtoull(line, NULL, 16);

		for (int k = 0; k < 2; k++)
			if ((fs & (1u << k)) && a >= lo[i][k] && a < hi[i][k] &&
			    (a - lo[i][k]) % step == 0)
				fprintf(f, "%s\n", line);
	}
	fclose(f);
	free(copy);
	return out;
}

static char *want_of(int i, unsigned fs)
{
	return want_step(i, fs, 1);
}

static void test_shared_package(const struct variant *v)
{
	struct ds_context *ctx = new_ctx(NULL, NULL);
	struct ds_store *s = t_store_new(ctx, 0);
	struct job jobs[2];
	pthread_t tid[2];
	struct ds_store_stats st;
	struct stat sb;
	char *pkg = t_path("%s/pkg/all.dwp", v->name);

	CHECK_EQ_INT(stat(pkg, &sb), 0);
	for (int i = 0; i < 2; i++) {
		char *bin = t_path("%s/pkg/p%d", v->name, i + 1);

		jobs[i] = (struct job){ .d = ds_store_findnew(s, bin, NULL), .i = i, .fs = 3 };
		CHECK(jobs[i].d != NULL);
		free(bin);
	}
	/* Both indexes built at once, from one package: one open. */
	for (int i = 0; i < 2; i++)
		CHECK_EQ_INT(pthread_create(&tid[i], NULL, symbolize_all, &jobs[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < 2; i++) {
		CHECK(jobs[i].saw_inline);
		check_same(v->name, jobs[i].out, want[i]);
		free(jobs[i].out);
	}
	st = t_stats(s);
	CHECK_EQ_INT(st.dwp_opens, 1);
	CHECK_EQ_INT(st.aux_opens, 1);
	CHECK_EQ_INT(st.dwo_searches, 0);
	CHECK_EQ_INT(st.aux_open, 1);
	/* Counted once: the file and a little of its own. */
	CHECK(st.aux_bytes >= (uint64_t)sb.st_size && st.aux_bytes < (uint64_t)sb.st_size + 65536);
	CHECK(st.bytes_held > st.aux_bytes);
	/* Closed with its last holder. */
	ds_dso_put(jobs[0].d);
	CHECK_EQ_INT(t_stats(s).aux_open, 1);
	ds_dso_put(jobs[1].d);
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_open, 0);
	CHECK_EQ_INT(st.aux_bytes, 0);
	CHECK_EQ_INT(st.bytes_held, 0);
	ds_store_free(s);
	ds_context_free(ctx);
	free(pkg);
}

static void test_shared_dwo(const struct variant *v)
{
	struct ds_context *ctx = new_ctx(NULL, NULL);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d[2];
	struct ds_store_stats st;

	for (int i = 0; i < 2; i++) {
		char *bin = t_path("%s/dwo/p%d", v->name, i + 1), *got, *w = want_of(i, 1);

		d[i] = ds_store_findnew(s, bin, NULL);
		got = answers(d[i], i, 1, NULL);
		check_same(v->name, got, w);
		free(got);
		free(w);
		free(bin);
	}
	/* a.dwo, named by both: one search, one open, held by both. */
	st = t_stats(s);
	CHECK_EQ_INT(st.dwo_searches, 1);
	CHECK_EQ_INT(st.dwo_opens, 1);
	CHECK_EQ_INT(st.aux_open, 1);
	CHECK_EQ_INT(st.dwp_opens, 0);
	ds_dso_put(d[0]);
	ds_dso_put(d[1]);
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_open, 0);
	CHECK_EQ_INT(st.bytes_held, 0);
	/* Found again where it was: opened, not searched. */
	{
		char *bin = t_path("%s/dwo/p1", v->name), *got, *w = want_of(0, 1);
		struct ds_dso *e = ds_store_findnew(s, bin, NULL);

		got = answers(e, 0, 1, NULL);
		check_same(v->name, got, w);
		st = t_stats(s);
		CHECK_EQ_INT(st.dwo_searches, 1);
		CHECK_EQ_INT(st.dwo_opens, 2);
		free(got);
		free(w);
		free(bin);
		ds_dso_put(e);
	}
	ds_store_free(s);
	ds_context_free(ctx);
}

/* One byte of budget: every call ends over it, and builds again what the
 * next needs (so every 5th address only). */
static void test_budget(const struct variant *v)
{
	struct ds_context *ctx = new_ctx(NULL, NULL);
	struct ds_store *s = t_store_new(ctx, 1);
	struct ds_dso *d[2];
	struct ds_store_stats st;

	for (int i = 0; i < 2; i++) {
		char *bin = t_path("%s/pkg/p%d", v->name, i + 1);

		d[i] = ds_store_findnew(s, bin, NULL);
		free(bin);
	}
	/* lib_a of p1: the package opened for its build, closed after it
	 * (no build reads it: p1's index still holds it). */
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 2; i++) {
			for (int k = 0; k < 2; k++) {
				char *got = answers_step(d[i], i, 1u << k, 5, NULL);
				char *w = want_step(i, 1u << k, 5);

				check_same(v->name, got, w);
				free(got);
				free(w);
			}
		}
	}
	st = t_stats(s);
	CHECK(st.aux_closes >= 1);
	CHECK(st.aux_reopens >= 1);
	CHECK(st.dwp_opens >= 2);
	CHECK_EQ_INT(st.aux_open, 0);
	ds_dso_put(d[0]);
	ds_dso_put(d[1]);
	st = t_stats(s);
	CHECK_EQ_INT(st.bytes_held, 0);
	CHECK_EQ_INT(st.aux_bytes, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* The library's warnings, kept. */
struct log {
	pthread_mutex_t mu;
	char *text;
	size_t len;
	FILE *f;
};

static void log_keep(void *user, enum ds_log_level level, const char *msg)
{
	struct log *l = user;

	(void)level;
	pthread_mutex_lock(&l->mu);
	fprintf(l->f, "%s\n", msg);
	fflush(l->f);
	pthread_mutex_unlock(&l->mu);
}

/* addr2line 2.40 on a split binary prints the skeleton's lines and the
 * ELF symbol: what a unit without its split unit must give.  One run for
 * every address of [l, h), each answer after its "0x%016x" line. */
static void check_a2l(struct ds_dso *d, const char *bin, uint64_t l, uint64_t h)
{
	char *all = NULL, *p;
	size_t len = 0, n;
	char buf[4096];
	int bad = 0, compared = 0;
	FILE *m = open_memstream(&all, &len);
	FILE *f = t_popen("for a in $(seq %llu %llu); do printf '0x%%x\\n' $a; done | "
			  "addr2line -a -f -i -e '%s'",
			  (unsigned long long)l, (unsigned long long)h - 1, bin);

	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, m);
	pclose(f);
	fclose(m);
	for (uint64_t a = l; a < h; a++) {
		struct ds_sym_result r;
		char head[32], *got, *end;

		snprintf(head, sizeof(head), "0x%016llx\n", (unsigned long long)a);
		p = strstr(all, head);
		CHECK(p != NULL);
		if (!p)
			break;
		p += strlen(head);
		end = strstr(p, "\n0x");
		end = end ? end + 1 : p + strlen(p);
		CHECK_EQ_INT(ds_dso_symbolize(d, a, DS_SYM_INLINES | DS_SYM_BINUTILS, &r), 0);
		got = t_format_a2l(&r);
		compared++;
		if ((strlen(got) != (size_t)(end - p) || strncmp(got, p, (size_t)(end - p))) &&
		    bad++ < 3)
			fprintf(stderr, "%s 0x%llx:\n%s--- addr2line:\n%.*s", bin,
				(unsigned long long)a, got, (int)(end - p), p);
		free(got);
		ds_sym_result_release(&r);
	}
	CHECK(compared > 0);
	CHECK_EQ_INT(bad, 0);
	free(all);
}

static void test_wrong_and_missing(const struct variant *v)
{
	struct log lg = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, NULL };
	char *bin = t_path("%s/bad/p1", v->name);
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_dso *d;

	/* b's .dwo where a's is looked for; a's unit wants its own. */
	if (t_sh("cd '%s/%s' && mkdir -p bad && cp dwo/p1 dwo/b.dwo dwo/m1.dwo bad/ && "
		 "cp dwo/b.dwo bad/a.dwo",
		 t_tmpdir(), v->name) != 0) {
		fprintf(stderr, "copying the .dwo files failed\n");
		exit(1);
	}
	lg.f = open_memstream(&lg.text, &lg.len);
	ctx = new_ctx(log_keep, &lg);
	s = t_store_new(ctx, 0);
	d = ds_store_findnew(s, bin, NULL);
	/* (comp_dir names the dwo/ directory: the copies must be looked
	 * for beside the binary, so the originals are moved away.) */
	CHECK_EQ_INT(t_sh("cd '%s/%s' && mkdir -p away && mv dwo/a.dwo dwo/b.dwo away/",
			  t_tmpdir(), v->name),
		     0);
	check_a2l(d, bin, lo[0][0], hi[0][0]);
	pthread_mutex_lock(&lg.mu);
	CHECK(lg.text && strstr(lg.text, "/bad/a.dwo is not the split unit of its skeleton"));
	pthread_mutex_unlock(&lg.mu);
	/* Its other units are read: lib_b is the plain build's. */
	{
		char *got = answers(d, 0, 2, NULL), *w = want_of(0, 2);

		check_same(v->name, got, w);
		free(got);
		free(w);
	}
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);

	/* None at all: one warning, the skeleton's lines. */
	fclose(lg.f);
	free(lg.text);
	lg.text = NULL;
	lg.f = open_memstream(&lg.text, &lg.len);
	CHECK_EQ_INT(t_sh("rm '%s/%s/bad/a.dwo'", t_tmpdir(), v->name), 0);
	ctx = new_ctx(log_keep, &lg);
	s = t_store_new(ctx, 0);
	d = ds_store_findnew(s, bin, NULL);
	check_a2l(d, bin, lo[0][0], hi[0][0]);
	pthread_mutex_lock(&lg.mu);
	CHECK(lg.text && strstr(lg.text, "not found"));
	pthread_mutex_unlock(&lg.mu);
	{
		struct ds_split_files sf;

		CHECK_EQ_INT(ds_dso_split_files(d, &sf), 0);
		CHECK_EQ_INT(sf.units, 3);
		CHECK_EQ_INT(sf.in_dwp, 0);
		CHECK_EQ_INT(sf.in_dwo, 2);
		CHECK_EQ_INT(sf.missing, 1);
		CHECK(sf.dwp == NULL);
		free(sf.dwp);
	}
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	CHECK_EQ_INT(t_sh("cd '%s/%s' && mv away/a.dwo away/b.dwo dwo/", t_tmpdir(), v->name), 0);
	fclose(lg.f);
	free(lg.text);
	free(bin);
}

/* Prefetch's split round finds them (nothing kept open), and the index
 * built after opens them where prefetch found them: no search. */
static void test_prefetch(const struct variant *v)
{
	struct ds_context *ctx = new_ctx(NULL, NULL);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d[2];
	struct ds_split_files sf;
	struct ds_store_stats st;
	char *pkg = t_path("%s/pkg/all.dwp", v->name);

	for (int i = 0; i < 2; i++) {
		char *bin = t_path("%s/%s/p%d", v->name, i ? "dwo" : "pkg", i + 1);

		d[i] = ds_store_findnew(s, bin, NULL);
		free(bin);
	}
	CHECK_EQ_INT(ds_store_prefetch(s, NULL), 0);
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_open, 0);
	CHECK_EQ_INT(st.dwo_searches, 3);
	CHECK_EQ_INT(ds_dso_split_files(d[0], &sf), 0);
	CHECK_EQ_INT(sf.units, 3);
	CHECK_EQ_INT(sf.in_dwp, 3);
	CHECK_EQ_INT(sf.in_dwo + sf.missing, 0);
	/* (p1.dwp is a symlink: the package by its real path.) */
	CHECK(sf.dwp && !strcmp(sf.dwp, pkg));
	free(sf.dwp);
	CHECK_EQ_INT(ds_dso_split_files(d[1], &sf), 0);
	CHECK_EQ_INT(sf.units, 3);
	CHECK_EQ_INT(sf.in_dwo, 3);
	CHECK_EQ_INT(sf.in_dwp + sf.missing, 0);
	CHECK(sf.dwp == NULL);
	for (int i = 0; i < 2; i++) {
		char *got = answers(d[i], i, 3, NULL);

		check_same(v->name, got, want[i]);
		free(got);
	}
	st = t_stats(s);
	CHECK_EQ_INT(st.dwo_searches, 3);
	CHECK_EQ_INT(st.aux_searches, 3);
	/* A plain DSO has none. */
	{
		char *plain = t_path("%s/plain/p1", v->name);
		struct ds_dso *e = ds_store_findnew(s, plain, NULL);

		CHECK_EQ_INT(ds_dso_split_files(e, &sf), -ENODATA);
		ds_dso_put(e);
		free(plain);
	}
	ds_dso_put(d[0]);
	ds_dso_put(d[1]);
	ds_store_free(s);
	ds_context_free(ctx);
	free(pkg);
}

int main(void)
{
	setup();
	for (size_t k = 0; k < sizeof(variants) / sizeof(variants[0]); k++) {
		const struct variant *v = &variants[k];

		build(v);
		oracle(v);
		test_shared_package(v);
		test_shared_dwo(v);
		test_budget(v);
		test_wrong_and_missing(v);
		test_prefetch(v);
		for (int i = 0; i < 2; i++)
			free(want[i]);
	}
	return t_done("test_split");
}
