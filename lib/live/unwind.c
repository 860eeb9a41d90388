/* SPDX-License-Identifier: MIT */
/*
 * User stacks unwound with libdwfl, for perf samples recorded with
 * --call-graph dwarf: the sample carries the user registers and a copy
 * of the top of the user stack; the CFI of the mapped files (.eh_frame,
 * else .debug_frame of the debuginfo) says how each frame finds its
 * caller's registers.
 *
 * One Dwfl per process for the whole replay (perf's unwind-libdw.c makes
 * one per sample, which is most of the time perf report spends on such
 * recordings): a module is reported the first time an address in it is
 * needed, from the replay's maps and the file the store found for the
 * DSO, and stays; the process is attached once, with callbacks that read
 * the sample being unwound (registers, stack copy) from the unwinder.
 * When the process's maps change under reported modules (exec, a library
 * unmapped and another mapped there), its Dwfl is made again.
 */
#define _GNU_SOURCE
#include "live.h"
#include "unwind.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

/* ------------------------------------------------------------ files */

static int finder_open(Dwfl_Module *mod, void **userdata, const char *hint,
		       enum ds_artifact what, char **path_out, bool skip_self)
{
	const struct ds__dwfl_finder *f = userdata ? *userdata : NULL;
	const unsigned char *bits;
	GElf_Addr vaddr;
	struct ds_build_id bid = { 0 };
	enum ds_source src = DS_SOURCE_NONE;
	char *path = NULL;
	int n, fd;

	if (!f || !f->ctx)
		return -1;
	n = dwfl_module_build_id(mod, &bits, &vaddr);
	if (n <= 0 || n > DS_BUILD_ID_MAX)
		return -1;
	bid.size = (uint8_t)n;
	memcpy(bid.data, bits, (size_t)n);
	if (ds_find(f->ctx, &bid, hint && hint[0] == '/' ? hint : NULL, what, &path, &src, NULL,
		    0) != 0)
		return -1;
	if (skip_self && (src == DS_SOURCE_SELF || (hint && !strcmp(path, hint)))) {
		free(path); /* the binary has its own debug sections */
		return -1;
	}
	fd = ds__open_regular(path);
	if (fd < 0) {
		free(path);
		return -1;
	}
	*path_out = path;
	return fd;
}

static int find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		    char **file_name, Elf **elfp)
{
	(void)base;
	*elfp = NULL;
	return finder_open(mod, userdata, modname, DS_ARTIFACT_EXECUTABLE, file_name, false);
}

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)modname, (void)base, (void)debuglink_file, (void)debuglink_crc;
	return finder_open(mod, userdata, file_name, DS_ARTIFACT_DEBUGINFO, debuginfo_file_name,
			   true);
}

const Dwfl_Callbacks ds__dwfl_callbacks = {
	.find_elf = find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

char *ds__unwind_elf_path(struct ds_context *ctx, const struct ds_build_id *bid,
			  const char *path, bool path_is_mapped)
{
	struct ds_build_id got;
	char *out = NULL;

	if (!bid || !bid->size)
		return path_is_mapped && path ? strdup(path) : NULL;
	if (path && path[0] == '/' && ds_build_id_read_file(path, &got) == 0 &&
	    ds_build_id_equal(&got, bid))
		return strdup(path);
	if (ds_find(ctx, bid, NULL, DS_ARTIFACT_EXECUTABLE, &out, NULL, NULL, 0) != 0)
		return NULL;
	return out;
}

/* ----------------------------------------------------------- unwinding */

/* perf's x86_64 register numbers (arch/x86/include/uapi/asm/perf_regs.h)
 * to DWARF's (the psABI's): rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip. */
#define PERF_REG_X86_SP 7
#define PERF_REG_X86_IP 8
#define PERF_REG_X86_NUM 24
#define DWARF_NREGS 17
#define REGS_ABI_64 2
static const int8_t x86_64_dwarf[PERF_REG_X86_NUM] = {
	[0] = 0, /* ax */ [1] = 3, /* bx */ [2] = 2, /* cx */ [3] = 1, /* dx */
	[4] = 4, /* si */ [5] = 5, /* di */ [6] = 6, /* bp */ [7] = 7, /* sp */
	[8] = 16, /* ip */ [9] = -1, [10] = -1, [11] = -1, /* flags cs ss */
	[12] = -1, [13] = -1, [14] = -1, [15] = -1, /* ds es fs gs */
	[16] = 8, [17] = 9, [18] = 10, [19] = 11, [20] = 12, [21] = 13, [22] = 14, [23] = 15,
};

/* How a DSO's file offsets become addresses: a map of file offset pgoff
 * at start has its module's bias at start - pgoff - delta (delta: its
 * segment's p_vaddr - p_offset); libdwfl wants the address of the first
 * PT_LOAD (aligned down), first_vaddr past the bias. */
struct uw_file {
	uint32_t key;
	bool ok;
	uint64_t first_vaddr;
	size_t nsegs;
	struct uw_seg {
		uint64_t off, filesz, vaddr;
	} *segs;
	struct uw_file *next;
};

struct uw_mod {
	uint64_t at, start, pgoff; /* the map it was reported for */
	uint32_t key;
};

struct uw_proc {
	int32_t pid;
	Dwfl *dwfl;
	bool attached, broken;
	uint64_t gen;
	struct uw_mod *mods;
	size_t nmods, mods_cap;
	struct uw_proc *next;
};

#define UW_BUCKETS 256

struct ds__unwind {
	struct ds__dwfl_finder finder;
	ds__unwind_map_fn map;
	void *user;
	struct uw_proc *procs[UW_BUCKETS];
	struct uw_file *files[UW_BUCKETS];
	/* The sample being unwound. */
	const struct ds__unwind_sample *s;
	struct uw_proc *cur;
	Dwarf_Word dwregs[DWARF_NREGS];
	uint64_t sp;
	uint64_t *out;
	size_t nout, max;
	/* The registers of the frame last seen (a bit in last_set for each
	 * known one) and the last value of rbx a frame had; the unwind goes
	 * on from that frame when it stopped for want of rbx (resume_rbx()). */
	Dwarf_Word last_regs[DWARF_NREGS];
	uint32_t last_set;
	Dwarf_Word rbx;
	bool have_rbx, resuming;
	int vdso_fd; /* this process's vDSO image; 0: not made yet, -1: none */
};

static uint64_t le64(const unsigned char *b)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

/* The vDSO is no file.  The recorded one is this process's when their
 * build IDs are equal (the same kernel): its image, copied into a memfd,
 * is what perf unwinds with too (perf assumes so without checking). */
const char *ds__unwind_vdso(struct ds__unwind *u, const struct ds_build_id *bid, char *path,
			    size_t len)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const void *)img;
	struct ds_build_id own;
	size_t size;

	if (!bid || !bid->size || !img || u->vdso_fd < 0 || memcmp(img, ELFMAG, SELFMAG))
		return NULL;
	/* The image: up to the section headers (the kernel maps them too). */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20) || ds_build_id_read_mem(img, size, &own) != 0 ||
	    !ds_build_id_equal(&own, bid))
		return NULL;
	if (!u->vdso_fd) {
		int fd = memfd_create("vdso", MFD_CLOEXEC);

		if (fd < 0 || write(fd, img, size) != (ssize_t)size) {
			if (fd >= 0)
				close(fd);
			u->vdso_fd = -1;
			return NULL;
		}
		u->vdso_fd = fd;
	}
	snprintf(path, len, "/proc/self/fd/%d", u->vdso_fd);
	return path;
}

static struct uw_file *file_of(struct ds__unwind *u, uint32_t key, const char *path)
{
	struct uw_file **head = &u->files[key % UW_BUCKETS], *f;
	GElf_Ehdr eh;
	size_t phnum;
	Elf *elf;
	int fd;

	for (f = *head; f; f = f->next)
		if (f->key == key)
			return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->key = key;
	f->next = *head;
	*head = f;
	fd = path ? ds__open_regular(path) : -1;
	if (fd < 0)
		return f;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	/* The register mapping is x86_64's. */
	if (elf && gelf_getehdr(elf, &eh) && eh.e_machine == EM_X86_64 &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && elf_getphdrnum(elf, &phnum) == 0 &&
	    phnum < 4096 && (f->segs = calloc(phnum ? phnum : 1, sizeof(*f->segs)))) {
		bool first = true;

		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
				continue;
			if (first) {
				f->first_vaddr = ph.p_align > 1 ? ph.p_vaddr & -ph.p_align : ph.p_vaddr;
				first = false;
			}
			f->segs[f->nsegs++] = (struct uw_seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
		}
		f->ok = f->nsegs > 0;
	}
	elf_end(elf);
	close(fd);
	return f;
}

/* The bias of a module mapped by m (see struct uw_file). */
static bool map_bias(const struct uw_file *f, const struct ds__unwind_map *m, uint64_t *bias)
{
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct uw_seg *g = &f->segs[i];

		if (m->pgoff >= g->off && m->pgoff - g->off <= g->filesz) {
			*bias = m->start - (g->vaddr + (m->pgoff - g->off));
			return true;
		}
	}
	return false;
}

static void proc_reset(struct uw_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	p->dwfl = NULL;
	p->attached = p->broken = false;
	p->nmods = 0;
}

static struct uw_proc *proc_get(struct ds__unwind *u, int32_t pid)
{
	struct uw_proc **head = &u->procs[(uint32_t)pid % UW_BUCKETS], *p;

	for (p = *head; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = *head;
	*head = p;
	return p;
}

/* The module at addr, reported now if it was not. */
static bool report_at(struct ds__unwind *u, struct uw_proc *p, uint64_t addr)
{
	struct ds__unwind_map m;
	struct uw_file *f;
	struct uw_mod *nm;
	Dwfl_Module *mod;
	uint64_t bias;
	void **ud;

	if (dwfl_addrmodule(p->dwfl, addr))
		return true;
	if (!u->map(u->user, p->pid, addr, &m) || !m.path)
		return false;
	f = file_of(u, m.key, m.path);
	if (!f || !f->ok || !map_bias(f, &m, &bias))
		return false;
	nm = ds__grow(p->mods, &p->mods_cap, p->nmods, sizeof(*nm));
	if (!nm)
		return false;
	p->mods = nm;
	mod = dwfl_report_elf(p->dwfl, m.path, m.path, -1, bias + f->first_vaddr, false);
	if (!mod)
		return false;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	if (ud && !*ud)
		*ud = &u->finder;
	p->mods[p->nmods++] = (struct uw_mod){ addr, m.start, m.pgoff, m.key };
	return true;
}

/* Whether every module reported is still what the process maps there. */
static bool mods_current(struct ds__unwind *u, const struct uw_proc *p)
{
	struct ds__unwind_map m;

	for (size_t i = 0; i < p->nmods; i++) {
		const struct uw_mod *x = &p->mods[i];

		if (!u->map(u->user, p->pid, x->at, &m) || m.key != x->key || m.start != x->start ||
		    m.pgoff != x->pgoff)
			return false;
	}
	return true;
}

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct ds__unwind *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->s->tid > 0 ? u->s->tid : u->s->pid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl, (void)tid;
	*thread_argp = arg;
	return true;
}

/* perf's unwinders read the stack copy, and the mapped file's bytes for
 * what lies outside it. */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct ds__unwind *u = arg;
	const struct ds__unwind_sample *s = u->s;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	GElf_Phdr ph;
	size_t phnum, size;
	const char *raw;
	Elf *elf;

	if (addr >= u->sp && addr - u->sp <= s->stack_size && s->stack_size - (addr - u->sp) >= 8) {
		*result = le64(s->stack + (addr - u->sp));
		return true;
	}
	mod = dwfl_addrmodule(dwfl, addr);
	elf = mod ? dwfl_module_getelf(mod, &bias) : NULL;
	if (!elf || elf_getphdrnum(elf, &phnum) != 0 || !(raw = elf_rawfile(elf, &size)))
		return false;
	addr -= bias;
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || addr < ph.p_vaddr ||
		    addr - ph.p_vaddr >= ph.p_filesz || ph.p_filesz - (addr - ph.p_vaddr) < 8)
			continue;
		if (ph.p_offset > size || size - ph.p_offset < addr - ph.p_vaddr + 8)
			return false;
		*result = le64((const unsigned char *)raw + ph.p_offset + (addr - ph.p_vaddr));
		return true;
	}
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct ds__unwind *u = arg;

	if (u->resuming) {
		/* The frame the unwind stopped at (resume_rbx()), its pc the
		 * address its CFI is looked up at. */
		for (unsigned r = 0; r < DWARF_NREGS; r++)
			if ((u->last_set & (1u << r)) &&
			    !dwfl_thread_state_registers(thread, (int)r, 1, &u->last_regs[r]))
				return false;
		dwfl_thread_state_register_pc(thread, u->out[u->nout - 1]);
		return true;
	}
	if (!dwfl_thread_state_registers(thread, 0, DWARF_NREGS, u->dwregs))
		return false;
	dwfl_thread_state_register_pc(thread, u->dwregs[16]);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct ds__unwind *u = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	/* Its CFI is looked up by address on the next step (and by
	 * dwfl_frame_pc to tell an activation). */
	report_at(u, u->cur, pc);
	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	u->last_set = 0;
	for (unsigned r = 0; r < DWARF_NREGS; r++)
		if (dwfl_frame_reg(state, r, &u->last_regs[r]) == 0)
			u->last_set |= 1u << r;
	if (u->last_set & (1u << 3)) {
		u->rbx = u->last_regs[3];
		u->have_rbx = true;
	}
	if (u->resuming) {
		u->resuming = false; /* that frame is in out already */
		return DWARF_CB_OK;
	}
	u->out[u->nout++] = activation ? pc : pc - 1;
	return u->nout < u->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static bool uses_rbx(const Dwarf_Op *ops, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].atom == DW_OP_breg3 || ops[i].atom == DW_OP_reg3 ||
		    ((ops[i].atom == DW_OP_bregx || ops[i].atom == DW_OP_regx) && ops[i].number == 3))
			return true;
	return false;
}

/* Whether the frame at pc (a lookup address) finds its CFA or return
 * address from rbx in the CFI libdwfl unwinds it with: .eh_frame, or
 * .debug_frame where that has no FDE. */
static bool cfi_needs_rbx(Dwfl *dwfl, Dwarf_Addr pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, pc);
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *fr = NULL;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	size_t n;
	bool needs = false;

	if (!mod)
		return false;
	cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0) {
		fr = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &fr) != 0)
			return false;
	}
	if (dwarf_frame_cfa(fr, &ops, &n) == 0 && uses_rbx(ops, n))
		needs = true;
	if (dwarf_frame_register(fr, 16, mem, &ops, &n) == 0 && ops && uses_rbx(ops, n))
		needs = true;
	free(fr);
	return needs;
}

/* elfutils' x86_64 ABI defaults (backends/x86_64_cfi.c, up to 0.188 at
 * least) say "same value" of DWARF register 0 (rax) where the psABI's
 * callee-saved rbx (3) is meant: a frame whose FDE has no rule for rbx
 * (a leaf, a prologue before its push) leaves rbx unknown in its caller,
 * and a caller that finds its CFA from rbx (glibc's _dl_runtime_resolve,
 * on the first call through a lazily bound PLT entry) ends the stack
 * there as if its return address were undefined.  rbx is callee-saved:
 * it is the value the last frame that knew it had, and the unwind goes on
 * from the frame it stopped at with that value (an FDE that says rbx is
 * undefined, which compilers do not write, would be read the same way).
 * True when it should. */
static bool resume_rbx(struct ds__unwind *u, Dwfl *dwfl)
{
	if (!u->nout || u->nout >= u->max || (u->last_set & (1u << 3)) || !u->have_rbx ||
	    !cfi_needs_rbx(dwfl, u->out[u->nout - 1]))
		return false;
	u->last_regs[3] = u->rbx;
	u->last_set |= 1u << 3;
	u->resuming = true;
	return true;
}

struct ds__unwind *ds__unwind_new(struct ds_context *ctx, ds__unwind_map_fn map, void *user)
{
	struct ds__unwind *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->finder.ctx = ctx;
	u->map = map;
	u->user = user;
	return u;
}

static void proc_free(struct uw_proc *p)
{
	proc_reset(p);
	free(p->mods);
	free(p);
}

void ds__unwind_exit(struct ds__unwind *u, int32_t pid)
{
	struct uw_proc **pp = &u->procs[(uint32_t)pid % UW_BUCKETS];

	for (; *pp; pp = &(*pp)->next) {
		if ((*pp)->pid == pid) {
			struct uw_proc *p = *pp;

			*pp = p->next;
			proc_free(p);
			return;
		}
	}
}

void ds__unwind_free(struct ds__unwind *u)
{
	if (!u)
		return;
	for (size_t b = 0; b < UW_BUCKETS; b++) {
		for (struct uw_proc *p = u->procs[b], *next; p; p = next) {
			next = p->next;
			proc_free(p);
		}
		for (struct uw_file *f = u->files[b], *next; f; f = next) {
			next = f->next;
			free(f->segs);
			free(f);
		}
	}
	if (u->vdso_fd > 0)
		close(u->vdso_fd);
	free(u);
}

size_t ds__unwind_stack(struct ds__unwind *u, const struct ds__unwind_sample *s, uint64_t *ips,
			size_t max)
{
	struct uw_proc *p;
	uint64_t ip = 0;
	size_t k = 0;
	bool have_sp = false, have_ip = false;

	if (!max || s->abi != REGS_ABI_64 || s->mask >> PERF_REG_X86_NUM)
		return 0;
	memset(u->dwregs, 0, sizeof(u->dwregs));
	for (int r = 0; r < PERF_REG_X86_NUM; r++) {
		uint64_t v;

		if (!(s->mask & (1ULL << r)))
			continue;
		v = le64(s->regs + 8 * k++);
		if (x86_64_dwarf[r] >= 0)
			u->dwregs[x86_64_dwarf[r]] = v;
		have_sp |= r == PERF_REG_X86_SP;
		have_ip |= r == PERF_REG_X86_IP;
		if (r == PERF_REG_X86_IP)
			ip = v;
	}
	if (!have_sp || !have_ip)
		return 0;
	p = proc_get(u, s->pid);
	if (!p)
		return 0;
	if (p->dwfl && p->gen != s->maps_gen && !mods_current(u, p))
		proc_reset(p);
	p->gen = s->maps_gen;
	if (!p->dwfl) {
		p->dwfl = dwfl_begin(&ds__dwfl_callbacks);
		if (!p->dwfl)
			return 0;
	}
	if (p->broken || !report_at(u, p, ip)) {
		/* No file to unwind with at the PC (its map's record lost, say):
		 * the PC from the registers is the one frame known without
		 * unwinding, and perf's unwinders give it too. */
		ips[0] = ip;
		return 1;
	}
	if (!p->attached) {
		/* The first module gives the machine (x86_64: file_of()). */
		if (!dwfl_attach_state(p->dwfl, NULL, s->pid > 0 ? s->pid : 1, &thread_callbacks,
				       u)) {
			p->broken = true;
			return 0;
		}
		p->attached = true;
	}
	u->s = s;
	u->cur = p;
	u->sp = u->dwregs[7];
	u->out = ips;
	u->nout = 0;
	u->max = max;
	u->have_rbx = u->resuming = false;
	/* An error (no CFI for a frame, memory outside the copy) ends the
	 * stack there; what was unwound until then stays, as in perf. */
	for (size_t at = 0;;) {
		dwfl_getthread_frames(p->dwfl, s->tid > 0 ? s->tid : s->pid, frame_cb, u);
		/* each round unwinds a frame more, or is the last */
		if (u->nout <= at || !resume_rbx(u, p->dwfl))
			break;
		at = u->nout;
	}
	u->resuming = false;
	u->s = NULL;
	u->cur = NULL;
	return u->nout;
}
