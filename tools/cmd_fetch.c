/* dsostore fetch: many build IDs from debuginfod at once, into the cache
 * the elfutils client shares. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char fetch_help[] =
	"usage: dsostore fetch [--debuginfo|--executable|--source PATH|--section NAME]\n"
	"                      [OPTIONS] BUILD-ID...|-\n"
	"Fetches every build ID at once (from the cache when it is there, else from the\n"
	"servers of $DEBUGINFOD_URLS) and prints \"<build-id> <path>\" for each success;\n"
	"a failure gets an error line on stderr and the exit status 1.  \"-\" reads build\n"
	"IDs from standard input, one a line.\n"
	"  --debuginfo / --executable / --source PATH / --section NAME   what to fetch\n"
	"  --progress              a progress bar on stderr (default when stderr is a\n"
	"                          terminal or $DEBUGINFOD_PROGRESS is set)\n"
	"  --no-progress           none\n"
	"  -v                      log each request (server, status, time, bytes)\n"
	"  -h, --help              this help\n"
	"Environment: DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT,\n"
	"DEBUGINFOD_MAXTIME, DEBUGINFOD_MAXSIZE, DEBUGINFOD_RETRY_LIMIT,\n"
	"DEBUGINFOD_HEADERS_FILE, DEBUGINFOD_PROGRESS, DEBUGINFOD_VERBOSE.\n";

struct ids {
	struct ds_fetch_req *v;
	size_t n, cap;
};

static int add_id(struct ids *ids, const char *hex, enum ds_artifact what, const char *arg)
{
	struct ds_build_id bid;

	if (ds_build_id_parse(hex, &bid)) {
		cli_error("%s: not a build ID (2 to 128 hex digits)", hex);
		return -1;
	}
	if (ids->n == ids->cap) {
		size_t cap = ids->cap ? 2 * ids->cap : 64;
		struct ds_fetch_req *v = realloc(ids->v, cap * sizeof(*v));

		if (!v) {
			cli_error("out of memory");
			exit(2);
		}
		ids->v = v;
		ids->cap = cap;
	}
	memset(&ids->v[ids->n], 0, sizeof(ids->v[0]));
	ids->v[ids->n].build_id = bid;
	ids->v[ids->n].what = what;
	ids->v[ids->n].arg = arg;
	ids->n++;
	return 0;
}

static int read_stdin(struct ids *ids, enum ds_artifact what, const char *arg)
{
	char line[512];
	int bad = 0;

	while (fgets(line, sizeof(line), stdin)) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, " \t\r\n")] = 0;
		if (*s && add_id(ids, s, what, arg))
			bad = 1;
	}
	return bad;
}

int cmd_fetch(int argc, char **argv)
{
	enum ds_artifact what = DS_ARTIFACT_DEBUGINFO;
	struct cli_common common = { 0 };
	const char *arg = NULL;
	struct ids ids = { 0 };
	int progress = -1, status = 0, n;
	bool from_stdin = false;
	struct ds_context *ctx;

	for (int i = 1; i < argc; i++) {
		int r = cli_common_option(&common, argc, argv, &i, fetch_help);

		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if (!strcmp(argv[i], "--debuginfo")) {
			what = DS_ARTIFACT_DEBUGINFO;
		} else if (!strcmp(argv[i], "--executable")) {
			what = DS_ARTIFACT_EXECUTABLE;
		} else if ((!strcmp(argv[i], "--source") || !strcmp(argv[i], "--section")) &&
			   i + 1 < argc) {
			what = argv[i][3] == 'o' ? DS_ARTIFACT_SOURCE : DS_ARTIFACT_SECTION;
			arg = argv[++i];
		} else if (!strcmp(argv[i], "--progress")) {
			progress = 1;
		} else if (!strcmp(argv[i], "--no-progress")) {
			progress = 0;
		} else if (!strcmp(argv[i], "-")) {
			from_stdin = true;
		} else if (argv[i][0] == '-') {
			cli_error("fetch: unknown option or missing argument: %s", argv[i]);
			return 2;
		} else if (add_id(&ids, argv[i], what, arg)) {
			status = 1;
		}
	}
	/* Options may follow the IDs: apply the final choice to all. */
	if (from_stdin && read_stdin(&ids, what, arg))
		status = 1;
	for (size_t i = 0; i < ids.n; i++) {
		ids.v[i].what = what;
		ids.v[i].arg = arg;
	}
	if (!ids.n) {
		if (!status)
			fputs(fetch_help, stderr);
		return status ? 1 : 2;
	}
	progress = cli_want_progress(progress);
	ctx = cli_context(&common);
	DS_OPTS(ds_fetch_opts, opts, .progress = progress ? cli_progress : NULL);
	n = ds_fetch_batch(ctx, ids.v, ids.n, &opts);
	if (n < 0) {
		cli_error("fetch: %s", ds_strerror(n));
		status = 1;
	}
	for (size_t i = 0; n >= 0 && i < ids.n; i++) {
		char hex[2 * DS_BUILD_ID_MAX + 1];

		ds_build_id_format(&ids.v[i].build_id, hex, sizeof(hex));
		if (ids.v[i].err) {
			cli_error("%s: %s", hex,
				  ids.v[i].err == -ENOSYS
					  ? "not cached, and no servers (set DEBUGINFOD_URLS)"
					  : ds_strerror(ids.v[i].err));
			status = 1;
			continue;
		}
		printf("%s %s\n", hex, ids.v[i].path);
		free(ids.v[i].path);
	}
	free(ids.v);
	ds_context_free(ctx);
	return status;
}
