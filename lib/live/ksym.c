// SPDX-License-Identifier: MIT
/*
 * Kernel addresses symbolized: ds_kernel (include/dsostore.h, "The
 * kernel").
 *
 * Names come from kallsyms (lib/live/kernel.c parses it; perf's choice among
 * aliases), module symbols with their module ("[ext4]").  File:line and
 * inline frames come from the vmlinux's DWARF when it can be had: a
 * vmlinux named by the caller, else one of perf's places for it (the
 * running kernel's only: its build ID must be the one in
 * /sys/kernel/notes), else by that build ID through the store (debug
 * directories, perf's cache, debuginfod).  KASLR moved the running
 * kernel: the address is looked up in the vmlinux at itself minus the
 * distance between _text in kallsyms and _text in the vmlinux's symbols.
 *
 * A module's DWARF: its build ID from /sys/module/M/notes, its debuginfo
 * a file of that build ID below /usr/lib/debug/lib/modules/RELEASE (where
 * Debian's and Fedora's packages put them), else found by that build ID
 * through the store.  Every path is under the context's kernel root.  A .ko is ET_REL: its sections have
 * no addresses and its DWARF is relocated by whoever loads it.  So a copy
 * of it is made in memory (a memfd) as the kernel loaded it: each
 * allocated section at its address of /sys/module/M/sections/NAME, the
 * relocations of the DWARF sections applied against those addresses (x86-64
 * and AArch64 absolute ones: all that DWARF uses), the symbols moved, the
 * file made ET_EXEC; that copy is an ordinary DSO of a store of the
 * kernel's own, looked up at the runtime address.  No DWARF: kallsyms.
 */
#define _GNU_SOURCE
#include "live.h"

#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define KERNEL_REF "_text" /* perf's reference symbol, in both */
#define KO_MAX (512u << 20) /* a .ko file larger than this is not read */

struct kmod {
	char name[64];
	struct ds_dso *dso; /* the relocated copy, NULL: none */
	int fd; /* its memfd */
};

struct ds_kernel {
	struct ds_store *store;
	struct ds_context *ctx; /* the store's */
	char *vmlinux_path; /* the caller's, or NULL */
	struct ds__kallsyms *ksyms;
	int kerr; /* of loading ksyms */
	bool loaded;
	struct ds_build_id bid; /* size 0: unknown */

	struct ds_dso *vmlinux; /* with DWARF, or NULL */
	bool vmlinux_tried;
	uint64_t kaslr; /* runtime minus link-time address (mod 2^64) */

	struct kmod *mods; /* modules looked at, their DWARF or none */
	size_t nmods;
	struct ds_store *mstore; /* the relocated copies of their .ko files */

	struct ds_sym_answer ans;
	struct ds_frame *frames; /* the answer's, copied and moved by kaslr */
	size_t framecap;
	char module[80]; /* "[kernel.kallsyms]", "[ext4]" */
};

DS_API struct ds_kernel *ds_kernel_new(struct ds_store *store, const struct ds_kernel_opts *opts)
{
	const char *vmlinux = DS_OPT(opts, vmlinux, NULL);
	struct ds_kernel *k = calloc(1, sizeof(*k));

	if (!k || (vmlinux && !(k->vmlinux_path = strdup(vmlinux)))) {
		free(k);
		errno = ENOMEM;
		return NULL;
	}
	k->store = store;
	k->ctx = ds__store_context(store);
	return k;
}

DS_API void ds_kernel_free(struct ds_kernel *k)
{
	if (!k)
		return;
	ds__kallsyms_free(k->ksyms);
	ds_dso_put(k->vmlinux);
	for (size_t i = 0; i < k->nmods; i++) {
		ds_dso_put(k->mods[i].dso);
		if (k->mods[i].fd >= 0)
			close(k->mods[i].fd);
	}
	free(k->mods);
	ds_store_free(k->mstore);
	free(k->vmlinux_path);
	free(k->frames);
	free(k);
}

/* The value of symbol name in the ELF's symbol table. */
static bool elf_symbol(Elf *elf, const char *name, uint64_t *value)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		if (!(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < data->d_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym) ||
			    !(s = elf_strptr(elf, sh.sh_link, sym.st_name)))
				continue;
			if (!strcmp(s, name)) {
				*value = sym.st_value;
				return true;
			}
		}
	}
	return false;
}

/* dso if its debuginfo has DWARF and the symbol ref (*link: its value),
 * else put. */
struct ds_dso *ds__vmlinux_usable(struct ds_context *ctx, struct ds_dso *dso, const char *ref,
				  uint64_t *link)
{
	const struct ds_debuginfo *di;
	Elf *elf;
	bool ok;

	if (!dso)
		return NULL;
	if (ds_dso_debuginfo(dso, &di) || ds_dso_pin(dso)) {
		ds_dso_put(dso);
		return NULL;
	}
	elf = ds_debuginfo_elf(di);
	ok = elf && elf_symbol(elf, ref, link);
	if (!ok)
		ds_debug(ctx, "kernel: %s has no %s symbol", ds_debuginfo_path(di), ref);
	else
		ds_debug(ctx, "kernel: DWARF from %s", ds_debuginfo_path(di));
	ds_dso_unpin(dso);
	if (!ok) {
		ds_dso_put(dso);
		return NULL;
	}
	return dso;
}

/* k's vmlinux if usable, k->kaslr set. */
static struct ds_dso *usable(struct ds_kernel *k, struct ds_dso *dso, uint64_t ref_now)
{
	uint64_t ref_link;

	if (!(dso = ds__vmlinux_usable(k->ctx, dso, KERNEL_REF, &ref_link)))
		return NULL;
	k->kaslr = ref_now - ref_link;
	ds_debug(k->ctx, "kernel: KASLR offset 0x%llx", (unsigned long long)k->kaslr);
	return dso;
}

/* The kernel's release: the kernel root's proc/sys/kernel/osrelease, else
 * uname's. */
static bool kernel_release(const struct ds_kernel *k, char *out, size_t len)
{
	struct utsname u;
	char path[PATH_MAX];
	FILE *f;

	if (!k->ctx->kernel_root) {
		if (uname(&u))
			return false;
		snprintf(out, len, "%s", u.release);
		return true;
	}
	ds__kernel_path(k->ctx, "/proc/sys/kernel/osrelease", path, sizeof(path));
	if (!(f = fopen(path, "re")))
		return false;
	if (!fgets(out, (int)len, f))
		out[0] = 0;
	fclose(f);
	out[strcspn(out, "\n")] = 0;
	return out[0] && !strchr(out, '/');
}

/* perf's places for the vmlinux of kernel release (under the kernel root):
 * the first whose build ID is bid, in path. */
bool ds__vmlinux_place(const struct ds_context *ctx, const char *release,
		       const struct ds_build_id *bid, char *path, size_t len)
{
	static const char *const places[] = { "/usr/lib/debug/boot/vmlinux-%s", "/boot/vmlinux-%s",
					      "/usr/lib/debug/lib/modules/%s/vmlinux",
					      "/lib/modules/%s/build/vmlinux" };
	char place[PATH_MAX];

	/* Without a build ID to check them by, no place is trusted. */
	if (!bid->size || !release || !release[0] || strchr(release, '/'))
		return false;
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		struct ds_build_id b;

		snprintf(place, sizeof(place), places[i], release);
		ds__kernel_path(ctx, place, path, len);
		if (access(path, R_OK) == 0 && ds_build_id_read_file(path, &b) == 0 &&
		    ds_build_id_equal(&b, bid))
			return true;
	}
	return false;
}

/* The vmlinux with DWARF, once: the caller's, perf's places (under the
 * kernel root, the running kernel's build ID only), the build ID through
 * the store. */
static void find_vmlinux(struct ds_kernel *k)
{
	uint64_t ref_now;
	char path[PATH_MAX], release[256];

	if (k->vmlinux_tried)
		return;
	k->vmlinux_tried = true;
	if (!ds__kallsyms_ref(k->ksyms, &ref_now))
		return; /* nothing to relocate by */
	if (k->vmlinux_path) {
		k->vmlinux = usable(k, ds_store_findnew(k->store, k->vmlinux_path, NULL), ref_now);
		return;
	}
	if (kernel_release(k, release, sizeof(release)) &&
	    ds__vmlinux_place(k->ctx, release, &k->bid, path, sizeof(path)))
		k->vmlinux = usable(k, ds_store_findnew(k->store, path, NULL), ref_now);
	if (!k->vmlinux && k->bid.size) {
		struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID, .build_id = k->bid };

		k->vmlinux = usable(k, ds_store_findnew(k->store, NULL, &id), ref_now);
	}
}

static int load(struct ds_kernel *k)
{
	if (k->loaded)
		return k->kerr;
	k->loaded = true;
	if (!ds__kernel_build_id(k->ctx, &k->bid))
		k->bid.size = 0;
	/* All of it: module symbols are not in the cached core. */
	k->kerr = ds__kallsyms_load(k->ctx, KERNEL_REF, true, &k->ksyms);
	return k->kerr;
}

DS_API int ds_kernel_build_id(struct ds_kernel *k, struct ds_build_id *out)
{
	load(k);
	if (!k->bid.size)
		return -ENODATA;
	*out = k->bid;
	return 0;
}

/* The answer of the vmlinux's DWARF for addr, moved back to addr. */
static bool from_dwarf(struct ds_kernel *k, struct ds_dso *dso, uint64_t shift, uint64_t addr,
		       unsigned flags, struct ds_sym_batch *batch)
{
	uint64_t link = addr - shift;
	const struct ds_sym_answer *a;
	size_t n = 0;

	if (ds_dso_symbolize_batch(dso, &link, 1, flags & ~DS_SYM_FILE_OFFSET, batch) < 0)
		return false;
	a = ds_sym_batch_answers(batch, &n);
	if (n != 1 || a->status != DS_SYM_FOUND || !a->nframes)
		return false;
	if (a->nframes > k->framecap) {
		struct ds_frame *v = realloc(k->frames, a->nframes * sizeof(*v));

		if (!v)
			return false;
		k->frames = v;
		k->framecap = a->nframes;
	}
	for (size_t i = 0; i < a->nframes; i++) {
		k->frames[i] = a->frames[i];
		if (k->frames[i].function_start)
			k->frames[i].function_start += shift;
	}
	k->ans = *a;
	k->ans.addr = addr;
	k->ans.frames = k->frames;
	return true;
}

/* ------------------------------------------------------------ modules */

/* A hex address in a small sysfs-like file ("0xffffffffc0a00000\n"). */
static bool read_addr_file(const char *path, uint64_t *out)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	size_t n;
	char *end;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	errno = 0;
	*out = strtoull(buf, &end, 16);
	return !errno && end != buf && *out;
}

static bool in_bounds(size_t off, size_t len, size_t size)
{
	return off <= size && len <= size - off;
}

/* Applies one relocation of a DWARF section: false for a type that is not
 * an absolute one (the section is then left as it is, and so is its DWARF). */
static bool apply_rela(unsigned machine, unsigned type, unsigned char *at, size_t room, uint64_t v)
{
	size_t w;

	if (machine == EM_X86_64)
		w = type == R_X86_64_64 ? 8 : type == R_X86_64_32 || type == R_X86_64_32S ? 4
		    : type == R_X86_64_NONE ? 0 : SIZE_MAX;
	else
		w = type == R_AARCH64_ABS64 ? 8 : type == R_AARCH64_ABS32 ? 4
		    : type == R_AARCH64_NONE ? 0 : SIZE_MAX;
	if (w == SIZE_MAX || w > room)
		return false;
	if (w == 8) {
		memcpy(at, &v, 8);
	} else if (w == 4) {
		uint32_t v32 = (uint32_t)v;

		memcpy(at, &v32, 4);
	}
	return true;
}

/*
 * The .ko image (img, len; modified in place) as module loaded it: each
 * SHF_ALLOC section at its address from ROOT/sys/module/module/sections/,
 * relocations into non-allocated sections (DWARF) applied, symbols moved,
 * ET_EXEC.  64-bit little-endian x86-64 or AArch64 only (the host's
 * order).  -EINVAL for anything else or malformed.
 */
int ds__ko_relocate(struct ds_context *ctx, const char *module, unsigned char *img, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	const char *shstr;
	size_t shstr_len;
	char path[PATH_MAX], rel[PATH_MAX];

	if (len < sizeof(eh))
		return -EINVAL;
	memcpy(&eh, img, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_type != ET_REL || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || !eh.e_shnum || eh.e_shstrndx >= eh.e_shnum ||
	    eh.e_shoff % 8 || !in_bounds(eh.e_shoff, (size_t)eh.e_shnum * sizeof(*sh), len))
		return -EINVAL;
	sh = (Elf64_Shdr *)(void *)(img + eh.e_shoff);
	if (!in_bounds(sh[eh.e_shstrndx].sh_offset, sh[eh.e_shstrndx].sh_size, len))
		return -EINVAL;
	shstr = (const char *)img + sh[eh.e_shstrndx].sh_offset;
	shstr_len = sh[eh.e_shstrndx].sh_size;
	/* Where the kernel put each allocated section. */
	for (size_t i = 1; i < eh.e_shnum; i++) {
		size_t avail = sh[i].sh_name < shstr_len ? shstr_len - sh[i].sh_name : 0;
		const char *name = shstr + (avail ? sh[i].sh_name : 0);
		uint64_t a;

		if (!(sh[i].sh_flags & SHF_ALLOC))
			continue;
		sh[i].sh_addr = 0; /* unless the kernel says where it is */
		if (!avail || !memchr(name, 0, avail) || strchr(name, '/') || !strcmp(name, ".."))
			continue;
		snprintf(rel, sizeof(rel), "/sys/module/%s/sections/%s", module, name);
		ds__kernel_path(ctx, rel, path, sizeof(path));
		if (read_addr_file(path, &a))
			sh[i].sh_addr = a;
	}
	for (size_t i = 1; i < eh.e_shnum; i++) {
		/* Copies: the relocations may write over the headers themselves
		 * in a hostile file, never past what was checked here. */
		Elf64_Shdr rs = sh[i], ts, ss;
		const Elf64_Shdr *r = &rs, *tgt = &ts, *symtab = &ss;
		const Elf64_Sym *syms;
		size_t nsyms;

		if (r->sh_type != SHT_RELA || r->sh_info >= eh.e_shnum || r->sh_link >= eh.e_shnum)
			continue;
		ts = sh[r->sh_info];
		ss = sh[r->sh_link];
		if ((tgt->sh_flags & SHF_ALLOC) || (tgt->sh_flags & SHF_COMPRESSED) ||
		    tgt->sh_type == SHT_NOBITS || r->sh_entsize != sizeof(Elf64_Rela) ||
		    symtab->sh_entsize != sizeof(Elf64_Sym) || r->sh_offset % 8 || symtab->sh_offset % 8 ||
		    !in_bounds(r->sh_offset, r->sh_size, len) ||
		    !in_bounds(symtab->sh_offset, symtab->sh_size, len) ||
		    !in_bounds(tgt->sh_offset, tgt->sh_size, len))
			continue;
		syms = (const Elf64_Sym *)(const void *)(img + symtab->sh_offset);
		nsyms = symtab->sh_size / sizeof(Elf64_Sym);
		for (size_t j = 0; j < r->sh_size / sizeof(Elf64_Rela); j++) {
			Elf64_Rela ra;
			Elf64_Sym sym;
			uint64_t s = 0;

			memcpy(&ra, img + r->sh_offset + j * sizeof(ra), sizeof(ra));
			if (ELF64_R_SYM(ra.r_info) >= nsyms || ra.r_offset > tgt->sh_size)
				continue;
			memcpy(&sym, &syms[ELF64_R_SYM(ra.r_info)], sizeof(sym));
			/* The symbol's value: moved with its section (not yet:
			 * symbols are moved after all relocations). */
			if (sym.st_shndx == SHN_ABS)
				s = sym.st_value;
			else if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < eh.e_shnum)
				s = sym.st_value + sh[sym.st_shndx].sh_addr;
			apply_rela(eh.e_machine, (unsigned)ELF64_R_TYPE(ra.r_info),
				   img + tgt->sh_offset + ra.r_offset, tgt->sh_size - ra.r_offset,
				   s + (uint64_t)ra.r_addend);
		}
	}
	/* The symbols of allocated sections where they are (ELF names). */
	for (size_t i = 1; i < eh.e_shnum; i++) {
		Elf64_Shdr st = sh[i];
		Elf64_Sym *syms;

		if (st.sh_type != SHT_SYMTAB || st.sh_entsize != sizeof(Elf64_Sym) ||
		    st.sh_offset % 8 || !in_bounds(st.sh_offset, st.sh_size, len))
			continue;
		syms = (Elf64_Sym *)(void *)(img + st.sh_offset);
		for (size_t j = 0; j < st.sh_size / sizeof(Elf64_Sym); j++) {
			unsigned shndx = syms[j].st_shndx;

			if (shndx != SHN_UNDEF && shndx < eh.e_shnum && (sh[shndx].sh_flags & SHF_ALLOC))
				syms[j].st_value += sh[shndx].sh_addr;
		}
	}
	eh.e_type = ET_EXEC;
	memcpy(img, &eh, sizeof(eh));
	return 0;
}

static bool same_module_name(const char *file, const char *name)
{
	for (; *name; file++, name++)
		if ((*file == '-' ? '_' : *file) != (*name == '-' ? '_' : *name))
			return false;
	return !strcmp(file, ".ko") || !strcmp(file, ".ko.debug");
}

/* NAME.ko or NAME.ko.debug below dir (at most depth levels), whose build
 * ID is bid: its path in out. */
static bool find_ko(const char *dir, const char *name, const struct ds_build_id *bid, int depth,
		    char *out, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		char path[PATH_MAX];
		struct ds_build_id b;
		struct stat st;

		if (e->d_name[0] == '.' ||
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path) ||
		    lstat(path, &st))
			continue;
		if (S_ISDIR(st.st_mode) && depth > 0)
			found = find_ko(path, name, bid, depth - 1, out, len);
		else if (S_ISREG(st.st_mode) && same_module_name(e->d_name, name) &&
			 ds_build_id_read_file(path, &b) == 0 && ds_build_id_equal(&b, bid)) {
			snprintf(out, len, "%s", path);
			found = true;
		}
	}
	closedir(d);
	return found;
}

/* The module's .ko with DWARF: below the kernel root's
 * /usr/lib/debug/lib/modules/RELEASE (Debian's and Fedora's place), else
 * by its build ID through the store; relocated into a memfd. */
static void load_module(struct ds_kernel *k, struct kmod *m)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	const struct ds_debuginfo *di;
	struct ds_dso *found;
	char rel[PATH_MAX], path[PATH_MAX], dir[PATH_MAX], release[256];
	unsigned char *img = NULL;
	size_t len = 0;
	FILE *f = NULL;
	int err;

	snprintf(rel, sizeof(rel), "/sys/module/%s/notes/.note.gnu.build-id", m->name);
	ds__kernel_path(k->ctx, rel, path, sizeof(path));
	if (!ds__notes_file_build_id(path, &id.build_id))
		return;
	if (kernel_release(k, release, sizeof(release))) {
		snprintf(rel, sizeof(rel), "/usr/lib/debug/lib/modules/%s", release);
		ds__kernel_path(k->ctx, rel, dir, sizeof(dir));
		if (find_ko(dir, m->name, &id.build_id, 8, path, sizeof(path)))
			f = fopen(path, "rbe");
	}
	if (!f && (found = ds_store_findnew(k->store, NULL, &id))) {
		if (ds_dso_debuginfo(found, &di) == 0 && ds_dso_pin(found) == 0) {
			snprintf(path, sizeof(path), "%s", ds_debuginfo_path(di));
			ds_dso_unpin(found);
			f = fopen(path, "rbe");
		}
		ds_dso_put(found);
	}
	if (f && (img = malloc(KO_MAX)))
		len = fread(img, 1, KO_MAX, f);
	if (f)
		fclose(f);
	if (!img || len == KO_MAX || (err = ds__ko_relocate(k->ctx, m->name, img, len))) {
		if (img)
			ds_debug(k->ctx, "kernel: module %s: %s is no .ko to relocate", m->name, path);
		free(img);
		return;
	}
	if (!k->mstore) {
		/* The copies' own context: they are read from themselves, and no
		 * index of theirs is saved (it would be keyed by the module's
		 * build ID, and hold this load's addresses). */
		static const char *const no_dirs[] = { NULL };
		DS_OPTS(ds_context_opts, co, .debug_dirs = no_dirs, .perf_buildid_dir = "",
			.urls = "", .symindex = -1, .log_fn = k->ctx->log.fn,
			.log_user = k->ctx->log.user, .log_level = k->ctx->log.level);
		struct ds_context *mctx = ds_context_new(&co);

		k->mstore = mctx ? ds_store_new(mctx, "kernel-modules", NULL) : NULL;
		ds_context_free(mctx); /* the store holds it */
		if (!k->mstore)
			goto out;
	}
	m->fd = memfd_create(m->name, MFD_CLOEXEC);
	if (m->fd < 0 || write(m->fd, img, len) != (ssize_t)len)
		goto out;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", m->fd);
	m->dso = ds_store_findnew(k->mstore, path, NULL);
	ds_debug(k->ctx, "kernel: module %s: DWARF%s", m->name, m->dso ? "" : " not read");
out:
	free(img);
}

static struct ds_dso *module_dso(struct ds_kernel *k, const char *name)
{
	struct kmod *v;

	for (size_t i = 0; i < k->nmods; i++)
		if (!strcmp(k->mods[i].name, name))
			return k->mods[i].dso;
	/* A name from kallsyms goes into /sys/module paths. */
	if (strlen(name) >= sizeof(v->name) || strchr(name, '/') || !strcmp(name, "..") ||
	    !(v = realloc(k->mods, (k->nmods + 1) * sizeof(*v))))
		return NULL;
	k->mods = v;
	v = &k->mods[k->nmods++];
	*v = (struct kmod){ .fd = -1 };
	snprintf(v->name, sizeof(v->name), "%s", name);
	load_module(k, v);
	return v->dso;
}

bool ds__kernel_module_dwarf(struct ds_kernel *k, const char *module, uint64_t addr,
			     unsigned int flags, struct ds_sym_batch *batch,
			     const struct ds_sym_answer **answer)
{
	struct ds_dso *dso = module_dso(k, module);

	if (!dso || !from_dwarf(k, dso, 0, addr, flags, batch))
		return false;
	*answer = &k->ans;
	return true;
}

DS_API int ds_kernel_symbolize(struct ds_kernel *k, uint64_t addr, unsigned int flags,
			       struct ds_sym_batch *batch, const struct ds_sym_answer **answer,
			       const char **module)
{
	const char *name, *mod = NULL;
	uint64_t start = 0;
	int err = load(k);

	*answer = NULL;
	if (module)
		*module = NULL;
	if (err)
		return err;
	name = ds__kallsyms_find_mod(k->ksyms, addr, &start, &mod);
	if (mod)
		snprintf(k->module, sizeof(k->module), "[%s]", mod);
	else
		snprintf(k->module, sizeof(k->module), "[kernel.kallsyms]");
	if (module)
		*module = k->module;
	*answer = &k->ans;
	if (!mod) {
		find_vmlinux(k);
		if (k->vmlinux && from_dwarf(k, k->vmlinux, k->kaslr, addr, flags, batch))
			return 0;
	} else {
		struct ds_dso *dso = module_dso(k, mod);

		if (dso && from_dwarf(k, dso, 0, addr, flags, batch))
			return 0;
	}
	k->ans = (struct ds_sym_answer){ .addr = addr, .status = DS_SYM_NOT_FOUND,
					 .reason = DS_SYM_REASON_NO_SYMBOL };
	if (!name)
		return 0;
	if (!k->framecap) {
		if (!(k->frames = calloc(1, sizeof(*k->frames))))
			return -ENOMEM;
		k->framecap = 1;
	}
	k->frames[0] = (struct ds_frame){ .function = name,
					  .function_start = start,
					  .function_len = (unsigned)strlen(name) };
	k->ans.frames = k->frames;
	k->ans.nframes = 1;
	k->ans.status = DS_SYM_FOUND;
	k->ans.reason = DS_SYM_REASON_NONE;
	k->ans.from_symtab = true;
	return 0;
}

/* Where module is loaded now: /proc/modules' address (what perf record
 * wrote as the module's MMAP start), else the lowest address kallsyms has
 * for it.  false: not loaded. */
bool ds__kernel_module_start(struct ds_context *ctx, const struct ds__kallsyms *k,
			     const char *module, uint64_t *start)
{
	char path[PATH_MAX], line[4096];
	size_t mlen = strlen(module);
	FILE *f;

	ds__kernel_path(ctx, "/proc/modules", path, sizeof(path));
	if ((f = fopen(path, "re"))) {
		bool found = false;

		while (!found && fgets(line, sizeof(line), f))
			found = ds__modules_line(line, strlen(line), module, mlen, start);
		fclose(f);
		if (found)
			return true;
	}
	return k && ds__kallsyms_module_start(k, module, start);
}

/* One /proc/modules line, "NAME SIZE REFS DEPS STATE ADDR": its address
 * when NAME is module (dashes and underscores alike, as the kernel has
 * them).  Addresses of 0 (kptr_restrict) are not addresses. */
bool ds__modules_line(const char *line, size_t len, const char *module, size_t mlen,
		      uint64_t *start)
{
	const char *p = line, *end = line + len, *f[6];
	size_t flen[6];
	int n = 0;
	uint64_t v = 0;

	while (n < 6) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p >= end || *p == '\n')
			break;
		f[n] = p;
		while (p < end && *p != ' ' && *p != '\t' && *p != '\n')
			p++;
		flen[n] = (size_t)(p - f[n]);
		n++;
	}
	if (n < 6 || flen[0] != mlen)
		return false;
	for (size_t i = 0; i < mlen; i++) {
		char a = f[0][i] == '-' ? '_' : f[0][i], b = module[i] == '-' ? '_' : module[i];

		if (a != b)
			return false;
	}
	if (flen[5] < 3 || flen[5] > 18 || f[5][0] != '0' || (f[5][1] | 0x20) != 'x')
		return false;
	for (size_t i = 2; i < flen[5]; i++) {
		int c = f[5][i], d = c >= '0' && c <= '9' ? c - '0'
				     : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10
									     : -1;

		if (d < 0)
			return false;
		v = v << 4 | (uint64_t)d;
	}
	if (!v)
		return false;
	*start = v;
	return true;
}

/* A module's name from its perf DSO path: "[ext4]", or a .ko file's
 * ("/lib/modules/R/kernel/fs/ext4/ext4.ko.zst"), dashes as underscores
 * (the kernel's spelling, as kallsyms has it).  false: not a module's. */
bool ds__kernel_module_name(const char *path, char *out, size_t len)
{
	const char *base = strrchr(path, '/'), *end;
	size_t n;

	if (path[0] == '[') {
		base = path + 1;
		end = strchr(base, ']');
		if (!end || end[1])
			return false;
	} else {
		base = base ? base + 1 : path;
		end = strstr(base, ".ko");
		if (!end || (end[3] && end[3] != '.'))
			return false;
	}
	n = (size_t)(end - base);
	if (!n || n >= len)
		return false;
	for (size_t i = 0; i < n; i++)
		out[i] = base[i] == '-' ? '_' : base[i];
	out[n] = 0;
	return true;
}
