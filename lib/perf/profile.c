// SPDX-License-Identifier: MIT
/*
 * The profile: a perf session's samples as stacks of named
 * locations, what report, annotate, folded stacks, flame graphs and pprof
 * read.  Samples with the same event, thread, name and callchain are one
 * stack (a recording of a loop has few); each distinct (DSO, address) is
 * one location, named once: a user-space DSO's in one symbolizer batch,
 * kernel ones from /proc/kallsyms (read by a thread of its own while the
 * rest is named, and only when the recording has kernel addresses), the
 * vDSO's from its image.  A reader that adds the samples up its own way
 * (folded stacks) can have each handed over instead, and no stack kept.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/* A stack being collected: its key is the event, thread, name and the
 * (location, address, mode) triples at [at, at + n) of the arrays. */
struct stack {
	uint64_t hash;
	size_t at;
};

/* Interned strings: names and file names of frames, each stored once. */
struct strtab {
	char **slots; /* open addressing, NULL empty */
	size_t nslots, n;
	char *chunk; /* the current allocation; all are kept in chunks */
	size_t left;
	char **chunks;
	size_t nchunks, chunkcap;
};

struct ds_profile {
	struct ds_perf_session *s;
	bool own_session; /* ds_profile_open()'s, freed with the profile */
	bool resolved; /* ds_profile_resolve() ran; resolve_err its outcome */
	int resolve_err;
	struct ds_context *ctx;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	unsigned int flags;
	ds_log_fn warn;
	void *warn_user;
	/* The reader's, handed each sample instead of its being kept
	 * (ds_profile_opts.stack): no stack is kept, the id triples' room
	 * is every sample's in turn. */
	ds_profile_stack_fn stack;
	void *stack_user;
	char **short_names;
	int err; /* the first failure (-ENOMEM) of a callback */
	uint64_t first_time, last_time; /* of the samples with a time */
	bool any_time;

	struct ds_profile_loc *locs;
	size_t nlocs, loccap;
	uint32_t *loc_slots; /* (dso, ip) -> index + 1; 0 empty */
	size_t nloc_slots;

	struct ds_profile_sample *samples;
	struct stack *stacks;
	size_t nsamples, samplecap;
	uint32_t *stack_slots; /* stack hash -> index + 1; 0 empty */
	size_t nstack_slots;
	uint32_t *ids;
	uint64_t *ips;
	uint16_t *modes;
	size_t nids, idcap;

	struct ds_frame *frames;
	size_t nframes, framecap;
	struct strtab strs;

	struct ds__kallsyms *ksyms;
	struct ds__kallsyms *ksyms_cached; /* replaced by a full read, kept */
	const char *kref; /* perf's reference symbol of the kernel */
	int kerr; /* of the thread's load */
	bool kall; /* ksyms is a full read of /proc/kallsyms */
	bool kwaited; /* the load's outcome was looked at */
	pthread_t kthread;
	bool kthread_on;
	uint64_t kdelta; /* this boot's kernel text minus the recorded one */
	bool kernel_named; /* ksyms are this kernel's */
	/* Why kernel samples are not named from kallsyms (said once, when no
	 * vmlinux names them either): another kernel's, or the error. */
	bool kunnamed_bid;
	int kunnamed_err;
	bool kunnamed_said;

	/* The kernel's DWARF and ELF symbols: the recorded kernel's vmlinux
	 * (perf's -k, perf's places, by build ID), its link-time addresses
	 * the recorded ones minus vmlinux_shift; the modules' through a
	 * ds_kernel (lib/live/ksym.c) where they are now. */
	char *vmlinux_path;
	struct ds_store *kstore;
	struct ds_dso *vmlinux;
	bool vmlinux_tried;
	uint64_t vmlinux_shift;
	struct ds_kernel *kern;

	int vdso_fd;
	struct ds_store *vdso_store;
	struct ds_dso *vdso;
	bool vdso_tried;
	struct ds_sym_batch *batch;
};

static void warnf(struct ds_profile *p, enum ds_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void warnf(struct ds_profile *p, enum ds_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!p->warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->warn(p->warn_user, level, msg);
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 33);
}

/* ------------------------------------------------------------ strings */

static const char *strtab_intern(struct strtab *t, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;
	char *copy;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	if (2 * (t->n + 1) > t->nslots) {
		size_t n = t->nslots ? 2 * t->nslots : 1024;
		char **v = calloc(n, sizeof(*v));

		if (!v)
			return NULL;
		for (size_t k = 0; k < t->nslots; k++) {
			const char *o = t->slots[k];
			uint64_t oh = 1469598103934665603ull;

			if (!o)
				continue;
			for (const char *c = o; *c; c++)
				oh = (oh ^ (unsigned char)*c) * 1099511628211ull;
			for (i = mix(oh) & (n - 1); v[i]; i = (i + 1) & (n - 1))
				;
			v[i] = t->slots[k];
		}
		free(t->slots);
		t->slots = v;
		t->nslots = n;
	}
	for (i = mix(h) & (t->nslots - 1); t->slots[i]; i = (i + 1) & (t->nslots - 1))
		if (!strncmp(t->slots[i], s, len) && !t->slots[i][len])
			return t->slots[i];
	if (len + 1 > t->left) {
		size_t size = len + 1 > 65536 ? len + 1 : 65536;
		char **v = ds__grow(t->chunks, &t->chunkcap, t->nchunks, sizeof(*v));

		if (!v)
			return NULL;
		t->chunks = v;
		if (!(t->chunk = malloc(size)))
			return NULL;
		t->chunks[t->nchunks++] = t->chunk;
		t->left = size;
	}
	copy = t->chunk;
	memcpy(copy, s, len);
	copy[len] = 0;
	t->chunk += len + 1;
	t->left -= len + 1;
	t->slots[i] = copy;
	t->n++;
	return copy;
}

static void strtab_release(struct strtab *t)
{
	for (size_t i = 0; i < t->nchunks; i++)
		free(t->chunks[i]);
	free(t->chunks);
	free(t->slots);
}

/* --------------------------------------------------------- short names */

/* A process's perf map, as the session names its anonymous code
 * ("/tmp/perf-PID.map"): true, and its pid. */
static bool perf_map_pid(const char *path, int *pid)
{
	int end = 0;

	return sscanf(path, "/tmp/perf-%d.map%n", pid, &end) == 1 && end && !path[end];
}

/* perf's short name of a DSO: the base name of a file, "[kernel.kallsyms]"
 * and the like as they are, a kernel module as "[name]" (dashes become
 * underscores, as the kernel names modules). */
static char *short_name(const struct ds_perf_dso *d)
{
	const char *p = d->path ? d->path : "[unknown]";
	const char *b = strrchr(p, '/');
	char *s;

	int pid;

	if (p[0] != '/' || p[1] == '/')
		return strdup(p);
	/* perf's name for a process's perf map (dso__load_perf_map()) */
	if (perf_map_pid(p, &pid)) {
		if (asprintf(&s, "[JIT] tid %d", pid) < 0)
			return NULL;
		return s;
	}
	b = b ? b + 1 : p;
	if (d->kernel) {
		size_t len = strcspn(b, ".");

		if (asprintf(&s, "[%.*s]", (int)len, b) < 0)
			return NULL;
		for (char *c = s; *c; c++)
			if (*c == '-')
				*c = '_';
		return s;
	}
	return strdup(b);
}

DS_API bool ds_profile_frame_kept(const struct ds_profile_sample *s, size_t frame,
				  size_t max_stack, bool caller)
{
	/* c: the frame's entry in perf's callchain, which has the sampled
	 * address again first when the kernel wrote it so. */
	size_t nchain, c, ns;

	if (!s || frame >= s->nlocs)
		return false;
	if (!frame && !s->leaf_in_callchain)
		return max_stack > 0; /* the sampled address, not in perf's chain */
	nchain = s->nlocs - 1 + s->leaf_in_callchain;
	c = frame - !s->leaf_in_callchain;
	ns = nchain - (s->nunwound < nchain ? s->nunwound : nchain);
	if (c >= ns) /* unwound: unwind__get_entries() stops after max_stack */
		return c - ns < max_stack;
	/* the recorded chain: thread__resolve_callchain_sample() takes
	 * max_stack entries in the cursor's order */
	return caller ? ns - c <= max_stack : c < max_stack;
}

DS_API const char *ds_profile_dso_name(const struct ds_profile *p, size_t dso)
{
	if (!p || dso >= p->ndsos)
		return "[unknown]";
	return p->short_names[dso];
}

/* ----------------------------------------------------------- collecting */

static uint32_t loc_findnew(struct ds_profile *p, size_t dso, uint64_t ip)
{
	uint64_t h = mix(ip * 0x9e3779b97f4a7c15ull ^ (uint64_t)dso);
	size_t i;

	if (2 * (p->nlocs + 1) > p->nloc_slots) {
		size_t n = p->nloc_slots ? 2 * p->nloc_slots : 4096;
		uint32_t *v = calloc(n, sizeof(*v));

		if (!v)
			return UINT32_MAX;
		for (size_t k = 0; k < p->nlocs; k++) {
			const struct ds_profile_loc *l = &p->locs[k];

			for (i = mix(l->ip * 0x9e3779b97f4a7c15ull ^ (uint64_t)l->dso) & (n - 1);
			     v[i]; i = (i + 1) & (n - 1))
				;
			v[i] = (uint32_t)k + 1;
		}
		free(p->loc_slots);
		p->loc_slots = v;
		p->nloc_slots = n;
	}
	for (i = h & (p->nloc_slots - 1); p->loc_slots[i]; i = (i + 1) & (p->nloc_slots - 1)) {
		const struct ds_profile_loc *l = &p->locs[p->loc_slots[i] - 1];

		if (l->ip == ip && l->dso == dso)
			return p->loc_slots[i] - 1;
	}
	if (p->nlocs >= UINT32_MAX - 1)
		return UINT32_MAX;
	{
		struct ds_profile_loc *v = ds__grow(p->locs, &p->loccap, p->nlocs, sizeof(*v));

		if (!v)
			return UINT32_MAX;
		p->locs = v;
	}
	p->locs[p->nlocs] = (struct ds_profile_loc){ .dso = dso, .ip = ip };
	p->loc_slots[i] = (uint32_t)++p->nlocs;
	return (uint32_t)(p->nlocs - 1);
}

static bool stack_equal(const struct ds_profile *p, const struct ds_profile_sample *a,
			size_t at, const struct ds_profile_sample *b, size_t bt)
{
	return a->attr == b->attr && a->pid == b->pid && a->tid == b->tid && a->comm == b->comm &&
	       a->nlocs == b->nlocs && a->callchain == b->callchain &&
	       a->leaf_in_callchain == b->leaf_in_callchain && a->nunwound == b->nunwound &&
	       !memcmp(p->ids + at, p->ids + bt, a->nlocs * sizeof(*p->ids)) &&
	       !memcmp(p->ips + at, p->ips + bt, a->nlocs * sizeof(*p->ips)) &&
	       !memcmp(p->modes + at, p->modes + bt, a->nlocs * sizeof(*p->modes));
}

static int stack_rehash(struct ds_profile *p)
{
	size_t n = p->nstack_slots ? 2 * p->nstack_slots : 1024;
	uint32_t *v = calloc(n, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t k = 0; k < p->nsamples; k++) {
		size_t i;

		for (i = p->stacks[k].hash & (n - 1); v[i]; i = (i + 1) & (n - 1))
			;
		v[i] = (uint32_t)k + 1;
	}
	free(p->stack_slots);
	p->stack_slots = v;
	p->nstack_slots = n;
	return 0;
}

/* The sample's triples are put at [nids, nids + n) first; a stack seen
 * before takes them back, and so does a reader that has each sample
 * handed over (p->stack). */
static int on_sample(void *user, const struct ds_perf_sample *smp)
{
	struct ds_profile *p = user;
	bool cc = p->flags & DS_PROFILE_CALLCHAINS;
	/* The kernel writes the sampled address as the callchain's first
	 * entry (user and kernel chains both): it is locs[0] already. */
	size_t skip = cc && smp->nr_callchain && smp->callchain[0] == smp->ip;
	size_t n = 1 + (cc ? smp->nr_callchain - skip : 0), at = p->nids;
	struct ds_profile_sample key = { .pid = smp->pid,
					 .tid = smp->tid,
					 .attr = smp->attr,
					 .comm = smp->comm,
					 .nlocs = n,
					 .callchain = cc && smp->nr_callchain,
					 .leaf_in_callchain = skip,
					 .nunwound = (uint16_t)(cc && smp->nr_unwound <= smp->nr_callchain
									? smp->nr_unwound
									: 0) };
	uint64_t h;
	size_t i;

	if (smp->time) {
		if (!p->any_time || smp->time < p->first_time)
			p->first_time = smp->time;
		if (!p->any_time || smp->time > p->last_time)
			p->last_time = smp->time;
		p->any_time = true;
	}
	h = mix(((uint64_t)smp->attr << 32 ^ (uint32_t)smp->pid) ^
		((uint64_t)(uint32_t)smp->tid << 20) ^ (uintptr_t)smp->comm);

	while (p->nids + n > p->idcap) {
		size_t cap = p->idcap ? 2 * p->idcap : 16384;
		uint32_t *ids = realloc(p->ids, cap * sizeof(*ids));
		uint64_t *ips;
		uint16_t *modes;

		if (ids)
			p->ids = ids;
		ips = ids ? realloc(p->ips, cap * sizeof(*ips)) : NULL;
		if (ips)
			p->ips = ips;
		modes = ips ? realloc(p->modes, cap * sizeof(*modes)) : NULL;
		if (!modes)
			return p->err = -ENOMEM;
		p->modes = modes;
		p->idcap = cap;
	}
	for (size_t k = 0; k < n; k++) {
		size_t c = k - 1 + skip; /* in the callchain */
		size_t d = k ? smp->callchain_dso[c] : smp->dso;
		bool mapped = d != SIZE_MAX;
		uint64_t raw = k ? smp->callchain[c] : smp->ip;
		uint64_t off = k ? smp->callchain_offset[c] : smp->dso_offset;
		uint32_t id = loc_findnew(p, mapped ? d : SIZE_MAX, mapped ? off : raw);

		if (id == UINT32_MAX)
			return p->err = -ENOMEM;
		p->ids[at + k] = id;
		p->ips[at + k] = raw;
		p->modes[at + k] = k ? smp->callchain_cpumode[c] : smp->cpumode;
		h = mix(h ^ ((uint64_t)id << 16 ^ raw));
	}
	if (p->stack) {
		int rc;

		/* Handed over, not kept: nids stays 0, the next sample's
		 * triples go where these were. */
		key.count = 1;
		key.period = smp->period;
		key.locs = p->ids + at;
		key.ips = p->ips + at;
		key.cpumodes = p->modes + at;
		rc = p->stack(p->stack_user, &key);
		/* (a positive return would stop the replay with no errno) */
		return rc > 0 ? -ECANCELED : rc;
	}
	if (2 * (p->nsamples + 1) > p->nstack_slots && stack_rehash(p))
		return p->err = -ENOMEM;
	for (i = h & (p->nstack_slots - 1); p->stack_slots[i]; i = (i + 1) & (p->nstack_slots - 1)) {
		size_t k = p->stack_slots[i] - 1;

		if (p->stacks[k].hash == h && stack_equal(p, &p->samples[k], p->stacks[k].at, &key, at)) {
			p->samples[k].count++;
			p->samples[k].period += smp->period;
			return 0; /* its triples are dropped */
		}
	}
	if (p->nsamples == p->samplecap) {
		size_t cap = p->samplecap ? 2 * p->samplecap : 1024;
		struct ds_profile_sample *v = realloc(p->samples, cap * sizeof(*v));
		struct stack *st;

		if (v)
			p->samples = v;
		st = v ? realloc(p->stacks, cap * sizeof(*st)) : NULL;
		if (!st)
			return p->err = -ENOMEM;
		p->stacks = st;
		p->samplecap = cap;
	}
	key.count = 1;
	key.period = smp->period;
	p->samples[p->nsamples] = key;
	p->stacks[p->nsamples] = (struct stack){ .hash = h, .at = at };
	p->stack_slots[i] = (uint32_t)++p->nsamples;
	p->nids += n;
	return 0;
}

static int keep_frames(struct ds_profile *p, struct ds_profile_loc *l, const struct ds_sym_answer *a,
		       uint64_t shift);

/* ------------------------------------------------------------- kernel */

static void *kallsyms_thread(void *arg)
{
	struct ds_profile *p = arg;

	p->kerr = ds__kallsyms_load(p->ctx, p->kref, false, &p->ksyms);
	return NULL;
}

/* The recording's host and kernel release are this machine's. */
static bool same_host_and_release(const struct ds_profile *p)
{
	const char *host, *release;
	struct utsname u;

	ds__perf_session_host(p->s, &host, &release);
	return host && release && uname(&u) == 0 && !strcmp(u.nodename, host) &&
	       !strcmp(u.release, release);
}

static const struct ds_perf_dso *host_kernel(const struct ds_profile *p)
{
	for (size_t i = 0; i < p->ndsos; i++) {
		const struct ds_perf_dso *d = &p->dsos[i];

		if (d->kernel && d->path && d->machine && !strcmp(d->path, "[kernel.kallsyms]") &&
		    !strcmp(d->machine, "host"))
			return d;
	}
	return NULL;
}

/* Kernel symbols only when the recording was made on the kernel running
 * now (its build ID in the recording equals /sys/kernel/notes'; without
 * one, as in pipe mode and with -z, the recording's host name and kernel
 * release are this machine's): else the addresses of /proc/kallsyms say
 * nothing about the recorded ones.  Starts the reading thread. */
static void kernel_start(struct ds_profile *p)
{
	const struct ds_perf_dso *kd = host_kernel(p);
	struct ds_build_id running;
	bool any = false;

	for (size_t i = 0; i < p->ndsos && !any; i++)
		any = p->dsos[i].kernel && p->dsos[i].machine && !strcmp(p->dsos[i].machine, "host") &&
		      (p->dsos[i].samples || p->dsos[i].callchain_hits);
	if (!any)
		return;
	if (kd && !kd->build_id.size && same_host_and_release(p))
		; /* nothing better to go by: perf does the same */
	else if (!kd || !ds__kernel_build_id(p->ctx, &running) ||
		 !ds_build_id_equal(&kd->build_id, &running)) {
		p->kunnamed_bid = true;
		return;
	}
	p->kref = kd ? kd->ref_symbol : NULL;
	if (pthread_create(&p->kthread, NULL, kallsyms_thread, p) == 0)
		p->kthread_on = true;
	else
		kallsyms_thread(p);
	p->kernel_named = true;
}

/* The same kernel, maybe another boot: where perf's reference symbol is
 * now says how far KASLR moved it. */
static void kernel_delta(struct ds_profile *p)
{
	const struct ds_perf_dso *kd = host_kernel(p);
	uint64_t now;

	p->kdelta = 0;
	if (kd && ds__kallsyms_ref(p->ksyms, &now))
		p->kdelta = now - kd->ref_address;
}

static void kernel_failed(struct ds_profile *p, int err)
{
	p->kunnamed_err = err;
	p->kernel_named = false;
}

/* Kernel samples that neither kallsyms nor a vmlinux names: why, once. */
static void kernel_unnamed(struct ds_profile *p)
{
	if (p->kunnamed_said || (!p->kunnamed_bid && !p->kunnamed_err))
		return;
	p->kunnamed_said = true;
	if (p->kunnamed_bid)
		warnf(p, DS_LOG_INFO, "kernel samples unnamed: the recording's kernel build ID is not the "
			 "running kernel's, and no vmlinux of it was found");
	else if (p->kunnamed_err == -EPERM)
		warnf(p, DS_LOG_INFO, "kernel samples unnamed: /proc/kallsyms gives no addresses");
	else
		warnf(p, DS_LOG_INFO, "kernel samples unnamed: /proc/kallsyms: %s",
		      ds_strerror(p->kunnamed_err));
}

static void kernel_wait(struct ds_profile *p)
{
	if (p->kthread_on) {
		pthread_join(p->kthread, NULL);
		p->kthread_on = false;
	}
	if (!p->kernel_named || p->kwaited)
		return;
	p->kwaited = true;
	if (p->kerr)
		kernel_failed(p, p->kerr);
	else
		kernel_delta(p);
}

/* Addresses the cached core symbols do not cover (a module, a BPF
 * program): a fresh read of /proc/kallsyms, once. */
static void kernel_all(struct ds_profile *p)
{
	struct ds__kallsyms *k;
	int err;

	if (p->kall)
		return;
	p->kall = true;
	err = ds__kallsyms_load(p->ctx, p->kref, true, &k);
	if (err) {
		kernel_failed(p, err);
		return;
	}
	/* Locations named from the cached table keep its strings. */
	p->ksyms_cached = p->ksyms;
	p->ksyms = k;
	kernel_delta(p);
}

/* A module's addresses: where the module is now (lib/live/ksym.c: /proc/modules,
 * else its lowest kallsyms symbol) minus where it was recorded (its MMAP),
 * and its name in *mod.  false: not loaded now, or not a module. */
static bool module_delta(struct ds_profile *p, const struct ds_perf_dso *d, char *mod,
			 size_t len, uint64_t *delta)
{
	uint64_t now;

	kernel_all(p); /* module symbols are not in the cached core */
	if (!p->kernel_named || !ds__kernel_module_name(d->path, mod, len) ||
	    !ds__kernel_module_start(p->ctx, p->ksyms, mod, &now))
		return false;
	*delta = d->map_start ? now - d->map_start : 0;
	return true;
}

/* The ds_dso_symbolize_batch() flags of a location's answer. */
static unsigned sym_flags(const struct ds_profile *p)
{
	return DS_SYM_ELF_NAMES |
	       (p->flags & DS_PROFILE_MANGLED ? 0 : DS_SYM_DEMANGLE | DS_SYM_NO_PARAMS) |
	       (p->flags & DS_PROFILE_LINES ? DS_SYM_INLINES : DS_SYM_NO_LINES);
}

/* The kernel's debuginfo by build ID from this machine only: the debug
 * directories, perf's build-id cache, the debuginfod cache (what was
 * fetched before).  No server: a distribution's vmlinux debuginfo is near
 * a gigabyte, more than a report should download unasked (perf does not
 * either); `dsostore fetch BUILD-ID` brings it into the cache. */
static struct ds_dso *local_kernel(struct ds_profile *p, const struct ds_build_id *bid)
{
	char hex[2 * DS_BUILD_ID_MAX + 1], *path = NULL;
	struct ds_dso *dso = NULL;
	struct ds_found found;

	if (ds__locate(p->ctx, bid, NULL, DS_ARTIFACT_DEBUGINFO, &found, NULL) == 0) {
		dso = ds_store_findnew(p->kstore, found.path, NULL);
		ds__found_release(&found);
	} else if (ds_build_id_format(bid, hex, sizeof(hex)) >= 0 &&
		   ds__cache_lookup(&p->ctx->cache, bid, hex, DS_ARTIFACT_DEBUGINFO, "debuginfo",
				    &path) == 0) {
		dso = ds_store_findnew(p->kstore, path, NULL);
		free(path);
	}
	return dso;
}

/* The recorded kernel's vmlinux, with DWARF and perf's reference symbol
 * (vmlinux_shift set), once: perf's -k (its build ID the recorded one),
 * else one of perf's places for the recorded release, else (for lines) the
 * kernel's build ID on this machine (local_kernel).  perf looks for it
 * the same way before it takes kallsyms. */
static struct ds_dso *profile_vmlinux(struct ds_profile *p, const struct ds_perf_dso *d)
{
	const char *ref = d->ref_symbol ? d->ref_symbol : "_text", *host, *release;
	struct ds_dso *dso = NULL;
	char path[PATH_MAX];
	uint64_t link = 0;

	if (p->vmlinux_tried)
		return p->vmlinux;
	p->vmlinux_tried = true;
	if (!p->kstore && !(p->kstore = ds_store_new(p->ctx, "kernel", NULL)))
		return NULL;
	if (p->vmlinux_path) {
		char have[2 * DS_BUILD_ID_MAX + 1], want[2 * DS_BUILD_ID_MAX + 1];
		struct ds_build_id b;
		int err = ds_build_id_read_file(p->vmlinux_path, &b);

		if (err == -ENODATA && !d->build_id.size) {
			; /* nothing to check it by, as perf */
		} else if (err) {
			warnf(p, DS_LOG_WARN, "%s: %s", p->vmlinux_path, ds_strerror(err));
			return NULL;
		} else if (d->build_id.size && !ds_build_id_equal(&b, &d->build_id)) {
			ds_build_id_format(&b, have, sizeof(have));
			ds_build_id_format(&d->build_id, want, sizeof(want));
			warnf(p, DS_LOG_WARN, "%s: not the recorded kernel (build ID %s, recorded %s)",
			      p->vmlinux_path, have, want);
			return NULL;
		}
		dso = ds_store_findnew(p->kstore, p->vmlinux_path, NULL);
	} else {
		ds__perf_session_host(p->s, &host, &release);
		if (ds__vmlinux_place(p->ctx, release, &d->build_id, path, sizeof(path)))
			dso = ds_store_findnew(p->kstore, path, NULL);
		else if (d->build_id.size && (p->flags & DS_PROFILE_LINES))
			dso = local_kernel(p, &d->build_id);
	}
	if (!(p->vmlinux = ds__vmlinux_usable(p->ctx, dso, ref, &link))) {
		if (p->vmlinux_path)
			warnf(p, DS_LOG_WARN, "%s: no DWARF, or no %s symbol", p->vmlinux_path, ref);
		return NULL;
	}
	p->vmlinux_shift = d->ref_address ? d->ref_address - link : 0;
	return p->vmlinux;
}

/* The vmlinux's answers for the kernel's locations (recorded addresses
 * moved to link-time ones): frames with lines, and names where kallsyms
 * gave none (or always, given -k: perf names from the vmlinux then). */
static int vmlinux_names(struct ds_profile *p, struct ds_dso *dso, const uint32_t *v, size_t n)
{
	bool lines = p->flags & DS_PROFILE_LINES;
	const struct ds_sym_answer *res;
	uint64_t *addrs;
	size_t nres = 0;
	int rc;

	if (!p->batch && !(p->batch = ds_sym_batch_new()))
		return -ENOMEM;
	if (!(addrs = malloc(n * sizeof(*addrs))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		addrs[i] = p->locs[v[i]].ip - p->vmlinux_shift;
	rc = ds_dso_symbolize_batch(dso, addrs, n, sym_flags(p), p->batch);
	free(addrs);
	if (rc < 0)
		return rc == -ENOMEM ? rc : 0;
	res = ds_sym_batch_answers(p->batch, &nres);
	for (size_t i = 0; i < n && i < nres; i++) {
		struct ds_profile_loc *l = &p->locs[v[i]];
		const struct ds_sym_answer *a = &res[i];
		const struct ds_frame *out;

		if (a->status != DS_SYM_FOUND || !a->nframes)
			continue;
		out = &a->frames[a->nframes - 1];
		if (out->function && (!l->function || p->vmlinux_path)) {
			if (!(l->function = strtab_intern(&p->strs, out->function, out->function_len)))
				return -ENOMEM;
			l->function_start = out->function_start + p->vmlinux_shift;
		}
		if (lines && (rc = keep_frames(p, l, a, p->vmlinux_shift)) < 0)
			return rc;
	}
	return 0;
}

/* A module's DWARF where it is now (address + delta), for lines. */
static int module_lines(struct ds_profile *p, const char *mod, uint64_t delta, const uint32_t *v,
			size_t n)
{
	if (!p->kstore && !(p->kstore = ds_store_new(p->ctx, "kernel", NULL)))
		return 0;
	if (!p->kern && !(p->kern = ds_kernel_new(p->kstore, NULL)))
		return -ENOMEM;
	if (!p->batch && !(p->batch = ds_sym_batch_new()))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct ds_profile_loc *l = &p->locs[v[i]];
		const struct ds_sym_answer *a;
		int rc;

		if (!ds__kernel_module_dwarf(p->kern, mod, l->ip + delta, sym_flags(p), p->batch, &a))
			continue;
		if ((rc = keep_frames(p, l, a, (uint64_t)0 - delta)) < 0)
			return rc;
	}
	return 0;
}

static int name_kernel(struct ds_profile *p, size_t di, const uint32_t *v, size_t n)
{
	const struct ds_perf_dso *d = &p->dsos[di];
	bool vmlinux = !strcmp(d->path, "[kernel.kallsyms]");
	uint64_t delta = 0;
	char mod[64] = "";
	bool named;

	kernel_wait(p);
	named = p->kernel_named && d->machine && !strcmp(d->machine, "host");
	if (named && !vmlinux)
		named = module_delta(p, d, mod, sizeof(mod), &delta);
	else if (named)
		delta = p->kdelta;
	for (size_t i = 0; named && vmlinux && i < n; i++)
		if (!ds__kallsyms_covers(p->ksyms, p->locs[v[i]].ip + delta)) {
			kernel_all(p);
			named = p->kernel_named;
			delta = p->kdelta;
			break;
		}
	for (size_t i = 0; i < n; i++) {
		struct ds_profile_loc *l = &p->locs[v[i]];
		/* Looked up where it is in this boot; shown as recorded. */
		uint64_t start = 0;
		const char *in = NULL;
		const char *name = named ? ds__kallsyms_find_mod(p->ksyms, l->ip + delta, &start, &in)
					 : NULL;

		l->vaddr = l->ip;
		if (name && !vmlinux && (!in || strcmp(in, mod)))
			name = NULL; /* past the module's symbols: another's */
		if (name) {
			l->function = name;
			l->function_start = start - delta;
		}
	}
	if (vmlinux && d->machine && !strcmp(d->machine, "host") &&
	    ((p->flags & DS_PROFILE_LINES) || !named || p->vmlinux_path)) {
		struct ds_dso *dso = profile_vmlinux(p, d);

		if (dso)
			return vmlinux_names(p, dso, v, n);
	} else if (named && !vmlinux && (p->flags & DS_PROFILE_LINES)) {
		return module_lines(p, mod, delta, v, n);
	}
	if (!named)
		kernel_unnamed(p);
	return 0;
}

/* --------------------------------------------------------------- vDSO */

/* The vDSO is no file: perf names its samples only when it has its image,
 * and so do we.  With a build ID, the copy perf record put in perf's cache
 * (DIR/.build-id/xx/rest/vdso, DIR the context's perf build-id dir:
 * $PERF_BUILDID_DIR, perf's buildid.dir, ~/.debug; not with -N); without one (pipe mode,
 * -z), the running kernel's, when the recording's host and release are
 * this machine's: this process's own vDSO, copied into a memfd. */
static const char *vdso_image(struct ds_profile *p, const struct ds_perf_dso *d, char *path,
			      size_t len)
{
	const unsigned char *img = (const void *)getauxval(AT_SYSINFO_EHDR);
	const ElfW(Ehdr) *eh = (const void *)img;
	const char *dir = p->ctx->perf_buildid_dir;
	size_t size;
	char hex[2 * DS_BUILD_ID_MAX + 1];

	if (d->build_id.size) {
		struct stat st;

		if (!dir || ds_build_id_format(&d->build_id, hex, sizeof(hex)) < 0)
			return NULL;
		snprintf(path, len, "%s/.build-id/%.2s/%s/vdso", dir, hex, hex + 2);
		return stat(path, &st) == 0 ? path : NULL;
	}
	if (!img || !same_host_and_release(p) || memcmp(img, ELFMAG, SELFMAG))
		return NULL;
	/* The image: up to the section headers (the kernel maps them too). */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size < sizeof(*eh) || size > (1u << 20))
		return NULL;
	p->vdso_fd = memfd_create("vdso", MFD_CLOEXEC);
	if (p->vdso_fd < 0 || write(p->vdso_fd, img, size) != (ssize_t)size)
		return NULL;
	snprintf(path, len, "/proc/self/fd/%d", p->vdso_fd);
	return path;
}

static struct ds_dso *vdso_dso(struct ds_profile *p, const struct ds_perf_dso *d)
{
	char buf[PATH_MAX];
	const char *path;

	if (p->vdso_tried)
		return p->vdso;
	p->vdso_tried = true;
	path = vdso_image(p, d, buf, sizeof(buf));
	if (!path)
		return NULL;
	p->vdso_store = ds_store_new(p->ctx, "vdso", NULL);
	p->vdso = p->vdso_store ? ds_store_findnew(p->vdso_store, path, NULL) : NULL;
	return p->vdso;
}

/* ---------------------------------------------------------- user space */

/* The frames of an answer, kept: strings interned, frames in one array
 * (indexes until the array stops moving), function starts plus shift (the
 * kernel's: from where DWARF has them to where they were recorded). */
static int keep_frames(struct ds_profile *p, struct ds_profile_loc *l, const struct ds_sym_answer *a,
		       uint64_t shift)
{
	size_t at = p->nframes;

	for (size_t i = 0; i < a->nframes; i++) {
		struct ds_frame f = a->frames[i];
		struct ds_frame *v = ds__grow(p->frames, &p->framecap, p->nframes, sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->frames = v;
		if (f.function && !(f.function = strtab_intern(&p->strs, f.function, f.function_len)))
			return -ENOMEM;
		if (f.file && !(f.file = strtab_intern(&p->strs, f.file, f.file_len)))
			return -ENOMEM;
		if (f.function_start)
			f.function_start += shift;
		p->frames[p->nframes++] = f;
	}
	l->frames = (const struct ds_frame *)(uintptr_t)at;
	l->nframes = a->nframes;
	return 0;
}

/* Names alone are asked a slice of a DSO's addresses at a time, so that
 * the batch's arrays (its answers, their frames and strings: some 50
 * bytes an address, kept with the profile) are a slice's, not the DSO's
 * (cc1's 140k addresses in a -g recording of gcc: 7 MB at the peak of
 * report --folded).  With lines, one batch: the CUs its addresses need
 * are built ahead of it on all cores (ds__symbols_prepare()). */
#define NAMES_SLICE 8192

static int name_user(struct ds_profile *p, size_t di, const uint32_t *v, size_t n)
{
	const struct ds_perf_dso *d = &p->dsos[di];
	struct ds_dso *dso = d->dso;
	bool lines = p->flags & DS_PROFILE_LINES;
	unsigned flags = DS_SYM_FILE_OFFSET | sym_flags(p);
	size_t slice = lines || n < NAMES_SLICE ? n : NAMES_SLICE;
	uint64_t *addrs;
	int rc = 0;

	if (d->path && !strcmp(d->path, "[vdso]"))
		dso = vdso_dso(p, d);
	if (!dso || !n)
		return 0;
	if (!p->batch && !(p->batch = ds_sym_batch_new()))
		return -ENOMEM;
	if (!(addrs = malloc(slice * sizeof(*addrs))))
		return -ENOMEM;
	for (size_t at = 0, m; at < n && !rc; at += m) {
		const struct ds_sym_answer *res;
		size_t nres = 0;

		m = n - at < slice ? n - at : slice;
		for (size_t i = 0; i < m; i++)
			addrs[i] = p->locs[v[at + i]].ip;
		rc = ds_dso_symbolize_batch(dso, addrs, m, flags, p->batch);
		if (rc < 0) {
			char why[512] = "";

			if (rc == -ENOMEM)
				break;
			/* the DSO's symbols cannot be read: said once, its
			 * addresses left unnamed */
			ds_dso_error(dso, why, sizeof(why));
			warnf(p, DS_LOG_INFO, "%s: no symbols: %s%s%s", d->path, ds_strerror(rc),
			      why[0] ? ": " : "", why);
			rc = 0;
			break;
		}
		rc = 0;
		res = ds_sym_batch_answers(p->batch, &nres);
		for (size_t i = 0; i < m && i < nres && !rc; i++) {
			struct ds_profile_loc *l = &p->locs[v[at + i]];
			const struct ds_sym_answer *a = &res[i];

			l->vaddr = a->addr;
			if (a->nframes && a->frames[a->nframes - 1].function) {
				const struct ds_frame *out = &a->frames[a->nframes - 1];

				l->function = strtab_intern(&p->strs, out->function,
							    out->function_len);
				if (!l->function)
					rc = -ENOMEM;
				l->function_start = out->function_start;
			}
			if (!rc && lines)
				rc = keep_frames(p, l, a, 0);
		}
	}
	free(addrs);
	return rc < 0 ? rc : 0;
}

/* A process's anonymous code (the session maps it as /tmp/perf-PID.map,
 * addresses as they were): named from the perf map a JIT wrote there, read
 * from this machine's /tmp as perf report reads it; without one, the
 * addresses stay unnamed. */
static int name_perfmap(struct ds_profile *p, size_t di, const uint32_t *v, size_t n)
{
	const struct ds_perf_dso *d = &p->dsos[di];
	struct ds__perfmap pm;
	struct stat st;
	char why[160];
	int rc = ds__perfmap_load(d->path, (uid_t)-1, &pm, &st, why, sizeof(why));

	if (rc == -ENOMEM)
		return rc;
	if (rc) {
		/* Refused (whose map is taken: normalize.c): a warning, as
		 * older perf's "not owned by current user or root, ignoring
		 * it"; the addresses stay unnamed. */
		if (rc == -EACCES || rc == -ELOOP || rc == -EFBIG)
			warnf(p, DS_LOG_WARN, "perf map %s: %s; not used", d->path, why);
		else if (rc != -ENOENT)
			warnf(p, DS_LOG_INFO, "%s: %s", d->path, why[0] ? why : ds_strerror(rc));
		return 0;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		struct ds_profile_loc *l = &p->locs[v[i]];
		const struct ds__perfmap_sym *sym = ds__perfmap_find(&pm, l->ip);

		l->vaddr = l->ip;
		if (!sym)
			continue;
		l->function = strtab_intern(&p->strs, sym->name, strlen(sym->name));
		l->function_start = sym->start;
		if (!l->function)
			rc = -ENOMEM;
	}
	ds__perfmap_release(&pm);
	return rc;
}

static int by_dso_ip(const void *x, const void *y, void *arg)
{
	const struct ds_profile_loc *locs = arg;
	const struct ds_profile_loc *a = &locs[*(const uint32_t *)x], *b = &locs[*(const uint32_t *)y];

	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

static int name_all(struct ds_profile *p)
{
	uint32_t *v = malloc((p->nlocs ? p->nlocs : 1) * sizeof(*v));
	int rc = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nlocs; i++)
		v[i] = (uint32_t)i;
	qsort_r(v, p->nlocs, sizeof(*v), by_dso_ip, p->locs);
	/* User space first: /proc/kallsyms is read by a thread meanwhile. */
	for (int kernel = 0; kernel < 2; kernel++)
		for (size_t i = 0, j; i < p->nlocs && !rc; i = j) {
			size_t di = p->locs[v[i]].dso;

			for (j = i; j < p->nlocs && p->locs[v[j]].dso == di; j++)
				;
			if (di == SIZE_MAX || p->dsos[di].kernel != kernel)
				continue;
			if (kernel)
				rc = name_kernel(p, di, v + i, j - i);
			else if (p->dsos[di].path && perf_map_pid(p->dsos[di].path, &(int){ 0 }))
				rc = name_perfmap(p, di, v + i, j - i);
			else
				rc = name_user(p, di, v + i, j - i);
		}
	free(v);
	return rc;
}

/* ---------------------------------------------------------------- API */

DS_API void ds_profile_free(struct ds_profile *p)
{
	if (!p)
		return;
	if (p->kthread_on)
		pthread_join(p->kthread, NULL);
	for (size_t i = 0; i < p->ndsos && p->short_names; i++)
		free(p->short_names[i]);
	free(p->short_names);
	free(p->locs);
	free(p->loc_slots);
	free(p->samples);
	free(p->stacks);
	free(p->stack_slots);
	free(p->ids);
	free(p->ips);
	free(p->modes);
	free(p->frames);
	strtab_release(&p->strs);
	ds__kallsyms_free(p->ksyms);
	ds__kallsyms_free(p->ksyms_cached);
	ds_sym_batch_free(p->batch);
	ds_dso_put(p->vdso);
	ds_store_free(p->vdso_store);
	ds_kernel_free(p->kern);
	ds_dso_put(p->vmlinux);
	ds_store_free(p->kstore);
	free(p->vmlinux_path);
	if (p->vdso_fd > 0)
		close(p->vdso_fd);
	if (p->own_session)
		ds_perf_session_free(p->s);
	free(p);
}

static struct ds_profile *profile_alloc(const struct ds_profile_opts *opts)
{
	struct ds_profile *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->flags = DS_OPT(opts, flags, 0u);
	p->warn = DS_OPT(opts, warn, NULL);
	p->warn_user = DS_OPT(opts, warn_user, NULL);
	p->stack = DS_OPT(opts, stack, NULL);
	p->stack_user = DS_OPT(opts, stack_user, NULL);
	p->vdso_fd = -1;
	if (DS_OPT(opts, vmlinux, NULL) && !(p->vmlinux_path = strdup(opts->vmlinux))) {
		free(p);
		return NULL;
	}
	return p;
}

/* The samples are in: the hash tables go (nothing is added now), the
 * arrays shrink to their size, offsets into them become pointers, and
 * the DSOs get their short names.  0 or -ENOMEM. */
static int collected(struct ds_profile *p)
{
	free(p->loc_slots);
	free(p->stack_slots);
	p->loc_slots = p->stack_slots = NULL;
	if (p->nids) {
		uint32_t *ids = realloc(p->ids, p->nids * sizeof(*ids));
		uint64_t *ips = realloc(p->ips, p->nids * sizeof(*ips));
		uint16_t *modes = realloc(p->modes, p->nids * sizeof(*modes));

		p->ids = ids ? ids : p->ids;
		p->ips = ips ? ips : p->ips;
		p->modes = modes ? modes : p->modes;
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		size_t at = p->stacks[i].at;

		p->samples[i].locs = p->ids + at;
		p->samples[i].ips = p->ips + at;
		p->samples[i].cpumodes = p->modes + at;
	}
	free(p->stacks);
	p->stacks = NULL;
	/* The DSOs' short names (the session's DSOs are all known now). */
	if (!(p->short_names = calloc(p->ndsos ? p->ndsos : 1, sizeof(*p->short_names))))
		return -ENOMEM;
	for (size_t i = 0; i < p->ndsos; i++)
		if (!(p->short_names[i] = short_name(&p->dsos[i])))
			return -ENOMEM;
	return 0;
}

DS_API struct ds_profile *ds_profile_open(struct ds_context *ctx, const struct ds_perf_data *pd,
					  const struct ds_perf_session_opts *sopts,
					  const struct ds_profile_opts *opts, char *err,
					  size_t errlen)
{
	struct ds_profile *p;
	const uint32_t *rank;
	int rc;

	if (!ctx || !pd) {
		errno = EINVAL;
		return NULL;
	}
	if (!(p = profile_alloc(opts)))
		return NULL;
	p->ctx = ctx;
	p->s = ds__perf_session_stream(ctx, pd, sopts, on_sample, p, err, errlen);
	if (!p->s) {
		rc = -errno;
		goto fail;
	}
	p->own_session = true;
	rc = -ENOMEM;
	if (p->err)
		goto fail;
	p->ndsos = ds_perf_session_dsos(p->s, &p->dsos);
	/* The session's own DSO numbers, which it gave while replaying, in
	 * the order of ds_perf_session_dsos(). */
	rank = ds__perf_session_rank(p->s);
	for (size_t i = 0; i < p->nlocs; i++)
		if (p->locs[i].dso != SIZE_MAX)
			p->locs[i].dso = rank[p->locs[i].dso];
	rc = collected(p);
	if (rc)
		goto fail;
	return p;
fail:
	ds_profile_free(p);
	errno = rc < 0 ? -rc : ENOMEM;
	return NULL;
}

DS_API struct ds_perf_session *ds_profile_session(const struct ds_profile *p)
{
	return p ? p->s : NULL;
}

DS_API int ds_profile_resolve(struct ds_profile *p)
{
	int rc;

	if (!p)
		return -EINVAL;
	if (p->resolved)
		return p->resolve_err; /* once, whatever came of it */
	p->resolved = true;
	kernel_start(p);
	rc = name_all(p);
	kernel_wait(p);
	if (rc) {
		/* No frames rather than offsets that are no pointers. */
		for (size_t i = 0; i < p->nlocs; i++) {
			p->locs[i].frames = NULL;
			p->locs[i].nframes = 0;
		}
		return p->resolve_err = rc;
	}
	/* Offsets into the frames become pointers: nothing moves now. */
	for (size_t i = 0; i < p->nlocs; i++)
		p->locs[i].frames = p->locs[i].nframes
					    ? p->frames + (uintptr_t)p->locs[i].frames
					    : NULL;
	return 0;
}

DS_API struct ds_profile *ds_profile_new(struct ds_perf_session *s,
					 const struct ds_profile_opts *opts)
{
	struct ds_profile *p;
	int rc;

	if (!s) {
		errno = EINVAL;
		return NULL;
	}
	if (!(p = profile_alloc(opts)))
		return NULL;
	p->s = s;
	p->ctx = ds__perf_session_context(s);
	p->ndsos = ds_perf_session_dsos(s, &p->dsos);
	rc = ds_perf_session_samples(s, on_sample, p);
	if (p->err)
		rc = p->err;
	if (!rc)
		rc = collected(p);
	if (rc)
		goto fail;
	rc = ds_profile_resolve(p);
	if (rc)
		goto fail;
	return p;
fail:
	ds_profile_free(p);
	errno = rc < 0 ? -rc : ENOMEM;
	return NULL;
}

DS_API size_t ds_profile_samples(const struct ds_profile *p, const struct ds_profile_sample **out)
{
	*out = p ? p->samples : NULL;
	return p ? p->nsamples : 0;
}

DS_API bool ds_profile_times(const struct ds_profile *p, uint64_t *first, uint64_t *last)
{
	*first = p && p->any_time ? p->first_time : 0;
	*last = p && p->any_time ? p->last_time : 0;
	return p && p->any_time;
}

DS_API size_t ds_profile_locs(const struct ds_profile *p, const struct ds_profile_loc **out)
{
	*out = p ? p->locs : NULL;
	return p ? p->nlocs : 0;
}
