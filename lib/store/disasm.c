/* SPDX-License-Identifier: MIT */
/*
 * disasm: one function of a DSO instruction by instruction (what perf
 * annotate lists), in process through capstone.
 *
 * The code bytes come from the file that has them: the debuginfo when it
 * is the binary itself (or any file whose section at the address has
 * bytes), else the executable of the build ID: the DSO's path when that
 * file carries the build ID, else one found locally or fetched by build
 * ID, as the store finds executables for file offsets (store.c).  A debug
 * file made by objcopy --only-keep-debug or eu-strip -f has .text as
 * SHT_NOBITS: no bytes.  The function's extent is its ELF symbol's, as
 * perf takes it.  Lines and branch targets are named by the DSO's own
 * symbolizer, in one batch over every instruction and target.
 */
#define _GNU_SOURCE
#include "store_impl.h"
#include "elfinfo.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <errno.h>
#include <gelf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * capstone is loaded at the first disassembly, not at program start: its
 * tables of pointers are some 77,000 of the CLI's 81,000 relative
 * relocations, which the loader applied, page by page of copied data,
 * at every start: some 8 ms of CPU for `dsostore --version`, most of it
 * those, in a process whose work is often one address from a saved
 * index.  The soname is the major version of the header built against
 * (capstone's structures change between them).  The names below are
 * capstone's, routed through pointers of the header's own types filled by
 * dlsym(), as ima.c does libcrypto's.
 */
#define CS_SONAME_(major) "libcapstone.so." #major
#define CS_SONAME(major) CS_SONAME_(major)

#define CS_FNS(X) \
	X(cs_open) X(cs_option) X(cs_malloc) X(cs_disasm_iter) X(cs_free) X(cs_close) X(cs_insn_group)

#define CS_PTR(n) __typeof__(&n) n;
static struct {
	CS_FNS(CS_PTR)
} cs;
#undef CS_PTR
static bool cs_loaded;

static void load_capstone(void)
{
	void *h = dlopen(CS_SONAME(CS_API_MAJOR), RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return;
	/* (POSIX's way to a function pointer from dlsym(); h stays open
	 * when a name is missing: harmless.) */
#define CS_SYM(n)                                \
	if (!(*(void **)&cs.n = dlsym(h, #n)))   \
		return;
	CS_FNS(CS_SYM)
#undef CS_SYM
	cs_loaded = true;
}

static pthread_once_t capstone_once = PTHREAD_ONCE_INIT;

static bool capstone_load(void)
{
	pthread_once(&capstone_once, load_capstone);
	return cs_loaded;
}

#define cs_open cs.cs_open
#define cs_option cs.cs_option
#define cs_malloc cs.cs_malloc
#define cs_disasm_iter cs.cs_disasm_iter
#define cs_free cs.cs_free
#define cs_close cs.cs_close
#define cs_insn_group cs.cs_insn_group

/* A function larger than this is cut there (perf disassembles what its
 * symbol says; nothing real comes near). */
#define MAX_FUNC_BYTES (16u << 20)

struct ds_disasm {
	struct ds_insn *insns;
	size_t n;
	char *pool; /* every mnemonic and operand string */
	char *code_path;
	const char *arch;
	uint64_t start, size;
	uint64_t samples_elsewhere, period_elsewhere;
	struct ds_sym_batch *batch; /* the lines' and targets' strings */
};

/* The file the code bytes are read from. */
struct code_file {
	int fd;
	Elf *elf;
	char *path;
	bool own; /* opened here (else the debuginfo's, pinned) */
};

static void code_file_close(struct code_file *c)
{
	if (c->own) {
		if (c->elf)
			elf_end(c->elf);
		if (c->fd >= 0)
			close(c->fd);
	}
	free(c->path);
	*c = (struct code_file){ .fd = -1 };
}

/* The section of elf that holds addr in memory (SHF_ALLOC); NULL: none. */
static Elf_Scn *section_at(Elf *elf, uint64_t addr, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, sh) || !(sh->sh_flags & SHF_ALLOC) || !sh->sh_size)
			continue;
		if (addr >= sh->sh_addr && addr - sh->sh_addr < sh->sh_size)
			return scn;
	}
	return NULL;
}

static bool has_code_at(Elf *elf, uint64_t addr)
{
	GElf_Shdr sh;

	return section_at(elf, addr, &sh) && sh.sh_type != SHT_NOBITS;
}

static int adopt_found(struct code_file *c, struct ds_found *f)
{
	c->fd = f->fd;
	c->elf = f->elf;
	c->path = f->path;
	c->own = true;
	f->fd = -1;
	f->elf = NULL;
	f->path = NULL;
	ds__found_release(f);
	return 0;
}

/* A file of no known build ID, at its path. */
static int open_plain(struct code_file *c, const char *path)
{
	int fd = ds__elf_open_fd(path);
	Elf *elf;

	if (fd < 0)
		return fd;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return -ENOEXEC;
	}
	c->path = strdup(path);
	if (!c->path) {
		elf_end(elf);
		close(fd);
		return -ENOMEM;
	}
	c->fd = fd;
	c->elf = elf;
	c->own = true;
	return 0;
}

/* The executable of the DSO with bytes at addr: its path, else by build
 * ID here, else from debuginfod. */
static int open_executable(struct ds_dso *dso, uint64_t addr, struct code_file *c)
{
	struct ds_context *ctx = ds__store_context(dso->store);
	struct ds_found f = { .fd = -1 };
	struct ds_dso_id id;
	const char *why = NULL;
	char *fetched = NULL;
	int err = -ENOENT;

	ds_dso_id(dso, &id);
	if (!id.build_id.size) {
		if (!dso->path)
			return -ENOENT;
		err = open_plain(c, dso->path);
	} else {
		if (dso->path)
			err = ds__open_candidate(dso->path, &id.build_id, DS_ARTIFACT_EXECUTABLE, &f,
						 &why);
		if (err)
			err = ds__locate(ctx, &id.build_id, NULL, DS_ARTIFACT_EXECUTABLE, &f, NULL);
		if (err == -ENOENT) {
			err = ds_fetch(ctx, &id.build_id, DS_ARTIFACT_EXECUTABLE, NULL, &fetched,
				       NULL);
			if (!err)
				err = ds__open_candidate(fetched, &id.build_id,
							 DS_ARTIFACT_EXECUTABLE, &f, &why);
			free(fetched);
			if (err)
				err = -ENOENT; /* no server, not there: found nowhere */
		}
		if (!err)
			adopt_found(c, &f);
	}
	if (!err && !has_code_at(c->elf, addr)) {
		code_file_close(c);
		err = -ERANGE;
	}
	return err;
}

/* ---------------------------------------------------------------- size */

static bool sym_is_code(const GElf_Sym *s)
{
	int t = GELF_ST_TYPE(s->st_info);

	return s->st_shndx != SHN_UNDEF && s->st_shndx < SHN_LORESERVE &&
	       (t == STT_FUNC || t == STT_GNU_IFUNC || t == STT_NOTYPE);
}

/* In elf's symbol table of type type: the size of the symbol at start
 * (*size; 0 none with a size) and the nearest symbol above it (*next). */
static void scan_symbols(Elf *elf, Elf64_Word type, uint64_t start, uint64_t *size,
			 uint64_t *next)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d)
			continue;
		n = d->d_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || !sym_is_code(&s))
				continue;
			if (s.st_value == start && s.st_size && !*size)
				*size = s.st_size;
			else if (s.st_value > start && s.st_value < *next)
				*next = s.st_value;
		}
	}
}

/* The function's size as perf takes it: its symbol's, else up to the
 * next symbol (or the section's end); cut at the section's end. */
static int function_size(Elf *code, Elf *debug, uint64_t start, uint64_t sec_end,
			 uint64_t *out)
{
	uint64_t size = 0, next = sec_end;

	scan_symbols(code, SHT_SYMTAB, start, &size, &next);
	if (debug && debug != code)
		scan_symbols(debug, SHT_SYMTAB, start, &size, &next);
	if (!size)
		scan_symbols(code, SHT_DYNSYM, start, &size, &next);
	if (!size)
		size = next - start;
	if (size > sec_end - start)
		size = sec_end - start;
	if (size > MAX_FUNC_BYTES)
		size = MAX_FUNC_BYTES;
	*out = size;
	return size ? 0 : -ERANGE;
}

/* ------------------------------------------------------------- decoding */

struct arch {
	cs_arch arch;
	cs_mode mode;
	const char *name;
};

static int arch_of(unsigned machine, struct arch *a)
{
	switch (machine) {
	case EM_X86_64:
		*a = (struct arch){ CS_ARCH_X86, CS_MODE_64, "x86-64" };
		return 0;
	case EM_386:
		*a = (struct arch){ CS_ARCH_X86, CS_MODE_32, "i386" };
		return 0;
	case EM_AARCH64:
		*a = (struct arch){ CS_ARCH_ARM64, CS_MODE_ARM, "aarch64" };
		return 0;
	default:
		return -ENOTSUP;
	}
}

/* A direct branch's target: its immediate operand (the last, AArch64's
 * tbz/cbz have registers and a bit number first). */
static bool branch_target(const struct arch *a, const cs_insn *in, uint64_t *target)
{
	const cs_detail *d = in->detail;

	if (!d)
		return false;
	if (a->arch == CS_ARCH_X86) {
		const cs_x86 *x = &d->x86;

		if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
			*target = (uint64_t)x->operands[0].imm;
			if (a->mode == CS_MODE_32)
				*target &= 0xffffffffu;
			return true;
		}
		return false;
	}
	for (int i = d->arm64.op_count - 1; i >= 0; i--)
		if (d->arm64.operands[i].type == ARM64_OP_IMM) {
			*target = (uint64_t)d->arm64.operands[i].imm;
			return true;
		}
	return false;
}

/* The length of the VEX or EVEX instruction at p (n bytes; 64-bit
 * addressing), 0 when it is not one or is cut short.  Capstone 4 (Debian
 * 12's) fails on some that glibc's string functions use: the AVX-512 mask
 * instructions (kmovd, kortestd: VEX) and compares into a mask register
 * (vpcmpeqb: EVEX), and one byte at a time after such a failure decodes
 * garbage until it falls into step again: the instruction is skipped
 * whole.  *kind: "(vex)" or "(evex)". */
size_t ds__x86_vex_len(const uint8_t *p, size_t n, const char **kind)
{
	size_t len; /* to the ModRM byte included */
	unsigned map, op, mod, rm;

	if (n < 1)
		return 0;
	switch (p[0]) {
	case 0xc5: /* c5 P opcode modrm */
		if (n < 4)
			return 0;
		map = 1;
		op = p[2];
		len = 4;
		*kind = "(vex)";
		break;
	case 0xc4: /* c4 P0 P1 opcode modrm */
		if (n < 5)
			return 0;
		map = p[1] & 0x1f;
		op = p[3];
		len = 5;
		*kind = "(vex)";
		break;
	case 0x62: /* 62 P0 P1 P2 opcode modrm */
		if (n < 6)
			return 0;
		map = p[1] & 7;
		op = p[4];
		len = 6;
		*kind = "(evex)";
		break;
	default:
		return 0;
	}
	mod = p[len - 1] >> 6;
	rm = p[len - 1] & 7;
	if (mod != 3) {
		if (rm == 4) {
			if (n < len + 1)
				return 0;
			if (mod == 0 && (p[len] & 7) == 5)
				len += 4;
			len++; /* the SIB byte */
		} else if (mod == 0 && rm == 5) {
			len += 4; /* RIP-relative */
		}
		len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
				      (op >= 0xc4 && op <= 0xc6))))
		len++; /* imm8 */
	return len <= n ? len : 0;
}

/* AArch64's branches by name: capstone 4's groups put bl among the
 * jumps too, and ret in no return group. */
static unsigned arm64_kind(const char *m)
{
	if (!strcmp(m, "bl") || !strcmp(m, "blr"))
		return DS_INSN_CALL;
	if (!strcmp(m, "ret"))
		return DS_INSN_RET;
	if (!strcmp(m, "b") || !strncmp(m, "b.", 2) || !strcmp(m, "br") || !strcmp(m, "cbz") ||
	    !strcmp(m, "cbnz") || !strcmp(m, "tbz") || !strcmp(m, "tbnz"))
		return DS_INSN_JUMP;
	return 0;
}

/* x86's AT&T mnemonic as objdump (and so perf annotate) spells it:
 * capstone 4 gives every one its size suffix ("movq %rsi, %rax",
 * "retq"); objdump only where no operand gives the size ("movl $0,
 * (%rax)", "nopw").  A suffix is one where Intel syntax names the same
 * instruction without it (so "cltq", "movzbl", "setb" stay), dropped for
 * a branch, push and pop (whose size the mode gives), an instruction
 * without operands, or one with a register.  Two spellings of capstone 4
 * that objdump's differ from: 66 90 is "xchg %ax, %ax" (capstone: "nop"),
 * and movd with REX.W is movq. */
static void att_spelling(csh intel, cs_insn *in, const uint8_t *bytes)
{
	char *m = in->mnemonic;

	const cs_x86 *x = &in->detail->x86;
	size_t len = strlen(m);
	const uint8_t *p = bytes;
	size_t left = in->size;
	uint64_t addr = in->address;
	cs_insn *other;
	bool drop = x->op_count == 0;

	if (in->size == 2 && bytes[0] == 0x66 && bytes[1] == 0x90) {
		snprintf(in->mnemonic, sizeof(in->mnemonic), "xchg");
		snprintf(in->op_str, sizeof(in->op_str), "%%ax, %%ax");
		return;
	}
	if (!strcmp(m, "movd") && (x->rex & 8)) {
		m[3] = 'q';
		return;
	}
	if (len < 2 || !strchr("bwlq", m[len - 1]))
		return;
	if (!strncmp(m, "push", 4) || !strncmp(m, "pop", 3))
		drop = true;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_REG)
			drop = true;
	if (cs_insn_group(intel, in, CS_GRP_JUMP) || cs_insn_group(intel, in, CS_GRP_CALL) ||
	    cs_insn_group(intel, in, CS_GRP_RET))
		drop = true;
	if (!drop || !(other = cs_malloc(intel)))
		return;
	if (cs_disasm_iter(intel, &p, &left, &addr, other) && strlen(other->mnemonic) == len - 1 &&
	    !strncmp(other->mnemonic, m, len - 1))
		m[len - 1] = 0;
	cs_free(other, 1);
}

/* The pool: strings appended, NUL-terminated; offsets until it is done. */
struct pool {
	char *v;
	size_t n, cap;
};

static int pool_add(struct pool *p, const char *s, size_t *off)
{
	size_t len = strlen(s) + 1;

	if (p->cap - p->n < len) {
		size_t cap = p->cap ? 2 * p->cap : 4096;
		char *v;

		while (cap - p->n < len)
			cap *= 2;
		v = realloc(p->v, cap);
		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	memcpy(p->v + p->n, s, len);
	*off = p->n;
	p->n += len;
	return 0;
}

static int grow_insns(struct ds_disasm *d, size_t *cap)
{
	size_t ncap = *cap ? 2 * *cap : 256;
	struct ds_insn *v;

	if (d->n < *cap)
		return 0;
	v = reallocarray(d->insns, ncap, sizeof(*v));
	if (!v)
		return -ENOMEM; /* (*cap as it was: what d->insns holds) */
	d->insns = v;
	*cap = ncap;
	return 0;
}

/* Decode code[0..size) at start into d's instructions; their strings as
 * pool offsets (in mnemonic and operands, cast) until done. */
static int decode(struct ds_disasm *d, const struct arch *a, const uint8_t *code, size_t size,
		  uint64_t start, struct pool *pool)
{
	csh h, intel = 0;
	cs_insn *in;
	const uint8_t *p = code;
	size_t left = size, cap = 0;
	uint64_t addr = start;
	int err = 0;

	if (cs_open(a->arch, a->mode, &h) != CS_ERR_OK)
		return -ENOMEM;
	if (a->arch == CS_ARCH_X86) {
		cs_option(h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		if (cs_open(a->arch, a->mode, &intel) != CS_ERR_OK) {
			cs_close(&h);
			return -ENOMEM;
		}
		cs_option(intel, CS_OPT_DETAIL, CS_OPT_ON);
	}
	cs_option(h, CS_OPT_DETAIL, CS_OPT_ON);
	in = cs_malloc(h);
	if (!in) {
		cs_close(&h);
		if (intel)
			cs_close(&intel);
		return -ENOMEM;
	}
	while (left && !err) {
		struct ds_insn x = { .addr = addr };
		size_t m = 0, o = 0;

		err = grow_insns(d, &cap);
		if (err)
			break;
		const uint8_t *at = p;

		if (cs_disasm_iter(h, &p, &left, &addr, in)) {
			uint64_t t;

			x.size = in->size;
			if (cs_insn_group(h, in, CS_GRP_JUMP))
				x.flags |= DS_INSN_JUMP;
			if (cs_insn_group(h, in, CS_GRP_CALL))
				x.flags |= DS_INSN_CALL;
			if (cs_insn_group(h, in, CS_GRP_RET))
				x.flags |= DS_INSN_RET;
			if (a->arch == CS_ARCH_ARM64)
				x.flags = arm64_kind(in->mnemonic);
			if ((x.flags & (DS_INSN_JUMP | DS_INSN_CALL)) && branch_target(a, in, &t)) {
				x.flags |= DS_INSN_TARGET;
				x.target = t;
			}
			if (intel)
				att_spelling(intel, in, at);
			err = pool_add(pool, in->mnemonic, &m);
			if (!err)
				err = pool_add(pool, in->op_str, &o);
		} else {
			/* Bytes that do not decode: a VEX or EVEX instruction
			 * whole, else one byte, and on after it. */
			const char *kind = "(bad)";
			size_t len = a->arch == CS_ARCH_X86 && a->mode == CS_MODE_64
					     ? ds__x86_vex_len(p, left, &kind)
					     : 0;
			char hex[3 * 15 + 1];

			x.size = len ? (uint32_t)len : 1;
			x.flags = DS_INSN_BAD;
			for (size_t i = 0; i < x.size && i < 15; i++)
				snprintf(hex + (i ? 3 * i - 1 : 0), sizeof(hex) - (i ? 3 * i - 1 : 0),
					 "%s%02x", i ? " " : "", p[i]);
			p += x.size;
			left -= x.size;
			addr += x.size;
			err = pool_add(pool, kind, &m);
			if (!err)
				err = pool_add(pool, hex, &o);
		}
		x.mnemonic = (const char *)(uintptr_t)m;
		x.operands = (const char *)(uintptr_t)o;
		d->insns[d->n++] = x;
	}
	cs_free(in, 1);
	cs_close(&h);
	if (intel)
		cs_close(&intel);
	return err;
}

/* The instruction starting at addr; NULL: none. */
static struct ds_insn *insn_at(const struct ds_disasm *d, uint64_t addr)
{
	size_t lo = 0, hi = d->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->insns[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->n && d->insns[lo].addr == addr ? &d->insns[lo] : NULL;
}

/* Lines of every instruction and names of every target, one batch. */
static int name_all(struct ds_dso *dso, struct ds_disasm *d)
{
	const unsigned flags = DS_SYM_INLINES | DS_SYM_ELF_NAMES | DS_SYM_DEMANGLE |
			       DS_SYM_NO_PARAMS;
	uint64_t *addrs = reallocarray(NULL, 2 * d->n + 1, sizeof(*addrs));
	size_t n = 0, nans = 0, k;
	const struct ds_sym_answer *ans;
	int err;

	if (!addrs)
		return -ENOMEM;
	for (size_t i = 0; i < d->n; i++)
		addrs[n++] = d->insns[i].addr;
	for (size_t i = 0; i < d->n; i++)
		if (d->insns[i].flags & DS_INSN_TARGET)
			addrs[n++] = d->insns[i].target;
	d->batch = ds_sym_batch_new();
	if (!d->batch) {
		free(addrs);
		return -ENOMEM;
	}
	err = ds_dso_symbolize_batch(dso, addrs, n, flags, d->batch);
	free(addrs);
	if (err == -EINVAL || err == -ENOMEM)
		return err;
	ans = ds_sym_batch_answers(d->batch, &nans);
	if (nans != n)
		return 0; /* nothing named: no symbols at all */
	for (size_t i = 0; i < d->n; i++) {
		const struct ds_sym_answer *a = &ans[i];

		if (a->status == DS_SYM_FOUND && a->nframes && a->frames[0].line) {
			d->insns[i].file = a->frames[0].file;
			d->insns[i].line = a->frames[0].file ? a->frames[0].line : 0;
		}
	}
	k = d->n;
	for (size_t i = 0; i < d->n; i++) {
		struct ds_insn *x = &d->insns[i];
		const struct ds_sym_answer *a;
		const struct ds_frame *outer;

		if (!(x->flags & DS_INSN_TARGET))
			continue;
		a = &ans[k++];
		if (a->status != DS_SYM_FOUND || !a->nframes)
			continue;
		outer = &a->frames[a->nframes - 1];
		if (outer->function && x->target >= outer->function_start) {
			x->target_function = outer->function;
			x->target_offset = x->target - outer->function_start;
		}
	}
	return 0;
}

static void count_samples(struct ds_disasm *d, const struct ds_disasm_opts *opts)
{
	const struct ds_annotate_addr *v = DS_OPT(opts, addrs, NULL);
	size_t n = v ? DS_OPT(opts, naddrs, 0) : 0;

	for (size_t i = 0; i < n; i++) {
		struct ds_insn *x = insn_at(d, v[i].vaddr);

		if (x) {
			x->samples += v[i].samples;
			x->period += v[i].period;
		} else {
			d->samples_elsewhere += v[i].samples;
			d->period_elsewhere += v[i].period;
		}
	}
}

/* The branches that land on an instruction of the function. */
static void mark_landings(struct ds_disasm *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct ds_insn *x = &d->insns[i], *to;

		if (!(x->flags & DS_INSN_TARGET) || x->target < d->start ||
		    x->target - d->start >= d->size || !(to = insn_at(d, x->target)))
			continue;
		x->flags |= DS_INSN_INSIDE;
		if (x->flags & DS_INSN_JUMP)
			to->flags |= DS_INSN_LANDING;
	}
}

int ds__disasm_bytes(unsigned machine, const uint8_t *code, size_t size, uint64_t start,
		     struct ds_disasm **out)
{
	struct ds_disasm *d;
	struct pool pool = { 0 };
	struct arch arch;
	int err = arch_of(machine, &arch);

	*out = NULL;
	if (err)
		return err;
	if (!size || size > MAX_FUNC_BYTES || start + size < start)
		return -EINVAL;
	if (!capstone_load())
		return -ELIBACC;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->start = start;
	d->size = size;
	d->arch = arch.name;
	err = decode(d, &arch, code, size, start, &pool);
	if (err) {
		free(pool.v);
		ds_disasm_free(d);
		return err;
	}
	/* The pool is done: offsets to strings. */
	d->pool = pool.v;
	for (size_t i = 0; i < d->n; i++) {
		d->insns[i].mnemonic = d->pool + (uintptr_t)d->insns[i].mnemonic;
		d->insns[i].operands = d->pool + (uintptr_t)d->insns[i].operands;
	}
	mark_landings(d);
	*out = d;
	return 0;
}

DS_API int ds_dso_disassemble(struct ds_dso *dso, uint64_t start,
			      const struct ds_disasm_opts *opts, struct ds_disasm **out)
{
	struct code_file c = { .fd = -1 };
	const struct ds_debuginfo *di = NULL;
	struct ds_disasm *d = NULL;
	Elf *debug = NULL;
	GElf_Ehdr eh;
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Shdr sh;
	uint64_t size, off;
	bool pinned = false;
	int err;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!dso)
		return -EINVAL;
	if (ds_dso_debuginfo(dso, &di) == 0 && ds_dso_pin(dso) == 0) {
		pinned = true;
		debug = ds_debuginfo_elf(di);
	}
	if (debug && has_code_at(debug, start)) {
		c.elf = debug;
		c.fd = ds_debuginfo_fd(di);
		c.path = strdup(ds_debuginfo_path(di));
		err = c.path ? 0 : -ENOMEM;
	} else {
		err = open_executable(dso, start, &c);
	}
	if (err)
		goto out;
	err = -ENOEXEC;
	if (!gelf_getehdr(c.elf, &eh))
		goto out;
	err = -ENOTSUP;
	if (eh.e_machine == EM_AARCH64 && eh.e_ident[EI_DATA] != ELFDATA2LSB)
		goto out;
	err = 0;
	scn = section_at(c.elf, start, &sh);
	size = DS_OPT(opts, size, 0);
	if (!size)
		err = function_size(c.elf, debug, start, sh.sh_addr + sh.sh_size, &size);
	else if (size > sh.sh_addr + sh.sh_size - start)
		size = sh.sh_addr + sh.sh_size - start;
	if (err)
		goto out;
	data = elf_rawdata(scn, NULL);
	off = start - sh.sh_addr;
	if (!data || !data->d_buf || data->d_size < off || data->d_size - off < size) {
		err = -ERANGE;
		goto out;
	}
	err = ds__disasm_bytes(eh.e_machine, (const uint8_t *)data->d_buf + off, size, start, &d);
	if (err)
		goto out;
	d->code_path = c.path;
	c.path = NULL;
	count_samples(d, opts);
	err = name_all(dso, d);
out:
	code_file_close(&c);
	if (pinned)
		ds_dso_unpin(dso);
	if (err) {
		ds_disasm_free(d);
		return err;
	}
	*out = d;
	return 0;
}

DS_API size_t ds_disasm_insns(const struct ds_disasm *d, const struct ds_insn **out)
{
	*out = d ? d->insns : NULL;
	return d ? d->n : 0;
}

DS_API void ds_disasm_info(const struct ds_disasm *d, struct ds_disasm_info *out)
{
	memset(out, 0, sizeof(*out));
	if (!d)
		return;
	out->start = d->start;
	out->size = d->size;
	out->code_path = d->code_path;
	out->arch = d->arch;
	out->samples_elsewhere = d->samples_elsewhere;
	out->period_elsewhere = d->period_elsewhere;
}

DS_API void ds_disasm_free(struct ds_disasm *d)
{
	if (!d)
		return;
	free(d->insns);
	free(d->pool);
	free(d->code_path);
	ds_sym_batch_free(d->batch);
	free(d);
}
