/* dsostore metadata: what the debuginfod servers know of a file name
 * (GET /metadata?key=KEY&value=VALUE, elfutils 0.192's
 * `debuginfod-find metadata KEY VALUE`), every server asked at once. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { O_JSON = 1, O_TABLE };

static const struct cli_opt metadata_opts[] = {
	{ O_JSON, 0, "json", NULL,
	  "the merged answer as the servers give it, {\"results\":[...],\"complete\":...} "
	  "(the default when standard output is not a terminal)",
	  0 },
	{ O_TABLE, 0, "table", NULL, "a table (the default on a terminal)", 0 },
	{ CLI_O_VERBOSE, 'v', "verbose", NULL, "log each request (server, status, time, bytes)",
	  0 },
	{ 0 },
};
static const struct cli_opt *const metadata_tables[] = { metadata_opts, cli_opts_help, NULL };

static void print_table(const struct ds_metadata *m)
{
	int wtype = 4, wbid = 7;

	for (size_t i = 0; i < m->n; i++) {
		const struct ds_metadata_entry *e = &m->entries[i];
		int t = e->type ? (int)strlen(cli_t(e->type)) : 1;
		int b = e->buildid ? (int)strlen(cli_t(e->buildid)) : 1;

		wtype = t > wtype ? t : wtype;
		wbid = b > wbid ? b : wbid;
	}
	printf("%-*s  %-*s  %s\n", wtype, "TYPE", wbid, "BUILDID", "FILE");
	for (size_t i = 0; i < m->n; i++) {
		const struct ds_metadata_entry *e = &m->entries[i];

		printf("%-*s  ", wtype, e->type ? cli_t(e->type) : "-");
		printf("%-*s  ", wbid, e->buildid ? cli_t(e->buildid) : "-");
		printf("%s", e->file ? cli_t(e->file) : "-");
		if (e->archive)
			printf(" (in %s)", cli_t(e->archive));
		putchar('\n');
	}
}

static int cmd_metadata(int argc, char **argv)
{
	struct cli_common common = { 0 };
	const char *args[2];
	int nargs = 0, json = -1, err, status = 0;
	struct ds_context *ctx;
	struct ds_metadata *m;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_metadata, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		if (id == O_JSON || id == O_TABLE) {
			json = id == O_JSON;
		} else if (nargs < 2) {
			args[nargs++] = p.arg;
		} else {
			cli_error("metadata: one KEY and one VALUE (\"%s\" is a third)", p.arg);
			return 2;
		}
	}
	if (nargs != 2) {
		cli_help(stderr, &cli_cmd_metadata);
		return 2;
	}
	if (json < 0)
		json = !isatty(STDOUT_FILENO);
	ctx = cli_context(&common);
	if (!(m = ds_metadata_new())) {
		cli_error("out of memory");
		ds_context_free(ctx);
		return 2;
	}
	err = ds_metadata_query(ctx, args[0], args[1], m, NULL);
	if (err) {
		cli_error("metadata %s %s: %s", args[0], args[1],
			  err == -ENOSYS  ? "no servers (set DEBUGINFOD_URLS)"
			  : err == -EPROTO ? "refused by every server (an unknown key, or no /metadata)"
			  : err == -EINVAL ? "KEY must be letters, VALUE 1 to 4096 bytes"
					   : ds_strerror(err));
		status = 1;
	} else {
		if (json) {
			size_t len;
			char *text = ds_metadata_json(m, &len);

			if (!text) {
				cli_error("out of memory");
				status = 2;
			} else {
				fwrite(text, 1, len, stdout);
				putchar('\n');
				free(text);
			}
		} else {
			print_table(m);
		}
		if (!m->complete)
			cli_error("metadata %s %s: incomplete: %u of %u servers answered, or one said "
				 "its answer is partial",
				 args[0], args[1], m->answered, m->servers);
	}
	if (fflush(stdout) && !status)
		status = 1;
	ds_metadata_free(m);
	ds_context_free(ctx);
	return status;
}

const struct cli_command cli_cmd_metadata = {
	.name = "metadata",
	.run = cmd_metadata,
	.summary = "ask the debuginfod servers which build IDs a file name had",
	.usage = "[--json|--table] [OPTIONS] KEY VALUE",
	.about = "Asks every server of $DEBUGINFOD_URLS at once for\n"
		 "/metadata?key=KEY&value=VALUE (elfutils 0.192's `debuginfod-find metadata`):\n"
		 "KEY \"file\" names one path exactly (as the server indexed it), \"glob\" is a\n"
		 "shell pattern whose \"*\" stops at \"/\".  Each result is a file, its build ID\n"
		 "and its type (executable or debuginfo); the servers' results are merged, one\n"
		 "given by two servers shown once.  When a server failed or said its answer is\n"
		 "partial, a warning says so (and \"complete\" is false).  Exit status 1 when no\n"
		 "server answered.\n",
	.notes = "Environment: DEBUGINFOD_URLS, DEBUGINFOD_TIMEOUT, DEBUGINFOD_MAXTIME,\n"
		 "DEBUGINFOD_RETRY_LIMIT, DEBUGINFOD_HEADERS_FILE, DEBUGINFOD_VERBOSE.\n",
	.tables = metadata_tables,
};
