/* dsostore find: the local debuginfo or executable of a build ID or file. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char find_help[] =
	"usage: dsostore find [--debuginfo|--executable] [-s] [OPTIONS] BUILD-ID|FILE...\n"
	"Prints the path of the debuginfo (default) or executable found on this machine.\n"
	"A FILE is read for its build ID and is itself the first candidate.\n"
	"  --debuginfo             find the debuginfo (default)\n"
	"  --executable            find the executable\n"
	"  -s, --source            also print where it was found (self, build-id-dir,\n"
	"                          debuglink, perf-cache)\n" CLI_COMMON_HELP;

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

int cmd_find(int argc, char **argv)
{
	enum ds_artifact what = DS_ARTIFACT_DEBUGINFO;
	struct cli_common common = { 0 };
	struct ds_context *ctx;
	const char *args[256];
	int nargs = 0, status = 0;
	bool show_source = false;

	for (int i = 1; i < argc; i++) {
		int r = cli_common_option(&common, argc, argv, &i, find_help);

		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if (!strcmp(argv[i], "--debuginfo")) {
			what = DS_ARTIFACT_DEBUGINFO;
		} else if (!strcmp(argv[i], "--executable")) {
			what = DS_ARTIFACT_EXECUTABLE;
		} else if (!strcmp(argv[i], "-s") || !strcmp(argv[i], "--source")) {
			show_source = true;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("find: unknown option %s", argv[i]);
			return 2;
		} else if (nargs < 256) {
			args[nargs++] = argv[i];
		}
	}
	if (!nargs) {
		fputs(find_help, stderr);
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
			printf("%s %s\n", path, ds_source_name(src));
		else
			printf("%s\n", path);
		free(path);
	}
	ds_context_free(ctx);
	return status;
}
