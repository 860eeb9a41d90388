/* dsostore: the command-line tool.  One file per command
 * (tools/cmd_<command>.c), each with its option table. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct cli_command *const commands[] = {
	&cli_cmd_buildid,  &cli_cmd_find,	  &cli_cmd_scan,	 &cli_cmd_fetch,
	&cli_cmd_metadata,
	&cli_cmd_cache,	   &cli_cmd_symbolize,	  &cli_cmd_normalize,	 &cli_cmd_addr2line,
	&cli_cmd_index,	   &cli_cmd_buildid_list, &cli_cmd_prefetch,	 &cli_cmd_report,
	&cli_cmd_annotate, &cli_cmd_perf_cache,	  &cli_cmd_flamegraph, &cli_cmd_stack,
	&cli_cmd_serve,
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* --dump-man, --dump-completion: to the file at path (stdout: NULL). */
static int dump(void (*write)(FILE *, const struct cli_command *const *, size_t),
		const char *path)
{
	struct cli_output o;
	int rc = cli_output_open(&o, "dsostore", "--dump", path, NULL, 0, NULL);

	if (rc)
		return rc;
	write(o.f, commands, NCOMMANDS);
	return cli_output_close(&o, true);
}

int main(int argc, char **argv)
{
	const char *self = argc > 0 ? strrchr(argv[0], '/') : NULL;
	const char *a = argc > 1 ? argv[1] : "";

	/* Run through a link named addr2line: binutils' addr2line. */
	self = self ? self + 1 : argc > 0 ? argv[0] : "";
	if (!strcmp(self, "addr2line"))
		return cli_cmd_addr2line.run(argc, argv);
	if (argc < 2) {
		cli_command_list(stderr, commands, NCOMMANDS);
		return 2;
	}
	if (!strcmp(a, "-h") || !strcmp(a, "--help") || !strcmp(a, "help")) {
		cli_command_list(stdout, commands, NCOMMANDS);
		return 0;
	}
	if (!strcmp(a, "--version") || !strcmp(a, "-V") || !strcmp(a, "version")) {
		printf("dsostore %d.%d.%d\n", DS_VERSION_MAJOR, DS_VERSION_MINOR, DS_VERSION_PATCH);
		return 0;
	}
	/* Hidden: what the build installs, written from the tables. */
	if (!strcmp(a, "--dump-man") || !strcmp(a, "--dump-completion"))
		return dump(a[7] == 'm' ? cli_man : cli_completion, argc > 2 ? argv[2] : NULL);
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(a, commands[i]->name)) {
			int status;

			cli_signals_install();
			status = commands[i]->run(argc - 1, argv + 1);
			if (cli_interrupted) {
				/* as a shell reports a command a signal ended */
				cli_progress_end();
				fflush(stdout);
				return 128 + cli_interrupted;
			}
			return status;
		}
	cli_error("unknown command '%s'", a);
	cli_command_list(stderr, commands, NCOMMANDS);
	return 2;
}
