/* dsostore buildid FILE...: "<hex> <path>" per file, like perf buildid-list. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const struct cli_opt *const buildid_tables[] = { cli_opts_help, NULL };

static int cmd_buildid(int argc, char **argv)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	struct cli_common common = { 0 };
	struct cli_parse p;
	int status = 0, nfiles = 0, id;

	/* Options first: a help asked for anywhere reads no file. */
	cli_parse_init(&p, &cli_cmd_buildid, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id < 0 && id != CLI_ARG)
			return id == CLI_HELP ? 0 : 2;
		if (id == CLI_ARG)
			argv[++nfiles] = (char *)p.arg;
	}
	for (int i = 1; i <= nfiles; i++) {
		struct ds_build_id bid;
		int err = ds_build_id_read_file(argv[i], &bid);

		if (err) {
			cli_error("%s: %s", argv[i], ds_strerror(err));
			status = 1;
			continue;
		}
		ds_build_id_format(&bid, hex, sizeof(hex));
		printf("%s %s\n", hex, cli_t(argv[i]));
	}
	if (!nfiles) {
		cli_help(stderr, &cli_cmd_buildid);
		return 2;
	}
	return status;
}

const struct cli_command cli_cmd_buildid = {
	.name = "buildid",
	.run = cmd_buildid,
	.summary = "print the GNU build ID of ELF files",
	.usage = "FILE...",
	.about = "Prints \"<build-id> <path>\" for each ELF file.  A file without a GNU build ID,\n"
		 "unreadable or not ELF gets an error line on stderr; the exit status is then 1.\n",
	.tables = buildid_tables,
};
