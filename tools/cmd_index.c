/* dsostore index: build and save the symbol indexes of binaries ahead. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char index_help[] =
	"usage: dsostore index [OPTIONS] BUILD-ID|FILE...\n"
	"Builds the whole symbol index of each (all of its DWARF) and saves it, so that\n"
	"the next process to symbolize in it maps the index instead of reading DWARF.\n"
	"Prints \"<build-id> <saved index>\" per success; a failure gets a line on\n"
	"stderr and exit status 1.  The debuginfo is found as by symbolize (locally,\n"
	"then debuginfod).  Indexes are also saved without this command, whenever one\n"
	"is completed; DSOSTORE_SYMINDEX=0 switches them off.\n" CLI_COMMON_HELP;

/* A DSO of the store for a FILE if one exists, else for a build ID. */
static struct ds_dso *dso_of(struct ds_store *store, const char *arg)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	struct stat st;

	if (stat(arg, &st) == 0)
		return ds_store_findnew(store, arg, NULL);
	if (ds_build_id_parse(arg, &id.build_id) != 0) {
		cli_error("%s: neither a file nor a build ID (2 to 128 hex digits)", arg);
		return NULL;
	}
	return ds_store_findnew(store, NULL, &id);
}

int cmd_index(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct ds_context *ctx;
	struct ds_store *store;
	const char *args[256];
	int nargs = 0, status = 0;

	for (int i = 1; i < argc; i++) {
		int r = cli_common_option(&common, argc, argv, &i, index_help);

		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("index: unknown option %s", argv[i]);
			return 2;
		}
		if (nargs == 256) {
			cli_error("index: at most 256 arguments");
			return 2;
		}
		args[nargs++] = argv[i];
	}
	if (!nargs) {
		fputs(index_help, stderr);
		return 2;
	}
	ctx = cli_context(&common);
	store = ds_store_new(ctx, "host", NULL);
	if (!store) {
		cli_error("cannot create a store: %s", ds_strerror(-errno));
		ds_context_free(ctx);
		return 2;
	}
	for (int i = 0; i < nargs; i++) {
		char hex[2 * DS_BUILD_ID_MAX + 1] = "?", *path = NULL;
		struct ds_dso *dso = dso_of(store, args[i]);
		struct ds_dso_id id;
		int err;

		if (!dso) {
			status = 1;
			continue;
		}
		err = ds_dso_save_index(dso, &path);
		ds_dso_id(dso, &id);
		if (id.flags & DS_DSO_ID_BUILD_ID)
			ds_build_id_format(&id.build_id, hex, sizeof(hex));
		if (err) {
			cli_error("index %s: %s", args[i], ds_strerror(err));
			status = 1;
		} else {
			printf("%s %s\n", hex, path);
		}
		free(path);
		ds_dso_put(dso);
	}
	ds_store_free(store);
	ds_context_free(ctx);
	return status;
}
