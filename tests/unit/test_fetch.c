/* SPDX-License-Identifier: MIT */
/* The debuginfod client under concurrency and inside the store: one request
 * per build ID however many threads, batches and stores ask (1, 2);
 * prefetch of a whole store (3); a cache directory deleted under an opened
 * debuginfo (5); callers that cancel and ask again (6); a warm run that
 * makes no request (7); a caller's extra request headers, and none of a
 * call that joins a job in flight (8); ima: words and ima_cert_path in
 * ds_context_opts, and the headers kept beside a file (9);
 * ds_fetch_start() (10), and its done_body, given a small file from
 * memory (11).  Several processes on one cache (4) is
 * tests/cli/fetch_procs.sh.  Meant to run under SANITIZE=thread and
 * SANITIZE=address,undefined as much as to check the counts.
 *
 * Server: our dsserver (tests/server), started here with 50 ms of latency
 * per request, so that requests overlap and joins happen.  Request counts
 * come from its /control/stats (counted on arrival), never from the
 * library's own statistics alone.
 *
 * Fixtures: one small -g program linked once with a template build ID;
 * copies get their own build ID patched into the note (the only place the
 * 20 bytes occur), and readelf confirms every copy's build ID. */
#define _GNU_SOURCE
#include "dsostore.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TEMPLATE_HEX "f7e5d0c1a2b3c4d5e6f708192a3b4c5d6e7f8091"

/* Fixture groups; each gets its own build IDs (byte 1 of the ID). */
#define N_MANY	      50 /* case 1 and the warm run: served */
#define N_PREF	      30 /* case 3: one third each local, served, nowhere */
#define N_CANCEL      16 /* case 6: the server hangs on them */
#define N_ASYNC	      6	 /* ds_fetch_start()'s cases; the first four asked ASYNC_ASKS times */
#define ASYNC_ASKS    4
#define N_BODY	      3	 /* case 11: a small file, a poisoned one, one over DS_FETCH_BODY_MAX */
#define NTHREADS      8
#define NSTORES	      4
#define CANCEL_ROUNDS 100

enum group { G_MANY = 1, G_STORES, G_PREF, G_GONE, G_CANCEL, G_ASYNC, G_BODY };

struct fix {
	struct ds_build_id bid;
	char hex[2 * DS_BUILD_ID_MAX + 1];
	char *file; /* where the copy is (served dir or debug tree); NULL: nowhere */
};

static struct fix many[N_MANY], stores_fix, pref[N_PREF], gone_fix, cancel_fix[N_CANCEL];
static struct fix async_fix[N_ASYNC], async_none, body_fix[N_BODY];
static char *served_dir, *debug_dir, *empty_dir;
static pid_t server_pid = -1;
static int server_port;
static char server_url[64];

static const char prog_src[] =
    "#include <stdio.h>\n"
    "static int cube(int x) { return x * x * x; }\n"
    "int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += cube(i); return s; }\n"
    "int main(int argc, char **argv) { (void)argv; printf(\"%d\\n\", sum(argc)); return 0; }\n";

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------- fixtures */

/* A copy of the template program with the build ID replaced. */
static void write_copy(const char *tmpl, size_t len, const char *dst, const struct ds_build_id *bid)
{
	struct ds_build_id t;
	char *buf = malloc(len), *hit;
	int fd;

	memcpy(buf, tmpl, len);
	t_hex_to_bid(TEMPLATE_HEX, &t);
	hit = memmem(buf, len, t.data, t.size);
	memcpy(hit, bid->data, bid->size);
	t_mkdir_parents(dst);
	fd = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) != 0) {
		perror(dst);
		exit(1);
	}
	free(buf);
}

static void fix_init(struct fix *f, enum group g, int i)
{
	/* As long as the template's: the copy replaces exactly its bytes. */
	snprintf(f->hex, sizeof(f->hex), "f7%02x%04x5eed0123456789abcdef0123456789ab", g, i);
	t_hex_to_bid(f->hex, &f->bid);
	if (strlen(f->hex) != strlen(TEMPLATE_HEX))
		abort();
}

/* Served copy under the server's directory. */
static void fix_served(struct fix *f, const char *tmpl, size_t len)
{
	f->file = t_path("served/%s", f->hex);
	write_copy(tmpl, len, f->file, &f->bid);
}

/* Local copy in <debug>/.build-id/xx/rest.debug. */
static void fix_local(struct fix *f, const char *tmpl, size_t len)
{
	f->file = t_path("debug/.build-id/%.2s/%s.debug", f->hex, f->hex + 2);
	write_copy(tmpl, len, f->file, &f->bid);
}

/* Every copy's build ID as binutils' readelf reads it, in one run. */
static void confirm_build_ids(struct fix **all, int n)
{
	size_t cap = 64 + (size_t)n * 300, len = 0;
	char *cmd = malloc(cap), line[1024], file[512] = "";
	int seen = 0;
	FILE *p;

	len += snprintf(cmd + len, cap - len, "LC_ALL=C readelf -n 2>/dev/null");
	for (int i = 0; i < n; i++)
		len += snprintf(cmd + len, cap - len, " '%s'", all[i]->file);
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char hex[200];
		struct ds_build_id got;

		if (sscanf(line, "File: %511s", file) == 1)
			continue;
		if (sscanf(line, " Build ID: %199s", hex) != 1)
			continue;
		t_hex_to_bid(hex, &got);
		for (int i = 0; i < n; i++)
			if (!strcmp(file, all[i]->file)) {
				CHECK(t_same_bid(&got, &all[i]->bid));
				seen++;
			}
	}
	if (!p || pclose(p) != 0 || seen != n) {
		fprintf(stderr, "readelf -n confirmed %d of %d build IDs\n", seen, n);
		exit(1);
	}
	free(cmd);
}

static void setup_fixtures(void)
{
	char *src = t_path("prog.c"), *prog = t_path("prog");
	struct fix *all[N_MANY + N_PREF + N_ASYNC + N_BODY + 2];
	size_t len;
	char *tmpl;
	int n = 0;

	if (t_sh("{ command -v gcc && command -v readelf; } >/dev/null") != 0) {
		fprintf(stderr, "SKIP: gcc or readelf is not installed\n");
		exit(77);
	}
	t_write_file(src, prog_src);
	if (t_sh("gcc -g -O1 -Wl,--build-id=0x" TEMPLATE_HEX " -o '%s' '%s'", prog, src) != 0) {
		fprintf(stderr, "building the fixture program failed\n");
		exit(1);
	}
	tmpl = t_read_all(prog, &len);
	{
		struct ds_build_id t;
		char *hit;

		t_hex_to_bid(TEMPLATE_HEX, &t);
		hit = memmem(tmpl, len, t.data, t.size);
		if (!hit || memmem(hit + 1, len - (hit + 1 - tmpl), t.data, t.size)) {
			fprintf(stderr, "the template build ID is not in %s exactly once\n", prog);
			exit(1);
		}
	}
	served_dir = t_path("served");
	debug_dir = t_path("debug");
	empty_dir = t_path("empty");
	mkdir(served_dir, 0755);
	mkdir(debug_dir, 0755);
	mkdir(empty_dir, 0755);

	for (int i = 0; i < N_MANY; i++) {
		fix_init(&many[i], G_MANY, i);
		fix_served(&many[i], tmpl, len);
		all[n++] = &many[i];
	}
	fix_init(&stores_fix, G_STORES, 0);
	fix_served(&stores_fix, tmpl, len);
	all[n++] = &stores_fix;
	/* Case 3: i % 3 == 0 local, 1 served, 2 nowhere. */
	for (int i = 0; i < N_PREF; i++) {
		fix_init(&pref[i], G_PREF, i);
		if (i % 3 == 0)
			fix_local(&pref[i], tmpl, len);
		else if (i % 3 == 1)
			fix_served(&pref[i], tmpl, len);
		if (pref[i].file)
			all[n++] = &pref[i];
	}
	fix_init(&gone_fix, G_GONE, 0);
	fix_served(&gone_fix, tmpl, len);
	all[n++] = &gone_fix;
	for (int i = 0; i < N_CANCEL; i++) /* the server hangs on them */
		fix_init(&cancel_fix[i], G_CANCEL, i);
	for (int i = 0; i < N_ASYNC; i++) {
		fix_init(&async_fix[i], G_ASYNC, i);
		fix_served(&async_fix[i], tmpl, len);
		all[n++] = &async_fix[i];
	}
	fix_init(&async_none, G_ASYNC, N_ASYNC); /* served by nobody */
	/* Case 11: two copies of the template, held in memory whole by a
	 * download (the test checks it is that small), and a program with
	 * 200 KB of data, built with its build ID, which is not. */
	for (int i = 0; i < N_BODY; i++)
		fix_init(&body_fix[i], G_BODY, i);
	fix_served(&body_fix[0], tmpl, len);
	fix_served(&body_fix[1], tmpl, len);
	body_fix[2].file = t_path("served/%s", body_fix[2].hex);
	t_write_file(src, "const char big[200000] = { 1 };\n"
			  "int main(int argc, char **argv) { (void)argv; return big[argc * 4096]; }\n");
	if (t_sh("gcc -g -O1 -Wl,--build-id=0x%s -o '%s' '%s'", body_fix[2].hex, body_fix[2].file,
		 src) != 0) {
		fprintf(stderr, "building the large fixture program failed\n");
		exit(1);
	}
	for (int i = 0; i < N_BODY; i++)
		all[n++] = &body_fix[i];
	confirm_build_ids(all, n);
	free(tmpl);
	free(src);
	free(prog);
}

/* --------------------------------------------------------------- server */

static void server_stop(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
		server_pid = -1;
	}
}

static char *server_exe(void)
{
	const char *env = getenv("DSSERVER"), *build = getenv("DS_BUILD");
	char *exe = NULL;

	if (env && *env)
		return strdup(env);
	if (asprintf(&exe, "%s/dsserver", build ? build : "build") < 0)
		exit(2);
	return exe;
}

/* Started before any thread exists; --die-with-parent covers a crash. */
static void server_start(void)
{
	char *exe = server_exe(), *port_file = t_path("port"), *log = t_path("server.log");
	double deadline = now_s() + 20;

	if (access(exe, X_OK) != 0) {
		fprintf(stderr, "FAIL: no dsserver at %s (build it with make)\n", exe);
		exit(1);
	}
	server_pid = fork();
	if (server_pid < 0) {
		perror("fork");
		exit(2);
	}
	if (server_pid == 0) {
		execl(exe, exe, "--port-file", port_file, "--log", log, "--log-header",
		      "X-Forwarded-For", "--max-runtime", "120", "--die-with-parent", "--fault",
		      "*:latency=50", served_dir, (char *)NULL);
		perror(exe);
		_exit(127);
	}
	atexit(server_stop);
	for (;;) {
		FILE *f = fopen(port_file, "r");
		int status;

		if (f) {
			int ok = fscanf(f, "%d", &server_port) == 1;

			fclose(f);
			if (ok)
				break;
		}
		if (waitpid(server_pid, &status, WNOHANG) == server_pid) {
			server_pid = -1;
			fprintf(stderr, "FAIL: dsserver exited before it was ready\n");
			exit(1);
		}
		if (now_s() > deadline) {
			fprintf(stderr, "FAIL: dsserver not ready after 20 s\n");
			exit(1);
		}
		usleep(20000);
	}
	snprintf(server_url, sizeof(server_url), "http://127.0.0.1:%d", server_port);
	free(exe);
	free(port_file);
	free(log);
}

/* GET a control URL; the body, malloc()ed, or NULL unless the answer is 200. */
static char *server_get(const char *path)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(server_port)};
	char *buf = NULL, *body;
	size_t len = 0, cap = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FILE *req;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		perror("connect to dsserver");
		exit(1);
	}
	req = fdopen(dup(fd), "w");
	fprintf(req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	fclose(req);
	for (;;) {
		ssize_t r;

		if (len + 1024 > cap) {
			cap = cap ? 2 * cap : 4096;
			buf = realloc(buf, cap);
		}
		r = read(fd, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	if (!buf)
		return NULL;
	buf[len] = 0;
	body = strstr(buf, "\r\n\r\n");
	if (strncmp(buf, "HTTP/1.", 7) || strncmp(buf + 8, " 200", 4) || !body) {
		fprintf(stderr, "dsserver: GET %s: %.60s\n", path, buf);
		free(buf);
		return NULL;
	}
	body = strdup(body + 4);
	free(buf);
	return body;
}

static void server_reset_stats(void)
{
	free(server_get("/control/reset-stats"));
}

/* Requests received since the last reset. */
static long server_requests(void)
{
	char *body = server_get("/control/stats");
	long n = -1;

	if (!body || sscanf(body, "requests %ld", &n) != 1)
		fprintf(stderr, "dsserver: no request count in /control/stats\n");
	free(body);
	return n;
}

/* Requests for one build ID's debuginfo since the last reset. */
static long server_count(const struct fix *f)
{
	char path[256], *body;
	long n = -1;

	snprintf(path, sizeof(path), "/control/stats?url=/buildid/%s/debuginfo", f->hex);
	body = server_get(path);
	if (!body || sscanf(body, "%ld", &n) != 1)
		fprintf(stderr, "dsserver: no count for %s\n", f->hex);
	free(body);
	return n;
}

/* -------------------------------------------------------------- helpers */

static void log_stderr(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	fprintf(stderr, "  lib[%d]: %s\n", (int)level, msg);
}

/* A context on our server and the given cache, local search confined to
 * dirs (default: an empty directory), perf's cache off. */
static struct ds_context *new_context(const char *cache, const char *debug)
{
	const char *dirs[2] = {debug ? debug : empty_dir, NULL};
	DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = server_url,
		.cache_path = cache, .timeout_s = 20, .log_fn = log_stderr,
		.log_level = DS_LOG_WARN);
	struct ds_context *ctx = ds_context_new(&o);

	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	return ctx;
}

/* A path the fetcher handed out: under the cache, and the right file. */
static bool valid_fetched(const char *path, const char *cache, const struct fix *f)
{
	struct ds_build_id got;
	char *want;
	bool ok;

	if (!path)
		return false;
	if (asprintf(&want, "%s/%s/debuginfo", cache, f->hex) < 0)
		exit(2);
	ok = !strcmp(path, want) && access(path, R_OK) == 0 &&
	     ds_build_id_read_file(path, &got) == 0 && t_same_bid(&got, &f->bid);
	if (!ok)
		fprintf(stderr, "  bad fetched path '%s' for %s\n", path, f->hex);
	free(want);
	return ok;
}

static void shuffle(int *v, int n, unsigned int *seed)
{
	for (int i = 0; i < n; i++)
		v[i] = i;
	for (int i = n - 1; i > 0; i--) {
		int j = rand_r(seed) % (i + 1), t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
}

/* ------------------------------------------- case 1: 8 threads x 50 IDs */

struct many_thread {
	pthread_t tid;
	int idx;
	bool batch;
	struct ds_context *ctx;
	pthread_barrier_t *start;
	char *paths[N_MANY];
	int errs[N_MANY];
	int batch_ret;
	int progress_calls;
};

static int count_progress(void *user, const struct ds_fetch_progress *p)
{
	struct many_thread *t = user;

	(void)p;
	t->progress_calls++; /* this thread's own: progress runs in the caller */
	return 0;
}

static void *many_worker(void *arg)
{
	struct many_thread *t = arg;
	unsigned int seed = 1234 + t->idx;
	int order[N_MANY];

	shuffle(order, N_MANY, &seed);
	pthread_barrier_wait(t->start);
	if (t->batch) {
		struct ds_fetch_req reqs[N_MANY];
		DS_OPTS(ds_fetch_opts, o, .progress = count_progress, .user = t, .progress_ms = 10);

		memset(reqs, 0, sizeof(reqs));
		for (int k = 0; k < N_MANY; k++) {
			reqs[k].build_id = many[order[k]].bid;
			reqs[k].what = DS_ARTIFACT_DEBUGINFO;
		}
		t->batch_ret = ds_fetch_batch(t->ctx, reqs, N_MANY, &o);
		for (int k = 0; k < N_MANY; k++) {
			t->errs[order[k]] = reqs[k].err;
			t->paths[order[k]] = reqs[k].path;
		}
		return NULL;
	}
	for (int k = 0; k < N_MANY; k++) {
		int i = order[k];

		t->errs[i] =
		    ds_fetch(t->ctx, &many[i].bid, DS_ARTIFACT_DEBUGINFO, NULL, &t->paths[i], NULL);
	}
	return NULL;
}

/* Reads statistics while the others fetch: the counters must be safe to
 * read at any time. */
struct poller {
	struct ds_context *ctx;
	atomic_bool stop;
	int rounds;
};

static void *stats_poller(void *arg)
{
	struct poller *p = arg;

	while (!atomic_load(&p->stop)) {
		struct ds_fetch_stats fs;
		struct ds_cache_stats cs;

		ds_fetch_stats(p->ctx, &fs);
		ds_cache_stats(p->ctx, &cs);
		p->rounds++;
		usleep(5000);
	}
	return NULL;
}

static void case_many_threads(struct ds_context *ctx, const char *cache)
{
	struct many_thread th[NTHREADS];
	struct poller poll = {.ctx = ctx};
	pthread_t poll_tid;
	pthread_barrier_t start;
	struct ds_fetch_stats fs;
	double t0;
	int bad = 0;

	printf("case: %d threads x the same %d build IDs\n", NTHREADS, N_MANY);
	server_reset_stats();
	pthread_barrier_init(&start, NULL, NTHREADS);
	atomic_init(&poll.stop, false);
	pthread_create(&poll_tid, NULL, stats_poller, &poll);
	t0 = now_s();
	for (int k = 0; k < NTHREADS; k++) {
		memset(&th[k], 0, sizeof(th[k]));
		th[k].idx = k;
		th[k].batch = k >= NTHREADS - 2; /* two threads batch, six loop */
		th[k].ctx = ctx;
		th[k].start = &start;
		pthread_create(&th[k].tid, NULL, many_worker, &th[k]);
	}
	for (int k = 0; k < NTHREADS; k++)
		pthread_join(th[k].tid, NULL);
	atomic_store(&poll.stop, true);
	pthread_join(poll_tid, NULL);
	pthread_barrier_destroy(&start);
	printf("  %.3f s\n", now_s() - t0);

	CHECK_EQ_INT(server_requests(), N_MANY);
	for (int i = 0; i < N_MANY; i++)
		CHECK_EQ_INT(server_count(&many[i]), 1);
	for (int k = 0; k < NTHREADS; k++) {
		if (th[k].batch) {
			CHECK_EQ_INT(th[k].batch_ret, 0);
			CHECK(th[k].progress_calls > 0);
		}
		for (int i = 0; i < N_MANY; i++) {
			if (th[k].errs[i] || !valid_fetched(th[k].paths[i], cache, &many[i])) {
				fprintf(stderr, "  thread %d, %s: %s\n", k, many[i].hex,
					ds_strerror(th[k].errs[i]));
				bad++;
			}
			free(th[k].paths[i]);
		}
	}
	CHECK_EQ_INT(bad, 0);
	ds_fetch_stats(ctx, &fs);
	printf("  client: %llu requests, %llu downloads, %llu joined, %llu cache hits\n",
	       (unsigned long long)fs.requests, (unsigned long long)fs.downloads,
	       (unsigned long long)fs.joined, (unsigned long long)fs.cache_hits);
	CHECK(fs.joined > 0);
	CHECK_EQ_INT(fs.requests, N_MANY);
	CHECK_EQ_INT(fs.downloads, N_MANY);
	CHECK(poll.rounds > 0);
}

/* ------------------------------- case 2: many stores of one context */

struct store_thread {
	pthread_t tid;
	struct ds_store *store;
	struct ds_dso *dso;
	pthread_barrier_t *start;
	const struct ds_debuginfo *di;
	int err;
};

static void *store_worker(void *arg)
{
	struct store_thread *t = arg;

	pthread_barrier_wait(t->start);
	t->err = ds_dso_debuginfo(t->dso, &t->di);
	return NULL;
}

static void case_many_stores(void)
{
	char *cache = t_path("cache-stores");
	struct ds_context *ctx = new_context(cache, NULL);
	struct ds_dso_id id = {.flags = DS_DSO_ID_BUILD_ID, .build_id = stores_fix.bid};
	struct store_thread th[NSTORES];
	pthread_barrier_t start;

	printf("case: %d stores of one context, one build ID\n", NSTORES);
	server_reset_stats();
	pthread_barrier_init(&start, NULL, NSTORES);
	for (int k = 0; k < NSTORES; k++) {
		char machine[32];

		snprintf(machine, sizeof(machine), "guest%d", k);
		memset(&th[k], 0, sizeof(th[k]));
		th[k].store = ds_store_new(ctx, machine, NULL);
		CHECK(th[k].store != NULL);
		th[k].dso = ds_store_findnew(th[k].store, NULL, &id);
		CHECK(th[k].dso != NULL);
		th[k].start = &start;
	}
	/* The stores keep the context (and its fetcher, started by the
	 * threads) alive: the caller may free it first. */
	ds_context_free(ctx);
	for (int k = 0; k < NSTORES; k++)
		pthread_create(&th[k].tid, NULL, store_worker, &th[k]);
	for (int k = 0; k < NSTORES; k++)
		pthread_join(th[k].tid, NULL);
	pthread_barrier_destroy(&start);

	CHECK_EQ_INT(server_count(&stores_fix), 1);
	CHECK_EQ_INT(server_requests(), 1);
	for (int k = 0; k < NSTORES; k++) {
		enum ds_source src;

		CHECK_EQ_INT(th[k].err, 0);
		if (th[k].err) {
			char why[512];

			ds_dso_error(th[k].dso, why, sizeof(why));
			fprintf(stderr, "  store %d: %s\n", k, why);
			continue;
		}
		src = ds_debuginfo_source(th[k].di);
		CHECK(src == DS_SOURCE_DEBUGINFOD || src == DS_SOURCE_DEBUGINFOD_CACHE);
		CHECK(valid_fetched(ds_debuginfo_path(th[k].di), cache, &stores_fix));
		CHECK(t_same_bid(ds_debuginfo_build_id(th[k].di), &stores_fix.bid));
		printf("  store %d: %s (%s)\n", k, ds_debuginfo_path(th[k].di),
		       ds_source_name(src));
	}
	for (int k = 0; k < NSTORES; k++) {
		ds_dso_put(th[k].dso);
		ds_store_free(th[k].store);
	}
	free(cache);
}

/* ------------------------------------------------ case 3: prefetch */

struct reader {
	struct ds_dso **dsos;
	atomic_bool stop;
	int calls;
};

/* ds_dso_debuginfo on the DSOs that have debuginfo somewhere, while
 * prefetch runs: it waits for, or joins, what prefetch does, and changes
 * neither the request count nor what prefetch reports missing. */
static void *found_reader(void *arg)
{
	struct reader *r = arg;

	while (!atomic_load(&r->stop)) {
		for (int i = 0; i < N_PREF; i++) {
			const struct ds_debuginfo *di;

			if (i % 3 == 2)
				continue;
			ds_dso_debuginfo(r->dsos[i], &di);
			r->calls++;
		}
		usleep(1000);
	}
	return NULL;
}

static void check_prefetched(struct ds_dso **dsos, const char *cache)
{
	for (int i = 0; i < N_PREF; i++) {
		const struct ds_debuginfo *di = NULL;
		int err = ds_dso_debuginfo(dsos[i], &di);

		if (i % 3 == 2) {
			CHECK_EQ_INT(err, -ENOENT);
			continue;
		}
		CHECK_EQ_INT(err, 0);
		if (err)
			continue;
		if (i % 3 == 0) {
			CHECK_EQ_INT(ds_debuginfo_source(di), DS_SOURCE_BUILD_ID_DIR);
			CHECK(ds_debuginfo_path(di) &&
			      !strcmp(ds_debuginfo_path(di), pref[i].file));
		} else {
			enum ds_source src = ds_debuginfo_source(di);

			CHECK(src == DS_SOURCE_DEBUGINFOD || src == DS_SOURCE_DEBUGINFOD_CACHE);
			CHECK(valid_fetched(ds_debuginfo_path(di), cache, &pref[i]));
		}
	}
}

static void case_prefetch(void)
{
	char *cache = t_path("cache-prefetch");
	struct ds_context *ctx = new_context(cache, debug_dir);
	struct ds_store *store = ds_store_new(ctx, "host", NULL);
	struct ds_dso *dsos[N_PREF];
	struct reader rd = {.dsos = dsos};
	struct ds_store_stats before, after;
	pthread_t rd_tid;
	long fetched = 0, missing = 0;
	int left;

	printf("case: prefetch of a store of %d DSOs\n", N_PREF);
	server_reset_stats();
	for (int i = 0; i < N_PREF; i++) {
		struct ds_dso_id id = {.flags = DS_DSO_ID_BUILD_ID, .build_id = pref[i].bid};

		dsos[i] = ds_store_findnew(store, NULL, &id);
		CHECK(dsos[i] != NULL);
		fetched += i % 3 == 1;
		missing += i % 3 == 2;
	}
	atomic_init(&rd.stop, false);
	pthread_create(&rd_tid, NULL, found_reader, &rd);
	left = ds_store_prefetch(store, NULL);
	atomic_store(&rd.stop, true);
	pthread_join(rd_tid, NULL);
	printf("  left without debuginfo: %d (reader made %d calls)\n", left, rd.calls);
	CHECK_EQ_INT(left, missing);
	CHECK_EQ_INT(server_requests(), fetched + missing);
	for (int i = 0; i < N_PREF; i++)
		CHECK_EQ_INT(server_count(&pref[i]), i % 3 == 0 ? 0 : 1);

	/* Afterwards: answered without a search, found ones from the ready
	 * path, missing ones from the remembered miss. */
	ds_store_stats(store, &before);
	check_prefetched(dsos, cache);
	ds_store_stats(store, &after);
	CHECK_EQ_INT(after.searches, before.searches);
	CHECK_EQ_INT(after.debuginfos_open, fetched + N_PREF / 3);
	CHECK_EQ_INT(server_requests(), fetched + missing);

	for (int i = 0; i < N_PREF; i++)
		ds_dso_put(dsos[i]);
	ds_store_free(store);
	ds_context_free(ctx);
	free(cache);
}

/* --------------------------- case 5: the cache deleted under a store */

static bool reads_elf_magic(int fd)
{
	char magic[4];

	return fd >= 0 && pread(fd, magic, 4, 0) == 4 && !memcmp(magic, "\177ELF", 4);
}

static void case_cache_deleted(void)
{
	char *cache = t_path("cache-gone"), *path = NULL;
	struct ds_context *ctx = new_context(cache, NULL), *ctx2;
	struct ds_store *store = ds_store_new(ctx, "host", NULL), *store2;
	struct ds_dso_id id = {.flags = DS_DSO_ID_BUILD_ID, .build_id = gone_fix.bid};
	struct ds_dso *dso = ds_store_findnew(store, NULL, &id), *dso2;
	const struct ds_debuginfo *di = NULL, *di_again = NULL, *di2 = NULL;
	struct ds_store_stats st1, st2;
	int err;

	printf("case: the cache directory deleted under an opened debuginfo\n");
	server_reset_stats();
	err = ds_dso_debuginfo(dso, &di);
	CHECK_EQ_INT(err, 0);
	if (err)
		goto out;
	CHECK(valid_fetched(ds_debuginfo_path(di), cache, &gone_fix));
	CHECK_EQ_INT(server_count(&gone_fix), 1);

	CHECK_EQ_INT(t_sh("rm -rf '%s'", cache), 0);
	CHECK(access(cache, F_OK) != 0);
	CHECK(reads_elf_magic(ds_debuginfo_fd(di)));
	ds_store_stats(store, &st1);
	err = ds_dso_debuginfo(dso, &di_again);
	ds_store_stats(store, &st2);
	CHECK_EQ_INT(err, 0);
	CHECK(di_again == di);
	CHECK(reads_elf_magic(ds_debuginfo_fd(di_again)));
	CHECK_EQ_INT(st2.searches, st1.searches);
	CHECK_EQ_INT(server_count(&gone_fix), 1);

	/* A new context and store on the same (now absent) cache: a new
	 * download, into a re-created directory. */
	ctx2 = new_context(cache, NULL);
	store2 = ds_store_new(ctx2, "host", NULL);
	dso2 = ds_store_findnew(store2, NULL, &id);
	err = ds_dso_debuginfo(dso2, &di2);
	CHECK_EQ_INT(err, 0);
	if (!err) {
		CHECK_EQ_INT(ds_debuginfo_source(di2), DS_SOURCE_DEBUGINFOD);
		CHECK(valid_fetched(ds_debuginfo_path(di2), cache, &gone_fix));
	}
	CHECK_EQ_INT(server_count(&gone_fix), 2);
	ds_dso_put(dso2);
	ds_store_free(store2);
	ds_context_free(ctx2);

	/* The first context again, after a second rm -rf: its next fetch
	 * must re-download too, not fail on the directory it had opened.
	 * (A regression once: lib/debuginfod/cache.c kept the root's fd from the first
	 * use, so mkdirat() in the deleted directory gave ENOENT, reported as
	 * "not found" without asking any server.) */
	printf("  same context, after a second rm -rf\n");
	CHECK_EQ_INT(t_sh("rm -rf '%s'", cache), 0);
	err = ds_fetch(ctx, &gone_fix.bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL);
	if (err)
		fprintf(stderr, "  ds_fetch after rm -rf of the cache: %s\n", ds_strerror(err));
	CHECK_EQ_INT(err, 0);
	if (!err)
		CHECK(valid_fetched(path, cache, &gone_fix));
	CHECK_EQ_INT(server_count(&gone_fix), 3);
	free(path);
	/* The store's copy is still the one it held open. */
	CHECK(reads_elf_magic(ds_debuginfo_fd(di)));
out:
	ds_dso_put(dso);
	ds_store_free(store);
	ds_context_free(ctx);
	free(cache);
}

/* ------------------------------- case 6: cancel, then ask again */

struct cancel_state {
	bool cancelled;
	int unasked; /* requests that ended in a cancel we did not ask for */
};

static int cancel_after_10ms(void *user, const struct ds_fetch_progress *p)
{
	struct cancel_state *c = user;

	if (p->elapsed_s < 0.010)
		return 0;
	c->cancelled = true;
	return 1;
}

/* Called only for requests that finished before our own cancel. */
static void cancel_done(void *user, struct ds_fetch_req *req)
{
	struct cancel_state *c = user;

	if (req->err == -ECANCELED)
		c->unasked++;
}

/* A caller that cancels a batch and asks again at once (or another thread
 * asking just after the last waiter cancelled) must get its own outcome,
 * not the cancellation of a job it happened to join.  The server hangs on
 * these build IDs, so every request ends by the caller's cancel; a batch
 * of several makes the fetcher spend longer cancelling, so a new call
 * often arrives while it does.  (A regression once: lib/debuginfod/fetch.c's loop
 * marked a job cancelled under the lock but left it in the job table
 * until job_finish(), so submit() could join it in between.) */
static void case_cancel_again(void)
{
	char *cache = t_path("cache-cancel"), ctl[256];
	struct ds_context *ctx = new_context(cache, NULL);
	struct ds_fetch_req reqs[N_CANCEL];
	int unasked = 0, not_cancelled = 0, rounds_hit = 0, cached = 0;
	double t0 = now_s();

	printf("case: %d batches of %d cancelled by their caller, one after the other\n",
	       CANCEL_ROUNDS, N_CANCEL);
	for (int i = 0; i < N_CANCEL; i++) {
		char *ok;

		snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=hang", cancel_fix[i].hex);
		ok = server_get(ctl);
		CHECK(ok != NULL);
		free(ok);
	}
	for (int r = 0; r < CANCEL_ROUNDS; r++) {
		struct cancel_state c = {false, 0};
		DS_OPTS(ds_fetch_opts, o, .progress = cancel_after_10ms, .done = cancel_done,
			.user = &c, .progress_ms = 2);
		int ret;

		memset(reqs, 0, sizeof(reqs));
		for (int i = 0; i < N_CANCEL; i++)
			reqs[i].build_id = cancel_fix[i].bid;
		ret = ds_fetch_batch(ctx, reqs, N_CANCEL, &o);
		not_cancelled += ret != -ECANCELED || !c.cancelled;
		unasked += c.unasked;
		rounds_hit += c.unasked > 0;
		for (int i = 0; i < N_CANCEL; i++)
			free(reqs[i].path);
	}
	printf("  %.2f s; %d requests (in %d batches) got a cancel they did not ask for\n",
	       now_s() - t0, unasked, rounds_hit);
	CHECK_EQ_INT(unasked, 0);
	CHECK_EQ_INT(not_cancelled, 0);
	/* A cancel caches nothing, not even a miss. */
	for (int i = 0; i < N_CANCEL; i++) {
		char *entry;

		if (asprintf(&entry, "%s/%s/debuginfo", cache, cancel_fix[i].hex) < 0)
			exit(2);
		cached += access(entry, F_OK) == 0;
		free(entry);
		snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=clear", cancel_fix[i].hex);
		free(server_get(ctl));
	}
	CHECK_EQ_INT(cached, 0);
	ds_context_free(ctx);
	free(cache);
}

/* ------------------------------------------------ case 7: warm run */

static void case_warm(const char *cache)
{
	struct ds_context *ctx = new_context(cache, NULL);
	struct ds_fetch_req reqs[N_MANY];
	const int rounds = 20;
	double t0, loop_s, batch_s;
	int bad = 0, ret;

	printf("case: warm run over %d cached build IDs\n", N_MANY);
	server_reset_stats();
	/* First touch outside the timing (libelf/libcurl set-up). */
	for (int i = 0; i < N_MANY; i++) {
		char *path = NULL;

		if (ds_fetch(ctx, &many[i].bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL) ||
		    !valid_fetched(path, cache, &many[i]))
			bad++;
		free(path);
	}
	t0 = now_s();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < N_MANY; i++) {
			char *path = NULL;

			bad += ds_fetch(ctx, &many[i].bid, DS_ARTIFACT_DEBUGINFO, NULL, &path,
					NULL) != 0;
			free(path);
		}
	loop_s = now_s() - t0;

	memset(reqs, 0, sizeof(reqs));
	for (int i = 0; i < N_MANY; i++)
		reqs[i].build_id = many[i].bid;
	t0 = now_s();
	ret = ds_fetch_batch(ctx, reqs, N_MANY, NULL);
	batch_s = now_s() - t0;
	CHECK_EQ_INT(ret, 0);
	for (int i = 0; i < N_MANY; i++) {
		CHECK_EQ_INT(reqs[i].source, DS_SOURCE_DEBUGINFOD_CACHE);
		free(reqs[i].path);
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_INT(server_requests(), 0);
	printf("  warm ds_fetch: %.2f us per build ID; ds_fetch_batch of %d: %.2f us per build ID"
	       "%s\n",
	       loop_s * 1e6 / (rounds * N_MANY), N_MANY, batch_s * 1e6 / N_MANY,
	       getenv("DS_SANITIZE") && *getenv("DS_SANITIZE") ? " (sanitizer build)" : "");
	ds_context_free(ctx);
}

/* ------------------------------------------ case 8: extra request headers */

/* The server's log once no request is in progress; its length in *len. */
static char *server_log(size_t *len)
{
	char *log = t_path("server.log"), *text;

	free(server_get("/control/idle"));
	text = t_read_all(log, len);
	if (!(text = realloc(text, *len + 1)))
		exit(2);
	text[*len] = 0; /* (t_read_all()'s is not a string) */
	free(log);
	return text;
}

/* The X-Forwarded-For values the server logged for fix's debuginfo past
 * the log's first skip bytes, one per request, joined by '|' (dsserver
 * --log-header: the last field). */
static char *logged_xff(const struct fix *f, size_t skip)
{
	char *text, *out = calloc(1, 1), want[256];
	size_t len, n = 0;

	text = server_log(&len);
	snprintf(want, sizeof(want), " /buildid/%s/debuginfo ", f->hex);
	for (char *line = strtok(skip < len ? text + skip : text + len, "\n"); line && out;
	     line = strtok(NULL, "\n")) {
		const char *last = strrchr(line, ' ');
		char *grown;

		if (!strstr(line, want) || !last)
			continue;
		grown = realloc(out, n + strlen(last) + 1);
		if (!grown)
			exit(2);
		out = grown;
		n += (size_t)sprintf(out + n, "%s%s", n ? "|" : "", last + 1);
	}
	free(text);
	return out;
}

struct join_caller {
	struct ds_context *ctx;
	const struct fix *f;
	char **headers; /* the caller's own, freed by the test once it returned */
	atomic_bool release;
	int ret;
};

static int until_released(void *user, const struct ds_fetch_progress *p)
{
	(void)p;
	return atomic_load(&((struct join_caller *)user)->release);
}

static void *join_caller(void *arg)
{
	struct join_caller *c = arg;
	DS_OPTS(ds_fetch_opts, o, .progress = until_released, .user = c, .progress_ms = 5,
		.headers = (const char *const *)c->headers);
	char *path = NULL;

	c->ret = ds_fetch(c->ctx, &c->f->bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, &o);
	free(path);
	return NULL;
}

static uint64_t joined_now(struct ds_context *ctx)
{
	struct ds_fetch_stats fs;

	ds_fetch_stats(ctx, &fs);
	return fs.joined;
}

/* A federating server passes its client's X-Forwarded-For upstream: the
 * header as given arrives, one that would smuggle in a header of its own
 * is refused before anything is asked, and a call that joins a download
 * in flight sends nothing (the server sees one request, with the headers
 * of the call that started it, even once that call has returned). */
static void case_headers(void)
{
	char *cache = t_path("cache-headers"), *path = NULL, *xff, ctl[256];
	struct ds_context *ctx = new_context(cache, NULL);
	const char *good[] = {"X-Forwarded-For: 10.0.0.1, 10.0.0.2", "User-Agent: test_fetch/8",
			      NULL};
	const char *bad[][2] = {{"X-Forwarded-For: 10.0.0.1\r\nX-Injected: 1", NULL},
				{"X-Forwarded-For: 10.0.0.1\nX-Injected: 1", NULL},
				{"X-Forwarded-For 10.0.0.1", NULL},
				{": 10.0.0.1", NULL}};
	struct join_caller first = {.ctx = ctx, .f = &many[1]}, second = first;
	pthread_t t1, t2;
	uint64_t joined;
	double deadline;
	long before;
	size_t skip;

	printf("case: extra request headers\n");
	server_reset_stats();
	before = server_requests();
	free(server_log(&skip));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		DS_OPTS(ds_fetch_opts, o, .headers = bad[i]);

		CHECK_EQ_INT(ds_fetch(ctx, &many[0].bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, &o),
			     -EINVAL);
	}
	CHECK_EQ_INT(server_requests(), before);
	{
		DS_OPTS(ds_fetch_opts, o, .headers = good);

		CHECK_EQ_INT(ds_fetch(ctx, &many[0].bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, &o), 0);
		CHECK(valid_fetched(path, cache, &many[0]));
		free(path);
	}
	xff = logged_xff(&many[0], skip);
	/* dsserver escapes the space: "10.0.0.1,%2010.0.0.2". */
	if (strcmp(xff, "10.0.0.1,%2010.0.0.2")) {
		fprintf(stderr, "  X-Forwarded-For logged as '%s'\n", xff);
		CHECK(!"X-Forwarded-For as given");
	}
	free(xff);

	/* The server holds the first call's request until the callers give up. */
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=hang", many[1].hex);
	free(server_get(ctl));
	first.headers = calloc(2, sizeof(char *));
	second.headers = calloc(2, sizeof(char *));
	if (!first.headers || !second.headers || !(first.headers[0] = strdup("X-Forwarded-For: first")) ||
	    !(second.headers[0] = strdup("X-Forwarded-For: second")))
		exit(2);
	pthread_create(&t1, NULL, join_caller, &first);
	deadline = now_s() + 20;
	while (server_count(&many[1]) < 1 && now_s() < deadline)
		usleep(5000);
	CHECK_EQ_INT(server_count(&many[1]), 1);
	joined = joined_now(ctx);
	pthread_create(&t2, NULL, join_caller, &second);
	while (joined_now(ctx) == joined && now_s() < deadline)
		usleep(5000);
	CHECK_EQ_INT(joined_now(ctx), joined + 1);
	/* The first caller goes, its headers with it; the job lives on. */
	atomic_store(&first.release, true);
	pthread_join(t1, NULL);
	CHECK_EQ_INT(first.ret, -ECANCELED);
	free(first.headers[0]);
	free(first.headers);
	atomic_store(&second.release, true);
	pthread_join(t2, NULL);
	CHECK_EQ_INT(second.ret, -ECANCELED);
	free(second.headers[0]);
	free(second.headers);
	CHECK_EQ_INT(server_count(&many[1]), 1);
	xff = logged_xff(&many[1], skip);
	if (strcmp(xff, "first")) {
		fprintf(stderr, "  X-Forwarded-For of %s logged as '%s'\n", many[1].hex, xff);
		CHECK(!"one request, the first caller's");
	}
	free(xff);
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=clear", many[1].hex);
	free(server_get(ctl));
	ds_context_free(ctx);
	free(cache);
}

/* The IMA policy through ds_context_opts: the urls field takes the ima:
 * words as DEBUGINFOD_URLS does (an unknown one logged, never asked), an
 * enforcing server's unsigned file is refused with -EKEYREJECTED and not
 * cached (no key in ima_cert_path: nothing can pass), and under ignore the
 * same file is taken, its X-DEBUGINFOD-* headers kept beside it and read
 * back with ds_fetch_headers().  Signed files are tests/cli/debuginfod_ima.sh's. */
static char ima_log[4096];
static pthread_mutex_t ima_log_lock = PTHREAD_MUTEX_INITIALIZER;

static void log_keep(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	pthread_mutex_lock(&ima_log_lock);
	if (strlen(ima_log) + strlen(msg) + 2 < sizeof(ima_log)) {
		strcat(ima_log, msg);
		strcat(ima_log, "\n");
	}
	pthread_mutex_unlock(&ima_log_lock);
}

static void case_ima_opts(void)
{
	char *cache = t_path("cache-ima"), *certs = t_path("certs-none"), *urls, *path = NULL,
	     *hdrs = NULL, *want, *entry;
	const char *dirs[2] = {empty_dir, NULL};
	struct ds_context *ctx;
	long before;

	printf("case: ima: words and ima_cert_path in ds_context_opts\n");
	t_mkdir_parents(certs);
	mkdir(certs, 0700);
	if (asprintf(&urls, "ima:bogus ima:enforcing %s", server_url) < 0 ||
	    asprintf(&entry, "%s/%s/debuginfo", cache, many[2].hex) < 0 ||
	    asprintf(&want, "X-DEBUGINFOD-FILE: %s\n", many[2].file) < 0)
		exit(2);
	{
		DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = urls,
			.cache_path = cache, .timeout_s = 20, .log_fn = log_keep,
			.log_level = DS_LOG_INFO, .ima_cert_path = certs);

		ctx = ds_context_new(&o);
	}
	CHECK(ctx != NULL);
	before = server_requests();
	CHECK_EQ_INT(ds_fetch(ctx, &many[2].bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL),
		     -EKEYREJECTED);
	CHECK_EQ_INT(server_requests(), before + 1); /* the server, not "ima:bogus" */
	CHECK(access(entry, F_OK) != 0);
	CHECK(strstr(ima_log, "IMA mode \"ima:bogus\" not recognized") != NULL);
	CHECK(strstr(ima_log, "refused (ima:enforcing): no X-DEBUGINFOD-IMASIGNATURE") != NULL);
	CHECK_EQ_INT(ds_fetch_headers(ctx, &many[2].bid, DS_ARTIFACT_DEBUGINFO, NULL, &hdrs),
		     -ENOENT);
	ds_context_free(ctx);
	free(urls);
	if (asprintf(&urls, "ima:ignore %s", server_url) < 0)
		exit(2);
	{
		DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = urls,
			.cache_path = cache, .timeout_s = 20, .log_fn = log_keep,
			.log_level = DS_LOG_WARN, .ima_cert_path = certs);

		ctx = ds_context_new(&o);
	}
	CHECK(ctx != NULL);
	CHECK_EQ_INT(ds_fetch(ctx, &many[2].bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL), 0);
	CHECK(valid_fetched(path, cache, &many[2]));
	free(path);
	CHECK_EQ_INT(ds_fetch_headers(ctx, &many[2].bid, DS_ARTIFACT_DEBUGINFO, NULL, &hdrs), 0);
	if (!hdrs || !strstr(hdrs, want)) {
		fprintf(stderr, "  headers: '%s', want a line '%s'\n", hdrs ? hdrs : "(none)", want);
		CHECK(!"X-DEBUGINFOD-FILE kept");
	}
	free(hdrs);
	CHECK_EQ_INT(ds_fetch_headers(ctx, &many[2].bid, DS_ARTIFACT_EXECUTABLE, NULL, &hdrs),
		     -ENOENT);
	ds_context_free(ctx);
	/* Another context (as another process) on that cache: its headers
	 * without a fetch first, the file checked on the way; once the file is
	 * replaced by one of another build ID, none (it is not the artifact
	 * any more: removed, as a lookup removes it). */
	{
		DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = "",
			.cache_path = cache, .log_fn = log_keep, .log_level = DS_LOG_ERROR);
		char *tmp = NULL;
		size_t len = 0;
		void *bytes;
		int fd;

		ctx = ds_context_new(&o);
		CHECK(ctx != NULL);
		hdrs = NULL;
		CHECK_EQ_INT(ds_fetch_headers(ctx, &many[2].bid, DS_ARTIFACT_DEBUGINFO, NULL, &hdrs),
			     0);
		CHECK(hdrs && strstr(hdrs, want));
		free(hdrs);
		/* (a whole ELF, of another build ID: what a lookup refuses) */
		bytes = t_read_all(many[3].file, &len);
		if (asprintf(&tmp, "%s.x", entry) < 0 ||
		    (fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0400)) < 0 ||
		    write(fd, bytes, len) != (ssize_t)len || close(fd) != 0)
			exit(2);
		free(bytes);
		CHECK(rename(tmp, entry) == 0);
		hdrs = NULL;
		CHECK_EQ_INT(ds_fetch_headers(ctx, &many[2].bid, DS_ARTIFACT_DEBUGINFO, NULL, &hdrs),
			     -ENOENT);
		CHECK(hdrs == NULL);
		CHECK(access(entry, F_OK) != 0);
		free(tmp);
		ds_context_free(ctx);
	}
	free(urls);
	free(want);
	free(entry);
	free(certs);
	free(cache);
}

/* ----------------------------------- case 10: ds_fetch_start(), no waiting */

struct async_state {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	struct ds_context *ctx;
};

struct async_call {
	struct async_state *st;
	struct ds_fetch_req req;
	atomic_int calls;
	int rc; /* ds_fetch_start()'s */
	bool on_caller; /* the callback ran on the thread that started it */
	pthread_t caller;
	struct async_call *then; /* started from the callback */
};

static void async_done(void *user, struct ds_fetch_req *req);

static int async_start(struct async_call *c, const struct fix *f, struct async_state *st)
{
	DS_OPTS(ds_fetch_opts, o, .done = async_done, .user = c);

	c->st = st;
	c->req = (struct ds_fetch_req){ .build_id = f->bid, .what = DS_ARTIFACT_DEBUGINFO };
	c->caller = pthread_self();
	return c->rc = ds_fetch_start(st->ctx, &c->req, &o);
}

static void async_done(void *user, struct ds_fetch_req *req)
{
	struct async_call *c = user;
	struct async_state *st = c->st;

	CHECK(req == &c->req);
	c->on_caller = pthread_equal(pthread_self(), c->caller);
	/* A callback may start another fetch: no lock of the library's is
	 * held. */
	if (c->then && async_start(c->then, &async_fix[N_ASYNC - 1], st) == 0) {
		pthread_mutex_lock(&st->lock);
		st->done++; /* (answered at once: no callback of its own) */
		pthread_mutex_unlock(&st->lock);
	}
	atomic_fetch_add(&c->calls, 1);
	pthread_mutex_lock(&st->lock);
	st->done++;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

/* Until st->done reaches n, or 20 s: whether it did. */
static bool async_wait(struct async_state *st, int n)
{
	struct timespec until;
	bool ok;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	pthread_mutex_lock(&st->lock);
	while (st->done < n && pthread_cond_timedwait(&st->cond, &st->lock, &until) == 0)
		;
	ok = st->done >= n;
	pthread_mutex_unlock(&st->lock);
	return ok;
}

/* A server's way of fetching: started without waiting, answered by a
 * callback on the library's thread; one download per key however many
 * start it; a cache hit or a remembered miss answered at once, with no
 * callback; a callback that starts another fetch; the ones still under
 * way answered -ECANCELED when the context goes. */
static void case_async(void)
{
	char *cache = t_path("cache-async"), ctl[256];
	struct async_state st = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL };
	static struct async_call calls[4 * ASYNC_ASKS], again, none, none_again, first, second,
		hung;
	int pending = 0, n = 0, rc;
	double t0 = now_s();

	printf("case: ds_fetch_start(), %d callers of %d build IDs at once\n", 4 * ASYNC_ASKS, 4);
	st.ctx = new_context(cache, NULL);
	server_reset_stats();
	for (int k = 0; k < ASYNC_ASKS; k++)
		for (int i = 0; i < 4; i++) {
			rc = async_start(&calls[n++], &async_fix[i], &st);
			CHECK(rc == 0 || rc == 1);
			/* (0: one before it has finished already, a cache hit) */
			pending += rc == 1;
		}
	CHECK(pending > 0);
	CHECK(async_wait(&st, pending));
	for (int j = 0; j < n; j++) {
		const struct fix *f = &async_fix[j % 4];

		CHECK_EQ_INT(calls[j].req.err, 0);
		CHECK(valid_fetched(calls[j].req.path, cache, f));
		/* (a callback exactly when it said "under way") */
		CHECK_EQ_INT(atomic_load(&calls[j].calls), calls[j].rc == 1);
		CHECK(!calls[j].on_caller);
		free(calls[j].req.path);
	}
	for (int i = 0; i < 4; i++)
		CHECK_EQ_INT(server_count(&async_fix[i]), 1);

	/* In the cache: answered at once, no callback. */
	CHECK_EQ_INT(async_start(&again, &async_fix[0], &st), 0);
	CHECK_EQ_INT(again.req.err, 0);
	CHECK(again.req.source == DS_SOURCE_DEBUGINFOD_CACHE);
	CHECK(valid_fetched(again.req.path, cache, &async_fix[0]));
	free(again.req.path);

	/* Nobody has it: -ENOENT by the callback, then remembered. */
	st.done = 0;
	CHECK_EQ_INT(async_start(&none, &async_none, &st), 1);
	CHECK(async_wait(&st, 1));
	CHECK_EQ_INT(none.req.err, -ENOENT);
	CHECK(none.req.path == NULL);
	CHECK_EQ_INT(async_start(&none_again, &async_none, &st), 0);
	CHECK_EQ_INT(none_again.req.err, -ENOENT);

	/* A callback that starts the next fetch. */
	st.done = 0;
	first.then = &second;
	CHECK_EQ_INT(async_start(&first, &async_fix[4], &st), 1);
	CHECK(async_wait(&st, 2));
	CHECK_EQ_INT(first.req.err, 0);
	CHECK_EQ_INT(second.req.err, 0);
	CHECK(valid_fetched(first.req.path, cache, &async_fix[4]));
	CHECK(valid_fetched(second.req.path, cache, &async_fix[N_ASYNC - 1]));
	free(first.req.path);
	free(second.req.path);

	/* What cannot be started so. */
	{
		DS_OPTS(ds_fetch_opts, nodone, .user = &st);
		DS_OPTS(ds_fetch_opts, o, .done = async_done, .user = &none);
		struct ds_fetch_req sec = { .build_id = async_fix[1].bid,
					    .what = DS_ARTIFACT_SECTION,
					    .arg = ".debug_info" };

		CHECK_EQ_INT(ds_fetch_start(st.ctx, &again.req, &nodone), -EINVAL);
		CHECK_EQ_INT(ds_fetch_start(st.ctx, &sec, &o), -EOPNOTSUPP);
	}

	/* Under way when the context goes: answered, cancelled. */
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=hang", cancel_fix[0].hex);
	free(server_get(ctl));
	st.done = 0;
	CHECK_EQ_INT(async_start(&hung, &cancel_fix[0], &st), 1);
	usleep(100000);
	CHECK_EQ_INT(atomic_load(&hung.calls), 0);
	ds_context_free(st.ctx);
	CHECK_EQ_INT(atomic_load(&hung.calls), 1);
	CHECK_EQ_INT(hung.req.err, -ECANCELED);
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=clear", cancel_fix[0].hex);
	free(server_get(ctl));
	printf("  %.2f s\n", now_s() - t0);
	free(cache);
}

/* ---------------------------- case 11: ds_fetch_start() with done_body */

struct body_call {
	struct async_state *st;
	struct ds_fetch_req req;
	atomic_int calls;
	bool got_body, got_data, on_caller;
	unsigned char *data; /* a copy of body->data */
	size_t size;
	char *headers; /* a copy of body->headers */
	bool cached_then; /* the cache's file was there during the call */
	pthread_t caller;
};

static void body_done(void *user, struct ds_fetch_req *req, const struct ds_fetch_body *body)
{
	struct body_call *c = user;
	struct async_state *st = c->st;

	CHECK(req == &c->req);
	c->on_caller = pthread_equal(pthread_self(), c->caller);
	c->got_body = body != NULL;
	if (body && body->data) {
		c->got_data = true;
		c->size = body->size;
		c->data = malloc(body->size ? body->size : 1);
		memcpy(c->data, body->data, body->size);
	}
	if (body && body->headers)
		c->headers = strdup(body->headers);
	atomic_fetch_add(&c->calls, 1);
	pthread_mutex_lock(&st->lock);
	st->done++;
	pthread_cond_broadcast(&st->cond);
	pthread_mutex_unlock(&st->lock);
}

static int body_start(struct body_call *c, const struct fix *f, struct async_state *st)
{
	DS_OPTS(ds_fetch_opts, o, .done_body = body_done, .user = c);

	c->st = st;
	c->req = (struct ds_fetch_req){ .build_id = f->bid, .what = DS_ARTIFACT_DEBUGINFO };
	c->caller = pthread_self();
	return ds_fetch_start(st->ctx, &c->req, &o);
}

/* Until path exists, or 20 s: the commit after an answer from memory. */
static bool appears(const char *path)
{
	for (int i = 0; i < 2000; i++) {
		if (access(path, F_OK) == 0)
			return true;
		usleep(10000);
	}
	return false;
}

/* Whether the bytes are those of the file at path. */
static bool same_bytes(const unsigned char *data, size_t size, const char *path)
{
	size_t len;
	char *want = t_read_all(path, &len);
	bool same = want && len == size && !memcmp(want, data, size);

	free(want);
	return same;
}

/* A server's callers of ds_fetch_start() that take the body: a small file
 * is handed over from memory, the same bytes as the server's, with its
 * X-DEBUGINFOD-* headers, and goes into the cache after, where a caller
 * with done (on the same download) gets it; a file over
 * DS_FETCH_BODY_MAX comes as a path, with its headers; a poisoned small
 * body (another build ID's file) is never handed over, nor cached; a
 * failure has no body. */
static void case_body(void)
{
	char *cache = t_path("cache-body"), ctl[512], *want = NULL;
	struct async_state st = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL };
	static struct body_call small[3], poisoned, large, none;
	static struct async_call plain;
	struct stat sb;
	double t0 = now_s();
	int pending = 0;

	printf("case: ds_fetch_start() with done_body\n");
	CHECK(stat(body_fix[0].file, &sb) == 0 && sb.st_size <= DS_FETCH_BODY_MAX);
	CHECK(stat(body_fix[2].file, &sb) == 0 && sb.st_size > DS_FETCH_BODY_MAX);
	st.ctx = new_context(cache, NULL);
	server_reset_stats();
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=wrongfile&arg=%s", body_fix[1].hex,
		 body_fix[0].hex);
	free(server_get(ctl));

	for (int i = 0; i < 3; i++)
		pending += body_start(&small[i], &body_fix[0], &st);
	/* One who wants the file, on the same download. */
	pending += async_start(&plain, &body_fix[0], &st);
	pending += body_start(&poisoned, &body_fix[1], &st);
	pending += body_start(&large, &body_fix[2], &st);
	pending += body_start(&none, &async_none, &st) == 1 ? 1 : 0;
	CHECK_EQ_INT(pending, 7);
	CHECK(async_wait(&st, pending));

	if (asprintf(&want, "%s/%s/debuginfo", cache, body_fix[0].hex) < 0)
		exit(2);
	for (int i = 0; i < 3; i++) {
		char size_line[64];

		CHECK_EQ_INT(small[i].req.err, 0);
		CHECK(small[i].req.path == NULL);
		CHECK(small[i].req.source == DS_SOURCE_DEBUGINFOD);
		CHECK(small[i].got_data);
		CHECK(!small[i].on_caller);
		CHECK(same_bytes(small[i].data, small[i].size, body_fix[0].file));
		snprintf(size_line, sizeof(size_line), "X-DEBUGINFOD-SIZE: %zu\n", small[i].size);
		CHECK(small[i].headers && strcasestr(small[i].headers, size_line));
		CHECK_EQ_INT(atomic_load(&small[i].calls), 1);
	}
	/* The done caller: the file, in the cache. */
	CHECK_EQ_INT(plain.req.err, 0);
	CHECK(valid_fetched(plain.req.path, cache, &body_fix[0]));
	CHECK(appears(want));
	CHECK_EQ_INT(server_count(&body_fix[0]), 1);

	/* Over DS_FETCH_BODY_MAX: the file, and its headers. */
	CHECK_EQ_INT(large.req.err, 0);
	CHECK(large.got_body && !large.got_data);
	CHECK(valid_fetched(large.req.path, cache, &body_fix[2]));
	CHECK(large.headers && strcasestr(large.headers, "X-DEBUGINFOD-SIZE: "));

	/* Poisoned: refused, no body, nothing kept. */
	CHECK_EQ_INT(poisoned.req.err, -EBADMSG);
	CHECK(!poisoned.got_body && poisoned.req.path == NULL);
	free(want);
	if (asprintf(&want, "%s/%s/debuginfo", cache, body_fix[1].hex) < 0)
		exit(2);
	CHECK(access(want, F_OK) != 0);

	/* Nobody has it: no body. */
	CHECK_EQ_INT(none.req.err, -ENOENT);
	CHECK(!none.got_body);

	/* Neither callback: -EINVAL. */
	{
		DS_OPTS(ds_fetch_opts, nocb, .user = &st);
		struct ds_fetch_req r = { .build_id = body_fix[2].bid, .what = DS_ARTIFACT_DEBUGINFO };

		CHECK_EQ_INT(ds_fetch_start(st.ctx, &r, &nocb), -EINVAL);
	}
	ds_context_free(st.ctx);
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=clear", body_fix[1].hex);
	free(server_get(ctl));
	for (int i = 0; i < 3; i++) {
		free(small[i].data);
		free(small[i].headers);
	}
	free(plain.req.path);
	free(large.req.path);
	free(large.headers);
	free(want);
	free(cache);
	printf("  %.2f s\n", now_s() - t0);
}

/* A job waiting for another process's lock while every admission slot is
 * taken must sleep between its tries, not spin: the loop once kept its
 * expired wake time and polled with no timeout until a slot freed.  The
 * lock is held by this process through its own descriptor (flock(2)
 * locks belong to the open file), the one slot by a download the server
 * delays for 1.5 s; the process's CPU time over a second of that wait
 * shows a spin (a whole CPU) from sleeping. */
static void case_lock_wait_starved(void)
{
	char *cache = t_path("cache-starved"), *entry, ctl[256];
	const struct fix *locked = &async_fix[1], *slow = &async_fix[2];
	const char *dirs[2] = { empty_dir, NULL };
	DS_OPTS(ds_context_opts, o, .debug_dirs = dirs, .perf_buildid_dir = "", .urls = server_url,
		.cache_path = cache, .timeout_s = 20, .max_transfers = 1, .log_fn = log_stderr,
		.log_level = DS_LOG_WARN);
	struct async_state st = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, NULL };
	static struct async_call a, b;
	struct timespec c0, c1;
	double cpu_ms;
	int lockfd;

	printf("case: a lock waiter while the only slot is taken sleeps\n");
	st.ctx = ds_context_new(&o);
	CHECK(st.ctx != NULL);
	if (!st.ctx)
		return;
	if (asprintf(&entry, "%s/%s", cache, locked->hex) < 0)
		exit(2);
	mkdir(cache, 0700);
	mkdir(entry, 0700);
	lockfd = open(entry, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(lockfd >= 0 && flock(lockfd, LOCK_EX) == 0);
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=latency&arg=1500", slow->hex);
	free(server_get(ctl));

	CHECK_EQ_INT(async_start(&a, locked, &st), 1); /* waits for our lock */
	usleep(100000);
	CHECK_EQ_INT(async_start(&b, slow, &st), 1); /* the only slot */
	usleep(100000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	usleep(1000000);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	cpu_ms = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
	printf("  %.1f ms of CPU over 1 s of waiting\n", cpu_ms);
	CHECK(cpu_ms < 300);
	close(lockfd); /* the other "process" is done, with nothing there */
	CHECK(async_wait(&st, 2));
	CHECK_EQ_INT(a.req.err, 0);
	CHECK_EQ_INT(b.req.err, 0);
	CHECK(valid_fetched(a.req.path, cache, locked));
	CHECK(valid_fetched(b.req.path, cache, slow));
	free(a.req.path);
	free(b.req.path);
	snprintf(ctl, sizeof(ctl), "/control/fault?bid=%s&kind=clear", slow->hex);
	free(server_get(ctl));
	ds_context_free(st.ctx);
	free(entry);
	free(cache);
}

int main(void)
{
	char *cache_many;
	struct ds_context *ctx;
	double t0 = now_s();

	/* Never anyone's proxy: only 127.0.0.1. */
	unsetenv("http_proxy");
	unsetenv("HTTP_PROXY");
	unsetenv("https_proxy");
	unsetenv("HTTPS_PROXY");
	unsetenv("all_proxy");
	unsetenv("ALL_PROXY");
	setup_fixtures();
	server_start();
	printf("fixtures and server ready in %.2f s (%s)\n", now_s() - t0, server_url);

	cache_many = t_path("cache-many");
	ctx = new_context(cache_many, NULL);
	case_many_threads(ctx, cache_many);
	ds_context_free(ctx);
	case_many_stores();
	case_prefetch();
	case_cache_deleted();
	case_cancel_again();
	case_warm(cache_many);
	free(cache_many);
	case_headers();
	case_ima_opts();
	case_async();
	case_body();
	case_lock_wait_starved();

	printf("total %.2f s\n", now_s() - t0);
	server_stop();
	return t_done("test_fetch");
}
