/* SPDX-License-Identifier: MIT */
/*
 * What a perf recording's replay keeps of each machine (the host, each
 * guest): its kernel maps, its processes' maps and threads' names, and the
 * recording's DSOs, told apart as perf 6.1's dsos__findnew_id does (see
 * perfsession.c).  perfevents.c changes them record by record.
 */
#define _GNU_SOURCE
#include "perfsession_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

int ds__ps_fail(struct ds_perf_session *s, int code, const char *fmt, ...)
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

struct machine *ds__ps_machine_of(struct ds_perf_session *s, int32_t pid)
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

struct proc *ds__ps_proc_find(const struct ptab *t, int32_t pid)
{
	if (!t->b)
		return NULL;
	for (struct proc *p = t->b[(uint32_t)pid & t->mask]; p; p = p->next)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct proc *ds__ps_proc_findnew(struct ptab *t, int32_t pid)
{
	struct proc *p = ds__ps_proc_find(t, pid);

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

void ds__ps_ptab_release(struct ptab *t)
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

const struct map *ds__ps_maps_find(const struct maps *ms, uint64_t addr)
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
int ds__ps_maps_insert(struct maps *ms, struct map nm)
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

int ds__ps_maps_copy(struct maps *dst, const struct maps *src)
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
bool ds__ps_is_perf_anon(const char *path)
{
	return !strcmp(path, "//anon") || !strncmp(path, "/dev/zero", 9) ||
	       !strncmp(path, "/anon_hugepage", 14) || !strncmp(path, "[stack", 6) ||
	       !strncmp(path, "/SYSV", 5) || !strcmp(path, "[heap]");
}

bool ds__ps_is_kernel_name(const char *path)
{
	return !strncmp(path, "[kernel.kallsyms]", 17) ||
	       !strncmp(path, "[guest.kernel.kallsyms", 22);
}


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
int64_t ds__ps_dso_findnew(struct ds_perf_session *s, const struct dso_key *k)
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
			ds__ps_is_kernel_name(k->path);
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
