/* What the option tables say, written for people and shells: a command's
 * --help, the command list, the man page dsostore(1) and the bash
 * completion (the last two written at build time by the hidden
 * "dsostore --dump-man" and "--dump-completion"). */
#define _GNU_SOURCE
#include "cli.h"

#include <string.h>

#define HELP_WIDTH 79
#define HELP_COL   26 /* where an option's help starts */

/* "-k, --vmlinux FILE" into buf. */
static void opt_name(const struct cli_opt *o, char *buf, size_t len)
{
	bool optional = o->long_name && (o->flags & CLI_ARG_OPTIONAL);
	char s[8] = "";

	if (o->short_name)
		snprintf(s, sizeof(s), "-%c%s", o->short_name, o->long_name ? ", " : "");
	/* One snprintf: a name too long for buf is cut, never overrun. */
	snprintf(buf, len, "%s%s%s%s%s%s", s, o->long_name ? "--" : "",
		 o->long_name ? o->long_name : "", !o->arg ? "" : optional ? "[=" : " ",
		 o->arg ? o->arg : "", optional && o->arg ? "]" : "");
}

/* text from column col on, words wrapped at HELP_WIDTH, the lines after
 * the first indented to indent. */
static void wrap(FILE *f, const char *text, int col, int indent)
{
	const char *s = text;

	while (*s) {
		size_t w = strcspn(s, " ");

		if (col > indent && col + 1 + (int)w > HELP_WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, w, f);
		col += (int)w;
		s += w;
		s += strspn(s, " ");
	}
	fputc('\n', f);
}

void cli_help(FILE *f, const struct cli_command *cmd)
{
	const char *u = cmd->usage;

	for (int first = 1; first || *u; first = 0) {
		size_t n = strcspn(u, "\n");

		fprintf(f, "%s dsostore %s %.*s\n", first ? "usage:" : "      ", cmd->name, (int)n,
			u);
		u += n + (u[n] == '\n');
	}
	fputs(cmd->about, f);
	if (cmd->opts_text)
		fputs(cmd->opts_text, f);
	if (cmd->tables)
		fputs("\nOptions:\n", f);
	for (const struct cli_opt *const *t = cmd->tables; t && *t; t++)
		for (const struct cli_opt *o = *t; o->id; o++) {
			char name[80];
			int col;

			opt_name(o, name, sizeof(name));
			col = fprintf(f, "  %s", name);
			if (col >= HELP_COL - 1) {
				fputc('\n', f);
				col = 0;
			}
			fprintf(f, "%*s", HELP_COL - col, "");
			wrap(f, o->help, HELP_COL, HELP_COL);
		}
	if (cmd->notes) {
		fputc('\n', f);
		fputs(cmd->notes, f);
	}
}

void cli_command_list(FILE *f, const struct cli_command *const *cmds, size_t n)
{
	int width = 0;

	for (size_t i = 0; i < n; i++)
		if (!(cmds[i]->flags & CLI_CMD_HIDDEN) && (int)strlen(cmds[i]->name) > width)
			width = (int)strlen(cmds[i]->name);
	fprintf(f, "usage: dsostore COMMAND [OPTIONS] [ARGS]\n"
		   "       dsostore --version | -V | version\n\ncommands:\n");
	for (size_t i = 0; i < n; i++)
		if (!(cmds[i]->flags & CLI_CMD_HIDDEN))
			fprintf(f, "  %-*s  %s\n", width, cmds[i]->name, cmds[i]->summary);
	fprintf(f, "\n'dsostore COMMAND --help' for each command's options.\n");
}

/* s as roff text: backslashes and hyphens escaped, a line starting with
 * a control character made text; newlines kept. */
static void roff(FILE *f, const char *s)
{
	bool bol = true;

	for (; *s; s++) {
		if (bol && (*s == '.' || *s == '\''))
			fputs("\\&", f);
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
		bol = *s == '\n';
	}
}

static void man_option(FILE *f, const struct cli_opt *o)
{
	fputs(".TP\n", f);
	if (o->short_name)
		fprintf(f, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
	if (o->long_name) {
		fputs("\\fB\\-\\-", f);
		roff(f, o->long_name);
		fputs("\\fR", f);
	}
	if (o->arg) {
		bool opt = o->long_name && (o->flags & CLI_ARG_OPTIONAL);

		fputs(opt ? "[=\\fI" : " \\fI", f);
		roff(f, o->arg);
		fputs(opt ? "\\fR]" : "\\fR", f);
	}
	fputc('\n', f);
	roff(f, o->help);
	fputc('\n', f);
}

static void man_command(FILE *f, const struct cli_command *cmd)
{
	const char *u = cmd->usage;

	fprintf(f, ".SS %s\n", cmd->name);
	while (*u) {
		size_t n = strcspn(u, "\n");
		char line[512];

		snprintf(line, sizeof(line), "%.*s", (int)n, u);
		fprintf(f, ".br\n\\fBdsostore %s\\fR ", cmd->name);
		roff(f, line);
		fputc('\n', f);
		u += n + (u[n] == '\n');
	}
	fputs(".PP\n", f);
	roff(f, cmd->about);
	if (cmd->opts_text) {
		fputs(".PP\n.nf\n", f);
		roff(f, cmd->opts_text);
		fputs(".fi\n", f);
	}
	for (const struct cli_opt *const *t = cmd->tables; t && *t; t++)
		for (const struct cli_opt *o = *t; o->id; o++)
			man_option(f, o);
	if (cmd->notes) {
		fputs(".PP\n.nf\n", f);
		roff(f, cmd->notes);
		fputs(".fi\n", f);
	}
}

void cli_man(FILE *f, const struct cli_command *const *cmds, size_t n)
{
	fprintf(f,
		".\\\" Written by dsostore --dump-man from the commands' option tables.\n"
		".TH DSOSTORE 1 \"\" \"dsostore %d.%d.%d\" \"User Commands\"\n"
		".SH NAME\ndsostore \\- debug info of binaries by GNU build ID\n"
		".SH SYNOPSIS\n\\fBdsostore\\fR \\fICOMMAND\\fR [\\fIOPTIONS\\fR] "
		"[\\fIARGS\\fR]\n.br\n\\fBdsostore\\fR \\fB\\-\\-version\\fR | \\fB\\-V\\fR | "
		"\\fBversion\\fR\n.br\n\\fBdsostore\\fR \\fB\\-\\-help\\fR | \\fBhelp\\fR\n"
		".SH DESCRIPTION\nFinds, fetches and reads the debug information of binaries "
		"keyed by their GNU build ID, for profilers and debuggers: symbolization, perf "
		"recordings, live processes and core files.\n.SH COMMANDS\n",
		DS_VERSION_MAJOR, DS_VERSION_MINOR, DS_VERSION_PATCH);
	for (size_t i = 0; i < n; i++)
		man_command(f, cmds[i]);
	fputs(".SH EXIT STATUS\n0 on success, 1 when something asked for failed, 2 on bad "
	      "usage.\n.SH SEE ALSO\n\\fBperf\\fR(1), \\fBaddr2line\\fR(1), "
	      "\\fBdebuginfod\\-find\\fR(1), \\fBeu\\-stack\\fR(1)\n",
	      f);
}

/* The options of cmd, as words; with flags, only those whose argument is
 * of that kind (all with an argument when flags is 0 and args). */
static void words(FILE *f, const struct cli_command *cmd, unsigned flags, bool args)
{
	const char *sep = "";

	for (const struct cli_opt *const *t = cmd->tables; t && *t; t++)
		for (const struct cli_opt *o = *t; o->id; o++) {
			/* An optional argument is never the next word. */
			if (args && (!o->arg || (o->flags & CLI_ARG_OPTIONAL) ||
				     (flags && !(o->flags & flags)) ||
				     (!flags && (o->flags & (CLI_ARG_FILE | CLI_ARG_DIR)))))
				continue;
			if (o->short_name) {
				fprintf(f, "%s-%c", sep, o->short_name);
				sep = " ";
			}
			if (o->long_name) {
				fprintf(f, "%s--%s", sep, o->long_name);
				sep = " ";
			}
		}
}

void cli_completion(FILE *f, const struct cli_command *const *cmds, size_t n)
{
	fputs("# bash completion of dsostore, written by dsostore --dump-completion from\n"
	      "# the commands' option tables.\n"
	      "_dsostore()\n{\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal opts files dirs other\n"
	      "\tCOMPREPLY=()\n"
	      "\tif [ \"$COMP_CWORD\" -eq 1 ]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W '",
	      f);
	for (size_t i = 0; i < n; i++)
		if (!(cmds[i]->flags & CLI_CMD_HIDDEN))
			fprintf(f, "%s ", cmds[i]->name);
	fputs("help version --help --version -V' -- \"$cur\"))\n\t\treturn\n\tfi\n"
	      "\tcase ${COMP_WORDS[1]} in\n",
	      f);
	for (size_t i = 0; i < n; i++) {
		if (!cmds[i]->tables)
			continue;
		fprintf(f, "\t%s)\n\t\topts='", cmds[i]->name);
		words(f, cmds[i], 0, false);
		fputs("'\n\t\tfiles='", f);
		words(f, cmds[i], CLI_ARG_FILE, true);
		fputs("'\n\t\tdirs='", f);
		words(f, cmds[i], CLI_ARG_DIR, true);
		fputs("'\n\t\tother='", f);
		words(f, cmds[i], 0, true);
		fputs("' ;;\n", f);
	}
	fputs("\t*) return ;;\n\tesac\n"
	      "\tcase \" $files \" in *\" $prev \"*)\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n\tesac\n"
	      "\tcase \" $dirs \" in *\" $prev \"*)\n"
	      "\t\tCOMPREPLY=($(compgen -d -- \"$cur\")); return ;;\n\tesac\n"
	      "\tcase \" $other \" in *\" $prev \"*) return ;; esac\n"
	      "\tif [[ $cur == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\telse\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n\tfi\n}\n"
	      "complete -o filenames -F _dsostore dsostore\n",
	      f);
}
