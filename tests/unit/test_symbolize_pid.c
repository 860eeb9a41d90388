/* SPDX-License-Identifier: MIT */
/*
 * ds_symbolize_pid() and the reasons of answers (enum ds_sym_reason).
 *
 * A forked child of this test (the same mappings, so our function
 * pointers are its absolute addresses) is asked for addresses in two DSOs
 * in mixed order, one in no mapping and one repeated: the answers must
 * come in input order, each of ours named after the function whose
 * address we took (first principles; its range from nm -S, the load bias
 * from dl_iterate_phdr), libc's named as nm -D names the symbol at
 * dladdr()'s address (any of its aliases) with dladdr()'s file as the
 * module, and the unmapped one DS_SYM_OUTSIDE with reason "in no mapping
 * of the process".
 *
 * Then reasons of ds_dso_symbolize_batch(): a shared library compiled
 * here, stripped, with no debuginfo anywhere: its exported function is
 * still named from .dynsym (nm -D) but the answer says "no debuginfo"
 * with the search's error (-ENOENT, and ds_dso_error() says no server was
 * asked; with a server that refuses the connection, -ECONNREFUSED and no
 * frames); the unstripped original answers with
 * reason "found", and address 0 (no symbol there: nm) "no symbol at this
 * address".
 */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int t_pid_first(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int t_pid_second(int x)
{
	return x * 5 + 2;
}

static int bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uint64_t *)arg = info->dlpi_addr; /* the first: the executable */
	return 1;
}

/* Whether nm -D of file has name at vaddr (a defined symbol). */
static bool nm_has(const char *file, uint64_t vaddr, const char *name)
{
	FILE *p = t_popen("nm -D --defined-only '%s'", file);
	char line[512], sym[400], type;
	unsigned long long v;
	bool yes = false;

	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%llx %c %399s", &v, &type, sym) == 3 && v == vaddr) {
			char *at = strchr(sym, '@'); /* nm's version suffix */

			if (at)
				*at = 0;
			yes |= !strcmp(sym, name);
		}
	pclose(p);
	return yes;
}

static void check_pid(struct ds_store *store)
{
	struct ds_sym_batch *b = ds_sym_batch_new();
	const struct ds_sym_answer *ans;
	char self[4096], libc[4096];
	uint64_t bias = 0, lo1, hi1, lo2, hi2, a[6];
	Dl_info di;
	size_t n;
	pid_t child;
	int rc;

	CHECK(b != NULL);
	dl_iterate_phdr(bias_cb, &bias);
	CHECK(realpath("/proc/self/exe", self) != NULL);
	t_symbol_range(self, "t_pid_first", &lo1, &hi1);
	t_symbol_range(self, "t_pid_second", &lo2, &hi2);
	CHECK(dladdr((void *)(uintptr_t)&qsort, &di) && di.dli_fname && di.dli_saddr);
	CHECK(realpath(di.dli_fname, libc) != NULL);

	child = fork();
	if (child == 0) {
		for (;;)
			pause();
	}
	CHECK(child > 0);
	a[0] = (uint64_t)(uintptr_t)&t_pid_second + 2;
	a[1] = (uint64_t)(uintptr_t)di.dli_saddr; /* libc's qsort */
	a[2] = 16; /* page 0: never mapped */
	a[3] = (uint64_t)(uintptr_t)&t_pid_first + 1;
	a[4] = a[0];
	a[5] = (uint64_t)(uintptr_t)di.dli_saddr + 1;
	/* ELF names: nm's, where libc's DWARF says "__GI_qsort". */
	rc = ds_symbolize_pid(store, child, a, 6, DS_SYM_ELF_NAMES, b);
	ans = ds_sym_batch_answers(b, &n);
	CHECK_EQ_INT(n, 6);
	CHECK_EQ_INT(rc, 5);
	if (n == 6) {
		for (int i = 0; i < 6; i += 3) { /* ours: the function taken */
			const struct ds_sym_answer *x = &ans[i == 0 ? 0 : 3];
			const char *want = i == 0 ? "t_pid_second" : "t_pid_first";
			uint64_t lo = i == 0 ? lo2 : lo1, hi = i == 0 ? hi2 : hi1;

			CHECK_EQ_INT(x->status, DS_SYM_FOUND);
			CHECK_EQ_INT(x->reason, DS_SYM_REASON_NONE);
			CHECK(x->nframes >= 1 && x->frames[x->nframes - 1].function &&
			      !strcmp(x->frames[x->nframes - 1].function, want));
			CHECK(x->addr >= lo && x->addr < hi && x->addr == a[i == 0 ? 0 : 3] - bias);
			CHECK(x->module && !strcmp(x->module, self));
		}
		/* The repeat: the same answer. */
		CHECK(ans[4].nframes == ans[0].nframes && ans[4].addr == ans[0].addr);
		for (int i = 1; i < 6; i += 4) { /* libc's qsort, nm's name */
			const struct ds_sym_answer *x = &ans[i];
			uint64_t v = (uint64_t)(uintptr_t)di.dli_saddr -
				     (uint64_t)(uintptr_t)di.dli_fbase;

			CHECK_EQ_INT(x->status, DS_SYM_FOUND);
			CHECK(x->nframes >= 1 && x->frames[x->nframes - 1].function &&
			      nm_has(libc, v, x->frames[x->nframes - 1].function));
			CHECK(x->module && !strcmp(x->module, libc));
			CHECK(x->reason == DS_SYM_REASON_NONE ||
			      x->reason == DS_SYM_REASON_NO_DEBUGINFO); /* libc6-dbg or not */
		}
		CHECK_EQ_INT(ans[2].status, DS_SYM_OUTSIDE);
		CHECK_EQ_INT(ans[2].reason, DS_SYM_REASON_UNMAPPED);
		CHECK_EQ_INT(ans[2].nframes, 0);
		CHECK(ans[2].addr == 16 && ans[2].module == NULL);
		CHECK(!strcmp(ds_sym_reason_name(ans[2].reason), "in no mapping of the process"));
	}
	/* With a normalizer kept: the same answers, call after call, and the
	 * second builds no index (the normalizer holds the DSOs). */
	{
		struct ds_normalizer *norm = ds_normalizer_new(store, child, NULL);
		struct ds_store_stats st0, st1;

		CHECK(norm != NULL);
		for (int round = 0; norm && round < 2; round++) {
			st0 = t_stats(store);
			rc = ds_normalizer_symbolize(norm, a, 6, DS_SYM_ELF_NAMES, b);
			st1 = t_stats(store);
			ans = ds_sym_batch_answers(b, &n);
			CHECK_EQ_INT(rc, 5);
			CHECK(n == 6 && ans[3].nframes &&
			      !strcmp(ans[3].frames[ans[3].nframes - 1].function, "t_pid_first"));
			CHECK(n == 6 && ans[2].reason == DS_SYM_REASON_UNMAPPED);
			if (round)
				CHECK(st1.dwarf_builds + st1.symtab_builds + st1.symindex_loads ==
				      st0.dwarf_builds + st0.symtab_builds + st0.symindex_loads);
		}
		ds_normalizer_free(norm);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* A process that is gone: every answer says so. */
	rc = ds_symbolize_pid(store, child, a, 2, 0, b);
	ans = ds_sym_batch_answers(b, &n);
	CHECK_EQ_INT(rc, -ESRCH);
	CHECK(n == 2 && ans[0].status == DS_SYM_ERROR && ans[0].error == -ESRCH &&
	      ans[1].reason == DS_SYM_REASON_ERROR);
	/* Bad arguments: no answers. */
	CHECK_EQ_INT(ds_symbolize_pid(store, 0, a, 1, 0, b), -EINVAL);
	ds_sym_batch_answers(b, &n);
	CHECK_EQ_INT(n, 0);
	ds_sym_batch_free(b);
}

static void check_reasons(void)
{
	char *lib = t_path("libr.so"), *stripped = t_path("stripped/libr.so"),
	     *empty = t_path("nodebug"), *sub = t_path("nodebug/x"), *cache = t_path("cache");
	char msg[1024];
	const char *dirs[] = { empty, NULL };
	DS_OPTS(ds_context_opts, co, .debug_dirs = dirs, .urls = "", .perf_buildid_dir = "",
		.symindex = -1);
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_sym_batch *b = ds_sym_batch_new();
	const struct ds_sym_answer *ans;
	struct ds_dso *d;
	uint64_t lo, hi, addrs[2];
	size_t n;

	t_mkdir_parents(stripped);
	t_mkdir_parents(sub);
	t_compile("cc", "-O1 -g -shared -fPIC",
		  "__attribute__((noinline)) int r_exported(int x) { return x * 9 + 4; }\n"
		  "int r_other(int x) { return r_exported(x) + 1; }\n",
		  lib);
	CHECK(t_sh("strip -o '%s' '%s'", stripped, lib) == 0);
	t_symbol_range(lib, "r_exported", &lo, &hi);
	CHECK(nm_has(stripped, lo, "r_exported")); /* .dynsym kept it */
	ctx = ds_context_new(&co);
	store = t_store_new(ctx, 0);

	addrs[0] = lo + 1;
	addrs[1] = 0; /* the ELF header: no symbol, no line */
	d = ds_store_findnew(store, stripped, NULL);
	CHECK(d != NULL);
	ds_dso_symbolize_batch(d, addrs, 2, 0, b);
	ans = ds_sym_batch_answers(b, &n);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_INT(ans[0].status, DS_SYM_FOUND);
		CHECK(ans[0].from_symtab && ans[0].nframes == 1 &&
		      !strcmp(ans[0].frames[0].function, "r_exported"));
		CHECK_EQ_INT(ans[0].reason, DS_SYM_REASON_NO_DEBUGINFO);
		CHECK_EQ_INT(ans[0].debuginfo_error, -ENOENT);
		CHECK_EQ_INT(ans[1].status, DS_SYM_NOT_FOUND);
		CHECK_EQ_INT(ans[1].reason, DS_SYM_REASON_NO_DEBUGINFO);
		CHECK(ans[1].error == 0 && ans[1].debuginfo_error == -ENOENT);
		CHECK(!strcmp(ds_sym_reason_name(ans[1].reason), "no debuginfo"));
	}
	/* Where it looked: no server was asked, and the text says so. */
	CHECK_EQ_INT(ds_dso_error(d, msg, sizeof(msg)), -ENOENT);
	CHECK(strstr(msg, "no servers (DEBUGINFOD_URLS)") != NULL);
	ds_dso_put(d);

	/* A server that refuses the connection (nothing listens on port 1 of
	 * the loopback): the download's error, not "no symbol here". */
	{
		DS_OPTS(ds_context_opts, co2, .debug_dirs = dirs, .urls = "http://127.0.0.1:1",
			.perf_buildid_dir = "", .symindex = -1, .retry_limit = -1,
			.cache_path = cache);
		struct ds_context *ctx2 = ds_context_new(&co2);
		struct ds_store *store2 = t_store_new(ctx2, 0);
		struct ds_dso *d2 = ds_store_findnew(store2, stripped, NULL);

		CHECK(d2 != NULL);
		ds_dso_symbolize_batch(d2, addrs, 2, 0, b);
		ans = ds_sym_batch_answers(b, &n);
		CHECK(n == 2 && ans[0].reason == DS_SYM_REASON_NO_DEBUGINFO &&
		      ans[1].reason == DS_SYM_REASON_NO_DEBUGINFO);
		CHECK(n == 2 && ans[0].debuginfo_error == -ECONNREFUSED);
		ds_dso_put(d2);
		ds_store_free(store2);
		ds_context_free(ctx2);
	}

	d = ds_store_findnew(store, lib, NULL);
	CHECK(d != NULL);
	ds_dso_symbolize_batch(d, addrs, 2, 0, b);
	ans = ds_sym_batch_answers(b, &n);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK(ans[0].status == DS_SYM_FOUND && !ans[0].from_symtab);
		CHECK_EQ_INT(ans[0].reason, DS_SYM_REASON_NONE);
		CHECK_EQ_INT(ans[0].debuginfo_error, 0);
		CHECK_EQ_INT(ans[1].status, DS_SYM_NOT_FOUND);
		CHECK_EQ_INT(ans[1].reason, DS_SYM_REASON_NO_SYMBOL);
		CHECK_EQ_INT(ans[1].debuginfo_error, 0);
	}
	/* A file offset outside every segment. */
	addrs[0] = 1ull << 40;
	ds_dso_symbolize_batch(d, addrs, 1, DS_SYM_FILE_OFFSET, b);
	ans = ds_sym_batch_answers(b, &n);
	CHECK(n == 1 && ans[0].status == DS_SYM_OUTSIDE && ans[0].reason == DS_SYM_REASON_OUTSIDE);
	ds_dso_put(d);
	ds_sym_batch_free(b);
	ds_store_free(store);
	ds_context_free(ctx);
	free(lib);
	free(stripped);
	free(empty);
	free(sub);
	free(cache);
}

int main(void)
{
	struct ds_context *ctx = ds_context_new(NULL);
	struct ds_store *store = t_store_new(ctx, 0);

	check_pid(store);
	ds_store_free(store);
	ds_context_free(ctx);
	check_reasons();
	return t_done("test_symbolize_pid");
}
