/* dsostore fetch: many build IDs from debuginfod at once, into the cache
 * the elfutils client shares. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_DEBUGINFO = 1, O_EXECUTABLE, O_SOURCE, O_SECTION, O_HEADERS };

static const struct cli_opt fetch_opts[] = {
	{ O_DEBUGINFO, 0, "debuginfo", NULL, "fetch the debuginfo (default)", 0 },
	{ O_EXECUTABLE, 0, "executable", NULL, "fetch the executable", 0 },
	{ O_SOURCE, 0, "source", "PATH", "fetch the source file PATH", 0 },
	{ O_SECTION, 0, "section", "NAME", "fetch the ELF section NAME", 0 },
	{ O_HEADERS, 0, "headers", NULL,
	  "after each path, the X-DEBUGINFOD-* headers it came with (kept in the cache)", 0 },
	{ CLI_O_VERBOSE, 'v', "verbose", NULL, "log each request (server, status, time, bytes)",
	  0 },
	{ 0 },
};
static const struct cli_opt *const fetch_tables[] = { fetch_opts, cli_opts_progress,
						      cli_opts_help, NULL };

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

static int cmd_fetch(int argc, char **argv)
{
	enum ds_artifact what = DS_ARTIFACT_DEBUGINFO;
	struct cli_common common = { 0 };
	const char *arg = NULL;
	struct ids ids = { 0 };
	int progress = -1, status = 0, n;
	bool from_stdin = false, headers = false;
	struct ds_context *ctx;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_fetch, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		if (id == O_DEBUGINFO || id == O_EXECUTABLE) {
			what = id == O_DEBUGINFO ? DS_ARTIFACT_DEBUGINFO : DS_ARTIFACT_EXECUTABLE;
		} else if (id == O_HEADERS) {
			headers = true;
		} else if (id == O_SOURCE || id == O_SECTION) {
			what = id == O_SOURCE ? DS_ARTIFACT_SOURCE : DS_ARTIFACT_SECTION;
			arg = p.arg;
		} else if (!strcmp(p.arg, "-")) {
			from_stdin = true;
		} else if (add_id(&ids, p.arg, what, arg)) {
			status = 1;
		}
	}
	progress = common.progress;
	/* Options may follow the IDs: apply the final choice to all. */
	if (from_stdin && read_stdin(&ids, what, arg))
		status = 1;
	for (size_t i = 0; i < ids.n; i++) {
		ids.v[i].what = what;
		ids.v[i].arg = arg;
	}
	if (!ids.n) {
		if (!status)
			cli_help(stderr, &cli_cmd_fetch);
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
		printf("%s %s\n", hex, cli_t(ids.v[i].path));
		free(ids.v[i].path);
		if (headers) {
			char *h = NULL, *save = NULL;

			if (!ds_fetch_headers(ctx, &ids.v[i].build_id, what, arg, &h))
				for (char *l = strtok_r(h, "\n", &save); l;
				     l = strtok_r(NULL, "\n", &save))
					printf("  %s\n", cli_t(l));
			free(h);
		}
	}
	free(ids.v);
	ds_context_free(ctx);
	return status;
}

const struct cli_command cli_cmd_fetch = {
	.name = "fetch",
	.run = cmd_fetch,
	.summary = "fetch from debuginfod servers, many build IDs at once",
	.usage = "[--debuginfo|--executable|--source PATH|--section NAME] [OPTIONS]\n"
		 "BUILD-ID...|-",
	.about = "Fetches every build ID at once (from the cache when it is there, else from the\n"
		 "servers of $DEBUGINFOD_URLS) and prints \"<build-id> <path>\" for each success;\n"
		 "a failure gets an error line on stderr and the exit status 1.  \"-\" reads build\n"
		 "IDs from standard input, one a line.  --headers: each path is followed by the\n"
		 "X-DEBUGINFOD-* headers its download came with, indented (from the cache's\n"
		 "hdr- file, elfutils 0.193's, on a hit too).\n",
	.notes = "Environment: DEBUGINFOD_URLS, DEBUGINFOD_CACHE_PATH, DEBUGINFOD_TIMEOUT,\n"
		 "DEBUGINFOD_MAXTIME, DEBUGINFOD_MAXSIZE, DEBUGINFOD_RETRY_LIMIT,\n"
		 "DEBUGINFOD_HEADERS_FILE, DEBUGINFOD_PROGRESS, DEBUGINFOD_VERBOSE;\n"
		 "DSOSTORE_SOURCE_MAXSIZE (bytes of one --source file: 64 MiB);\n"
		 "DEBUGINFOD_IMA_CERT_PATH (the certificates that \"ima:enforcing\" in\n"
		 "DEBUGINFOD_URLS checks files' IMA signatures with; docs/debuginfod.md).\n",
	.tables = fetch_tables,
};
