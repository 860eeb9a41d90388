/* dsostore symbolize: addresses to functions, file:line and inline frames,
 * with output that addr2line and llvm-symbolizer users already parse. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static const char symbolize_help[] =
	"usage: dsostore symbolize -e FILE [-f] [-i] [-C] [-a] [-p] [OPTIONS] [ADDR...]\n"
	"       dsostore symbolize [-f] [-i] [-C] [-a] [-p] [OPTIONS] < LINES\n"
	"With -e, as addr2line: each ADDR (hex, 0x optional; read from stdin when none\n"
	"is given) of FILE, whose debuginfo may be found by build ID.  Without -e, each\n"
	"input line is \"BUILD-ID ADDR\" or \"PATH ADDR\": the build IDs are resolved\n"
	"in parallel (debuginfod included), a batch of them at a time, then the batch's\n"
	"lines answered in order.  A line over 64 KiB gets the \"??\" answer.\n"
	"  -e, --exe FILE          the binary\n"
	"  -f, --functions         print function names\n"
	"  -i, --inlines           print the inlined callers too\n"
	"  -C, --demangle          demangle C++ names\n"
	"  -a, --addresses         print each address first\n"
	"  -p, --pretty-print      one line per address (\"FUNC at FILE:LINE\")\n"
	"  --file-offset           addresses are file offsets (perf, /proc/PID/maps)\n"
	"  --batch N               without -e: distinct binaries per batch (4096; at\n"
	"                          most 16384): memory is bounded by it\n"
	"  --output-style=STYLE    GNU (addr2line, default), LLVM (llvm-symbolizer) or\n"
	"                          JSON (one object per address)\n" CLI_COMMON_HELP;

enum style { STYLE_GNU, STYLE_LLVM, STYLE_JSON };

struct opts {
	bool functions, inlines, demangle, addresses, pretty, file_offset;
	enum style style;
	const char *exe;
};

/* ---------------------------------------------------------------- output */

static void print_json(const struct opts *o, const char *module, uint64_t addr,
		       const struct ds_sym_result *r, const char *error)
{
	printf("{\"Address\":\"0x%" PRIx64 "\",\"ModuleName\":", addr);
	cli_json_string(module ? module : "");
	if (error) {
		printf(",\"Error\":{\"Message\":");
		cli_json_string(error);
		printf("}}\n");
		return;
	}
	printf(",\"Symbol\":[");
	if (!r || !r->nframes) /* llvm-symbolizer: one empty frame */
		printf("{\"Column\":0,\"Discriminator\":0,\"FileName\":\"\",\"FunctionName\":\"\","
		       "\"Line\":0,\"StartAddress\":\"\",\"StartFileName\":\"\",\"StartLine\":0}");
	for (size_t i = 0; r && i < r->nframes; i++) {
		const struct ds_frame *f = &r->frames[i];

		if (i && !o->inlines)
			break;
		printf("%s{\"Column\":%u,\"Discriminator\":%u,\"FileName\":", i ? "," : "", f->column,
		       f->discriminator);
		cli_json_string(f->file ? f->file : "");
		printf(",\"FunctionName\":");
		cli_json_string(f->function ? f->function : "");
		printf(",\"Inlined\":%s,\"Line\":%u,\"StartAddress\":\"0x%" PRIx64
		       "\",\"StartFileName\":\"\",\"StartLine\":0}",
		       f->inlined ? "true" : "false", f->line, f->function_start);
	}
	printf("]}\n");
}

/* disc: binutils prints the innermost row's discriminator on every frame
 * of an inline chain (addr2line.c never resets it), and scripts compare
 * against that. */
static void print_location(const struct ds_frame *f, bool found, bool gnu, unsigned disc)
{
	if (gnu) {
		/* binutils: "??:0" when nothing was found, "FILE:?" when the
		 * line is unknown, the discriminator after the line. */
		if (!found) {
			fputs("??:0", stdout);
			return;
		}
		fputs(f->file ? f->file : "??", stdout);
		if (f->line)
			printf(":%u", f->line);
		else
			fputs(":?", stdout);
		if (disc)
			printf(" (discriminator %u)", disc);
		return;
	}
	printf("%s:%u:%u", f->file ? f->file : "??", f->line, f->column);
}

static void print_text(const struct opts *o, uint64_t addr, const struct ds_sym_result *r)
{
	static const struct ds_frame unknown = { 0 };
	bool gnu = o->style == STYLE_GNU, found = r && r->nframes;
	size_t n = found ? r->nframes : 1;

	if (o->addresses) {
		if (gnu)
			printf(o->pretty ? "0x%016" PRIx64 ": " : "0x%016" PRIx64 "\n", addr);
		else
			printf(o->pretty ? "0x%" PRIx64 ": " : "0x%" PRIx64 "\n", addr);
	}
	for (size_t i = 0; i < n; i++) {
		const struct ds_frame *f = found ? &r->frames[i] : &unknown;

		if (i && !o->inlines)
			break;
		if (o->pretty) {
			if (i)
				fputs(" (inlined by) ", stdout);
			if (o->functions || !gnu)
				printf("%s at ", f->function ? f->function : "??");
			print_location(f, found, gnu, found ? r->frames[0].discriminator : 0);
			putchar('\n');
			continue;
		}
		if (o->functions || !gnu)
			printf("%s\n", f->function ? f->function : "??");
		print_location(f, found, gnu, found ? r->frames[0].discriminator : 0);
		putchar('\n');
	}
	if (!gnu)
		putchar('\n');
}

static void answer(const struct opts *o, const char *module, uint64_t addr,
		   const struct ds_sym_result *r, const char *error)
{
	if (o->style == STYLE_JSON)
		print_json(o, module, addr, r, error);
	else
		print_text(o, addr, error ? NULL : r);
}

/* ------------------------------------------------------------- parsing */

/* The longest request line, without its newline.  A longer one is answered
 * "??" and read on in buffer-sized pieces, never held: a stream of any
 * length and shape runs in bounded memory. */
#define SYM_LINE_MAX (64 * 1024)

static bool parse_addr(const char *s, size_t len, uint64_t *out)
{
	return ds_sym_parse_line(s, len, NULL, 0, NULL, out) == DS_SYM_LINE_ADDR;
}

/* Lines of stdin, read in large blocks.  Output is flushed just before a
 * read that may block: a peer that writes one address and waits for its
 * answer gets it, and a bulk stream is not flushed per line. */
struct reader {
	char buf[SYM_LINE_MAX + 2]; /* a whole line, its newline, a NUL */
	size_t start, end;
	size_t lineno;
	bool eof;
};

enum { LINE_EOF, LINE_OK, LINE_TOO_LONG };

/* The next line, NUL-terminated without its newline, in *line (valid until
 * the next call) and *len (it may hold NULs): LINE_OK.  LINE_TOO_LONG when
 * it had more than SYM_LINE_MAX bytes (all of them read and dropped);
 * LINE_EOF at the end. */
static int next_line(struct reader *rd, char **line, size_t *len)
{
	bool too_long = false;

	for (;;) {
		char *p = rd->buf + rd->start;
		char *nl = memchr(p, '\n', rd->end - rd->start);
		ssize_t n;

		if (nl || (rd->eof && rd->start < rd->end)) {
			size_t l = nl ? (size_t)(nl - p) : rd->end - rd->start;

			rd->start += l + (nl != NULL);
			rd->lineno++;
			if (too_long)
				return LINE_TOO_LONG;
			p[l] = 0; /* the newline, or the byte kept free after the end */
			*line = p;
			*len = l;
			return LINE_OK;
		}
		if (rd->eof) {
			if (too_long)
				rd->lineno++;
			return too_long ? LINE_TOO_LONG : LINE_EOF;
		}
		memmove(rd->buf, p, rd->end - rd->start);
		rd->end -= rd->start;
		rd->start = 0;
		/* SYM_LINE_MAX + 1 bytes and no newline: too long.  What is
		 * here goes, the rest of the line is dropped as it comes. */
		if (rd->end > SYM_LINE_MAX) {
			too_long = true;
			rd->end = 0;
		}
		fflush(stdout);
		n = read(0, rd->buf + rd->end, sizeof(rd->buf) - 1 - rd->end);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rd->eof = true;
		else
			rd->end += (size_t)n;
	}
}

static int symbolize_one(struct ds_dso *dso, const struct opts *o, const char *module,
			 uint64_t addr, unsigned flags)
{
	struct ds_sym_result r;
	char msg[128];
	int err = ds_dso_symbolize(dso, addr, flags, &r);

	if (err == -ERANGE)
		snprintf(msg, sizeof(msg), "0x%" PRIx64 ": outside every loadable segment", addr);
	else if (err == -ENOENT || err == -ENODATA)
		snprintf(msg, sizeof(msg), "no debuginfo or symbols found");
	else if (err)
		snprintf(msg, sizeof(msg), "%s", ds_strerror(err));
	if (err) {
		answer(o, module, addr, NULL, msg);
		if (o->exe && (err == -ENOENT || err == -ENODATA)) {
			/* addr2line mode: say it once, answer "??" for all. */
			static bool said;

			if (!said)
				cli_error("%s: %s", module, msg);
			said = true;
			return 0;
		}
		cli_error("%s: %s", module, msg);
		return 1;
	}
	answer(o, module, r.addr ? r.addr : addr, &r, NULL);
	ds_sym_result_release(&r);
	return 0;
}

static unsigned sym_flags(const struct opts *o)
{
	unsigned flags = 0;

	if (o->inlines)
		flags |= DS_SYM_INLINES;
	if (o->demangle)
		flags |= DS_SYM_DEMANGLE;
	if (o->file_offset)
		flags |= DS_SYM_FILE_OFFSET;
	if (o->style == STYLE_GNU)
		flags |= DS_SYM_BINUTILS;
	return flags;
}

/* A line over SYM_LINE_MAX: the answer of a bad line, one message. */
static void answer_too_long(const struct opts *o, const char *module, size_t lineno)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "line %zu: longer than %d bytes", lineno, SYM_LINE_MAX);
	answer(o, module, 0, NULL, msg);
	cli_error("%s", msg);
}

/* addr2line mode: one binary. */
static int run_exe(const struct opts *o, struct ds_store *store, char **addrs, int naddrs)
{
	unsigned flags = sym_flags(o);
	struct ds_dso *dso = ds_store_findnew(store, o->exe, NULL);
	struct reader *rd = calloc(1, sizeof(*rd));
	char *line;
	size_t len;
	int status = 0, kind;

	if (!dso || !rd) {
		cli_error("%s: %s", o->exe, ds_strerror(-errno));
		free(rd);
		return 1;
	}
	for (int i = 0; i < naddrs; i++) {
		uint64_t addr;

		if (!parse_addr(addrs[i], strlen(addrs[i]), &addr)) {
			cli_error("%s: not a hexadecimal address", addrs[i]);
			answer(o, o->exe, 0, NULL, "not a hexadecimal address");
			status = 1;
			continue;
		}
		status |= symbolize_one(dso, o, o->exe, addr, flags);
	}
	while (!naddrs && (kind = next_line(rd, &line, &len)) != LINE_EOF) {
		uint64_t addr;

		if (kind == LINE_TOO_LONG) {
			answer_too_long(o, o->exe, rd->lineno);
			status = 1;
		} else if (!parse_addr(line, len, &addr)) {
			line[strcspn(line, "\r\n")] = 0;
			cli_error("%s: not a hexadecimal address", line);
			answer(o, o->exe, 0, NULL, "not a hexadecimal address");
			status = 1;
		} else {
			status |= symbolize_one(dso, o, o->exe, addr, flags);
		}
	}
	free(rd);
	ds_dso_put(dso);
	return status;
}

/* ------------------------------------------------------ build-ID mode */

/* The stream is answered a batch at a time: read up to --batch distinct
 * DSOs (or CHUNK_LINES lines, or CHUNK_TEXT bytes of names), find all
 * their debuginfo at once (one parallel debuginfod batch), answer the
 * batch's lines in order, let its DSOs go.  Memory stays flat however long
 * the stream; a build ID asked again in a later batch is not fetched again:
 * a found file, or a miss, is in the debuginfod cache by then. */
#define CHUNK_DSOS_DEFAULT 4096
#define CHUNK_LINES	   16384
#define CHUNK_TEXT	   (1u << 20)

struct item {
	struct ds_dso *dso; /* borrowed from the batch's set; NULL: a bad line */
	uint64_t addr;
	size_t module, error; /* offsets into the batch's text; SIZE_MAX: none */
};

/* Open addressing over DSO pointers: each distinct DSO of a batch once,
 * with the batch's reference on it. */
struct dso_set {
	struct ds_dso **slot;
	size_t mask, n;
};

struct batch {
	struct item *items;
	size_t n;
	char *text;
	size_t used;
	struct dso_set cur, prev;
	size_t max_dsos;
};

static _Noreturn void oom(void)
{
	cli_error("out of memory");
	exit(2);
}

static void set_init(struct dso_set *s, size_t max)
{
	size_t cap = 16;

	while (cap < 2 * max)
		cap *= 2;
	s->slot = calloc(cap, sizeof(*s->slot));
	if (!s->slot)
		oom();
	s->mask = cap - 1;
	s->n = 0;
}

/* Takes the caller's reference: kept if d is new here, else dropped. */
static void set_add(struct dso_set *s, struct ds_dso *d)
{
	uint64_t x = ((uintptr_t)d >> 4) * 0x9e3779b97f4a7c15ull;
	size_t h = (size_t)(x ^ x >> 32) & s->mask;

	for (; s->slot[h]; h = (h + 1) & s->mask) {
		if (s->slot[h] == d) {
			ds_dso_put(d);
			return;
		}
	}
	s->slot[h] = d;
	s->n++;
}

static void set_clear(struct dso_set *s)
{
	for (size_t i = 0; s->n && i <= s->mask; i++) {
		if (s->slot[i]) {
			ds_dso_put(s->slot[i]);
			s->slot[i] = NULL;
			s->n--;
		}
	}
}

/* Copies a string into the batch's text; its offset.  batch_full() keeps
 * room for a line's two strings: the cut is only a bound. */
static size_t text_add(struct batch *b, const char *s, size_t len)
{
	size_t at = b->used;

	if (len + 1 > CHUNK_TEXT - b->used)
		len = CHUNK_TEXT - b->used - 1;
	memcpy(b->text + at, s, len);
	b->text[at + len] = 0;
	b->used += len + 1;
	return at;
}

static size_t text_printf(struct batch *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static size_t text_printf(struct batch *b, const char *fmt, ...)
{
	char msg[SYM_LINE_MAX + 256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return SIZE_MAX;
	return text_add(b, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

/* Whether a batch has room for one more line of any kind. */
static bool batch_full(const struct batch *b)
{
	return b->n == CHUNK_LINES || b->cur.n >= b->max_dsos ||
	       CHUNK_TEXT - b->used < 2 * (SYM_LINE_MAX + 256);
}

static void read_one(struct batch *b, struct ds_store *store, int kind, char *line, size_t len,
		     size_t lineno)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	struct item *it = &b->items[b->n];
	char key[4096];

	*it = (struct item){ .module = SIZE_MAX, .error = SIZE_MAX };
	if (kind == LINE_TOO_LONG) {
		b->n++;
		it->module = text_add(b, "", 0);
		it->error = text_printf(b, "line %zu: longer than %d bytes", lineno, SYM_LINE_MAX);
		return;
	}
	kind = ds_sym_parse_line(line, len, key, sizeof(key), &id.build_id, &it->addr);
	if (kind == DS_SYM_LINE_EMPTY)
		return;
	b->n++;
	if (kind == DS_SYM_LINE_BUILD_ID || kind == DS_SYM_LINE_PATH) {
		struct ds_dso *d = kind == DS_SYM_LINE_PATH ? ds_store_findnew(store, key, NULL)
							    : ds_store_findnew(store, NULL, &id);
		int err = d ? 0 : -errno;

		it->module = text_add(b, key, strlen(key));
		if (d) {
			set_add(&b->cur, d);
			it->dso = d;
		} else {
			it->error = text_printf(b, "line %zu: %s: %s", lineno, key,
						ds_strerror(err));
		}
		return;
	}
	line[strcspn(line, "\r\n")] = 0;
	it->module = text_add(b, line, strlen(line));
	it->error = text_printf(b, "line %zu: expected \"BUILD-ID ADDR\" or \"PATH ADDR\" (hex)",
				lineno);
}

/* Resolves and answers the batch's lines, then lets the DSOs of the batch
 * before go: those this one shares stay loaded (its set has them too), so a
 * long stream over a few binaries builds each index once. */
static int answer_batch(const struct opts *o, struct ds_store *store, struct batch *b)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = cli_want_progress(-1) ? cli_progress : NULL);
	unsigned flags = sym_flags(o);
	struct dso_set t;
	int status = 0;

	if (b->cur.n)
		ds_store_prefetch(store, &fo);
	for (size_t i = 0; i < b->n; i++) {
		const struct item *it = &b->items[i];
		const char *module = it->module != SIZE_MAX ? b->text + it->module : "";
		const char *error = it->error != SIZE_MAX ? b->text + it->error : "bad line";

		if (!it->dso) {
			answer(o, module, it->addr, NULL, error);
			cli_error("%s", error);
			status = 1;
		} else {
			status |= symbolize_one(it->dso, o, module, it->addr, flags);
		}
	}
	set_clear(&b->prev);
	t = b->prev;
	b->prev = b->cur;
	b->cur = t;
	b->n = 0;
	b->used = 0;
	return status;
}

static int run_stream(const struct opts *o, struct ds_store *store, size_t max_dsos)
{
	struct batch b = { .max_dsos = max_dsos };
	struct reader *rd = calloc(1, sizeof(*rd));
	char *line;
	size_t len;
	int status = 0, kind;

	b.items = calloc(CHUNK_LINES, sizeof(*b.items));
	b.text = malloc(CHUNK_TEXT);
	if (!rd || !b.items || !b.text)
		oom();
	set_init(&b.cur, max_dsos);
	set_init(&b.prev, max_dsos);
	while ((kind = next_line(rd, &line, &len)) != LINE_EOF) {
		read_one(&b, store, kind, line, len, rd->lineno);
		if (batch_full(&b))
			status |= answer_batch(o, store, &b);
	}
	if (b.n)
		status |= answer_batch(o, store, &b);
	set_clear(&b.prev);
	set_clear(&b.cur);
	free(b.prev.slot);
	free(b.cur.slot);
	free(b.items);
	free(b.text);
	free(rd);
	return status;
}

int cmd_symbolize(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct opts o = { .style = STYLE_GNU };
	struct ds_context *ctx;
	struct ds_store *store;
	char **addrs = calloc(argc, sizeof(*addrs));
	size_t batch = CHUNK_DSOS_DEFAULT;
	int naddrs = 0, status;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int r = cli_common_option(&common, argc, argv, &i, symbolize_help);

		if (r < 0)
			return r == CLI_HELP ? 0 : 2;
		if (r > 0)
			continue;
		if ((!strcmp(a, "-e") || !strcmp(a, "--exe") || !strcmp(a, "--obj")) &&
			   i + 1 < argc) {
			o.exe = argv[++i];
		} else if (!strncmp(a, "--exe=", 6) || !strncmp(a, "--obj=", 6)) {
			o.exe = a + 6;
		} else if (!strncmp(a, "--output-style=", 15)) {
			const char *st = a + 15;

			if (!strcasecmp(st, "GNU"))
				o.style = STYLE_GNU;
			else if (!strcasecmp(st, "LLVM"))
				o.style = STYLE_LLVM;
			else if (!strcasecmp(st, "JSON"))
				o.style = STYLE_JSON;
			else {
				cli_error("unknown output style %s (GNU, LLVM or JSON)", st);
				return 2;
			}
		} else if ((!strcmp(a, "--batch") && i + 1 < argc) || !strncmp(a, "--batch=", 8)) {
			const char *v = a[7] == '=' ? a + 8 : argv[++i];
			char *end;
			unsigned long n;

			errno = 0;
			n = strtoul(v, &end, 10);
			if (errno || end == v || *end || v[0] == '-' || !n || n > CHUNK_LINES) {
				cli_error("symbolize: --batch needs a number from 1 to %d, not '%s'",
					  CHUNK_LINES, v);
				return 2;
			}
			batch = n;
		} else if (!strcmp(a, "--file-offset")) {
			o.file_offset = true;
		} else if (!strcmp(a, "--functions")) {
			o.functions = true;
		} else if (!strcmp(a, "--inlines")) {
			o.inlines = true;
		} else if (!strcmp(a, "--demangle")) {
			o.demangle = true;
		} else if (!strcmp(a, "--addresses")) {
			o.addresses = true;
		} else if (!strcmp(a, "--pretty-print")) {
			o.pretty = true;
		} else if (a[0] == '-' && a[1] && strspn(a + 1, "fiCap") == strlen(a + 1)) {
			o.functions |= !!strchr(a, 'f');
			o.inlines |= !!strchr(a, 'i');
			o.demangle |= !!strchr(a, 'C');
			o.addresses |= !!strchr(a, 'a');
			o.pretty |= !!strchr(a, 'p');
		} else if (a[0] == '-' && a[1] && !(a[1] == '0' && a[2] == 'x')) {
			cli_error("symbolize: unknown option %s", a);
			return 2;
		} else {
			addrs[naddrs++] = argv[i];
		}
	}
	/* llvm-symbolizer names functions, follows inlines and demangles by
	 * default; its style keeps those defaults. */
	if (o.style != STYLE_GNU) {
		o.functions = true;
		o.inlines = true;
		o.demangle = true;
	}
	if (!o.exe && naddrs) {
		cli_error("symbolize: addresses on the command line need -e FILE");
		return 2;
	}
	ctx = cli_context(&common);
	store = ds_store_new(ctx, "host", NULL);
	ds_context_free(ctx);
	if (!store) {
		cli_error("cannot create a store: %s", ds_strerror(-errno));
		return 2;
	}
	/* Output is the bulk of the work: write it in large blocks. */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	status = o.exe ? run_exe(&o, store, addrs, naddrs) : run_stream(&o, store, batch);
	fflush(stdout);
	ds_store_free(store);
	free(addrs);
	return status;
}
