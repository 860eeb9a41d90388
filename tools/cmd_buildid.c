/* dsostore buildid FILE...: "<hex> <path>" per file, like perf buildid-list. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char buildid_help[] =
	"usage: dsostore buildid FILE...\n"
	"Prints \"<build-id> <path>\" for each ELF file.  A file without a GNU build ID,\n"
	"unreadable or not ELF gets an error line on stderr; the exit status is then 1.\n";

int cmd_buildid(int argc, char **argv)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];
	int status = 0, nfiles = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(buildid_help, stdout);
			return 0;
		}
	}
	for (int i = 1; i < argc; i++) {
		struct ds_build_id bid;
		int err;

		if (!strcmp(argv[i], "--") && !nfiles)
			continue;
		nfiles++;
		err = ds_build_id_read_file(argv[i], &bid);
		if (err) {
			cli_error("%s: %s", argv[i], ds_strerror(err));
			status = 1;
			continue;
		}
		ds_build_id_format(&bid, hex, sizeof(hex));
		printf("%s %s\n", hex, argv[i]);
	}
	if (!nfiles) {
		fputs(buildid_help, stderr);
		return 2;
	}
	return status;
}
