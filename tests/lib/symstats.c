/* SPDX-License-Identifier: MIT */
/*
 * ds_symstats [-n|-p] FILE ADDR...: a helper of the shell tests (not a
 * test).  Symbolizes each ADDR (hex) of FILE, with inlines (-n: names only,
 * DS_SYM_NO_LINES; -p: names only as perf, DS_SYM_ELF_NAMES too), one
 * ds_dso_symbolize() call each, in a fresh context and store that save and load no index and
 * look in no debug directory, then prints one line per address ("ADDR
 * FUNCTION FILE:LINE" per frame, innermost first, joined by " < ") and a
 * last line of the store's counters: "dwarf_builds N units_built N".  The
 * library's warnings go to stderr.
 */
#define _GNU_SOURCE
#include <dsostore.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void log_stderr(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	fprintf(stderr, "ds_symstats: %s\n", msg);
}

int main(int argc, char **argv)
{
	static const char *const no_dirs[] = { NULL };
	DS_OPTS(ds_context_opts, o, .debug_dirs = no_dirs, .perf_buildid_dir = "", .urls = "",
		.symindex = -1, .log_fn = log_stderr, .log_level = DS_LOG_WARN);
	struct ds_context *ctx;
	struct ds_store *s;
	struct ds_dso *d;
	struct ds_store_stats st;
	unsigned flags = DS_SYM_INLINES;
	int status = 0;

	if (argc > 1 && (!strcmp(argv[1], "-n") || !strcmp(argv[1], "-p"))) {
		flags = DS_SYM_NO_LINES | (argv[1][1] == 'p' ? DS_SYM_ELF_NAMES : 0);
		argv++;
		argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: ds_symstats [-n|-p] FILE ADDR...\n");
		return 2;
	}
	ctx = ds_context_new(&o);
	s = ctx ? ds_store_new(ctx, "host", NULL) : NULL;
	d = s ? ds_store_findnew(s, argv[1], NULL) : NULL;
	if (!d) {
		fprintf(stderr, "ds_symstats: %s: cannot open\n", argv[1]);
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		uint64_t addr = strtoull(argv[i], NULL, 16);
		struct ds_sym_result r;

		if (ds_dso_symbolize(d, addr, flags, &r) != 0) {
			printf("0x%" PRIx64 " error\n", addr);
			status = 1;
			continue;
		}
		printf("0x%" PRIx64, addr);
		for (size_t k = 0; k < r.nframes; k++)
			printf("%s %s %s:%u", k ? " <" : "",
			       r.frames[k].function ? r.frames[k].function : "??",
			       r.frames[k].file ? r.frames[k].file : "??", r.frames[k].line);
		printf("\n");
		ds_sym_result_release(&r);
	}
	ds_store_stats(s, &st);
	printf("dwarf_builds %" PRIu64 " units_built %" PRIu64 "\n", st.dwarf_builds,
	       st.units_built);
	ds_dso_put(d);
	ds_store_free(s);
	ds_context_free(ctx);
	return status;
}
