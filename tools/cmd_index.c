/* dsostore index: build and save the symbol indexes of binaries ahead. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct cli_opt *const index_tables[] = { cli_opts_lookup, cli_opts_verbose,
						      cli_opts_help, NULL };

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

static int cmd_index(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct ds_context *ctx;
	struct ds_store *store;
	const char *args[256];
	int nargs = 0, status = 0;

	struct cli_parse p;
	int opt;

	cli_parse_init(&p, &cli_cmd_index, &common, argc, argv);
	while ((opt = cli_next(&p)) != CLI_END) {
		if (opt == CLI_BAD || opt == CLI_HELP)
			return opt == CLI_HELP ? 0 : 2;
		if (nargs == 256) {
			cli_error("index: at most 256 arguments");
			return 2;
		}
		args[nargs++] = p.arg;
	}
	if (!nargs) {
		cli_help(stderr, &cli_cmd_index);
		return 2;
	}
	ctx = cli_context(&common);
	store = ds_store_new(ctx, "host", NULL);
	if (!store) {
		cli_error("cannot create a store: %s", ds_strerror(-errno));
		ds_context_free(ctx);
		return 2;
	}
	for (int i = 0; i < nargs && !cli_interrupted; i++) {
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
			printf("%s %s\n", hex, cli_t(path));
		}
		free(path);
		ds_dso_put(dso);
	}
	ds_store_free(store);
	ds_context_free(ctx);
	return status;
}

const struct cli_command cli_cmd_index = {
	.name = "index",
	.run = cmd_index,
	.summary = "build and save the symbol indexes of binaries ahead",
	.usage = "[OPTIONS] BUILD-ID|FILE...",
	.about = "Builds the whole symbol index of each (all of its DWARF) and saves it, so that\n"
		 "the next process to symbolize in it maps the index instead of reading DWARF.\n"
		 "Prints \"<build-id> <saved index>\" per success; a failure gets a line on\n"
		 "stderr and exit status 1.  The debuginfo is found as by symbolize (locally,\n"
		 "then debuginfod).  Indexes are also saved without this command, whenever one\n"
		 "is completed; DSOSTORE_SYMINDEX=0 switches them off.\n",
	.tables = index_tables,
};
