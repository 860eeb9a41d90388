/* dsostore addr2line: binutils addr2line's command line, answered by
 * dsostore, so that a program that runs "addr2line" (perf's srcline, the
 * kernel's scripts, crash handlers) can be given this one through a link
 * named addr2line put first in its PATH: the same options, output and exit
 * statuses, with the debuginfo of a stripped file found by build ID
 * (debug directories, perf's cache, debuginfod).
 *
 * The behaviour followed is binutils 2.40's (addr2line.c, bucomm.c),
 * checked against it by tests/cli/perf_addr2line.sh:
 *  - options by getopt_long() with binutils' table (so abbreviations,
 *    permutation, "--" and the error messages are getopt's), @FILE
 *    expanded by libiberty as binutils does; -e defaults to a.out;
 *  - the file checked as bfd would: missing, a directory, not a regular
 *    file, empty (status 1, nothing said), an archive, not an object;
 *  - every address, on the command line or a stdin line, read as
 *    binutils reads it (scan_vma(): hex, or SYMBOL+OFFSET): "," and
 *    other junk are address 0, never an error;
 *    stdin is read with fgets() into 100 bytes, so a longer line is
 *    several addresses;
 *  - the answer of each, flushed before a read that could wait (perf
 *    writes "ADDR\n,\n" and reads up to the "??" "??:0" of the ",").
 * What binutils would read as another format (PE, srec, ihex ...) is not
 * recognized here: this answers for ELF files only. */
#define _GNU_SOURCE
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* libiberty.h also declares what glibc's headers do, differently (basename). */
extern void expandargv(int *argcp, char ***argvp);
extern void freeargv(char **argv);

/* binutils' options: getopt_long() parses them (its syntax is binutils'),
 * this text lists them in --help and the man page. */
static const char a2l_options[] =
	"  @<file>                Read options from <file>\n"
	"  -a --addresses         Print each address first\n"
	"  -b --target=<bfdname>  The binary format (an ELF one; no effect here)\n"
	"  -e --exe=<executable>  The file (default a.out)\n"
	"  -i --inlines           The inlined callers too\n"
	"  -j --section=<name>    Offsets into the section instead of addresses\n"
	"  -p --pretty-print      One line per address\n"
	"  -s --basenames         File names without their directories\n"
	"  -f --functions         Function names too\n"
	"  -C --demangle[=style]  Demangle function names\n"
	"  -R --recurse-limit     Limit recursion while demangling (default)\n"
	"  -r --no-recurse-limit  Do not limit it\n"
	"  -h --help              This help\n"
	"  -v --version           The version\n";

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [option(s)] [addr(s)]\n"
		" Each address (hex) of the file: its function and source file:line.\n"
		" Without addresses on the command line, stdin's lines are read, each\n"
		" answered before the next is waited for.  dsostore answers, as binutils\n"
		" addr2line would, finding the debuginfo of a stripped file by build ID.\n"
		" The options are:\n%s",
		prog, a2l_options);
}

/* The file, checked as binutils checks it before reading any address (its
 * messages, with the program's name first); 0, or the exit status. */
static int check_file(const char *prog, const char *path)
{
	static const char archive[] = "!<arch>\n", thin[] = "!<thin>\n";
	char head[8];
	struct stat st;
	ssize_t n;
	int fd;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT)
			fprintf(stderr, "%s: '%s': No such file\n", prog, cli_t(path));
		else
			fprintf(stderr, "%s: Warning: could not locate '%s'.  reason: %s\n", prog,
				cli_t(path), strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: Warning: '%s' is a directory\n", prog, cli_t(path));
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: Warning: '%s' is not an ordinary file\n", prog, cli_t(path));
		return 1;
	}
	if (st.st_size < 1)
		return 1; /* bfd is not asked: nothing said */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, cli_t(path), strerror(errno));
		return 1;
	}
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n == (ssize_t)sizeof(head) &&
	    (!memcmp(head, archive, sizeof(head)) || !memcmp(head, thin, sizeof(head)))) {
		fprintf(stderr, "%s: %s: cannot get addresses from archive\n", prog, cli_t(path));
		return 1;
	}
	if (n < SELFMAG || memcmp(head, ELFMAG, SELFMAG)) {
		fprintf(stderr, "%s: %s: file format not recognized\n", prog, cli_t(path));
		return 1;
	}
	return 0;
}

/* -j: the section's address and size, from the file's section headers;
 * 0, else the exit status after binutils' message. */
static int find_section(const char *prog, const char *path, const char *name, struct cli_a2l *a)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 1;
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	Elf *elf;

	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, cli_t(path), strerror(errno));
		return 1;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *sname;

			if (!gelf_getshdr(scn, &sh))
				continue;
			sname = elf_strptr(elf, shstrndx, sh.sh_name);
			if (!sname || strcmp(sname, name))
				continue;
			/* bfd answers only in sections that take memory. */
			a->section = true;
			a->sec_alloc = sh.sh_flags & SHF_ALLOC;
			a->sec_vma = sh.sh_addr;
			a->sec_size = a->sec_alloc ? sh.sh_size : 0;
			rc = 0;
			break;
		}
	}
	if (rc)
		fprintf(stderr, "%s: %s: cannot find section %s\n", prog, cli_t(path), cli_t(name));
	elf_end(elf);
	close(fd);
	return rc;
}

static int addr2line_main(int argc, char **argv, const char *prog)
{
	static const struct option longopts[] = {
		{ "addresses", no_argument, NULL, 'a' },
		{ "basenames", no_argument, NULL, 's' },
		{ "demangle", optional_argument, NULL, 'C' },
		{ "exe", required_argument, NULL, 'e' },
		{ "functions", no_argument, NULL, 'f' },
		{ "inlines", no_argument, NULL, 'i' },
		{ "pretty-print", no_argument, NULL, 'p' },
		{ "recurse-limit", no_argument, NULL, 'R' },
		{ "recursion-limit", no_argument, NULL, 'R' },
		{ "no-recurse-limit", no_argument, NULL, 'r' },
		{ "no-recursion-limit", no_argument, NULL, 'r' },
		{ "section", required_argument, NULL, 'j' },
		{ "target", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'H' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct cli_a2l a = { .exe = "a.out" };
	const char *target = NULL, *section = NULL;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "ab:Ce:rRsfHhij:pVv", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			a.addresses = true;
			break;
		case 'b':
			target = optarg;
			break;
		case 'C':
			a.demangle = true;
			if (optarg && !a2l_demangle_style(optarg, &a.demangle)) {
				fprintf(stderr, "%s: unknown demangling style `%s'\n", prog, cli_t(optarg));
				return 1;
			}
			break;
		case 'e':
			a.exe = optarg;
			break;
		case 'r':
		case 'R':
			break; /* libiberty's recursion limit: the library's own */
		case 's':
			a.basenames = true;
			break;
		case 'f':
			a.functions = true;
			break;
		case 'p':
			a.pretty = true;
			break;
		case 'i':
			a.inlines = true;
			break;
		case 'j':
			section = optarg;
			break;
		case 'v':
		case 'V':
			printf("dsostore addr2line %d.%d.%d (the interface of GNU addr2line 2.40)\n",
			       DS_VERSION_MAJOR, DS_VERSION_MINOR, DS_VERSION_PATCH);
			return 0;
		case 'h':
		case 'H':
			usage(stdout, prog);
			return 0;
		default:
			usage(stderr, prog);
			return 1;
		}
	}
	rc = check_file(prog, a.exe);
	if (rc)
		return rc;
	if (target && !a2l_known_target(target)) {
		fprintf(stderr, "%s: %s: invalid bfd target\n", prog, cli_t(a.exe));
		return 1;
	}
	if (section && find_section(prog, a.exe, section, &a))
		return 1;
	return symbolize_addr2line(&a, argv + optind, argc - optind);
}

static int cmd_addr2line(int argc, char **argv)
{
	char **given = argv;
	int rc;

	/* @FILE: libiberty's expansion, binutils' own. */
	expandargv(&argc, &argv);
	rc = addr2line_main(argc, argv, given[0]);
	if (argv != given)
		freeargv(argv);
	return rc;
}

/* binutils' own syntax (getopt_long(), @FILE, abbreviations): no table of
 * ours; --recursion-limit and --no-recursion-limit are more spellings of
 * -R and -r. */
const struct cli_command cli_cmd_addr2line = {
	.name = "addr2line",
	.run = cmd_addr2line,
	.summary = "binutils addr2line, answered by dsostore (for perf)",
	.usage = "[option(s)] [addr(s)]",
	.about = "binutils addr2line's command line, options, output and exit statuses,\n"
		 "answered by dsostore, which finds the debuginfo of a stripped file by\n"
		 "build ID.  Also run as a link named addr2line.\n",
	.opts_text = a2l_options,
};
