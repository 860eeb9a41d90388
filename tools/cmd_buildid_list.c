/* dsostore buildid-list perf.data: the build IDs a recording names, the
 * same lines as perf buildid-list -i perf.data. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char buildid_list_help[] =
	"usage: dsostore buildid-list [--all] [--local] [-i] PERF.DATA\n"
	"Prints \"<build-id> <path>\" for the DSOs of a perf recording, as perf\n"
	"buildid-list -i does: the header's build-ID table when the file has one;\n"
	"otherwise (perf record -z, --buildid-mmap, pipe mode) the DSOs with samples,\n"
	"with the build IDs of their MMAP2 events (blank when the recording has none).\n"
	"  --all     every DSO the recording maps or names, sampled or not\n"
	"  --local   fill a missing build ID from the file on this machine, when it is\n"
	"            the file that was mapped (same inode)\n";

static void print_bid(const struct ds_build_id *bid, const char *path)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (!bid->size || ds_build_id_format(bid, hex, sizeof(hex)) < 0)
		snprintf(hex, sizeof(hex), "%40s", "");
	printf("%s %s\n", hex, path);
}

int cmd_buildid_list(int argc, char **argv)
{
	DS_OPTS(ds_perf_session_opts, sopts);
	const struct ds_perf_build_id *bids;
	const struct ds_perf_dso *dsos;
	struct ds_perf_session *sess;
	struct ds_perf_info info;
	struct ds_context *ctx;
	const char *path = NULL;
	struct ds_perf_data *pd;
	bool all = false, local = false;
	char err[256] = "";
	size_t n;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(buildid_list_help, stdout);
			return 0;
		}
		if (!strcmp(argv[i], "-i") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--all"))
			all = true;
		else if (!strcmp(argv[i], "--local"))
			local = true;
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
	ds_perf_data_info(pd, &info);
	if (rc >= 0 && !all && !local && !info.pipe) {
		/* perf prints the header's table as it is, sampled or not; in
		 * pipe mode it replays the events and lists the sampled DSOs. */
		for (int i = 0; i < rc; i++)
			print_bid(&bids[i].build_id, bids[i].filename);
		ds_perf_data_close(pd);
		return 0;
	}
	/* perf buildid-list itself reads no files: neither do we, unless asked. */
	sopts.no_local_build_ids = !local;
	ctx = ds_context_new(NULL);
	sess = ctx ? ds_perf_session_new(ctx, pd, &sopts, err, sizeof(err)) : NULL;
	if (!sess) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(-errno));
		ds_context_free(ctx);
		ds_perf_data_close(pd);
		return 1;
	}
	n = ds_perf_session_dsos(sess, &dsos);
	for (size_t i = 0; i < n; i++) {
		if (!all && !dsos[i].samples)
			continue;
		print_bid(&dsos[i].build_id, dsos[i].path);
	}
	ds_perf_session_free(sess);
	ds_context_free(ctx);
	ds_perf_data_close(pd);
	return 0;
}
