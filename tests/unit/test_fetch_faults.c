/* SPDX-License-Identifier: MIT */
/* Fault tests of the debuginfod client that need to be inside the process:
 * cancellation through the progress callback, and first-wins timed around
 * one call (no process start-up in the measure).  tests/cli/fetch_faults.sh
 * covers the other faults through the CLI.
 *
 * Fixtures: two small programs compiled here, served by two dsserver
 * instances ($DSSERVER) on 127.0.0.1; build IDs from eu-readelf, expected
 * bytes are the served files themselves. */
#define _GNU_SOURCE
#include "dsostore.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct server {
	pid_t pid;
	int port;
	char url[64];
};

static struct server srv[2];

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void stop_servers(void)
{
	for (int i = 0; i < 2; i++) {
		if (srv[i].pid > 0) {
			kill(srv[i].pid, SIGTERM);
			waitpid(srv[i].pid, NULL, 0);
			srv[i].pid = 0;
		}
	}
}

/* dsserver on dir; its port is read from --port-file once it listens. */
static void start_server(struct server *s, const char *dsserver, const char *dir, int i)
{
	char *port_file = t_path("s%d.port", i);
	FILE *f;

	s->pid = fork();
	if (s->pid < 0) {
		perror("fork");
		exit(2);
	}
	if (s->pid == 0) {
		execl(dsserver, dsserver, "--port-file", port_file, "--max-runtime", "300",
		      "--die-with-parent", dir, (char *)NULL);
		perror(dsserver);
		_exit(127); /* not exit(): the parent's atexit would remove its tmpdir */
	}
	for (int tries = 0; tries < 200 && !s->port; tries++) {
		usleep(25000);
		f = fopen(port_file, "r");
		if (f) {
			if (fscanf(f, "%d", &s->port) != 1)
				s->port = 0;
			fclose(f);
		}
	}
	free(port_file);
	if (!s->port) {
		fprintf(stderr, "dsserver %s did not start\n", dsserver);
		exit(1);
	}
	snprintf(s->url, sizeof(s->url), "http://127.0.0.1:%d", s->port);
}

/* GET a control endpoint; returns the HTTP status, the body in out. */
static int control(const struct server *s, const char *path, char *out, size_t len)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(s->port) };
	char buf[8192];
	size_t got = 0;
	int fd, code = -1;
	ssize_t n;
	char *body;

	out[0] = 0;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	dprintf(fd, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = 0;
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
		return -1;
	body = strstr(buf, "\r\n\r\n");
	snprintf(out, len, "%s", body ? body + 4 : "");
	out[strcspn(out, "\n")] = 0;
	return code;
}

static void control_ok(const struct server *s, const char *path)
{
	char out[256];
	int code = control(s, path, out, sizeof(out));

	if (code != 200)
		fprintf(stderr, "%s%s: %d %s\n", s->url, path, code, out);
	CHECK_EQ_INT(code, 200);
}

/* No faults, counters at zero, no request left from the test before. */
static void fresh_servers(void)
{
	char out[64];

	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(control(&srv[i], "/control/idle?timeout_ms=3000", out, sizeof(out)),
			     200);
		control_ok(&srv[i], "/control/reset");
		control_ok(&srv[i], "/control/reset-stats");
	}
}

static long requests(const struct server *s, const char *hex)
{
	char path[512], out[64];

	snprintf(path, sizeof(path), "/control/stats?url=/buildid/%s/debuginfo", hex);
	return control(s, path, out, sizeof(out)) == 200 ? atol(out) : -1;
}

/* Entries under <cache>/<hex>/: a cancelled fetch must leave none (no
 * file, no miss, no temporary). */
static int entry_files(const char *cache, const char *hex)
{
	char dir[4096];
	struct dirent *de;
	int n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/%s", cache, hex);
	d = opendir(dir);
	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			fprintf(stderr, "  left in the cache: %s/%s\n", dir, de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static bool same_file(const char *a, const char *b)
{
	return t_sh("cmp -s '%s' '%s'", a, b) == 0;
}

struct cancel_state {
	int64_t cancel_after_ms, start_ms, cancelled_ms;
	int calls;
};

static int cancel_after(void *user, const struct ds_fetch_progress *p)
{
	struct cancel_state *st = user;

	(void)p;
	st->calls++;
	if (now_ms() - st->start_ms < st->cancel_after_ms)
		return 0;
	if (!st->cancelled_ms)
		st->cancelled_ms = now_ms();
	return 1;
}

static struct ds_context *context(const char *urls, const char *cache)
{
	DS_OPTS(ds_context_opts, opts, .urls = urls, .cache_path = cache, .timeout_s = 5,
		.retry_limit = 1);
	struct ds_context *ctx = ds_context_new(&opts);

	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	return ctx;
}

/* A batch cancelled while every request waits on a 2000 ms server:
 * -ECANCELED at once, the transfers dropped, nothing cached (not even a
 * miss for the build IDs no server has); the same context then fetches
 * normally. */
static void test_cancel(const char *hex, const char *file)
{
	char *cache = t_path("cache-cancel");
	const char *unknown[2] = { "00000000000000000000000000000000deadbee1",
				   "00000000000000000000000000000000deadbee2" };
	struct ds_fetch_req reqs[3] = { { .what = DS_ARTIFACT_DEBUGINFO } };
	struct cancel_state st = { .cancel_after_ms = 300 };
	struct ds_context *ctx = context(srv[0].url, cache);
	char out[64], *path = NULL;
	struct ds_build_id bid;
	int64_t t;
	int err;

	fresh_servers();

	control_ok(&srv[0], "/control/fault?bid=*&kind=latency&arg=2000");
	CHECK_EQ_INT(ds_build_id_parse(hex, &reqs[0].build_id), 0);
	for (int i = 0; i < 2; i++) {
		reqs[i + 1].what = DS_ARTIFACT_DEBUGINFO;
		CHECK_EQ_INT(ds_build_id_parse(unknown[i], &reqs[i + 1].build_id), 0);
	}
	DS_OPTS(ds_fetch_opts, opts, .progress = cancel_after, .user = &st, .progress_ms = 20);
	st.start_ms = now_ms();
	err = ds_fetch_batch(ctx, reqs, 3, &opts);
	t = now_ms();
	CHECK_EQ_INT(err, -ECANCELED);
	CHECK(st.cancelled_ms > 0);
	/* Returned at the cancel, not after the server's 2000 ms. */
	if (st.cancelled_ms)
		CHECK(t - st.cancelled_ms < 500);
	CHECK(t - st.start_ms < 1500);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ_INT(reqs[i].err, -ECANCELED);
		CHECK(reqs[i].path == NULL);
	}
	/* At most the one request, ended by the cancel (under TSan the cancel
	 * at 300 ms may even come before the request reaches the server). */
	CHECK(requests(&srv[0], hex) <= 1);
	CHECK_EQ_INT(control(&srv[0], "/control/idle?timeout_ms=1500", out, sizeof(out)), 200);
	CHECK_EQ_INT(entry_files(cache, hex), 0);
	CHECK_EQ_INT(entry_files(cache, unknown[0]), 0);
	CHECK_EQ_INT(entry_files(cache, unknown[1]), 0);

	/* The blocking call cancels the same way. */
	st = (struct cancel_state){ .cancel_after_ms = 200, .start_ms = now_ms() };
	ds_build_id_parse(hex, &bid);
	err = ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, &opts);
	CHECK_EQ_INT(err, -ECANCELED);
	CHECK(path == NULL);
	CHECK(now_ms() - st.start_ms < 1500);
	CHECK_EQ_INT(control(&srv[0], "/control/idle?timeout_ms=1500", out, sizeof(out)), 200);
	CHECK_EQ_INT(entry_files(cache, hex), 0);

	/* Nothing stale: the same context fetches it once the server is fast. */
	control_ok(&srv[0], "/control/reset");
	err = ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL);
	CHECK_EQ_INT(err, 0);
	if (!err) {
		CHECK(same_file(path, file));
		free(path);
	}
	ds_context_free(ctx);
	/* After the fetcher's thread is gone: still nothing for the others. */
	CHECK_EQ_INT(entry_files(cache, unknown[0]), 0);
	CHECK_EQ_INT(entry_files(cache, unknown[1]), 0);
	free(cache);
}

struct stall_state {
	const char *entry_dir;
	bool saw_tmp;
	int64_t bytes;
};

/* Cancels once body bytes have arrived, after noting whether the
 * download's temporary file (debuginfo.XXXXXX) is there to be removed. */
static int cancel_mid_body(void *user, const struct ds_fetch_progress *p)
{
	struct stall_state *st = user;
	struct dirent *de;
	DIR *d;

	if (!p->bytes)
		return 0;
	st->bytes = (int64_t)p->bytes;
	d = opendir(st->entry_dir);
	while (d && (de = readdir(d)))
		if (!strncmp(de->d_name, "debuginfo.", 10))
			st->saw_tmp = true;
	if (d)
		closedir(d);
	return 1;
}

/* The winner stalls mid-body and the caller cancels: the partial download
 * in its temporary file goes, and nothing is cached. */
static void test_cancel_mid_body(const char *hex)
{
	char *cache = t_path("cache-cancel-stall"), *entry = t_path("cache-cancel-stall/%s", hex);
	struct stall_state st = { .entry_dir = entry };
	struct ds_context *ctx = context(srv[0].url, cache);
	char out[64], *path = NULL;
	struct ds_build_id bid;
	int64_t t0;
	int err;

	fresh_servers();

	/* Past the first 64 KiB, which a download holds in memory
	 * (transfer.h, DS__XFER_SPOOL): then it has a temporary file. */
	control_ok(&srv[0], "/control/fault?bid=*&kind=stall&arg=67584");
	ds_build_id_parse(hex, &bid);
	DS_OPTS(ds_fetch_opts, opts, .progress = cancel_mid_body, .user = &st, .progress_ms = 20);
	t0 = now_ms();
	err = ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, &opts);
	CHECK_EQ_INT(err, -ECANCELED);
	CHECK(path == NULL);
	CHECK(now_ms() - t0 < 2000); /* the stall is 5 s (timeout_s) from failing */
	CHECK(st.bytes > 0);
	CHECK(st.saw_tmp); /* else this test proves nothing about temporaries */
	CHECK_EQ_INT(control(&srv[0], "/control/idle?timeout_ms=2000", out, sizeof(out)), 200);
	ds_context_free(ctx); /* the fetcher's thread has finished with it */
	CHECK_EQ_INT(entry_files(cache, hex), 0);
	control_ok(&srv[0], "/control/reset");
	free(entry);
	free(cache);
}

struct waiter_arg {
	struct ds_context *ctx;
	struct ds_build_id bid;
	int err;
	char *path;
};

static void *fetch_thread(void *arg)
{
	struct waiter_arg *w = arg;

	w->err = ds_fetch(w->ctx, &w->bid, DS_ARTIFACT_DEBUGINFO, NULL, &w->path, NULL);
	return NULL;
}

/* Two callers wait for one download; one of them cancels.  The other
 * still gets the file: a cancel drops only what nobody else waits for. */
static void test_cancel_one_of_two(const char *hex, const char *file)
{
	char *cache = t_path("cache-cancel-one");
	struct ds_context *ctx = context(srv[0].url, cache);
	struct waiter_arg w = { .ctx = ctx };
	struct cancel_state st = { .cancel_after_ms = 200 };
	char path_fault[512], *path = NULL;
	pthread_t th;
	int err;

	fresh_servers();

	snprintf(path_fault, sizeof(path_fault), "/control/fault?bid=%s&kind=latency&arg=1000",
		 hex);
	control_ok(&srv[0], path_fault);
	ds_build_id_parse(hex, &w.bid);
	if (pthread_create(&th, NULL, fetch_thread, &w) != 0) {
		perror("pthread_create");
		exit(2);
	}
	/* The thread's request is in (polled: a sanitizer build is slow). */
	for (int i = 0; i < 500 && requests(&srv[0], hex) < 1; i++)
		usleep(10000);
	DS_OPTS(ds_fetch_opts, opts, .progress = cancel_after, .user = &st, .progress_ms = 20);
	st.start_ms = now_ms();
	err = ds_fetch(ctx, &w.bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, &opts);
	CHECK_EQ_INT(err, -ECANCELED);
	pthread_join(th, NULL);
	CHECK_EQ_INT(w.err, 0);
	if (!w.err) {
		CHECK(same_file(w.path, file));
		free(w.path);
	}
	CHECK_EQ_INT(requests(&srv[0], hex), 1);
	ds_context_free(ctx);
	control_ok(&srv[0], "/control/reset");
	free(cache);
}

/* A server that hangs costs the timeout once per context: the next call,
 * for another build ID, knows it is down and fails at once. */
static void test_down_remembered(const char *hex_a, const char *hex_b)
{
	char *cache = t_path("cache-down");
	DS_OPTS(ds_context_opts, copts, .urls = srv[1].url, .cache_path = cache, .timeout_s = 1);
	struct ds_context *ctx = ds_context_new(&copts);
	struct ds_build_id bid;
	char out[64], *path = NULL;
	int64_t t0, ms;

	fresh_servers();

	if (!ctx) {
		perror("ds_context_new");
		exit(1);
	}
	control_ok(&srv[1], "/control/fault?bid=*&kind=hang");
	ds_build_id_parse(hex_a, &bid);
	t0 = now_ms();
	CHECK_EQ_INT(ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL), -ETIMEDOUT);
	ms = now_ms() - t0;
	CHECK(ms >= 700 && ms < 3000);
	ds_build_id_parse(hex_b, &bid);
	t0 = now_ms();
	CHECK_EQ_INT(ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL), -ETIMEDOUT);
	ms = now_ms() - t0;
	if (ms >= 300)
		fprintf(stderr, "second call to a down server took %lld ms\n", (long long)ms);
	CHECK(ms < 300);
	CHECK_EQ_INT(requests(&srv[1], hex_b), 0);
	CHECK_EQ_INT(entry_files(cache, hex_a), 0);
	CHECK_EQ_INT(entry_files(cache, hex_b), 0);
	ds_context_free(ctx);
	control_ok(&srv[1], "/control/reset");
	CHECK_EQ_INT(control(&srv[1], "/control/idle?timeout_ms=2000", out, sizeof(out)), 200);
	free(cache);
}

/* Server 0 answers after 500 ms, server 1 at once: the call takes the fast
 * answer without waiting for the slow one, whose transfer is dropped. */
static void test_first_wins(const char *hex, const char *file, const char *warm_hex)
{
	char urls[160], path_fault[512], out[64], *path = NULL;
	char *cache = t_path("cache-first-wins");
	struct ds_context *ctx;
	struct ds_build_id bid;
	int64_t t0, ms;
	int err;

	fresh_servers();

	snprintf(urls, sizeof(urls), "%s %s", srv[0].url, srv[1].url);
	ctx = context(urls, cache);
	/* Warm up: the fetcher's thread, curl, connections to both servers. */
	ds_build_id_parse(warm_hex, &bid);
	CHECK_EQ_INT(ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL), 0);
	free(path);
	path = NULL;

	snprintf(path_fault, sizeof(path_fault), "/control/fault?bid=%s&kind=latency&arg=500",
		 hex);
	control_ok(&srv[0], path_fault);
	ds_build_id_parse(hex, &bid);
	t0 = now_ms();
	err = ds_fetch(ctx, &bid, DS_ARTIFACT_DEBUGINFO, NULL, &path, NULL);
	ms = now_ms() - t0;
	CHECK_EQ_INT(err, 0);
	if (ms >= 400)
		fprintf(stderr, "first-wins took %lld ms\n", (long long)ms);
	CHECK(ms < 400);
	if (!err) {
		CHECK(same_file(path, file));
		free(path);
	}
	CHECK_EQ_INT(requests(&srv[1], hex), 1);
	/* The slow server's request was dropped: it ends. */
	CHECK_EQ_INT(control(&srv[0], "/control/idle?timeout_ms=2000", out, sizeof(out)), 200);
	ds_context_free(ctx);
	control_ok(&srv[0], "/control/reset");
	free(cache);
}

int main(void)
{
	const char *dsserver = getenv("DSSERVER");
	char *dir = t_path("srv"), *a = t_path("srv/a"), *b = t_path("srv/b");
	static char fallback[4096];
	char hex_a[256], hex_b[256];

	if (!dsserver) {
		const char *build = getenv("DS_BUILD");

		snprintf(fallback, sizeof(fallback), "%s/dsserver", build ? build : "build");
		dsserver = fallback;
	}
	if (access(dsserver, X_OK) != 0) {
		fprintf(stderr, "FAIL: no dsserver (set DSSERVER or DS_BUILD)\n");
		return 1;
	}
	mkdir(dir, 0700);
	t_compile("gcc", "-g -O0",
		  "#include <stdio.h>\n"
		  "static const char pad[64 * 1024] = {1};\n"
		  "int main(int c, char **v) { return puts(v[0]) + pad[c]; }\n",
		  a);
	t_compile("gcc", "-g -O0",
		  "#include <stdio.h>\n"
		  "int main(int c, char **v) { (void)v; return printf(\"%d\\n\", c) < 0; }\n",
		  b);
	snprintf(hex_a, sizeof(hex_a), "%s", t_readelf_build_id(a));
	snprintf(hex_b, sizeof(hex_b), "%s", t_readelf_build_id(b));
	if (!hex_a[0] || !hex_b[0] || !strcmp(hex_a, hex_b)) {
		fprintf(stderr, "FAIL: build IDs '%s' '%s'\n", hex_a, hex_b);
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	atexit(stop_servers);
	start_server(&srv[0], dsserver, dir, 0);
	start_server(&srv[1], dsserver, dir, 1);

	test_cancel(hex_a, a);
	test_cancel_mid_body(hex_a);
	test_cancel_one_of_two(hex_a, a);
	test_down_remembered(hex_a, hex_b);
	test_first_wins(hex_a, a, hex_b);

	stop_servers();
	free(dir);
	free(a);
	free(b);
	return t_done("test_fetch_faults");
}
