/* dsostore cache path|stats|clean: the debuginfod client cache. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const struct cli_opt cache_opts[] = {
	{ 1, 0, "if-due", NULL, "clean: only when cache_clean_interval_s has passed", 0 },
	{ 0 },
};
static const struct cli_opt *const cache_tables[] = { cache_opts, cli_opts_verbose, cli_opts_help,
						      NULL };

static int cmd_cache(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct ds_cache_stats st;
	struct ds_context *ctx;
	const char *sub = NULL;
	bool if_due = false;
	int err = 0;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_cache, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		if (id == 1) {
			if_due = true;
		} else if (!sub) {
			sub = p.arg;
		} else {
			cli_help(stderr, &cli_cmd_cache);
			return 2;
		}
	}
	if (!sub || (strcmp(sub, "path") && strcmp(sub, "stats") && strcmp(sub, "clean"))) {
		cli_help(stderr, &cli_cmd_cache);
		return 2;
	}
	ctx = cli_context(&common);
	if (!strcmp(sub, "path")) {
		printf("%s\n", cli_t(ds_cache_path(ctx)));
	} else if (!strcmp(sub, "stats")) {
		err = ds_cache_stats(ctx, &st);
		if (!err)
			printf("path %s\nbuild_ids %llu\nfiles %llu\nbytes %llu\nmisses %llu\n",
			       cli_t(ds_cache_path(ctx)), (unsigned long long)st.build_ids,
			       (unsigned long long)st.files, (unsigned long long)st.bytes,
			       (unsigned long long)st.misses);
	} else {
		err = ds_cache_clean(ctx, !if_due);
		if (err >= 0)
			printf("removed %d files\n", err);
	}
	if (err < 0)
		cli_error("cache %s: %s: %s", sub, ds_cache_path(ctx), ds_strerror(err));
	ds_context_free(ctx);
	return err < 0;
}

const struct cli_command cli_cmd_cache = {
	.name = "cache",
	.run = cmd_cache,
	.summary = "the debuginfod client cache: path, stats, clean",
	.usage = "path|stats|clean [--if-due]",
	.about = "  path    the cache directory ($DEBUGINFOD_CACHE_PATH, else as elfutils)\n"
		 "  stats   build IDs, files, bytes and remembered misses in it\n"
		 "  clean   remove files unused for max_unused_age_s and expired misses, now\n"
		 "          (with --if-due: only when cache_clean_interval_s has passed)\n",
	.tables = cache_tables,
};
