/* dsostore find: the local debuginfo or executable of a build ID or file. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { O_DEBUGINFO = 1, O_EXECUTABLE, O_SOURCE };

static const struct cli_opt find_opts[] = {
	{ O_DEBUGINFO, 0, "debuginfo", NULL, "find the debuginfo (default)", 0 },
	{ O_EXECUTABLE, 0, "executable", NULL, "find the executable", 0 },
	{ O_SOURCE, 's', "source", NULL,
	  "also print where it was found (self, build-id-dir, debuglink, perf-cache)", 0 },
	{ 0 },
};
static const struct cli_opt *const find_tables[] = { find_opts, cli_opts_lookup,
						     cli_opts_verbose, cli_opts_help, NULL };

/* A FILE when such a file exists, else it must be a build ID. */
static int resolve_arg(const char *arg, struct ds_build_id *bid, const char **file)
{
	struct stat st;
	int err;

	*file = NULL;
	if (stat(arg, &st) == 0) {
		err = ds_build_id_read_file(arg, bid);
		if (err)
			cli_error("%s: %s", arg, ds_strerror(err));
		*file = arg;
		return err;
	}
	err = ds_build_id_parse(arg, bid);
	if (err)
		cli_error("%s: neither a file nor a build ID (2 to 128 hex digits)", arg);
	return err;
}

static int cmd_find(int argc, char **argv)
{
	enum ds_artifact what = DS_ARTIFACT_DEBUGINFO;
	struct cli_common common = { 0 };
	struct ds_context *ctx;
	const char *args[256];
	int nargs = 0, status = 0;
	bool show_source = false;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_find, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		if (id == O_DEBUGINFO || id == O_EXECUTABLE)
			what = id == O_DEBUGINFO ? DS_ARTIFACT_DEBUGINFO : DS_ARTIFACT_EXECUTABLE;
		else if (id == O_SOURCE)
			show_source = true;
		else if (nargs < 256)
			args[nargs++] = p.arg;
	}
	if (!nargs) {
		cli_help(stderr, &cli_cmd_find);
		return 2;
	}
	ctx = cli_context(&common);
	for (int i = 0; i < nargs; i++) {
		char why[8192], *path = NULL;
		struct ds_build_id bid;
		enum ds_source src;
		const char *file;
		int err;

		if (resolve_arg(args[i], &bid, &file)) {
			status = 1;
			continue;
		}
		err = ds_find(ctx, &bid, file, what, &path, &src, why, sizeof(why));
		if (err) {
			cli_error("%s: no %s found; %s", args[i],
				  what == DS_ARTIFACT_DEBUGINFO ? "debuginfo" : "executable", why);
			status = 1;
			continue;
		}
		if (show_source)
			printf("%s %s\n", cli_t(path), ds_source_name(src));
		else
			printf("%s\n", cli_t(path));
		free(path);
	}
	ds_context_free(ctx);
	return status;
}

const struct cli_command cli_cmd_find = {
	.name = "find",
	.run = cmd_find,
	.summary = "find the local debuginfo or executable of a build ID",
	.usage = "[--debuginfo|--executable] [-s] [OPTIONS] BUILD-ID|FILE...",
	.about = "Prints the path of the debuginfo (default) or executable found on this machine.\n"
		 "A FILE is read for its build ID and is itself the first candidate.\n",
	.tables = find_tables,
};
