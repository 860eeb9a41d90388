/* dsostore buildid-list perf.data: the build IDs a recording names, the
 * same lines as perf buildid-list -i perf.data. */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { O_ALL = 1, O_LOCAL };

static const struct cli_opt buildid_list_opts[] = {
	{ CLI_O_INPUT, 'i', "input", "FILE", "the recording (default perf.data)", CLI_ARG_FILE },
	{ O_ALL, 0, "all", NULL, "every DSO the recording maps or names, sampled or not", 0 },
	{ O_LOCAL, 0, "local", NULL,
	  "fill a missing build ID from the file on this machine, when it is the file that was "
	  "mapped (same inode)",
	  0 },
	{ 0 },
};
static const struct cli_opt *const buildid_list_tables[] = { buildid_list_opts, cli_opts_help,
							     NULL };

static void print_bid(const struct ds_build_id *bid, const char *path)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (!bid->size || ds_build_id_format(bid, hex, sizeof(hex)) < 0)
		snprintf(hex, sizeof(hex), "%40s", "");
	printf("%s %s\n", hex, cli_t(path));
}

static int cmd_buildid_list(int argc, char **argv)
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

	struct cli_common common = { 0 };
	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_buildid_list, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		if (id == O_ALL || id == O_LOCAL) {
			*(id == O_ALL ? &all : &local) = true;
		} else if (path) {
			cli_error("buildid-list: one recording at a time (%s and %s)", path, p.arg);
			return 2;
		} else {
			path = p.arg;
		}
	}
	if (path && common.input) {
		cli_error("buildid-list: one recording at a time (%s and %s)", common.input, path);
		return 2;
	}
	path = path ? path : common.input;
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

const struct cli_command cli_cmd_buildid_list = {
	.name = "buildid-list",
	.run = cmd_buildid_list,
	.summary = "the build IDs of a perf.data, as perf buildid-list",
	.usage = "[--all] [--local] [-i] PERF.DATA",
	.about = "Prints \"<build-id> <path>\" for the DSOs of a perf recording, as perf\n"
		 "buildid-list -i does: the header's build-ID table when the file has one;\n"
		 "otherwise (perf record -z, --buildid-mmap, pipe mode) the DSOs with samples,\n"
		 "with the build IDs of their MMAP2 events (blank when the recording has none).\n",
	.tables = buildid_list_tables,
};
