/* dsostore stack: the backtrace of every thread of a core file or a live
 * process, every module's executable and debuginfo found first (locally,
 * then in one parallel debuginfod batch), unwound by libdwfl, named by
 * the store's symbolizer; eu-stack's output, gdb's with --format=gdb, or
 * JSON. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { O_CORE = 1, O_EXE, O_PID, O_LIST_MODULES, O_FORMAT, O_JSON, O_QUIET };

static const struct cli_opt stack_opts[] = {
	{ O_CORE, 0, "core", "CORE", "the core file", CLI_ARG_FILE },
	{ O_EXE, 0, "exe", "FILE", "the main executable (when the core's path is wrong)",
	  CLI_ARG_FILE },
	{ O_PID, 'p', "pid", "PID", "a live process (ptrace attach, as eu-stack -p)", 0 },
	{ O_LIST_MODULES, 0, "list-modules", NULL,
	  "only the modules: START+SIZE BUILDID@ADDR FILE DEBUGINFO NAME, as eu-unstrip -n "
	  "--core (\"-\": not found)",
	  0 },
	{ O_FORMAT, 0, "format", "FMT", "eu-stack (default) or gdb (as gdb's bt)", 0 },
	{ O_JSON, 0, "json", NULL, "every thread and frame as JSON", 0 },
	{ O_QUIET, 'q', "quiet", NULL, "of the summary, only the lines of missing modules", 0 },
	{ 0 },
};
/* No kernel options: a backtrace names no kernel address. */
static const struct cli_opt *const stack_tables[] = { stack_opts,	    cli_opts_no_fetch,
						      cli_opts_progress, cli_opts_lookup,
						      cli_opts_verbose,	    cli_opts_help,
						      NULL };

enum out_format { FMT_EU, FMT_GDB, FMT_JSON };

struct stack_out {
	enum out_format fmt;
	int threads;
	int printed; /* frames */
};

static volatile int interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* The fetch's progress: the bar when asked for, and Ctrl-C cancels. */
static int progress_or_cancel(void *user, const struct ds_fetch_progress *p)
{
	if (user)
		cli_progress(NULL, p);
	return interrupted;
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

static const char *sig_name(int signo)
{
	static char buf[16];
	const char *abbrev = sigabbrev_np(signo);

	if (abbrev) {
		snprintf(buf, sizeof(buf), "SIG%s", abbrev);
		return buf;
	}
	snprintf(buf, sizeof(buf), "signal %d", signo);
	return buf;
}

static void json_hex(const char *key, uint64_t v, bool comma)
{
	printf("\"%s\":\"0x%llx\"%s", key, (unsigned long long)v, comma ? "," : "");
}

static void print_json_frame(const struct ds_stack_frame *f, const struct ds_frame *sf,
			     bool first, unsigned int index)
{
	char hex[2 * DS_BUILD_ID_MAX + 1] = "";

	if (!first)
		putchar(',');
	printf("{\"index\":%u,", index);
	json_hex("pc", f->pc, true);
	json_hex("address", f->addr, true);
	printf("\"activation\":%s,\"module\":", f->activation ? "true" : "false");
	cli_json_string(f->module);
	printf(",\"build_id\":");
	if (f->build_id && ds_build_id_format(f->build_id, hex, sizeof(hex)) > 0)
		cli_json_string(hex);
	else
		printf("null");
	printf(",");
	json_hex("module_address", f->module_addr, true);
	printf("\"function\":");
	cli_json_string(sf ? sf->function : NULL);
	printf(",\"file\":");
	cli_json_string(sf ? sf->file : NULL);
	printf(",\"line\":%u,\"column\":%u,\"inlined\":%s}", sf ? sf->line : 0, sf ? sf->column : 0,
	       sf && sf->inlined ? "true" : "false");
}

static int print_thread(void *user, const struct ds_stack_thread *t)
{
	struct stack_out *o = user;
	unsigned int idx = 0;

	if (o->fmt == FMT_JSON) {
		printf("%s{\"tid\":%d,\"crashed\":%s,\"signal\":%d,\"frames\":[", o->threads ? "," : "",
		       t->tid, t->crashed ? "true" : "false", t->signo);
	} else if (o->fmt == FMT_GDB) {
		printf("%sThread %d (LWP %d)%s:\n", o->threads ? "\n" : "", o->threads + 1, t->tid,
		       t->crashed ? " [crashed]" : "");
	} else {
		printf("TID %d:\n", t->tid);
	}
	for (size_t i = 0; i < t->nframes; i++) {
		const struct ds_stack_frame *f = &t->frames[i];
		size_t n = f->nframes ? f->nframes : 1;

		for (size_t k = 0; k < n; k++, idx++) {
			const struct ds_frame *sf = f->nframes ? &f->frames[k] : NULL;
			const char *fn = sf && sf->function ? cli_t(sf->function) : "??";

			if (o->fmt == FMT_JSON) {
				print_json_frame(f, sf, idx == 0, idx);
			} else if (o->fmt == FMT_GDB) {
				/* gdb shows the address of a physical frame, not of
				 * the inlined calls it holds. */
				printf("#%-2u ", idx);
				if (k == 0)
					printf("0x%016llx in ", (unsigned long long)f->pc);
				printf("%s ()", fn);
				if (sf && sf->file)
					printf(" at %s:%u", cli_t(sf->file), sf->line);
				else if (f->module)
					printf(" from %s", cli_t(f->module));
				putchar('\n');
			} else {
				printf("#%-2u 0x%016llx %s", idx, (unsigned long long)f->pc, fn);
				if (f->module)
					printf(" - %s", cli_t(base_name(f->module)));
				putchar('\n');
				if (sf && sf->file) {
					printf("    %s:%u", cli_t(sf->file), sf->line);
					if (sf->column)
						printf(":%u", sf->column);
					putchar('\n');
				}
			}
		}
	}
	if (o->fmt == FMT_JSON) {
		printf("],\"error\":");
		cli_json_string(t->error_msg);
		printf("}");
	} else if (t->error_msg) {
		fprintf(stderr, "dsostore: thread %d: unwinding stopped: %s\n", t->tid,
			cli_t(t->error_msg));
	}
	o->threads++;
	o->printed += (int)idx;
	return 0;
}

static void list_modules(const struct ds_core_module *m, size_t n, bool json)
{
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (json)
		printf("{\"modules\":[");
	for (size_t i = 0; i < n; i++) {
		if (!m[i].build_id.size || ds_build_id_format(&m[i].build_id, hex, sizeof(hex)) < 0)
			strcpy(hex, "-");
		if (!json) {
			printf("0x%llx+0x%llx %s@0x%llx %s %s %s\n", (unsigned long long)m[i].start,
			       (unsigned long long)(m[i].end - m[i].start), hex,
			       (unsigned long long)m[i].build_id_addr, m[i].file ? cli_t(m[i].file) : "-",
			       m[i].debuginfo ? cli_t(m[i].debuginfo) : "-", cli_t(m[i].path));
			continue;
		}
		printf("%s{", i ? "," : "");
		json_hex("start", m[i].start, true);
		json_hex("end", m[i].end, true);
		json_hex("bias", m[i].bias, true);
		printf("\"build_id\":");
		cli_json_string(m[i].build_id.size ? hex : NULL);
		printf(",");
		json_hex("build_id_address", m[i].build_id_addr, true);
		printf("\"path\":");
		cli_json_string(m[i].path);
		printf(",\"vdso\":%s,\"file\":", m[i].vdso ? "true" : "false");
		cli_json_string(m[i].file);
		printf(",\"file_at_path\":%s,\"debuginfo\":",
		       m[i].file_state == DS_CORE_FILE_AT_PATH ? "true" : "false");
		cli_json_string(m[i].debuginfo);
		printf(",\"why\":");
		cli_json_string(m[i].why);
		printf("}");
	}
	if (json)
		printf("]}\n");
}

/* The summary, prefetch's: how each module's files were found. */
static void summary(const char *what, const struct ds_core_module *m, size_t n,
		    const struct ds_fetch_stats *before, const struct ds_fetch_stats *after,
		    double secs, bool quiet)
{
	size_t at_path = 0, exe_found = 0, exe_missing = 0, local = 0, cached = 0, fetched = 0,
	       missing = 0, nobid = 0;
	char bytes[32];

	for (size_t i = 0; i < n; i++) {
		const struct ds_debuginfo *di;

		if (!m[i].dso) {
			nobid++;
			continue;
		}
		at_path += m[i].file_state == DS_CORE_FILE_AT_PATH;
		exe_found += m[i].file_state == DS_CORE_FILE_FOUND;
		exe_missing += m[i].file_state == DS_CORE_FILE_MISSING;
		if (ds_dso_debuginfo(m[i].dso, &di)) {
			missing++;
			continue;
		}
		switch (ds_debuginfo_source(di)) {
		case DS_SOURCE_DEBUGINFOD:
			fetched++;
			break;
		case DS_SOURCE_DEBUGINFOD_CACHE:
			cached++;
			break;
		default:
			local++;
		}
	}
	cli_human((double)(after->bytes - before->bytes), bytes, sizeof(bytes));
	if (!quiet) {
		fprintf(stderr, "%s: %zu modules\n", cli_t(what), n);
		fprintf(stderr, "  files at their path  %zu\n", at_path);
		fprintf(stderr, "  executables found    %zu  (elsewhere here, or fetched)\n",
			exe_found);
		fprintf(stderr, "  executables missing  %zu\n", exe_missing);
		fprintf(stderr, "  debuginfo local      %zu\n", local);
		fprintf(stderr, "  debuginfod cache     %zu\n", cached);
		fprintf(stderr, "  fetched              %zu  (%s in %.2f s, %llu requests)\n",
			fetched, bytes, secs,
			(unsigned long long)(after->requests - before->requests));
		fprintf(stderr, "  debuginfo missing    %zu\n", missing);
		if (nobid)
			fprintf(stderr, "  vDSO, no file        %zu  (named from its memory)\n",
				nobid);
	}
	for (size_t i = 0; i < n; i++) {
		char hex[2 * DS_BUILD_ID_MAX + 1];

		if (!m[i].dso || (m[i].file_state != DS_CORE_FILE_MISSING && m[i].debuginfo))
			continue;
		ds_build_id_format(&m[i].build_id, hex, sizeof(hex));
		fprintf(stderr, "missing  %s %s: %s\n", hex, cli_t(m[i].path), m[i].why ? cli_t(m[i].why) : "");
	}
}

static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static int stack_core(struct ds_context *ctx, const char *path, const char *exe, bool list,
		      struct stack_out *o, bool progress, bool quiet)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = progress_or_cancel, .user = progress ? &fo : NULL);
	DS_OPTS(ds_stack_opts, so, .cancel = &interrupted);
	struct ds_fetch_stats before, after;
	const struct ds_core_module *mods;
	struct ds_core_info info;
	struct ds_store *store;
	struct ds_core *core;
	struct timespec t0;
	char err[512] = "";
	int rc, left, status = 0;
	size_t n;

	rc = ds_core_open(path, &core, err, sizeof(err));
	if (rc) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(rc));
		return 2;
	}
	store = ds_store_new(ctx, "host", NULL);
	if (!store) {
		cli_error("%s", ds_strerror(-errno));
		ds_core_close(core);
		return 2;
	}
	if (exe) {
		rc = ds_core_use_file(core, exe);
		if (rc) {
			cli_error("--exe %s: %s", exe,
				  rc == -ENOENT ? "its build ID is none of the core's modules'"
						: ds_strerror(rc));
			status = 2;
			goto out;
		}
	}
	ds_fetch_stats(ctx, &before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	left = ds_core_find_files(core, store, &fo);
	ds_fetch_stats(ctx, &after);
	n = ds_core_modules(core, &mods);
	if (left < 0) {
		cli_error("%s: %s", path, ds_strerror(left));
		status = left == -ECANCELED ? 1 : 2;
		goto out;
	}
	if (list) {
		list_modules(mods, n, o->fmt == FMT_JSON);
		status = left ? 1 : 0;
		summary(path, mods, n, &before, &after, since(&t0), quiet);
		goto out;
	}
	ds_core_info(core, &info);
	if (info.missing_bytes)
		cli_error("%s: truncated: %llu bytes of memory missing (the file has %llu): frames "
			  "may be lost",
			  path, (unsigned long long)info.missing_bytes, (unsigned long long)info.size);
	if (o->fmt == FMT_JSON) {
		printf("{\"pid\":%d,\"command\":", info.pid);
		cli_json_string(info.fname);
		printf(",\"signal\":{\"number\":%d,\"name\":", info.signo);
		cli_json_string(info.signo ? sig_name(info.signo) : NULL);
		printf(",\"code\":%d,\"fault_address\":", info.si_code);
		if (info.has_fault_addr)
			printf("\"0x%llx\"", (unsigned long long)info.fault_addr);
		else
			printf("null");
		printf(",\"tid\":%d},\"threads\":[", info.crash_tid);
	} else {
		if (o->fmt == FMT_EU)
			printf("PID %d - core\n", info.pid);
		if (info.signo) {
			printf("%s terminated with signal %s, %s", info.fname ? cli_t(info.fname) : "Program",
			       sig_name(info.signo), strsignal(info.signo));
			if (info.has_fault_addr)
				printf(" (fault address 0x%llx)", (unsigned long long)info.fault_addr);
			printf(", in thread %d.\n", info.crash_tid);
		}
	}
	rc = ds_core_backtrace(core, store, &so, print_thread, o, err, sizeof(err));
	if (o->fmt == FMT_JSON) {
		printf("],\"missing\":[");
		for (size_t i = 0, k = 0; i < n; i++) {
			if (!mods[i].dso || (mods[i].file_state != DS_CORE_FILE_MISSING && mods[i].debuginfo))
				continue;
			printf("%s", k++ ? "," : "");
			cli_json_string(mods[i].path);
		}
		printf("]}\n");
	}
	fflush(stdout);
	summary(path, mods, n, &before, &after, since(&t0), quiet);
	if (rc) {
		cli_error("%s: %s", path, err[0] ? err : ds_strerror(rc));
		status = rc == -EBADMSG ? 2 : 1;
	} else if (!o->printed) {
		cli_error("%s: no frame could be unwound", path);
		status = 1;
	} else if (left) {
		status = 1;
	}
out:
	ds_store_free(store);
	ds_core_close(core);
	return status;
}

static int stack_pid(struct ds_context *ctx, int pid, struct stack_out *o, bool progress)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = progress_or_cancel, .user = progress ? &fo : NULL);
	DS_OPTS(ds_stack_opts, so, .cancel = &interrupted);
	struct ds_store *store = ds_store_new(ctx, "host", NULL);
	char err[512] = "";
	int rc;

	if (!store) {
		cli_error("%s", ds_strerror(-errno));
		return 2;
	}
	if (o->fmt == FMT_JSON)
		printf("{\"pid\":%d,\"threads\":[", pid);
	else if (o->fmt == FMT_EU)
		printf("PID %d - process\n", pid);
	fflush(stdout);
	rc = ds_proc_backtrace(pid, store, &so, &fo, print_thread, o, err, sizeof(err));
	if (o->fmt == FMT_JSON)
		printf("]}\n");
	ds_store_free(store);
	if (rc) {
		cli_error("pid %d: %s", pid, err[0] ? err : ds_strerror(rc));
		return rc == -ECANCELED ? 130 : 1;
	}
	return o->printed ? 0 : 1;
}

static int cmd_stack(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct stack_out o = { FMT_EU, 0, 0 };
	const char *core = NULL, *exe = NULL;
	bool list = false, json = false, no_fetch = false, quiet = false;
	int progress = -1, pid = 0, status;
	struct ds_context *ctx;
	struct sigaction sa = { .sa_handler = on_signal };

	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_stack, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		char *end;
		long v;

		switch (id) {
		case CLI_BAD:
		case CLI_HELP:
			return id == CLI_HELP ? 0 : 2;
		case O_CORE:
		case O_EXE:
			*(id == O_CORE ? &core : &exe) = p.arg;
			break;
		case O_PID:
			v = strtol(p.arg, &end, 10);
			if (*end || end == p.arg || v <= 0 || v > 0x7fffffff) {
				cli_error("stack: bad pid: %s", p.arg);
				return 2;
			}
			pid = (int)v;
			break;
		case O_LIST_MODULES:
			list = true;
			break;
		case O_FORMAT:
			if (strcmp(p.arg, "gdb") && strcmp(p.arg, "eu-stack"))
				return cli_usage_error(&p, "--format: eu-stack or gdb, not '%s'", p.arg);
			o.fmt = strcmp(p.arg, "gdb") ? FMT_EU : FMT_GDB;
			break;
		case O_JSON:
			json = true;
			break;
		case O_QUIET:
			quiet = true;
			break;
		default:
			return cli_usage_error(&p, "unexpected argument '%s'", p.arg);
		}
	}
	no_fetch = common.no_fetch;
	progress = common.progress;
	if (json)
		o.fmt = FMT_JSON;
	if (!core == !pid || (pid && (list || exe))) {
		cli_error("stack: give either --core CORE or -p PID (see --help)");
		return 2;
	}
	if (no_fetch)
		setenv("DEBUGINFOD_URLS", "", 1);
	ctx = cli_context(&common);
	/* Ctrl-C: stop unwinding and detach from the process, not leave it
	 * stopped. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (core)
		status = stack_core(ctx, core, exe, list, &o, cli_want_progress(progress), quiet);
	else
		status = stack_pid(ctx, pid, &o, cli_want_progress(progress));
	ds_context_free(ctx);
	return status;
}

const struct cli_command cli_cmd_stack = {
	.name = "stack",
	.run = cmd_stack,
	.summary = "backtraces of a core file or a live process, every thread",
	.usage = "[OPTIONS] --core CORE [--exe FILE]\n[OPTIONS] -p PID",
	.about = "Prints the backtrace of every thread, the crashing one first with its signal.\n"
		 "Each module's executable (when the file at its path is missing or another\n"
		 "build) and debuginfo are found on this machine, else fetched from the servers\n"
		 "of $DEBUGINFOD_URLS in one parallel batch, before unwinding; a summary on\n"
		 "stderr says what was found where.  Exit status 0: a backtrace was printed;\n"
		 "1: modules were missing (named in the summary) or unwinding failed; 2: bad\n"
		 "usage or an unreadable core.\n",
	.tables = stack_tables,
};
