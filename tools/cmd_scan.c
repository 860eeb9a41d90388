/* dsostore scan: put binaries into one store and show the debuginfo found
 * for each, the way a profiler embedding the library would see them. */
#define _GNU_SOURCE
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static const struct cli_opt *const scan_tables[] = { cli_opts_lookup, cli_opts_verbose,
						     cli_opts_help, NULL };

struct scan {
	struct ds_store *store;
	struct ds_dso **held;
	size_t n, cap;
	int status;
	unsigned found, missing;
};

static void scan_file(struct scan *sc, const char *path, const struct stat *st, bool named)
{
	char hex[2 * DS_BUILD_ID_MAX + 1], why[4096];
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID | DS_DSO_ID_INODE };
	const struct ds_debuginfo *di;
	struct ds_dso *dso;
	int err;

	err = ds_build_id_read_file(path, &id.build_id);
	if (err) {
		if (named) {
			cli_error("%s: %s", path, ds_strerror(err));
			sc->status = 1;
		}
		return;
	}
	id.maj = major(st->st_dev);
	id.min = minor(st->st_dev);
	id.ino = st->st_ino;
	dso = ds_store_findnew(sc->store, path, &id);
	if (!dso) {
		cli_error("%s: %s", path, ds_strerror(-errno));
		sc->status = 1;
		return;
	}
	ds_build_id_format(&id.build_id, hex, sizeof(hex));
	err = ds_dso_debuginfo(dso, &di);
	if (!err) {
		printf("%s %s %s %s\n", hex, cli_t(path), cli_t(ds_debuginfo_path(di)),
		       ds_source_name(ds_debuginfo_source(di)));
		sc->found++;
	} else {
		ds_dso_error(dso, why, sizeof(why));
		printf("%s %s - %s\n", hex, cli_t(path), err == -ENOENT ? "missing" : ds_strerror(err));
		sc->missing++;
	}
	/* Keep the reference, as a profiler keeps a DSO per mapping. */
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? 2 * sc->cap : 64;
		struct ds_dso **h = realloc(sc->held, cap * sizeof(*h));

		if (!h) {
			ds_dso_put(dso);
			return;
		}
		sc->held = h;
		sc->cap = cap;
	}
	sc->held[sc->n++] = dso;
}

static void scan_path(struct scan *sc, const char *path)
{
	struct dirent *de;
	struct stat st;
	DIR *dir;

	if (stat(path, &st) != 0) {
		cli_error("%s: %s", path, ds_strerror(-errno));
		sc->status = 1;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		scan_file(sc, path, &st, true);
		return;
	}
	dir = opendir(path);
	if (!dir) {
		cli_error("%s: %s", path, ds_strerror(-errno));
		sc->status = 1;
		return;
	}
	while ((de = readdir(dir))) {
		char *child;

		if (de->d_name[0] == '.' || asprintf(&child, "%s/%s", path, de->d_name) < 0)
			continue;
		if (stat(child, &st) == 0 && S_ISREG(st.st_mode))
			scan_file(sc, child, &st, false);
		free(child);
	}
	closedir(dir);
}

static int cmd_scan(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct scan sc = { 0 };
	struct ds_store_stats stats;
	struct ds_context *ctx;
	int nargs = 0;

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_scan, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP)
			return id == CLI_HELP ? 0 : 2;
		argv[++nargs] = (char *)p.arg;
	}
	if (!nargs) {
		cli_help(stderr, &cli_cmd_scan);
		return 2;
	}
	ctx = cli_context(&common);
	sc.store = ds_store_new(ctx, "host", NULL);
	ds_context_free(ctx);
	if (!sc.store) {
		cli_error("cannot create a store: %s", ds_strerror(-errno));
		return 2;
	}
	for (int i = 1; i <= nargs; i++)
		scan_path(&sc, argv[i]);

	ds_store_stats(sc.store, &stats);
	printf("# %u with debuginfo, %u without; store: %llu DSOs, %llu debuginfos open "
	       "(%llu bytes), %llu searches\n",
	       sc.found, sc.missing, (unsigned long long)stats.dsos,
	       (unsigned long long)stats.debuginfos_open, (unsigned long long)stats.bytes_held,
	       (unsigned long long)stats.searches);
	for (size_t i = 0; i < sc.n; i++)
		ds_dso_put(sc.held[i]);
	free(sc.held);
	ds_store_free(sc.store);
	return sc.status;
}

const struct cli_command cli_cmd_scan = {
	.name = "scan",
	.run = cmd_scan,
	.summary = "put binaries into a store and show the debuginfo of each",
	.usage = "[OPTIONS] FILE|DIR...",
	.about = "Puts every ELF file named (or found directly in a DIR) into one store and\n"
		 "prints \"<build-id> <path> <debuginfo-path|-> <source|reason>\" for each, then\n"
		 "the store's counters.\n",
	.tables = scan_tables,
};
