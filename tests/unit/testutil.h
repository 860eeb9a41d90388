/* Small helpers shared by the C tests: checks that report file:line, a
 * scratch directory removed at exit, and compiling generated sources. */
#ifndef DS_TESTUTIL_H
#define DS_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

extern int t_failures;

#define CHECK(cond)                                                                 \
	do {                                                                        \
		if (!(cond)) {                                                      \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                             \
			t_failures++;                                               \
		}                                                                   \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                          \
	do {                                                                        \
		long long _a = (long long)(a), _b = (long long)(b);                 \
		if (_a != _b) {                                                     \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
				__LINE__, #a, _a, #b, _b);                          \
			t_failures++;                                               \
		}                                                                   \
	} while (0)

/* A fresh directory under $TMPDIR, removed (recursively) at exit. */
const char *t_tmpdir(void);
/* printf-style path under t_tmpdir(), malloc()ed: the caller frees it. */
char *t_path(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A build ID from hex by our own parser, so that a bug in
 * ds_build_id_parse() cannot hide one elsewhere; exits on bad input. */
struct ds_build_id;
void t_hex_to_bid(const char *hex, struct ds_build_id *out);
/* Equal and set, compared byte by byte here (not by the library). */
bool t_same_bid(const struct ds_build_id *a, const struct ds_build_id *b);
/* mkdir -p of the directories above path (not path itself). */
void t_mkdir_parents(const char *path);
/* A whole file, malloc()ed; exits the test if it cannot be read. */
void *t_read_all(const char *path, size_t *len);
/* Write a file. */
void t_write_file(const char *path, const char *text);
/* popen(..., "r") of a printf-style command; exits the test if it cannot. */
FILE *t_popen(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A store for "host" with that memory budget (0: none); exits on failure. */
struct ds_context;
struct ds_store;
struct ds_store *t_store_new(struct ds_context *ctx, uint64_t budget);
/* The store's counters now. */
struct ds_store_stats t_stats(struct ds_store *s);
/* Run a shell command; returns its exit status (or -1). */
int t_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Compile C source text with cc and flags into out; exits the test with 77
 * (skip) if the compiler is missing, fails it if compilation fails. */
void t_compile(const char *cc, const char *flags, const char *source, const char *out);
/* [lo, hi) of symbol name in file, as nm -S gives it; exits the test if
 * it has none. */
void t_symbol_range(const char *file, const char *name, uint64_t *lo, uint64_t *hi);
/* The build ID of a file as eu-readelf -n reports it ("" when none). */
const char *t_readelf_build_id(const char *path);
/* A result as addr2line -f [-i] prints it, malloc()ed: "??"/"??:0" when
 * nothing is known, "FILE:?" for an unknown line; like binutils, the
 * innermost row's discriminator on every frame. */
struct ds_sym_result;
char *t_format_a2l(const struct ds_sym_result *r);
/* Print the summary and return the exit code for main(). */
int t_done(const char *name);

#endif
