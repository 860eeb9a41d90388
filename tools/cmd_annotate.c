/* dsostore annotate: the hot functions of a perf.data line by line.  Each
 * function's samples by the source line of their innermost frame (inlined
 * code counts for its own file and line, under the function it was
 * sampled in: ds_profile_annotate()), with the source text from the file
 * on this machine, else from debuginfod by build ID: every file missing
 * here fetched in one parallel batch, into the debuginfod cache.
 * --insns: instruction by instruction instead, as perf annotate lists
 * them (ds_dso_disassemble(): the library disassembles and counts, this
 * file lays out, labels the jumps and interleaves the source). */
#define _GNU_SOURCE
#include "cli.h"
#include "cli_srctext.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { O_TOP = 1, O_PERCENT_LIMIT, O_CONTEXT, O_PRINT_LINE, O_JSON, O_INSNS };

static const struct cli_opt annotate_opts[] = {
	{ O_TOP, 0, "top", "N", "at most N functions per event (default 10)", 0 },
	{ O_PERCENT_LIMIT, 0, "percent-limit", "P",
	  "only functions with at least P% of the event's samples (default 1; SYMBOLs named are "
	  "shown anyway)",
	  0 },
	{ O_CONTEXT, 0, "context", "N",
	  "source lines shown around each line with samples (default 2)", 0 },
	{ O_PRINT_LINE, 'l', "print-line", NULL, "a summary first: the function's lines by share",
	  0 },
	{ O_JSON, 0, "json", NULL, "one JSON object instead of the listing", 0 },
	{ O_INSNS, 0, "insns", NULL,
	  "instruction by instruction, the source lines between them (perf annotate's view)",
	  0 },
	{ 0 },
};
static const struct cli_opt *const annotate_tables[] = {
	cli_opts_input, annotate_opts,	 cli_opts_no_fetch, cli_opts_progress, cli_opts_lookup,
	cli_opts_kernel, cli_opts_vmlinux, cli_opts_verbose, cli_opts_help,	NULL
};

/* A source file larger than this is not read (sqlite3.c: 9 MB). */
#define MAX_SOURCE (64u << 20)
/* perf's "red": a line with this share of its function is hot. */
#define HOT_PERCENT 5.0

struct opts {
	const char *path;
	char **syms;
	size_t nsyms;
	size_t top;
	double percent_limit;
	unsigned context;
	bool print_line, json, no_fetch, progress, insns;
	int verbose;
};

enum origin { FROM_NONE, FROM_LOCAL, FROM_CACHE, FROM_DEBUGINFOD };

static const char *const origin_names[] = { NULL, "local", "debuginfod-cache", "debuginfod" };

/* One source file of one DSO, its text when we have it. */
struct src {
	const char *file; /* as the DWARF names it (the profile's string) */
	size_t dso;
	enum origin from;
	char *path; /* where the text was read */
	int local_err; /* why there is none: the local file's error */
	int fetch_err; /* debuginfod's (0: not asked) */
	bool no_bid; /* not asked: its DSO has no build ID */
	struct srctext t; /* t.text NULL: none */
};

struct annotate {
	const struct opts *o;
	const struct ds_perf_data *pd;
	struct ds_context *ctx;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	struct ds_profile *prof;
	struct ds_annotation *ann;
	uint64_t *ev_samples; /* per attr */
	size_t nev;
	const struct ds_annotate_func *funcs; /* ds_annotation_funcs() */
	const struct ds_annotate_func **picks;
	size_t npicks;
	/* --insns: per pick, its disassembly, else why none (dis_err) */
	struct ds_disasm **dis;
	int *dis_err;
	struct src *srcs;
	size_t nsrcs;
	bool *sym_found; /* per o->syms */
};

static _Noreturn void oom(void)
{
	cli_error("out of memory");
	exit(2);
}

static void *xgrow(void *p, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return p;
	*cap = *cap ? 2 * *cap : 16;
	p = reallocarray(p, *cap, elem);
	if (!p)
		oom();
	return p;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static bool same_file(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* ------------------------------------------------------------ choice */

static bool named(struct annotate *a, const char *function)
{
	bool hit = false;

	for (size_t i = 0; i < a->o->nsyms; i++)
		if (!strcmp(a->o->syms[i], function)) {
			a->sym_found[i] = true;
			hit = true;
		}
	return hit;
}

/* The functions to show, in the annotation's order (by event, the most
 * samples first): those named, else per event the first --top with at
 * least --percent-limit of the event's samples. */
static void choose(struct annotate *a)
{
	const struct ds_annotate_func *f;
	size_t n = ds_annotation_funcs(a->ann, &f), cap = 0, in_event = 0;
	unsigned attr = UINT_MAX;

	for (size_t i = 0; i < n; i++) {
		if (f[i].attr != attr) {
			attr = f[i].attr;
			in_event = 0;
		}
		if (a->o->nsyms) {
			if (!named(a, f[i].function))
				continue;
		} else if (in_event >= a->o->top ||
			   share(f[i].samples, a->ev_samples[f[i].attr]) < a->o->percent_limit) {
			continue;
		}
		in_event++;
		a->picks = xgrow(a->picks, &cap, a->npicks, sizeof(*a->picks));
		a->picks[a->npicks++] = &f[i];
	}
}

/* ----------------------------------------------------------- sources */

static struct src *src_of(const struct annotate *a, size_t dso, const char *file)
{
	for (size_t i = 0; i < a->nsrcs; i++)
		if (a->srcs[i].dso == dso && !strcmp(a->srcs[i].file, file))
			return &a->srcs[i];
	return NULL;
}

/* The path debuginfod takes (and its server looks up, canonicalized):
 * "." and ".." components resolved as text, slashes not doubled; NULL
 * for a relative path, which no server can serve. */
static char *canonical(const char *path)
{
	size_t n = strlen(path), len = 0;
	char *out;

	if (path[0] != '/')
		return NULL;
	out = malloc(n + 1);
	if (!out)
		oom();
	for (const char *p = path; *p;) {
		size_t c;

		while (*p == '/')
			p++;
		c = strcspn(p, "/");
		if (!c)
			break;
		if (c == 1 && p[0] == '.') {
			/* nothing */
		} else if (c == 2 && p[0] == '.' && p[1] == '.') {
			while (len && out[len - 1] != '/')
				len--;
			if (len)
				len--; /* the slash before it */
		} else {
			out[len++] = '/';
			memcpy(out + len, p, c);
			len += c;
		}
		p += c;
	}
	if (!len)
		out[len++] = '/';
	out[len] = 0;
	return out;
}

static void add_source(struct annotate *a, size_t *cap, size_t dso, const char *file)
{
	if (!file || src_of(a, dso, file))
		return;
	a->srcs = xgrow(a->srcs, cap, a->nsrcs, sizeof(*a->srcs));
	a->srcs[a->nsrcs++] = (struct src){ .file = file, .dso = dso };
}

/* Every file the chosen functions' lines name, per DSO (--insns: and
 * their instructions'). */
static void collect_sources(struct annotate *a)
{
	size_t cap = 0;

	for (size_t i = 0; i < a->npicks; i++) {
		const struct ds_annotate_func *f = a->picks[i];
		const struct ds_insn *in;
		size_t n = a->dis ? ds_disasm_insns(a->dis[i], &in) : 0;

		for (size_t k = 0; k < f->nlines; k++)
			add_source(a, &cap, f->dso, f->lines[k].file);
		for (size_t k = 0; k < n; k++)
			add_source(a, &cap, f->dso, in[k].file);
	}
}

/* ------------------------------------------------------- instructions */

/* dis_err beyond the library's errors */
enum { DIS_NO_FILE = 1, DIS_KERNEL };

static const char *why_no_insns(int err)
{
	switch (err) {
	case DIS_NO_FILE:
		return "no file of this DSO";
	case DIS_KERNEL:
		return "kernel code is not disassembled";
	case -ENOTSUP:
		return "no disassembler for its machine (x86-64, i386 and aarch64 have one)";
	case -ELIBACC:
		return "capstone's library (libcapstone.so.4, Debian's libcapstone4) could not be loaded";
	case -ENOENT:
		return "no file with its code: the executable is neither here nor on a server";
	case -ERANGE:
		return "its address is in no section with code, or no symbol gives its size";
	default:
		return ds_strerror(err);
	}
}

/* Each chosen function disassembled, its samples counted per instruction. */
static void disassemble(struct annotate *a)
{
	a->dis = calloc(a->npicks ? a->npicks : 1, sizeof(*a->dis));
	a->dis_err = calloc(a->npicks ? a->npicks : 1, sizeof(*a->dis_err));
	if (!a->dis || !a->dis_err)
		oom();
	for (size_t i = 0; i < a->npicks; i++) {
		const struct ds_annotate_func *f = a->picks[i];
		const struct ds_perf_dso *d = f->dso < a->ndsos ? &a->dsos[f->dso] : NULL;
		const struct ds_annotate_addr *addrs;
		size_t naddrs = ds_annotation_addrs(a->ann, (size_t)(f - a->funcs), &addrs);

		if (d && d->kernel) {
			a->dis_err[i] = DIS_KERNEL;
		} else if (!d || !d->dso) {
			a->dis_err[i] = DIS_NO_FILE;
		} else {
			DS_OPTS(ds_disasm_opts, dopts, .addrs = addrs, .naddrs = naddrs);

			a->dis_err[i] = ds_dso_disassemble(d->dso, f->function_start, &dopts,
							   &a->dis[i]);
		}
		if (a->dis_err[i] && a->o->verbose)
			cli_error("annotate: %s: no instructions: %s", cli_t(f->function),
				  why_no_insns(a->dis_err[i]));
	}
}

/* Labels of the instructions jumps land on, L1, L2... in address order
 * (0: none); a malloc()ed array. */
static unsigned *label_insns(const struct ds_insn *in, size_t n)
{
	unsigned *lab = calloc(n ? n : 1, sizeof(*lab)), next = 1;

	if (!lab)
		oom();
	for (size_t k = 0; k < n; k++)
		if (in[k].flags & DS_INSN_LANDING)
			lab[k] = next++;
	return lab;
}

/* The label at addr (0: none). */
static unsigned label_at(const struct ds_insn *in, size_t n, const unsigned *lab, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (in[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && in[lo].addr == addr ? lab[lo] : 0;
}

static const char *kind_of(const struct ds_insn *x)
{
	if (x->flags & DS_INSN_CALL)
		return "call";
	if (x->flags & DS_INSN_JUMP)
		return "jump";
	if (x->flags & DS_INSN_RET)
		return "return";
	return NULL;
}

static uint64_t hottest_insn(const struct ds_insn *in, size_t n)
{
	uint64_t max = 0;

	for (size_t k = 0; k < n; k++)
		if (in[k].samples > max)
			max = in[k].samples;
	return max;
}

static char insn_mark(const struct ds_annotate_func *f, const struct ds_insn *x, uint64_t max)
{
	if (!x->samples)
		return ' ';
	if (x->samples == max)
		return '>';
	return share(x->samples, f->samples) >= HOT_PERCENT ? '*' : ' ';
}

/* "   @ prog.c:5  text" where the instructions' line changes. */
static void print_insn_source(const struct annotate *a, const struct ds_annotate_func *f,
			      const struct ds_insn *x)
{
	const struct src *s = x->file ? src_of(a, f->dso, x->file) : NULL;
	size_t len = 0;
	const char *text = s && x->line ? srctext_line(&s->t, x->line, &len) : NULL;

	printf("  %8s %8s %10s  @ ", "", "", "");
	if (x->file) {
		ds_term_puts(stdout, base_name(x->file));
		printf(":%u", x->line);
	} else {
		printf("??");
	}
	if (text) {
		fputs("  ", stdout);
		ds_term_write(stdout, text, len); /* a server's bytes: escaped */
	}
	putchar('\n');
}

/* Where a branch goes: a label of the function, else its symbol. */
static void print_target(const struct ds_insn *in, size_t n, const unsigned *lab,
			 const struct ds_insn *x)
{
	unsigned l;

	if (!(x->flags & DS_INSN_TARGET))
		return;
	l = (x->flags & DS_INSN_INSIDE) ? label_at(in, n, lab, x->target) : 0;
	if (l)
		printf("  -> L%u %s", l, x->target > x->addr ? "(down)" : "(up)");
	else if (x->target_function)
		printf("  -> %s+0x%" PRIx64, cli_t(x->target_function), x->target_offset);
}

static void print_insns(const struct annotate *a, const struct ds_annotate_func *f,
			const struct ds_disasm *dis)
{
	const struct ds_insn *in;
	size_t n = ds_disasm_insns(dis, &in);
	struct ds_disasm_info info;
	unsigned *lab = label_insns(in, n);
	uint64_t max = hottest_insn(in, n);
	const char *file = NULL;
	unsigned line = 0;

	ds_disasm_info(dis, &info);
	printf("#  %s, %" PRIu64 " bytes at 0x%" PRIx64 ", code from %s\n", info.arch, info.size,
	       info.start, cli_t(info.code_path));
	if (info.samples_elsewhere)
		printf("#  %" PRIu64 " samples at no instruction's first byte\n",
		       info.samples_elsewhere);
	printf("#\n  %8s %8s %10s  Instruction\n", "Percent", "Samples", "Address");
	for (size_t k = 0; k < n; k++) {
		const struct ds_insn *x = &in[k];

		if (k == 0 || x->line != line || !same_file(x->file, file))
			print_insn_source(a, f, x);
		file = x->file;
		line = x->line;
		if (lab[k])
			printf("  %8s %8s %10s  L%u:\n", "", "", "", lab[k]);
		printf("%c %7.2f%% %8" PRIu64 " %10" PRIx64 "    ", insn_mark(f, x, max),
		       share(x->samples, f->samples), x->samples, x->addr);
		if (x->operands[0])
			printf("%-7s %s", x->mnemonic, x->operands);
		else
			fputs(x->mnemonic, stdout);
		print_target(in, n, lab, x);
		putchar('\n');
	}
	free(lab);
}

static void json_insns(const struct annotate *a, const struct ds_annotate_func *f, size_t pick)
{
	const struct ds_disasm *dis = a->dis[pick];
	const struct ds_insn *in;
	size_t n = ds_disasm_insns(dis, &in);
	struct ds_disasm_info info;
	unsigned *lab;

	if (!dis) {
		printf(",\"disasm\":{\"error\":");
		cli_json_string(why_no_insns(a->dis_err[pick]));
		printf("},\"insns\":null");
		return;
	}
	ds_disasm_info(dis, &info);
	lab = label_insns(in, n);
	printf(",\"disasm\":{\"error\":null,\"arch\":\"%s\",\"start\":\"0x%" PRIx64
	       "\",\"size\":%" PRIu64 ",\"code_path\":",
	       info.arch, info.start, info.size);
	cli_json_string(info.code_path);
	printf(",\"samples_elsewhere\":%" PRIu64 "},\"insns\":[", info.samples_elsewhere);
	for (size_t k = 0; k < n; k++) {
		const struct ds_insn *x = &in[k];
		const char *kind = kind_of(x);
		unsigned tl = (x->flags & DS_INSN_INSIDE) ? label_at(in, n, lab, x->target) : 0;

		printf("%s{\"addr\":\"0x%" PRIx64 "\",\"size\":%u,\"mnemonic\":", k ? "," : "",
		       x->addr, (unsigned)x->size);
		cli_json_string(x->mnemonic);
		printf(",\"operands\":");
		cli_json_string(x->operands);
		printf(",\"samples\":%" PRIu64 ",\"period\":%" PRIu64 ",\"share\":%.6f,\"file\":",
		       x->samples, x->period, share(x->samples, f->samples));
		cli_json_string(x->file);
		printf(",\"line\":%u,\"kind\":", x->line);
		cli_json_string(kind);
		if (x->flags & DS_INSN_TARGET)
			printf(",\"target\":\"0x%" PRIx64 "\"", x->target);
		else
			printf(",\"target\":null");
		printf(",\"target_function\":");
		cli_json_string(x->target_function);
		printf(",\"target_offset\":%" PRIu64, x->target_function ? x->target_offset : 0);
		if (tl)
			printf(",\"target_label\":\"L%u\"", tl);
		else
			printf(",\"target_label\":null");
		if (lab[k])
			printf(",\"label\":\"L%u\"", lab[k]);
		else
			printf(",\"label\":null");
		printf(",\"bad\":%s}", (x->flags & DS_INSN_BAD) ? "true" : "false");
	}
	putchar(']');
	free(lab);
}

static const struct ds_build_id *build_id_of(const struct annotate *a, size_t dso)
{
	return dso < a->ndsos && a->dsos[dso].build_id.size ? &a->dsos[dso].build_id : NULL;
}

/* The text of every source file: the local file by the DWARF's name,
 * else debuginfod's source artifact of its DSO's build ID, those all
 * requested at once.  (They cannot go in the batch that fetched the
 * debuginfo: their names are in that debuginfo.) */
static void load_sources(struct annotate *a)
{
	struct ds_fetch_req *reqs = NULL;
	size_t *req_src = NULL, nreq = 0, cap = 0, cap2 = 0, local = 0, down = 0, cached = 0;
	char **canon = NULL;

	for (size_t i = 0; i < a->nsrcs; i++) {
		struct src *s = &a->srcs[i];
		const struct ds_build_id *bid = build_id_of(a, s->dso);
		char *c;

		s->local_err = srctext_read(&s->t, s->file, MAX_SOURCE);
		if (!s->local_err) {
			s->from = FROM_LOCAL;
			s->path = strdup(s->file);
			if (!s->path)
				oom();
			local++;
			continue;
		}
		s->no_bid = !bid;
		if (!bid || !(c = canonical(s->file)))
			continue;
		reqs = xgrow(reqs, &cap, nreq, sizeof(*reqs));
		req_src = xgrow(req_src, &cap2, nreq, sizeof(*req_src));
		canon = reallocarray(canon, cap, sizeof(*canon));
		if (!canon)
			oom();
		canon[nreq] = c;
		reqs[nreq] = (struct ds_fetch_req){ .build_id = *bid,
						    .what = DS_ARTIFACT_SOURCE,
						    .arg = c };
		req_src[nreq++] = i;
	}
	if (nreq) {
		DS_OPTS(ds_fetch_opts, fo, .progress = a->o->progress ? cli_progress : NULL);
		int rc = ds_fetch_batch(a->ctx, reqs, nreq, &fo);

		if (rc < 0)
			cli_error("fetching sources: %s", ds_strerror(rc));
		for (size_t r = 0; rc >= 0 && r < nreq; r++) {
			struct src *s = &a->srcs[req_src[r]];

			if (reqs[r].err) {
				s->fetch_err = reqs[r].err;
				continue;
			}
			s->path = reqs[r].path;
			reqs[r].path = NULL;
			s->fetch_err = srctext_read(&s->t, s->path, MAX_SOURCE);
			if (s->fetch_err)
				continue;
			s->from = reqs[r].source == DS_SOURCE_DEBUGINFOD ? FROM_DEBUGINFOD : FROM_CACHE;
			if (s->from == FROM_DEBUGINFOD)
				down++;
			else
				cached++;
		}
	}
	if (a->o->verbose)
		cli_error("annotate: %zu source files: %zu local, %zu asked of debuginfod in one "
			  "batch (%zu downloaded, %zu from its cache), %zu without text",
			  a->nsrcs, local, nreq, down, cached, a->nsrcs - local - down - cached);
	for (size_t r = 0; r < nreq; r++) {
		free(reqs[r].path);
		free(canon[r]);
	}
	free(reqs);
	free(req_src);
	free(canon);
}

/* ------------------------------------------------------------- output */

/* "here: not found; debuginfod: no servers" */
static const char *why_no_text(const struct src *s, char *buf, size_t len)
{
	const char *remote;

	if (s->no_bid)
		remote = "not asked (no build ID)";
	else if (s->file[0] != '/')
		remote = "not asked (a relative path)";
	else if (s->fetch_err == -ENOSYS)
		remote = "no servers";
	else
		remote = ds_strerror(s->fetch_err);
	snprintf(buf, len, "here: %s; debuginfod: %s", ds_strerror(s->local_err), remote);
	return buf;
}

static const char *dso_name(const struct annotate *a, size_t dso)
{
	return ds_profile_dso_name(a->prof, dso);
}

static uint64_t hottest(const struct ds_annotate_func *f)
{
	uint64_t max = 0;

	for (size_t k = 0; k < f->nlines; k++)
		if (f->lines[k].samples > max)
			max = f->lines[k].samples;
	return max;
}

static char mark_of(const struct ds_annotate_func *f, const struct ds_annotate_line *l,
		    uint64_t max)
{
	if (l->samples == max)
		return '>';
	return share(l->samples, f->samples) >= HOT_PERCENT ? '*' : ' ';
}

static int by_samples(const void *pa, const void *pb)
{
	const struct ds_annotate_line *a = *(const struct ds_annotate_line *const *)pa;
	const struct ds_annotate_line *b = *(const struct ds_annotate_line *const *)pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a < b ? -1 : a > b; /* the annotation's order: file, line */
}

/* perf annotate -l: every line of the function by share. */
static void print_summary(const struct ds_annotate_func *f)
{
	const struct ds_annotate_line **v = reallocarray(NULL, f->nlines ? f->nlines : 1, sizeof(*v));

	if (!v)
		oom();
	for (size_t k = 0; k < f->nlines; k++)
		v[k] = &f->lines[k];
	qsort(v, f->nlines, sizeof(*v), by_samples);
	printf("#\n# Sorted summary:\n");
	for (size_t k = 0; k < f->nlines; k++) {
		printf("#  %7.2f%%  ", share(v[k]->samples, f->samples));
		if (v[k]->file) {
			ds_term_puts(stdout, base_name(v[k]->file));
			printf(":%u\n", v[k]->line);
		} else {
			printf("??:0\n");
		}
	}
	free(v);
}

static void print_row(char mark, const struct ds_annotate_func *f,
		      const struct ds_annotate_line *l, unsigned line, const struct src *s)
{
	size_t len = 0;
	const char *text = s ? srctext_line(&s->t, line, &len) : NULL;

	if (l)
		printf("%c %7.2f%% %8" PRIu64, mark, share(l->samples, f->samples), l->samples);
	else
		printf("  %8s %8s", "", "");
	if (line)
		printf(" %6u  ", line);
	else
		printf(" %6s  ", "?");
	if (text)
		ds_term_write(stdout, text, len); /* a server's bytes: escaped */
	else if (l && l->file)
		printf("%s:%u", cli_t(base_name(l->file)), line); /* no text: file:line */
	else if (l)
		printf("??:0");
	putchar('\n');
}

static void print_file_header(const struct src *s, const char *file)
{
	char why[256];

	printf("#\n  %8s %8s %6s  ", "Percent", "Samples", "Line");
	if (!file) {
		printf("?? (no line information)\n");
		return;
	}
	ds_term_puts(stdout, file);
	if (s && s->t.text)
		printf("  (%s)\n", origin_names[s->from]);
	else
		printf("  (no source text: %s)\n", cli_t(why_no_text(s, why, sizeof(why))));
}

/* The lines [b, e) of the annotation, one file of f: those with samples
 * and --context lines around each, "..." where lines are skipped. */
static void print_file(const struct annotate *a, const struct ds_annotate_func *f, size_t b,
		       size_t e, uint64_t max)
{
	const struct ds_annotate_line *l = &f->lines[b];
	const struct src *s = l->file ? src_of(a, f->dso, l->file) : NULL;
	unsigned ctx = a->o->context, next = 1; /* the first line not shown yet */
	bool any = false;

	print_file_header(s, l->file);
	for (size_t k = b; k < e; k++) {
		unsigned line = f->lines[k].line;
		unsigned from = line > ctx ? line - ctx : 1;

		if (!s || !s->t.text || !line) {
			print_row(mark_of(f, &f->lines[k], max), f, &f->lines[k], line, s);
			continue;
		}
		if (from < next)
			from = next;
		if (any && from > next)
			printf("  %8s %8s %6s\n", "", "", "...");
		for (unsigned n = from; n < line && n <= s->t.nlines; n++)
			print_row(' ', f, NULL, n, s);
		print_row(mark_of(f, &f->lines[k], max), f, &f->lines[k], line, s);
		next = line + 1;
		any = true;
		/* the context after it, up to the next line with samples */
		unsigned until = line + ctx;
		unsigned stop = k + 1 < e ? f->lines[k + 1].line : UINT_MAX;

		for (unsigned n = next; n <= until && n < stop && n <= s->t.nlines; n++) {
			print_row(' ', f, NULL, n, s);
			next = n + 1;
		}
	}
}

/* The lines of one file in a function's: [b, e). */
struct span {
	size_t b, e;
	uint64_t samples;
};

/* The most samples first; at a tie, the annotation's order (file names). */
static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;

	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

static void print_function(const struct annotate *a, size_t pick)
{
	const struct ds_annotate_func *f = a->picks[pick];
	const struct ds_perf_dso *d = f->dso < a->ndsos ? &a->dsos[f->dso] : NULL;
	uint64_t max = hottest(f);
	char hex[2 * DS_BUILD_ID_MAX + 1] = "";
	struct span *files;
	size_t nfiles = 0;

	printf("## %s [%c] %s  %" PRIu64 " samples, %.2f%% of the event\n", cli_t(f->function),
	       d && d->kernel ? 'k' : '.', cli_t(dso_name(a, f->dso)), f->samples,
	       share(f->samples, a->ev_samples[f->attr]));
	if (d && d->build_id.size)
		ds_build_id_format(&d->build_id, hex, sizeof(hex));
	printf("#  %s%s%s\n", d && d->path ? cli_t(d->path) : "[unknown]", hex[0] ? "  build ID " : "",
	       hex);
	if (a->o->print_line)
		print_summary(f);
	if (a->o->insns) {
		if (a->dis[pick]) {
			print_insns(a, f, a->dis[pick]);
			putchar('\n');
			return;
		}
		printf("#  no instructions: %s; by source line:\n",
		       cli_t(why_no_insns(a->dis_err[pick])));
	}
	/* The files in order of their samples, each in line order. */
	files = reallocarray(NULL, f->nlines ? f->nlines : 1, sizeof(*files));
	if (!files)
		oom();
	for (size_t k = 0; k < f->nlines; nfiles++) {
		files[nfiles] = (struct span){ .b = k };
		for (; k < f->nlines && same_file(f->lines[k].file, f->lines[files[nfiles].b].file);
		     k++)
			files[nfiles].samples += f->lines[k].samples;
		files[nfiles].e = k;
	}
	qsort(files, nfiles, sizeof(*files), span_cmp);
	for (size_t i = 0; i < nfiles; i++)
		print_file(a, f, files[i].b, files[i].e, max);
	putchar('\n');
	free(files);
}

static void print_text(const struct annotate *a)
{
	unsigned attr = UINT_MAX;

	printf("# dsostore annotate of %s\n", cli_t(a->o->path));
	for (size_t i = 0; i < a->npicks; i++) {
		const struct ds_annotate_func *f = a->picks[i];

		if (f->attr != attr) {
			const char *ev = ds_perf_data_event_name(a->pd, f->attr);

			attr = f->attr;
			printf("#\n# Samples: %" PRIu64 " of event ", a->ev_samples[attr]);
			if (ev)
				printf("'%s'\n#\n", cli_t(ev));
			else
				printf("#%u\n#\n", attr);
		}
		print_function(a, i);
	}
}

static void json_function(const struct annotate *a, size_t pick)
{
	const struct ds_annotate_func *f = a->picks[pick];
	char why[256];
	const struct ds_perf_dso *d = f->dso < a->ndsos ? &a->dsos[f->dso] : NULL;
	char hex[2 * DS_BUILD_ID_MAX + 1];
	uint64_t max = hottest(f);
	bool first = true;

	printf("{\"name\":");
	cli_json_string(f->function);
	printf(",\"dso\":");
	cli_json_string(dso_name(a, f->dso));
	printf(",\"dso_path\":");
	cli_json_string(d ? d->path : NULL);
	printf(",\"build_id\":");
	if (d && d->build_id.size && ds_build_id_format(&d->build_id, hex, sizeof(hex)) > 0)
		cli_json_string(hex);
	else
		fputs("null", stdout);
	printf(",\"start\":\"0x%" PRIx64 "\",\"samples\":%" PRIu64 ",\"period\":%" PRIu64
	       ",\"share\":%.6f,\"files\":[",
	       f->function_start, f->samples, f->period, share(f->samples, a->ev_samples[f->attr]));
	for (size_t k = 0; k < f->nlines; k++) {
		const char *file = f->lines[k].file;
		const struct src *s;

		if (!file || (k && same_file(file, f->lines[k - 1].file)))
			continue;
		s = src_of(a, f->dso, file);
		printf("%s{\"file\":", first ? "" : ",");
		cli_json_string(file);
		printf(",\"text_from\":");
		cli_json_string(s && s->t.text ? origin_names[s->from] : NULL);
		printf(",\"path\":");
		cli_json_string(s && s->t.text ? s->path : NULL);
		printf(",\"error\":");
		cli_json_string(s && !s->t.text ? why_no_text(s, why, sizeof(why)) : NULL);
		putchar('}');
		first = false;
	}
	printf("],\"lines\":[");
	for (size_t k = 0; k < f->nlines; k++) {
		const struct ds_annotate_line *l = &f->lines[k];
		const struct src *s = l->file ? src_of(a, f->dso, l->file) : NULL;
		size_t len = 0;
		const char *text = s ? srctext_line(&s->t, l->line, &len) : NULL;

		printf("%s{\"file\":", k ? "," : "");
		cli_json_string(l->file);
		printf(",\"line\":%u,\"samples\":%" PRIu64 ",\"period\":%" PRIu64
		       ",\"share\":%.6f,\"hot\":%s,\"text\":",
		       l->line, l->samples, l->period, share(l->samples, f->samples),
		       mark_of(f, l, max) != ' ' ? "true" : "false");
		if (text)
			srctext_put_json(stdout, text, len);
		else
			fputs("null", stdout);
		putchar('}');
	}
	putchar(']');
	if (a->o->insns)
		json_insns(a, f, pick);
	putchar('}');
}

static void print_json(const struct annotate *a)
{
	unsigned attr = UINT_MAX;

	printf("{\"file\":");
	cli_json_string(a->o->path);
	printf(",\"events\":[");
	for (size_t i = 0; i < a->npicks; i++) {
		const struct ds_annotate_func *f = a->picks[i];

		if (f->attr != attr) {
			if (attr != UINT_MAX)
				printf("]},");
			attr = f->attr;
			printf("{\"attr\":%u,\"event\":", attr);
			cli_json_string(ds_perf_data_event_name(a->pd, attr));
			printf(",\"samples\":%" PRIu64 ",\"functions\":[", a->ev_samples[attr]);
		} else {
			putchar(',');
		}
		json_function(a, i);
	}
	if (attr != UINT_MAX)
		printf("]}");
	printf("]}\n");
}

/* ---------------------------------------------------------------- run */

static void count_events(struct annotate *a)
{
	const struct ds_profile_sample *smp;
	size_t n = ds_profile_samples(a->prof, &smp);

	for (size_t i = 0; i < n; i++) {
		if (smp[i].attr >= a->nev) {
			size_t want = (size_t)smp[i].attr + 1;

			a->ev_samples = reallocarray(a->ev_samples, want, sizeof(*a->ev_samples));
			if (!a->ev_samples)
				oom();
			memset(a->ev_samples + a->nev, 0, (want - a->nev) * sizeof(*a->ev_samples));
			a->nev = want;
		}
		a->ev_samples[smp[i].attr] += smp[i].count;
	}
}

static void annotate_free(struct annotate *a)
{
	for (size_t i = 0; i < a->nsrcs; i++) {
		free(a->srcs[i].path);
		srctext_release(&a->srcs[i].t);
	}
	free(a->srcs);
	for (size_t i = 0; a->dis && i < a->npicks; i++)
		ds_disasm_free(a->dis[i]);
	free(a->dis);
	free(a->dis_err);
	free(a->picks);
	free(a->ev_samples);
	free(a->sym_found);
	ds_annotation_free(a->ann);
	/* a->prof is the recording's: cli_recording_close() frees it */
}

static int run(const struct opts *o, const struct cli_common *common)
{
	struct annotate a = { .o = o };
	struct cli_recording rec;
	int status = 1;

	a.sym_found = calloc(o->nsyms ? o->nsyms : 1, sizeof(*a.sym_found));
	if (!a.sym_found)
		oom();
	{
		DS_OPTS(ds_profile_opts, po, .flags = DS_PROFILE_LINES);

		if (cli_recording_open(&rec, o->path, common, o->no_fetch, &po, 0) ||
		    cli_recording_prefetch(&rec, o->progress, o->verbose))
			goto out;
	}
	a.pd = rec.pd;
	a.ctx = rec.ctx;
	a.dsos = rec.dsos;
	a.ndsos = rec.ndsos;
	a.prof = rec.prof;
	if (!a.prof || !(a.ann = ds_profile_annotate(a.prof))) {
		cli_error("%s: reading the samples: %s", o->path, ds_strerror(-errno));
		goto out;
	}
	ds_annotation_funcs(a.ann, &a.funcs);
	count_events(&a);
	choose(&a);
	if (o->insns)
		disassemble(&a);
	collect_sources(&a);
	load_sources(&a);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	if (o->json)
		print_json(&a);
	else
		print_text(&a);
	status = fflush(stdout) ? 1 : 0;
	if (!a.nev)
		cli_error("The %s data has no samples!", o->path);
	for (size_t i = 0; i < o->nsyms; i++)
		if (!a.sym_found[i]) {
			cli_error("annotate: no samples in a function named '%s'", o->syms[i]);
			status = 1;
		}
out:
	annotate_free(&a);
	cli_recording_close(&rec);
	return status;
}

static int number(const char *opt, const char *v, bool positive, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || (positive && !*out) || *out > INT_MAX) {
		cli_error("annotate: %s needs a %s number, not '%s'", opt,
			  positive ? "positive" : "non-negative", v);
		return -1;
	}
	return 0;
}

static int cmd_annotate(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct opts o = { .top = 10, .percent_limit = 1.0, .context = 2 };
	char **pos = calloc((size_t)argc, sizeof(*pos));
	size_t npos = 0;
	int progress = -1, status = 2, id;
	struct cli_parse p;

	if (!pos)
		oom();
	cli_parse_init(&p, &cli_cmd_annotate, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		unsigned long long n;
		char *end;

		switch (id) {
		case CLI_BAD:
		case CLI_HELP:
			status = id == CLI_HELP ? 0 : 2;
			goto out;
		case O_TOP:
		case O_CONTEXT:
			if (number(id == O_TOP ? "--top" : "--context", p.arg, id == O_TOP, &n))
				goto out;
			if (id == O_TOP)
				o.top = (size_t)n;
			else
				o.context = (unsigned)n;
			break;
		case O_PERCENT_LIMIT:
			errno = 0;
			o.percent_limit = strtod(p.arg, &end);
			if (errno || end == p.arg || *end || !(o.percent_limit >= 0) ||
			    o.percent_limit > 100) {
				cli_error("annotate: --percent-limit needs a percentage, not '%s'",
					  p.arg);
				goto out;
			}
			break;
		case O_PRINT_LINE:
			o.print_line = true;
			break;
		case O_JSON:
			o.json = true;
			break;
		case O_INSNS:
			o.insns = true;
			break;
		default:
			pos[npos++] = (char *)p.arg;
		}
	}
	o.path = common.input;
	o.no_fetch = common.no_fetch;
	progress = common.progress;
	/* perf annotate [-i FILE] [SYMBOL]; ours also takes the file first. */
	if (!o.path && npos) {
		o.path = pos[0];
		o.syms = pos + 1;
		o.nsyms = npos - 1;
	} else {
		o.syms = pos;
		o.nsyms = npos;
	}
	if (!o.path)
		o.path = "perf.data";
	o.verbose = common.verbose;
	o.progress = cli_want_progress(progress);
	status = run(&o, &common);
out:
	free(pos);
	return status;
}

const struct cli_command cli_cmd_annotate = {
	.name = "annotate",
	.run = cmd_annotate,
	.summary = "the hot functions of a perf.data by source line, with the text",
	.usage = "[OPTIONS] [PERF.DATA] [SYMBOL...]",
	.about = "The hot functions of a recording, source line by source line: each line's\n"
		 "share of its function's samples, a sample counted for the file:line of its\n"
		 "innermost frame (code inlined from a header counts for the header's line,\n"
		 "under the function it was sampled in).  The hottest line of a function is\n"
		 "marked '>', every other line with at least 5% of its samples '*'.  Source\n"
		 "text from the file the DWARF names, else from the servers of\n"
		 "$DEBUGINFOD_URLS by build ID, all missing files in one parallel batch (and\n"
		 "cached); without it, FILE:LINE and the shares.  Default file: perf.data; the\n"
		 "first argument is the recording unless -i names it.  Without SYMBOLs: the\n"
		 "functions with the most samples.\n"
		 "\n"
		 "--insns: each function instruction by instruction, as perf annotate shows\n"
		 "it: each instruction's share of the function's samples (those taken at its\n"
		 "address), the source line of the line table between them where it changes,\n"
		 "the instructions jumps land on labelled L1, L2... and each jump's target as\n"
		 "'-> L2 (down)', a call's or an outside jump's as '-> function+0xOFF'.\n"
		 "Disassembled in process (x86-64, i386, aarch64) from the executable's\n"
		 "bytes: the file recorded, else its build ID's executable here or from\n"
		 "debuginfod.\n",
	.tables = annotate_tables,
};
