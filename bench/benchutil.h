/* SPDX-License-Identifier: MIT */
/* What the C benchmarks (bench_store, bench_fetch) share: dying with a
 * message, the clock, a deterministic RNG, hex without the library, a
 * temporary directory removed at exit (kept with DS_KEEP_TMP=1), and the
 * load average at start.  Each bench sets bench_name and bench_verbose. */
#ifndef DS_BENCHUTIL_H
#define DS_BENCHUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

extern const char *bench_name; /* prefixes every message */
extern bool bench_verbose; /* -v: progress() prints */
extern char tmpdir[512]; /* make_tmpdir()'s */
extern char load_at_start[16]; /* read_load()'s: the 1-minute load average */

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* With -v: what is about to be measured, and when (seconds since start). */
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
uint64_t now_ns(void);
/* xorshift64*: deterministic, so every run uses the same keys. */
void rng_seed(uint64_t seed);
uint64_t rng(void);
/* Hex without the library, so that setup does not depend on what is measured. */
void hex(const uint8_t *buf, size_t len, char *out);
void *xcalloc(size_t n, size_t size);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int cmp_double(const void *a, const void *b);
void rm_tree(const char *path);
/* tmpdir: DS_BENCH_TMPDIR, else /dev/shm (file churn stays off the disk),
 * else $TMPDIR or /tmp; "<base>/<prefix>.XXXXXX", removed at exit. */
void make_tmpdir(const char *prefix);
void write_file(const char *path, const void *buf, size_t len, mode_t mode);
/* system(cmd); dies unless it exits 0. */
void run(const char *cmd);
void read_load(void);

#endif
