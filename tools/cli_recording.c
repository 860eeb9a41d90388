/* A perf recording opened for a subcommand (report, annotate, folded
 * stacks, pprof): the file, a context from the common options, the
 * recording replayed into a profile, the prefetch of its sampled DSOs'
 * debuginfo and the naming of the profile's locations.  Shared so that
 * every command reads a recording the same way. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile's messages: warnings (what an option asked for and did not
 * get), and with -v the rest (each DSO without symbols). */
static void profile_warn(void *user, enum ds_log_level level, const char *msg)
{
	if (level <= DS_LOG_WARN || *(const int *)user)
		cli_error("%s", msg);
}

/* perf's default --max-stack (see struct cli_recording). */
static size_t sysctl_max_stack(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v >= 0 && v <= INT_MAX ? (size_t)v : 127;
}

int cli_recording_open(struct cli_recording *r, const char *path, const struct cli_common *c,
		       bool no_fetch, const struct ds_profile_opts *po, size_t unwind_max)
{
	struct ds_perf_session_opts so = { .sz = sizeof(so) };
	struct ds_profile_opts o = { 0 };
	char err[256] = "";
	int rc;

	*r = (struct cli_recording){ .path = path,
				     .lines = po && (po->flags & DS_PROFILE_LINES),
				     .max_stack = unwind_max ? unwind_max : sysctl_max_stack() };
	/* perf unwinds a dwarf sample's user stack to its --max-stack */
	so.unwind_max = r->max_stack;
	rc = ds_perf_data_open(path, &r->pd, err, sizeof(err));
	if (rc) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(rc));
		return 1;
	}
	/* The context reads the servers from the environment when it is made. */
	if (no_fetch && setenv("DEBUGINFOD_URLS", "", 1)) {
		cli_error("cannot set DEBUGINFOD_URLS: %s", ds_strerror(-errno));
		return 1;
	}
	r->ctx = cli_context(c);
	if (po)
		o = *po;
	o.sz = sizeof(o);
	o.vmlinux = c->vmlinux;
	o.warn = profile_warn;
	o.warn_user = (void *)&c->verbose; /* only read */
	r->prof = ds_profile_open(r->ctx, r->pd, &so, &o, err, sizeof(err));
	if (!r->prof) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(-errno));
		return 1;
	}
	r->s = ds_profile_session(r->prof);
	r->ndsos = ds_perf_session_dsos(r->s, &r->dsos);
	return 0;
}

int cli_recording_prefetch(struct cli_recording *r, bool progress, bool verbose)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = progress ? cli_progress : NULL);
	/* Names alone need no dwz alt file and no split DWARF.  Lines of
	 * module samples need the modules' debuginfo, fetched here with the
	 * rest (lib/live/ksym.c load_module() finds it in the cache); the kernel's
	 * is not fetched (lib/perf/profile.c local_kernel). */
	int left = ds_perf_session_prefetch(
		r->s, r->lines ? DS_PERF_PREFETCH_MODULES : DS_PERF_PREFETCH_NAMES, &fo);
	int rc;

	if (left < 0)
		cli_error("fetching debuginfo: %s", ds_strerror(left));
	for (size_t i = 0; left > 0 && verbose && i < r->ndsos; i++) {
		const struct ds_perf_dso *d = &r->dsos[i];
		const struct ds_debuginfo *di;
		char why[512] = "";

		if (!d->dso || !d->samples || d->kernel || !ds_dso_debuginfo(d->dso, &di))
			continue;
		ds_dso_error(d->dso, why, sizeof(why));
		cli_error("%s: no debuginfo%s%s", d->path, why[0] ? ": " : "", why);
	}
	rc = ds_profile_resolve(r->prof);
	if (rc) {
		cli_error("%s: naming the samples: %s", r->path, ds_strerror(rc));
		return 1;
	}
	return 0;
}

void cli_recording_close(struct cli_recording *r)
{
	ds_profile_free(r->prof); /* and with it the session */
	ds_context_free(r->ctx);
	ds_perf_data_close(r->pd);
	*r = (struct cli_recording){ 0 };
}
