/* SPDX-License-Identifier: MIT */
/* The perf session (ds_perf_session_*) on recordings written by
 * tests/gen/perfgen.py, where each scenario's answer follows from what the
 * kernel did to the address space:
 *   - a new mapping replaces the part of an older one it overlaps, and what
 *     is left of the older one keeps its file offsets;
 *   - a forked process keeps a copy of its parent's maps (later changes to
 *     the parent do not reach it), a thread shares its process's;
 *   - records are replayed in time order, not file order (perf writes one
 *     buffer per CPU): a sample before its mmap in the file but after it in
 *     time resolves, one earlier in time does not;
 *   - file offset = ip - map start + pgoff; kernel samples keep the address;
 *   - callchains lose their context markers and resolve entry by entry;
 *   - the build-ID table's DSOs come first, in its order; a DSO learns a
 *     build ID from MMAP2; two builds at one path are two DSOs.
 *   - a thread is named by its last COMM, a new one after its creator.
 * When perf can read the files, `perf script -F comm,ip,dso` is asked for
 * the thread name and DSO of each sample too, as an independent replay.
 * The profile (ds_profile_*) of each recording: its stacks hold every
 * sample once (counts and periods add up to the session's), a recording
 * replayed straight into a profile (ds_profile_open(), samples not kept)
 * gives the stacks a stored session gives, every location in the DSO its
 * sample resolved to, also where a guest's DSO came first and the host's
 * are numbered before it; one whose samples are each handed to the reader
 * (ds_profile_opts.stack) hands each of those stacks' samples once. */
#define _GNU_SOURCE
#include "dsostore.h"
#include "testutil.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

struct got {
	size_t n;
	struct {
		int32_t pid;
		char comm[32];
		uint64_t ip, offset, time;
		size_t dso;
		size_t ncc;
		size_t cc_dso[4];
		uint64_t cc_off[4];
		uint16_t cc_mode[4];
	} v[64];
};

static int collect(void *user, const struct ds_perf_sample *s)
{
	struct got *g = user;

	if (g->n == 64)
		return 0; /* the first 64 are enough */
	g->v[g->n].pid = s->pid;
	snprintf(g->v[g->n].comm, sizeof(g->v[g->n].comm), "%s", s->comm ? s->comm : "(null)");
	g->v[g->n].ip = s->ip;
	g->v[g->n].offset = s->dso_offset;
	g->v[g->n].time = s->time;
	g->v[g->n].dso = s->dso;
	g->v[g->n].ncc = s->nr_callchain;
	for (size_t i = 0; i < s->nr_callchain && i < 4; i++) {
		g->v[g->n].cc_dso[i] = s->callchain_dso[i];
		g->v[g->n].cc_off[i] = s->callchain_offset[i];
		g->v[g->n].cc_mode[i] = s->callchain_cpumode[i];
	}
	g->n++;
	return 0;
}

struct rec {
	struct ds_perf_data *pd;
	struct ds_perf_session *s;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	struct got got;
};

static bool open_rec(struct ds_context *ctx, const char *name, struct rec *r)
{
	char *path = t_path("%s.data", name), err[256] = "";
	DS_OPTS(ds_perf_session_opts, so, .no_local_build_ids = true);
	int rc = ds_perf_data_open(path, &r->pd, err, sizeof(err));

	free(path);
	memset(&r->got, 0, sizeof(r->got));
	if (rc) {
		fprintf(stderr, "%s: %s\n", name, err);
		t_failures++;
		return false;
	}
	r->s = ds_perf_session_new(ctx, r->pd, &so, err, sizeof(err));
	if (!r->s) {
		fprintf(stderr, "%s: session: %s\n", name, err);
		t_failures++;
		ds_perf_data_close(r->pd);
		return false;
	}
	r->ndsos = ds_perf_session_dsos(r->s, &r->dsos);
	CHECK_EQ_INT(ds_perf_session_samples(r->s, collect, &r->got), 0);
	return true;
}

static void close_rec(struct rec *r)
{
	ds_perf_session_free(r->s);
	ds_perf_data_close(r->pd);
}

/* The path of sample i's DSO, or "" when it has none. */
static const char *dso_of(const struct rec *r, size_t i)
{
	size_t d = r->got.v[i].dso;

	return d == SIZE_MAX ? "" : d < r->ndsos ? r->dsos[d].path : "(out of range)";
}

#define CHECK_SAMPLE(r, i, path, off)                                                       \
	do {                                                                                \
		if ((i) >= (r)->got.n) {                                                    \
			fprintf(stderr, "%s:%d: no sample %d\n", __FILE__, __LINE__, (int)(i)); \
			t_failures++;                                                       \
			break;                                                              \
		}                                                                           \
		if (strcmp(dso_of(r, i), path) || (*(path) && (r)->got.v[i].offset != (off))) { \
			fprintf(stderr,                                                     \
				"%s:%d: sample %d (ip %#llx): %s+%#llx, expected %s+%#llx\n", \
				__FILE__, __LINE__, (int)(i),                               \
				(unsigned long long)(r)->got.v[i].ip, dso_of(r, i),         \
				(unsigned long long)(r)->got.v[i].offset, path,             \
				(unsigned long long)(off));                                 \
			t_failures++;                                                       \
		}                                                                           \
	} while (0)

/* perf script's thread name and DSO for each sample, in its order,
 * against ours. */
static void against_perf(const char *name, const struct rec *r)
{
	char *data = t_path("%s.data", name), *out = t_path("%s.script", name);
	char line[512];
	size_t i = 0;
	FILE *f;

	if (t_sh("command -v perf >/dev/null && HOME=%s perf script -i %s -F comm,ip,dso "
		 ">%s 2>/dev/null",
		 t_tmpdir(), data, out) != 0) {
		fprintf(stderr, "%s: perf script cannot read it here; first principles only\n",
			name);
		goto out;
	}
	f = fopen(out, "r");
	CHECK(f != NULL);
	while (f && fgets(line, sizeof(line), f)) {
		char *open = strrchr(line, '('), *close = open ? strchr(open, ')') : NULL;
		char comm[64] = "";
		const char *want;

		if (!close || i >= r->got.n)
			continue;
		*close = 0;
		/* The thread's name first; ":PID" when perf knows none. */
		sscanf(line, " %63s", comm);
		if (strcmp(comm, r->got.v[i].comm) &&
		    !(comm[0] == ':' && !strcmp(r->got.v[i].comm, "(null)"))) {
			fprintf(stderr, "%s: sample %zu: perf script names the thread %s, we %s\n",
				name, i, comm, r->got.v[i].comm);
			t_failures++;
		}
		want = strcmp(open + 1, "[unknown]") ? open + 1 : "";
		if (strcmp(want, dso_of(r, i))) {
			fprintf(stderr, "%s: sample %zu: perf script says %s, we say %s\n", name, i,
				want, dso_of(r, i));
			t_failures++;
		}
		i++;
	}
	if (f)
		fclose(f);
	CHECK_EQ_INT(i, r->got.n);
out:
	free(data);
	free(out);
}

struct tally {
	uint64_t samples, period;
};

static int tally(void *user, const struct ds_perf_sample *s)
{
	struct tally *t = user;

	t->samples++;
	t->period += s->period;
	return 0;
}

static const char *loc_path(const struct ds_perf_dso *dsos, size_t n, size_t d)
{
	return d == SIZE_MAX ? "" : d < n ? dsos[d].path : "(out of range)";
}

/* perf report's tables of a profile (ds_table_*), from first principles:
 * the rows of one event share out its samples and period; with the
 * default keys (dso, sym) and no file to name them, one row per distinct
 * (DSO name, address) sampled; with children, each row's Children period
 * is at least its own and at most the event's, the rows ordered by it,
 * and every stack's own row and callers' rows are found again. */
static void check_tables(struct ds_profile *p, const char *name)
{
	const struct ds_profile_sample *ps;
	const struct ds_profile_loc *pl;
	size_t ns = ds_profile_samples(p, &ps);

	ds_profile_locs(p, &pl);
	for (unsigned attr = 0; attr < 2; attr++) {
		for (int children = 0; children < 2; children++) {
			DS_OPTS(ds_table_opts, to, .flags = children ? DS_TABLE_CHILDREN : 0);
			struct ds_table *t = ds_table_new(p, attr, &to);
			const struct ds_table_row *rows;
			uint64_t samples = 0, period = 0, ts, tp, want_s = 0, want_p = 0;
			size_t nr, distinct = 0;

			CHECK(t != NULL);
			if (!t)
				return;
			nr = ds_table_rows(t, &rows);
			ds_table_total(t, &ts, &tp);
			for (size_t k = 0; k < ns; k++) {
				bool seen = false;

				if (ps[k].attr != attr)
					continue;
				want_s += ps[k].count;
				want_p += ps[k].period;
				for (size_t j = 0; j < k && !seen; j++)
					seen = ps[j].attr == attr &&
					       !strcmp(ds_profile_dso_name(p, pl[ps[j].locs[0]].dso),
						       ds_profile_dso_name(p, pl[ps[k].locs[0]].dso)) &&
					       pl[ps[j].locs[0]].ip == pl[ps[k].locs[0]].ip;
				distinct += !seen;
				size_t own = ds_table_row_of(t, k, 0, true);

				CHECK(own < nr);
				if (own < nr)
					CHECK(rows[own].dso == pl[ps[k].locs[0]].dso ||
					      !strcmp(rows[own].dso_name ? rows[own].dso_name : "",
						      ds_profile_dso_name(p, pl[ps[k].locs[0]].dso)));
				for (size_t i = 1; children && ps[k].callchain && i < ps[k].nlocs; i++)
					CHECK(ds_table_row_of(t, k, i, false) < nr);
			}
			CHECK_EQ_INT(ts, want_s);
			CHECK_EQ_INT(tp, want_p);
			for (size_t i = 0; i < nr; i++) {
				samples += rows[i].samples;
				period += rows[i].period;
				if (children) {
					CHECK(rows[i].children >= rows[i].period);
					CHECK(rows[i].children <= tp);
					if (i)
						CHECK(rows[i - 1].children >= rows[i].children);
				} else if (i) {
					CHECK(rows[i - 1].period >= rows[i].period);
				}
			}
			CHECK_EQ_INT(samples, want_s);
			CHECK_EQ_INT(period, want_p);
			/* Callers add rows of their own, with no sample of theirs. */
			if (!children)
				CHECK_EQ_INT(nr, distinct);
			else
				CHECK(nr >= distinct);
			if (nr < distinct)
				fprintf(stderr, "%s: %zu rows for %zu addresses\n", name, nr,
					distinct);
			ds_table_free(t);
		}
	}
}

/* A reader handed each sample (ds_profile_opts.stack): the kept stacks
 * of the same recording to find each sample's in (the locations'
 * indexes are the same ones), what came, and what to return. */
struct handed {
	const struct ds_profile_sample *kept;
	size_t nkept;
	uint64_t samples, period;
	size_t unmatched;
	int ret;
};

static int hand(void *user, const struct ds_profile_sample *s)
{
	struct handed *h = user;
	bool found = false;

	CHECK_EQ_INT(s->count, 1);
	h->samples += s->count;
	h->period += s->period;
	for (size_t i = 0; i < h->nkept && !found; i++) {
		const struct ds_profile_sample *k = &h->kept[i];

		found = k->attr == s->attr && k->pid == s->pid && k->tid == s->tid &&
			!k->comm == !s->comm && (!k->comm || !strcmp(k->comm, s->comm)) &&
			k->callchain == s->callchain && k->leaf_in_callchain == s->leaf_in_callchain &&
			k->nunwound == s->nunwound && k->nlocs == s->nlocs &&
			!memcmp(k->locs, s->locs, s->nlocs * sizeof(*s->locs)) &&
			!memcmp(k->ips, s->ips, s->nlocs * sizeof(*s->ips)) &&
			!memcmp(k->cpumodes, s->cpumodes, s->nlocs * sizeof(*s->cpumodes));
	}
	h->unmatched += !found;
	return h->ret;
}

/* The recording replayed with each sample handed over: every sample once,
 * each one of the kept stacks', the locations all there and no stack kept;
 * a reader's error stops the replay and is the profile's. */
static void check_handed(struct ds_context *ctx, const struct ds_perf_data *pd,
			 const struct ds_perf_session_opts *so, const struct ds_profile_sample *kept,
			 size_t nkept, size_t nlocs, const struct tally *t)
{
	struct handed h = { .kept = kept, .nkept = nkept };
	DS_OPTS(ds_profile_opts, po, .flags = DS_PROFILE_CALLCHAINS, .stack = hand,
		.stack_user = &h);
	const struct ds_profile_sample *none;
	const struct ds_profile_loc *locs;
	struct ds_profile *p;
	char err[256] = "";

	p = ds_profile_open(ctx, pd, so, &po, err, sizeof(err));
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_INT(ds_profile_samples(p, &none), 0);
		CHECK_EQ_INT(ds_profile_locs(p, &locs), nlocs);
		CHECK_EQ_INT(ds_profile_resolve(p), 0);
	}
	CHECK_EQ_INT(h.samples, t->samples);
	CHECK_EQ_INT(h.period, t->period);
	CHECK_EQ_INT(h.unmatched, 0);
	ds_profile_free(p);
	if (!t->samples)
		return;
	h.ret = -ECANCELED;
	errno = 0;
	p = ds_profile_open(ctx, pd, so, &po, err, sizeof(err));
	CHECK(!p);
	CHECK_EQ_INT(errno, ECANCELED);
	ds_profile_free(p);
}

/* The profile of name both ways, against the session's samples and each
 * other.  *guest_path (may be NULL) gets the DSO of the first stack whose
 * pid is guest_pid. */
static void check_profile(struct ds_context *ctx, const char *name, int32_t guest_pid,
			  char *guest_path, size_t guest_len)
{
	char *path = t_path("%s.data", name), err[256] = "";
	DS_OPTS(ds_perf_session_opts, so, .no_local_build_ids = true);
	DS_OPTS(ds_profile_opts, po, .flags = DS_PROFILE_CALLCHAINS);
	struct ds_perf_data *pd = NULL;
	struct ds_perf_session *s = NULL;
	struct ds_profile *stored = NULL, *streamed = NULL;
	const struct ds_profile_sample *a, *b;
	const struct ds_profile_loc *al, *bl;
	const struct ds_perf_dso *ad, *bd;
	struct tally t = { 0 };
	uint64_t count = 0, period = 0;
	size_t na, nb, nad, nbd;

	if (ds_perf_data_open(path, &pd, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", name, err);
		t_failures++;
		goto out;
	}
	s = ds_perf_session_new(ctx, pd, &so, err, sizeof(err));
	stored = s ? ds_profile_new(s, &po) : NULL;
	streamed = ds_profile_open(ctx, pd, &so, &po, err, sizeof(err));
	CHECK(stored != NULL);
	CHECK(streamed != NULL);
	if (!stored || !streamed)
		goto out;
	CHECK_EQ_INT(ds_profile_resolve(streamed), 0);
	CHECK_EQ_INT(ds_perf_session_samples(s, tally, &t), 0);
	/* A streamed session keeps no sample to give. */
	CHECK_EQ_INT(ds_perf_session_samples(ds_profile_session(streamed), tally, &t), -ENODATA);
	na = ds_profile_samples(stored, &a);
	nb = ds_profile_samples(streamed, &b);
	ds_profile_locs(stored, &al);
	ds_profile_locs(streamed, &bl);
	nad = ds_perf_session_dsos(s, &ad);
	nbd = ds_perf_session_dsos(ds_profile_session(streamed), &bd);
	CHECK_EQ_INT(na, nb);
	CHECK_EQ_INT(nad, nbd);
	for (size_t i = 0; i < na && i < nb; i++) {
		count += a[i].count;
		period += a[i].period;
		CHECK_EQ_INT(a[i].count, b[i].count);
		CHECK_EQ_INT(a[i].period, b[i].period);
		CHECK_EQ_INT(a[i].pid, b[i].pid);
		CHECK_EQ_INT(a[i].tid, b[i].tid);
		CHECK_EQ_INT(a[i].nlocs, b[i].nlocs);
		CHECK(!a[i].comm == !b[i].comm && (!a[i].comm || !strcmp(a[i].comm, b[i].comm)));
		for (size_t k = 0; k < a[i].nlocs && k < b[i].nlocs; k++) {
			const struct ds_profile_loc *x = &al[a[i].locs[k]], *y = &bl[b[i].locs[k]];

			CHECK_EQ_INT(x->ip, y->ip);
			CHECK_EQ_INT(a[i].ips[k], b[i].ips[k]);
			if (strcmp(loc_path(ad, nad, x->dso), loc_path(bd, nbd, y->dso))) {
				fprintf(stderr, "%s: stack %zu, frame %zu: %s, streamed %s\n", name, i,
					k, loc_path(ad, nad, x->dso), loc_path(bd, nbd, y->dso));
				t_failures++;
			}
		}
		if (guest_path && a[i].pid == guest_pid && !guest_path[0])
			snprintf(guest_path, guest_len, "%s", loc_path(bd, nbd, bl[b[i].locs[0]].dso));
	}
	/* Every sample in exactly one stack. */
	CHECK_EQ_INT(count, t.samples);
	CHECK_EQ_INT(period, t.period);
	check_tables(streamed, name);
	check_handed(ctx, pd, &so, b, nb, ds_profile_locs(streamed, &bl), &t);
out:
	ds_profile_free(stored);
	ds_profile_free(streamed);
	ds_perf_session_free(s);
	ds_perf_data_close(pd);
	free(path);
}

static const char gen[] =
	"import sys\n"
	"sys.path.insert(0, sys.argv[1])\n"
	"from perfgen import Recording\n"
	"d = sys.argv[2]\n"
	"BID_A = bytes(range(1, 21)); BID_A2 = bytes(range(2, 22)); BID_K = bytes(20 * [7])\n"
	/* overlap: B cut into the middle of A; A's right remnant keeps offsets */
	"r = Recording()\n"
	"r.comm(100, 100, 'w', 1)\n"
	"r.mmap2(100, 100, 0x400000, 0x10000, 0, '/a/libA.so', 2)\n"
	"r.sample(100, 100, 0x401234, 3)\n"
	"r.mmap2(100, 100, 0x408000, 0x4000, 0x2000, '/a/libB.so', 4)\n"
	"r.sample(100, 100, 0x401000, 5)\n"
	"r.sample(100, 100, 0x409000, 6)\n"
	"r.sample(100, 100, 0x40d000, 7)\n"
	"r.sample(100, 100, 0x410000, 8)\n"
	"r.write(d + '/overlap.data')\n"
	/* fork: the child keeps the parent's maps as they were */
	"r = Recording()\n"
	"r.comm(100, 100, 'parent', 1)\n"
	"r.mmap2(100, 100, 0x400000, 0x10000, 0x1000, '/a/libA.so', 2)\n"
	"r.fork(200, 100, 200, 100, 3)\n"
	"r.fork(100, 100, 101, 100, 3)\n"
	"r.mmap2(100, 100, 0x400000, 0x10000, 0, '/a/libC.so', 4)\n"
	"r.sample(200, 200, 0x400010, 5)\n"
	"r.sample(100, 101, 0x400010, 6)\n"
	"r.sample(300, 300, 0x400010, 7)\n"
	"r.comm(200, 200, 'child', 8, exec_=False)\n"
	"r.sample(200, 200, 0x400010, 9)\n"
	"r.write(d + '/fork.data')\n"
	/* time order: file order differs from time order */
	"r = Recording()\n"
	"r.sample(100, 100, 0x400020, 20)\n"
	"r.sample(100, 100, 0x400020, 5)\n"
	"r.mmap2(100, 100, 0x400000, 0x1000, 0, '/a/libA.so', 10)\n"
	"r.write(d + '/order.data')\n"
	/* callchain, kernel, table order, MMAP2 build IDs, two builds at one path */
	"r = Recording(callchain=True)\n"
	"r.build_id(BID_K, '[kernel.kallsyms]', cpumode=1)\n"
	"r.build_id(BID_A, '/a/libA.so')\n"
	"r.mmap(-1, 0, 0xffffffff81000000, 0x1000000, 0xffffffff81000000, '[kernel.kallsyms]_text', 1, misc=1)\n"
	"r.mmap2(100, 100, 0x500000, 0x1000, 0, '/a/libD.so', 2, build_id=BID_A2)\n"
	"r.mmap2(100, 100, 0x400000, 0x1000, 0, '/a/libA.so', 3)\n"
	"r.sample(100, 100, 0x400100, 4, callchain=[0x400100, 0x500200, 0x999999])\n"
	"r.sample(100, 100, 0xffffffff81001234, 5, misc=1)\n"
	"r.mmap2(200, 200, 0x400000, 0x1000, 0, '/a/libA.so', 6, build_id=BID_A2)\n"
	"r.sample(200, 200, 0x400100, 7)\n"
	"r.write(d + '/mixed.data')\n"
	"r.write(d + '/mixed-pipe.data', pipe=True)\n"
	/* a guest's DSO seen first: the host's are numbered before it */
	"r = Recording()\n"
	"r.mmap(50, 50, 0x400000, 0x1000, 0, '/g/libG.so', 1, misc=5)\n"
	"r.sample(50, 50, 0x400010, 2, misc=5)\n"
	"r.mmap2(100, 100, 0x400000, 0x1000, 0, '/a/libA.so', 3)\n"
	"r.sample(100, 100, 0x400020, 4)\n"
	"r.sample(100, 100, 0x400020, 5)\n"
	"r.write(d + '/guest.data')\n"
	/* a corrupted callchain (an unknown context, as unwinds leave
	 * 0xffffffffffffffff behind): perf drops it all, keeps the sample */
	"r = Recording(callchain=True)\n"
	"r.mmap2(100, 100, 0x400000, 0x1000, 0, '/a/libA.so', 1)\n"
	"r.sample(100, 100, 0x400100, 2, callchain=[0x400100, 0x400200, 0xffffffffffffffff])\n"
	"r.sample(100, 100, 0x400100, 3, callchain=[0x400100, 0x400200])\n"
	"r.write(d + '/corrupt.data')\n"
	/* zstd: 20,000 samples (about 1 MB of records) in one compressed
	 * record of under 64 KiB: many output buffers from one input (a decode
	 * stress; zstd here keeps input back, so it passed before the reader
	 * also drained output held back with the input used up) */
	"import struct\n"
	"from perfswap import Zstd\n"
	"r = Recording()\n"
	"r.mmap2(100, 100, 0x400000, 0x10000, 0, '/a/libA.so', 1)\n"
	"for t in range(20000):\n"
	"    r.sample(100, 100, 0x400000 + (t % 64) * 16, 2 + t)\n"
	"raw = b''.join(r.records)\n"
	"z = Zstd().compress(raw, 19)\n"
	"assert len(z) + 16 <= 0xfff8, len(z)\n"
	"n = len(z)\n"
	"z += bytes(-n % 8)\n"
	"r.records = [struct.pack('<IHHQ', 83, 0, 16 + len(z), n) + z]\n"
	"r.features[27] = struct.pack('<IIIII', 0, 1, 19, len(raw) // len(z), 4 << 20)\n"
	"r.write(d + '/zbig.data')\n"
	/* identical samples: a ratio in the thousands, as --call-graph dwarf
	 * stack copies reach hundreds (a bound of 200x once refused those) */
	"r = Recording()\n"
	"r.mmap2(100, 100, 0x400000, 0x10000, 0, '/a/libA.so', 1)\n"
	"for t in range(40000):\n"
	"    r.sample(100, 100, 0x400040, 2)\n"
	"raw = b''.join(r.records)\n"
	"z = Zstd().compress(raw, 19)\n"
	"assert len(raw) > 1000 * len(z), (len(raw), len(z))\n"
	"n = len(z)\n"
	"z += bytes(-n % 8)\n"
	"r.records = [struct.pack('<IHHQ', 83, 0, 16 + len(z), n) + z]\n"
	"r.features[27] = struct.pack('<IIIII', 0, 1, 19, len(raw) // len(z), 4 << 20)\n"
	"r.write(d + '/zsame.data')\n";

/* perf's --max-stack rule (util/machine.c thread__resolve_callchain*):
 * entries counted in the cursor's order, the unwound ones apart and from
 * the sample; worked out by hand for three stack shapes. */
static void frame_kept(void)
{
	/* Frame pointers: the callchain is [sample again, 4 callers]. */
	struct ds_profile_sample fp = { .callchain = true, .leaf_in_callchain = true, .nlocs = 5 };
	/* --call-graph dwarf in the kernel: 3 recorded (kernel) entries, the
	 * first the sample again, then 3 unwound user frames. */
	struct ds_profile_sample dw = {
		.callchain = true, .leaf_in_callchain = true, .nunwound = 3, .nlocs = 6
	};
	/* A chain without the sampled address: frames 1 and 2 are all of it. */
	struct ds_profile_sample nl = { .callchain = true, .nlocs = 3 };
	static const bool fp_callee2[] = { 1, 1, 0, 0, 0 }, fp_caller2[] = { 0, 0, 0, 1, 1 };
	static const bool dw_caller2[] = { 0, 1, 1, 1, 1, 0 }, dw_callee2[] = { 1, 1, 0, 1, 1, 0 };

	for (size_t f = 0; f < 5; f++) {
		CHECK_EQ_INT(ds_profile_frame_kept(&fp, f, 2, false), fp_callee2[f]);
		CHECK_EQ_INT(ds_profile_frame_kept(&fp, f, 2, true), fp_caller2[f]);
		CHECK(ds_profile_frame_kept(&fp, f, SIZE_MAX, true));
		CHECK(ds_profile_frame_kept(&fp, f, 5, false));
		CHECK(!ds_profile_frame_kept(&fp, f, 0, false));
	}
	CHECK(!ds_profile_frame_kept(&fp, 5, SIZE_MAX, false)); /* past the stack */
	CHECK(!ds_profile_frame_kept(NULL, 0, SIZE_MAX, false));
	for (size_t f = 0; f < 6; f++) {
		CHECK_EQ_INT(ds_profile_frame_kept(&dw, f, 2, true), dw_caller2[f]);
		CHECK_EQ_INT(ds_profile_frame_kept(&dw, f, 2, false), dw_callee2[f]);
	}
	CHECK(ds_profile_frame_kept(&nl, 0, 1, false));
	CHECK(!ds_profile_frame_kept(&nl, 0, 0, false));
	CHECK(ds_profile_frame_kept(&nl, 1, 1, false));
	CHECK(!ds_profile_frame_kept(&nl, 2, 1, false));
	CHECK(ds_profile_frame_kept(&nl, 2, 1, true));
	CHECK(!ds_profile_frame_kept(&nl, 1, 1, true));
}

int main(void)
{
	DS_OPTS(ds_context_opts, co, .urls = "", .perf_buildid_dir = "");
	struct ds_context *ctx;
	struct rec r;
	char *py = t_path("gen.py");

	t_write_file(py, gen);
	if (t_sh("command -v python3 >/dev/null") != 0)
		return 77;
	if (t_sh("python3 %s %s/tests/gen %s", py, getenv("DS_SRC") ? getenv("DS_SRC") : ".",
		 t_tmpdir()) != 0) {
		fprintf(stderr, "perfgen.py failed\n");
		return 1;
	}
	free(py);
	frame_kept();
	ctx = ds_context_new(&co);
	CHECK(ctx != NULL);

	if (open_rec(ctx, "overlap", &r)) {
		CHECK_EQ_INT(r.got.n, 5);
		CHECK_SAMPLE(&r, 0, "/a/libA.so", 0x1234);
		CHECK_SAMPLE(&r, 1, "/a/libA.so", 0x1000);
		CHECK_SAMPLE(&r, 2, "/a/libB.so", 0x2000 + 0x1000);
		CHECK_SAMPLE(&r, 3, "/a/libA.so", 0xd000);
		CHECK_SAMPLE(&r, 4, "", 0); /* one past the end */
		CHECK_EQ_INT(r.ndsos, 2);
		CHECK_EQ_INT(r.dsos[0].samples, 3);
		CHECK_EQ_INT(r.dsos[0].period, 3 * 250000);
		against_perf("overlap", &r);
		close_rec(&r);
	}
	if (open_rec(ctx, "fork", &r)) {
		CHECK_EQ_INT(r.got.n, 4);
		CHECK_SAMPLE(&r, 0, "/a/libA.so", 0x1010); /* the child's copy */
		CHECK_SAMPLE(&r, 1, "/a/libC.so", 0x10); /* a thread of the parent */
		CHECK_SAMPLE(&r, 2, "", 0); /* a process never mapped */
		/* Names: inherited by the child and the thread, unknown for a
		 * process never named, the new one after a rename only. */
		CHECK(!strcmp(r.got.v[0].comm, "parent"));
		CHECK(!strcmp(r.got.v[1].comm, "parent"));
		CHECK(!strcmp(r.got.v[2].comm, "(null)"));
		CHECK(!strcmp(r.got.v[3].comm, "child"));
		against_perf("fork", &r);
		close_rec(&r);
	}
	if (open_rec(ctx, "order", &r)) {
		CHECK_EQ_INT(r.got.n, 2);
		/* Delivered by time: t=5 (before the mmap at t=10), then t=20. */
		CHECK_EQ_INT(r.got.v[0].time, 5);
		CHECK_SAMPLE(&r, 0, "", 0);
		CHECK_EQ_INT(r.got.v[1].time, 20);
		CHECK_SAMPLE(&r, 1, "/a/libA.so", 0x20);
		close_rec(&r);
	}
	for (int pipe = 0; pipe < 2; pipe++) {
		const char *name = pipe ? "mixed-pipe" : "mixed";
		struct ds_build_id a, a2, k;

		if (!open_rec(ctx, name, &r))
			continue;
		t_hex_to_bid("0102030405060708090a0b0c0d0e0f1011121314", &a);
		t_hex_to_bid("02030405060708090a0b0c0d0e0f101112131415", &a2);
		t_hex_to_bid("0707070707070707070707070707070707070707", &k);
		/* The table's first, in its order; then by first appearance. */
		CHECK_EQ_INT(r.ndsos, 4);
		if (r.ndsos == 4) {
			CHECK(!strcmp(r.dsos[0].path, "[kernel.kallsyms]"));
			CHECK(r.dsos[0].kernel);
			CHECK(t_same_bid(&r.dsos[0].build_id, &k));
			CHECK(!strcmp(r.dsos[1].path, "/a/libA.so"));
			CHECK(t_same_bid(&r.dsos[1].build_id, &a));
			CHECK_EQ_INT(r.dsos[1].build_id_source, DS_PERF_BID_TABLE);
			CHECK(!strcmp(r.dsos[2].path, "/a/libD.so"));
			CHECK(t_same_bid(&r.dsos[2].build_id, &a2));
			CHECK_EQ_INT(r.dsos[2].build_id_source, DS_PERF_BID_MMAP2);
			/* Another build at libA's path: another DSO. */
			CHECK(!strcmp(r.dsos[3].path, "/a/libA.so"));
			CHECK(t_same_bid(&r.dsos[3].build_id, &a2));
			for (size_t i = 0; i < 4; i++)
				CHECK(!strcmp(r.dsos[i].machine, "host"));
		}
		CHECK_EQ_INT(r.got.n, 3);
		CHECK_SAMPLE(&r, 0, "/a/libA.so", 0x100);
		CHECK_EQ_INT(r.got.v[0].dso, 1);
		/* The marker is gone: three entries, each resolved. */
		CHECK_EQ_INT(r.got.v[0].ncc, 3);
		CHECK_EQ_INT(r.got.v[0].cc_dso[0], 1);
		CHECK_EQ_INT(r.got.v[0].cc_off[0], 0x100);
		CHECK_EQ_INT(r.got.v[0].cc_dso[1], 2);
		CHECK_EQ_INT(r.got.v[0].cc_off[1], 0x200);
		CHECK(r.got.v[0].cc_dso[2] == SIZE_MAX);
		/* perfgen's chains start with PERF_CONTEXT_USER: user (2). */
		for (int i = 0; i < 3; i++)
			CHECK_EQ_INT(r.got.v[0].cc_mode[i], 2);
		/* The callers' DSOs know they are in callchains (prefetch
		 * wants them): libA (sampled too) and libD (only a caller). */
		if (r.ndsos == 4) {
			CHECK(r.dsos[1].callchain_hits >= 1);
			CHECK_EQ_INT(r.dsos[2].samples, 0);
			CHECK_EQ_INT(r.dsos[2].callchain_hits, 1);
		}
		/* Kernel: the address itself. */
		CHECK_SAMPLE(&r, 1, "[kernel.kallsyms]", 0xffffffff81001234);
		CHECK_SAMPLE(&r, 2, "/a/libA.so", 0x100);
		CHECK_EQ_INT(r.got.v[2].dso, 3);
		close_rec(&r);
	}
	if (open_rec(ctx, "corrupt", &r)) {
		CHECK_EQ_INT(r.got.n, 2);
		CHECK_SAMPLE(&r, 0, "/a/libA.so", 0x100);
		CHECK_EQ_INT(r.got.v[0].ncc, 0);
		CHECK_SAMPLE(&r, 1, "/a/libA.so", 0x100);
		CHECK_EQ_INT(r.got.v[1].ncc, 2);
		close_rec(&r);
	}
	/* One compressed record holding far more than one output buffer. */
	if (open_rec(ctx, "zbig", &r)) {
		struct ds_perf_info info;

		ds_perf_data_info(r.pd, &info);
		CHECK(info.compressed);
		CHECK_EQ_INT(info.nr_samples, 20000);
		CHECK_EQ_INT(r.got.n, 64); /* collect() keeps the first 64 */
		CHECK_SAMPLE(&r, 0, "/a/libA.so", 0);
		CHECK_SAMPLE(&r, 63, "/a/libA.so", 63 * 16);
		CHECK_EQ_INT(r.ndsos, 1);
		if (r.ndsos)
			CHECK_EQ_INT(r.dsos[0].samples, 20000);
		close_rec(&r);
	}
	if (open_rec(ctx, "zsame", &r)) {
		CHECK_EQ_INT(r.got.n, 64);
		CHECK_SAMPLE(&r, 0, "/a/libA.so", 0x40);
		CHECK_EQ_INT(r.ndsos, 1);
		if (r.ndsos)
			CHECK_EQ_INT(r.dsos[0].samples, 40000);
		close_rec(&r);
	}
	{
		static const char *const names[] = { "overlap", "fork", "order", "mixed",
						      "mixed-pipe", "corrupt", "zbig", "zsame" };
		char guest[256] = "";

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			check_profile(ctx, names[i], 0, NULL, 0);
		check_profile(ctx, "guest", 50, guest, sizeof(guest));
		CHECK(!strcmp(guest, "/g/libG.so"));
	}
	ds_context_free(ctx);
	return t_done("test_perfsession");
}
