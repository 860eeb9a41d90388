/* SPDX-License-Identifier: MIT */
/*
 * The store's auxiliary files: a dwz -m pair (two stripped programs whose
 * debuginfo shares one alt file, the inlined helper's DIEs in it) built
 * here.  The alt file is searched once and opened once for both DSOs,
 * read by builders on several threads at once, counted once in the
 * budget, closed with its last reader and found again without a search;
 * its names (the inline frames) match those of the same programs' plain
 * debuginfo (before dwz).
 */
#define _GNU_SOURCE
#include "testutil.h"

#include "dsostore.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

static const char common_h[] =
	"static inline __attribute__((always_inline)) unsigned long cm_mix(unsigned long x)\n"
	"{\n"
	"\tfor (int i = 0; i < 300; i++)\n"
	"\t\tx ^= x << 13, x ^= x >> 7, x ^= x << 17;\n"
	"\treturn x;\n"
	"}\n"
	"static inline __attribute__((always_inline)) unsigned long cm_twice(unsigned long x)\n"
	"{\n"
	"\treturn cm_mix(cm_mix(x) + 3);\n"
	"}\n";

/* Two CUs each: an index with a CU left to build keeps reading its DWARF
 * (and the alt file). */
static const char prog_c[] = "#include \"common.h\"\n"
			     "__attribute__((noinline)) unsigned long NAME_spin(unsigned long x)\n"
			     "{\n"
			     "\treturn cm_twice(x) + 1;\n"
			     "}\n";
static const char main_c[] = "#include \"common.h\"\n"
			     "unsigned long NAME_spin(unsigned long x);\n"
			     "int main(int argc, char **argv)\n"
			     "{\n"
			     "\t(void)argv;\n"
			     "\treturn (int)cm_mix(NAME_spin((unsigned long)argc));\n"
			     "}\n";

static const char *debug_dirs[2];
static char *bins[2], *plain[2]; /* stripped; unstripped before dwz */
static uint64_t spin_lo[2], spin_hi[2];

static void setup(void)
{
	const char *dir = t_tmpdir();
	char *hdr;

	if (t_sh("{ command -v gcc && command -v objcopy && command -v dwz && command -v nm && "
		 "command -v strip && command -v eu-readelf; } >/dev/null") != 0) {
		fprintf(stderr, "SKIP: gcc, objcopy, dwz, nm, strip or eu-readelf is missing\n");
		exit(77);
	}
	hdr = t_path("common.h");
	t_write_file(hdr, common_h);
	free(hdr);
	for (int i = 0; i < 2; i++) {
		const char *name = i ? "pb" : "pa";

		for (int k = 0; k < 2; k++) {
			char *src = t_path("p%d%s.c", i, k ? "_main" : ""), *p;
			char *text = strdup(k ? main_c : prog_c);

			while ((p = strstr(text, "NAME")))
				memcpy(p, name, 2), memmove(p + 2, p + 4, strlen(p + 4) + 1);
			t_write_file(src, text);
			free(src);
			free(text);
		}
		bins[i] = t_path("p%d", i);
		plain[i] = t_path("p%d.plain", i);
		if (t_sh("cd '%s' && gcc -O2 -g -Wl,--build-id=sha1 -o p%d p%d.c p%d_main.c && "
			 "cp p%d p%d.plain && objcopy --only-keep-debug p%d p%d.debug && "
			 "strip --strip-all p%d",
			 dir, i, i, i, i, i, i, i, i) != 0) {
			fprintf(stderr, "building p%d failed\n", i);
			exit(1);
		}
		t_symbol_range(plain[i], i ? "pb_spin" : "pa_spin", &spin_lo[i], &spin_hi[i]);
	}
	/* The name dwz records leads nowhere: found by build ID only. */
	if (t_sh("cd '%s' && dwz -m common.debug -M /nonexistent/common.debug p0.debug p1.debug "
		 "&& for f in p0.debug p1.debug common.debug; do "
		 "b=$(eu-readelf -n $f | awk '/Build ID:/ { print $3; exit }'); "
		 "mkdir -p debug/.build-id/${b%%${b#??}} && "
		 "cp $f debug/.build-id/${b%%${b#??}}/${b#??}.debug; done",
		 dir) != 0) {
		fprintf(stderr, "dwz -m or installing its output failed\n");
		exit(1);
	}
	debug_dirs[0] = t_path("debug");
}

static struct ds_context *new_ctx(const char *const *dirs)
{
	DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
		.symindex = -1);
	struct ds_context *ctx = ds_context_new(&o);

	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	return ctx;
}

/* Every address of spin in file i, as "frames\n" lines (innermost
 * first); and whether any frame named cm_mix (held in the alt file). */
struct job {
	struct ds_dso *d;
	int i;
	char *out;
	size_t len;
	bool saw_inline;
};

static void *symbolize_all(void *arg)
{
	struct job *j = arg;
	FILE *f = open_memstream(&j->out, &j->len);

	for (uint64_t a = spin_lo[j->i]; a < spin_hi[j->i]; a++) {
		struct ds_sym_result r;

		if (ds_dso_symbolize(j->d, a, DS_SYM_INLINES, &r) != 0) {
			fprintf(f, "%llx error\n", (unsigned long long)a);
			continue;
		}
		fprintf(f, "%llx", (unsigned long long)a);
		for (size_t k = 0; k < r.nframes; k++) {
			const char *fn = r.frames[k].function ? r.frames[k].function : "??";

			fprintf(f, " %s:%s:%u", fn, r.frames[k].file ? r.frames[k].file : "??",
				r.frames[k].line);
			if (r.frames[k].inlined && !strcmp(fn, "cm_mix"))
				j->saw_inline = true;
		}
		fputc('\n', f);
		ds_sym_result_release(&r);
	}
	fclose(f);
	return NULL;
}

/* The oracle: the same addresses in the plain (not dwz'd) programs. */
static char *oracle(int i)
{
	static const char *const none[] = { NULL };
	struct ds_context *ctx = new_ctx(none);
	struct ds_store *s = t_store_new(ctx, 0);
	struct job j = { .d = ds_store_findnew(s, plain[i], NULL), .i = i };

	symbolize_all(&j);
	CHECK(j.saw_inline);
	ds_dso_put(j.d);
	ds_store_free(s);
	ds_context_free(ctx);
	return j.out;
}

static void test_shared(char *want[2])
{
	struct ds_context *ctx = new_ctx(debug_dirs);
	struct ds_store *s = t_store_new(ctx, 0);
	struct job jobs[2];
	pthread_t tid[2];
	struct ds_build_id alt[2];
	char *path[2];
	struct ds_store_stats st;

	for (int i = 0; i < 2; i++) {
		jobs[i] = (struct job){ .d = ds_store_findnew(s, bins[i], NULL), .i = i };
		CHECK(jobs[i].d != NULL);
	}
	/* Both indexes built at once: one search, one open. */
	for (int i = 0; i < 2; i++)
		CHECK_EQ_INT(pthread_create(&tid[i], NULL, symbolize_all, &jobs[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < 2; i++) {
		CHECK(jobs[i].saw_inline);
		CHECK(jobs[i].out && !strcmp(jobs[i].out, want[i]));
		if (jobs[i].out && strcmp(jobs[i].out, want[i]))
			fprintf(stderr, "p%d:\n%s\nwanted:\n%s\n", i, jobs[i].out, want[i]);
		free(jobs[i].out);
	}
	/* One search, one open, counted once: both indexes have main's
	 * CU left to build, so both still read it. */
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_searches, 1);
	CHECK_EQ_INT(st.aux_opens, 1);
	CHECK_EQ_INT(st.aux_open, 1);
	CHECK(st.aux_bytes > 0);
	CHECK(st.bytes_held > st.aux_bytes);

	/* The store says where it is, once per build ID. */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(ds_dso_alt_file(jobs[i].d, &alt[i], &path[i]), 0);
		CHECK(path[i] && strstr(path[i], "/debug/.build-id/"));
	}
	CHECK(ds_build_id_equal(&alt[0], &alt[1]));
	CHECK(path[0] && path[1] && !strcmp(path[0], path[1]));
	CHECK_EQ_INT(t_stats(s).aux_searches, 1);
	free(path[0]);
	free(path[1]);
	/* Closed with its last reader. */
	ds_dso_put(jobs[0].d);
	CHECK_EQ_INT(t_stats(s).aux_open, 1);
	ds_dso_put(jobs[1].d);
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_open, 0);
	CHECK_EQ_INT(st.aux_bytes, 0);
	CHECK_EQ_INT(st.bytes_held, 0);
	ds_store_free(s);
	ds_context_free(ctx);
}

/* Held open while an index still has CUs to build: counted once in
 * bytes_held, let go with its last reader, opened again by path. */
static void test_lifetime(void)
{
	struct ds_context *ctx = new_ctx(debug_dirs);
	struct ds_store *s = t_store_new(ctx, 0);
	struct ds_dso *d[2];
	struct ds_sym_result r;
	struct ds_store_stats st;
	uint64_t one;

	for (int i = 0; i < 2; i++) {
		d[i] = ds_store_findnew(s, bins[i], NULL);
		/* Names only first, then a full query. */
		CHECK_EQ_INT(ds_dso_symbolize(d[i], spin_lo[i], DS_SYM_NO_LINES, &r), 0);
		ds_sym_result_release(&r);
	}
	/* Names only: no DWARF read, the alt file not asked for. */
	CHECK_EQ_INT(t_stats(s).aux_searches, 0);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(ds_dso_symbolize(d[i], spin_lo[i] + 4, DS_SYM_INLINES, &r), 0);
		ds_sym_result_release(&r);
	}
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_searches, 1);
	one = st.aux_bytes;
	CHECK_EQ_INT(st.aux_open, 1);
	CHECK_EQ_INT(st.aux_opens, 1);
	CHECK(st.bytes_held >= st.aux_bytes);
	ds_dso_put(d[0]);
	ds_dso_put(d[1]);
	d[0] = d[1] = NULL;
	st = t_stats(s);
	CHECK_EQ_INT(st.aux_open, 0);
	CHECK_EQ_INT(st.aux_bytes, 0);
	CHECK_EQ_INT(st.bytes_held, 0);
	/* Found again where it was: no second search. */
	{
		struct job j = { .d = ds_store_findnew(s, bins[0], NULL), .i = 0 };

		symbolize_all(&j);
		CHECK(j.saw_inline);
		free(j.out);
		st = t_stats(s);
		CHECK_EQ_INT(st.aux_searches, 1);
		CHECK_EQ_INT(st.aux_opens, 2);
		CHECK_EQ_INT(st.aux_bytes, one);
		ds_dso_put(j.d);
	}
	ds_store_free(s);
	ds_context_free(ctx);
}

/* Not found: the DWARF is read all the same, the search not repeated,
 * and ds_dso_alt_file() says so. */
static void test_missing(void)
{
	char *dir = t_path("nolink");
	const char *dirs[] = { dir, NULL };
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_build_id bid;
	struct ds_sym_result r;
	char *path = (char *)"x";

	/* The debug dir without the alt file. */
	if (t_sh("cp -r '%s' '%s' && for f in $(find '%s' -name '*.debug'); do "
		 "readelf -S $f | grep -q gnu_debugaltlink || rm $f; done",
		 debug_dirs[0], dir, dir) != 0) {
		fprintf(stderr, "copying the debug dir failed\n");
		exit(1);
	}
	ctx = new_ctx(dirs);
	s = t_store_new(ctx, 0);
	for (int i = 0; i < 2; i++) {
		struct ds_dso *d = ds_store_findnew(s, bins[i], NULL);

		struct job j = { .d = d, .i = i };

		CHECK_EQ_INT(ds_dso_symbolize(d, spin_lo[i] + 4, DS_SYM_INLINES, &r), 0);
		CHECK(r.nframes >= 1);
		ds_sym_result_release(&r);
		/* The helper's name is the alt file's: unknown without it. */
		symbolize_all(&j);
		CHECK(!j.saw_inline);
		free(j.out);
		CHECK_EQ_INT(ds_dso_alt_file(d, &bid, &path), -ENOENT);
		CHECK(path == NULL);
		CHECK(bid.size == 20);
		ds_dso_put(d);
	}
	CHECK_EQ_INT(t_stats(s).aux_searches, 1);
	CHECK_EQ_INT(t_stats(s).aux_opens, 0);
	ds_store_free(s);
	ds_context_free(ctx);
	free(dir);
}

int main(void)
{
	char *want[2];

	setup();
	for (int i = 0; i < 2; i++)
		want[i] = oracle(i);
	test_shared(want);
	test_lifetime();
	test_missing();
	for (int i = 0; i < 2; i++) {
		free(want[i]);
		free(bins[i]);
		free(plain[i]);
	}
	free((char *)debug_dirs[0]);
	return t_done("test_aux");
}
