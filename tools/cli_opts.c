/* The commands' option parser, driven by their tables (cli_opts.h).
 * Every option with an argument takes it as "--opt ARG" and "--opt=ARG",
 * "-o ARG" and "-oARG"; short options without one bundle ("-fiC"); "--"
 * ends the options and a lone "-" is an argument.  Long names are matched
 * whole: an abbreviation would change meaning when an option is added. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdarg.h>
#include <string.h>

const struct cli_opt cli_opts_help[] = {
    {CLI_O_HELP, 'h', "help", NULL, "this help", 0},
    {0},
};

const struct cli_opt cli_opts_verbose[] = {
    {CLI_O_VERBOSE, 'v', "verbose", NULL, "log the search on stderr", 0},
    {0},
};

const struct cli_opt cli_opts_lookup[] = {
    {CLI_O_DEBUG_DIR, 0, "debug-dir", "DIR",
     "a debug directory (repeatable; default /usr/lib/debug)", CLI_ARG_DIR},
    {CLI_O_PERF_BUILDID_DIR, 0, "perf-buildid-dir", "DIR",
     "perf's build-id cache (default $PERF_BUILDID_DIR, perf's buildid.dir, ~/.debug; "
     "\"\" disables it)",
     CLI_ARG_DIR},
    {0},
};

const struct cli_opt cli_opts_kernel[] = {
    {CLI_O_KALLSYMS, 0, "kallsyms", "FILE", "kernel symbols from FILE, not /proc/kallsyms (perf's)",
     CLI_ARG_FILE},
    {CLI_O_KERNEL_ROOT, 0, "kernel-root", "DIR",
     "the kernel's proc/ and sys/ files under DIR (default $DSOSTORE_KERNEL_ROOT, else /)",
     CLI_ARG_DIR},
    {0},
};

const struct cli_opt cli_opts_vmlinux[] = {
    {CLI_O_VMLINUX, 'k', "vmlinux", "FILE",
     "the kernel's vmlinux with DWARF (perf's -k), for kernel addresses", CLI_ARG_FILE},
    {0},
};

const struct cli_opt cli_opts_input[] = {
    {CLI_O_INPUT, 'i', "input", "FILE", "the recording (default perf.data)", CLI_ARG_FILE},
    {CLI_O_STDIO, 0, "stdio", NULL, "accepted, for perf's command lines (the only output)", 0},
    {0},
};

const struct cli_opt cli_opts_no_fetch[] = {
    {CLI_O_NO_FETCH, 0, "no-fetch", NULL,
     "no debuginfod servers: local debuginfo only (and what the debuginfod cache has)", 0},
    {0},
};

const struct cli_opt cli_opts_progress[] = {
    {CLI_O_PROGRESS, 0, "progress", NULL,
     "a progress bar of the fetches on stderr (default: on a terminal or with "
     "$DEBUGINFOD_PROGRESS)",
     0},
    {CLI_O_NO_PROGRESS, 0, "no-progress", NULL, "no progress bar", 0},
    {0},
};

void cli_parse_init(struct cli_parse *p, const struct cli_command *cmd, struct cli_common *common,
		    int argc, char **argv)
{
	*p = (struct cli_parse){.cmd = cmd, .common = common, .argc = argc, .argv = argv, .i = 1};
	common->progress = -1;
}

int cli_usage_error(const struct cli_parse *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dsostore: %s: ", p->cmd->name);
	va_start(ap, fmt);
	cli_vwrite(stderr, fmt, ap); /* it quotes arguments: escaped */
	va_end(ap);
	fprintf(stderr, " (see dsostore %s --help)\n", p->cmd->name);
	return 2;
}

/* The option of cmd's tables with that short name, or that long name of
 * len bytes. */
static const struct cli_opt *find_opt(const struct cli_command *cmd, char short_name,
				      const char *name, size_t len)
{
	for (const struct cli_opt *const *t = cmd->tables; t && *t; t++)
		for (const struct cli_opt *o = *t; o->id; o++) {
			if (short_name && o->short_name == short_name)
				return o;
			if (!short_name && o->long_name && strlen(o->long_name) == len &&
			    !memcmp(o->long_name, name, len))
				return o;
		}
	return NULL;
}

/* The shared options, applied: 0, CLI_HELP or CLI_BAD; 1 for an option
 * the command reads itself. */
static int apply_common(struct cli_parse *p, int id)
{
	struct cli_common *c = p->common;

	switch (id) {
	case CLI_O_HELP:
		cli_help(stdout, p->cmd);
		return CLI_HELP;
	case CLI_O_VERBOSE:
		c->verbose++;
		return 0;
	case CLI_O_DEBUG_DIR:
		if (c->n_debug_dirs >= 32)
			return cli_usage_error(p, "too many --debug-dir"), CLI_BAD;
		c->debug_dirs[c->n_debug_dirs++] = p->arg;
		return 0;
	case CLI_O_PERF_BUILDID_DIR:
		c->perf_buildid_dir = p->arg;
		return 0;
	case CLI_O_KALLSYMS:
		c->kallsyms = p->arg;
		return 0;
	case CLI_O_KERNEL_ROOT:
		c->kernel_root = p->arg;
		return 0;
	case CLI_O_VMLINUX:
		c->vmlinux = p->arg;
		return 0;
	case CLI_O_INPUT:
		c->input = p->arg;
		return 0;
	case CLI_O_STDIO:
		return 0; /* perf's; the only output there is */
	case CLI_O_NO_FETCH:
		c->no_fetch = true;
		return 0;
	case CLI_O_PROGRESS:
	case CLI_O_NO_PROGRESS:
		c->progress = id == CLI_O_PROGRESS;
		return 0;
	default:
		return 1;
	}
}

/* argv[p->i], which starts with "--": its option, argument in p->arg. */
static const struct cli_opt *long_opt(struct cli_parse *p)
{
	const char *a = p->argv[p->i] + 2, *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const struct cli_opt *o = find_opt(p->cmd, 0, a, len);

	snprintf(p->opt, sizeof(p->opt), "--%.*s", (int)(len < 40 ? len : 40), a);
	p->i++;
	p->arg = NULL;
	if (!o) {
		cli_usage_error(p, "unknown option '%s'", p->opt);
		return NULL;
	}
	if (!o->arg && eq) {
		cli_usage_error(p, "option '%s' takes no argument", p->opt);
		return NULL;
	}
	if (!o->arg || (o->flags & CLI_ARG_OPTIONAL) || eq) {
		p->arg = eq ? eq + 1 : NULL;
		return o;
	}
	if (p->i >= p->argc) {
		cli_usage_error(p, "option '%s' needs an argument (%s)", p->opt, o->arg);
		return NULL;
	}
	p->arg = p->argv[p->i++];
	return o;
}

/* The short option at argv[p->i][p->sub]; its argument in p->arg. */
static const struct cli_opt *short_opt(struct cli_parse *p)
{
	const char *a = p->argv[p->i], *rest = a + p->sub + 1;
	const struct cli_opt *o = find_opt(p->cmd, a[p->sub], NULL, 0);

	snprintf(p->opt, sizeof(p->opt), "-%c", a[p->sub]);
	p->arg = NULL;
	if (!o || !o->arg) {
		p->sub = *rest ? p->sub + 1 : 0;
		p->i += !p->sub;
		if (!o)
			cli_usage_error(p, "unknown option '%s'", p->opt);
		return o;
	}
	p->sub = 0;
	p->i++;
	if (*rest && (!(o->flags & CLI_ARG_OPTIONAL) || (o->flags & CLI_ARG_SHORT_ATTACHED)))
		p->arg = rest;
	else if (!(o->flags & CLI_ARG_OPTIONAL) && p->i < p->argc)
		p->arg = p->argv[p->i++];
	else if (!(o->flags & CLI_ARG_OPTIONAL)) {
		cli_usage_error(p, "option '%s' needs an argument (%s)", p->opt, o->arg);
		return NULL;
	} else if (*rest) {
		/* An optional argument not taken attached: the rest are options. */
		p->i--;
		p->sub = (int)(rest - a);
	}
	return o;
}

int cli_next(struct cli_parse *p)
{
	for (;;) {
		const struct cli_opt *o;
		const char *a;
		int r;

		if (p->i >= p->argc)
			return CLI_END;
		a = p->argv[p->i];
		if (!p->sub) {
			bool hex = (p->cmd->flags & CLI_CMD_DASH_HEX) && a[0] == '-' &&
				   a[1] == '0' && (a[2] == 'x' || a[2] == 'X');

			if (p->dashdash || a[0] != '-' || !a[1] || hex) {
				p->arg = a;
				p->i++;
				return CLI_ARG;
			}
			if (!strcmp(a, "--")) {
				p->dashdash = true;
				p->i++;
				continue;
			}
			if (a[1] != '-')
				p->sub = 1;
		}
		o = p->sub ? short_opt(p) : long_opt(p);
		if (!o)
			return CLI_BAD;
		r = apply_common(p, o->id);
		if (r < 0)
			return r;
		if (r)
			return o->id;
	}
}

const char *cli_peek(const struct cli_parse *p)
{
	return !p->sub && !p->dashdash && p->i < p->argc ? p->argv[p->i] : NULL;
}

void cli_take(struct cli_parse *p)
{
	p->arg = p->argv[p->i++];
}
