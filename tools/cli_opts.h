/* The commands' options: one table per command, from which its argv is
 * parsed (tools/cli_opts.c) and its --help, the man page and the bash
 * completion are written (tools/cli_doc.c), so that none of them can
 * name an option the others do not. */
#ifndef DS_CLI_OPTS_H
#define DS_CLI_OPTS_H

#include <stdbool.h>
#include <stdio.h>

struct cli_common;

enum {
	/* The argument is optional: given only as --opt=ARG (and, with
	 * CLI_ARG_SHORT_ATTACHED, -oARG), never as the next word. */
	CLI_ARG_OPTIONAL = 1u << 0,
	CLI_ARG_SHORT_ATTACHED = 1u << 1,
	/* For completion: the argument names a file, a directory. */
	CLI_ARG_FILE = 1u << 2,
	CLI_ARG_DIR = 1u << 3,
};

struct cli_opt {
	int id;		       /* what cli_next() returns for it; 0 ends a table */
	char short_name;       /* 0: none */
	const char *long_name; /* without "--"; NULL: none */
	const char *arg;       /* the argument's name in help ("FILE"); NULL: none */
	const char *help;      /* one paragraph: wrapped when printed */
	unsigned flags;
};

/* The ids of the options that tables share (the common_* tables below):
 * cli_next() applies them to struct cli_common itself. */
enum {
	CLI_O_HELP = 1000,
	CLI_O_VERBOSE,
	CLI_O_DEBUG_DIR,
	CLI_O_PERF_BUILDID_DIR,
	CLI_O_KALLSYMS,
	CLI_O_KERNEL_ROOT,
	CLI_O_VMLINUX,
	CLI_O_INPUT,
	CLI_O_STDIO,
	CLI_O_NO_FETCH,
	CLI_O_PROGRESS,
	CLI_O_NO_PROGRESS,
};

/* -h/--help, which every command takes. */
extern const struct cli_opt cli_opts_help[];
/* -v/--verbose: the search logged on stderr. */
extern const struct cli_opt cli_opts_verbose[];
/* --debug-dir, --perf-buildid-dir: where debuginfo is looked for. */
extern const struct cli_opt cli_opts_lookup[];
/* --kallsyms, --kernel-root: the kernel's symbols (commands that name
 * kernel addresses). */
extern const struct cli_opt cli_opts_kernel[];
/* -k/--vmlinux: the kernel's DWARF. */
extern const struct cli_opt cli_opts_vmlinux[];
/* -i/--input FILE and perf's --stdio: commands that read one recording. */
extern const struct cli_opt cli_opts_input[];
/* --no-fetch: local debuginfo only. */
extern const struct cli_opt cli_opts_no_fetch[];
/* --progress, --no-progress. */
extern const struct cli_opt cli_opts_progress[];

enum {
	/* Words "-0x..." are arguments (addresses), not options. */
	CLI_CMD_DASH_HEX = 1u << 0,
	/* Not in the command list (the addr2line personality's own). */
	CLI_CMD_HIDDEN = 1u << 1,
};

struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary; /* its line in the command list */
	const char *usage;   /* what follows "dsostore NAME"; lines split by '\n' */
	const char *about;   /* what it does: lines of text */
	const char *notes;   /* after the options, or NULL */
	/* The tables it takes, NULL-terminated; none when NULL (parsed by
	 * the command itself, options listed in opts_text). */
	const struct cli_opt *const *tables;
	const char *opts_text;
	unsigned flags;
};

/* What cli_next() returns besides an option's id. */
enum { CLI_END = 0, CLI_BAD = -1, CLI_HELP = -2, CLI_ARG = -3 };

struct cli_parse {
	const struct cli_command *cmd;
	struct cli_common *common;
	int argc;
	char **argv;
	int i;		 /* the word being read */
	int sub;	 /* within a bundle of short options ("-fiC"), the next one */
	bool dashdash;	 /* "--" seen: words are arguments */
	const char *arg; /* the option's argument (NULL: none), or the argument */
	char opt[64];	 /* the option as given, for messages */
};

/* Parse argv[1..argc) for cmd; common (zeroed by the caller; its progress
 * set to -1 here) gets the shared options. */
void cli_parse_init(struct cli_parse *p, const struct cli_command *cmd, struct cli_common *common,
		    int argc, char **argv);
/* The next option's id with p->arg, CLI_ARG with p->arg an argument,
 * CLI_END; CLI_HELP after printing the help on stdout (exit 0); CLI_BAD
 * after saying why on stderr (exit 2).  Options of the shared tables are
 * applied to common and not returned. */
int cli_next(struct cli_parse *p);
/* The word after the option just returned, for an optional argument that
 * may be the next word when it reads as one (perf's -g); cli_take()
 * consumes it. */
const char *cli_peek(const struct cli_parse *p);
void cli_take(struct cli_parse *p);
/* "dsostore: CMD: MSG (see dsostore CMD --help)" on stderr; returns 2. */
int cli_usage_error(const struct cli_parse *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* tools/cli_doc.c: COMMAND --help; the command list; the man page and
 * the bash completion of all commands. */
void cli_help(FILE *f, const struct cli_command *cmd);
void cli_command_list(FILE *f, const struct cli_command *const *cmds, size_t n);
void cli_man(FILE *f, const struct cli_command *const *cmds, size_t n);
void cli_completion(FILE *f, const struct cli_command *const *cmds, size_t n);

#endif
