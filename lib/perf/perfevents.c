/* SPDX-License-Identifier: MIT */
/*
 * The records of a perf recording, one by one, as perf report handles
 * them: MMAP/MMAP2, COMM, FORK and EXIT change a machine's maps and
 * threads (perfmachine.c); a SAMPLE is decoded through its attr's
 * sample_type, its IP and callchain resolved to (DSO, file offset), a
 * --call-graph dwarf user stack unwound, and the sample kept or streamed.
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

int ds__ps_do_mmap(struct ds_perf_session *s, const struct ds__perf_rec *r)
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
		return ds__ps_fail(s, -EBADMSG, "%s record at offset %llu: size %u",
			    mmap2 ? "MMAP2" : "MMAP", (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(p, q + 8);
	nm.start = ds__perf_rd64(p, q + 16);
	nm.end = nm.start + ds__perf_rd64(p, q + 24);
	nm.pgoff = ds__perf_rd64(p, q + 32);
	if (nm.end < nm.start)
		nm.end = UINT64_MAX; /* the kernel map runs to the end */
	n = strnlen((const char *)q + name_at, r->size - name_at);
	if (n == r->size - name_at || n >= sizeof(path))
		return ds__ps_fail(s, -EBADMSG, "%s record at offset %llu: file name not terminated",
			    mmap2 ? "MMAP2" : "MMAP", (unsigned long long)r->file_off);
	memcpy(path, q + name_at, n + 1);
	/* perf's map__new(): executable anonymous memory (a JIT's code), and
	 * the heap, stacks and SysV segments, are the process's perf map,
	 * /tmp/perf-PID.map, at their addresses (what the JIT writes there). */
	/* (An MMAP has no prot: perf takes it as executable unless it is a
	 * data mapping.) */
	if (cpumode == CPUMODE_USER &&
	    (mmap2 ? (ds__perf_rd32(p, q + 64) & PROT_EXEC) != 0 : !(misc & DS__PERF_MISC_MMAP_DATA)) &&
	    (ds__ps_is_perf_anon(path) || (mmap2 && (ds__perf_rd32(p, q + 68) & MAP_HUGETLB)))) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
		nm.pgoff = nm.start;
		perf_map = true; /* no inode or build ID tells it apart */
	}

	/* The kernel's maps belong to the machine (pid -1 on the host); a
	 * guest's events name it by pid. */
	m = ds__ps_machine_of(s, machine_pid(cpumode, pid));
	if (!m)
		return -ENOMEM;
	k.machine = (unsigned)(m - s->machines);
	k.cpumode = cpumode;
	k.path = path;
	if (cpumode == CPUMODE_KERNEL || cpumode == CPUMODE_GUEST_KERNEL) {
		/* "[kernel.kallsyms]_text": the DSO is "[kernel.kallsyms]", and
		 * pgoff is where _text was (perf's reference symbol). */
		if (ds__ps_is_kernel_name(path)) {
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
			return ds__ps_fail(s, -EBADMSG, "MMAP2 record at offset %llu: build ID size %u",
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
	idx = ds__ps_dso_findnew(s, &k);
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
	    !ds__ps_is_kernel_name(path) && !s->dsos[idx].pub.map_start)
		s->dsos[idx].pub.map_start = nm.start;
	if (cpumode == CPUMODE_KERNEL || cpumode == CPUMODE_GUEST_KERNEL)
		return ds__ps_maps_insert(&m->kmaps, nm);
	{
		struct proc *pr = ds__ps_proc_findnew(&m->procs, pid);

		return pr ? ds__ps_maps_insert(&pr->maps, nm) : -ENOMEM;
	}
}

/* A thread's name, as its last COMM said (a FORK copies its parent's):
 * kept in s->comms, so a sample's name stays valid after a rename. */
int ds__ps_do_comm(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	const struct ds_perf_data *p = s->p;
	uint16_t cpumode = ds__perf_rd16(p, r->p + 4) & DS__PERF_MISC_CPUMODE_MASK;
	struct machine *m;
	struct proc *t;
	int32_t pid, tid;
	char **nv;
	size_t n;

	if (r->size < 17)
		return ds__ps_fail(s, -EBADMSG, "COMM record at offset %llu: size %u",
			    (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(p, r->p + 8);
	tid = (int32_t)ds__perf_rd32(p, r->p + 12);
	n = strnlen((const char *)r->p + 16, r->size - 16u);
	if (n == r->size - 16u)
		return ds__ps_fail(s, -EBADMSG, "COMM record at offset %llu: name not terminated",
			    (unsigned long long)r->file_off);
	m = ds__ps_machine_of(s, machine_pid(cpumode, pid));
	t = m ? ds__ps_proc_findnew(&m->threads, tid) : NULL;
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

int ds__ps_do_fork(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	const struct ds_perf_data *p = s->p;
	uint16_t cpumode = ds__perf_rd16(p, r->p + 4) & DS__PERF_MISC_CPUMODE_MASK;
	int32_t pid, ppid, tid, ptid;
	struct machine *m;
	struct proc *parent, *child, *pt, *ct;

	if (r->size < 24)
		return ds__ps_fail(s, -EBADMSG, "FORK record at offset %llu: size %u",
			    (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(p, r->p + 8);
	ppid = (int32_t)ds__perf_rd32(p, r->p + 12);
	tid = (int32_t)ds__perf_rd32(p, r->p + 16);
	ptid = (int32_t)ds__perf_rd32(p, r->p + 20);
	m = ds__ps_machine_of(s, machine_pid(cpumode, pid));
	if (!m)
		return -ENOMEM;
	/* The new thread starts with its creator's name. */
	pt = ds__ps_proc_find(&m->threads, ptid);
	if (pt && pt->comm) {
		ct = ds__ps_proc_findnew(&m->threads, tid);
		if (!ct)
			return -ENOMEM;
		ct->comm = pt->comm;
	}
	if (pid == ppid) /* a thread: it shares the process's maps */
		return 0;
	parent = ds__ps_proc_find(&m->procs, ppid);
	child = ds__ps_proc_findnew(&m->procs, pid);
	if (!child)
		return -ENOMEM;
	if (!parent) {
		child->maps.n = 0;
		return 0;
	}
	return ds__ps_maps_copy(&child->maps, &parent->maps);
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
		mp = ds__ps_maps_find(&m->kmaps, addr);
		if (mp) {
			*dso = mp->dso;
			*offset = addr;
		}
		return mp != NULL;
	}
	if (cpumode != CPUMODE_USER && cpumode != CPUMODE_GUEST_USER)
		return false;
	{
		struct proc *pr = ds__ps_proc_find(&m->procs, pid);

		mp = pr ? ds__ps_maps_find(&pr->maps, addr) : NULL;
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
		t = ds__ps_proc_find(&s->machines[i].threads, tid);
		if (!t || !t->comm)
			t = ds__ps_proc_find(&s->machines[i].threads, pid);
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
int ds__ps_do_exit(struct ds_perf_session *s, const struct ds__perf_rec *r)
{
	int32_t pid, tid;

	if (!s->unwind)
		return 0;
	if (r->size < 24)
		return ds__ps_fail(s, -EBADMSG, "EXIT record at offset %llu: size %u",
			    (unsigned long long)r->file_off, r->size);
	pid = (int32_t)ds__perf_rd32(s->p, r->p + 8);
	tid = (int32_t)ds__perf_rd32(s->p, r->p + 16);
	if (pid == tid)
		ds__unwind_exit(s->unwind, pid);
	return 0;
}

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
	pr = ds__ps_proc_find(&s->machines[0].procs, sm->pid);
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

int ds__ps_do_sample(struct ds_perf_session *s, const struct ds__perf_rec *r)
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
			return ds__ps_fail(s, -EBADMSG,                                             \
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
		return ds__ps_fail(s, -EBADMSG, "sample at offset %llu: no attr describes it",
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
				return ds__ps_fail(s, -EBADMSG,
					    "sample at offset %llu: a read group of %llu values "
					    "runs past the record",
					    (unsigned long long)r->file_off, (unsigned long long)nr);
			pos += 8 * per * nr;
		} else {
			pos += 8 * (per + !!(rf & DS__PERF_FORMAT_TOTAL_TIME_ENABLED) +
				    !!(rf & DS__PERF_FORMAT_TOTAL_TIME_RUNNING));
			if (pos > end)
				return ds__ps_fail(s, -EBADMSG,
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
			return ds__ps_fail(s, -EBADMSG,
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
			return ds__ps_fail(s, -EBADMSG,
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
				return ds__ps_fail(s, -EBADMSG,
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

		ds__ps_sample_out(s, sm, &out);
		rc = s->stream(s->stream_user, &out);
		s->ncc = sm->cc; /* its callchain's room is the next one's */
		return rc;
	}
	s->nsamples++;
	return 0;
#undef TAKE64
#undef NEED
}

void ds__ps_sample_out(const struct ds_perf_session *s, const struct sample *sm,
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
