/* What binutils addr2line's answers need besides the symbolizer, shared
 * by the addr2line personality (tools/cmd_addr2line.c) and symbolize -e
 * (tools/cmd_symbolize.c): addresses read as bfd reads them, bfd's naming
 * of functions after the symbols asked about, its targets. */
#define _GNU_SOURCE
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
	Elf_Data *data;	  /* the symbol table's */
	size_t strndx;	  /* its string section */
	uint32_t *slot;	  /* symbol index + 1; 0: empty */
	GElf_Addr *value; /* by slot */
	size_t mask;
	bool tried;
} syms = {.fd = -1};

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

	/* The common piece, one hexadecimal number alone ("0x..." or hex
	 * digits, at most 16): read in place by the library's request-line
	 * parser, which takes exactly what strtoull(s, NULL, 16) takes there;
	 * anything else (a symbol, junk after the number, an overflow) from a
	 * NUL-terminated copy.  (strtoull() and the copy were a tenth of a
	 * million warm addresses.) */
	if (ds_sym_parse_line(s, len, NULL, 0, NULL, &v) == DS_SYM_LINE_ADDR)
		return v;

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
bool a2l_known_target(const char *t)
{
	static const char *const targets[] = {
	    "default",	    "elf64-x86-64", "elf32-i386",   "elf32-iamcu", "elf32-x86-64",
	    "elf64-little", "elf64-big",    "elf32-little", "elf32-big",   NULL,
	};

	for (size_t i = 0; targets[i]; i++)
		if (!strcmp(t, targets[i]))
			return true;
	return false;
}
