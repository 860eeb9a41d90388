/* SPDX-License-Identifier: MIT */
/*
 * A perf recording replayed as perf report replays it: the records of
 * lib/perfdata.c in time order; each machine (the host, each guest) with
 * its kernel maps and its processes' maps (MMAP, MMAP2, FORK copying the
 * parent's, a new mapping replacing what it overlaps); every DSO put into
 * its machine's store; each sample decoded through its attr's sample_type
 * and its IP and callchain resolved to (DSO, file offset).
 *
 * DSOs are told apart as perf 6.1's dsos__findnew_id does: by path within
 * a machine, two at one path when their build IDs or inodes differ.  A
 * DSO's build ID: the header's table, else its MMAP2 event, else the file
 * at its path on this machine when it is the file that was mapped (the
 * same inode number, when the recording names it); a mapped file without
 * a build ID is put into the store by its path.
 */
#define _GNU_SOURCE
#include "perf.h"
#include "perfdata.h"
#include "unwind.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#define HOST_PID (-1)
/* Callchain context markers (PERF_CONTEXT_*): entries at or above MAX. */
#define CONTEXT_HV ((uint64_t)-32)
#define CONTEXT_KERNEL ((uint64_t)-128)
#define CONTEXT_USER ((uint64_t)-512)
#define CONTEXT_GUEST ((uint64_t)-2048)
#define CONTEXT_GUEST_KERNEL ((uint64_t)-2176)
#define CONTEXT_GUEST_USER ((uint64_t)-2560)
#define CONTEXT_MAX ((uint64_t)-4095)

enum { CPUMODE_KERNEL = 1, CPUMODE_USER = 2, CPUMODE_HV = 3, CPUMODE_GUEST_KERNEL = 4,
       CPUMODE_GUEST_USER = 5 };

struct map {
	uint64_t start, end, pgoff;
	uint32_t dso; /* index into s->dsos */
};

struct maps {
	struct map *v;
	size_t n, cap;
	uint64_t gen; /* changes with every insert and copy (the unwinder's check) */
};

/* A process (its maps) or a thread (its name), by pid or tid. */
struct proc {
	int32_t pid;
	struct maps maps;
	const char *comm; /* threads: the name of its last COMM; in s->comms */
	struct proc *next;
};

struct ptab {
	struct proc **b;
	size_t n, mask;
};

struct machine {
	int32_t pid; /* HOST_PID, or the guest's */
	char name[24];
	struct ds_store *store;
	struct maps kmaps; /* the kernel and its modules */
	struct ptab procs, threads;
};

/* A DSO of the recording while replaying; made public at the end. */
struct pdso {
	struct ds_perf_dso pub;
	char *path;
	char *ref_symbol;
	unsigned int machine;
	bool has_inode;
	uint32_t maj, min;
	uint64_t ino;
	uint32_t next; /* same path hash chain; UINT32_MAX ends it */
	bool mapped_file; /* path on this machine is the file recorded */
	bool unwind_looked; /* unwind_path is what there is */
	char *unwind_path; /* the file the unwinder reads (lib/unwind.c) */
};

struct sample {
	uint64_t time, ip, period, addr, id, offset;
	int32_t pid, tid;
	uint32_t cpu, dso;
	uint16_t cpumode;
	uint16_t nunwound; /* the callchain's last entries from unwind_sample() */
	unsigned int attr;
	const char *comm;
	size_t cc, ncc; /* callchain: [cc, cc + ncc) of the cc_* arrays */
};

struct ds_perf_session {
	struct ds_context *ctx;
	bool local_bids;
	struct ds_store_opts store_opts;
	bool have_store_opts;

	struct machine *machines;
	unsigned int nmachines;

	struct pdso *dsos;
	size_t ndsos, dsos_cap;
	uint32_t *dso_hash; /* path hash -> first pdso; UINT32_MAX empty */
	size_t dso_mask;

	struct sample *samples;
	size_t nsamples, samples_cap;
	char **comms; /* every thread name seen */
	size_t ncomms, comms_cap;
	uint64_t *cc_ip, *cc_off;
	size_t *cc_dso;
	uint16_t *cc_mode;
	size_t ncc, cc_cap;

	struct ds_perf_dso *pub; /* final order */
	char *hostname, *osrelease; /* the recording's; NULL: not recorded */
	/* Streaming (ds__perf_session_stream()): each sample handed over as
	 * it is replayed, not kept. */
	ds_perf_sample_fn stream;
	void *stream_user;
	/* --call-graph dwarf samples: their user stacks (lib/unwind.c). */
	struct ds__unwind *unwind;
	uint64_t *unwind_ips; /* unwind_max of them */
	size_t unwind_max;
	uint32_t *rank; /* internal DSO index -> public, after publish() */
	const struct ds_perf_data *p; /* during ds_perf_session_new only */
	char *err;
	size_t errlen;
};

static int fail(struct ds_perf_session *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void sample_out(const struct ds_perf_session *s, const struct sample *sm,
		       struct ds_perf_sample *out);

static int fail(struct ds_perf_session *s, int code, const char *fmt, ...)
{
	va_list ap;

	if (s->err && s->errlen) {
		va_start(ap, fmt);
		vsnprintf(s->err, s->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static uint64_t hash_str(const char *str, unsigned int machine)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ machine;

	for (; *str; str++)
		h = (h ^ (unsigned char)*str) * 0x100000001b3ULL;
	return h ^ (h >> 29);
}

/* ------------------------------------------------------------ machines */

static struct machine *machine_of(struct ds_perf_session *s, int32_t pid)
{
	struct machine *m, *nv;
	char name[24];

	for (unsigned i = 0; i < s->nmachines; i++)
		if (s->machines[i].pid == pid)
			return &s->machines[i];
	if (pid == HOST_PID)
		snprintf(name, sizeof(name), "host");
	else
		snprintf(name, sizeof(name), "guest/%d", pid);
	nv = reallocarray(s->machines, s->nmachines + 1, sizeof(*nv));
	if (!nv)
		return NULL;
	s->machines = nv;
	m = &s->machines[s->nmachines];
	memset(m, 0, sizeof(*m));
	m->pid = pid;
	memcpy(m->name, name, sizeof(name));
	m->store = ds_store_new(s->ctx, name, s->have_store_opts ? &s->store_opts : NULL);
	if (!m->store)
		return NULL;
	s->nmachines++;
	return m;
}

static struct proc *proc_find(const struct ptab *t, int32_t pid)
{
	if (!t->b)
		return NULL;
	for (struct proc *p = t->b[(uint32_t)pid & t->mask]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

static struct proc *proc_findnew(struct ptab *t, int32_t pid)
{
	struct proc *p = proc_find(t, pid);

	if (p)
		return p;
	if (t->n >= t->mask) { /* keep the load under 1 */
		size_t nmask = t->mask ? 2 * t->mask + 1 : 63;
		struct proc **nb = calloc(nmask + 1, sizeof(*nb));

		if (!nb)
			return NULL;
		for (size_t b = 0; t->b && b <= t->mask; b++) {
			for (struct proc *q = t->b[b], *next; q; q = next) {
				next = q->next;
				q->next = nb[(uint32_t)q->pid & nmask];
				nb[(uint32_t)q->pid & nmask] = q;
			}
		}
		free(t->b);
		t->b = nb;
		t->mask = nmask;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->next = t->b[(uint32_t)pid & t->mask];
	t->b[(uint32_t)pid & t->mask] = p;
	t->n++;
	return p;
}

static void ptab_release(struct ptab *t)
{
	for (size_t b = 0; t->b && b <= t->mask; b++) {
		for (struct proc *p = t->b[b], *next; p; p = next) {
			next = p->next;
			free(p->maps.v);
			free(p);
		}
	}
	free(t->b);
}

/* ---------------------------------------------------------------- maps */

static const struct map *maps_find(const struct maps *ms, uint64_t addr)
{
	size_t lo = 0, hi = ms->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ms->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ms->n && ms->v[lo].start <= addr ? &ms->v[lo] : NULL;
}

/* Insert, cutting away what the new map overlaps (a new mapping replaces
 * the old one there, as the kernel did; what is left of an old map keeps
 * its file offsets). */
static int maps_insert(struct maps *ms, struct map nm)
{
	size_t i = 0, j, k;
	struct map left = { 0 }, right = { 0 };
	bool has_left = false, has_right = false;

	if (nm.end <= nm.start)
		return 0;
	while (i < ms->n && ms->v[i].end <= nm.start)
		i++;
	j = i;
	while (j < ms->n && ms->v[j].start < nm.end)
		j++;
	/* [i, j) overlap the new map. */
	if (i < j && ms->v[i].start < nm.start) {
		left = ms->v[i];
		left.end = nm.start;
		has_left = true;
	}
	if (i < j && ms->v[j - 1].end > nm.end) {
		right = ms->v[j - 1];
		right.pgoff += nm.end - right.start;
		right.start = nm.end;
		has_right = true;
	}
	k = has_left + 1 + has_right; /* what replaces [i, j) */
	if (ms->n - (j - i) + k > ms->cap) {
		size_t ncap = ms->cap ? 2 * ms->cap : 16;
		struct map *nv;

		while (ncap < ms->n - (j - i) + k)
			ncap *= 2;
		nv = reallocarray(ms->v, ncap, sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		ms->v = nv;
		ms->cap = ncap;
	}
	memmove(&ms->v[i + k], &ms->v[j], (ms->n - j) * sizeof(*ms->v));
	ms->n = ms->n - (j - i) + k;
	ms->gen++;
	if (has_left)
		ms->v[i++] = left;
	ms->v[i++] = nm;
	if (has_right)
		ms->v[i] = right;
	return 0;
}

static int maps_copy(struct maps *dst, const struct maps *src)
{
	struct map *v = NULL;

	if (src->n) {
		v = malloc(src->n * sizeof(*v));
		if (!v)
			return -ENOMEM;
		memcpy(v, src->v, src->n * sizeof(*v));
	}
	free(dst->v);
	dst->v = v;
	dst->n = dst->cap = src->n;
	dst->gen++;
	return 0;
}

/* ---------------------------------------------------------------- DSOs */

/* Names that are not files: anonymous memory, heap, stack, JIT maps... */
static bool is_special(const char *path)
{
	static const char *const prefixes[] = { "//", "[", "/dev/zero", "/anon_hugepage",
						"/SYSV", "/memfd:", "/dev/dri/", "/tmp/perf-" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	return path[0] != '/' || strstr(path, " (deleted)") != NULL;
}

/* perf's is_anon_memory() and is_no_dso_memory(). */
static bool is_perf_anon(const char *path)
{
	return !strcmp(path, "//anon") || !strncmp(path, "/dev/zero", 9) ||
	       !strncmp(path, "/anon_hugepage", 14) || !strncmp(path, "[stack", 6) ||
	       !strncmp(path, "/SYSV", 5) || !strcmp(path, "[heap]");
}

static bool is_kernel_name(const char *path)
{
	return !strncmp(path, "[kernel.kallsyms]", 17) ||
	       !strncmp(path, "[guest.kernel.kallsyms", 22);
}

struct dso_key {
	const char *path;
	unsigned int machine;
	uint16_t cpumode;
	const struct ds_build_id *bid; /* known from the table or the event */
	enum ds_perf_bid_source src;
	bool has_inode;
	uint32_t maj, min;
	uint64_t ino;
};

static bool dso_matches(const struct pdso *d, const struct dso_key *k)
{
	if (d->machine != k->machine || strcmp(d->path, k->path))
		return false;
	if (k->bid && d->pub.build_id.size && !ds_build_id_equal(k->bid, &d->pub.build_id))
		return false;
	if (k->has_inode && d->has_inode &&
	    (d->ino != k->ino || d->maj != k->maj || d->min != k->min))
		return false;
	return true;
}

static int dso_hash_add(struct ds_perf_session *s, uint32_t idx)
{
	if (s->ndsos * 2 > s->dso_mask) {
		size_t nmask = s->dso_mask ? 2 * s->dso_mask + 1 : 255;
		uint32_t *nh = malloc((nmask + 1) * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		memset(nh, 0xff, (nmask + 1) * sizeof(*nh));
		free(s->dso_hash);
		s->dso_hash = nh;
		s->dso_mask = nmask;
		for (uint32_t i = 0; i < s->ndsos; i++) {
			struct pdso *d = &s->dsos[i];
			size_t b = hash_str(d->path, d->machine) & nmask;

			d->next = nh[b];
			nh[b] = i;
		}
		return 0; /* idx (< ndsos) went in with the others */
	}
	{
		struct pdso *d = &s->dsos[idx];
		size_t b = hash_str(d->path, d->machine) & s->dso_mask;

		d->next = s->dso_hash[b];
		s->dso_hash[b] = idx;
	}
	return 0;
}

/* Whether the file at path on this machine is the one the recording
 * mapped. */
static bool local_file(const struct dso_key *k)
{
	struct stat st;

	if (stat(k->path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	/* The inode number only: the device a stat() reports can differ from
	 * the one the kernel put in MMAP2 (btrfs subvolumes, overlayfs). */
	return !k->has_inode || !k->ino || st.st_ino == k->ino;
}

/* The DSO for a key, created when new.  Returns its index or -errno. */
static int64_t dso_findnew(struct ds_perf_session *s, const struct dso_key *k)
{
	struct machine *m = &s->machines[k->machine];
	struct ds_dso_id id = { 0 };
	struct pdso *d, *nv;
	bool special, mapped_file = false;
	int rc;

	if (s->dso_hash) {
		uint32_t i = s->dso_hash[hash_str(k->path, k->machine) & s->dso_mask];

		for (; i != UINT32_MAX; i = s->dsos[i].next) {
			d = &s->dsos[i];
			if (!dso_matches(d, k))
				continue;
			/* It learns what it lacked (a build ID from MMAP2). */
			if (k->bid && !d->pub.build_id.size) {
				d->pub.build_id = *k->bid;
				d->pub.build_id_source = k->src;
			}
			return i;
		}
	}
	if (s->ndsos >= UINT32_MAX - 1)
		return -E2BIG;
	nv = ds__grow(s->dsos, &s->dsos_cap, s->ndsos, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->dsos = nv;
	d = &s->dsos[s->ndsos];
	memset(d, 0, sizeof(*d));
	d->path = strdup(k->path);
	if (!d->path)
		return -ENOMEM;
	d->machine = k->machine;
	d->has_inode = k->has_inode;
	d->maj = k->maj;
	d->min = k->min;
	d->ino = k->ino;
	d->pub.cpumode = k->cpumode;
	d->pub.kernel = k->cpumode == CPUMODE_KERNEL || k->cpumode == CPUMODE_GUEST_KERNEL ||
			is_kernel_name(k->path);
	if (k->bid) {
		d->pub.build_id = *k->bid;
		d->pub.build_id_source = k->src;
	}
	special = is_special(k->path);
	/* The mapped file, when it is on this machine: its build ID, and
	 * without one (Go's linker writes none by default) the file itself,
	 * which perf opens by its path too. */
	if (!d->pub.build_id.size && !special && !d->pub.kernel && s->local_bids &&
	    (mapped_file = local_file(k)) && ds_build_id_read_file(k->path, &d->pub.build_id) == 0)
		d->pub.build_id_source = DS_PERF_BID_FILE;
	/* A DSO in the store: by build ID when known (a path that is no file
	 * of this machine is left out), else by a path that is the file. */
	if (d->pub.build_id.size) {
		id.flags = DS_DSO_ID_BUILD_ID;
		id.build_id = d->pub.build_id;
	}
	if ((d->pub.build_id_source == DS_PERF_BID_FILE || mapped_file) && k->has_inode && k->ino) {
		id.flags |= DS_DSO_ID_INODE;
		id.maj = k->maj;
		id.min = k->min;
		id.ino = k->ino;
	}
	d->mapped_file = mapped_file;
	if (d->pub.build_id.size || mapped_file || (!special && !d->pub.kernel && !s->local_bids)) {
		d->pub.dso = ds_store_findnew(m->store, special || d->pub.kernel ? NULL : k->path,
					      id.flags ? &id : NULL);
		if (!d->pub.dso) {
			rc = -errno;
			free(d->path);
			return rc;
		}
	}
	s->ndsos++;
	rc = dso_hash_add(s, (uint32_t)(s->ndsos - 1));
	return rc ? rc : (int64_t)(s->ndsos - 1);
}

/* ---------------------------------------------------------------- events */

static bool is_guest(uint16_t cpumode)
{
	return cpumode == CPUMODE_GUEST_KERNEL || cpumode == CPUMODE_GUEST_USER;
}

/* Which machine an event or sample belongs to: the host, or a guest by
 * pid (perf's default guest, pid 0, for a guest kernel's pid -1). */
static int32_t machine_pid(uint16_t cpumode, int32_t pid)
{
	if (!is_guest(cpumode))
		return HOST_PID;
	return pid == -1 ? 0 : pid;
}

static int do_mmap(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	const struct ds_perf_data *p = s->p;
	const unsigned char *q = r->p;
	uint16_t misc = ds__perf_rd16(p, q + 4);
	uint16_t cpumode = misc & DS__PERF_MISC_CPUMODE_MASK;
	bool mmap2 = r->type == DS__PERF_REC_MMAP2, perf_map = false;
	size_t name_at = mmap2 ? 72 : 40;
	struct ds_build_id ebid;
	struct dso_key k = { 0 };
	struct machine *m;
	struct map nm;
	int32_t pid;
	char path[4096], ref[64] = "";
	size_t n;
	int64_t idx;

	if (r->size < name_at + 1)
		return fail(s, -EBADMSG, "%s record at offset %llu: size %u",
			    mmap2 ? "MMAP2" : "MMAP", (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(p, q + 8);
	nm.start = ds__perf_rd64(p, q + 16);
	nm.end = nm.start + ds__perf_rd64(p, q + 24);
	nm.pgoff = ds__perf_rd64(p, q + 32);
	if (nm.end < nm.start)
		nm.end = UINT64_MAX; /* the kernel map runs to the end */
	n = strnlen((const char *)q + name_at, r->size - name_at);
	if (n == r->size - name_at || n >= sizeof(path))
		return fail(s, -EBADMSG, "%s record at offset %llu: file name not terminated",
			    mmap2 ? "MMAP2" : "MMAP", (unsigned long long)r->file_off);
	memcpy(path, q + name_at, n + 1);
	/* perf's map__new(): executable anonymous memory (a JIT's code), and
	 * the heap, stacks and SysV segments, are the process's perf map,
	 * /tmp/perf-PID.map, at their addresses (what the JIT writes there). */
	/* (An MMAP has no prot: perf takes it as executable unless it is a
	 * data mapping.) */
	if (cpumode == CPUMODE_USER &&
	    (mmap2 ? (ds__perf_rd32(p, q + 64) & PROT_EXEC) != 0 : !(misc & DS__PERF_MISC_MMAP_DATA)) &&
	    (is_perf_anon(path) || (mmap2 && (ds__perf_rd32(p, q + 68) & MAP_HUGETLB)))) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		nm.pgoff = nm.start;
		perf_map = true; /* no inode or build ID tells it apart */
	}

	/* The kernel's maps belong to the machine (pid -1 on the host); a
	 * guest's events name it by pid. */
	m = machine_of(s, machine_pid(cpumode, pid));
	if (!m)
		return -ENOMEM;
	k.machine = (unsigned)(m - s->machines);
	k.cpumode = cpumode;
	k.path = path;
	if (cpumode == CPUMODE_KERNEL || cpumode == CPUMODE_GUEST_KERNEL) {
		/* "[kernel.kallsyms]_text": the DSO is "[kernel.kallsyms]", and
		 * pgoff is where _text was (perf's reference symbol). */
		if (is_kernel_name(path)) {
			char *us = strchr(path, ']');

			if (us && us[1]) {
				size_t sl = strnlen(us + 1, 64);

				if (sl < 64 && sl < sizeof(ref) && !ref[0])
					memcpy(ref, us + 1, sl + 1);
				us[1] = 0;
			}
		}
	}
	if (mmap2 && (misc & DS__PERF_MISC_MMAP_BUILD_ID)) {
		ebid.size = q[40];
		if (ebid.size == 0 || ebid.size > 20)
			return fail(s, -EBADMSG, "MMAP2 record at offset %llu: build ID size %u",
				    (unsigned long long)r->file_off, ebid.size);
		memcpy(ebid.data, q + 44, ebid.size);
		k.bid = &ebid;
		k.src = DS_PERF_BID_MMAP2;
	} else if (mmap2 && !perf_map) {
		k.has_inode = true;
		k.maj = ds__perf_rd32(p, q + 40);
		k.min = ds__perf_rd32(p, q + 44);
		k.ino = ds__perf_rd64(p, q + 48);
	}
	/* The table's DSOs were made first: the lookup finds them by path. */
	idx = dso_findnew(s, &k);
	if (idx < 0)
		return (int)idx;
	nm.dso = (uint32_t)idx;
	if (ref[0] && !s->dsos[idx].ref_symbol) {
		s->dsos[idx].ref_symbol = strdup(ref);
		if (!s->dsos[idx].ref_symbol)
			return -ENOMEM;
		s->dsos[idx].pub.ref_address = nm.pgoff;
	}
	if ((cpumode == CPUMODE_KERNEL || cpumode == CPUMODE_GUEST_KERNEL) &&
	    !is_kernel_name(path) && !s->dsos[idx].pub.map_start)
		s->dsos[idx].pub.map_start = nm.start;
	if (cpumode == CPUMODE_KERNEL || cpumode == CPUMODE_GUEST_KERNEL)
		return maps_insert(&m->kmaps, nm);
	{
		struct proc *pr = proc_findnew(&m->procs, pid);

		return pr ? maps_insert(&pr->maps, nm) : -ENOMEM;
	}
}

/* A thread's name, as its last COMM said (a FORK copies its parent's):
 * kept in s->comms, so a sample's name stays valid after a rename. */
static int do_comm(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	const struct ds_perf_data *p = s->p;
	uint16_t cpumode = ds__perf_rd16(p, r->p + 4) & DS__PERF_MISC_CPUMODE_MASK;
	struct machine *m;
	struct proc *t;
	int32_t pid, tid;
	char **nv;
	size_t n;

	if (r->size < 17)
		return fail(s, -EBADMSG, "COMM record at offset %llu: size %u",
			    (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(p, r->p + 8);
	tid = (int32_t)ds__perf_rd32(p, r->p + 12);
	n = strnlen((const char *)r->p + 16, r->size - 16u);
	if (n == r->size - 16u)
		return fail(s, -EBADMSG, "COMM record at offset %llu: name not terminated",
			    (unsigned long long)r->file_off);
	m = machine_of(s, machine_pid(cpumode, pid));
	t = m ? proc_findnew(&m->threads, tid) : NULL;
	nv = ds__grow(s->comms, &s->comms_cap, s->ncomms, sizeof(*nv));
	if (!t || !nv)
		return -ENOMEM;
	s->comms = nv;
	if (!t->comm || strcmp(t->comm, (const char *)r->p + 16)) {
		s->comms[s->ncomms] = strndup((const char *)r->p + 16, n);
		if (!s->comms[s->ncomms])
			return -ENOMEM;
		t->comm = s->comms[s->ncomms++];
	}
	return 0;
}

static int do_fork(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	const struct ds_perf_data *p = s->p;
	uint16_t cpumode = ds__perf_rd16(p, r->p + 4) & DS__PERF_MISC_CPUMODE_MASK;
	int32_t pid, ppid, tid, ptid;
	struct machine *m;
	struct proc *parent, *child, *pt, *ct;

	if (r->size < 24)
		return fail(s, -EBADMSG, "FORK record at offset %llu: size %u",
			    (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(p, r->p + 8);
	ppid = (int32_t)ds__perf_rd32(p, r->p + 12);
	tid = (int32_t)ds__perf_rd32(p, r->p + 16);
	ptid = (int32_t)ds__perf_rd32(p, r->p + 20);
	m = machine_of(s, machine_pid(cpumode, pid));
	if (!m)
		return -ENOMEM;
	/* The new thread starts with its creator's name. */
	pt = proc_find(&m->threads, ptid);
	if (pt && pt->comm) {
		ct = proc_findnew(&m->threads, tid);
		if (!ct)
			return -ENOMEM;
		ct->comm = pt->comm;
	}
	if (pid == ppid) /* a thread: it shares the process's maps */
		return 0;
	parent = proc_find(&m->procs, ppid);
	child = proc_findnew(&m->procs, pid);
	if (!child)
		return -ENOMEM;
	if (!parent) {
		child->maps.n = 0;
		return 0;
	}
	return maps_copy(&child->maps, &parent->maps);
}

/* The IP at addr in the given cpumode: (DSO, file offset), or false. */
static bool resolve(struct ds_perf_session *s, int32_t pid, uint16_t cpumode, uint64_t addr,
		    uint32_t *dso, uint64_t *offset)
{
	struct machine *m = NULL;
	const struct map *mp = NULL;

	for (unsigned i = 0; i < s->nmachines; i++)
		if (s->machines[i].pid == machine_pid(cpumode, pid))
			m = &s->machines[i];
	if (!m)
		return false;
	if (cpumode == CPUMODE_KERNEL || cpumode == CPUMODE_GUEST_KERNEL) {
		mp = maps_find(&m->kmaps, addr);
		if (mp) {
			*dso = mp->dso;
			*offset = addr;
		}
		return mp != NULL;
	}
	if (cpumode != CPUMODE_USER && cpumode != CPUMODE_GUEST_USER)
		return false;
	{
		struct proc *pr = proc_find(&m->procs, pid);

		mp = pr ? maps_find(&pr->maps, addr) : NULL;
	}
	if (!mp)
		return false;
	*dso = mp->dso;
	*offset = addr - mp->start + mp->pgoff;
	return true;
}

static const char *thread_comm(struct ds_perf_session *s, uint16_t cpumode, int32_t pid,
			       int32_t tid)
{
	int32_t mp = machine_pid(cpumode, pid);
	const struct proc *t;

	for (unsigned i = 0; i < s->nmachines; i++) {
		if (s->machines[i].pid != mp)
			continue;
		t = proc_find(&s->machines[i].threads, tid);
		if (!t || !t->comm)
			t = proc_find(&s->machines[i].threads, pid);
		return t ? t->comm : NULL;
	}
	return NULL;
}

static int add_cc(struct ds_perf_session *s, uint64_t ip, uint32_t dso, uint64_t off,
		  uint16_t mode)
{
	if (s->ncc == s->cc_cap) {
		size_t ncap = s->cc_cap ? 2 * s->cc_cap : 1024;
		uint64_t *a = reallocarray(s->cc_ip, ncap, sizeof(*a));
		uint64_t *b;
		size_t *c;
		uint16_t *m;

		if (!a)
			return -ENOMEM;
		s->cc_ip = a;
		b = reallocarray(s->cc_off, ncap, sizeof(*b));
		if (!b)
			return -ENOMEM;
		s->cc_off = b;
		c = reallocarray(s->cc_dso, ncap, sizeof(*c));
		if (!c)
			return -ENOMEM;
		s->cc_dso = c;
		m = reallocarray(s->cc_mode, ncap, sizeof(*m));
		if (!m)
			return -ENOMEM;
		s->cc_mode = m;
		s->cc_cap = ncap;
	}
	s->cc_ip[s->ncc] = ip;
	s->cc_dso[s->ncc] = dso == UINT32_MAX ? SIZE_MAX : dso;
	s->cc_off[s->ncc] = off;
	s->cc_mode[s->ncc] = mode;
	s->ncc++;
	return 0;
}

/* A process's end: its unwinding state goes (its maps stay, as perf
 * keeps them for samples that come late). */
static int do_exit(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	int32_t pid, tid;

	if (!s->unwind)
		return 0;
	if (r->size < 24)
		return fail(s, -EBADMSG, "EXIT record at offset %llu: size %u",
			    (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(s->p, r->p + 8);
	tid = (int32_t)ds__perf_rd32(s->p, r->p + 16);
	if (pid == tid)
		ds__unwind_exit(s->unwind, pid);
	return 0;
}

/* The unwinder's view of a host process's maps (ds__unwind_map_fn). */
static bool unwind_map(void *user, int32_t pid, uint64_t addr, struct ds__unwind_map *out)
{
	struct ds_perf_session *s = user;
	const struct proc *pr = proc_find(&s->machines[0].procs, pid);
	const struct map *mp = pr ? maps_find(&pr->maps, addr) : NULL;
	struct pdso *d;

	if (!mp)
		return false;
	d = &s->dsos[mp->dso];
	if (!d->unwind_looked && !strcmp(d->path, "[vdso]")) {
		char buf[64];
		const char *vp = ds__unwind_vdso(s->unwind, &d->pub.build_id, buf, sizeof(buf));

		d->unwind_path = vp ? strdup(vp) : NULL;
		d->unwind_looked = true;
	}
	if (!d->unwind_looked && !d->pub.kernel && d->pub.dso) {
		/* Without local build IDs, no file is taken by its path
		 * either: only what the store finds by build ID. */
		d->unwind_path = ds__unwind_elf_path(s->ctx, &d->pub.build_id,
						     s->local_bids ? d->path : NULL,
						     d->mapped_file);
		d->unwind_looked = true;
	}
	*out = (struct ds__unwind_map){ .start = mp->start,
					.end = mp->end,
					.pgoff = mp->pgoff,
					.key = mp->dso,
					.path = d->unwind_path };
	return true;
}

/* perf's sysctl kernel.perf_event_max_stack default: perf report unwinds
 * at most this many user frames (libunwind and libdw alike) unless
 * --max-stack says (ds_perf_session_opts.unwind_max). */
#define UNWIND_MAX 127

/* The user stack of a --call-graph dwarf sample (regs at pos: abi, then
 * popcount(mask) values; the stack copy and its dyn_size after them),
 * unwound and appended to its callchain as user entries.  A sample in
 * the kernel has the registers of the user code it came from. */
static int unwind_sample(struct ds_perf_session *s, struct sample *sm, uint64_t abi,
			 uint64_t mask, const unsigned char *regs, const unsigned char *stack,
			 uint64_t stack_size)
{
	const struct proc *pr;
	struct ds__unwind_sample us;
	size_t n;

	if (is_guest(sm->cpumode) || !abi || !stack_size)
		return 0;
	pr = proc_find(&s->machines[0].procs, sm->pid);
	if (!pr)
		return 0;
	if (!s->unwind_ips && !(s->unwind_ips = malloc(s->unwind_max * sizeof(*s->unwind_ips))))
		return -ENOMEM;
	us = (struct ds__unwind_sample){ .pid = sm->pid,
					 .tid = sm->tid,
					 .abi = abi,
					 .mask = mask,
					 .regs = regs,
					 .stack = stack,
					 .stack_size = stack_size,
					 .maps_gen = pr->maps.gen };
	n = ds__unwind_stack(s->unwind, &us, s->unwind_ips, s->unwind_max);
	for (size_t i = 0; i < n; i++) {
		uint64_t ip = s->unwind_ips[i], off = 0;
		uint32_t dso = UINT32_MAX;
		int rc;

		/* A frame from garbage registers or stack can be any value; one
		 * in the context markers' range would read as a marker, and no
		 * user code is there: the unwind ends before it. */
		if (ip >= CONTEXT_MAX)
			break;
		if (resolve(s, sm->pid, CPUMODE_USER, ip, &dso, &off))
			s->dsos[dso].pub.callchain_hits++;
		rc = add_cc(s, ip, dso, off, CPUMODE_USER);
		if (rc)
			return rc;
		sm->nunwound++; /* at most unwind_max, a uint16_t */
	}
	return 0;
}

static int do_sample(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	const struct ds_perf_data *p = s->p;
	const unsigned char *q = r->p;
	unsigned int nattrs;
	const struct ds__perf_attr *attrs = ds__perf_attrs(p, &nattrs), *a;
	uint64_t t, pos = 8, end = r->size, nr;
	struct sample *sm, *nv;
	const unsigned char *uregs = NULL, *ustack = NULL;
	uint64_t uregs_abi = 0, ustack_size = 0;
	uint16_t mode;
	int rc;

#define NEED(n, what)                                                                        \
	do {                                                                                 \
		if ((n) > end - pos)                                                         \
			return fail(s, -EBADMSG,                                             \
				    "sample at offset %llu: %s runs past the record's %u bytes", \
				    (unsigned long long)r->file_off, what, r->size);         \
	} while (0)
#define TAKE64(dst, what)                        \
	do {                                     \
		NEED(8, what);                   \
		dst = ds__perf_rd64(p, q + pos); \
		pos += 8;                        \
	} while (0)

	if (r->attr >= nattrs)
		return fail(s, -EBADMSG, "sample at offset %llu: no attr describes it",
			    (unsigned long long)r->file_off);
	a = &attrs[r->attr];
	t = a->sample_type;
	nv = ds__grow(s->samples, &s->samples_cap, s->nsamples, sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	s->samples = nv;
	sm = &s->samples[s->nsamples];
	memset(sm, 0, sizeof(*sm));
	sm->pid = sm->tid = -1;
	sm->dso = UINT32_MAX;
	sm->attr = r->attr;
	sm->cpumode = ds__perf_rd16(p, q + 4) & DS__PERF_MISC_CPUMODE_MASK;
	sm->cc = s->ncc;
	if (t & DS__PERF_SAMPLE_IDENTIFIER)
		TAKE64(sm->id, "the identifier");
	if (t & DS__PERF_SAMPLE_IP)
		TAKE64(sm->ip, "the IP");
	if (t & DS__PERF_SAMPLE_TID) {
		NEED(8, "pid/tid");
		sm->pid = (int32_t)ds__perf_rd32(p, q + pos);
		sm->tid = (int32_t)ds__perf_rd32(p, q + pos + 4);
		pos += 8;
	}
	if (t & DS__PERF_SAMPLE_TIME)
		TAKE64(sm->time, "the time");
	if (t & DS__PERF_SAMPLE_ADDR)
		TAKE64(sm->addr, "the address");
	if (t & DS__PERF_SAMPLE_ID)
		TAKE64(sm->id, "the id");
	if (t & DS__PERF_SAMPLE_STREAM_ID)
		TAKE64(nr, "the stream id");
	if (t & DS__PERF_SAMPLE_CPU) {
		NEED(8, "the cpu");
		sm->cpu = ds__perf_rd32(p, q + pos);
		pos += 8;
	}
	if (t & DS__PERF_SAMPLE_PERIOD)
		TAKE64(sm->period, "the period");
	if (t & DS__PERF_SAMPLE_READ) {
		uint64_t rf = a->read_format, per;

		per = 1 + !!(rf & DS__PERF_FORMAT_ID) + !!(rf & DS__PERF_FORMAT_LOST);
		if (rf & DS__PERF_FORMAT_GROUP) {
			TAKE64(nr, "the read group");
			pos += 8 * (!!(rf & DS__PERF_FORMAT_TOTAL_TIME_ENABLED) +
				    !!(rf & DS__PERF_FORMAT_TOTAL_TIME_RUNNING));
			if (pos > end || nr > (end - pos) / 8 / per)
				return fail(s, -EBADMSG,
					    "sample at offset %llu: a read group of %llu values "
					    "runs past the record",
					    (unsigned long long)r->file_off, (unsigned long long)nr);
			pos += 8 * per * nr;
		} else {
			pos += 8 * (per + !!(rf & DS__PERF_FORMAT_TOTAL_TIME_ENABLED) +
				    !!(rf & DS__PERF_FORMAT_TOTAL_TIME_RUNNING));
			if (pos > end)
				return fail(s, -EBADMSG,
					    "sample at offset %llu: read values run past the record",
					    (unsigned long long)r->file_off);
		}
	}
	if (!sm->period)
		sm->period = 1; /* perf counts a sample without one as 1 */
	sm->comm = thread_comm(s, sm->cpumode, sm->pid, sm->tid);
	if (resolve(s, sm->pid, sm->cpumode, sm->ip, &sm->dso, &sm->offset)) {
		s->dsos[sm->dso].pub.samples++;
		s->dsos[sm->dso].pub.period += sm->period;
	}
	if (t & DS__PERF_SAMPLE_CALLCHAIN) {
		TAKE64(nr, "the callchain size");
		if (nr > (end - pos) / 8)
			return fail(s, -EBADMSG,
				    "sample at offset %llu: a callchain of %llu entries runs past "
				    "the record's %u bytes",
				    (unsigned long long)r->file_off, (unsigned long long)nr, r->size);
		mode = sm->cpumode;
		/* A context perf does not know (0xffffffffffffffff, written
		 * where an unwind went wrong) is a corrupted callchain: perf
		 * (add_callchain_ip()) discards all of it and keeps the sample,
		 * and so do we. */
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip = ds__perf_rd64(p, q + pos + 8 * i);

			if (ip >= CONTEXT_MAX && ip != CONTEXT_KERNEL && ip != CONTEXT_USER &&
			    ip != CONTEXT_GUEST_KERNEL && ip != CONTEXT_GUEST_USER && ip != CONTEXT_HV &&
			    ip != CONTEXT_GUEST) {
				pos += 8 * nr;
				nr = 0;
				break;
			}
		}
		for (uint64_t i = 0; i < nr; i++, pos += 8) {
			uint64_t ip = ds__perf_rd64(p, q + pos), off = 0;
			uint32_t dso = UINT32_MAX;

			if (ip >= CONTEXT_MAX) {
				mode = ip == CONTEXT_KERNEL	  ? CPUMODE_KERNEL
				       : ip == CONTEXT_USER	  ? CPUMODE_USER
				       : ip == CONTEXT_GUEST_KERNEL ? CPUMODE_GUEST_KERNEL
				       : ip == CONTEXT_GUEST_USER   ? CPUMODE_GUEST_USER
				       : ip == CONTEXT_HV	  ? CPUMODE_HV
								  : 0;
				continue;
			}
			if (resolve(s, sm->pid, mode, ip, &dso, &off))
				s->dsos[dso].pub.callchain_hits++;
			rc = add_cc(s, ip, dso, off, mode);
			if (rc)
				return rc;
		}
	}
	/* What follows the callchain, in the kernel's order (perf_event.h):
	 * RAW, BRANCH_STACK, REGS_USER, STACK_USER, then WEIGHT, DATA_SRC,
	 * TRANSACTION, REGS_INTR, PHYS_ADDR, CGROUP, ..., of which nothing
	 * is read. */
	if (t & DS__PERF_SAMPLE_RAW) {
		uint32_t raw;

		/* u32 size, then size bytes that end on a u64 boundary */
		NEED(4, "the raw data size");
		raw = ds__perf_rd32(p, q + pos);
		pos += 4;
		NEED(raw, "the raw data");
		pos += raw;
	}
	if (t & DS__PERF_SAMPLE_BRANCH_STACK) {
		uint64_t per = 24; /* from, to, flags */

		TAKE64(nr, "the branch stack size");
		if (a->branch_sample_type & DS__PERF_SAMPLE_BRANCH_HW_INDEX) {
			NEED(8, "the branch stack's hw_idx");
			pos += 8;
		}
		if (nr > (end - pos) / per)
			return fail(s, -EBADMSG,
				    "sample at offset %llu: a branch stack of %llu entries runs "
				    "past the record's %u bytes",
				    (unsigned long long)r->file_off, (unsigned long long)nr, r->size);
		pos += nr * per;
	}
	if (t & DS__PERF_SAMPLE_REGS_USER) {
		TAKE64(uregs_abi, "the user registers' abi");
		if (uregs_abi) { /* 0: none (a kernel thread) */
			uint64_t nregs = (uint64_t)__builtin_popcountll(a->regs_user);

			NEED(8 * nregs, "the user registers");
			uregs = q + pos;
			pos += 8 * nregs;
		}
	}
	if (t & DS__PERF_SAMPLE_STACK_USER) {
		uint64_t size;

		TAKE64(size, "the user stack size");
		if (size) {
			NEED(size, "the user stack");
			ustack = q + pos;
			pos += size;
			TAKE64(ustack_size, "the user stack's dyn_size");
			/* perf refuses such a sample ("user stack dump failure") */
			if (ustack_size > size)
				return fail(s, -EBADMSG,
					    "sample at offset %llu: user stack dyn_size %llu over its "
					    "size %llu",
					    (unsigned long long)r->file_off,
					    (unsigned long long)ustack_size, (unsigned long long)size);
		}
	}
	if (s->unwind && uregs && ustack && (t & DS__PERF_SAMPLE_CALLCHAIN)) {
		rc = unwind_sample(s, sm, uregs_abi, a->regs_user, uregs, ustack, ustack_size);
		if (rc)
			return rc;
	}
	sm->ncc = s->ncc - sm->cc;
	if (s->stream) {
		struct ds_perf_sample out;

		sample_out(s, sm, &out);
		rc = s->stream(s->stream_user, &out);
		s->ncc = sm->cc; /* its callchain's room is the next one's */
		return rc;
	}
	s->nsamples++;
	return 0;
#undef TAKE64
#undef NEED
}

/* ------------------------------------------------------------- session */

static void machine_release(struct machine *m)
{
	ptab_release(&m->procs);
	ptab_release(&m->threads);
	free(m->kmaps.v);
	ds_store_free(m->store);
}

DS_API void ds_perf_session_free(struct ds_perf_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->ndsos; i++) {
		ds_dso_put(s->dsos[i].pub.dso);
		free(s->dsos[i].path);
		free(s->dsos[i].unwind_path);
		free(s->dsos[i].ref_symbol);
	}
	for (unsigned i = 0; i < s->nmachines; i++)
		machine_release(&s->machines[i]);
	free(s->machines);
	free(s->dsos);
	free(s->dso_hash);
	free(s->samples);
	free(s->cc_ip);
	free(s->cc_off);
	free(s->cc_dso);
	free(s->cc_mode);
	free(s->pub);
	for (size_t i = 0; i < s->ncomms; i++)
		free(s->comms[i]);
	free(s->comms);
	free(s->hostname);
	free(s->osrelease);
	free(s->rank);
	ds__unwind_free(s->unwind);
	free(s->unwind_ips);
	if (s->ctx)
		ds__context_put(s->ctx);
	free(s);
}

struct ds_context *ds__perf_session_context(const struct ds_perf_session *s)
{
	return s->ctx;
}

void ds__perf_session_host(const struct ds_perf_session *s, const char **hostname,
			   const char **osrelease)
{
	*hostname = s->hostname;
	*osrelease = s->osrelease;
}

static int cmp_order(const void *a, const void *b, void *arg)
{
	const struct ds_perf_session *s = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int32_t mx = s->machines[s->dsos[x].machine].pid, my = s->machines[s->dsos[y].machine].pid;

	/* The host (-1) first, then guests by pid; within one, creation order. */
	if (mx != my)
		return mx < my ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The public DSO array, host first, and every index remapped to it. */
static int publish(struct ds_perf_session *s)
{
	uint32_t *order = malloc((s->ndsos ? s->ndsos : 1) * sizeof(*order));
	uint32_t *rank = malloc((s->ndsos ? s->ndsos : 1) * sizeof(*rank));
	int rc = -ENOMEM;

	s->pub = calloc(s->ndsos ? s->ndsos : 1, sizeof(*s->pub));
	if (!order || !rank || !s->pub)
		goto out;
	for (uint32_t i = 0; i < s->ndsos; i++)
		order[i] = i;
	qsort_r(order, s->ndsos, sizeof(*order), cmp_order, s);
	for (uint32_t i = 0; i < s->ndsos; i++) {
		struct pdso *d = &s->dsos[order[i]];

		rank[order[i]] = i;
		s->pub[i] = d->pub;
		s->pub[i].path = d->path;
		s->pub[i].ref_symbol = d->ref_symbol;
		s->pub[i].machine = s->machines[d->machine].name;
	}
	for (size_t i = 0; i < s->nsamples; i++)
		if (s->samples[i].dso != UINT32_MAX)
			s->samples[i].dso = rank[s->samples[i].dso];
	for (size_t i = 0; i < s->ncc; i++)
		if (s->cc_dso[i] != SIZE_MAX)
			s->cc_dso[i] = rank[s->cc_dso[i]];
	s->rank = rank;
	rank = NULL;
	rc = 0;
out:
	free(order);
	free(rank);
	return rc;
}

/* An unwinder when some event recorded user stacks (the registers are
 * read as x86_64's: little-endian). */
static int unwind_setup(struct ds_perf_session *s)
{
	const uint64_t both = DS__PERF_SAMPLE_REGS_USER | DS__PERF_SAMPLE_STACK_USER;
	const uint16_t one = 1;
	unsigned int nattrs;
	const struct ds__perf_attr *attrs = ds__perf_attrs(s->p, &nattrs);
	bool host_le = *(const unsigned char *)&one == 1, want = false;

	for (unsigned i = 0; i < nattrs; i++)
		want |= (attrs[i].sample_type & both) == both;
	if (!want || ds_perf_data_swapped(s->p) == host_le) /* a big-endian file */
		return 0;
	s->unwind = ds__unwind_new(s->ctx, unwind_map, s);
	return s->unwind ? 0 : -ENOMEM;
}

static struct ds_perf_session *session_new(struct ds_context *ctx, const struct ds_perf_data *p,
					   const struct ds_perf_session_opts *opts, char *err,
					   size_t errlen, ds_perf_sample_fn stream, void *user)
{
	const struct ds_perf_build_id *table;
	const struct ds__perf_rec *recs;
	const struct ds_store_opts *so;
	struct ds_perf_session *s;
	size_t nrecs;
	int rc = 0, ntable;

	if (!ctx || !p) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->ctx = ds__context_get(ctx);
	s->p = p;
	s->stream = stream;
	s->stream_user = user;
	s->err = err;
	s->errlen = errlen;
	s->local_bids = !DS_OPT(opts, no_local_build_ids, false);
	s->unwind_max = DS_OPT(opts, unwind_max, 0);
	if (!s->unwind_max)
		s->unwind_max = UNWIND_MAX;
	else if (s->unwind_max > UINT16_MAX)
		s->unwind_max = UINT16_MAX;
	so = DS_OPT(opts, store_opts, NULL);
	if (so) {
		memset(&s->store_opts, 0, sizeof(s->store_opts));
		memcpy(&s->store_opts, so, so->sz < sizeof(*so) ? so->sz : sizeof(*so));
		s->store_opts.sz = sizeof(s->store_opts);
		s->have_store_opts = true;
	}
	{
		struct ds_perf_info info;

		ds_perf_data_info(p, &info);
		if ((info.hostname && !(s->hostname = strdup(info.hostname))) ||
		    (info.osrelease && !(s->osrelease = strdup(info.osrelease)))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	if (!machine_of(s, HOST_PID)) {
		rc = -errno ? -errno : -ENOMEM;
		goto out;
	}
	rc = unwind_setup(s);
	if (rc)
		goto out;
	/* perf makes the table's DSOs first, in table order. */
	ntable = ds_perf_data_build_ids(p, &table);
	for (int i = 0; i < ntable && !rc; i++) {
		struct machine *m = machine_of(s, table[i].pid == -1 ? HOST_PID : table[i].pid);
		struct dso_key k = { .path = table[i].filename,
				     .cpumode = table[i].cpumode,
				     .bid = &table[i].build_id,
				     .src = DS_PERF_BID_TABLE };
		int64_t idx;

		if (!m) {
			rc = -ENOMEM;
			break;
		}
		k.machine = (unsigned)(m - s->machines);
		idx = dso_findnew(s, &k);
		rc = idx < 0 ? (int)idx : 0;
	}
	recs = ds__perf_records(p, &nrecs);
	for (size_t i = 0; i < nrecs && !rc; i++) {
		switch (recs[i].type) {
		case DS__PERF_REC_MMAP:
		case DS__PERF_REC_MMAP2:
			rc = do_mmap(s, &recs[i]);
			break;
		case DS__PERF_REC_FORK:
			rc = do_fork(s, &recs[i]);
			break;
		case DS__PERF_REC_COMM:
			rc = do_comm(s, &recs[i]);
			break;
		case DS__PERF_REC_SAMPLE:
			rc = do_sample(s, &recs[i]);
			break;
		case DS__PERF_REC_EXIT:
			rc = do_exit(s, &recs[i]);
			break;
		default:
			break;
		}
	}
	if (!rc)
		rc = publish(s);
out:
	s->p = NULL;
	s->err = NULL;
	if (rc) {
		if (rc == -ENOMEM && err && errlen && !err[0])
			snprintf(err, errlen, "out of memory");
		ds_perf_session_free(s);
		errno = -rc;
		return NULL;
	}
	return s;
}

DS_API struct ds_perf_session *ds_perf_session_new(struct ds_context *ctx,
						   const struct ds_perf_data *p,
						   const struct ds_perf_session_opts *opts,
						   char *err, size_t errlen)
{
	return session_new(ctx, p, opts, err, errlen, NULL, NULL);
}

struct ds_perf_session *ds__perf_session_stream(struct ds_context *ctx,
						const struct ds_perf_data *p,
						const struct ds_perf_session_opts *opts,
						ds_perf_sample_fn fn, void *user, char *err,
						size_t errlen)
{
	return session_new(ctx, p, opts, err, errlen, fn, user);
}

const uint32_t *ds__perf_session_rank(const struct ds_perf_session *s)
{
	return s->rank;
}

DS_API size_t ds_perf_session_dsos(const struct ds_perf_session *s,
				   const struct ds_perf_dso **out)
{
	*out = s ? s->pub : NULL;
	return s ? s->ndsos : 0;
}

static void sample_out(const struct ds_perf_session *s, const struct sample *sm,
		       struct ds_perf_sample *out)
{
	*out = (struct ds_perf_sample){
		.time = sm->time,
		.ip = sm->ip,
		.period = sm->period,
		.addr = sm->addr,
		.id = sm->id,
		.pid = sm->pid,
		.tid = sm->tid,
		.cpu = sm->cpu,
		.cpumode = sm->cpumode,
		.attr = sm->attr,
		.comm = sm->comm,
		.dso = sm->dso == UINT32_MAX ? SIZE_MAX : sm->dso,
		.dso_offset = sm->offset,
		.nr_callchain = sm->ncc,
		.callchain = s->cc_ip ? s->cc_ip + sm->cc : NULL,
		.callchain_dso = s->cc_dso ? s->cc_dso + sm->cc : NULL,
		.callchain_offset = s->cc_off ? s->cc_off + sm->cc : NULL,
		.callchain_cpumode = s->cc_mode ? s->cc_mode + sm->cc : NULL,
		.nr_unwound = sm->nunwound,
	};
}

DS_API int ds_perf_session_samples(const struct ds_perf_session *s, ds_perf_sample_fn fn,
				   void *user)
{
	if (!s || !fn)
		return -EINVAL;
	if (s->stream)
		return -ENODATA; /* handed over as they came */
	for (size_t i = 0; i < s->nsamples; i++) {
		struct ds_perf_sample out;
		int rc;

		sample_out(s, &s->samples[i], &out);
		rc = fn(user, &out);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_ptr(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (void *const *)a, y = (uintptr_t) * (void *const *)b;

	return x < y ? -1 : x > y;
}

/* A kernel module, not the kernel ("[kernel.kallsyms]", a guest's
 * "[guest.kernel.kallsyms...]"). */
static bool is_module(const struct ds_perf_dso *d)
{
	return d->kernel && !strstr(d->path, "kernel.kallsyms");
}

DS_API int ds_perf_session_prefetch(struct ds_perf_session *s, unsigned int flags,
				    const struct ds_fetch_opts *opts)
{
	struct ds_dso **v;
	size_t n = 0, u = 0;
	int rc;

	if (!s)
		return -EINVAL;
	v = malloc((s->ndsos ? s->ndsos : 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndsos; i++) {
		const struct ds_perf_dso *d = &s->pub[i];

		if (!d->dso || (!d->samples && !d->callchain_hits && !(flags & DS_PERF_PREFETCH_ALL)) ||
		    (d->kernel && !(flags & DS_PERF_PREFETCH_KERNEL) &&
		     !((flags & DS_PERF_PREFETCH_MODULES) && is_module(d))))
			continue;
		v[n++] = d->dso;
	}
	/* One DSO of the store can stand for two of the recording. */
	qsort(v, n, sizeof(*v), cmp_ptr);
	for (size_t i = 0; i < n; i++)
		if (!u || v[u - 1] != v[i])
			v[u++] = v[i];
	rc = ds__dsos_prefetch(v, u, !(flags & DS_PERF_PREFETCH_NAMES), opts);
	free(v);
	return rc;
}
