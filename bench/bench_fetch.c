// SPDX-License-Identifier: MIT
/*
 * bench_fetch: many build IDs from a slow debuginfod server, dsostore's
 * parallel fetcher against the elfutils client used the usual ways.
 *
 * One dsserver (tests/server) serves N (200) debuginfo files that differ
 * only in their build IDs, adding 50 ms to every request.  Measured in this
 * one run, each with a fresh empty cache:
 *   A   `dsostore fetch ID...`: all of them in one process;
 *   A'  ds_fetch_batch() in this process (the fetch without process start),
 *       also with max_per_server 32 and 64, without the added latency, and
 *       with the cache on disk instead of tmpfs;
 *   B   `debuginfod-find debuginfo ID`, one process per build ID;
 *   B'  the same with elfutils 0.192's debuginfod-find (scripts/peers'
 *       debuginfod-find-0.192), when it is there;
 *   C   debuginfod_find_debuginfo() of libdebuginfod, one client, serially;
 * beside two references: `curl -Z --parallel-max 16` (libcurl's own
 * parallel client at the fetcher's concurrency: what the server and the
 * machine allow) and N serial write+fsync+rename on disk (what the cache's
 * durable writes cost there), and the floor ceil(N / concurrency) x 50 ms
 * that no client limited to that many connections can beat.  Then, warm
 * (everything cached): ds_fetch_batch() per build ID and `dsostore fetch`
 * once more, which must not send a single request.
 *
 * Every path returned is checked: it exists and carries the requested
 * build ID, read by this file's own ELF note reader (and, for a few, by
 * eu-readelf), never by the library under test.  The server's counters
 * (/control/stats) give the requests and connections each client made.
 * Each figure is the median of a few runs taken in rounds (A, A', B, C,
 * then again), so that a noisy moment hits every row alike.
 */
#define _GNU_SOURCE
#include "benchutil.h"
#include "dsostore.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef DS_HAVE_LIBDEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#define BID_LEN	    20
#define HEX_LEN	    (2 * BID_LEN + 1)
#define MAX_REPS    15
#define MAX_ROWS    32
#define WARM_REPS   15 /* a warm batch takes about a millisecond */
#define TMPFS_MAGIC 0x01021994

extern char **environ;

static struct {
	unsigned int n; /* build IDs */
	int reps;
	int latency_ms;
	double budget_s; /* for the whole run; B and C give way */
} cfg = {200, 3, 50, 100};

static const char *dsostore_bin, *dsserver_bin;
static char *find_bin, *find192_bin, *readelf_bin, *curl_bin;
static char *find192_libs; /* its libraries' directory, for LD_LIBRARY_PATH */
static char url[64];
static int port;
static pid_t server_pid;
static int failures; /* checks that failed but leave figures worth printing */

struct id {
	uint8_t bid[BID_LEN];
	char hex[HEX_LEN];
	off_t size; /* of the served file */
};

static struct id *ids;

/* ------------------------------------------------------------ utilities */

static double median(const double *in, int n, double *lo, double *hi)
{
	double v[MAX_REPS];

	memcpy(v, in, sizeof(v[0]) * (size_t)n);
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	if (lo)
		*lo = n > 1 ? v[0] : NAN;
	if (hi)
		*hi = n > 1 ? v[n - 1] : NAN;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static char *read_file(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return NULL;
	}
	buf = xcalloc(1, (size_t)st.st_size + 1);
	if (read(fd, buf, (size_t)st.st_size) != st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = (size_t)st.st_size;
	close(fd);
	return buf;
}

static char disk[512]; /* a directory on disk for the on-disk rows, or "" */

static void rm_disk(void)
{
	if (disk[0] && !getenv("DS_KEEP_TMP"))
		rm_tree(disk);
}

/* A program on $PATH (malloc()ed), or NULL. */
static char *which(const char *name)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *ret = NULL;

	if (!path)
		return NULL;
	copy = strdup(path);
	for (dir = strtok_r(copy, ":", &save); dir && !ret; dir = strtok_r(NULL, ":", &save)) {
		char *p = xasprintf("%s/%s", *dir ? dir : ".", name);

		if (access(p, X_OK) == 0)
			ret = p;
		else
			free(p);
	}
	free(copy);
	return ret;
}

/* Peer NAME as scripts/peers unpacks it (malloc()ed), or NULL: in
 * $DS_PEERS/bin, else $DS_CORPUS/peers/bin, else build-corpus/peers/bin
 * of $DS_SRC (tests/lib/testlib.bash's tl_peer looks in the same places). */
static char *peer(const char *name)
{
	const char *peers = getenv("DS_PEERS"), *corpus = getenv("DS_CORPUS");
	const char *src = getenv("DS_SRC");
	char *p;

	if (peers && *peers)
		p = xasprintf("%s/bin/%s", peers, name);
	else if (corpus && *corpus)
		p = xasprintf("%s/peers/bin/%s", corpus, name);
	else
		p = xasprintf("%s/build-corpus/peers/bin/%s", src && *src ? src : ".", name);
	if (access(p, X_OK) == 0)
		return p;
	free(p);
	return NULL;
}

/* The program a scripts/peers wrapper (.../peers/bin/NAME) runs, PROG of
 * .../peers/root/usr/bin, with the directory of the prefix's libraries,
 * .../peers/root/usr/lib/<multiarch>, in *libs (both malloc()ed): run
 * so, B' does not count the wrapper's shell, readlink and dirname
 * processes, which would double the cost of each debuginfod-find.  NULL
 * when the layout is not that. */
static char *peer_program(const char *wrapper, const char *prog, char **libs)
{
	char *peers = xasprintf("%s", wrapper), *slash, *lib, *ret = NULL;
	DIR *d;
	struct dirent *e;

	*libs = NULL;
	for (int up = 0; up < 2; up++) {
		slash = strrchr(peers, '/');
		if (!slash)
			goto out;
		*slash = 0;
	}
	lib = xasprintf("%s/root/usr/lib", peers);
	if ((d = opendir(lib))) {
		while ((e = readdir(d)) && !*libs) {
			size_t n = strlen(e->d_name);

			if (n > 10 && !strcmp(e->d_name + n - 10, "-linux-gnu"))
				*libs = xasprintf("%s/%s", lib, e->d_name);
		}
		closedir(d);
	}
	free(lib);
	ret = xasprintf("%s/root/usr/bin/%s", peers, prog);
	if (!*libs || access(ret, X_OK) != 0) {
		free(ret);
		free(*libs);
		ret = *libs = NULL;
	}
out:
	free(peers);
	return ret;
}

/* ------------------------------------------------ the build-ID note, our own */

/* Offset of the NT_GNU_BUILD_ID descriptor in an ELF64 little-endian file
 * (what cc makes here), or -1.  Independent of the library on purpose. */
static long note_offset(const char *buf, size_t len, size_t *desc_len)
{
	const Elf64_Ehdr *eh = (const void *)buf;

	if (len < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > len)
		return -1;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *sh = (const void *)(buf + eh->e_shoff + i * sizeof(Elf64_Shdr));
		uint64_t off = sh->sh_offset, end = sh->sh_offset + sh->sh_size;

		if (sh->sh_type != SHT_NOTE || end > len)
			continue;
		while (off + sizeof(Elf64_Nhdr) <= end) {
			const Elf64_Nhdr *nh = (const void *)(buf + off);
			uint64_t name = off + sizeof(*nh);
			uint64_t desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(buf + name, "GNU", 4)) {
				*desc_len = nh->n_descsz;
				return (long)desc;
			}
			off = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return -1;
}

/* A returned path must be a regular file of the served size carrying the
 * requested build ID. */
static bool file_has_build_id(const char *path, const struct id *id)
{
	size_t len = 0, dlen = 0;
	char *buf = read_file(path, &len);
	long off = buf ? note_offset(buf, len, &dlen) : -1;
	bool ok = off >= 0 && dlen == BID_LEN && !memcmp(buf + off, id->bid, BID_LEN) &&
		  (off_t)len == id->size;

	free(buf);
	return ok;
}

/* eu-readelf's word on a file, for a few of them. */
static bool readelf_says(const char *path, const char *want_hex)
{
	char *cmd = xasprintf("'%s' -n '%s' 2>/dev/null", readelf_bin, path), line[512];
	FILE *p = popen(cmd, "r");
	bool ok = false;

	while (p && fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && !strncmp(b + 10, want_hex, HEX_LEN - 1) &&
		    (b[10 + HEX_LEN - 1] == '\n' || !b[10 + HEX_LEN - 1]))
			ok = true;
	}
	if (p)
		pclose(p);
	free(cmd);
	return ok;
}

static void spot_check(char **paths, const char *what)
{
	static bool said;
	unsigned pick[3] = {0, cfg.n / 2, cfg.n - 1};

	if (!readelf_bin) {
		if (!said)
			fprintf(stderr, "bench_fetch: no eu-readelf; spot checks skipped\n");
		said = true;
		return;
	}
	for (int i = 0; i < 3; i++)
		if (!readelf_says(paths[pick[i]], ids[pick[i]].hex))
			die("%s: eu-readelf does not see build ID %s in %s", what, ids[pick[i]].hex,
			    paths[pick[i]]);
}

/* ---------------------------------------------------------------- corpus */

static const char prog_src[] = "#include <stdio.h>\n"

/* lib/debuginfod/fetch.c's default max_per_server: the concurrency against one
 * HTTP/1.1 server, which sets the floor. */
#define DEFAULT_PER_SERVER 32u
			       "struct point { int x, y; };\n"
			       "static int dot(struct point a, struct point b)\n"
			       "{\n"
			       "\treturn a.x * b.x + a.y * b.y;\n"
			       "}\n"
			       "int main(int argc, char **argv)\n"
			       "{\n"
			       "\tstruct point p = { argc, 2 }, q = { 3, argc };\n"
			       "\t(void)argv;\n"
			       "\tprintf(\"%d\\n\", dot(p, q));\n"
			       "\treturn 0;\n"
			       "}\n";

static void random_id(struct id *id)
{
	for (int i = 0; i < BID_LEN; i++)
		id->bid[i] = (uint8_t)(rng() >> 56);
	hex(id->bid, BID_LEN, id->hex);
}

/* One link, then copies with the 20 build-ID bytes patched: the server
 * indexes each copy under its own build ID (tests/server/README.md). */
static void make_corpus(void)
{
	const char *cc = getenv("CC");
	char *src = xasprintf("%s/prog.c", tmpdir), *bin = xasprintf("%s/prog", tmpdir);
	char *corpus = xasprintf("%s/corpus", tmpdir), *cmd;
	struct id first;
	size_t len, dlen;
	char *buf;
	long off;

	random_id(&first);
	write_file(src, prog_src, sizeof(prog_src) - 1, 0644);
	cmd = xasprintf("%s -g -O1 -Wl,--build-id=0x%s -o '%s' '%s'", cc && *cc ? cc : "cc",
			first.hex, bin, src);
	run(cmd);
	free(cmd);
	if (!(buf = read_file(bin, &len)))
		die("read %s: %s", bin, strerror(errno));
	off = note_offset(buf, len, &dlen);
	if (off < 0 || dlen != BID_LEN || memcmp(buf + off, first.bid, BID_LEN))
		die("%s: no 20-byte GNU build ID note with the ID given to ld", bin);
	if (mkdir(corpus, 0755) != 0)
		die("mkdir %s: %s", corpus, strerror(errno));
	ids = xcalloc(cfg.n, sizeof(*ids));
	for (unsigned i = 0; i < cfg.n; i++) {
		char *p = xasprintf("%s/prog-%03u", corpus, i);

		random_id(&ids[i]);
		ids[i].size = (off_t)len;
		memcpy(buf + off, ids[i].bid, BID_LEN);
		write_file(p, buf, len, 0644);
		free(p);
	}
	for (unsigned i = 0; i < cfg.n; i += cfg.n / 3 ? cfg.n / 3 : 1) {
		char *p = xasprintf("%s/prog-%03u", corpus, i);

		if (readelf_bin && !readelf_says(p, ids[i].hex))
			die("%s: eu-readelf does not see the patched build ID %s", p, ids[i].hex);
		free(p);
	}
	progress("corpus: %u copies of a %zu-byte -g program", cfg.n, len);
	free(buf);
	free(src);
	free(bin);
	free(corpus);
}

/* ---------------------------------------------------------------- server */

/* GET on the test server (its /control endpoints), HTTP/1.0 so that it
 * closes when done.  Returns the status; the body goes to buf. */
static int http_get(const char *path, char *buf, size_t len)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	struct timeval tv = {.tv_sec = 30};
	char *req, *all = NULL, *body;
	size_t n = 0, cap = 0;
	int fd, status = -1;
	ssize_t r;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		die("connect to the test server: %s", strerror(errno));
	req = xasprintf("GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		die("write to the test server: %s", strerror(errno));
	free(req);
	do {
		if (n + 4096 > cap) {
			cap = 2 * cap + 4096;
			if (!(all = realloc(all, cap + 1)))
				die("out of memory");
		}
		r = read(fd, all + n, 4096);
		n += r > 0 ? (size_t)r : 0;
	} while (r > 0);
	close(fd);
	if (!all)
		die("no answer from the test server to %s", path);
	all[n] = 0;
	if (sscanf(all, "HTTP/%*s %d", &status) != 1)
		die("bad answer from the test server to %s", path);
	body = strstr(all, "\r\n\r\n");
	snprintf(buf, len, "%s", body ? body + 4 : "");
	free(all);
	return status;
}

static void control(const char *path, const char *want)
{
	char body[4096];
	int st = http_get(path, body, sizeof(body));

	if (st != 200 || (want && strncmp(body, want, strlen(want))))
		die("test server: %s answered %d %s", path, st, body);
}

struct server_counts {
	uint64_t requests, connections;
};

static uint64_t base_conns; /* the counter when server_quiet() left it */

static struct server_counts read_stats(void)
{
	struct server_counts c = {0, 0};
	char body[65536], *p;

	if (http_get("/control/stats", body, sizeof(body)) != 200)
		die("test server: /control/stats failed");
	if ((p = strstr(body, "requests ")))
		c.requests = strtoull(p + 9, NULL, 10);
	if ((p = strstr(body, "connections ")))
		c.connections = strtoull(p + 12, NULL, 10);
	return c;
}

/* Before a measurement: nothing in flight, counters at zero. */
static void server_quiet(void)
{
	control("/control/idle?timeout_ms=10000", "in_flight 0");
	control("/control/reset-stats", NULL);
	base_conns = read_stats().connections;
}

/* What the client did since server_quiet().  Requests are counted on
 * arrival and /control is never counted; connections are, ours included,
 * so take the difference of two reads less the two control connections
 * made between them (/control/idle and the second read).  That holds
 * whether the server counts a connection when it accepts it or later. */
static struct server_counts server_stats(void)
{
	struct server_counts c;

	control("/control/idle?timeout_ms=10000", "in_flight 0");
	c = read_stats();
	c.connections = c.connections >= base_conns + 2 ? c.connections - base_conns - 2 : 0;
	return c;
}

static void set_latency(int ms)
{
	char *p;

	control("/control/reset", NULL);
	if (!ms)
		return;
	p = xasprintf("/control/fault?bid=*&kind=latency&arg=%d", ms);
	control(p, "ok");
	free(p);
}

static void stop_server(void)
{
	if (server_pid > 0) {
		kill(server_pid, SIGTERM);
		waitpid(server_pid, NULL, 0);
		server_pid = 0;
	}
}

static void start_server(void)
{
	char *portfile = xasprintf("%s/port", tmpdir), *corpus = xasprintf("%s/corpus", tmpdir);
	char *errfile = xasprintf("%s/server.err", tmpdir);
	char *fault = xasprintf("*:latency=%d", cfg.latency_ms);
	char *argv[] = {
	    (char *)dsserver_bin, "--port-file", portfile, "--fault", fault, "--max-runtime", "900",
	    "--die-with-parent",  corpus,	 NULL};
	posix_spawn_file_actions_t fa;
	char body[256], want[64];
	uint64_t t0 = now_ns();
	size_t len;
	char *txt;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (posix_spawn(&server_pid, dsserver_bin, &fa, NULL, argv, environ) != 0)
		die("cannot start %s", dsserver_bin);
	posix_spawn_file_actions_destroy(&fa);
	atexit(stop_server);
	while (!(txt = read_file(portfile, &len))) {
		if (waitpid(server_pid, NULL, WNOHANG) == server_pid) {
			server_pid = 0;
			txt = read_file(errfile, &len);
			die("the test server exited: %s", txt ? txt : "?");
		}
		if (now_ns() - t0 > 30000000000ull)
			die("the test server did not start within 30 s");
		usleep(10000);
	}
	port = atoi(txt);
	free(txt);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", port);
	/* Every copy indexed under its own build ID, nothing else. */
	http_get("/control/rescan", body, sizeof(body));
	snprintf(want, sizeof(want), "files %u buildids %u", cfg.n, cfg.n);
	if (strncmp(body, want, strlen(want)))
		die("test server indexed \"%s\", expected \"%s\"", body, want);
	progress("dsserver on port %d, %s", port, fault);
	free(portfile);
	free(corpus);
	free(errfile);
	free(fault);
}

/* ---------------------------------------------------------- measurements */

/* One run: wall time, the client's CPU time (user + system, its threads
 * and its children), what the server saw. */
struct sample {
	double wall_ms, cpu_ms;
	struct server_counts c;
};

static double ru_ms(const struct rusage *r)
{
	return (double)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1e3 +
	       (double)(r->ru_utime.tv_usec + r->ru_stime.tv_usec) / 1e3;
}

static double self_cpu_ms(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return ru_ms(&r);
}

static char *fresh_cache(const char *base, const char *name)
{
	char *dir = xasprintf("%s/cache-%s.XXXXXX", base, name);

	if (!mkdtemp(dir))
		die("mkdtemp %s: %s", dir, strerror(errno));
	return dir; /* empty: as on a user's first run */
}

static void drop_dir(char *dir)
{
	if (dir) {
		rm_tree(dir);
		free(dir);
	}
}

/* Each line of out is "<hex> <path>" (or the path alone), for ids[0..n)
 * in order. */
static void check_output(const char *out, bool with_hex, const char *what)
{
	size_t len;
	char *txt = read_file(out, &len), *line, *save = NULL;
	char **paths = xcalloc(cfg.n, sizeof(*paths));
	unsigned i = 0;

	if (!txt)
		die("%s: no output", what);
	for (line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save), i++) {
		char *path = line;

		if (i >= cfg.n)
			die("%s: more than %u lines of output", what, cfg.n);
		if (with_hex) {
			if (strncmp(line, ids[i].hex, HEX_LEN - 1) || line[HEX_LEN - 1] != ' ')
				die("%s: line %u is \"%s\", expected build ID %s", what, i + 1,
				    line, ids[i].hex);
			path = line + HEX_LEN;
		}
		if (!file_has_build_id(path, &ids[i]))
			die("%s: %s is not the file of build ID %s", what, path, ids[i].hex);
		paths[i] = path;
	}
	if (i != cfg.n)
		die("%s: %u paths for %u build IDs", what, i, cfg.n);
	spot_check(paths, what);
	free(paths);
	free(txt);
}

/* Runs argv with stdout appended to out (stderr: err, or inherited);
 * returns the exit status and adds the child's CPU time to *cpu_ms. */
static int spawn_wait(char *const argv[], const char *out, const char *err, double *cpu_ms)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (err)
		posix_spawn_file_actions_addopen(&fa, 2, err, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (posix_spawn(&pid, argv[0], &fa, NULL, argv, environ) != 0)
		die("cannot run %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	if (wait4(pid, &st, 0, &ru) != pid)
		die("wait4: %s", strerror(errno));
	*cpu_ms += ru_ms(&ru);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* A: every build ID on one `dsostore fetch` command line. */
static void run_cli(const char *cache, const char *what, struct sample *s)
{
	char **argv = xcalloc(cfg.n + 4, sizeof(*argv));
	char *out = xasprintf("%s/out.cli", tmpdir);
	uint64_t t0;
	int rc;

	argv[0] = (char *)dsostore_bin;
	argv[1] = "fetch";
	argv[2] = "--no-progress";
	for (unsigned i = 0; i < cfg.n; i++)
		argv[3 + i] = ids[i].hex;
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	unlink(out);
	server_quiet();
	s->cpu_ms = 0;
	t0 = now_ns();
	rc = spawn_wait(argv, out, NULL, &s->cpu_ms);
	s->wall_ms = (double)(now_ns() - t0) / 1e6;
	if (rc != 0)
		die("%s: dsostore fetch exited with %d", what, rc);
	s->c = server_stats();
	check_output(out, true, what);
	unlink(out);
	free(out);
	free(argv);
}

/* B: the loop a script, or a user of a perf without debuginfod, writes,
 * with debuginfod-find BIN (B': 0.192's), LIBS first in LD_LIBRARY_PATH
 * if not NULL. */
static void run_find_loop(char *bin, const char *libs, const char *cache, struct sample *s)
{
	char *out = xasprintf("%s/out.find", tmpdir);
	char *argv[] = {bin, "debuginfo", NULL, NULL};
	const char *had = getenv("LD_LIBRARY_PATH");
	char *saved = had ? xasprintf("%s", had) : NULL;
	uint64_t t0;

	if (libs) {
		char *v = saved ? xasprintf("%s:%s", libs, saved) : xasprintf("%s", libs);

		setenv("LD_LIBRARY_PATH", v, 1);
		free(v);
	}
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	unlink(out);
	server_quiet();
	s->cpu_ms = 0;
	t0 = now_ns();
	for (unsigned i = 0; i < cfg.n; i++) {
		int rc;

		argv[2] = ids[i].hex;
		if ((rc = spawn_wait(argv, out, NULL, &s->cpu_ms)) != 0)
			die("debuginfod-find debuginfo %s exited with %d", ids[i].hex, rc);
	}
	s->wall_ms = (double)(now_ns() - t0) / 1e6;
	if (saved)
		setenv("LD_LIBRARY_PATH", saved, 1);
	else
		unsetenv("LD_LIBRARY_PATH");
	free(saved);
	s->c = server_stats();
	check_output(out, false, "debuginfod-find loop");
	unlink(out);
	free(out);
}

/* Reference: libcurl's own parallel client at the fetcher's concurrency,
 * into plain files: no cache, no lock, no check.  What this server on
 * this machine allows a client to do. */
static void run_curl(const char *dir, struct sample *s)
{
	char *conf = xasprintf("%s/curl.conf", tmpdir), *out = xasprintf("%s/out.curl", tmpdir);
	char *err = xasprintf("%s/curl.err", tmpdir);
	char *argv[] = {curl_bin, "-sS", "--no-progress-meter", "-Z", "--parallel-max", "16", "-K",
			conf,	  NULL};
	FILE *f = fopen(conf, "w");
	uint64_t t0;
	size_t len;
	int rc;

	if (!f)
		die("%s: %s", conf, strerror(errno));
	unlink(out);
	for (unsigned i = 0; i < cfg.n; i++) {
		fprintf(f, "url = \"%s/buildid/%s/debuginfo\"\noutput = \"%s/%s\"\n", url,
			ids[i].hex, dir, ids[i].hex);
	}
	fclose(f);
	server_quiet();
	s->cpu_ms = 0;
	t0 = now_ns();
	rc = spawn_wait(argv, "/dev/null", err, &s->cpu_ms);
	s->wall_ms = (double)(now_ns() - t0) / 1e6;
	if (rc != 0) {
		char *txt = read_file(err, &len);

		die("curl exited with %d: %s", rc, txt ? txt : "");
	}
	unlink(err);
	free(err);
	s->c = server_stats();
	f = fopen(out, "w");
	for (unsigned i = 0; f && i < cfg.n; i++)
		fprintf(f, "%s/%s\n", dir, ids[i].hex);
	if (!f || fclose(f) != 0)
		die("%s: %s", out, strerror(errno));
	check_output(out, false, "curl");
	unlink(out);
	free(out);
	free(conf);
}

#ifdef DS_HAVE_LIBDEBUGINFOD
/* C: libdebuginfod as a tool linked with it calls it, a build ID at a time. */
static void run_libdebuginfod(const char *cache, struct sample *s)
{
	char **paths = xcalloc(cfg.n, sizeof(*paths));
	debuginfod_client *client;
	uint64_t t0;
	double cpu0;

	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	server_quiet();
	cpu0 = self_cpu_ms();
	t0 = now_ns();
	client = debuginfod_begin();
	if (!client)
		die("debuginfod_begin failed");
	for (unsigned i = 0; i < cfg.n; i++) {
		int fd = debuginfod_find_debuginfo(client, ids[i].bid, BID_LEN, &paths[i]);

		if (fd < 0)
			die("debuginfod_find_debuginfo %s: %s", ids[i].hex, strerror(-fd));
		close(fd);
	}
	debuginfod_end(client);
	s->wall_ms = (double)(now_ns() - t0) / 1e6;
	s->cpu_ms = self_cpu_ms() - cpu0;
	s->c = server_stats();
	for (unsigned i = 0; i < cfg.n; i++)
		if (!file_has_build_id(paths[i], &ids[i]))
			die("libdebuginfod: %s is not the file of build ID %s", paths[i],
			    ids[i].hex);
	spot_check(paths, "libdebuginfod");
	for (unsigned i = 0; i < cfg.n; i++)
		free(paths[i]);
	free(paths);
}
#endif

static struct ds_fetch_req *make_reqs(void)
{
	struct ds_fetch_req *reqs = xcalloc(cfg.n, sizeof(*reqs));

	for (unsigned i = 0; i < cfg.n; i++) {
		reqs[i].build_id.size = BID_LEN;
		memcpy(reqs[i].build_id.data, ids[i].bid, BID_LEN);
		reqs[i].what = DS_ARTIFACT_DEBUGINFO;
	}
	return reqs;
}

static void check_reqs(struct ds_fetch_req *reqs, enum ds_source want_src, const char *what,
		       bool spot)
{
	char **paths = xcalloc(cfg.n, sizeof(*paths));

	for (unsigned i = 0; i < cfg.n; i++) {
		if (reqs[i].err)
			die("%s: %s: %s", what, ids[i].hex, ds_strerror(reqs[i].err));
		if (reqs[i].source != want_src)
			die("%s: %s came from %s", what, ids[i].hex,
			    ds_source_name(reqs[i].source));
		if (!file_has_build_id(reqs[i].path, &ids[i]))
			die("%s: %s is not the file of build ID %s", what, reqs[i].path,
			    ids[i].hex);
		paths[i] = reqs[i].path;
	}
	if (spot)
		spot_check(paths, what);
	for (unsigned i = 0; i < cfg.n; i++) {
		free(reqs[i].path);
		reqs[i].path = NULL;
	}
	free(paths);
}

static struct ds_context *new_context(const char *cache, unsigned int max_per_server)
{
	DS_OPTS(ds_context_opts, o, .urls = url, .cache_path = cache, .perf_buildid_dir = "",
		.max_per_server = max_per_server);
	struct ds_context *ctx = ds_context_new(&o);

	if (!ctx)
		die("ds_context_new: %s", strerror(errno));
	return ctx;
}

/* A': the batch call in this process, cold; the call only, on a fresh
 * context (so its fetcher starts without a connection, as a new process). */
static void run_batch(const char *cache, unsigned int mps, const char *what, struct sample *s)
{
	struct ds_context *ctx = new_context(cache, mps);
	struct ds_fetch_req *reqs = make_reqs();
	struct ds_fetch_stats fs;
	uint64_t t0;
	double cpu0;
	int rc;

	server_quiet();
	cpu0 = self_cpu_ms();
	t0 = now_ns();
	rc = ds_fetch_batch(ctx, reqs, cfg.n, NULL);
	s->wall_ms = (double)(now_ns() - t0) / 1e6;
	s->cpu_ms = self_cpu_ms() - cpu0;
	if (rc != 0)
		die("%s: ds_fetch_batch: %d failed", what, rc);
	ds_fetch_stats(ctx, &fs);
	ds_context_free(ctx);
	s->c = server_stats();
	check_reqs(reqs, DS_SOURCE_DEBUGINFOD, what, false);
	if (fs.requests != cfg.n || fs.downloads != cfg.n)
		die("%s: the fetcher counts %llu requests, %llu downloads for %u build IDs", what,
		    (unsigned long long)fs.requests, (unsigned long long)fs.downloads, cfg.n);
	free(reqs);
}

/* Reference: what the cache's durable write costs on that file system,
 * one file after the other as the fetcher's loop thread does it: write,
 * fsync, chmod, rename into a per-build-ID directory. */
static void run_fsync_ref(const char *dir, struct sample *s)
{
	char *corpus0 = xasprintf("%s/corpus/prog-000", tmpdir);
	size_t len;
	char *buf = read_file(corpus0, &len);
	uint64_t t0;
	double cpu0;

	if (!buf)
		die("read %s: %s", corpus0, strerror(errno));
	cpu0 = self_cpu_ms();
	t0 = now_ns();
	for (unsigned i = 0; i < cfg.n; i++) {
		char *d = xasprintf("%s/%s", dir, ids[i].hex),
		     *tmp = xasprintf("%s/debuginfo.tmp", d);
		char *dst = xasprintf("%s/debuginfo", d);
		int fd;

		if (mkdir(d, 0700) != 0 ||
		    (fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0 ||
		    write(fd, buf, len) != (ssize_t)len || fsync(fd) != 0 ||
		    fchmod(fd, 0400) != 0 || close(fd) != 0 || rename(tmp, dst) != 0)
			die("%s: %s", dst, strerror(errno));
		free(d);
		free(tmp);
		free(dst);
	}
	s->wall_ms = (double)(now_ns() - t0) / 1e6;
	s->cpu_ms = self_cpu_ms() - cpu0;
	s->c.requests = s->c.connections = UINT64_MAX; /* no server involved */
	free(buf);
	free(corpus0);
}

/* ------------------------------------------------------------ the rows */

/* One row's runs. */
struct meas {
	double wall[MAX_REPS], cpu[MAX_REPS];
	int n;
	struct server_counts last; /* of the last run: they do not vary */
};

enum kind_id {
	K_CLI,
	K_BATCH,
	K_BATCH32,
	K_BATCH64,
	K_NOLAT,
	K_DISK,
	K_CURL,
	K_FSYNC,
	K_FIND,
	K_FIND192,
	K_LIBDI,
	K_N,
};

struct kind {
	const char *key;
	char name[80];
	bool available;
	bool dsostore;	  /* a cold dsostore fetch: exactly one request per build ID */
	bool slow;	  /* B, C: fewer runs when the time budget is short */
	unsigned int mps; /* max_per_server given to the context, 0: default */
	double floor_ms;  /* 0: none */
	struct meas m;
	char *keep; /* the last run's cache, for the warm rows */
};

static struct kind kinds[K_N];

static void run_kind(enum kind_id id, struct sample *s)
{
	struct kind *k = &kinds[id];
	const char *base = id == K_DISK || id == K_FSYNC ? disk : tmpdir;
	char *dir = fresh_cache(base, k->key);

	switch (id) {
	case K_CLI:
		run_cli(dir, "dsostore fetch", s);
		break;
	case K_BATCH:
	case K_BATCH32:
	case K_BATCH64:
	case K_DISK:
		run_batch(dir, k->mps, k->name, s);
		break;
	case K_NOLAT:
		set_latency(0);
		run_batch(dir, 0, k->name, s);
		set_latency(cfg.latency_ms);
		break;
	case K_CURL:
		run_curl(dir, s);
		break;
	case K_FSYNC:
		run_fsync_ref(dir, s);
		break;
	case K_FIND:
		run_find_loop(find_bin, NULL, dir, s);
		break;
	case K_FIND192:
		run_find_loop(find192_bin, find192_libs, dir, s);
		break;
	case K_LIBDI:
#ifdef DS_HAVE_LIBDEBUGINFOD
		run_libdebuginfod(dir, s);
#endif
		break;
	case K_N:
		break;
	}
	if (id == K_CLI || id == K_BATCH) {
		drop_dir(k->keep);
		k->keep = dir;
	} else {
		drop_dir(dir);
	}
}

static unsigned ceil_div(unsigned a, unsigned b)
{
	return (a + b - 1) / b;
}

static void define_kind(enum kind_id id, const char *key, const char *name, bool available,
			unsigned int mps)
{
	struct kind *k = &kinds[id];
	unsigned int conc = mps ? mps : DEFAULT_PER_SERVER;

	k->key = key;
	snprintf(k->name, sizeof(k->name), "%s", name);
	k->available = available;
	k->mps = mps;
	k->dsostore = id <= K_DISK;
	k->slow = id == K_FIND || id == K_FIND192 || id == K_LIBDI;
	if (id != K_NOLAT && id != K_FSYNC && id != K_FIND && id != K_FIND192 && id != K_LIBDI)
		k->floor_ms = ceil_div(cfg.n, conc > 64 ? 64 : conc) * (double)cfg.latency_ms;
}

/* A directory on disk when TMPDIR (or /tmp) is not tmpfs but tmpdir is;
 * removed at exit with tmpdir. */
static void make_disk_dir(void)
{
	const char *t = getenv("TMPDIR");
	struct statfs a, b;

	if (!t || !*t)
		t = "/tmp";
	if (statfs(tmpdir, &a) != 0 || statfs(t, &b) != 0 || a.f_type != TMPFS_MAGIC ||
	    b.f_type == TMPFS_MAGIC)
		return;
	snprintf(disk, sizeof(disk), "%s/dsostore-bench-fetch-disk.XXXXXX", t);
	if (!mkdtemp(disk))
		disk[0] = 0;
}

static void define_kinds(void)
{
	char name[80];

	define_kind(K_CLI, "cli.cold", "A   dsostore fetch, all IDs in one process", true, 0);
	define_kind(K_BATCH, "batch.cold", "A'  ds_fetch_batch, in-process (the call)", true, 0);
	define_kind(K_BATCH32, "batch.cold.mps32", "A'  ... max_per_server 32", true, 32);
	define_kind(K_BATCH64, "batch.cold.mps64", "A'  ... max_per_server 64", true, 64);
	define_kind(K_NOLAT, "batch.cold.nolatency", "A'  ... no added latency", true, 0);
	snprintf(name, sizeof(name), "A'  ... cache on disk (%s)",
		 getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	define_kind(K_DISK, "batch.cold.disk", name, disk[0] != 0, 0);
	define_kind(K_CURL, "ref.curl_parallel16", "ref curl -Z --parallel-max 16, to files",
		    curl_bin != NULL, 0);
	snprintf(name, sizeof(name), "ref write+fsync+rename x %u, serial, on disk", cfg.n);
	define_kind(K_FSYNC, "ref.fsync_disk", name, disk[0] != 0, 0);
	define_kind(K_FIND, "find_loop", "B   debuginfod-find, one process per ID",
		    find_bin != NULL, 0);
	define_kind(K_FIND192, "find_loop_0192", "B'  ... elfutils 0.192's debuginfod-find",
		    find192_bin != NULL, 0);
#ifdef DS_HAVE_LIBDEBUGINFOD
	define_kind(K_LIBDI, "libdebuginfod", "C   libdebuginfod, one client, serially", true, 0);
#else
	define_kind(K_LIBDI, "libdebuginfod", "C   libdebuginfod, one client, serially", false, 0);
#endif
}

static double elapsed_s(void)
{
	static uint64_t t0;

	if (!t0)
		t0 = now_ns();
	return (double)(now_ns() - t0) / 1e9;
}

/* Rounds: every row once per round, so that a noisy moment of the machine
 * hits all rows alike.  B and C take most of the time: after the first
 * round, they run again only while the budget allows. */
static void rounds(void)
{
	double fast_round_s = 0;

	elapsed_s();
	for (int r = 0; r < cfg.reps; r++) {
		double t_fast = elapsed_s();

		progress("round %d of %d", r + 1, cfg.reps);
		for (int id = 0; id < K_N; id++) {
			struct kind *k = &kinds[id];
			struct sample s;
			double left;

			if (!k->available)
				continue;
			if (k->slow && r == 0 && !fast_round_s)
				fast_round_s = elapsed_s() - t_fast;
			left = cfg.budget_s - elapsed_s() - fast_round_s * (cfg.reps - r - 1);
			if (k->slow && r > 0 && k->m.wall[k->m.n - 1] / 1e3 > left) {
				progress("%-44s skipped: over the time budget (-t)", k->name);
				continue;
			}
			run_kind((enum kind_id)id, &s);
			k->m.wall[k->m.n] = s.wall_ms;
			k->m.cpu[k->m.n] = s.cpu_ms;
			k->m.n++;
			k->m.last = s.c;
			progress("%-44s %8.1f ms, cpu %6.1f ms, %lld requests, %lld connections",
				 k->name, s.wall_ms, s.cpu_ms, (long long)s.c.requests,
				 (long long)s.c.connections);
			/* One request per build ID, not one more: nothing
			 * retried, nothing asked twice. */
			if (k->dsostore && s.c.requests != cfg.n) {
				fprintf(stderr,
					"bench_fetch: %s: the server saw %llu requests for %u "
					"build IDs\n",
					k->name, (unsigned long long)s.c.requests, cfg.n);
				failures++;
			}
		}
	}
}

/* Warm: the same build IDs again, all in the cache: not one request.  A
 * batch of 200 takes about a millisecond, less than the machine's noise:
 * each repetition runs as many batches as fill WARM_REP_NS, and the figure
 * is the median over WARM_REPS repetitions of the time per build ID. */
#define WARM_REP_NS	 20000000ull
#define WARM_MAX_BATCHES 256

static uint64_t warm_batches(struct ds_context *ctx, struct ds_fetch_req **sets, unsigned k,
			     uint64_t *good)
{
	uint64_t t0 = now_ns(), t;

	for (unsigned b = 0; b < k; b++)
		if (ds_fetch_batch(ctx, sets[b], cfg.n, NULL) != 0)
			die("warm ds_fetch_batch: a build ID failed");
	t = now_ns() - t0;
	/* Counted and freed outside the timed part. */
	for (unsigned b = 0; b < k; b++) {
		for (unsigned i = 0; i < cfg.n; i++) {
			struct ds_fetch_req *r = &sets[b][i];

			*good += !r->err && r->path && r->source == DS_SOURCE_DEBUGINFOD_CACHE;
			free(r->path);
			r->path = NULL;
		}
	}
	return t;
}

static double warm_batch_us(struct server_counts *c, double *lo, double *hi)
{
	struct ds_context *ctx = new_context(kinds[K_BATCH].keep, 0);
	struct ds_fetch_req *sets[WARM_MAX_BATCHES];
	uint64_t good = 0, calls = 0, t;
	struct ds_fetch_stats fs;
	double per_id[WARM_REPS];
	unsigned k = 1;

	for (unsigned b = 0; b < WARM_MAX_BATCHES; b++)
		sets[b] = make_reqs();
	server_quiet();
	/* The first batch is checked file by file (and warms up). */
	if (ds_fetch_batch(ctx, sets[0], cfg.n, NULL) != 0)
		die("warm ds_fetch_batch: a build ID failed");
	check_reqs(sets[0], DS_SOURCE_DEBUGINFOD_CACHE, "warm ds_fetch_batch", true);
	calls += cfg.n;
	while ((t = warm_batches(ctx, sets, k, &good)) < WARM_REP_NS / 4 && k < WARM_MAX_BATCHES) {
		calls += (uint64_t)k * cfg.n;
		k *= 2;
	}
	calls += (uint64_t)k * cfg.n;
	k = (unsigned)((double)k * WARM_REP_NS / (double)(t ? t : 1)) + 1;
	k = k > WARM_MAX_BATCHES ? WARM_MAX_BATCHES : k;
	for (int r = 0; r < WARM_REPS; r++) {
		per_id[r] = (double)warm_batches(ctx, sets, k, &good) / 1e3 / k / cfg.n;
		calls += (uint64_t)k * cfg.n;
	}
	*c = server_stats();
	ds_fetch_stats(ctx, &fs);
	ds_context_free(ctx);
	if (good + cfg.n != calls)
		die("warm ds_fetch_batch: %llu of %llu answers were not a cached path",
		    (unsigned long long)(calls - cfg.n - good), (unsigned long long)calls);
	if (fs.requests || fs.cache_hits != calls)
		die("warm ds_fetch_batch: the fetcher counts %llu requests, %llu cache hits for "
		    "%llu",
		    (unsigned long long)fs.requests, (unsigned long long)fs.cache_hits,
		    (unsigned long long)calls);
	for (unsigned b = 0; b < WARM_MAX_BATCHES; b++)
		free(sets[b]);
	progress("warm ds_fetch_batch: %u batches per repetition", k);
	return median(per_id, WARM_REPS, lo, hi);
}

/* The CLI once more on its warm cache; m->last sums the server's counts. */
static void warm_cli(struct meas *m)
{
	memset(m, 0, sizeof(*m));
	for (int i = 0; i < cfg.reps; i++) {
		struct sample s;

		run_cli(kinds[K_CLI].keep, "warm dsostore fetch", &s);
		m->wall[m->n] = s.wall_ms;
		m->cpu[m->n++] = s.cpu_ms;
		m->last.requests += s.c.requests;
		m->last.connections += s.c.connections;
		progress("warm dsostore fetch %8.1f ms, %llu requests", s.wall_ms,
			 (unsigned long long)s.c.requests);
	}
}

/* ------------------------------------------------------------- the table */

enum goal { G_NONE, G_MAX, G_MIN, G_EQ };

struct row {
	const char *key;
	char name[96];
	double value, min, max; /* NAN: not measured; min/max NAN: one run */
	double cpu_ms;		/* NAN: not shown */
	int runs;
	const char *unit;
	bool vs_a;		   /* a time comparable with A */
	double floor_ms;	   /* 0: none */
	long long requests, conns; /* -1: not shown */
	enum goal goal;
	double goal_v;
};

static struct row rows[MAX_ROWS];
static int nrows;

static struct row *add_row(const char *key, const char *name, const char *unit)
{
	struct row *r;

	if (nrows == MAX_ROWS)
		die("too many rows");
	r = &rows[nrows++];
	memset(r, 0, sizeof(*r));
	r->key = key;
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->unit = unit;
	r->value = r->min = r->max = r->cpu_ms = NAN;
	r->requests = r->conns = -1;
	return r;
}

static struct row *add_meas(const char *key, const char *name, const struct meas *m)
{
	struct row *r = add_row(key, name, "ms");

	r->vs_a = true;
	if (!m->n)
		return r;
	r->runs = m->n;
	r->value = median(m->wall, m->n, &r->min, &r->max);
	r->cpu_ms = median(m->cpu, m->n, NULL, NULL);
	if (m->last.requests != UINT64_MAX) {
		r->requests = (long long)m->last.requests;
		r->conns = (long long)m->last.connections;
	}
	return r;
}

static struct row *add_value(const char *key, const char *name, double v, const char *unit,
			     enum goal goal, double goal_v)
{
	struct row *r = add_row(key, name, unit);

	r->value = v;
	r->goal = goal;
	r->goal_v = goal_v;
	return r;
}

static void fmt_num(double v, char *buf, size_t len)
{
	if (isnan(v) || isinf(v))
		snprintf(buf, len, "n/a");
	else if (v == (long long)v && fabs(v) < 1e6)
		snprintf(buf, len, "%lld", (long long)v);
	else if (fabs(v) < 10)
		snprintf(buf, len, "%.2f", v);
	else if (fabs(v) < 100)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.0f", v);
}

static void fmt_ratio(double x, char *buf, size_t len)
{
	if (isnan(x) || isinf(x))
		snprintf(buf, len, "-");
	else if (x < 10)
		snprintf(buf, len, "%.2fx", x);
	else if (x < 1000)
		snprintf(buf, len, "%.1fx", x);
	else
		snprintf(buf, len, "%.0fx", x);
}

static const char *met(const struct row *r)
{
	if (r->goal == G_NONE)
		return "-";
	if (isnan(r->value))
		return "n/a";
	switch (r->goal) {
	case G_MAX:
		return r->value <= r->goal_v ? "yes" : "no";
	case G_MIN:
		return r->value >= r->goal_v ? "yes" : "no";
	default:
		return r->value == r->goal_v ? "yes" : "no";
	}
}

static void fmt_goal(const struct row *r, char *buf, size_t len)
{
	static const char *const op[] = {"", "<=", ">=", "="};
	char g[32];

	if (r->goal == G_NONE) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_num(r->goal_v, g, sizeof(g));
	snprintf(buf, len, "%s %s %s%s", op[r->goal], g, r->unit,
		 !strcmp(met(r), "no") ? "  MISSED" : "");
}

static void fmt_count(long long v, char *buf, size_t len)
{
	if (v < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%lld", v);
}

static void print_rows(double a_ms)
{
	int wname = 4, wunit = 4;
	char v[32], ra[32], fl[32], rf[32], cpu[32], rq[32], cn[32], goal[64], lo[32], hi[32];
	char runs[16];

	for (int i = 0; i < nrows; i++) {
		if ((int)strlen(rows[i].name) > wname)
			wname = (int)strlen(rows[i].name);
		if ((int)strlen(rows[i].unit) > wunit)
			wunit = (int)strlen(rows[i].unit);
	}
	printf("dsostore fetch benchmark: %u build IDs, %d ms added per request, %u connections "
	       "per server (default); %ld CPUs, load average %s at start; median of up to %d "
	       "runs\n\n",
	       cfg.n, cfg.latency_ms, DEFAULT_PER_SERVER, sysconf(_SC_NPROCESSORS_ONLN), load_at_start, cfg.reps);
	printf("%-*s  %8s  %-*s  %4s  %7s  %6s  %8s  %7s  %8s  %5s  %s\n", wname, "name", "value",
	       wunit, "unit", "runs", "vs A", "floor", "vs floor", "cpu ms", "requests", "conns",
	       "goal");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		fmt_num(r->value, v, sizeof(v));
		fmt_ratio(r->vs_a ? r->value / a_ms : NAN, ra, sizeof(ra));
		if (r->floor_ms)
			fmt_num(r->floor_ms, fl, sizeof(fl));
		else
			snprintf(fl, sizeof(fl), "-");
		fmt_ratio(r->floor_ms ? r->value / r->floor_ms : NAN, rf, sizeof(rf));
		if (isnan(r->cpu_ms))
			snprintf(cpu, sizeof(cpu), "-");
		else
			snprintf(cpu, sizeof(cpu), "%.0f", r->cpu_ms);
		fmt_count(r->requests, rq, sizeof(rq));
		fmt_count(r->conns, cn, sizeof(cn));
		fmt_goal(r, goal, sizeof(goal));
		if (r->runs)
			snprintf(runs, sizeof(runs), "%d", r->runs);
		else
			snprintf(runs, sizeof(runs), "-");
		printf("%-*s  %8s  %-*s  %4s  %7s  %6s  %8s  %7s  %8s  %5s  %s\n", wname, r->name,
		       v, wunit, r->unit, runs, ra, fl, rf, cpu, rq, cn, goal);
	}
	printf("\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];

		fmt_num(r->value, v, sizeof(v));
		fmt_ratio(r->vs_a ? r->value / a_ms : NAN, ra, sizeof(ra));
		fmt_num(r->goal_v, goal, sizeof(goal));
		fmt_num(r->min, lo, sizeof(lo));
		fmt_num(r->max, hi, sizeof(hi));
		printf("BENCH fetch.%s value=%s unit=%s ratio=%s goal_max=%s goal_min=%s met=%s "
		       "min=%s max=%s\n",
		       r->key, v, r->unit, ra, r->goal == G_MAX || r->goal == G_EQ ? goal : "-",
		       r->goal == G_MIN || r->goal == G_EQ ? goal : "-", met(r),
		       isnan(r->min) ? "-" : lo, isnan(r->max) ? "-" : hi);
	}
	fflush(stdout);
}

static void make_table(double warm_us, double warm_lo, double warm_hi,
		       struct server_counts wc_batch, const struct meas *wcli)
{
	double floor_dflt = ceil_div(cfg.n, DEFAULT_PER_SERVER) * (double)cfg.latency_ms, a_ms = NAN;
	double serial = cfg.n * (double)cfg.latency_ms;
	struct row *r, *rb = NULL, *rb192 = NULL, *rc = NULL, *ra2 = NULL;

	for (int id = 0; id < K_N; id++) {
		struct kind *k = &kinds[id];

		if (!k->available && (id == K_DISK || id == K_FSYNC))
			continue; /* the machine has no disk apart from tmpdir's */
		r = add_meas(k->key, k->name, &k->m);
		r->floor_ms = k->floor_ms;
		if (id == K_CLI)
			a_ms = r->value;
		if (id == K_BATCH)
			ra2 = r;
		if (id == K_FIND)
			rb = r;
		if (id == K_FIND192)
			rb192 = r;
		if (id == K_LIBDI)
			rc = r;
	}
	r = add_value("floor", "floor ceil(N/conc) x latency", floor_dflt, "ms", G_NONE, 0);
	r->vs_a = true;
	r = add_value("floor.serial", "floor of a serial client, N x latency", serial, "ms", G_NONE,
		      0);
	r->vs_a = true;
	r = add_value("warm.batch_per_id", "warm ds_fetch_batch, per build ID", warm_us, "us",
		      G_MAX, 20);
	r->runs = WARM_REPS;
	r->min = warm_lo;
	r->max = warm_hi;
	r->requests = (long long)wc_batch.requests;
	r->conns = (long long)wc_batch.connections;
	add_meas("warm.cli", "warm dsostore fetch, all IDs", wcli);
	add_value("speedup.find_loop", "speed-up B / A", rb->value / a_ms, "x", G_MIN, 30);
	add_value("speedup.find_loop_0192", "speed-up B' / A (elfutils 0.192)", rb192->value / a_ms,
		  "x", G_NONE, 0);
	add_value("speedup.libdebuginfod", "speed-up C / A", rc->value / a_ms, "x", G_NONE, 0);
	add_value("speedup.floors", "speed-up of the floors, serial / conc", serial / floor_dflt, "x",
		  G_NONE, 0);
	add_value("floor_ratio.cli", "A / floor", a_ms / floor_dflt, "x", G_MAX, 1.5);
	add_value("floor_ratio.batch", "A' / floor", ra2->value / floor_dflt, "x", G_NONE, 0);
	add_value("requests.cold", "server requests, A (every run)",
		  (double)kinds[K_CLI].m.last.requests, "requests", G_EQ, cfg.n);
	add_value("requests.warm", "server requests, warm (batch + CLI)",
		  (double)(wc_batch.requests + wcli->last.requests), "requests", G_EQ, 0);
	print_rows(a_ms);
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
	fprintf(f, "usage: bench_fetch [-q] [-v] [-n IDS] [-r RUNS] [-t SECONDS]\n"
		   "  -q          quick: 48 build IDs, one run (a smoke run)\n"
		   "  -n IDS      build IDs served and fetched (200)\n"
		   "  -r RUNS     runs of each measurement; the median is shown (3)\n"
		   "  -t SECONDS  time budget: B and C get fewer runs when they would\n"
		   "              overrun it (100)\n"
		   "  -v          say what is being measured on stderr\n"
		   "Environment: DSOSTORE (the CLI), DSSERVER or DS_BUILD (DS_BUILD/dsserver),\n"
		   "DS_BENCH_TMPDIR, DS_KEEP_TMP=1, TMPDIR (the on-disk rows).\n");
}

static void parse_args(int argc, char **argv)
{
	int c;

	while ((c = getopt(argc, argv, "qvn:r:t:h")) != -1) {
		switch (c) {
		case 'q':
			cfg.n = 48;
			cfg.reps = 1;
			break;
		case 'n':
			cfg.n = (unsigned)atoi(optarg);
			break;
		case 'r':
			cfg.reps = atoi(optarg);
			break;
		case 't':
			cfg.budget_s = atof(optarg);
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
	if (cfg.n < 3 || cfg.n > 1000 || cfg.reps < 1 || cfg.reps > MAX_REPS) {
		usage(stderr);
		exit(2);
	}
}

static const char *tool_path(const char *env, const char *build_rel)
{
	const char *p = getenv(env), *build = getenv("DS_BUILD");

	if (p && *p)
		return p;
	return xasprintf("%s/%s", build && *build ? build : "build", build_rel);
}

/* Nothing of the user's debuginfod or proxy settings may change what is
 * measured. */
static void clean_env(void)
{
	static const char *const vars[] = {
	    "DEBUGINFOD_URLS",
	    "DEBUGINFOD_CACHE_PATH",
	    "DEBUGINFOD_TIMEOUT",
	    "DEBUGINFOD_MAXTIME",
	    "DEBUGINFOD_MAXSIZE",
	    "DEBUGINFOD_RETRY_LIMIT",
	    "DEBUGINFOD_HEADERS_FILE",
	    "DEBUGINFOD_PROGRESS",
	    "DEBUGINFOD_VERBOSE",
	    "http_proxy",
	    "https_proxy",
	    "HTTP_PROXY",
	    "HTTPS_PROXY",
	    "all_proxy",
	    "ALL_PROXY",
	};

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

int main(int argc, char **argv)
{
	struct server_counts wc_batch;
	struct meas wcli;
	double warm_us, warm_lo, warm_hi;

	bench_name = "bench_fetch";
	rng_seed(0x853c49e6748fea9bull);
	parse_args(argc, argv);
	read_load();
	signal(SIGPIPE, SIG_IGN);
	clean_env();
	dsostore_bin = tool_path("DSOSTORE", "dsostore");
	dsserver_bin = tool_path("DSSERVER", "dsserver");
	find_bin = which("debuginfod-find");
	find192_bin = peer("debuginfod-find-0.192");
	if (find192_bin) {
		char *direct = peer_program(find192_bin, "debuginfod-find", &find192_libs);

		if (direct) {
			free(find192_bin);
			find192_bin = direct;
		}
	}
	readelf_bin = which("eu-readelf");
	curl_bin = which("curl");
	if (access(dsostore_bin, X_OK) || access(dsserver_bin, X_OK))
		die("need %s and %s (run make; or set DSOSTORE, DSSERVER)", dsostore_bin,
		    dsserver_bin);
	if (!find_bin)
		fprintf(stderr, "bench_fetch: no debuginfod-find on PATH: row B is n/a\n");
	make_tmpdir("dsostore-bench-fetch");
	atexit(rm_disk);
	make_corpus();
	start_server();
	setenv("DEBUGINFOD_URLS", url, 1);
	make_disk_dir();
	define_kinds();

	rounds();
	progress("warm");
	warm_us = warm_batch_us(&wc_batch, &warm_lo, &warm_hi);
	warm_cli(&wcli);
	make_table(warm_us, warm_lo, warm_hi, wc_batch, &wcli);

	if (wc_batch.requests || wcli.last.requests)
		failures++;
	for (int id = 0; id < K_N; id++)
		drop_dir(kinds[id].keep);
	if (failures)
		fprintf(stderr, "bench_fetch: %d check(s) failed (see above)\n", failures);
	return failures ? 1 : 0;
}
