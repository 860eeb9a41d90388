/* SPDX-License-Identifier: MIT */
/*
 * stack: cores and live processes unwound by elfutils' libdwfl (CFI from
 * .eh_frame and .debug_frame, registers and memory from the core or from
 * ptrace), every file it asks for answered from the store (found or
 * fetched by ds_core_find_files(): verified by build ID), each frame then
 * symbolized by the store's DSO, inline frames expanded.
 *
 * libdwfl's Dwfl_Callbacks carry no user pointer: the callbacks reach the
 * call's state through a thread-local pointer, set for the duration of
 * one ds_core_backtrace()/ds_proc_backtrace() on that thread (section
 * "libdwfl's files from the store" below).  The perf unwinder
 * (lib/live/unwind.c) has its own: its modules come from a replay's maps and
 * are found by build ID on this machine, one Dwfl per process for a whole
 * recording, with the finder as each module's userdata.
 */
#include "live.h"

#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ds__core_cursig(const struct ds_core *c, int32_t tid);
int ds__core_fd(const struct ds_core *c);

#define STACK_MAX_FRAMES 256
#define STACK_MAX_MODULE_DSOS 4096

/* One DSO of a live process, as libdwfl reported it. */
struct proc_dso {
	Dwfl_Module *mod;
	struct ds_dso *dso;
};

struct stack_call {
	struct ds_core *core; /* NULL: a live process */
	struct ds_store *store;
	const volatile int *cancel;
	struct proc_dso *pdsos;
	size_t npdsos;
	void **images; /* modules' bytes read from the core (the vDSO's) */
	size_t nimages;
};

/* ----------------------------------------- libdwfl's files from the store */

static __thread struct stack_call *cur_call;

/* The core's module of a libdwfl module: its userdata (report_core()
 * reports each one with it). */
static const struct ds_core_module *core_module_of(Dwfl_Module *mod)
{
	void **ud = NULL;

	if (!cur_call || !cur_call->core)
		return NULL;
	dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	return ud ? *ud : NULL;
}

static int open_answer(const char *path, char **name_out)
{
	int fd = ds__open_regular(path);

	if (fd >= 0 && name_out) {
		*name_out = strdup(path);
		if (!*name_out) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* The vDSO's ELF image, whole in the core's memory (the kernel dumps it):
 * read into a buffer that lives until the backtrace ends.  NULL if the
 * core lacks any of it. */
#define CORE_IMAGE_MAX (1u << 20)
static Elf *image_from_core(const struct ds_core_module *m)
{
	uint64_t len = m->end - m->start;
	void **v, *buf;
	Elf *elf;

	if (m->end <= m->start || len > CORE_IMAGE_MAX)
		return NULL;
	v = realloc(cur_call->images, (cur_call->nimages + 1) * sizeof(*v));
	if (!v)
		return NULL;
	cur_call->images = v;
	buf = malloc((size_t)len);
	if (!buf)
		return NULL;
	if (ds_core_read(cur_call->core, m->start, buf, (size_t)len) < len ||
	    !(elf = elf_memory(buf, (size_t)len))) {
		free(buf);
		return NULL;
	}
	cur_call->images[cur_call->nimages++] = buf;
	return elf;
}

/* A module's file: the one ds_core_find_files() verified (or
 * ds_core_use_file() was given).  libdwfl checks the build ID of what it
 * gets. */
static int store_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct ds_core_module *m = core_module_of(mod);

	*elfp = NULL;
	if (!m)
		return -1;
	if (m->file)
		return open_answer(m->file, file_name);
	if (m->vdso) {
		*elfp = image_from_core(m);
		return -1;
	}
	/* No build ID to find it by: the file at the path, as libdwfl would
	 * have taken it (a regular file only, opened by us). */
	if (!m->build_id.size && m->path[0] == '/')
		return open_answer(m->path, file_name);
	return -1;
}

/* A module's debuginfo: the store's DSO's. */
static int store_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
				Dwarf_Addr base, const char *file_name, const char *debuglink_file,
				GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const struct ds_core_module *m = core_module_of(mod);
	const struct ds_debuginfo *di;
	struct ds_dso *dso = m ? m->dso : NULL;

	if (!dso && cur_call) {
		for (size_t i = 0; i < cur_call->npdsos; i++)
			if (cur_call->pdsos[i].mod == mod)
				dso = cur_call->pdsos[i].dso;
	}
	if (!dso || ds_dso_debuginfo(dso, &di))
		return -1;
	/* Its own file is what libdwfl has already. */
	if (file_name && !strcmp(file_name, ds_debuginfo_path(di)))
		return -1;
	return open_answer(ds_debuginfo_path(di), debuginfo_file_name);
}

static const Dwfl_Callbacks core_callbacks = {
	.find_elf = store_find_elf,
	.find_debuginfo = store_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = store_find_debuginfo,
};

/* ------------------------------------------------------------- frames */

struct frame_buf {
	struct ds_stack_frame *v;
	size_t n, max;
	bool cancelled;
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct frame_buf *b = arg;
	Dwarf_Addr pc;
	bool act;

	if (cur_call && cur_call->cancel && *cur_call->cancel) {
		b->cancelled = true;
		return DWARF_CB_ABORT;
	}
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (b->n == b->max)
		return DWARF_CB_ABORT;
	b->v[b->n++] = (struct ds_stack_frame){ .pc = pc, .activation = act,
						/* A return address is after the call: the
						 * call's line is the byte before. */
						.addr = act ? pc : pc - 1 };
	return DWARF_CB_OK;
}

/* Per thread: the symbolizer batches (one per DSO of the thread) and the
 * names of frames without a DSO. */
struct thread_sym {
	struct ds_dso **dsos;
	struct ds_sym_batch **batches;
	size_t nbatches, cap;
	struct ds_frame *lone; /* one per frame, for names libdwfl gave */
	struct ds_build_id *bids;
};

static void thread_sym_free(struct thread_sym *ts)
{
	for (size_t i = 0; i < ts->cap; i++)
		ds_sym_batch_free(ts->batches[i]);
	free(ts->batches);
	free(ts->dsos);
	free(ts->lone);
	free(ts->bids);
}

static struct ds_dso *dso_of(Dwfl_Module *mod, uint64_t *bias, const char **path,
			     struct ds_build_id *bid)
{
	const struct ds_core_module *m = core_module_of(mod);
	const unsigned char *bits;
	GElf_Addr vaddr;
	const char *mainfile = NULL, *name;
	Dwarf_Addr start;
	int len;

	name = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, &mainfile, NULL);
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	bid->size = 0;
	if (len > 0 && len <= DS_BUILD_ID_MAX) {
		bid->size = (uint8_t)len;
		memcpy(bid->data, bits, (size_t)len);
	}
	if (m) {
		*bias = m->bias;
		*path = m->path;
		return m->dso;
	}
	*path = mainfile ? mainfile : name;
	{
		Dwarf_Addr b = 0;

		if (dwfl_module_getelf(mod, &b))
			*bias = b;
		else
			*bias = start;
	}
	if (cur_call)
		for (size_t i = 0; i < cur_call->npdsos; i++)
			if (cur_call->pdsos[i].mod == mod)
				return cur_call->pdsos[i].dso;
	return NULL;
}

static int symbolize_thread(Dwfl *dwfl, struct ds_stack_frame *f, size_t n, unsigned int flags,
			    struct thread_sym *ts)
{
	struct ds_dso **fdso = calloc(n ? n : 1, sizeof(*fdso));
	int rc = 0;

	ts->lone = calloc(n ? n : 1, sizeof(*ts->lone));
	ts->bids = calloc(n ? n : 1, sizeof(*ts->bids));
	if (!fdso || !ts->lone || !ts->bids) {
		free(fdso);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		Dwfl_Module *mod = dwfl_addrmodule(dwfl, f[i].addr);
		uint64_t bias = 0;

		if (!mod)
			continue;
		fdso[i] = dso_of(mod, &bias, &f[i].module, &ts->bids[i]);
		if (ts->bids[i].size)
			f[i].build_id = &ts->bids[i];
		f[i].module_addr = f[i].addr - bias;
		if (!fdso[i]) {
			/* No DSO (the vDSO, a file without build ID): the
			 * name libdwfl finds in its ELF symbols. */
			const char *sym = dwfl_module_addrname(mod, f[i].addr);

			if (sym) {
				ts->lone[i].function = sym;
				ts->lone[i].function_len = (unsigned int)strlen(sym);
				f[i].frames = &ts->lone[i];
				f[i].nframes = 1;
				f[i].from_symtab = true;
			}
		}
	}
	/* One batch per DSO of the thread. */
	for (size_t i = 0; i < n && !rc; i++) {
		struct ds_dso *d = fdso[i];
		uint64_t *addrs;
		size_t k = 0, na;
		const struct ds_sym_answer *ans;
		struct ds_sym_batch *b;

		if (!d)
			continue;
		if (ts->nbatches == ts->cap) {
			size_t nc = ts->cap ? 2 * ts->cap : 8;
			struct ds_sym_batch **nb = realloc(ts->batches, nc * sizeof(*nb));
			struct ds_dso **nd;

			if (!nb) {
				rc = -ENOMEM;
				break;
			}
			ts->batches = nb;
			nd = realloc(ts->dsos, nc * sizeof(*nd));
			if (!nd) {
				rc = -ENOMEM;
				break;
			}
			ts->dsos = nd;
			for (size_t j = ts->cap; j < nc; j++)
				ts->batches[j] = NULL;
			ts->cap = nc;
		}
		b = ts->batches[ts->nbatches] = ds_sym_batch_new();
		addrs = malloc(n * sizeof(*addrs));
		if (!b || !addrs) {
			free(addrs);
			rc = -ENOMEM;
			break;
		}
		ts->dsos[ts->nbatches++] = d;
		for (size_t j = i; j < n; j++)
			if (fdso[j] == d)
				addrs[k++] = f[j].module_addr;
		ds_dso_symbolize_batch(d, addrs, k, flags, b);
		free(addrs);
		ans = ds_sym_batch_answers(b, &na);
		k = 0;
		for (size_t j = i; j < n; j++) {
			if (fdso[j] != d)
				continue;
			if (k < na && ans[k].status == DS_SYM_FOUND) {
				f[j].frames = ans[k].frames;
				f[j].nframes = ans[k].nframes;
				f[j].from_symtab = ans[k].from_symtab;
			}
			k++;
			fdso[j] = NULL;
		}
	}
	free(fdso);
	return rc;
}

struct thread_walk {
	Dwfl *dwfl;
	const struct ds_stack_opts *opts;
	ds_stack_thread_fn fn;
	void *user;
	int32_t crash_tid;
	int ret; /* the callback's */
	bool cancelled;
	struct ds_stack_frame *frames;
	size_t max;
};

/* Symbolize and hand over the frames unwound for thread tid (rc: libdwfl's
 * answer).  Returns the callback's value. */
static int thread_done(struct thread_walk *w, int32_t tid, struct frame_buf *b, int rc)
{
	struct ds_stack_thread t = { 0 };
	struct thread_sym ts = { 0 };
	unsigned int flags = DS_OPT(w->opts, sym_flags, 0);

	t.tid = tid;
	t.crashed = w->crash_tid && t.tid == w->crash_tid;
	if (cur_call->core)
		t.signo = ds__core_cursig(cur_call->core, t.tid);
	if (rc != 0 && b->n < b->max) {
		int e = dwfl_errno();

		if (e) {
			t.error = -EIO;
			t.error_msg = dwfl_errmsg(e);
		}
	}
	if (!flags)
		flags = DS_SYM_INLINES | DS_SYM_DEMANGLE | DS_SYM_ELFUTILS;
	rc = symbolize_thread(w->dwfl, b->v, b->n, flags, &ts);
	if (rc && !t.error) {
		t.error = rc;
		t.error_msg = ds_strerror(rc);
	}
	t.frames = b->v;
	t.nframes = b->n;
	w->ret = w->fn(w->user, &t);
	thread_sym_free(&ts);
	return w->ret;
}

static int thread_cb(Dwfl_Thread *thread, void *arg)
{
	struct thread_walk *w = arg;
	struct frame_buf b = { .v = w->frames, .max = w->max };
	int rc = dwfl_thread_getframes(thread, frame_cb, &b);

	if (b.cancelled) {
		w->cancelled = true;
		return DWARF_CB_ABORT;
	}
	return thread_done(w, (int32_t)dwfl_thread_tid(thread), &b, rc) ? DWARF_CB_ABORT
									 : DWARF_CB_OK;
}

/* Every thread through thread_cb: the callback's value, -ECANCELED, or
 * -EIO with libdwfl's words in err. */
static int walk_threads(Dwfl *dwfl, struct thread_walk *w, char *err, size_t errlen)
{
	if (dwfl_getthreads(dwfl, thread_cb, w) < 0 && !w->ret && !w->cancelled) {
		snprintf(err, errlen, "%s", dwfl_errmsg(-1));
		return -EIO;
	}
	return w->cancelled ? -ECANCELED : w->ret;
}

static int walk_setup(struct thread_walk *w, Dwfl *dwfl, const struct ds_stack_opts *opts,
		      ds_stack_thread_fn fn, void *user)
{
	unsigned int max = DS_OPT(opts, max_frames, 0);

	*w = (struct thread_walk){ .dwfl = dwfl, .opts = opts, .fn = fn, .user = user };
	w->max = max ? max : STACK_MAX_FRAMES;
	w->frames = calloc(w->max, sizeof(*w->frames));
	return w->frames ? 0 : -ENOMEM;
}

/* The core's modules, as lib/live/core.c found them (NT_FILE and the
 * vDSO), reported to libdwfl by address and build ID, each with its
 * ds_core_module as userdata; their files come from store_find_elf().
 * Not dwfl_core_file_report(): libdwfl would open() every path the core
 * names itself (NT_FILE's, the link map's), blocking for ever on a FIFO
 * (elfutils 0.188, dwfl_segment_report_module.c and link_map.c), and
 * take whatever file is there without our checks. */
static int report_core(Dwfl *dwfl, const struct ds_core *core, char *err, size_t errlen)
{
	const struct ds_core_module *mods;
	size_t n = ds_core_modules(core, &mods);

	for (size_t i = 0; i < n; i++) {
		const struct ds_core_module *m = &mods[i];
		Dwfl_Module *mod;
		void **ud = NULL;

		mod = dwfl_report_module(dwfl, m->path, m->start, m->end);
		if (!mod) {
			snprintf(err, errlen, "%s: %s", m->path, dwfl_errmsg(-1));
			return -ENOMEM;
		}
		dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
		if (!ud || *ud)
			continue; /* (the same module twice: the first stays) */
		*ud = (void *)m;
		/* libdwfl checks the file find_elf gives against it. */
		if (m->build_id.size &&
		    dwfl_module_report_build_id(mod, m->build_id.data, m->build_id.size,
						m->build_id_addr) != 0)
			dwfl_module_report_build_id(mod, m->build_id.data, m->build_id.size, 0);
	}
	return 0;
}

DS_API int ds_core_backtrace(struct ds_core *core, struct ds_store *store,
			     const struct ds_stack_opts *opts, ds_stack_thread_fn fn, void *user,
			     char *err, size_t errlen)
{
	struct stack_call call = { .core = core, .store = store };
	struct ds_core_info info;
	struct thread_walk w;
	Dwfl *dwfl = NULL;
	Elf *elf = NULL;
	char dummy[1];
	int rc = 0;

	ds__errbuf_init(&err, &errlen, dummy);
	if (!core || !store || !fn || ds__core_fd(core) < 0)
		return -EINVAL;
	call.cancel = DS_OPT(opts, cancel, NULL);
	ds_core_info(core, &info);
	if (walk_setup(&w, NULL, opts, fn, user))
		return -ENOMEM;
	cur_call = &call;
	elf_version(EV_CURRENT);
	elf = elf_begin(ds__core_fd(core), ELF_C_READ_MMAP, NULL);
	if (!elf) {
		snprintf(err, errlen, "libelf: %s", elf_errmsg(-1));
		rc = -EBADMSG;
		goto out;
	}
	dwfl = dwfl_begin(&core_callbacks);
	if (!dwfl) {
		rc = -ENOMEM;
		goto out;
	}
	w.dwfl = dwfl;
	dwfl_report_begin(dwfl);
	rc = report_core(dwfl, core, err, errlen);
	if (rc)
		goto out;
	dwfl_report_end(dwfl, NULL, NULL);
	if (dwfl_core_file_attach(dwfl, elf) < 0) {
		snprintf(err, errlen, "dwfl_core_file_attach: %s", dwfl_errmsg(-1));
		rc = -EBADMSG;
		goto out;
	}
	w.crash_tid = info.crash_tid;
	/* The crashing thread first: libdwfl gives the threads in note order,
	 * and the kernel writes the dumping thread's NT_PRSTATUS first.
	 * (dwfl_getthread_frames() per tid would let us choose, but 0.188
	 * leaks the core reader's per-thread state on that path.) */
	rc = walk_threads(dwfl, &w, err, errlen);
out:
	cur_call = NULL;
	dwfl_end(dwfl);
	elf_end(elf);
	for (size_t i = 0; i < call.nimages; i++)
		free(call.images[i]);
	free(call.images);
	free(w.frames);
	return rc;
}

static int proc_module_cb(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	struct stack_call *call = arg;
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	const char *mainfile = NULL;
	struct ds_dso_id id = { 0 };
	struct proc_dso *v;
	int len;

	if (call->npdsos == STACK_MAX_MODULE_DSOS)
		return DWARF_CB_ABORT;
	dwfl_module_getelf(mod, &bias); /* opens the file: its build ID */
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, NULL);
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	if (len > 0 && len <= DS_BUILD_ID_MAX) {
		id.flags = DS_DSO_ID_BUILD_ID;
		id.build_id.size = (uint8_t)len;
		memcpy(id.build_id.data, bits, (size_t)len);
	}
	if (!id.flags || !mainfile || mainfile[0] != '/')
		return DWARF_CB_OK; /* the vDSO: libdwfl names it */
	v = realloc(call->pdsos, (call->npdsos + 1) * sizeof(*v));
	if (!v)
		return DWARF_CB_ABORT;
	call->pdsos = v;
	v[call->npdsos].mod = mod;
	v[call->npdsos].dso = ds_store_findnew(call->store, mainfile, &id);
	if (v[call->npdsos].dso)
		call->npdsos++;
	return DWARF_CB_OK;
}

DS_API int ds_proc_backtrace(int32_t pid, struct ds_store *store,
			     const struct ds_stack_opts *opts, const struct ds_fetch_opts *fopts,
			     ds_stack_thread_fn fn, void *user, char *err, size_t errlen)
{
	struct stack_call call = { .store = store };
	struct thread_walk w;
	struct ds_dso **dsos = NULL;
	Dwfl *dwfl = NULL;
	char dummy[1];
	int rc = 0;

	ds__errbuf_init(&err, &errlen, dummy);
	if (pid <= 0 || !store || !fn)
		return -EINVAL;
	call.cancel = DS_OPT(opts, cancel, NULL);
	if (walk_setup(&w, NULL, opts, fn, user))
		return -ENOMEM;
	cur_call = &call;
	dwfl = dwfl_begin(&proc_callbacks);
	if (!dwfl) {
		rc = -ENOMEM;
		goto out;
	}
	w.dwfl = dwfl;
	dwfl_report_begin(dwfl);
	rc = dwfl_linux_proc_report(dwfl, pid);
	if (rc) {
		rc = rc > 0 ? -rc : -ESRCH;
		snprintf(err, errlen, "/proc/%d/maps: %s", pid, strerror(-rc));
		goto out;
	}
	dwfl_report_end(dwfl, NULL, NULL);
	/* Every module's debuginfo in one batch before the process stops. */
	dwfl_getmodules(dwfl, proc_module_cb, &call, 0);
	if (call.npdsos) {
		dsos = malloc(call.npdsos * sizeof(*dsos));
		if (!dsos) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < call.npdsos; i++)
			dsos[i] = call.pdsos[i].dso;
		rc = ds__dsos_prefetch_with(dsos, call.npdsos, true, NULL, 0, fopts);
		if (rc < 0)
			goto out;
	}
	rc = dwfl_linux_proc_attach(dwfl, pid, false);
	if (rc) {
		rc = rc > 0 ? -rc : -EPERM;
		snprintf(err, errlen, "attaching to %d: %s", pid,
			 rc == -EPERM ? "ptrace refused (see /proc/sys/kernel/yama/ptrace_scope)"
				      : strerror(-rc));
		goto out;
	}
	rc = walk_threads(dwfl, &w, err, errlen);
out:
	cur_call = NULL;
	dwfl_end(dwfl); /* detaches every thread */
	for (size_t i = 0; i < call.npdsos; i++)
		ds_dso_put(call.pdsos[i].dso);
	free(call.pdsos);
	free(dsos);
	free(w.frames);
	return rc;
}
