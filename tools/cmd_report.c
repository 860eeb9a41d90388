/* dsostore report: the top symbols of a perf.data by their share of the
 * sampled period, the table perf report --stdio prints, with the sampled
 * DSOs' debuginfo found by build ID (locally, then from debuginfod, all at
 * once) before the first address is looked up. */
#define _GNU_SOURCE
#include "cli_callgraph.h"
#include "cli.h"
#include "cli_folded.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

enum {
	O_SORT = 1,
	O_CHILDREN,
	O_NO_CHILDREN,
	O_SHOW_NR,
	O_TOP,
	O_CALL_GRAPH,
	O_INVERTED,
	O_PERCENT_LIMIT,
	O_INLINE,
	O_JSON,
	O_PPROF,
	O_COMM,
	O_PID,
	O_TID,
	O_DSOS,
	O_SYMBOLS,
	O_FIELDS,
	O_HEADER,
	O_HEADER_ONLY,
};

static const struct cli_opt report_opts[] = {
	{ O_SORT, 's', "sort", "KEYS",
	  "comm,dso,sym (default, as perf), dso,sym, sym,srcline, or another list of comm (the "
	  "thread's name), pid (the thread: TID:COMM), dso, sym and srcline (FILE:LINE, the "
	  "file's base name)",
	  0 },
	{ O_FIELDS, 'F', "fields", "FIELDS",
	  "the columns, in this order: overhead, overhead_children, sample, period and sort "
	  "keys; the rows sorted by -s's keys, then by these (without -s: by these alone), as "
	  "perf",
	  0 },
	{ O_COMM, 0, "comm", "COMMS", "only the samples of these thread names (comma-separated)",
	  0 },
	{ O_PID, 0, "pid", "PIDS", "only the samples of these processes", 0 },
	{ O_TID, 0, "tid", "TIDS", "only the samples of these threads", 0 },
	{ O_DSOS, 0, "dsos", "DSOS",
	  "only the samples in these DSOs (perf's short name or the path); the shares stay of "
	  "every sample, as with the other filters",
	  0 },
	{ O_SYMBOLS, 0, "symbols", "SYMS", "only the samples in these functions", 0 },
	{ O_HEADER, 0, "header", NULL,
	  "first, perf's header block: the recording's machine and command line", 0 },
	{ O_HEADER_ONLY, 0, "header-only", NULL, "only perf's header block", 0 },
	{ O_CHILDREN, 0, "children", NULL,
	  "a Children column (each row's share of the samples whose callchain passes through "
	  "it) and rows for callers without samples; the default when the recording has "
	  "callchains (perf record -g), as perf",
	  0 },
	{ O_NO_CHILDREN, 0, "no-children", NULL, "no Children column", 0 },
	{ O_SHOW_NR, 'n', "show-nr-samples", NULL, "a column with the number of samples", 0 },
	{ O_TOP, 0, "top", "N", "only the first N rows of each table", 0 },
	{ O_CALL_GRAPH, 'g', "call-graph", "MODE,THRESHOLD,LIMIT,ORDER,VALUE",
	  "under each row, its call graph as perf draws it (recordings with -g): graph "
	  "(default), fractal, flat, folded or none; a threshold in percent (0.5), a limit of "
	  "entries per level, caller or callee order (default: caller with --children, else "
	  "callee), percent, period or count; bare -g: graph,0.5,caller (as perf, the next "
	  "word is taken when it reads as these)",
	  CLI_ARG_OPTIONAL | CLI_ARG_SHORT_ATTACHED },
	{ O_INVERTED, 'G', "inverted", NULL, "caller order", 0 },
	{ FOLDED_O_MAX_STACK, 0, "max-stack", "N",
	  "only N callchain entries of each sample, for the graphs and Children: from the "
	  "sample out, or with caller order from the outermost caller in (an unwound user "
	  "stack: from the sample out), as perf; --folded: from the sample out, as perf "
	  "script; default: kernel.perf_event_max_stack (127)",
	  0 },
	{ O_PERCENT_LIMIT, 0, "percent-limit", "N",
	  "only rows of at least N% (their Children share with --children); the graphs' "
	  "threshold too",
	  0 },
	{ O_INLINE, 0, "inline", NULL,
	  "under each row, each inline chain its samples are in: its share, then one line per "
	  "frame, innermost first (\"FUNC (inlined) FILE:LINE\"), the last one the row's "
	  "function with the line of the call",
	  0 },
	{ O_JSON, 0, "json", NULL, "one JSON object instead of the tables", 0 },
	{ O_PPROF, 0, "pprof", "FILE",
	  "write pprof's profile.proto (gzipped; \"-\": stdout) instead of the tables: go tool "
	  "pprof, Pyroscope...",
	  CLI_ARG_FILE },
	{ FOLDED_O_FOLDED, 0, "folded", NULL,
	  "collapsed stacks instead, as perf script | stackcollapse-perf.pl: to -o FILE or "
	  "stdout, shaped by --count, --comm-pid, --comm-tid, --annotate and --event",
	  0 },
	{ FOLDED_O_OUTPUT, 'o', "output", "FILE", "--folded: the file to write (default: stdout)",
	  CLI_ARG_FILE },
	{ 0 },
};
static const struct cli_opt *const report_tables[] = {
	cli_opts_input,	 report_opts,	   cli_opts_no_fetch, cli_opts_progress,
	folded_opts_stacks, cli_opts_lookup, cli_opts_kernel,   cli_opts_vmlinux,
	cli_opts_verbose,	 cli_opts_help,	   NULL
};

/* The sort keys, in the order of enum ds_sort_key. */
enum key { KEY_DSO, KEY_SYM, KEY_SRCLINE, KEY_COMM, KEY_PID, NKEYS };

static const char *const key_names[] = { "dso", "sym", "srcline", "comm", "pid" };

/* A column: a sort key, or one of perf's output fields (-F). */
enum col { COL_OVERHEAD = NKEYS, COL_CHILDREN, COL_SAMPLE, COL_PERIOD, NCOLS };

static const char *const col_names[] = { "overhead", "overhead_children", "sample", "period" };

/* A comma-separated list of perf's filters (strlist, intlist). */
struct list {
	char **v;
	size_t n;
};

struct opts {
	const char *path;
	enum key keys[NKEYS];
	int nkeys;
	bool by_comm; /* comm is a key: samples are told apart by thread name */
	int children; /* perf's --children: 1, --no-children: 0, -1: when callchains */
	bool show_nr, inlines, json, no_fetch, progress;
	size_t top; /* 0: all */
	int verbose;
	struct cg_opts graph; /* -g */
	bool inverted; /* -G */
	bool graph_given; /* -g or -G on the command line */
	float percent_limit; /* perf's is a float, and so is the row's share it is compared with */
	int fields[NCOLS], nfields; /* -F: the columns given */
	bool sort_given; /* -s */
	int nsort; /* -s's keys: the first of keys */
	struct list comms, pids, tids, dsos, syms; /* the filters */
	bool header, header_only;
};

struct report {
	const struct opts *o;
	const struct ds_perf_dso *dsos;
	size_t ndsos;
	struct ds_profile *prof;
	unsigned nev; /* events: the highest attr with samples, plus one */
	bool any_callchain;
	bool children_on; /* the table has perf's Children column */
	struct cg_opts graph_opts; /* -g, the order resolved */
	struct callgraph *graph; /* of the table being printed */
	struct ds_table *table; /* of the event being printed */
	uint64_t total_samples, total_period; /* its */
	const struct ds_table_row *rows; /* its, for the sort of -F */
	struct {
		const char *what, *name;
	} elided[3];
	int nelided;
	/* The columns printed, and with -F the rows' order (perf's sort
	 * list: -s's keys, then the fields) */
	int cols[NCOLS], ncols;
	int order[NCOLS], norder;
};

static _Noreturn void oom(void)
{
	cli_error("out of memory");
	exit(2);
}

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool has_key(const struct opts *o, enum key k);

static bool list_has(const struct list *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

static bool list_has_int(const struct list *l, long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%ld", v);
	return list_has(l, buf);
}

/* perf's filters (machine__resolve(), thread__is_filtered()): the
 * thread's name, process and thread ids, the DSO of the sampled address
 * (its short name or its path) and its function. */
static bool keep_sample(void *user, const struct ds_profile *p, const struct ds_profile_sample *s)
{
	const struct report *r = user;
	const struct opts *o = r->o;
	const struct ds_profile_loc *locs, *l;

	if (o->comms.n && (!s->comm || !list_has(&o->comms, s->comm)))
		return false;
	if (o->pids.n && !list_has_int(&o->pids, s->pid))
		return false;
	if (o->tids.n && !list_has_int(&o->tids, s->tid))
		return false;
	if (!o->dsos.n && !o->syms.n)
		return true;
	ds_profile_locs(p, &locs);
	l = &locs[s->locs[0]]; /* where the sample was taken */
	if (o->dsos.n) {
		const struct ds_perf_dso *d = l->dso < r->ndsos ? &r->dsos[l->dso] : NULL;

		/* perf filters only a sample with a map */
		if (d && !list_has(&o->dsos, ds_profile_dso_name(p, l->dso)) &&
		    !(d->path && list_has(&o->dsos, d->path)))
			return false;
	}
	return !o->syms.n || (l->function && list_has(&o->syms, l->function));
}

/* perf's comm column: the thread's name, ":PID" when it has none. */
static const char *comm_name(const struct ds_table_row *s, char buf[static 16])
{
	if (s->comm)
		return s->comm;
	snprintf(buf, 16, ":%d", s->pid);
	return buf;
}

/* perf's pid column names the thread by its name at the end of the
 * recording (thread__comm_str()), not at the row's samples. */
static const char *thread_name(const struct report *r, const struct ds_table_row *s)
{
	const char *n = ds_perf_session_thread_name(ds_profile_session(r->prof), s->pid, s->tid);

	return n ? n : s->comm ? s->comm : "";
}

/* ------------------------------------------------------------- output */

static double share(uint64_t period, uint64_t total)
{
	return total ? 100.0 * (double)period / (double)total : 0.0;
}

/* perf's convert_unit(): the sample count in the header, in K, M, G. */
static unsigned long scaled(unsigned long v, char *unit)
{
	*unit = ' ';
	if (v > 1000) {
		v /= 1000;
		*unit = 'K';
	}
	if (v > 1000) {
		v /= 1000;
		*unit = 'M';
	}
	if (v > 1000) {
		v /= 1000;
		*unit = 'G';
	}
	return v;
}

/* The symbol column after "[.] ": the name, or as perf the address
 * ("%#.16llx": 0x and 16 digits). */
static const char *sym_name(const struct ds_table_row *s, char hex[static 24])
{
	if (s->function)
		return s->function;
	snprintf(hex, 24, "%#.16" PRIx64, s->ip);
	return hex;
}

/* The columns' widths: perf's hists__calc_col_len(), the header's at
 * least. */
struct widths {
	int col[NCOLS];
};

static const char *col_header(const struct report *r, int c)
{
	/* "Command" is perf's comm; "    Pid:Command" its pid (thread). */
	static const char *const header[] = { "Shared Object", "Symbol",  "Source:Line",
					      "Command",       "    Pid:Command", NULL,
					      "Children",      "Samples", "Period" };

	if (c == COL_OVERHEAD)
		return r->children_on ? "Self" : "Overhead";
	return header[c];
}

static struct widths column_widths(const struct report *r, const struct ds_table_row *e,
				   size_t n)
{
	struct widths w;
	bool unresolved = false;

	for (int k = 0; k < r->ncols; k++)
		w.col[k] = r->cols[k] == COL_SAMPLE || r->cols[k] == COL_PERIOD ? 12
			   : r->cols[k] >= NKEYS					  ? 8
						 : (int)strlen(col_header(r, r->cols[k]));
	for (size_t i = 0; i < n; i++) {
		const struct ds_table_row *s = &e[i];

		unresolved |= !s->function;
		for (int k = 0; k < r->ncols; k++) {
			int len = 0;
			char buf[24];

			switch (r->cols[k]) {
			case KEY_COMM:
				len = (int)strlen(cli_t(comm_name(s, buf)));
				break;
			case KEY_PID: /* perf: "%7d:" and the name */
				len = 8 + (int)strlen(cli_t(thread_name(r, s)));
				break;
			case KEY_DSO:
				len = (int)strlen(cli_t(s->dso_name ? s->dso_name : "[unknown]"));
				break;
			case KEY_SYM:
				len = 4 + (int)strlen(cli_t(sym_name(s, buf)));
				break;
			case KEY_SRCLINE:
				len = (int)strlen(cli_t(s->srcline));
				break;
			default:
				break;
			}
			if (len > w.col[k])
				w.col[k] = len;
		}
	}
	/* perf widens the DSO column for an unresolved symbol's address. */
	for (int k = 0; k < r->ncols; k++)
		if (r->cols[k] == KEY_DSO && unresolved && w.col[k] < 16)
			w.col[k] = 16;
	return w;
}

/* --percent-limit: perf compares the row's share as a float. */
static bool row_shown(const struct report *r, const struct ds_table_row *e, uint64_t total)
{
	uint64_t period = r->children_on ? e->children : e->period;

	return !r->o->percent_limit || (float)share(period, total) >= r->o->percent_limit;
}

static void print_chains(const struct ds_table_row *e, uint64_t total)
{
	for (size_t i = 0; i < e->ninlines; i++) {
		const struct ds_table_inline *c = &e->inlines[i];

		for (size_t f = 0; f < c->nframes; f++) {
			const struct ds_frame *fr = &c->frames[f];

			if (!f)
				printf("            %6.2f%%  ", share(c->period, total));
			else
				printf("                     ");
			printf("%s%s %s:%u\n", fr->function ? cli_t(fr->function) : "??",
			       f + 1 < c->nframes ? " (inlined)" : "",
			       fr->file ? cli_t(basename_of(fr->file)) : "??", fr->line);
		}
	}
}

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
	return (a < b) - (a > b);
}

static int cmp_str_null_last(const char *a, const char *b)
{
	if (!a || !b)
		return !a - !b;
	return strcmp(a, b);
}

/* -F's order (perf's sort list: -s's keys, then the fields): each column
 * compared as perf's hpp sort does, numbers descending, names ascending;
 * the table's own order last. */
static int field_order(const void *x, const void *y, void *arg)
{
	const struct report *r = arg;
	const struct ds_table_row *a = &r->rows[*(const size_t *)x],
				  *b = &r->rows[*(const size_t *)y];
	int c = 0;

	for (int k = 0; !c && k < r->norder; k++) {
		char bx[24], by[24];

		switch (r->order[k]) {
		case COL_OVERHEAD:
		case COL_PERIOD:
			c = cmp_u64_desc(a->period, b->period);
			break;
		case COL_CHILDREN:
			c = cmp_u64_desc(a->children, b->children);
			break;
		case COL_SAMPLE:
			c = cmp_u64_desc(a->samples, b->samples);
			break;
		case KEY_COMM:
			c = strcmp(comm_name(a, bx), comm_name(b, by));
			break;
		case KEY_PID:
			c = (a->tid > b->tid) - (a->tid < b->tid);
			break;
		case KEY_DSO:
			c = cmp_str_null_last(a->dso_name, b->dso_name);
			break;
		case KEY_SYM:
			/* perf's sort__sym_sort(): unnamed ones last, equal */
			c = cmp_str_null_last(a->function, b->function);
			break;
		case KEY_SRCLINE:
			c = strcmp(a->srcline, b->srcline);
			break;
		}
	}
	if (!c)
		c = (*(const size_t *)x > *(const size_t *)y) - (*(const size_t *)x < *(const size_t *)y);
	return c;
}

static void print_table(struct report *r, const char *event, unsigned attr,
			const struct ds_table_row *e, size_t n)
{
	static const char dots[] = "................................................................"
				   "................................................................"
				   "................................................................"
				   "................................................................";
	const struct opts *o = r->o;
	uint64_t total = r->total_period;
	struct widths w = column_widths(r, e, n);
	char unit;
	unsigned long ns = scaled((unsigned long)r->total_samples, &unit);
	size_t *idx = calloc(n ? n : 1, sizeof(*idx));

	if (!idx)
		oom();
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	r->rows = e;
	if (o->nfields && n > 1)
		qsort_r(idx, n, sizeof(*idx), field_order, r);
	/* perf: "%lu%c of event '%s'", the unit a space when there is none */
	if (event)
		printf("# Samples: %lu%c of event '%s'", ns, unit, cli_t(event));
	else if (r->nev > 1)
		printf("# Samples: %lu%c of event #%u", ns, unit, attr);
	else
		printf("# Samples: %lu%s", ns, unit == ' ' ? "" : (char[]){ unit, 0 });
	printf("\n# Event count (approx.): %" PRIu64 "\n#\n", total);
	/* Numbers right-aligned, names left; the last column's header padded
	 * too, as perf's. */
	for (int k = 0; k < r->ncols; k++)
		printf(r->cols[k] >= NKEYS ? "%s%*s" : "%s%-*s", k ? "  " : "# ", w.col[k],
		       col_header(r, r->cols[k]));
	putchar('\n');
	for (int k = 0; k < r->ncols; k++)
		printf("%s%.*s", k ? "  " : "# ", w.col[k] < 256 ? w.col[k] : 256, dots);
	printf("\n#\n");
	for (size_t j = 0; j < n && (!o->top || j < o->top); j++) {
		size_t i = idx[j];
		const struct ds_table_row *s = &e[i];

		if (!row_shown(r, s, total))
			continue;
		for (int k = 0; k < r->ncols; k++) {
			/* perf pads every column but a last symbol or srcline */
			bool last = k + 1 == r->ncols;
			int width = w.col[k];
			char buf[24];

			fputs("  ", stdout);
			switch (r->cols[k]) {
			case COL_CHILDREN:
				printf("%*.2f%%", width - 1, share(s->children, total));
				break;
			case COL_OVERHEAD:
				printf("%*.2f%%", width - 1, share(s->period, total));
				break;
			case COL_SAMPLE:
				printf("%*" PRIu64, width, s->samples);
				break;
			case COL_PERIOD:
				printf("%*" PRIu64, width, s->period);
				break;
			case KEY_COMM:
				printf("%-*s", width, cli_t(comm_name(s, buf)));
				break;
			case KEY_PID: /* perf's "%7d:%-*.*s" */
				printf("%7d:%-*.*s", s->tid, width - 8, width - 8, cli_t(thread_name(r, s)));
				break;
			case KEY_DSO:
				printf("%-*s", width, cli_t(s->dso_name ? s->dso_name : "[unknown]"));
				break;
			case KEY_SYM:
				printf("[%c] %-*s", s->level, last ? 0 : width - 4, cli_t(sym_name(s, buf)));
				break;
			case KEY_SRCLINE:
				printf("%-*s", last ? 0 : width, cli_t(s->srcline));
				break;
			}
		}
		putchar('\n');
		if (o->inlines)
			print_chains(s, total);
		if (r->graph)
			callgraph_print(r->graph, i, r->children_on ? s->children : s->period, total,
					o->keys[0] == KEY_SYM);
	}
	putchar('\n');
	free(idx);
}


static bool has_key(const struct opts *o, enum key k)
{
	for (int i = 0; i < o->nkeys; i++)
		if (o->keys[i] == k)
			return true;
	return false;
}

static void json_entry(const struct report *r, const struct ds_table_row *s, size_t row,
		       uint64_t total)
{
	const struct opts *o = r->o;

	printf("{\"overhead\":%.6f,\"samples\":%" PRIu64 ",\"period\":%" PRIu64,
	       share(s->period, total), s->samples, s->period);
	if (r->children_on)
		printf(",\"children\":%.6f,\"children_period\":%" PRIu64,
		       share(s->children, total), s->children);
	if (has_key(o, KEY_COMM)) {
		char buf[16];

		printf(",\"comm\":");
		cli_json_string(comm_name(s, buf));
	}
	if (has_key(o, KEY_PID)) {
		printf(",\"pid\":%" PRId32 ",\"tid\":%" PRId32 ",\"thread\":", s->pid, s->tid);
		cli_json_string(thread_name(r, s));
	}
	if (has_key(o, KEY_DSO) || has_key(o, KEY_SYM)) {
		const struct ds_perf_dso *d = s->dso < r->ndsos ? &r->dsos[s->dso] : NULL;
		char hex[2 * DS_BUILD_ID_MAX + 1];

		printf(",\"dso\":");
		cli_json_string(s->dso_name ? s->dso_name : "[unknown]");
		printf(",\"dso_path\":");
		cli_json_string(d ? d->path : NULL);
		printf(",\"build_id\":");
		if (d && d->build_id.size &&
		    ds_build_id_format(&d->build_id, hex, sizeof(hex)) > 0)
			cli_json_string(hex);
		else
			fputs("null", stdout);
	}
	if (has_key(o, KEY_SYM)) {
		printf(",\"level\":\"%c\",\"symbol\":", s->level);
		cli_json_string(s->function);
		if (!s->function)
			printf(",\"ip\":\"0x%" PRIx64 "\"", s->ip);
	}
	if (has_key(o, KEY_SRCLINE)) {
		printf(",\"srcline\":");
		cli_json_string(s->srcline);
	}
	if (o->inlines) {
		printf(",\"inlines\":[");
		for (size_t i = 0; i < s->ninlines; i++) {
			const struct ds_table_inline *c = &s->inlines[i];

			printf("%s{\"overhead\":%.6f,\"samples\":%" PRIu64 ",\"period\":%" PRIu64
			       ",\"frames\":[",
			       i ? "," : "", share(c->period, total), c->samples, c->period);
			for (size_t f = 0; f < c->nframes; f++) {
				printf("%s{\"function\":", f ? "," : "");
				cli_json_string(c->frames[f].function ? c->frames[f].function : "??");
				printf(",\"file\":");
				cli_json_string(c->frames[f].file);
				printf(",\"line\":%u,\"inlined\":%s}", c->frames[f].line,
				       f + 1 < c->nframes ? "true" : "false");
			}
			printf("]}");
		}
		printf("]");
	}
	if (r->graph)
		callgraph_json(r->graph, row, total);
	putchar('}');
}

/* ---------------------------------------------------------------- run */

/* The call graph's rows of a stack: the table's. */
static size_t graph_row(void *user, size_t k, size_t i, bool own)
{
	return ds_table_row_of(user, k, i, own);
}

static void output(struct report *r, const struct ds_perf_info *info,
		   const struct ds_perf_data *pd)
{
	const struct opts *o = r->o;
	enum ds_sort_key keys[NKEYS];
	bool first = true;
	DS_OPTS(ds_table_opts, to, .keys = keys, .nkeys = (size_t)o->nkeys,
		.flags = (r->children_on ? DS_TABLE_CHILDREN : 0) |
			 (o->inlines ? DS_TABLE_INLINES : 0) |
			 /* perf walks in the call graph's order: -g callee
			  * from the sample out */
			 (!r->graph_opts.order ? DS_TABLE_CALLEE : 0) |
			 (r->graph_opts.max_stack >= 0 ? DS_TABLE_MAX_STACK : 0),
		.max_stack = r->graph_opts.max_stack >= 0 ? (size_t)r->graph_opts.max_stack : 0,
		.keep = o->comms.n || o->pids.n || o->tids.n || o->dsos.n || o->syms.n ? keep_sample
										     : NULL,
		.keep_user = r);

	for (int k = 0; k < o->nkeys; k++)
		keys[k] = (enum ds_sort_key)o->keys[k];
	if (o->json) {
		printf("{\"file\":");
		cli_json_string(o->path);
		printf(",\"sort\":[");
		for (int k = 0; k < o->nkeys; k++)
			printf("%s\"%s\"", k ? "," : "", key_names[o->keys[k]]);
		printf("],\"lost\":%" PRIu64 ",\"events\":[", info->nr_lost);
	} else {
		printf("# dsostore report of %s\n#\n", cli_t(o->path));
		/* perf's sort__setup_elide(): a filter of one name hides its
		 * column and says so, a line before the table */
		if (r->nelided) {
			for (int k = 0; k < r->nelided; k++)
				printf("# %s: %s\n", r->elided[k].what, cli_t(r->elided[k].name));
			printf("#\n");
		}
		printf("# Total Lost Samples: %" PRIu64 "\n#\n", info->nr_lost);
	}
	for (unsigned a = 0; a < r->nev; a++) {
		const struct ds_table_row *e;
		size_t n;

		r->table = ds_table_new(r->prof, a, &to);
		if (!r->table)
			oom();
		ds_table_total(r->table, &r->total_samples, &r->total_period);
		if (!r->total_samples) { /* perf skips an event without samples */
			ds_table_free(r->table);
			continue;
		}
		n = ds_table_rows(r->table, &e);
		if (r->graph_opts.mode != CG_NONE && r->any_callchain)
			r->graph = callgraph_new(r->prof, &r->graph_opts, r->children_on, n,
						 graph_row, r->table);
		if (o->json) {
			printf("%s{\"attr\":%u,\"event\":", first ? "" : ",", a);
			cli_json_string(ds_perf_data_event_name(pd, a));
			printf(",\"samples\":%" PRIu64 ",\"event_count\":%" PRIu64 ",\"entries\":[",
			       r->total_samples, r->total_period);
			for (size_t i = 0, any = 0; i < n && (!o->top || i < o->top); i++) {
				if (!row_shown(r, &e[i], r->total_period))
					continue;
				if (any++)
					putchar(',');
				json_entry(r, &e[i], i, r->total_period);
			}
			printf("]}");
		} else {
			/* perf ends each event's table with a blank line more
			 * when another follows */
			if (!first)
				putchar('\n');
			print_table(r, ds_perf_data_event_name(pd, a), a, e, n);
		}
		first = false;
		callgraph_free(r->graph);
		r->graph = NULL;
		ds_table_free(r->table);
		r->table = NULL;
	}
	if (o->json)
		printf("]}\n");
	/* perf report's answer (ui__error(), exit status 0): no table. */
	if (first)
		cli_error("The %s data has no samples!", o->path);
}

/* perf report --header's block (perf_header__fprintf_info()): the lines
 * that the recording determines, as perf prints them.  Left out: "captured
 * on" (the file's mtime), the file's layout (header version, offsets),
 * the event lines (every perf_event_attr field), the topologies, the time
 * of the first and last samples, the pmu mappings and "missing
 * features". */
static void print_header(const struct ds_perf_data *pd)
{
	struct ds_perf_info info;
	struct ds_perf_host host = { .sz = sizeof(host) };

	ds_perf_data_info(pd, &info);
	ds_perf_data_host(pd, &host);
	printf("# ========\n");
	if (info.hostname)
		printf("# hostname : %s\n", cli_t(info.hostname));
	if (info.osrelease)
		printf("# os release : %s\n", cli_t(info.osrelease));
	if (info.perf_version)
		printf("# perf version : %s\n", cli_t(info.perf_version));
	if (info.arch)
		printf("# arch : %s\n", cli_t(info.arch));
	if (host.have_nrcpus)
		printf("# nrcpus online : %" PRIu32 "\n# nrcpus avail : %" PRIu32 "\n",
		       host.nr_cpus_online, host.nr_cpus_avail);
	if (host.cpudesc)
		printf("# cpudesc : %s\n", cli_t(host.cpudesc));
	if (host.cpuid)
		printf("# cpuid : %s\n", cli_t(host.cpuid));
	if (host.have_total_mem)
		printf("# total memory : %" PRIu64 " kB\n", host.total_mem_kb);
	/* perf: each argument and a space */
	if (info.cmdline)
		printf("# cmdline : %s \n", cli_t(info.cmdline));
	printf("# ========\n#\n");
}

/* The columns and, with -F, the rows' order, as perf's
 * perf_hpp__setup_output_field() and perf_hpp__append_sort_keys() make
 * them; the columns of one-name filters elided (sort__setup_elide()). */
static void setup_columns(struct report *r)
{
	const struct opts *o = r->o;
	int keyed = 0, shown = 0;
	bool elide[NKEYS] = { false };

	if (!o->nfields) {
		if (r->children_on)
			r->cols[r->ncols++] = COL_CHILDREN;
		r->cols[r->ncols++] = COL_OVERHEAD;
		if (o->show_nr)
			r->cols[r->ncols++] = COL_SAMPLE;
	}
	for (int k = 0; k < o->nfields; k++)
		r->cols[r->ncols++] = o->fields[k];
	for (int k = 0; k < o->nkeys; k++) {
		bool in = false;

		for (int c = 0; c < r->ncols; c++)
			in |= r->cols[c] == (int)o->keys[k];
		if (!in)
			r->cols[r->ncols++] = (int)o->keys[k];
	}
	if (o->nfields) {
		for (int k = 0; k < (o->sort_given ? o->nsort : 0); k++)
			r->order[r->norder++] = (int)o->keys[k];
		for (int k = 0; k < o->nfields; k++) {
			bool in = false;

			for (int c = 0; c < r->norder; c++)
				in |= r->order[c] == o->fields[k];
			if (!in)
				r->order[r->norder++] = o->fields[k];
		}
	}
	for (int c = 0; c < r->ncols; c++) {
		const struct list *l = r->cols[c] == KEY_SYM   ? &o->syms
				       : r->cols[c] == KEY_DSO  ? &o->dsos
				       : r->cols[c] == KEY_COMM ? &o->comms
								: NULL;

		if (r->cols[c] >= NKEYS)
			continue;
		keyed++;
		if (l && l->n == 1) {
			elide[r->cols[c]] = true;
			r->elided[r->nelided].what = r->cols[c] == KEY_SYM   ? "symbol"
						     : r->cols[c] == KEY_DSO ? "dso"
									     : "comm";
			r->elided[r->nelided++].name = l->v[0];
		} else {
			shown++;
		}
	}
	/* perf: eliding every key's column makes no sense, they all stay */
	if (!shown && keyed)
		return;
	for (int c = 0, n = 0; c <= r->ncols; c++) {
		if (c == r->ncols) {
			r->ncols = n;
			break;
		}
		if (r->cols[c] >= NKEYS || !elide[r->cols[c]])
			r->cols[n++] = r->cols[c];
	}
}

static int run(const struct opts *o, const struct cli_common *common)
{
	struct report r = { .o = o };
	struct cli_recording rec;
	struct ds_perf_info info;
	int status = 1;
	/* Only srcline and the inline chains come from DWARF; without them a
	 * row is named from ELF symbols, as perf names it, and the DWARF of
	 * libc, ld.so and the rest is never read. */
	DS_OPTS(ds_profile_opts, po,
		.flags = (has_key(o, KEY_SRCLINE) || o->inlines ? DS_PROFILE_LINES : 0) |
			 (o->children || o->graph.mode != CG_NONE ? DS_PROFILE_CALLCHAINS
								  : 0));

	if (o->header_only) {
		char err[256] = "";
		struct ds_perf_data *pd = NULL;
		int rc = ds_perf_data_open(o->path, &pd, err, sizeof(err));

		if (rc) {
			cli_error("%s: %s", o->path, err[0] ? err : ds_strerror(rc));
			return 1;
		}
		print_header(pd);
		ds_perf_data_close(pd);
		return fflush(stdout) ? 1 : 0;
	}
	if (cli_recording_open(&rec, o->path, common, o->no_fetch, &po,
			       o->graph.max_stack > 0 ? (size_t)o->graph.max_stack : 0) ||
	    cli_recording_prefetch(&rec, o->progress, o->verbose))
		goto out;
	ds_perf_data_info(rec.pd, &info);
	r.prof = rec.prof;
	r.dsos = rec.dsos;
	r.ndsos = rec.ndsos;
	r.graph_opts = o->graph;
	{
		const struct ds_profile_sample *ps;
		size_t n = ds_profile_samples(r.prof, &ps), longest = 0;

		for (size_t k = 0; k < n; k++) {
			/* perf's counts: the recorded entries, and apart the
			 * unwound ones */
			size_t chain = ps[k].nlocs - 1 + ps[k].leaf_in_callchain;
			size_t unw = ps[k].nunwound < chain ? ps[k].nunwound : chain;

			r.any_callchain |= ps[k].callchain;
			if (ps[k].attr >= r.nev)
				r.nev = ps[k].attr + 1;
			if (ps[k].callchain) {
				longest = chain - unw > longest ? chain - unw : longest;
				longest = unw > longest ? unw : longest;
			}
		}
		/* perf applies its default limit to every recording; only a
		 * longer chain than that needs it (a recording of a machine
		 * whose kernel.perf_event_max_stack was raised). */
		if (r.graph_opts.max_stack < 0 && r.any_callchain) {
			if (longest > rec.max_stack)
				r.graph_opts.max_stack = (long)rec.max_stack;
		}
	}
	/* perf refuses -g here ("Did you call 'perf record' without -g?"); the
	 * table is still worth printing, with a word on why it has no graph. */
	if (o->graph_given && o->graph.mode != CG_NONE && !r.any_callchain && r.nev)
		cli_error("report: warning: %s has no callchains (perf record -g makes them): "
			  "no call graphs", o->path);
	/* perf's default: a Children column when the samples have callchains. */
	r.children_on = o->children > 0 || (o->children < 0 && r.any_callchain);
	/* perf's order: caller with children, unless -g says; -G: caller. */
	if (o->inverted || r.graph_opts.order < 0)
		r.graph_opts.order = o->inverted || r.children_on;
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	setup_columns(&r);
	if (o->header && !o->json)
		print_header(rec.pd);
	output(&r, &info, rec.pd);
	status = fflush(stdout) ? 1 : 0;
out:
	cli_recording_close(&rec); /* the profile too */
	return status;
}

static int parse_sort(struct opts *o, const char *spec)
{
	char *dup = strdup(spec), *save = NULL;

	if (!dup)
		oom();
	o->nkeys = 0;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k;

		if (!strcmp(t, "symbol"))
			t = "sym";
		for (k = 0; k < NKEYS && strcmp(t, key_names[k]); k++)
			;
		if (k == NKEYS) {
			cli_error("report: unknown sort key '%s' (comm, pid, dso, sym, srcline)", t);
			goto bad;
		}
		for (int i = 0; i < o->nkeys; i++)
			if (o->keys[i] == (enum key)k) {
				cli_error("report: sort key '%s' twice", t);
				goto bad;
			}
		o->keys[o->nkeys++] = (enum key)k;
	}
	free(dup);
	if (!o->nkeys)
		cli_error("report: --sort needs keys (comm, pid, dso, sym, srcline)");
	o->by_comm = has_key(o, KEY_COMM);
	return o->nkeys ? 0 : -1;
bad:
	free(dup);
	return -1;
}

/* perf's strlist/intlist: comma-separated, empty entries dropped; given
 * twice, the last. */
static int parse_list(struct list *l, const char *spec)
{
	char *dup = strdup(spec), *save = NULL;

	if (!dup)
		oom();
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	l->n = 0;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char **v = reallocarray(l->v, l->n + 1, sizeof(*v));

		if (!v || !(v[l->n] = strdup(t)))
			oom();
		l->v = v;
		l->n++;
	}
	free(dup);
	return 0;
}

static int parse_ids(struct list *l, const char *opt, const char *spec)
{
	parse_list(l, spec);
	for (size_t i = 0; i < l->n; i++) {
		char *end;
		long v;

		errno = 0;
		v = strtol(l->v[i], &end, 10);
		if (errno || end == l->v[i] || *end || v < 0 || v > INT32_MAX) {
			cli_error("report: --%s takes numbers, not '%s'", opt, l->v[i]);
			return -1;
		}
		/* "007" is 7, as perf's intlist */
		snprintf(l->v[i], strlen(l->v[i]) + 1, "%ld", v);
	}
	return 0;
}

static void list_free(struct list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct list){ 0 };
}

/* -F: perf's output fields and sort keys, each once. */
static int parse_fields(struct opts *o, const char *spec)
{
	char *dup = strdup(spec), *save = NULL;
	int rc = 0;

	if (!dup)
		oom();
	o->nfields = 0;
	for (char *t = strtok_r(dup, ",", &save); t && !rc; t = strtok_r(NULL, ",", &save)) {
		int c;

		if (!strcmp(t, "symbol"))
			t = "sym";
		for (c = 0; c < NCOLS && strcmp(t, c < NKEYS ? key_names[c] : col_names[c - NKEYS]);
		     c++)
			;
		if (c == NCOLS) {
			cli_error("report: unknown field '%s' (overhead, overhead_children, sample, "
				  "period, comm, pid, dso, sym, srcline)",
				  t);
			rc = -1;
		}
		for (int i = 0; !rc && i < o->nfields; i++)
			if (o->fields[i] == c) {
				cli_error("report: field '%s' twice", t);
				rc = -1;
			}
		if (!rc)
			o->fields[o->nfields++] = c;
	}
	free(dup);
	if (!rc && !o->nfields) {
		cli_error("report: --fields needs fields");
		rc = -1;
	}
	return rc;
}

/* One of report's own options (id, its argument in p->arg), or the
 * recording (CLI_ARG): 0, else 2 after saying why. */
static int report_option(struct opts *o, struct cli_parse *p, int id, const char **pprof,
			 const char **path)
{
	const char *v = p->arg, *next;
	char *end;

	switch (id) {
	case O_SORT:
		o->sort_given = true;
		return parse_sort(o, v) ? 2 : 0;
	case O_FIELDS:
		return parse_fields(o, v) ? 2 : 0;
	case O_COMM:
		return parse_list(&o->comms, v);
	case O_DSOS:
		return parse_list(&o->dsos, v);
	case O_SYMBOLS:
		return parse_list(&o->syms, v);
	case O_PID:
		return parse_ids(&o->pids, "pid", v) ? 2 : 0;
	case O_TID:
		return parse_ids(&o->tids, "tid", v) ? 2 : 0;
	case O_HEADER:
		o->header = true;
		return 0;
	case O_HEADER_ONLY:
		o->header_only = true;
		return 0;
	case O_CHILDREN:
	case O_NO_CHILDREN:
		o->children = id == O_CHILDREN;
		return 0;
	case O_SHOW_NR:
		o->show_nr = true;
		return 0;
	case O_TOP: {
		unsigned long long n;

		errno = 0;
		n = strtoull(v, &end, 10);
		if (errno || end == v || *end || v[0] == '-' || !n) {
			cli_error("report: --top needs a positive number, not '%s'", v);
			return 2;
		}
		o->top = (size_t)n;
		return 0;
	}
	case O_CALL_GRAPH:
		o->graph_given = true;
		if (v)
			return cg_parse(&o->graph, v, false) ? 2 : 0;
		/* perf's argument is optional: the next word, when it is one */
		next = cli_peek(p);
		if (next && !cg_parse(&o->graph, next, true))
			cli_take(p);
		else
			cg_parse(&o->graph, NULL, false);
		return 0;
	case O_INVERTED:
		o->inverted = true;
		o->graph_given = true;
		return 0;
	case O_PERCENT_LIMIT: {
		float f = strtof(v, &end);

		if (end == v || *end || !(f >= 0)) {
			cli_error("report: --percent-limit needs a percentage, not '%s'", v);
			return 2;
		}
		/* perf: the rows' limit, and the graphs' threshold too */
		o->percent_limit = f;
		o->graph.min_percent = f;
		return 0;
	}
	case O_INLINE:
		o->inlines = true;
		return 0;
	case O_JSON:
		o->json = true;
		return 0;
	case O_PPROF:
		*pprof = v;
		return 0;
	default:
		if (*path) {
			cli_error("report: one recording at a time (%s and %s)", *path, v);
			return 2;
		}
		*path = v;
		return 0;
	}
}

/* -F: the table's keys are -s's, then the fields' keys (perf appends the
 * output fields to the sort list); without -s, the fields' alone. */
static int resolve_fields(struct opts *o)
{
	if (!o->sort_given)
		o->nkeys = 0;
	o->nsort = o->nkeys;
	for (int k = 0; k < o->nfields; k++) {
		bool in = false;

		if (o->fields[k] >= NKEYS)
			continue;
		for (int i = 0; i < o->nkeys; i++)
			in |= (int)o->keys[i] == o->fields[k];
		if (!in)
			o->keys[o->nkeys++] = (enum key)o->fields[k];
	}
	if (!o->nkeys) {
		cli_error("report: --fields needs a sort key (comm, pid, dso, sym, srcline) or -s");
		return -1;
	}
	o->by_comm = has_key(o, KEY_COMM);
	return 0;
}

static int cmd_report(int argc, char **argv)
{
	struct cli_common common = { 0 };
	/* perf's default keys, whose Command column tells processes apart */
	struct opts o = { .keys = { KEY_COMM, KEY_DSO, KEY_SYM },
			  .nkeys = 3,
			  .by_comm = true,
			  .children = -1,
			  .graph = CG_OPTS_DEFAULT };
	struct folded_opts fo = { 0 };
	int progress = -1;
	const char *pprof = NULL; /* --pprof FILE: tools/cli_pprof.c writes it instead */
	const char *path = NULL, *note = NULL;
	struct cli_parse p;
	int id;

	cli_parse_init(&p, &cli_cmd_report, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		int r = id > 0 ? folded_option(&fo, id, p.arg) : 0;

		if (id == CLI_BAD || id == CLI_HELP || r < 0)
			return id == CLI_HELP ? 0 : 2;
		if (r == 0 && report_option(&o, &p, id, &pprof, &path))
			return 2;
	}
	o.path = common.input ? common.input : path;
	o.no_fetch = common.no_fetch;
	progress = common.progress;
	if (!o.path) {
		o.path = "perf.data"; /* perf's default */
		/* report --pprof perf.data: the file named is the output (the
		 * option takes it), the recording perf's default, and they
		 * are one file: refused (cli_output_open()), and said why. */
		note = "(the recording read by default: name the recording with -i or as "
		       "an argument, and write to another file)";
	}
	o.verbose = common.verbose;
	o.progress = cli_want_progress(progress);
	if (!fo.on && (fo.given || fo.out)) {
		cli_error("report: %s is an option of --folded", fo.given ? fo.given : "-o");
		return 2;
	}
	if (fo.on && pprof) {
		cli_error("report: --folded or --pprof, not both");
		return 2;
	}
	if (pprof && fo.max_stack_set) {
		cli_error("report: --pprof writes whole stacks: no --max-stack");
		return 2;
	}
	if (fo.max_stack_set)
		o.graph.max_stack = (long)fo.max_stack;
	if (fo.on)
		return folded_report(&fo, o.path, note, &common, o.no_fetch, o.progress);
	if (pprof)
		return pprof_report(pprof, o.path, note, &common, o.no_fetch, o.progress);
	if (o.nfields && resolve_fields(&o))
		return 2;
	{
		int rc = run(&o, &common);

		list_free(&o.comms);
		list_free(&o.pids);
		list_free(&o.tids);
		list_free(&o.dsos);
		list_free(&o.syms);
		return rc;
	}
}

const struct cli_command cli_cmd_report = {
	.name = "report",
	.run = cmd_report,
	.summary = "the top symbols of a perf.data, as perf report --stdio",
	.usage = "[OPTIONS] [PERF.DATA]",
	.about = "The symbols of a recording by their share of the sampled period (Overhead: the\n"
		 "sum of an entry's sample periods over the event's total), as perf report\n"
		 "--stdio prints them; one table per event.  Default file: perf.data.  The\n"
		 "sampled DSOs' debuginfo is found first, all at once: on this machine, then\n"
		 "from the servers of $DEBUGINFOD_URLS.  Kernel samples are named from\n"
		 "/proc/kallsyms when the recording's kernel build ID is the running kernel's,\n"
		 "else from its vmlinux (-k, or perf's places for it).  Their srcline and inline\n"
		 "frames come from that vmlinux, or from one of its build ID on this machine\n"
		 "(debug directories, perf's cache, the debuginfod cache: never fetched, it is\n"
		 "large; `dsostore fetch BUILD-ID` brings it), modules' from their .ko files.\n",
	.tables = report_tables,
};
