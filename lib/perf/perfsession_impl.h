/* SPDX-License-Identifier: MIT */
/* A replay's insides, for the perf session's own files: the machines, their
 * processes' maps and the recording's DSOs (perfmachine.c), the records
 * that change them and the samples (perfevents.c), the session around both
 * (perfsession.c).  The layers above use ds_perf_session_* and perf.h. */
#ifndef DS_PERFSESSION_IMPL_H
#define DS_PERFSESSION_IMPL_H

#include "perf.h"
#include "perfdata.h"
#include "unwind.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

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
	char *unwind_path; /* the file the unwinder reads (lib/live/unwind.c) */
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
	/* --call-graph dwarf samples: their user stacks (lib/live/unwind.c). */
	struct ds__unwind *unwind;
	uint64_t *unwind_ips; /* unwind_max of them */
	size_t unwind_max;
	uint32_t *rank; /* internal DSO index -> public, after publish() */
	const struct ds_perf_data *p; /* during ds_perf_session_new only */
	char *err;
	size_t errlen;
};

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

/* perf's sysctl kernel.perf_event_max_stack default: perf report unwinds
 * at most this many user frames (libunwind and libdw alike) unless
 * --max-stack says (ds_perf_session_opts.unwind_max). */
#define UNWIND_MAX 127

/* ---- perfmachine.c */

int ds__ps_fail(struct ds_perf_session *s, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* ------------------------------------------------------------ machines */
struct machine *ds__ps_machine_of(struct ds_perf_session *s, int32_t pid);
struct proc *ds__ps_proc_find(const struct ptab *t, int32_t pid);
struct proc *ds__ps_proc_findnew(struct ptab *t, int32_t pid);
/* ---------------------------------------------------------------- maps */
const struct map *ds__ps_maps_find(const struct maps *ms, uint64_t addr);
/* Insert, cutting away what the new map overlaps (a new mapping replaces
 * the old one there, as the kernel did; what is left of an old map keeps
 * its file offsets). */
int ds__ps_maps_insert(struct maps *ms, struct map nm);
int ds__ps_maps_copy(struct maps *dst, const struct maps *src);
/* perf's is_anon_memory() and is_no_dso_memory(). */
bool ds__ps_is_perf_anon(const char *path);
bool ds__ps_is_kernel_name(const char *path);
/* The DSO for a key, created when new.  Returns its index or -errno. */
int64_t ds__ps_dso_findnew(struct ds_perf_session *s, const struct dso_key *k);
void ds__ps_ptab_release(struct ptab *t);

/* ---- perfevents.c */

int ds__ps_do_mmap(struct ds_perf_session *s, const struct ds__perf_rec *r);
/* A thread's name, as its last COMM said (a FORK copies its parent's):
 * kept in s->comms, so a sample's name stays valid after a rename. */
int ds__ps_do_comm(struct ds_perf_session *s, const struct ds__perf_rec *r);
int ds__ps_do_fork(struct ds_perf_session *s, const struct ds__perf_rec *r);
/* A process's end: its unwinding state goes (its maps stay, as perf
 * keeps them for samples that come late). */
int ds__ps_do_exit(struct ds_perf_session *s, const struct ds__perf_rec *r);
int ds__ps_do_sample(struct ds_perf_session *s, const struct ds__perf_rec *r);
void ds__ps_sample_out(const struct ds_perf_session *s, const struct sample *sm,
		       struct ds_perf_sample *out);

#endif
