/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "benchutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char *bench_name = "bench";
bool bench_verbose;
char tmpdir[512];
char load_at_start[16] = "?";
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", bench_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void progress(const char *fmt, ...)
{
	static uint64_t t0;
	uint64_t t = now_ns();
	va_list ap;

	if (!t0)
		t0 = t;
	if (!bench_verbose)
		return;
	fprintf(stderr, "%s: %6.2f s  ", bench_name, (double)(t - t0) / 1e9);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void rng_seed(uint64_t seed)
{
	rng_state = seed;
}

uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

void hex(const uint8_t *buf, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < len; i++) {
		out[2 * i] = digits[buf[i] >> 4];
		out[2 * i + 1] = digits[buf[i] & 15];
	}
	out[2 * len] = '\0';
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (!p)
		die("out of memory");
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (rc < 0)
		die("out of memory");
	return s;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void rm_tmpdir(void)
{
	if (tmpdir[0] && !getenv("DS_KEEP_TMP"))
		rm_tree(tmpdir);
}

void make_tmpdir(const char *prefix)
{
	const char *base = getenv("DS_BENCH_TMPDIR");

	if (!base || !*base)
		base = access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/%s.XXXXXX", base && *base ? base : "/tmp", prefix);
	if (!mkdtemp(tmpdir))
		die("mkdtemp %s: %s", tmpdir, strerror(errno));
	atexit(rm_tmpdir);
}

void write_file(const char *path, const void *buf, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) != 0)
		die("write %s: %s", path, strerror(errno));
}

void run(const char *cmd)
{
	int rc = system(cmd);

	if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
		die("failed: %s", cmd);
}

void read_load(void)
{
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%15s", load_at_start) != 1)
			snprintf(load_at_start, sizeof(load_at_start), "?");
		fclose(f);
	}
}
