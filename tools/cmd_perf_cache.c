/* dsostore perf-cache install: debuginfo into perf's build-id cache, where
 * perf report finds it. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct cli_opt perf_cache_opts[] = {
	{ 1, 0, "path", "DSO-PATH",
	  "the binary's path in the cache (default: the FILE's real path; for a BUILD-ID, the "
	  "entry perf already has, else [dsostore]/<build-id>)",
	  CLI_ARG_FILE },
	{ 0 },
};
static const struct cli_opt *const perf_cache_tables[] = {
	perf_cache_opts, cli_opts_lookup, cli_opts_verbose, cli_opts_help, NULL
};

/* The root the library uses, for messages: as ds_context_new() picks it. */
static const char *perf_root(const struct cli_common *c, char *buf, size_t len)
{
	const char *env = getenv("PERF_BUILDID_DIR"), *home = getenv("HOME");

	if (c->perf_buildid_dir)
		return c->perf_buildid_dir;
	if (env)
		return env;
	if (!home || !*home)
		return "";
	snprintf(buf, len, "%s/.debug", home);
	return buf;
}

/* A FILE when such a file exists (its build ID and real path), else a
 * build ID. */
static int resolve_arg(const char *arg, struct ds_build_id *bid, char **real)
{
	struct stat st;
	int err;

	*real = NULL;
	if (stat(arg, &st) == 0) {
		err = ds_build_id_read_file(arg, bid);
		if (err) {
			cli_error("%s: %s", arg, ds_strerror(err));
			return err;
		}
		*real = realpath(arg, NULL);
		if (!*real) {
			err = -errno;
			cli_error("%s: %s", arg, strerror(errno));
		}
		return err;
	}
	err = ds_build_id_parse(arg, bid);
	if (err)
		cli_error("%s: neither a file nor a build ID (2 to 128 hex digits)", arg);
	return err;
}

static int install_one(struct ds_context *ctx, struct ds_store *store, const char *arg,
		       const char *path_opt, const char *root)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	char hex[2 * DS_BUILD_ID_MAX + 1], why[4096];
	const struct ds_debuginfo *di;
	char *real = NULL, *installed = NULL;
	const char *dso_path;
	struct ds_dso *dso;
	int err;

	err = resolve_arg(arg, &id.build_id, &real);
	if (err)
		goto out;
	ds_build_id_format(&id.build_id, hex, sizeof(hex));
	dso = ds_store_findnew(store, real, &id);
	if (!dso) {
		err = -errno;
		cli_error("%s: %s", arg, ds_strerror(err));
		goto out;
	}
	err = ds_dso_debuginfo(dso, &di);
	if (err) {
		ds_dso_error(dso, why, sizeof(why));
		cli_error("%s: no debuginfo for %s: %s", arg, hex, why[0] ? why : ds_strerror(err));
		goto put;
	}
	dso_path = path_opt ? path_opt : real;
	err = ds_perf_cache_install(ctx, dso_path, &id.build_id, ds_debuginfo_path(di), &installed);
	if (err)
		cli_error("%s: cannot install %s into perf's build-id cache %s: %s", arg,
			  ds_debuginfo_path(di), root, ds_strerror(err));
	else
		printf("%s %s\n", hex, cli_t(installed));
put:
	ds_dso_put(dso);
out:
	free(installed);
	free(real);
	return err;
}

static int cmd_perf_cache(int argc, char **argv)
{
	struct cli_common common = { 0 };
	char rootbuf[PATH_MAX], *path_opt = NULL;
	const char *args[256], *sub = NULL, *root;
	int nargs = 0, status = 0;
	struct ds_context *ctx;
	struct ds_store *store;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_perf_cache, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP) {
			free(path_opt);
			return id == CLI_HELP ? 0 : 2;
		}
		if (id == 1) {
			free(path_opt);
			/* A path that exists is named as perf names it: real. */
			path_opt = realpath(p.arg, NULL);
			if (!path_opt && p.arg[0] != '/') {
				cli_error("--path %s: not absolute and not an existing file", p.arg);
				return 2;
			}
			if (!path_opt)
				path_opt = strdup(p.arg);
		} else if (!sub) {
			sub = p.arg;
		} else if (nargs < 256) {
			args[nargs++] = p.arg;
		} else {
			cli_error("perf-cache: more than 256 arguments");
			free(path_opt);
			return 2;
		}
	}
	if (!sub || strcmp(sub, "install") || !nargs) {
		cli_help(stderr, &cli_cmd_perf_cache);
		free(path_opt);
		return 2;
	}
	root = perf_root(&common, rootbuf, sizeof(rootbuf));
	if (!*root) {
		cli_error("perf's build-id cache is disabled (--perf-buildid-dir \"\", or no "
			  "$PERF_BUILDID_DIR and no $HOME)");
		free(path_opt);
		return 1;
	}
	ctx = cli_context(&common);
	store = ds_store_new(ctx, "host", NULL);
	if (!store) {
		cli_error("cannot create a store: %s", ds_strerror(-errno));
		ds_context_free(ctx);
		free(path_opt);
		return 2;
	}
	for (int i = 0; i < nargs; i++)
		if (install_one(ctx, store, args[i], path_opt, root))
			status = 1;
	ds_store_free(store);
	ds_context_free(ctx);
	free(path_opt);
	return status;
}

const struct cli_command cli_cmd_perf_cache = {
	.name = "perf-cache",
	.run = cmd_perf_cache,
	.summary = "install debuginfo into perf's build-id cache",
	.usage = "install [--path DSO-PATH] [OPTIONS] BUILD-ID|FILE...",
	.about = "Finds the debuginfo of each binary (FILE) or build ID (local sources, then\n"
		 "debuginfod if DEBUGINFOD_URLS is set) and installs it in perf's build-id\n"
		 "cache as <root>/<path>/<build-id>/debug with the link\n"
		 "<root>/.build-id/xx/rest, so that perf report resolves its symbols and\n"
		 "source lines.  Prints \"<build-id> <installed file>\" per argument.\n",
	.tables = perf_cache_tables,
};
