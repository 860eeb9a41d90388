/* dsostore addr2line: binutils addr2line's command line, answered by
 * dsostore, so that a program that runs "addr2line" (perf's srcline, the
 * kernel's scripts, crash handlers) can be given this one through a link
 * named addr2line put first in its PATH: the same options, output and exit
 * statuses, with the debuginfo of a stripped file found by build ID
 * (debug directories, perf's cache, debuginfod).
 *
 * The behaviour followed is binutils 2.40's (addr2line.c, bucomm.c),
 * checked against it by tests/perf_addr2line.sh:
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

/* bfd names a function whose DWARF name is not a linkage name (C, C++
 * statics, gcc's clones) after the ELF symbol holding the address when
 * it is asked about an address of its own, and when that symbol starts
 * where the function does, keeps that name for the function: from then
 * on the function is called so as the caller of the inlined pieces in it
 * too, where before it was called by its DWARF name (addr2line -f -i
 * 0x1220 says "work", after 0x121f it says "_ZN2nsL4workERKSt6vector...").
 * So the names given to functions asked about directly are kept here, by
 * the function's start (up to RENAMED_MAX of them), and given to the
 * function when it is the outermost frame of a chain. */
#define RENAMED_MAX (1u << 16)

static struct {
	uint64_t *start;
	char **name;
	size_t mask, n;
} renamed;

static size_t renamed_slot(uint64_t start)
{
	uint64_t x = start * 0x9e3779b97f4a7c15ull;
	size_t h = (size_t)(x ^ x >> 29) & renamed.mask;

	while (renamed.name[h] && renamed.start[h] != start)
		h = (h + 1) & renamed.mask;
	return h;
}

void a2l_note_function(uint64_t start, const char *name, size_t len)
{
	size_t h;

	if (!name)
		return;
	if (!renamed.name) {
		renamed.mask = 2 * RENAMED_MAX - 1;
		renamed.start = calloc(renamed.mask + 1, sizeof(*renamed.start));
		renamed.name = calloc(renamed.mask + 1, sizeof(*renamed.name));
		if (!renamed.start || !renamed.name) {
			a2l_renamed_free();
			return;
		}
	}
	h = renamed_slot(start);
	if (renamed.name[h] || renamed.n == RENAMED_MAX)
		return; /* bfd renames once */
	renamed.name[h] = strndup(name, len);
	if (renamed.name[h]) {
		renamed.start[h] = start;
		renamed.n++;
	}
}

const char *a2l_renamed(uint64_t start)
{
	size_t h;

	if (!renamed.name)
		return NULL;
	h = renamed_slot(start);
	return renamed.name[h];
}

void a2l_renamed_free(void)
{
	for (size_t i = 0; renamed.name && i <= renamed.mask; i++)
		free(renamed.name[i]);
	free(renamed.name);
	free(renamed.start);
	memset(&renamed, 0, sizeof(renamed));
}

/* The file's ELF symbols by name, read at the first address given by
 * name (perf's "," sentinel is one: asked each time, found in O(1)) and
 * kept until a2l_symbols_close(): open addressing over the symbol
 * indexes, the first of a name kept, as bfd's search finds it. */
static struct {
	const char *path;
	int fd;
	Elf *elf;
	Elf_Data *data; /* the symbol table's */
	size_t strndx; /* its string section */
	uint32_t *slot; /* symbol index + 1; 0: empty */
	GElf_Addr *value; /* by slot */
	size_t mask;
	bool tried;
} syms = { .fd = -1 };

void a2l_symbols_close(void)
{
	elf_end(syms.elf);
	if (syms.fd >= 0)
		close(syms.fd);
	free(syms.slot);
	free(syms.value);
	memset(&syms, 0, sizeof(syms));
	syms.fd = -1;
}

/* The symbol table binutils reads: .symtab, else .dynsym. */
static Elf_Scn *symbol_table(Elf *elf)
{
	Elf_Scn *scn = NULL, *dyn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			return scn;
		if (sh.sh_type == SHT_DYNSYM && !dyn)
			dyn = scn;
	}
	return dyn;
}

static uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
	return h;
}

/* The slot of name[0..len): its symbol's, or the empty one it would take. */
static size_t name_slot(const char *name, size_t len)
{
	size_t h = (size_t)name_hash(name, len) & syms.mask;

	for (; syms.slot[h]; h = (h + 1) & syms.mask) {
		GElf_Sym sym;
		const char *n;

		if (!gelf_getsym(syms.data, (int)(syms.slot[h] - 1), &sym))
			continue;
		n = elf_strptr(syms.elf, syms.strndx, sym.st_name);
		if (n && !strncmp(n, name, len) && !n[len])
			break;
	}
	return h;
}

static void symbols_load(const char *path)
{
	Elf_Scn *scn;
	GElf_Shdr sh;
	Elf_Data *data;
	size_t n, cap = 16;

	a2l_symbols_close();
	syms.tried = true;
	syms.path = path;
	syms.fd = open(path, O_RDONLY | O_CLOEXEC);
	elf_version(EV_CURRENT);
	syms.elf = syms.fd >= 0 ? elf_begin(syms.fd, ELF_C_READ_MMAP, NULL) : NULL;
	scn = syms.elf ? symbol_table(syms.elf) : NULL;
	if (!scn || !gelf_getshdr(scn, &sh) || !(data = elf_getdata(scn, NULL)) || !sh.sh_entsize)
		return;
	n = sh.sh_size / sh.sh_entsize;
	if (n >= UINT32_MAX / 2)
		return;
	while (cap < 2 * n)
		cap *= 2;
	syms.slot = calloc(cap, sizeof(*syms.slot));
	syms.value = calloc(cap, sizeof(*syms.value));
	if (!syms.slot || !syms.value) {
		free(syms.slot);
		free(syms.value);
		syms.slot = NULL;
		syms.value = NULL;
		return;
	}
	syms.mask = cap - 1;
	syms.data = data;
	syms.strndx = sh.sh_link;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		size_t h;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		name = elf_strptr(syms.elf, syms.strndx, sym.st_name);
		if (!name)
			continue;
		h = name_slot(name, strlen(name));
		if (!syms.slot[h]) { /* the first of a name */
			syms.slot[h] = (uint32_t)(i + 1);
			syms.value[h] = sym.st_value;
		}
	}
}

/* The value of the first symbol named name[0..len) (the null symbol
 * aside; "" is the linker's nameless FILE symbol, 0); false if none. */
static bool symbol_value(const char *path, const char *name, size_t len, uint64_t *value)
{
	size_t h;

	if (!syms.tried || !syms.path || strcmp(syms.path, path))
		symbols_load(path);
	if (!syms.slot)
		return false;
	h = name_slot(name, len);
	if (!syms.slot[h])
		return false;
	*value = syms.value[h];
	return true;
}

/* binutils 2.40 reads an address as a hex number when it starts with a
 * digit (whitespace skipped), or with a hex letter and has no '+';
 * otherwise as SYMBOL[+OFFSET]: the symbol's value (0 when there is no
 * such symbol, the offset then ignored) plus OFFSET as strtoul(., 0) reads
 * it ("main+0x10", "main +16", "+20": the nameless symbol, 0, plus 20).
 * The name ends at whitespace or '+'.  (Found by asking binutils: the
 * tests compare a table of such inputs with its answers.) */
static uint64_t scan_vma(const char *path, const char *s)
{
	const char *plus, *end;
	uint64_t base;

	while (isspace((unsigned char)*s))
		s++;
	plus = strchr(s, '+');
	if (isdigit((unsigned char)*s) || (!plus && isxdigit((unsigned char)*s)))
		return strtoull(s, NULL, 16);
	for (end = s; *end && *end != '+' && !isspace((unsigned char)*end); end++)
		;
	if (!symbol_value(path, s, (size_t)(end - s), &base))
		return 0;
	return base + (plus ? strtoull(plus + 1, NULL, 0) : 0);
}

uint64_t a2l_scan_addr(const char *path, const char *s, size_t len)
{
	char buf[A2L_CHUNK + 1];
	char *copy = NULL;
	uint64_t v;

	/* The reader's piece has no NUL after it. */
	if (len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = 0;
		return scan_vma(path, buf);
	}
	copy = strndup(s, len);
	if (!copy)
		return 0;
	v = scan_vma(path, copy);
	free(copy);
	return v;
}

unsigned a2l_addr_width(const char *path)
{
	unsigned char ident[EI_NIDENT];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool elf32;

	if (fd < 0)
		return 16;
	elf32 = read(fd, ident, sizeof(ident)) == (ssize_t)sizeof(ident) &&
		!memcmp(ident, ELFMAG, SELFMAG) && ident[EI_CLASS] == ELFCLASS32;
	close(fd);
	return elf32 ? 8 : 16;
}

bool a2l_demangle_style(const char *style, bool *demangle)
{
	/* libiberty's table of styles, as binutils asks it. */
	enum demangling_styles s = cplus_demangle_name_to_style(style);

	if (s == unknown_demangling)
		return false;
	*demangle = s != no_demangling;
	return true;
}

/* The targets binutils 2.40 for x86-64 lists (addr2line --help) that an
 * ELF file can be read as; any other name bfd rejects. */
static bool known_target(const char *t)
{
	static const char *const targets[] = {
		"default",	   "elf64-x86-64", "elf32-i386",  "elf32-iamcu", "elf32-x86-64",
		"elf64-little", "elf64-big",	 "elf32-little", "elf32-big",	 NULL,
	};

	for (size_t i = 0; targets[i]; i++)
		if (!strcmp(t, targets[i]))
			return true;
	return false;
}

bool a2l_ignored_option(int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "-r") || !strcmp(a, "-R") || !strcmp(a, "--recurse-limit") ||
	    !strcmp(a, "--no-recurse-limit") || !strcmp(a, "--recursion-limit") ||
	    !strcmp(a, "--no-recursion-limit") || !strncmp(a, "--target=", 9))
		return true;
	if ((!strcmp(a, "-b") || !strcmp(a, "--target")) && *i + 1 < argc) {
		++*i;
		return true;
	}
	return false;
}

static void usage(FILE *f, const char *prog)
{
	fprintf(f,
		"Usage: %s [option(s)] [addr(s)]\n"
		" Each address (hex) of the file: its function and source file:line.\n"
		" Without addresses on the command line, stdin's lines are read, each\n"
		" answered before the next is waited for.  dsostore answers, as binutils\n"
		" addr2line would, finding the debuginfo of a stripped file by build ID.\n"
		" The options are:\n"
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
		"  -v --version           The version\n",
		prog);
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
			fprintf(stderr, "%s: '%s': No such file\n", prog, path);
		else
			fprintf(stderr, "%s: Warning: could not locate '%s'.  reason: %s\n", prog,
				path, strerror(errno));
		return 1;
	}
	if (S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: Warning: '%s' is a directory\n", prog, path);
		return 1;
	}
	if (!S_ISREG(st.st_mode)) {
		fprintf(stderr, "%s: Warning: '%s' is not an ordinary file\n", prog, path);
		return 1;
	}
	if (st.st_size < 1)
		return 1; /* bfd is not asked: nothing said */
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n == (ssize_t)sizeof(head) &&
	    (!memcmp(head, archive, sizeof(head)) || !memcmp(head, thin, sizeof(head)))) {
		fprintf(stderr, "%s: %s: cannot get addresses from archive\n", prog, path);
		return 1;
	}
	if (n < SELFMAG || memcmp(head, ELFMAG, SELFMAG)) {
		fprintf(stderr, "%s: %s: file format not recognized\n", prog, path);
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
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
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
		fprintf(stderr, "%s: %s: cannot find section %s\n", prog, path, name);
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
				fprintf(stderr, "%s: unknown demangling style `%s'\n", prog, optarg);
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
	if (target && !known_target(target)) {
		fprintf(stderr, "%s: %s: invalid bfd target\n", prog, a.exe);
		return 1;
	}
	if (section && find_section(prog, a.exe, section, &a))
		return 1;
	return symbolize_addr2line(&a, argv + optind, argc - optind);
}

int cmd_addr2line(int argc, char **argv)
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
