/* dsostore: the command-line tool.  One file per subcommand. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "buildid", cmd_buildid, "print the GNU build ID of ELF files" },
	{ "find", cmd_find, "find the local debuginfo or executable of a build ID" },
	{ "scan", cmd_scan, "put binaries into a store and show the debuginfo of each" },
	{ "fetch", cmd_fetch, "fetch from debuginfod servers, many build IDs at once" },
	{ "cache", cmd_cache, "the debuginfod client cache: path, stats, clean" },
	{ "symbolize", cmd_symbolize, "addresses to functions, file:line and inline frames" },
	{ "normalize", cmd_normalize, "a live process's addresses as build ID, file offset, vaddr" },
	{ "addr2line", cmd_addr2line, "binutils addr2line, answered by dsostore (for perf)" },
	{ "index", cmd_index, "build and save the symbol indexes of binaries ahead" },
	{ "buildid-list", cmd_buildid_list, "the build IDs of a perf.data, as perf buildid-list" },
	{ "prefetch", cmd_prefetch, "the debuginfo a perf recording needs, in one parallel batch" },
	{ "report", cmd_report, "the top symbols of a perf.data, as perf report --stdio" },
	{ "annotate", cmd_annotate, "the hot functions of a perf.data by source line, with the text" },
	{ "perf-cache", cmd_perf_cache, "install debuginfo into perf's build-id cache" },
	{ "flamegraph", cmd_flamegraph, "a recording's stacks as an interactive SVG flame graph" },
	{ "stack", cmd_stack, "backtraces of a core file or a live process, every thread" },
};

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fputs("dsostore: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_common_option(struct cli_common *c, int argc, char **argv, int *i, const char *help)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
		fputs(help, stdout);
		return CLI_HELP;
	}
	if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
		c->verbose++;
		return 1;
	}
	if (!strncmp(a, "--kallsyms=", 11) || !strncmp(a, "--kernel-root=", 14)) {
		*(a[3] == 'a' ? &c->kallsyms : &c->kernel_root) = strchr(a, '=') + 1;
		return 1;
	}
	if (!strcmp(a, "--kallsyms") || !strcmp(a, "--kernel-root")) {
		if (*i + 1 >= argc) {
			cli_error("%s needs an argument", a);
			return CLI_BAD;
		}
		*(a[3] == 'a' ? &c->kallsyms : &c->kernel_root) = argv[++*i];
		return 1;
	}
	if (!strncmp(a, "--vmlinux=", 10)) {
		c->vmlinux = a + 10;
		return 1;
	}
	if (!strcmp(a, "-k") || !strcmp(a, "--vmlinux")) {
		if (*i + 1 >= argc) {
			cli_error("%s needs an argument", a);
			return CLI_BAD;
		}
		c->vmlinux = argv[++*i];
		return 1;
	}
	if (!strcmp(a, "--debug-dir") || !strcmp(a, "--perf-buildid-dir")) {
		if (*i + 1 >= argc) {
			cli_error("%s needs an argument", a);
			return CLI_BAD;
		}
		if (!strcmp(a, "--perf-buildid-dir")) {
			c->perf_buildid_dir = argv[++*i];
			return 1;
		}
		if (c->n_debug_dirs >= 32) {
			cli_error("too many --debug-dir");
			return CLI_BAD;
		}
		c->debug_dirs[c->n_debug_dirs++] = argv[++*i];
		return 1;
	}
	return 0;
}

void cli_human(double bytes, char *buf, size_t len)
{
	const char *unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

int cli_progress(void *user, const struct ds_fetch_progress *p)
{
	char bytes[32], rate[32];

	(void)user;
	cli_human((double)p->bytes, bytes, sizeof(bytes));
	cli_human(p->elapsed_s > 0 ? p->bytes / p->elapsed_s : 0, rate, sizeof(rate));
	fprintf(stderr, "\r[%zu/%zu] %s, %s/s, %zu failed, %.1f s  ", p->done, p->total, bytes,
		rate, p->failed, p->elapsed_s);
	if (p->done == p->total)
		fputc('\n', stderr);
	return 0;
}

void cli_json_string(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

bool cli_want_progress(int option)
{
	return option >= 0 ? option : isatty(2) || getenv("DEBUGINFOD_PROGRESS");
}

static void log_stderr(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	fprintf(stderr, "dsostore: %s\n", msg);
}

struct ds_context *cli_context(const struct cli_common *c)
{
	DS_OPTS(ds_context_opts, opts, .debug_dirs = c->n_debug_dirs ? c->debug_dirs : NULL,
		.perf_buildid_dir = c->perf_buildid_dir, .log_fn = log_stderr,
		.kallsyms = c->kallsyms, .kernel_root = c->kernel_root,
		.log_level = c->verbose ? DS_LOG_DEBUG : DS_LOG_WARN);
	struct ds_context *ctx = ds_context_new(&opts);

	if (!ctx) {
		cli_error("cannot create a context: %s", ds_strerror(-errno));
		exit(2);
	}
	return ctx;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: dsostore COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].what);
	fprintf(f, "\n'dsostore COMMAND --help' for each command's options.\n");
}

int main(int argc, char **argv)
{
	const char *self = argc > 0 ? strrchr(argv[0], '/') : NULL;

	/* Run through a link named addr2line: binutils' addr2line. */
	self = self ? self + 1 : argc > 0 ? argv[0] : "";
	if (!strcmp(self, "addr2line"))
		return cmd_addr2line(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("dsostore %d.%d.%d\n", DS_VERSION_MAJOR, DS_VERSION_MINOR, DS_VERSION_PATCH);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	cli_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
