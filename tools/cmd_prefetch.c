/* dsostore prefetch perf.data: the debuginfo of every DSO a recording
 * needs, local sources first and then one parallel debuginfod batch, with
 * a summary; --perf-cache puts each into perf's build-id cache. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { O_ALL = 1, O_KERNEL, O_PERF_CACHE, O_QUIET };

static const struct cli_opt prefetch_opts[] = {
	{ O_ALL, 0, "all", NULL, "every DSO the recordings map, not only sampled ones", 0 },
	{ O_KERNEL, 0, "kernel", NULL, "the kernel and its modules too (large downloads)", 0 },
	{ O_PERF_CACHE, 0, "perf-cache", NULL,
	  "install each debuginfo perf would not find by itself (fetched, or in another debug "
	  "directory) into perf's build-id cache (--perf-buildid-dir, else $PERF_BUILDID_DIR, "
	  "else ~/.debug) so that perf report finds it offline, with the dwz alt file it names "
	  "where perf's addr2line looks for it, and its .dwp beside it (where gdb and "
	  "llvm-symbolizer look)",
	  0 },
	{ O_QUIET, 'q', "quiet", NULL, "only the lines for DSOs left without debuginfo", 0 },
	{ 0 },
};
static const struct cli_opt *const prefetch_tables[] = {
	prefetch_opts, cli_opts_progress, cli_opts_lookup, cli_opts_kernel,
	cli_opts_verbose, cli_opts_help, NULL
};

struct tally {
	size_t local, fetched, cached, missing, failed, nobid, kernel, installed;
	/* dwz alt files, each counted once: found, missing, into perf's cache */
	struct ds_build_id *alts;
	size_t nalts, alts_missing, alts_installed;
	/* split DWARF: DSOs with skeleton units, their units and where they
	 * are, packages put into perf's cache */
	size_t split_dsos, dwps_installed;
	uint64_t units, in_dwp, in_dwo, units_missing;
};

/* Installs d's debuginfo; returns its path in perf's cache (malloc()ed),
 * NULL when perf finds it by itself or it failed. */
static char *install(struct ds_context *ctx, const struct ds_perf_dso *d,
		     const struct ds_debuginfo *di, struct tally *t, int *status)
{
	char *where = NULL;
	int rc;

	/* Only what perf would not find by itself: it reads a binary's own
	 * debuginfo, its cache, debuglinks and /usr/lib/debug, but neither
	 * the debuginfod cache (perf 6.1 as Debian builds it) nor other debug
	 * directories. */
	switch (ds_debuginfo_source(di)) {
	case DS_SOURCE_SELF:
	case DS_SOURCE_PERF_CACHE:
		return NULL;
	case DS_SOURCE_BUILD_ID_DIR:
	case DS_SOURCE_DEBUGLINK:
		if (!strncmp(ds_debuginfo_path(di), "/usr/lib/debug/", 15))
			return NULL;
		break;
	default:
		break;
	}
	rc = ds_perf_cache_install(ctx, d->path[0] == '/' ? d->path : NULL,
				   ds_debuginfo_build_id(di), ds_debuginfo_path(di), &where);
	if (rc) {
		cli_error("%s: perf cache: %s", d->path, ds_strerror(rc));
		*status = 1;
		return NULL;
	}
	t->installed++;
	return where;
}

/* The dwz alt file d's debuginfo names (prefetch's second round fetched
 * it), counted once per build ID; with installed (d's debuginfo in perf's
 * cache), put where perf's srcline looks for it. */
static void alt_file(struct ds_context *ctx, const struct ds_perf_dso *d, const char *installed,
		     struct tally *t, int *status)
{
	struct ds_build_id bid;
	char *path = NULL, hex[2 * DS_BUILD_ID_MAX + 1];
	bool seen = false;
	int rc = ds_dso_alt_file(d->dso, &bid, &path);

	if (rc == -ENODATA)
		return;
	for (size_t i = 0; i < t->nalts && !seen; i++)
		seen = ds_build_id_equal(&t->alts[i], &bid);
	if (!seen) {
		struct ds_build_id *v = realloc(t->alts, (t->nalts + 1) * sizeof(*v));

		if (v) {
			t->alts = v;
			t->alts[t->nalts++] = bid;
		}
		if (rc) {
			t->alts_missing++;
			ds_build_id_format(&bid, hex, sizeof(hex));
			printf("missing  %s (the dwz alt file of %s)\n", hex, cli_t(d->path));
		}
	}
	if (!rc && installed) {
		rc = ds_perf_cache_install_alt(ctx, installed, path, NULL);
		if (rc) {
			cli_error("%s: perf cache: its dwz alt file %s: %s", d->path, path,
				  ds_strerror(rc));
			*status = 1;
		} else if (!seen) {
			t->alts_installed++;
		}
	}
	free(path);
}

/* The split DWARF d's debuginfo needs (prefetch's split round looked for
 * it): counted, a line when units are missing; with installed, its .dwp
 * put beside it. */
static void split_files(struct ds_context *ctx, const struct ds_perf_dso *d, const char *installed,
			struct tally *t, int *status)
{
	struct ds_split_files sf;
	int rc = ds_dso_split_files(d->dso, &sf);

	if (rc) {
		if (rc != -ENODATA) {
			cli_error("%s: split DWARF: %s", d->path, ds_strerror(rc));
			*status = 1;
		}
		return;
	}
	t->split_dsos++;
	t->units += sf.units;
	t->in_dwp += sf.in_dwp;
	t->in_dwo += sf.in_dwo;
	t->units_missing += sf.missing;
	if (sf.missing)
		printf("missing  %llu of %llu split units of %s (no .dwo or .dwp of their id)\n",
		       (unsigned long long)sf.missing, (unsigned long long)sf.units, cli_t(d->path));
	if (sf.dwp && installed) {
		rc = ds_perf_cache_install_dwp(ctx, installed, sf.dwp, NULL);
		if (rc) {
			cli_error("%s: perf cache: its package %s: %s", d->path, sf.dwp,
				  ds_strerror(rc));
			*status = 1;
		} else {
			t->dwps_installed++;
		}
	}
	free(sf.dwp);
}

static int prefetch_one(struct ds_context *ctx, const char *path, bool all, bool kernel,
			bool perf_cache, bool progress, bool quiet)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = progress ? cli_progress : NULL);
	struct ds_fetch_stats before, after;
	const struct ds_perf_dso *dsos;
	struct ds_perf_session *sess;
	struct ds_perf_data *pd;
	struct tally t = { 0 };
	struct timespec t0, t1;
	char err[256] = "", bytes[32];
	size_t n, considered = 0;
	int rc, status = 0;

	rc = ds_perf_data_open(path, &pd, err, sizeof(err));
	if (rc) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(rc));
		return 2;
	}
	sess = ds_perf_session_new(ctx, pd, NULL, err, sizeof(err));
	ds_perf_data_close(pd);
	if (!sess) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(-errno));
		return 2;
	}
	ds_fetch_stats(ctx, &before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = ds_perf_session_prefetch(sess,
				      (all ? DS_PERF_PREFETCH_ALL : 0) |
					      (kernel ? DS_PERF_PREFETCH_KERNEL : 0),
				      &fo);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ds_fetch_stats(ctx, &after);
	if (rc < 0) {
		cli_error("%s: %s", path, ds_strerror(rc));
		ds_perf_session_free(sess);
		return rc == -ECANCELED ? 1 : 2;
	}
	n = ds_perf_session_dsos(sess, &dsos);
	for (size_t i = 0; i < n; i++) {
		const struct ds_perf_dso *d = &dsos[i];
		const struct ds_debuginfo *di;
		char hex[2 * DS_BUILD_ID_MAX + 1] = "(no build ID)", why[512], *where;

		if (!all && !d->samples && !d->callchain_hits)
			continue;
		if (d->kernel && !kernel) {
			t.kernel++;
			continue;
		}
		considered++;
		if (!d->dso) {
			t.nobid++;
			continue;
		}
		if (d->build_id.size)
			ds_build_id_format(&d->build_id, hex, sizeof(hex));
		rc = ds_dso_debuginfo(d->dso, &di);
		if (rc == 0) {
			switch (ds_debuginfo_source(di)) {
			case DS_SOURCE_DEBUGINFOD:
				t.fetched++;
				break;
			case DS_SOURCE_DEBUGINFOD_CACHE:
				t.cached++;
				break;
			default:
				t.local++;
			}
			where = perf_cache ? install(ctx, d, di, &t, &status) : NULL;
			alt_file(ctx, d, where, &t, &status);
			split_files(ctx, d, where, &t, &status);
			free(where);
			continue;
		}
		ds_dso_error(d->dso, why, sizeof(why));
		/* What was looked at goes with -v; one line says what is missing. */
		if (rc == -ENOENT || rc == -ENODATA || rc == -ENOSYS) {
			t.missing++;
			printf("missing  %s %s\n", hex, cli_t(d->path));
		} else {
			t.failed++;
			status = 1;
			printf("failed   %s %s: %s\n", hex, cli_t(d->path), ds_strerror(rc));
		}
	}
	if (!quiet) {
		double secs = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;

		cli_human((double)(after.bytes - before.bytes), bytes, sizeof(bytes));
		printf("%s: %zu DSOs%s", cli_t(path), considered, all ? "" : " with samples or in callchains");
		if (t.kernel)
			printf(" (and %zu kernel ones, not asked for: --kernel)", t.kernel);
		printf("\n  found locally      %zu\n", t.local);
		printf("  debuginfod cache   %zu\n", t.cached);
		printf("  fetched            %zu  (%s in %.2f s)\n", t.fetched, bytes, secs);
		printf("  missing            %zu\n", t.missing);
		printf("  failed             %zu\n", t.failed);
		if (t.nobid)
			printf("  no build ID        %zu  (not a file here: anonymous memory, "
			       "JIT code, [vdso]...)\n",
			       t.nobid);
		if (t.nalts)
			printf("  dwz alt files      %zu  (%zu missing)\n", t.nalts, t.alts_missing);
		if (t.split_dsos)
			printf("  split DWARF units  %llu  (of %zu DSOs: %llu in .dwp, %llu in .dwo, "
			       "%llu missing)\n",
			       (unsigned long long)t.units, t.split_dsos,
			       (unsigned long long)t.in_dwp, (unsigned long long)t.in_dwo,
			       (unsigned long long)t.units_missing);
		if (perf_cache)
			printf("  into perf's cache  %zu\n", t.installed);
		if (perf_cache && t.nalts)
			printf("  alt files there    %zu\n", t.alts_installed);
		if (perf_cache && t.split_dsos)
			printf("  .dwp files there   %zu\n", t.dwps_installed);
	}
	free(t.alts);
	ds_perf_session_free(sess);
	return status;
}

static int cmd_prefetch(int argc, char **argv)
{
	struct cli_common common = { 0 };
	bool all = false, kernel = false, perf_cache = false, quiet = false;
	const char *files[64];
	int nfiles = 0, progress = -1, status = 0;
	struct ds_context *ctx;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_prefetch, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		if (id == O_ALL) {
			all = true;
		} else if (id == O_KERNEL) {
			kernel = true;
		} else if (id == O_PERF_CACHE) {
			perf_cache = true;
		} else if (id == O_QUIET) {
			quiet = true;
		} else if (nfiles < (int)(sizeof(files) / sizeof(files[0]))) {
			files[nfiles++] = p.arg;
		} else {
			cli_error("prefetch: more than %zu recordings", sizeof(files) / sizeof(files[0]));
			return 2;
		}
	}
	progress = common.progress;
	if (!nfiles)
		files[nfiles++] = "perf.data"; /* perf's default */
	ctx = cli_context(&common);
	for (int i = 0; i < nfiles; i++) {
		int rc = prefetch_one(ctx, files[i], all, kernel, perf_cache,
				      cli_want_progress(progress), quiet);

		if (rc > status)
			status = rc;
	}
	ds_context_free(ctx);
	return status;
}

const struct cli_command cli_cmd_prefetch = {
	.name = "prefetch",
	.run = cmd_prefetch,
	.summary = "the debuginfo a perf recording needs, in one parallel batch",
	.usage = "[OPTIONS] PERF.DATA...",
	.about = "Finds the debuginfo of every DSO with samples (or in their callchains) in\n"
		 "the recordings: on this machine first (the binary itself, debug\n"
		 "directories, debuglink, perf's build-id cache, the debuginfod cache), then\n"
		 "from the servers of $DEBUGINFOD_URLS, all at once; then the dwz alt files\n"
		 "that debuginfo names, the same way, and the .dwp and .dwo files of its split\n"
		 "DWARF, on this machine (no server has them).  Ends with a summary,\n"
		 "and a line for each DSO left without debuginfo.  Exit status 1 when a fetch\n"
		 "failed (a server error, not \"no server has it\"), 2 on bad usage or an\n"
		 "unreadable recording.\n",
	.tables = prefetch_tables,
};
