/* dsostore buildid-list perf.data: the build IDs a recording names, the
 * same lines as perf buildid-list -i perf.data. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char buildid_list_help[] =
	"usage: dsostore buildid-list [-i] PERF.DATA\n"
	"Prints \"<build-id> <path>\" for each DSO of perf.data's build-ID table (perf\n"
	"writes the DSOs that have samples), as perf buildid-list -i does.\n";

int cmd_buildid_list(int argc, char **argv)
{
	const struct ds_perf_build_id *bids;
	const char *path = NULL;
	struct ds_perf_data *pd;
	char err[256] = "", hex[2 * DS_BUILD_ID_MAX + 1];
	size_t n;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(buildid_list_help, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-i") && i + 1 < argc)
			path = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else {
			fputs(buildid_list_help, stderr);
			return 2;
		}
	}
	if (!path)
		path = "perf.data"; /* perf's default */
	rc = ds_perf_data_open(path, &pd, err, sizeof(err));
	if (rc) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(rc));
		return 1;
	}
	rc = ds_perf_data_build_ids(pd, &bids);
	if (rc < 0) {
		cli_error("%s: no build-ID table in the header (perf record -z or "
			  "--buildid-mmap); reading build IDs from the events is not done yet",
			  path);
		ds_perf_data_close(pd);
		return 1;
	}
	n = (size_t)rc;
	for (size_t i = 0; i < n; i++) {
		ds_build_id_format(&bids[i].build_id, hex, sizeof(hex));
		printf("%s %s\n", hex, bids[i].filename);
	}
	ds_perf_data_close(pd);
	return 0;
}
