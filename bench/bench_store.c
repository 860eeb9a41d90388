// SPDX-License-Identifier: MIT
/*
 * bench_store: what asking a DSO for its debuginfo costs, against the
 * designs it replaces, and what the store's index costs at scale.
 *
 * Rows (all measured in this one run, so that their ratios mean something on
 * a shared, noisy machine):
 *   1. ds_dso_debuginfo() on a DSO whose debuginfo is ready: the per-symbol
 *      call, 1 thread and 2 threads (own DSOs, one shared DSO);
 *   2. the global list perf's first debuginfod patch posted (01/15): a list of
 *      {build ID, path} under a mutex, walked per call, path strdup()ed and
 *      stat()ed, caller frees;
 *   3. libdebuginfod answering from its cache, reused client and a client
 *      per call;
 *   4. ds_store_findnew() hits in a store of 100,000 DSOs, beside what one
 *      cache miss costs on this machine (a random hit needs at least one);
 *   5. the heap and RSS one DSO without debuginfo costs, and whether the
 *      last put gives it back.
 * Each figure is the median of several repetitions of a loop sized to take
 * a fixed time.  Every loop counts correct answers and the count is checked,
 * so no call can be optimised away or silently fail.
 */
#define _GNU_SOURCE
#include "benchutil.h"
#include "dsostore.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef DS_HAVE_LIBDEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#define BID_LEN 20 /* what gcc and ld produce (SHA-1) */
#define IDX_N (1u << 18) /* random indexes, read sequentially: cheap */
#define IDX_MASK (IDX_N - 1)
#define MAX_ROWS 48
#define MAX_REPS 31

static struct {
	int reps; /* repetitions of each loop; the median is reported */
	uint64_t rep_ns; /* wall time one repetition aims at */
	unsigned int n_dsos; /* size of the big store */
} cfg = { 15, 40 * 1000 * 1000, 100000 };


/* ------------------------------------------------------------ utilities */


static void random_bytes(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(rng() >> 56);
}

/* "100,000" */
static const char *thousands(unsigned int n)
{
	static char bufs[4][32];
	static int which;
	char *b = bufs[which++ & 3];

	if (n >= 1000000)
		snprintf(b, 32, "%u,%03u,%03u", n / 1000000, n / 1000 % 1000, n % 1000);
	else if (n >= 1000)
		snprintf(b, 32, "%u,%03u", n / 1000, n % 1000);
	else
		snprintf(b, 32, "%u", n);
	return b;
}

/* ----------------------------------------------------------- the harness */

/* A figure: the median of the repetitions, and their spread (NAN for a
 * figure taken once). */
struct result {
	double med, min, max;
};

static struct result once(double v)
{
	return (struct result){ .med = v, .min = NAN, .max = NAN };
}

/* A measured loop: n calls, returns how many answered correctly. */
typedef uint64_t (*loop_fn)(void *arg, uint64_t n);

static void check_answers(uint64_t good, uint64_t n, const char *what)
{
	if (good != n)
		die("%s: %llu of %llu calls answered wrongly", what,
		    (unsigned long long)(n - good), (unsigned long long)n);
}

static double time_loop(loop_fn fn, void *arg, uint64_t n, const char *what)
{
	uint64_t t0 = now_ns();
	uint64_t good = fn(arg, n);
	uint64_t t = now_ns() - t0;

	check_answers(good, n, what);
	return (double)t;
}

/* Iterations for one repetition of cfg.rep_ns; doubles as the warm-up. */
static uint64_t calibrate(loop_fn fn, void *arg, const char *what)
{
	uint64_t n = 1;

	for (;;) {
		double t = time_loop(fn, arg, n, what);

		if (t >= (double)cfg.rep_ns / 8 || n >= (1ull << 40)) {
			double want = (double)n * (double)cfg.rep_ns / (t > 1 ? t : 1);

			return want < 1 ? 1 : (uint64_t)want;
		}
		n *= 2;
	}
}

static struct result median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return (struct result){ .med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2,
				.min = v[0],
				.max = v[n - 1] };
}

/* Median ns per call, one thread. */
static struct result measure(loop_fn fn, void *arg, const char *what)
{
	double per_call[MAX_REPS];
	uint64_t n;

	progress("%s", what);
	n = calibrate(fn, arg, what);
	for (int r = 0; r < cfg.reps; r++)
		per_call[r] = time_loop(fn, arg, n, what) / (double)n;
	return median(per_call, cfg.reps);
}

struct worker {
	loop_fn fn;
	void *arg;
	uint64_t n;
	pthread_barrier_t *start;
	uint64_t ns, good;
};

static void *worker_main(void *p)
{
	struct worker *w = p;
	uint64_t t0;

	pthread_barrier_wait(w->start);
	t0 = now_ns();
	w->good = w->fn(w->arg, w->n);
	w->ns = now_ns() - t0;
	return NULL;
}

/* All threads run n calls at once; returns the mean over threads of each
 * one's ns per call, and the slowest thread's total in *slowest. */
static double threads_once(loop_fn fn, void **args, int nthreads, uint64_t n, const char *what,
			   uint64_t *slowest)
{
	pthread_t tid[8];
	struct worker w[8];
	pthread_barrier_t start;
	double sum = 0;

	pthread_barrier_init(&start, NULL, (unsigned int)nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){ .fn = fn, .arg = args[i], .n = n, .start = &start };
		if (pthread_create(&tid[i], NULL, worker_main, &w[i]) != 0)
			die("pthread_create failed");
	}
	*slowest = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(tid[i], NULL);
		check_answers(w[i].good, n, what);
		sum += (double)w[i].ns / (double)n;
		if (w[i].ns > *slowest)
			*slowest = w[i].ns;
	}
	pthread_barrier_destroy(&start);
	return sum / nthreads;
}

/* Median over repetitions of the per-thread ns per call while all run. */
static struct result measure_threads(loop_fn fn, void **args, int nthreads, const char *what)
{
	double per_call[MAX_REPS];
	uint64_t n, slowest;

	progress("%s", what);
	n = calibrate(fn, args[0], what);
	/* Contention may make a call much slower than alone: resize once. */
	threads_once(fn, args, nthreads, n, what, &slowest);
	if (slowest > cfg.rep_ns)
		n = (uint64_t)((double)n * (double)cfg.rep_ns / (double)slowest) + 1;
	for (int r = 0; r < cfg.reps; r++)
		per_call[r] = threads_once(fn, args, nthreads, n, what, &slowest);
	return median(per_call, cfg.reps);
}

/* ---------------------------------------------------------------- rows */

struct row {
	char key[48]; /* for the BENCH lines */
	char name[96];
	double value; /* NAN: not measured */
	double min, max; /* of the repetitions; NAN: taken once */
	const char *unit;
	bool ratio; /* comparable with the ready path (a time per call) */
	double goal_max; /* 0: no goal */
};

static struct row rows[MAX_ROWS];
static int nrows;
static const char *ref_key = "ready.1t";

static void add_row(const char *key, const char *name, struct result res, const char *unit,
		    bool ratio, double goal_max)
{
	struct row *r;

	if (nrows == MAX_ROWS)
		die("too many rows");
	r = &rows[nrows++];
	snprintf(r->key, sizeof(r->key), "%s", key);
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->value = res.med;
	r->min = res.min;
	r->max = res.max;
	r->unit = unit;
	r->ratio = ratio;
	r->goal_max = goal_max;
}

static const struct row *find_row(const char *key)
{
	for (int i = 0; i < nrows; i++)
		if (!strcmp(rows[i].key, key))
			return &rows[i];
	return NULL;
}

static void fmt_value(double v, char *buf, size_t len)
{
	if (isnan(v))
		snprintf(buf, len, "n/a");
	else if (fabs(v) < 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_ratio(const struct row *r, double ref, char *buf, size_t len)
{
	double x = r->value / ref;

	if (!r->ratio || isnan(r->value) || isnan(ref) || ref <= 0)
		snprintf(buf, len, "-");
	else if (x < 10)
		snprintf(buf, len, "%.2fx", x);
	else if (x < 1000)
		snprintf(buf, len, "%.1fx", x);
	else
		snprintf(buf, len, "%.0fx", x);
}

static const char *goal_verdict(const struct row *r)
{
	if (!r->goal_max)
		return "-";
	if (isnan(r->value))
		return "n/a";
	return r->value <= r->goal_max ? "yes" : "no";
}

static void fmt_goal(const struct row *r, char *buf, size_t len)
{
	char g[32];

	if (!r->goal_max) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_value(r->goal_max, g, sizeof(g));
	snprintf(buf, len, "<= %s %s%s", g, r->unit,
		 isnan(r->value) || r->value <= r->goal_max ? "" : "  MISSED");
}

static void print_rows(void)
{
	const struct row *ref = find_row(ref_key);
	double refv = ref ? ref->value : NAN;
	int wname = (int)strlen("name"), wunit = (int)strlen("unit");
	char v[32], ratio[32], goal[64];

	for (int i = 0; i < nrows; i++) {
		if ((int)strlen(rows[i].name) > wname)
			wname = (int)strlen(rows[i].name);
		if ((int)strlen(rows[i].unit) > wunit)
			wunit = (int)strlen(rows[i].unit);
	}
	printf("dsostore store benchmark: %ld CPUs, load average %s at start, median of %d "
	       "repetitions (~%llu ms each)\n\n",
	       sysconf(_SC_NPROCESSORS_ONLN), load_at_start, cfg.reps,
	       (unsigned long long)(cfg.rep_ns / 1000000));
	printf("%-*s  %10s  %-*s  %10s  %s\n", wname, "name", "value", wunit, "unit", "vs ready",
	       "goal");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		fmt_value(r->value, v, sizeof(v));
		fmt_ratio(r, refv, ratio, sizeof(ratio));
		fmt_goal(r, goal, sizeof(goal));
		printf("%-*s  %10s  %-*s  %10s  %s\n", wname, r->name, v, wunit, r->unit, ratio,
		       goal);
	}
	printf("\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		char lo[32], hi[32];

		fmt_value(r->value, v, sizeof(v));
		fmt_value(r->min, lo, sizeof(lo));
		fmt_value(r->max, hi, sizeof(hi));
		if (isnan(r->min))
			snprintf(lo, sizeof(lo), "-");
		if (isnan(r->max))
			snprintf(hi, sizeof(hi), "-");
		fmt_ratio(r, refv, ratio, sizeof(ratio));
		if (r->goal_max)
			fmt_value(r->goal_max, goal, sizeof(goal));
		else
			snprintf(goal, sizeof(goal), "-");
		printf("BENCH store.%s value=%s unit=%s ratio=%s goal_max=%s met=%s min=%s max=%s\n",
		       r->key, v, r->unit, ratio, goal, goal_verdict(r), lo, hi);
	}
	fflush(stdout);
}

/* ------------------------------------------------- 1. the ready path */

/* The binaries whose debuginfo the DSOs find (in themselves: -g). */
struct prog {
	char *path;
	uint8_t bid[BID_LEN];
	char hex[2 * BID_LEN + 1];
};

static const char prog_src[] = "#include <stdio.h>\n"
			       "static int twice(int x) { return 2 * x; }\n"
			       "int main(int argc, char **argv)\n"
			       "{\n"
			       "\t(void)argv;\n"
			       "\tprintf(\"%d\\n\", twice(argc) + VARIANT);\n"
			       "\treturn 0;\n"
			       "}\n";

/* The build ID is chosen here (ld --build-id=0x...), so it is known
 * without reading it back through the library under test. */
static void compile_prog(struct prog *p, int variant)
{
	const char *cc = getenv("CC");
	char *src = xasprintf("%s/prog.c", tmpdir), *cmd;

	write_file(src, prog_src, sizeof(prog_src) - 1, 0644);
	random_bytes(p->bid, BID_LEN);
	hex(p->bid, BID_LEN, p->hex);
	p->path = xasprintf("%s/prog%d", tmpdir, variant);
	cmd = xasprintf("%s -g -O1 -DVARIANT=%d -Wl,--build-id=0x%s -o '%s' '%s'",
			cc && *cc ? cc : "cc", variant, p->hex, p->path, src);
	run(cmd);
	free(cmd);
	free(src);
}

static struct ds_dso_id prog_id(const struct prog *p)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };

	id.build_id.size = BID_LEN;
	memcpy(id.build_id.data, p->bid, BID_LEN);
	return id;
}

struct ready_job {
	struct ds_dso *dso;
	const struct ds_debuginfo *want;
};

/* The result is used (compared) on every call, and ds_dso_debuginfo() is
 * an external function of a static library built without LTO: the call
 * cannot be hoisted out of the loop. */
static uint64_t loop_ready(void *p, uint64_t n)
{
	const struct ready_job *j = p;
	uint64_t good = 0;

	for (uint64_t i = 0; i < n; i++) {
		const struct ds_debuginfo *di = NULL;

		good += ds_dso_debuginfo(j->dso, &di) == 0 && di == j->want;
	}
	return good;
}

static struct ready_job make_ready(struct ds_store *store, const struct prog *p)
{
	struct ds_dso_id id = prog_id(p);
	struct ready_job j = { .dso = ds_store_findnew(store, p->path, &id) };
	char why[512];
	int rc;

	if (!j.dso)
		die("ds_store_findnew %s: %s", p->path, strerror(errno));
	rc = ds_dso_debuginfo(j.dso, &j.want);
	if (rc < 0) {
		ds_dso_error(j.dso, why, sizeof(why));
		die("ds_dso_debuginfo %s: %s (%s)", p->path, ds_strerror(rc), why);
	}
	if (ds_debuginfo_source(j.want) != DS_SOURCE_SELF)
		die("%s: debuginfo came from %s, not the binary itself", p->path,
		    ds_source_name(ds_debuginfo_source(j.want)));
	return j;
}

/* The first call on a fresh DSO: the local search and the open. */
static struct result measure_first_call(struct ds_context *ctx, const struct prog *p)
{
	double t[MAX_REPS];
	struct ds_dso_id id = prog_id(p);

	progress("first call");
	for (int r = 0; r < cfg.reps; r++) {
		struct ds_store *s = ds_store_new(ctx, "first", NULL);
		struct ds_dso *d = s ? ds_store_findnew(s, p->path, &id) : NULL;
		const struct ds_debuginfo *di;
		uint64_t t0;
		int rc;

		if (!d)
			die("store setup: %s", strerror(errno));
		t0 = now_ns();
		rc = ds_dso_debuginfo(d, &di);
		t[r] = (double)(now_ns() - t0);
		if (rc < 0)
			die("first ds_dso_debuginfo: %s", ds_strerror(rc));
		ds_dso_put(d);
		ds_store_free(s);
	}
	return median(t, cfg.reps);
}

static void bench_ready(struct ds_context *ctx, const struct prog *a, const struct prog *b)
{
	struct ds_store *store = ds_store_new(ctx, "host", NULL);
	struct ready_job ja, jb;
	void *own[2], *shared[2];

	if (!store)
		die("ds_store_new: %s", strerror(errno));
	ja = make_ready(store, a);
	jb = make_ready(store, b);
	own[0] = &ja;
	own[1] = &jb;
	shared[0] = shared[1] = &ja;

	add_row("ready.1t", "ready ds_dso_debuginfo, 1 thread",
		measure(loop_ready, &ja, "ready 1 thread"), "ns/call", true, 10);
	add_row("ready.2t_own", "ready ds_dso_debuginfo, 2 threads, own DSOs",
		measure_threads(loop_ready, own, 2, "ready 2 threads own"), "ns/call", true, 10);
	add_row("ready.2t_shared", "ready ds_dso_debuginfo, 2 threads, same DSO",
		measure_threads(loop_ready, shared, 2, "ready 2 threads shared"), "ns/call", true,
		10);
	add_row("first_call", "first ds_dso_debuginfo (local search: self)",
		measure_first_call(ctx, a), "ns/call", true, 0);
	ds_dso_put(ja.dso);
	ds_dso_put(jb.dso);
	ds_store_free(store);
}

/* ----------------------------------- 2. the global list, faithfully */

/*
 * perf patch 01/15 as posted: the build IDs fetched in the session and the
 * path that came back for each, in one global list under the fetch lock;
 * a lookup walks it comparing build IDs, strdup()s the path and checks the
 * file is still there (the client's cache may be cleaned from under us)
 * before handing it out; the caller frees it.  Types and names follow
 * perf's (struct build_id, list_head, build_id__cmp).
 */
#define SEED_BUILD_ID_SIZE 20

struct glist_build_id {
	uint8_t data[SEED_BUILD_ID_SIZE];
	size_t size;
};

struct list_head {
	struct list_head *next, *prev;
};

struct debuginfo_lookup {
	struct list_head node;
	struct glist_build_id bid;
	char *path;
};

static struct list_head debuginfo_lookups = { &debuginfo_lookups, &debuginfo_lookups };
static pthread_mutex_t debuginfod__fetch_lock = PTHREAD_MUTEX_INITIALIZER;

static int build_id__cmp(const struct glist_build_id *a, const struct glist_build_id *b)
{
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return memcmp(a->data, b->data, a->size);
}

static void list_add_tail(struct list_head *node, struct list_head *head)
{
	node->prev = head->prev;
	node->next = head;
	head->prev->next = node;
	head->prev = node;
}

static void glist_remember(const struct glist_build_id *bid, const char *path)
{
	struct debuginfo_lookup *l = xcalloc(1, sizeof(*l));

	l->bid = *bid;
	l->path = strdup(path);
	if (!l->path)
		die("out of memory");
	pthread_mutex_lock(&debuginfod__fetch_lock);
	list_add_tail(&l->node, &debuginfo_lookups);
	pthread_mutex_unlock(&debuginfod__fetch_lock);
}

/* The per-symbol call of that design: a malloc()ed path or NULL. */
static char *glist_cached_path(const struct glist_build_id *bid)
{
	struct list_head *pos;
	char *path = NULL;
	struct stat st;

	pthread_mutex_lock(&debuginfod__fetch_lock);
	for (pos = debuginfo_lookups.next; pos != &debuginfo_lookups; pos = pos->next) {
		struct debuginfo_lookup *l = (struct debuginfo_lookup *)pos; /* node is first */

		if (build_id__cmp(&l->bid, bid) == 0) {
			path = strdup(l->path);
			break;
		}
	}
	pthread_mutex_unlock(&debuginfod__fetch_lock);
	if (path && stat(path, &st) != 0) {
		free(path);
		path = NULL;
	}
	return path;
}

static void glist_forget_all(void)
{
	struct list_head *pos = debuginfo_lookups.next;

	while (pos != &debuginfo_lookups) {
		struct debuginfo_lookup *l = (struct debuginfo_lookup *)pos;

		pos = pos->next;
		free(l->path);
		free(l);
	}
	debuginfo_lookups.next = debuginfo_lookups.prev = &debuginfo_lookups;
}

struct glist_job {
	const struct glist_build_id *keys; /* the caller's copies, not the list's */
	const uint32_t *idx;
	bool worst;
	uint32_t last;
};

static uint64_t loop_glist(void *p, uint64_t n)
{
	const struct glist_job *j = p;
	uint64_t good = 0;

	for (uint64_t i = 0; i < n; i++) {
		uint32_t k = j->worst ? j->last : j->idx[i & IDX_MASK];
		char *path = glist_cached_path(&j->keys[k]);

		good += path != NULL;
		free(path);
	}
	return good;
}

/* Files as the debuginfod client caches them, so that stat() succeeds the
 * way it would: <cache>/<hex>/debuginfo.  Made relative to the cache's fd,
 * which keeps the setup of 10,000 of them short. */
static char **make_glist_files(const struct glist_build_id *keys, unsigned int n)
{
	char *root = xasprintf("%s/glist-cache", tmpdir);
	char **paths = xcalloc(1, n * sizeof(*paths));
	char h[2 * SEED_BUILD_ID_SIZE + 1], rel[2 * SEED_BUILD_ID_SIZE + 16];
	int rootfd, fd;

	if (mkdir(root, 0700) != 0 || (rootfd = open(root, O_RDONLY | O_DIRECTORY)) < 0)
		die("mkdir %s: %s", root, strerror(errno));
	for (unsigned int i = 0; i < n; i++) {
		hex(keys[i].data, keys[i].size, h);
		snprintf(rel, sizeof(rel), "%s/debuginfo", h);
		if (mkdirat(rootfd, h, 0700) != 0 ||
		    (fd = openat(rootfd, rel, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400)) < 0)
			die("create %s/%s: %s", root, rel, strerror(errno));
		close(fd);
		paths[i] = xasprintf("%s/%s", root, rel);
	}
	close(rootfd);
	free(root);
	return paths;
}

static void bench_glist(void)
{
	static const unsigned int sizes[] = { 10, 1000, 10000 };
	const unsigned int max = 10000;
	struct glist_build_id *keys = xcalloc(1, max * sizeof(*keys));
	uint32_t *idx = xcalloc(1, IDX_N * sizeof(*idx));
	char **paths;

	for (unsigned int i = 0; i < max; i++) {
		keys[i].size = SEED_BUILD_ID_SIZE;
		random_bytes(keys[i].data, SEED_BUILD_ID_SIZE);
	}
	progress("creating the global list's cache files");
	paths = make_glist_files(keys, max);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		unsigned int n = sizes[s];
		struct glist_job j = { .keys = keys, .idx = idx, .last = n - 1 };
		char key[48], name[96];

		for (unsigned int i = 0; i < n; i++)
			glist_remember(&keys[i], paths[i]);
		for (uint32_t i = 0; i < IDX_N; i++)
			idx[i] = (uint32_t)(rng() % n);

		j.worst = true;
		snprintf(key, sizeof(key), "glist.%u.last", n);
		snprintf(name, sizeof(name), "global list, %s IDs, last inserted", thousands(n));
		add_row(key, name, measure(loop_glist, &j, name), "ns/call", true, 0);
		j.worst = false;
		snprintf(key, sizeof(key), "glist.%u.random", n);
		snprintf(name, sizeof(name), "global list, %s IDs, random", thousands(n));
		add_row(key, name, measure(loop_glist, &j, name), "ns/call", true, 0);
		glist_forget_all();
	}
	for (unsigned int i = 0; i < max; i++)
		free(paths[i]);
	free(paths);
	free(idx);
	free(keys);
}

/* ------------------------------------- 3. libdebuginfod from its cache */

#ifdef DS_HAVE_LIBDEBUGINFOD
static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ssize_t n;

	if (in < 0 || out < 0)
		die("copy %s to %s: %s", from, to, strerror(errno));
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			die("write %s: %s", to, strerror(errno));
	if (n < 0 || fchmod(out, mode) != 0 || close(out) != 0)
		die("copy %s: %s", to, strerror(errno));
	close(in);
}

struct dfd_job {
	debuginfod_client *client; /* NULL: begin/end per call */
	const uint8_t *bid;
};

static uint64_t loop_debuginfod(void *p, uint64_t n)
{
	const struct dfd_job *j = p;
	uint64_t good = 0;

	for (uint64_t i = 0; i < n; i++) {
		debuginfod_client *c = j->client ? j->client : debuginfod_begin();
		char *path = NULL;
		int fd = c ? debuginfod_find_debuginfo(c, j->bid, BID_LEN, &path) : -ENOMEM;

		if (fd >= 0) {
			good++;
			close(fd);
		}
		free(path);
		if (!j->client && c)
			debuginfod_end(c);
	}
	return good;
}

/* One call, checked: the cached file itself must come back. */
static void verify_debuginfod(debuginfod_client *c, const struct prog *p, const char *want)
{
	struct stat got, exp;
	char *path = NULL;
	int fd = debuginfod_find_debuginfo(c, p->bid, BID_LEN, &path);

	if (fd < 0)
		die("debuginfod_find_debuginfo from cache: %s", strerror(-fd));
	if (fstat(fd, &got) != 0 || stat(want, &exp) != 0 || got.st_ino != exp.st_ino ||
	    got.st_dev != exp.st_dev || !path || strcmp(path, want) != 0)
		die("debuginfod_find_debuginfo returned %s, not the cached %s", path ? path : "?",
		    want);
	close(fd);
	free(path);
}

static void bench_debuginfod(const struct prog *p)
{
	char *cache = xasprintf("%s/debuginfod-cache", tmpdir);
	char *dir = xasprintf("%s/%s", cache, p->hex);
	char *file = xasprintf("%s/debuginfo", dir);
	struct dfd_job j = { .bid = p->bid };

	if (mkdir(cache, 0700) != 0 || mkdir(dir, 0700) != 0)
		die("mkdir %s: %s", dir, strerror(errno));
	copy_file(p->path, file, 0400);
	/* A server that refuses at once, on loopback: never the network, and
	 * a cache miss would show as a failed call, which is checked. */
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	setenv("DEBUGINFOD_URLS", "http://127.0.0.1:9", 1);
	unsetenv("DEBUGINFOD_VERBOSE");
	unsetenv("DEBUGINFOD_PROGRESS");

	j.client = debuginfod_begin();
	if (!j.client)
		die("debuginfod_begin failed");
	verify_debuginfod(j.client, p, file);
	add_row("debuginfod.reused", "libdebuginfod cached find, reused client",
		measure(loop_debuginfod, &j, "debuginfod reused"), "ns/call", true, 0);
	debuginfod_end(j.client);
	j.client = NULL;
	add_row("debuginfod.begin_end", "libdebuginfod cached find, begin/end per call",
		measure(loop_debuginfod, &j, "debuginfod begin/end"), "ns/call", true, 0);
	free(file);
	free(dir);
	free(cache);
}
#else
static void bench_debuginfod(const struct prog *p)
{
	fprintf(stderr, "bench_store: built without libdebuginfod (pkg-config libdebuginfod)\n");
	add_row("debuginfod.reused", "libdebuginfod cached find, reused client", once(NAN), "ns/call",
		true, 0);
	add_row("debuginfod.begin_end", "libdebuginfod cached find, begin/end per call", once(NAN),
		"ns/call", true, 0);
}
#endif

/* ------------------------------- 4 and 5. the store at 100,000 DSOs */

struct mem {
	double heap; /* bytes in use by malloc, mmapped chunks included */
	double rss;
};

static struct mem mem_now(void)
{
	struct mallinfo2 mi = mallinfo2();
	struct mem m = { .heap = (double)(mi.uordblks + mi.hblkhd) };
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	m.rss = (double)resident * (double)sysconf(_SC_PAGESIZE);
	return m;
}

enum lookup_by { BY_BUILD_ID, BY_PATH, BY_BOTH };

struct big_store {
	struct ds_store *store;
	struct ds_dso **refs; /* one reference per DSO, held throughout */
};

struct lookup_job {
	const struct big_store *bs;
	const uint8_t (*bids)[BID_LEN];
	char *const *paths;
	const uint32_t *idx;
	uint32_t idx_off; /* threads look up different sequences */
	enum lookup_by by;
};

static uint64_t loop_lookup(void *p, uint64_t n)
{
	const struct lookup_job *j = p;
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	uint64_t good = 0;

	id.build_id.size = BID_LEN;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t k = j->idx[(i + j->idx_off) & IDX_MASK];
		const struct ds_dso_id *idp = NULL;
		const char *path = NULL;
		struct ds_dso *d;

		if (j->by != BY_PATH) {
			memcpy(id.build_id.data, j->bids[k], BID_LEN);
			idp = &id;
		}
		if (j->by != BY_BUILD_ID)
			path = j->paths[k];
		d = ds_store_findnew(j->bs->store, path, idp);
		good += d == j->bs->refs[k];
		if (d)
			ds_dso_put(d);
	}
	return good;
}

/* Creates cfg.n_dsos DSOs, keeping a reference to each; adds the rows for
 * the creation time and the memory they take. */
static void fill_store(struct ds_context *ctx, struct big_store *bs, const uint8_t (*bids)[BID_LEN],
		       char *const *paths, const char *key, const char *what)
{
	unsigned int n = cfg.n_dsos;
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	struct ds_store_stats st;
	struct mem m0, m1;
	char k[48], name[96];
	uint64_t t0, t;

	id.build_id.size = BID_LEN;
	bs->refs = xcalloc(1, n * sizeof(*bs->refs));
	progress("%s", what);
	m0 = mem_now();
	t0 = now_ns();
	bs->store = ds_store_new(ctx, key, NULL);
	if (!bs->store)
		die("ds_store_new: %s", strerror(errno));
	for (unsigned int i = 0; i < n; i++) {
		memcpy(id.build_id.data, bids[i], BID_LEN);
		bs->refs[i] = ds_store_findnew(bs->store, paths ? paths[i] : NULL, &id);
		if (!bs->refs[i])
			die("ds_store_findnew #%u: %s", i, strerror(errno));
	}
	t = now_ns() - t0;
	m1 = mem_now();
	ds_store_stats(bs->store, &st);
	if (st.dsos != n)
		fprintf(stderr, "bench_store: %s: ds_store_stats says %llu DSOs, %u were created\n",
			what, (unsigned long long)st.dsos, n);

	snprintf(k, sizeof(k), "create.%s", key);
	snprintf(name, sizeof(name), "findnew creating %s DSOs, %s (1 run)", thousands(n), what);
	add_row(k, name, once((double)t / n), "ns/DSO", true, 0);
	snprintf(k, sizeof(k), "mem.%s.heap", key);
	snprintf(name, sizeof(name), "memory per DSO, %s, heap (mallinfo2)", what);
	add_row(k, name, once((m1.heap - m0.heap) / n), "bytes/DSO", false, 0);
	snprintf(k, sizeof(k), "mem.%s.rss", key);
	snprintf(name, sizeof(name), "memory per DSO, %s, RSS (statm)", what);
	add_row(k, name, once((m1.rss - m0.rss) / n), "bytes/DSO", false, 0);
}

/* Drops the store handle, then every reference: all of it must go. */
static void empty_store(struct big_store *bs)
{
	ds_store_free(bs->store);
	for (unsigned int i = 0; i < cfg.n_dsos; i++)
		ds_dso_put(bs->refs[i]);
	free(bs->refs);
}

static void bench_big_store(struct ds_context *ctx)
{
	unsigned int n = cfg.n_dsos;
	uint8_t (*bids)[BID_LEN] = xcalloc(1, n * sizeof(*bids));
	uint8_t (*bids2)[BID_LEN] = xcalloc(1, n * sizeof(*bids2));
	char **paths = xcalloc(1, n * sizeof(*paths));
	uint32_t *idx = xcalloc(1, IDX_N * sizeof(*idx));
	struct big_store a = { 0 }, b = { 0 };
	struct lookup_job j[2];
	void *args[2] = { &j[0], &j[1] };
	struct mem before;
	char name[96];

	for (unsigned int i = 0; i < n; i++) {
		random_bytes(bids[i], BID_LEN);
		random_bytes(bids2[i], BID_LEN);
		paths[i] = xasprintf("/usr/lib/x86_64-linux-gnu/dsostore-bench/lib%06u.so.1", i);
	}
	for (uint32_t i = 0; i < IDX_N; i++)
		idx[i] = (uint32_t)(rng() % n);

	before = mem_now();
	fill_store(ctx, &a, (const uint8_t(*)[BID_LEN])bids, NULL, "bid", "build ID only");
	fill_store(ctx, &b, (const uint8_t(*)[BID_LEN])bids2, paths, "path", "path + build ID");

	j[0] = (struct lookup_job){ .bs = &a, .bids = (const uint8_t(*)[BID_LEN])bids,
				    .idx = idx, .by = BY_BUILD_ID };
	j[1] = j[0];
	j[1].idx_off = IDX_N / 2;
	snprintf(name, sizeof(name), "findnew hit by build ID, %s DSOs, random", thousands(n));
	add_row("findnew.bid.1t", name, measure(loop_lookup, &j[0], name), "ns/call", true, 200);
	snprintf(name, sizeof(name), "findnew hit by build ID, %s DSOs, 2 threads", thousands(n));
	add_row("findnew.bid.2t", name, measure_threads(loop_lookup, args, 2, name), "ns/call",
		true, 200);

	j[0] = (struct lookup_job){ .bs = &b, .bids = (const uint8_t(*)[BID_LEN])bids2,
				    .paths = paths, .idx = idx, .by = BY_PATH };
	snprintf(name, sizeof(name), "findnew hit by path, %s DSOs, random", thousands(n));
	add_row("findnew.path.1t", name, measure(loop_lookup, &j[0], name), "ns/call", true, 0);
	j[0].by = BY_BOTH;
	snprintf(name, sizeof(name), "findnew hit by path + build ID, %s DSOs", thousands(n));
	add_row("findnew.both.1t", name, measure(loop_lookup, &j[0], name), "ns/call", true, 0);

	empty_store(&a);
	empty_store(&b);
	/* What the stores still hold after everything was put: should be ~0. */
	add_row("mem.leftover", "heap still held after the last put",
		once((mem_now().heap - before.heap) / (2.0 * n)), "bytes/DSO", false, 0);
	for (unsigned int i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(idx);
	free(bids2);
	free(bids);
}

/* What one cache miss costs on this machine, over about the memory the big
 * store takes: a random lookup in it can hardly cost less than one, so this
 * says whether a missed findnew goal is the store's doing or the machine's. */
struct chase_job {
	const uint32_t *next; /* one entry per 64-byte line: next[16 * i] */
};

static uint64_t loop_chase(void *p, uint64_t n)
{
	const struct chase_job *j = p;
	uint32_t at = 0;

	for (uint64_t i = 0; i < n; i++)
		at = j->next[(size_t)at * 16];
	return n - (at == UINT32_MAX); /* uses the result; never true */
}

static void bench_memory_latency(void)
{
	size_t lines = (size_t)cfg.n_dsos * 320 / 64;
	uint32_t *next = xcalloc(1, lines * 64);
	struct chase_job j = { .next = next };
	char name[96];

	/* Sattolo's shuffle: one cycle through every line, in random order. */
	for (size_t i = 0; i < lines; i++)
		next[16 * i] = (uint32_t)i;
	for (size_t i = lines - 1; i > 0; i--) {
		size_t k = rng() % i;
		uint32_t t = next[16 * i];

		next[16 * i] = next[16 * k];
		next[16 * k] = t;
	}
	snprintf(name, sizeof(name), "reference: dependent load, random in %zu MB", lines * 64 >> 20);
	add_row("ref.miss", name, measure(loop_chase, &j, name), "ns/load", true, 0);
	free(next);
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_store [-q] [-v]\n"
		   "  -q  quick: few, short repetitions and 10,000 DSOs (a smoke run)\n"
		   "  -v  say what is being measured on stderr\n");
}

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "qvh")) != -1) {
		switch (c) {
		case 'q':
			cfg.reps = 3;
			cfg.rep_ns = 2 * 1000 * 1000;
			cfg.n_dsos = 10000;
			break;
		case 'v':
			bench_verbose = true;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(2);
		}
	}
}

/* Rows are measured in the order that keeps the memory figures clean (the
 * big store first, on a heap not yet churned) but printed in this order. */
static const char *const row_order[] = { "ready.", "first_call", "glist.", "debuginfod.",
					 "findnew.",   "ref.",       "create.",    "mem." };

static void sort_rows(void)
{
	struct row sorted[MAX_ROWS];
	int n = 0;

	for (size_t o = 0; o < sizeof(row_order) / sizeof(row_order[0]); o++)
		for (int i = 0; i < nrows; i++)
			if (!strncmp(rows[i].key, row_order[o], strlen(row_order[o])))
				sorted[n++] = rows[i];
	if (n != nrows)
		die("a row has no place in row_order");
	memcpy(rows, sorted, sizeof(rows[0]) * (size_t)n);
}

int main(int argc, char **argv)
{
	struct prog a, b;
	char *empty;
	const char *dirs[2];
	struct ds_context *ctx;

	bench_name = "bench_store";
	parse_args(argc, argv);
	read_load();
	progress("compiling the test programs");
	make_tmpdir("dsostore-bench");
	compile_prog(&a, 1);
	compile_prog(&b, 2);
	/* No debug dir holds anything and perf's cache is off: the DSOs find
	 * their debuginfo in themselves, and nothing of the machine's leaks in. */
	empty = xasprintf("%s/empty-debug-dir", tmpdir);
	if (mkdir(empty, 0700) != 0)
		die("mkdir %s: %s", empty, strerror(errno));
	dirs[0] = empty;
	dirs[1] = NULL;
	DS_OPTS(ds_context_opts, copts, .debug_dirs = dirs, .perf_buildid_dir = "");
	ctx = ds_context_new(&copts);
	if (!ctx)
		die("ds_context_new: %s", strerror(errno));

	bench_big_store(ctx);
	bench_memory_latency();
	bench_ready(ctx, &a, &b);
	bench_glist();
	bench_debuginfod(&a);
	ds_context_free(ctx);

	progress("done; removing the temporary directory");
	sort_rows();
	print_rows();
	free(empty);
	free(a.path);
	free(b.path);
	return 0;
}
