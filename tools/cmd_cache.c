/* dsostore cache path|stats|clean: the debuginfod client cache. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char cache_help[] =
	"usage: dsostore cache path|stats|clean [--if-due]\n"
	"  path    the cache directory ($DEBUGINFOD_CACHE_PATH, else as elfutils)\n"
	"  stats   build IDs, files, bytes and remembered misses in it\n"
	"  clean   remove files unused for max_unused_age_s and expired misses, now\n"
	"          (with --if-due: only when cache_clean_interval_s has passed)\n";

int cmd_cache(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct ds_cache_stats st;
	struct ds_context *ctx;
	const char *sub = NULL;
	bool if_due = false;
	int err = 0;

	for (int i = 1; i < argc; i++) {
		int r = cli_common_option(&common, argc, argv, &i, cache_help);

		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if (!strcmp(argv[i], "--if-due"))
			if_due = true;
		else if (!sub)
			sub = argv[i];
		else {
			fputs(cache_help, stderr);
			return 2;
		}
	}
	if (!sub || (strcmp(sub, "path") && strcmp(sub, "stats") && strcmp(sub, "clean"))) {
		fputs(cache_help, stderr);
		return 2;
	}
	ctx = cli_context(&common);
	if (!strcmp(sub, "path")) {
		printf("%s\n", ds_cache_path(ctx));
	} else if (!strcmp(sub, "stats")) {
		err = ds_cache_stats(ctx, &st);
		if (!err)
			printf("path %s\nbuild_ids %llu\nfiles %llu\nbytes %llu\nmisses %llu\n",
			       ds_cache_path(ctx), (unsigned long long)st.build_ids,
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
