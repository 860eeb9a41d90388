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
#include <poll.h>
#include <strings.h>
#include <sys/mman.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

enum {
	O_EXE = 1,
	O_KERNEL,
	O_FUNCTIONS,
	O_INLINES,
	O_DEMANGLE,
	O_ADDRESSES,
	O_PRETTY,
	O_BASENAMES,
	O_IGNORED,
	O_FILE_OFFSET,
	O_PID,
	O_BATCH,
	O_MEM_BUDGET,
	O_FD_BUDGET,
	O_OUTPUT_STYLE,
};

static const struct cli_opt symbolize_opts[] = {
	{ O_EXE, 'e', "exe", "FILE", "the binary", CLI_ARG_FILE },
	{ O_EXE, 0, "obj", "FILE", "the same as --exe (llvm-symbolizer's)", CLI_ARG_FILE },
	{ O_KERNEL, 0, "kernel", NULL,
	  "addresses of the kernel (/proc/kallsyms' names, its modules'; file:line from the "
	  "vmlinux when found)",
	  0 },
	{ O_FUNCTIONS, 'f', "functions", NULL, "print function names", 0 },
	{ O_INLINES, 'i', "inlines", NULL, "print the inlined callers too", 0 },
	{ O_DEMANGLE, 'C', "demangle", "STYLE",
	  "demangle C++ and Rust names (as addr2line -C; LLVM style: as llvm-symbolizer); "
	  "STYLE \"none\" does not",
	  CLI_ARG_OPTIONAL },
	{ O_ADDRESSES, 'a', "addresses", NULL, "print each address first", 0 },
	{ O_PRETTY, 'p', "pretty-print", NULL, "one line per address (\"FUNC at FILE:LINE\")", 0 },
	{ O_BASENAMES, 's', "basenames", NULL, "file names without their directories", 0 },
	{ O_IGNORED, 'b', "target", "TARGET", "accepted as binutils accepts it (no effect)", 0 },
	{ O_IGNORED, 'R', "recurse-limit", NULL, "accepted as binutils accepts it (no effect)",
	  0 },
	{ O_IGNORED, 'r', "no-recurse-limit", NULL,
	  "accepted as binutils accepts it (no effect)", 0 },
	{ O_IGNORED, 0, "recursion-limit", NULL, "the same as --recurse-limit", 0 },
	{ O_IGNORED, 0, "no-recursion-limit", NULL, "the same as --no-recurse-limit", 0 },
	{ O_FILE_OFFSET, 0, "file-offset", NULL,
	  "addresses are file offsets (perf, /proc/PID/maps)", 0 },
	{ O_PID, 0, "pid", "PID",
	  "addresses are absolute ones of process PID; JIT code named from its "
	  "/tmp/perf-PID.map",
	  0 },
	{ O_BATCH, 0, "batch", "N",
	  "without -e: distinct binaries per batch (4096; at most 16384): memory is bounded "
	  "by it",
	  0 },
	{ O_MEM_BUDGET, 0, "mem-budget", "SIZE",
	  "bytes of debuginfo and indexes to keep open (K, M, G suffixes: KiB...); over it, "
	  "what was used least recently is closed and opened again when asked",
	  0 },
	{ O_FD_BUDGET, 0, "fd-budget", "N",
	  "files to keep open at most (a stream over many binaries stays under "
	  "RLIMIT_NOFILE), the same way",
	  0 },
	{ O_OUTPUT_STYLE, 0, "output-style", "STYLE",
	  "GNU (addr2line, default), LLVM (llvm-symbolizer) or JSON (one object per address)",
	  0 },
	{ 0 },
};
static const struct cli_opt *const symbolize_tables[] = {
	symbolize_opts,	 cli_opts_lookup, cli_opts_kernel, cli_opts_vmlinux,
	cli_opts_verbose, cli_opts_help,   NULL
};

enum style { STYLE_GNU, STYLE_LLVM, STYLE_JSON };

struct opts {
	bool functions, inlines, demangle, addresses, pretty, file_offset, kernel;
	int pid; /* --pid: bare addresses are this process's */
	bool basenames;
	/* -e in GNU style: stdin and the addresses read as binutils reads
	 * them (tools/cli_a2l.c); quiet: nothing on stderr (addr2line's
	 * personality: binutils says nothing of a file without symbols). */
	bool binutils, quiet;
	/* The personality: names as binutils gives them in a run, too: no
	 * NAME@plt, functions renamed by what was asked before
	 * (a2l_note_function()).  symbolize keeps its PLT names and answers
	 * each address as binutils would in a fresh process. */
	bool history;
	unsigned addr_width; /* -a: hex digits, 16 (8 for an ELF32 file) */
	bool section; /* binutils -j: offsets into [sec_vma, + sec_size) */
	uint64_t sec_vma, sec_size;
	enum style style;
	const char *exe, *vmlinux;
};

/* ---------------------------------------------------------------- output
 *
 * Written by hand into one large buffer (printf per field was a fifth of
 * the time at a million addresses), which goes out with fwrite when it is
 * full, at the end, and before a read that may block. */

#define OUT_FLUSH (1u << 20)

struct out {
	char *buf;
	size_t len, cap;
};

static _Noreturn void oom(void)
{
	cli_error("out of memory");
	exit(2);
}

/* The whole pages of [p, p + len) made ready for writing in one call
 * (MADV_POPULATE_WRITE), where the first touch of each would have been a
 * page fault of its own: on a paravirtualized machine a million warm
 * addresses took ~1,900 of them in the block's arrays and the output
 * buffer.  Best effort: an older kernel says EINVAL, and faults instead. */
static void populate(void *p, size_t len)
{
#ifdef MADV_POPULATE_WRITE
	cli_advise_pages(p, len, 4096, MADV_POPULATE_WRITE);
#else
	(void)p;
	(void)len;
#endif
}

static void out_grow(struct out *ob, size_t n)
{
	size_t cap = ob->cap ? 2 * ob->cap : OUT_FLUSH + (64u << 10);
	char *p;

	while (cap - ob->len < n)
		cap *= 2;
	p = realloc(ob->buf, cap);
	if (!p)
		oom();
	/* The first buffer, filled to OUT_FLUSH before each write: every
	 * page of it is used.  (Not a larger one grown from it, as a staged
	 * block's may be: only what is written of that should be resident.) */
	if (!ob->cap)
		populate(p + ob->len, cap - ob->len);
	ob->buf = p;
	ob->cap = cap;
}

static inline void out_mem(struct out *ob, const char *s, size_t n)
{
	if (ob->cap - ob->len < n)
		out_grow(ob, n);
	memcpy(ob->buf + ob->len, s, n);
	ob->len += n;
}

#define out_lit(ob, s) out_mem(ob, s, sizeof(s) - 1)

static inline void out_char(struct out *ob, char c)
{
	out_mem(ob, &c, 1);
}

static void out_uint(struct out *ob, unsigned v)
{
	char tmp[10];
	size_t n = 0;

	do
		tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
	while ((v /= 10));
	out_mem(ob, tmp + sizeof(tmp) - n, n);
}

/* v in lower-case hex, at least width digits. */
static void out_hex(struct out *ob, uint64_t v, size_t width)
{
	char tmp[16];
	size_t n = 0;

	do
		tmp[sizeof(tmp) - ++n] = "0123456789abcdef"[v & 15];
	while ((v >>= 4));
	while (n < width)
		tmp[sizeof(tmp) - ++n] = '0';
	out_mem(ob, tmp + sizeof(tmp) - n, n);
}

/* As cli_json_string(): quotes, backslashes and control characters escaped. */
static void out_json(struct out *ob, const char *s)
{
	out_char(ob, '"');
	for (;;) {
		size_t run = 0;
		unsigned char c;

		while ((c = (unsigned char)s[run]) >= 0x20 && c != '"' && c != '\\')
			run++;
		out_mem(ob, s, run);
		s += run;
		if (!c)
			break;
		if (c == '"' || c == '\\') {
			char esc[2] = { '\\', (char)c };

			out_mem(ob, esc, 2);
		} else {
			out_lit(ob, "\\u00");
			out_hex(ob, c, 2);
		}
		s++;
	}
	out_char(ob, '"');
}

/* A frame's string as JSON (NULL: ""), copied as it is where the
 * library says it is plain. */
static void out_name(struct out *ob, const char *s, size_t len, bool plain)
{
	if (!plain || !s) {
		out_json(ob, s ? s : "");
		return;
	}
	out_char(ob, '"');
	out_mem(ob, s, len);
	out_char(ob, '"');
}

static void out_flush(struct out *ob)
{
	if (ob->len)
		fwrite(ob->buf, 1, ob->len, stdout);
	ob->len = 0;
	fflush(stdout);
}

static void print_json(struct out *ob, const struct opts *o, const char *module, uint64_t addr,
		       const struct ds_sym_answer *r, const char *error)
{
	out_lit(ob, "{\"Address\":\"0x");
	out_hex(ob, addr, 0);
	out_lit(ob, "\",\"ModuleName\":");
	out_json(ob, module ? module : "");
	/* Why an address is not named, or named from the binary's own
	 * symbols alone (docs/symbolization.md, "Reasons"). */
	if (r && r->reason != DS_SYM_REASON_NONE) {
		out_lit(ob, ",\"Reason\":");
		out_json(ob, ds_sym_reason_name(r->reason));
	}
	if (error) {
		out_lit(ob, ",\"Error\":{\"Message\":");
		out_json(ob, error);
		out_lit(ob, "}}\n");
		return;
	}
	out_lit(ob, ",\"Symbol\":[");
	if (!r || !r->nframes) /* llvm-symbolizer: one empty frame */
		out_lit(ob, "{\"Column\":0,\"Discriminator\":0,\"FileName\":\"\",\"FunctionName\":"
			    "\"\",\"Line\":0,\"StartAddress\":\"\",\"StartFileName\":\"\","
			    "\"StartLine\":0}");
	for (size_t i = 0; r && i < r->nframes; i++) {
		const struct ds_frame *f = &r->frames[i];

		if (i && !o->inlines)
			break;
		if (i)
			out_char(ob, ',');
		out_lit(ob, "{\"Column\":");
		out_uint(ob, f->column);
		out_lit(ob, ",\"Discriminator\":");
		out_uint(ob, f->discriminator);
		out_lit(ob, ",\"FileName\":");
		out_name(ob, f->file, f->file_len, f->file_plain);
		out_lit(ob, ",\"FunctionName\":");
		out_name(ob, f->function, f->function_len, f->function_plain);
		if (f->inlined)
			out_lit(ob, ",\"Inlined\":true,\"Line\":");
		else
			out_lit(ob, ",\"Inlined\":false,\"Line\":");
		out_uint(ob, f->line);
		out_lit(ob, ",\"StartAddress\":\"0x");
		out_hex(ob, f->function_start, 0);
		out_lit(ob, "\",\"StartFileName\":\"\",\"StartLine\":0}");
	}
	out_lit(ob, "]}\n");
}

/* Writers into room reserved beforehand (out_room): the text styles
 * reserve once per answer and write without checks. */
static inline char *out_room(struct out *ob, size_t n)
{
	if (ob->cap - ob->len < n)
		out_grow(ob, n);
	return ob->buf + ob->len;
}

static inline char *put_mem(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define put_lit(p, s) put_mem(p, s, sizeof(s) - 1)

/* The most put_term() writes of n bytes, and the NUL after them: every
 * escape of ds_term_escape() is at most 4 bytes a byte ("\xNN"). */
#define TERM_ROOM(n) (4 * (size_t)(n) + 1)

/* n bytes of a name (a symbol, JIT name, file) as terminal-safe text
 * (ds_term_escape(); a plain name is copied as is); TERM_ROOM(n) bytes of
 * room at p. */
static inline char *put_term(char *p, const char *s, size_t n)
{
	return p + ds_term_escape(p, TERM_ROOM(n), s, n);
}

/* put_term() of a frame's string, copied as it is when the library said
 * it is plain (it checked it once, not once an answer).  slack: the
 * string is followed by DS_SYM_STRING_SLACK readable bytes (an answer of
 * ds_dso_symbolize_batch()), and room at p for as many more: copied in
 * pieces of that size.  (memcpy() of a million names of 10 to 60 bytes
 * was 7% of a warm run's time, where it is 2% of the instructions: its
 * branches by length, which names of all lengths mispredict.) */
static inline char *put_name(char *p, const char *s, size_t n, bool plain, bool slack)
{
	if (plain && slack) {
		memcpy(p, s, DS_SYM_STRING_SLACK);
		for (size_t k = DS_SYM_STRING_SLACK; k < n; k += DS_SYM_STRING_SLACK)
			memcpy(p + k, s + k, DS_SYM_STRING_SLACK);
		return p + n;
	}
	return plain ? put_mem(p, s, n) : put_term(p, s, n);
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
				      "25262728293031323334353637383940414243444546474849"
				      "50515253545556575859606162636465666768697071727374"
				      "75767778798081828384858687888990919293949596979899";

static char *put_uint(char *p, unsigned v) /* at most 10 bytes */
{
	size_t n = v < 10 ? 1 : v < 100 ? 2 : v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5
		 : v < 1000000 ? 6 : v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *e = p + n;

	/* Two digits a step, from the end. */
	while (v >= 100) {
		e -= 2;
		memcpy(e, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(e - 2, digit_pairs + 2 * v, 2);
	else
		e[-1] = (char)('0' + v);
	return p + n;
}

#ifndef __SSE2__
/* The eight hex digits of x (32 bits) as they are written, in the bytes
 * of a word: each nibble spread to a byte of its own (the last in the
 * lowest), made a digit ('a'-'f' where it is over 9), and the bytes put
 * in the order of memory. */
static inline uint64_t hex8(uint64_t x)
{
	uint64_t over9;

	x = ((x & 0xffff0000u) << 16) | (x & 0xffffu);
	x = ((x & 0x0000ff000000ff00ull) << 8) | (x & 0x000000ff000000ffull);
	x = ((x & 0x00f000f000f000f0ull) << 4) | (x & 0x000f000f000f000full);
	over9 = ((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull;
	x += 0x3030303030303030ull + over9 * ('a' - '0' - 10);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	x = __builtin_bswap64(x); /* the first digit in the first byte */
#endif
	return x;
}
#endif

#ifdef __SSE2__
/* The 16 hex digits of v, first digit first, in a vector: its bytes in
 * the order of memory, each split in two nibbles, made digits. */
static inline __m128i hex16(uint64_t v)
{
	__m128i x = _mm_cvtsi64_si128((long long)__builtin_bswap64(v));
	__m128i mask = _mm_set1_epi8(0x0f);
	__m128i nib = _mm_unpacklo_epi8(_mm_and_si128(_mm_srli_epi16(x, 4), mask),
					_mm_and_si128(x, mask));
	__m128i over9 = _mm_cmpgt_epi8(nib, _mm_set1_epi8(9));

	return _mm_add_epi8(_mm_add_epi8(nib, _mm_set1_epi8('0')),
			    _mm_and_si128(over9, _mm_set1_epi8('a' - '0' - 10)));
}
#endif

static char *put_hex(char *p, uint64_t v, size_t width) /* at most 16 bytes */
{
	size_t n = v ? 16 - (size_t)__builtin_clzll(v) / 4 : 1;
#ifdef __SSE2__
	__m128i digits = hex16(v);
#else
	uint64_t digits[2] = { hex8(v >> 32), hex8(v & 0xffffffffu) };
#endif

	if (n < width)
		n = width;
	if (n == 16) /* (-a: a 64-bit file's width) */
		memcpy(p, &digits, 16);
	else
		memcpy(p, (const char *)&digits + 16 - n, n);
	return p + n;
}

/* The most put_location() and the punctuation around a frame write,
 * beside the frame's two strings. */
#define FRAME_ROOM 96

/* disc: binutils prints the innermost row's discriminator on every frame
 * of an inline chain (addr2line.c never resets it), and scripts compare
 * against that. */
static inline char *put_location(char *p, const struct ds_frame *f, bool found, bool gnu,
				 unsigned disc, bool slack)
{
	if (!found)
		return gnu ? put_lit(p, "??:0") : put_lit(p, "??:0:0");
	p = f->file ? put_name(p, f->file, f->file_len, f->file_plain, slack) : put_lit(p, "??");
	if (gnu) {
		/* binutils: "??:0" when nothing was found, "FILE:?" when the
		 * line is unknown, the discriminator after the line. */
		if (f->line) {
			*p++ = ':';
			p = put_uint(p, f->line);
		} else {
			p = put_lit(p, ":?");
		}
		if (disc) {
			p = put_lit(p, " (discriminator ");
			p = put_uint(p, disc);
			*p++ = ')';
		}
		return p;
	}
	*p++ = ':';
	p = put_uint(p, f->line);
	*p++ = ':';
	return put_uint(p, f->column);
}

/* slack: r's strings are followed by DS_SYM_STRING_SLACK readable bytes
 * (put_name()). */
static void print_text(struct out *ob, const struct opts *o, uint64_t addr,
		       const struct ds_sym_answer *r, bool slack)
{
	static const struct ds_frame unknown = { 0 };
	/* The options and each frame in locals: a store through p may alias
	 * anything, so fields read through pointers are read again after
	 * every byte written. */
	const bool gnu = o->style == STYLE_GNU, found = r && r->nframes, pretty = o->pretty;
	const bool names = o->functions || !gnu, basenames = o->basenames;
	const struct ds_frame *frames = found ? r->frames : &unknown;
	const unsigned disc = found ? frames[0].discriminator : 0;
	size_t n = found ? r->nframes : 1, room = FRAME_ROOM;
	char *p;

	if (n > 1 && !o->inlines)
		n = 1;
	for (size_t i = 0; found && i < n; i++)
		room += FRAME_ROOM + TERM_ROOM(frames[i].function_len) +
			TERM_ROOM(frames[i].file_len) + (slack ? 2 * DS_SYM_STRING_SLACK : 0);
	p = out_room(ob, room + FRAME_ROOM);
	if (o->addresses) {
		p = put_lit(p, "0x");
		p = put_hex(p, addr, gnu ? o->addr_width : 0);
		if (pretty)
			p = put_lit(p, ": ");
		else
			*p++ = '\n';
	}
	for (size_t i = 0; i < n; i++) {
		struct ds_frame f = frames[i];

		if (basenames && f.file && strrchr(f.file, '/')) {
			const char *base = strrchr(f.file, '/') + 1;

			f.file_len -= (unsigned)(base - f.file);
			f.file = base;
		}
		if (pretty && i)
			p = put_lit(p, " (inlined by) ");
		if (names) {
			p = f.function ? put_name(p, f.function, f.function_len, f.function_plain,
						 slack)
				       : put_lit(p, "??");
			if (pretty && gnu && !found)
				*p++ = ' '; /* binutils: "?? ??:0" */
			else if (pretty)
				p = put_lit(p, " at ");
			else
				*p++ = '\n';
		}
		p = put_location(p, &f, found, gnu, disc, slack);
		*p++ = '\n';
	}
	if (!gnu)
		*p++ = '\n';
	ob->len = (size_t)(p - ob->buf);
}

/* print_text() of a found answer (its strings with their slack) in
 * binutils' plain layout: GNU style with names, not pretty, whole file
 * names.  The answer of nearly every line of a large -e run, without the
 * branches of the other options (a fifth of print_text()'s
 * instructions). */
static void print_gnu(struct out *ob, const struct opts *o, uint64_t addr,
		      const struct ds_sym_answer *r)
{
	const struct ds_frame *fr = r->frames;
	const unsigned disc = fr[0].discriminator;
	size_t n = o->inlines ? r->nframes : 1, room = 2 * FRAME_ROOM;
	char *p;

	for (size_t i = 0; i < n; i++)
		room += FRAME_ROOM + 2 * DS_SYM_STRING_SLACK + TERM_ROOM(fr[i].function_len) +
			TERM_ROOM(fr[i].file_len);
	p = out_room(ob, room);
	if (o->addresses) {
		p = put_lit(p, "0x");
		p = put_hex(p, addr, o->addr_width);
		*p++ = '\n';
	}
	for (size_t i = 0; i < n; i++) {
		const struct ds_frame *f = &fr[i];

		p = f->function ? put_name(p, f->function, f->function_len, f->function_plain, true)
				: put_lit(p, "??");
		*p++ = '\n';
		p = put_location(p, f, true, true, disc, true);
		*p++ = '\n';
	}
	ob->len = (size_t)(p - ob->buf);
}

static void answer(struct out *ob, const struct opts *o, const char *module, uint64_t addr,
		   const struct ds_sym_answer *r, const char *error)
{
	if (o->style == STYLE_JSON)
		print_json(ob, o, module, addr, r, error);
	else
		print_text(ob, o, addr, error ? NULL : r, false);
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
	struct out *out;
	/* Not 0: lines are cut as fgets() into a buffer of chunk + 1 bytes
	 * cuts them (binutils addr2line's, 100): at most chunk bytes, the
	 * newline included; the rest of a longer line is the next "line". */
	size_t chunk;
	bool waited; /* LINE_WAIT said: stdin was found empty just now */
};

enum { LINE_EOF, LINE_OK, LINE_TOO_LONG, LINE_WAIT };

/* fgets()'s next piece of what is buffered, if it has one: *line (not
 * NUL-terminated), *len without the newline. */
static bool next_chunk(struct reader *rd, char **line, size_t *len)
{
	size_t avail = rd->end - rd->start, lim = avail < rd->chunk ? avail : rd->chunk;
	char *p = rd->buf + rd->start, *nl = memchr(p, '\n', lim);

	if (!nl && avail < rd->chunk && !(rd->eof && avail))
		return false;
	*line = p;
	*len = nl ? (size_t)(nl - p) : lim;
	rd->start += nl ? *len + 1 : lim;
	rd->lineno++;
	return true;
}

/* Whether a read of stdin would not block (data, end or error there). */
static bool input_ready(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* The next line, NUL-terminated without its newline, in *line (valid until
 * the next call) and *len (it may hold NULs): LINE_OK.  LINE_TOO_LONG when
 * it had more than SYM_LINE_MAX bytes (all of them read and dropped);
 * LINE_EOF at the end.  hold: the caller has lines to answer; rather than
 * a read that would block, LINE_WAIT (call again once they are answered). */
static int next_line(struct reader *rd, char **line, size_t *len, bool hold)
{
	bool too_long = false;

	for (;;) {
		char *p = rd->buf + rd->start, *nl = NULL;
		ssize_t n;

		if (rd->chunk) {
			if (next_chunk(rd, line, len))
				return LINE_OK;
		} else if ((nl = memchr(p, '\n', rd->end - rd->start)) ||
			   (rd->eof && rd->start < rd->end)) {
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
		/* After a LINE_WAIT, no second poll: the answers go out now
		 * (a round trip of perf's costs one poll, not two). */
		if (rd->waited || !input_ready()) {
			if (hold && !too_long && !rd->waited) {
				rd->waited = true;
				return LINE_WAIT; /* what is here stays for the next call */
			}
			out_flush(rd->out);
		}
		rd->waited = false;
		memmove(rd->buf, p, rd->end - rd->start);
		rd->end -= rd->start;
		rd->start = 0;
		/* SYM_LINE_MAX + 1 bytes and no newline: too long.  What is
		 * here goes, the rest of the line is dropped as it comes. */
		if (rd->end > SYM_LINE_MAX) {
			too_long = true;
			rd->end = 0;
		}
		n = read(0, rd->buf + rd->end, sizeof(rd->buf) - 1 - rd->end);
		if (n < 0 && errno == EINTR && !cli_interrupted)
			continue;
		if (n <= 0) /* or SIGINT, SIGTERM: the input ends here */
			rd->eof = true;
		else
			rd->end += (size_t)n;
	}
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
	/* JSON keeps binutils' spelling, the library's default: it is read
	 * by programs, which compare names with nm -C or c++filt. */
	if (o->style == STYLE_LLVM)
		flags |= DS_SYM_LLVM_NAMES;
	return flags;
}

/* -------------------------------------------------------------- blocks
 *
 * Both modes answer a block of lines at a time: each DSO's addresses of
 * the block go through one ds_dso_symbolize_batch(), and the answers come
 * out in the order of the lines.
 *
 * Without -e, a block is up to --batch distinct DSOs (or CHUNK_LINES
 * lines, or CHUNK_TEXT bytes of names): all their debuginfo is found at
 * once (one parallel debuginfod batch), the block answered, then its DSOs
 * let go.  Memory stays flat however long the stream; a build ID asked
 * again in a later block is not fetched again: a found file, or a miss,
 * is in the debuginfod cache by then.  The block is answered once full or
 * at the end of the stream.
 *
 * With -e, a block is up to EXE_LINES lines, answered before a read that
 * would block (a peer waiting for its answer gets it).  A block's
 * addresses are looked up in address order, and the more of them, the
 * closer together they land in the index (fewer cache misses a lookup):
 * 65,536 against 16,384, 1M warm addresses, three alternating runs each,
 * CPU time: gmock_all_test 0.91-0.93 s against 1.09-1.27 s (RSS 116 MB
 * against 98), python3.11d 0.41-0.42 against 0.45-0.47 (37 MB against
 * 25).  (Measured once the batch kept its strings from block to block;
 * before that, 65,536 had saved nothing noise could not hide.)  One
 * block for the whole input was tried too: 1M lines of gmock_all_test
 * held 436 MB of answers and took longer. */
#define CHUNK_DSOS_DEFAULT 4096
#define CHUNK_LINES	   16384
#define EXE_LINES	   65536
#define CHUNK_TEXT	   (1u << 20)

/* An offset into a block's text (at most CHUNK_TEXT bytes), or none. */
typedef uint32_t text_at;
#define TEXT_NONE UINT32_MAX

/* A line of the block: 64 bytes, one cache line (a block of -e is 65,536
 * of them, written as read and read again as answered). */
struct item {
	struct ds_dso *dso; /* borrowed from the block's set or the -e DSO; NULL: a bad line */
	uint64_t addr;
	/* The address to print: binutils', as read (-a prints it); a live
	 * process's, as given; else 0 (addr is printed). */
	uint64_t shown;
	const char *bad; /* path: what is wrong with the file (bad_file()); NULL */
	/* In the block's text, TEXT_NONE: none.  error: the answer's
	 * message, msg: stderr's when it differs; jit: a live process's JIT
	 * code, its perf map name. */
	text_at module, error, msg, jit;
	uint32_t group; /* dso's place in the block's groups */
	int err; /* the answer's error, where answers wait (see answer_block) */
	/* Not named, and the DSO's debuginfo was not found: why (its
	 * answer's debuginfo_error); 0 otherwise. */
	int nodebug;
	bool kernel; /* a kernel address (dso NULL) */
	bool path; /* the line named a file, not a build ID */
};
_Static_assert(CHUNK_TEXT < TEXT_NONE, "text offsets fit a text_at");
_Static_assert(sizeof(void *) != 8 || sizeof(struct item) == 64, "an item is a cache line");

/* Open addressing over DSO pointers: each distinct DSO of a block once,
 * with the block's reference on it and its place among the block's. */
struct dso_set {
	struct ds_dso **slot;
	uint32_t *group;
	size_t mask, n;
};

struct batch {
	struct item *items;
	size_t n, max_items;
	char *text;
	size_t used;
	struct dso_set cur, prev;
	size_t max_dsos;
	struct ds_dso **groups; /* by group: the -e DSO, or cur's in order */
	size_t ngroups;
	/* Answering: items grouped by DSO (in line order within one), their
	 * addresses, and where several DSOs' answers wait their turn. */
	size_t *order, *gstart;
	uint64_t *addrs;
	struct ds_sym_batch *sym;
	struct out stage;
	size_t *span; /* per item: offset and length in stage */
	struct out *out;
	bool exe; /* -e: one DSO, group 0, no set */
	/* -e: every line of the block so far a bare address of the DSO
	 * (take_bare_addrs()), kept in addrs alone, no item written: the
	 * items are made (make_items()) when another kind of line comes.
	 * A million warm addresses wrote and read again 64 MB of items for
	 * the 8 MB of addresses they held. */
	bool bare;
	/* The arrays past POPULATE_AT made ready: items (and order), by
	 * new_item() or make_items(); addrs, by new_item() or add_addr(). */
	bool populated, addrs_populated;
	/* Kernel addresses: made on the first one. */
	struct ds_store *store;
	struct ds_kernel *kernel;
	struct ds_sym_batch *ksym;
	bool binutils; /* -e, GNU style: every line an address, as binutils reads it */
	const char *path; /* -e's file */
	uint64_t addr_mask; /* binutils: an ELF32 file's addresses are cut to 32 bits */
	bool section; /* binutils -j */
	uint64_t sec_vma, sec_size;
	bool said_no_symbols; /* -e: said once, "??" for every line */
	/* By group: said of the block's DSO that its debuginfo is missing. */
	bool *said_nodebug;
};

static void set_init(struct dso_set *s, size_t max)
{
	size_t cap = 16;

	while (cap < 2 * max)
		cap *= 2;
	s->slot = calloc(cap, sizeof(*s->slot));
	s->group = calloc(cap, sizeof(*s->group));
	if (!s->slot || !s->group)
		oom();
	s->mask = cap - 1;
	s->n = 0;
}

/* Takes the caller's reference: kept if d is new here, else dropped.
 * Returns d's group: the how-many-th distinct DSO of the set it is. */
static uint32_t set_add(struct dso_set *s, struct ds_dso *d)
{
	uint64_t x = ((uintptr_t)d >> 4) * 0x9e3779b97f4a7c15ull;
	size_t h = (size_t)(x ^ x >> 32) & s->mask;

	for (; s->slot[h]; h = (h + 1) & s->mask) {
		if (s->slot[h] == d) {
			ds_dso_put(d);
			return s->group[h];
		}
	}
	s->slot[h] = d;
	s->group[h] = (uint32_t)s->n;
	return (uint32_t)s->n++;
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

static void set_free(struct dso_set *s)
{
	set_clear(s);
	free(s->slot);
	free(s->group);
}

static void batch_init(struct batch *b, bool exe, size_t max_items, size_t max_dsos,
		       struct out *out)
{
	*b = (struct batch){ .exe = exe, .max_items = max_items, .max_dsos = max_dsos, .out = out };
	b->items = calloc(max_items, sizeof(*b->items));
	b->text = malloc(CHUNK_TEXT);
	b->groups = calloc(max_dsos, sizeof(*b->groups));
	b->said_nodebug = calloc(max_dsos, sizeof(*b->said_nodebug));
	b->gstart = calloc(max_dsos + 1, sizeof(*b->gstart));
	b->order = calloc(max_items, sizeof(*b->order));
	b->addrs = calloc(max_items, sizeof(*b->addrs));
	b->sym = ds_sym_batch_new();
	if (!b->items || !b->text || !b->groups || !b->said_nodebug || !b->gstart || !b->order ||
	    !b->addrs || !b->sym)
		oom();
	if (!exe) {
		b->span = calloc(2 * max_items, sizeof(*b->span));
		if (!b->span)
			oom();
		set_init(&b->cur, max_dsos);
		set_init(&b->prev, max_dsos);
	}
}

static void batch_release(struct batch *b)
{
	set_free(&b->prev);
	set_free(&b->cur);
	free(b->items);
	free(b->text);
	free(b->groups);
	free(b->said_nodebug);
	free(b->gstart);
	free(b->order);
	free(b->addrs);
	free(b->span);
	free(b->stage.buf);
	ds_sym_batch_free(b->sym);
	ds_kernel_free(b->kernel);
	ds_sym_batch_free(b->ksym);
}

/* Copies a string into the batch's text; its offset.  batch_full() keeps
 * room for a line's strings: the cut is only a bound. */
static text_at text_add(struct batch *b, const char *s, size_t len)
{
	text_at at = (text_at)b->used;

	if (len + 1 > CHUNK_TEXT - b->used)
		len = CHUNK_TEXT - b->used - 1;
	memcpy(b->text + at, s, len);
	b->text[at + len] = 0;
	b->used += len + 1;
	return at;
}

static text_at text_printf(struct batch *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static text_at text_printf(struct batch *b, const char *fmt, ...)
{
	char msg[SYM_LINE_MAX + 256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		return TEXT_NONE;
	return text_add(b, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
}

/* Whether a batch has room for one more line of any kind. */
static bool batch_full(const struct batch *b)
{
	return b->n == b->max_items || (!b->exe && b->ngroups >= b->max_dsos) ||
	       CHUNK_TEXT - b->used < 3 * (SYM_LINE_MAX + 256);
}

/* A block this long is a large input: the rest of its arrays is made
 * ready at once (a short one, one address, touches a page or two). */
#define POPULATE_AT 4096

/* A bare block's item i (dso: the -e DSO): as add_exe_addr() makes it. */
static struct item bare_item(const struct batch *b, size_t i)
{
	uint64_t v = b->addrs[i];

	return (struct item){ .dso = b->groups[0],
			      .addr = v,
			      .shown = b->binutils ? v : 0,
			      .module = TEXT_NONE,
			      .error = TEXT_NONE,
			      .msg = TEXT_NONE,
			      .jit = TEXT_NONE };
}

/* A bare block's lines become items (another kind of line follows). */
static void make_items(struct batch *b)
{
	b->bare = false;
	if (b->n >= POPULATE_AT && !b->populated) {
		b->populated = true;
		populate(b->items, b->max_items * sizeof(*b->items));
		if (!b->exe)
			populate(b->order, b->max_items * sizeof(*b->order));
	}
	for (size_t i = 0; i < b->n; i++)
		b->items[i] = bare_item(b, i);
}

static struct item *new_item(struct batch *b)
{
	struct item *it;

	if (b->bare)
		make_items(b);
	if (b->n == POPULATE_AT && !b->populated) {
		b->populated = true;
		populate(b->items + b->n, (b->max_items - b->n) * sizeof(*b->items));
		if (!b->addrs_populated) {
			b->addrs_populated = true;
			populate(b->addrs + b->n, (b->max_items - b->n) * sizeof(*b->addrs));
		}
		if (!b->exe)
			populate(b->order + b->n, (b->max_items - b->n) * sizeof(*b->order));
	}
	it = &b->items[b->n++];

	*it = (struct item){
		.module = TEXT_NONE, .error = TEXT_NONE, .msg = TEXT_NONE, .jit = TEXT_NONE
	};
	return it;
}

/* A line over SYM_LINE_MAX: the answer of a bad line, one message. */
static void add_too_long(struct batch *b, bool exe, size_t lineno)
{
	struct item *it = new_item(b);

	if (!exe)
		it->module = text_add(b, "", 0);
	it->error = text_printf(b, "line %zu: longer than %d bytes", lineno, SYM_LINE_MAX);
}

/* -e: the address v as read from a line, binutils' way or ours. */
static void add_exe_addr(struct batch *b, struct ds_dso *dso, struct item *it, uint64_t v)
{
	if (b->binutils) {
		uint64_t pc = v & b->addr_mask;

		it->shown = it->addr = pc;
		if (b->section && pc >= b->sec_size)
			return; /* no DSO: the "??" answer */
		it->addr += b->section ? b->sec_vma : 0;
		it->dso = dso;
		return;
	}
	it->addr = v;
	it->dso = dso;
	it->kernel = !dso; /* --kernel */
}

/* -e: the address v of a line: to a bare block while it is one (with a
 * DSO, and not binutils' -j, whose addresses are the section's), else as
 * an item. */
static inline void add_addr(struct batch *b, struct ds_dso *dso, uint64_t v)
{
	if (!dso || b->section || (b->n && !b->bare)) {
		add_exe_addr(b, dso, new_item(b), v);
		return;
	}
	b->bare = true;
	if (b->n == POPULATE_AT && !b->addrs_populated) {
		b->addrs_populated = true;
		populate(b->addrs + b->n, (b->max_items - b->n) * sizeof(*b->addrs));
	}
	b->addrs[b->n++] = b->binutils ? v & b->addr_mask : v;
}

/* -e: an address of the DSO (group 0), or a line that is none (named in
 * the message up to its first CR or LF when cut). */
static void add_exe_line(struct batch *b, struct ds_dso *dso, const char *line, size_t len,
			 bool cut)
{
	struct item *it;
	uint64_t v;

	if (b->binutils) {
		/* A line read is at most A2L_CHUNK bytes; an argument is whole. */
		add_addr(b, dso, a2l_scan_addr(b->path, line, cut ? len : strlen(line)));
		return;
	}
	if (parse_addr(line, len, &v)) {
		add_addr(b, dso, v);
		return;
	}
	it = new_item(b);
	it->addr = 0;
	it->error = text_add(b, "not a hexadecimal address", 25);
	it->msg = text_printf(b, "%.*s: not a hexadecimal address",
			      (int)(cut ? strcspn(line, "\r\n") : len), line);
}

/* A hexadecimal digit's value plus one; 0: none. */
static const uint8_t hex_digit[256] = {
	['0'] = 1,  ['1'] = 2,	['2'] = 3,  ['3'] = 4,	['4'] = 5,  ['5'] = 6,	['6'] = 7,
	['7'] = 8,  ['8'] = 9,	['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HEX_SWAR 1
/* The hex digits that start the 8 bytes at p: their value, and in *n how
 * many they are (0-8).  Eight bytes a step, in a word (the first in the
 * lowest byte): a byte is a digit when, its top bit clear, it is in
 * '0'-'9' or (0x20 set) 'a'-'f', each bound one addition whose carry
 * reaches the byte's top bit and no further; its value is its low nibble,
 * plus 9 for a letter; the digits are moved to the top of the word and
 * joined two, four, then eight at a time.  (The loop of a table lookup
 * and a shift a digit was 70 instructions of every warm address.) */
static inline uint64_t hex_word(const char *p, unsigned *n)
{
	const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
	uint64_t w, x, lx, digit, letter, nonhex, v;

	memcpy(&w, p, 8);
	x = w & ~high;
	lx = x | 0x20 * ones;
	digit = (x + (0x80 - '0') * ones) & ~(x + (0x7f - '9') * ones);
	letter = (lx + (0x80 - 'a') * ones) & ~(lx + (0x7f - 'f') * ones);
	nonhex = ~((digit | letter) & ~w) & high;
	*n = nonhex ? (unsigned)__builtin_ctzll(nonhex) / 8 : 8;
	if (!*n)
		return 0;
	v = (x & 0x0f * ones) + ((letter & high) >> 7) * 9;
	v <<= 64 - 8 * *n; /* the last digit in the top byte */
	v = ((v << 4) + (v >> 8)) & 0x00ff00ff00ff00ffull;
	v = ((v << 8) + (v >> 16)) & 0x0000ffff0000ffffull;
	return ((v << 16) + (v >> 32)) & 0xffffffffull;
}
#endif

/* -e: the lines already read that are one bare address each, taken
 * straight from the reader's buffer until one is not (or the block is
 * full): a digit first, "0x" optional, at most 16 hex digits, a newline.
 * Those read alike by binutils' rule (a leading digit: strtoull(., 16))
 * and by ds_sym_parse_line(), and fit any fgets() piece (A2L_CHUNK); the
 * rest go through next_line() and add_exe_line().  (Finding the newline,
 * cutting the line and parsing it apart were a sixth of a million warm
 * addresses.)  The lines taken: how many. */
static size_t take_bare_addrs(struct reader *rd, struct batch *b, struct ds_dso *dso)
{
	const char *p = rd->buf + rd->start, *end = rd->buf + rd->end;
	size_t n = 0;

	while (!batch_full(b) && p < end && (unsigned)(*p - '0') < 10) {
		const char *q = p + (p[0] == '0' && end - p > 1 && (p[1] | 0x20) == 'x' ? 2 : 0);
		const char *digits = q, *lim = end - q > 16 ? q + 16 : end;
		uint64_t v = 0;
		unsigned d;

#ifdef HEX_SWAR
		if (end - q > 16) { /* (16 digits and the byte after them) */
			v = hex_word(q, &d);
			if (d == 8) {
				uint64_t lo = hex_word(q + 8, &d);

				v = v << 4 * d | lo;
				d += 8;
			}
			q += d;
		} else
#endif
			for (; q < lim && (d = hex_digit[(unsigned char)*q]); q++)
				v = v << 4 | (d - 1);
		if (q == digits || q == end || *q != '\n')
			break;
		add_addr(b, dso, v);
		p = q + 1;
		n++;
	}
	rd->start = (size_t)(p - rd->buf);
	rd->lineno += n;
	return n;
}

/* A live process's address (tools/cmd_normalize.c): its DSO's vaddr. */
static void add_pid_item(const struct opts *o, struct batch *b, struct ds_store *store,
			 struct item *it, const char *key, size_t lineno)
{
	struct cli_pid_answer *a = malloc(sizeof(*a));

	if (!a)
		oom();
	it->shown = it->addr;
	if (cli_pid_address(store, key, o->pid, it->addr, o->file_offset, a) == 0 && !a->is_jit) {
		it->addr = a->addr;
		it->dso = a->dso;
		it->group = set_add(&b->cur, a->dso);
		if (it->group == b->ngroups)
			b->groups[b->ngroups++] = a->dso;
	} else if (a->is_jit) {
		it->jit = text_add(b, a->jit, strlen(a->jit));
	} else {
		it->error = text_printf(b, "line %zu: %s: %s", lineno, a->module, a->error);
	}
	it->module = text_add(b, a->module, strlen(a->module));
	free(a);
}

static void read_one(const struct opts *o, struct batch *b, struct ds_store *store, int kind,
		     char *line, size_t len, size_t lineno)
{
	struct ds_dso_id id = { .flags = DS_DSO_ID_BUILD_ID };
	struct item *it;
	char key[4096];
	uint64_t addr = 0;

	if (kind == LINE_TOO_LONG) {
		add_too_long(b, false, lineno);
		return;
	}
	/* "kernel ADDR" (a file named kernel is "./kernel ADDR"). */
	if (len > 7 && !memcmp(line, "kernel", 6) && (line[6] == ' ' || line[6] == '\t') &&
	    parse_addr(line + 7, len - 7, &addr)) {
		it = new_item(b);
		it->addr = addr;
		it->kernel = true;
		return;
	}
	kind = ds_sym_parse_line(line, len, key, sizeof(key), &id.build_id, &addr);
	if (kind == DS_SYM_LINE_EMPTY)
		return;
	it = new_item(b);
	it->addr = addr;
	if (kind == DS_SYM_LINE_PATH && !strncmp(key, "pid:", 4)) { /* (--pid: run_pid()) */
		add_pid_item(o, b, store, it, key, lineno);
		return;
	}
	if (kind == DS_SYM_LINE_BUILD_ID || kind == DS_SYM_LINE_PATH) {
		struct ds_dso *d = kind == DS_SYM_LINE_PATH ? ds_store_findnew(store, key, NULL)
							    : ds_store_findnew(store, NULL, &id);
		int err = d ? 0 : -errno;

		it->module = text_add(b, key, strlen(key));
		it->path = kind == DS_SYM_LINE_PATH;
		if (d) {
			it->group = set_add(&b->cur, d);
			it->dso = d;
			if (it->group == b->ngroups)
				b->groups[b->ngroups++] = d;
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

/* What is wrong with the file at path, for a user to act on; NULL when it
 * is an ELF file (with or without a build ID).  key: path came from a
 * stream line, where it may have been meant as a build ID. */
static const char *bad_file(const char *path, bool key)
{
	struct ds_build_id bid;
	int err = ds_build_id_read_file(path, &bid);

	switch (err) {
	case 0:
	case -ENODATA:
		return NULL;
	case -ENOENT:
		return key ? "not a build ID (hex), and no such file" : "no such file";
	case -EISDIR:
		return "a directory, not an ELF file";
	case -ENOEXEC:
		return "not an ELF file";
	default:
		return ds_strerror(err);
	}
}

/* The message of a failed answer for addr (as given). */
static void failure(int err, uint64_t addr, char *msg, size_t len)
{
	if (err == -ERANGE)
		snprintf(msg, len, "0x%" PRIx64 ": outside every loadable segment", addr);
	else if (err == -ENOENT || err == -ENODATA)
		snprintf(msg, len, "no debuginfo or symbols found");
	else
		snprintf(msg, len, "%s", ds_strerror(err));
}

static const char *module_of(const struct opts *o, const struct batch *b, const struct item *it)
{
	return it->module != TEXT_NONE ? b->text + it->module : o->exe ? o->exe : "";
}

/* A kernel address's answer (ds_kernel: kallsyms, vmlinux DWARF). */
static void format_kernel(struct out *ob, const struct opts *o, struct batch *b, struct item *it)
{
	DS_OPTS(ds_kernel_opts, ko, .vmlinux = o->vmlinux);
	const struct ds_sym_answer *a = NULL;
	const char *module = "[kernel.kallsyms]";
	char msg[128];

	it->err = 0;
	if (!b->kernel && (!(b->kernel = ds_kernel_new(b->store, &ko)) ||
			   !(b->ksym = ds_sym_batch_new())))
		oom();
	it->err = ds_kernel_symbolize(b->kernel, it->addr, sym_flags(o) & ~DS_SYM_FILE_OFFSET,
				      b->ksym, &a, &module);
	if (it->err == -EPERM)
		snprintf(msg, sizeof(msg), "kallsyms shows no addresses (kptr_restrict)");
	else if (it->err)
		snprintf(msg, sizeof(msg), "kallsyms: %s", ds_strerror(it->err));
	answer(ob, o, module ? module : "[kernel.kallsyms]", it->addr, it->err ? NULL : a,
	       it->err ? msg : NULL);
}

/* The NAME@plt the library gives a PLT stub, from no symbol of
 * the file: binutils reads no PLT, and answers "??" there.  symbolize
 * keeps the name (objdump's), addr2line's personality does not. */
static bool synthetic_plt(const struct ds_sym_answer *a)
{
	const struct ds_frame *f = a->nframes ? &a->frames[0] : NULL;

	return f && a->from_symtab && !f->file && f->function && f->function_len >= 4 &&
	       !memcmp(f->function + f->function_len - 4, "@plt", 4);
}

/* The answer a, as binutils gives it (with history: see
 * a2l_note_function()). */
static void answer_binutils(struct out *ob, const struct opts *o, const char *module,
			    uint64_t shown, const struct ds_sym_answer *a)
{
	struct ds_frame frames[64];
	struct ds_sym_answer renamed;
	const struct ds_frame *last = a->nframes ? &a->frames[a->nframes - 1] : NULL;
	const char *name;

	if (!o->history) {
		answer(ob, o, module, shown, a, NULL);
		return;
	}
	if (synthetic_plt(a)) {
		answer(ob, o, module, shown, NULL, NULL);
		return;
	}
	if (last && !a->frames[0].inlined)
		a2l_note_function(last->function_start, last->function, last->function_len);
	name = last && last != a->frames && o->inlines ? a2l_renamed(last->function_start) : NULL;
	if (!name || a->nframes > sizeof(frames) / sizeof(frames[0])) {
		answer(ob, o, module, shown, a, NULL);
		return;
	}
	memcpy(frames, a->frames, a->nframes * sizeof(frames[0]));
	frames[a->nframes - 1].function = name;
	frames[a->nframes - 1].function_len = (unsigned)strlen(name);
	frames[a->nframes - 1].function_plain = false;
	renamed = *a;
	renamed.frames = frames;
	answer(ob, o, module, shown, &renamed, NULL);
}

/* The answer of it (a its DSO's answer; NULL for a bad line) to ob; the
 * error it had, 0 for none, kept for tell(). */
static void format_item(struct out *ob, const struct opts *o, const struct batch *b,
			struct item *it, const struct ds_sym_answer *a)
{
	const char *module = module_of(o, b, it);
	uint64_t shown = b->binutils || it->shown ? it->shown : it->addr;
	char msg[128];

	it->err = 0;
	if (it->kernel) {
		format_kernel(ob, o, (struct batch *)b, it);
	} else if (!it->dso && it->jit != TEXT_NONE) {
		struct ds_frame f = { .function = b->text + it->jit };
		struct ds_sym_answer ja = { .addr = it->addr, .frames = &f, .nframes = 1 };

		f.function_len = (unsigned)strlen(f.function);
		answer(ob, o, module, it->addr, &ja, NULL);
	} else if (!it->dso) {
		answer(ob, o, module, shown, NULL,
		       it->error != TEXT_NONE ? b->text + it->error : "bad line");
	} else if (a->error) {
		it->err = a->error;
		/* A file that is none, or no ELF: say that, not "no symbols". */
		if (it->path && (a->error == -ENOENT || a->error == -ENODATA))
			it->bad = bad_file(module, true);
		if (it->bad)
			snprintf(msg, sizeof(msg), "%s", it->bad);
		else
			failure(a->error, it->addr, msg, sizeof(msg));
		answer(ob, o, module, shown, a, msg);
	} else {
		if (!a->nframes && a->reason == DS_SYM_REASON_NO_DEBUGINFO)
			it->nodebug = a->debuginfo_error;
		if (b->binutils)
			answer_binutils(ob, o, module, shown, a);
		else
			answer(ob, o, module, it->shown ? it->shown : a->addr ? a->addr : it->addr,
			       a, NULL);
	}
}

/* Says on stderr what went wrong with it, in line order; its exit status. */
static int tell(const struct opts *o, struct batch *b, const struct item *it)
{
	char msg[128];

	if (it->kernel) {
		if (!it->err)
			return 0;
		if (!b->said_no_symbols) /* the same for every address: once */
			cli_error("kernel: %s", it->err == -EPERM ? "kallsyms shows no addresses "
								    "(kptr_restrict)"
								  : ds_strerror(it->err));
		b->said_no_symbols = true;
		return 1;
	}
	if (!it->dso && it->jit != TEXT_NONE)
		return 0;
	if (o->quiet)
		return 0;
	if (!it->dso) {
		text_at m = it->msg != TEXT_NONE ? it->msg : it->error;

		cli_error("%s", m != TEXT_NONE ? b->text + m : "bad line");
		return 1;
	}
	if (!it->err && it->nodebug && !b->said_nodebug[it->group]) {
		/* Not named for want of debuginfo: said once per DSO and
		 * block, a miss as any other (exit 0). */
		b->said_nodebug[it->group] = true;
		cli_error("%s: no debuginfo (%s): addresses its own symbols do not hold are "
			  "not named",
			  module_of(o, b, it), ds_strerror(it->nodebug));
	}
	if (!it->err)
		return 0;
	if (it->bad)
		snprintf(msg, sizeof(msg), "%s", it->bad);
	else
		failure(it->err, it->addr, msg, sizeof(msg));
	if (o->exe && (it->err == -ENOENT || it->err == -ENODATA)) {
		/* addr2line mode: say it once, answer "??" for all. */
		if (!b->said_no_symbols)
			cli_error("%s: %s", o->exe, msg);
		b->said_no_symbols = true;
		return 0;
	}
	cli_error("%s: %s", module_of(o, b, it), msg);
	return 1;
}

/* The answers of group g's DSO for its items, in their order. */
static const struct ds_sym_answer *symbolize_group(struct batch *b, size_t g, unsigned flags,
						   size_t *n)
{
	size_t from = b->gstart[g], to = b->gstart[g + 1];
	const struct ds_sym_answer *ans;
	int rc;

	for (size_t k = from; k < to; k++)
		b->addrs[k] = b->items[b->order[k]].addr;
	rc = ds_dso_symbolize_batch(b->groups[g], b->addrs + from, to - from, flags, b->sym);
	ans = ds_sym_batch_answers(b->sym, n);
	if (*n != to - from) /* no answers at all (-ENOMEM) */
		oom();
	(void)rc; /* every answer says it */
	return ans;
}

/* Answers the block's lines in order and empties it. */
static int answer_block(const struct opts *o, struct batch *b)
{
	unsigned flags = sym_flags(o);
	const struct ds_sym_answer *ans = NULL;
	size_t ng = b->ngroups, n = 0, j = 0;
	int status = 0;
	/* Text of found frames and no renaming: nothing to say on stderr
	 * (tell()), the address as format_item() picks it. */
	bool text = o->style != STYLE_JSON && !o->history;

	/* (print_gnu()'s layout) */
	bool gnu = text && o->style == STYLE_GNU && o->functions && !o->pretty && !o->basenames;

	if (b->bare) { /* -e, every line an address: no items */
		if (b->n) {
			ds_dso_symbolize_batch(b->groups[0], b->addrs, b->n, flags, b->sym);
			ans = ds_sym_batch_answers(b->sym, &n);
			if (n != b->n)
				oom();
		}
		for (size_t i = 0; i < n; i++) {
			const struct ds_sym_answer *a = &ans[i];

			/* (Answers come in input order, their frames from
			 * where the lookups put them: see below.) */
			if (i + 8 < n)
				__builtin_prefetch(ans[i + 8].frames);
			uint64_t shown = b->binutils ? b->addrs[i] : a->addr ? a->addr : b->addrs[i];

			if (gnu && a->nframes && !a->error) {
				print_gnu(b->out, o, shown, a);
			} else if (text && a->nframes && !a->error) {
				print_text(b->out, o, shown, a, true);
			} else {
				struct item it = bare_item(b, i);

				format_item(b->out, o, b, &it, a);
				status |= tell(o, b, &it);
			}
			if (b->out->len >= OUT_FLUSH)
				out_flush(b->out);
		}
	} else if (ng <= 1) { /* one DSO: its addresses in line order, straight out */
		size_t k = 0;

		for (size_t i = 0; i < b->n; i++)
			if (b->items[i].dso)
				b->addrs[k++] = b->items[i].addr;
		if (k) {
			ds_dso_symbolize_batch(b->groups[0], b->addrs, k, flags, b->sym);
			ans = ds_sym_batch_answers(b->sym, &n); /* (every answer says what failed) */
			if (n != k) /* no answers at all (-ENOMEM) */
				oom();
		}
		for (size_t i = 0; i < b->n; i++) {
			struct item *it = &b->items[i];
			const struct ds_sym_answer *a = it->dso ? &ans[j++] : NULL;

			/* Answers come in input order, their frames from where
			 * the lookups (in address order) put them: asked for a
			 * few answers ahead, those misses overlap. */
			if (ans && j + 8 < n)
				__builtin_prefetch(ans[j + 8].frames);
			if (text && a && a->nframes && !a->error && !it->kernel) {
				print_text(b->out, o,
					   b->binutils || it->shown ? it->shown
					   : a->addr		    ? a->addr
								    : it->addr,
					   a, true);
			} else {
				format_item(b->out, o, b, it, a);
				status |= tell(o, b, it);
			}
			if (b->out->len >= OUT_FLUSH)
				out_flush(b->out);
		}
	} else { /* each DSO's answers wait in stage for their turn */
		/* Items by group, in line order within each: a counting sort. */
		memset(b->gstart, 0, (ng + 1) * sizeof(*b->gstart));
		for (size_t i = 0; i < b->n; i++)
			if (b->items[i].dso)
				b->gstart[b->items[i].group + 1]++;
		for (size_t g = 0; g < ng; g++)
			b->gstart[g + 1] += b->gstart[g];
		for (size_t i = 0; i < b->n; i++)
			if (b->items[i].dso)
				b->order[b->gstart[b->items[i].group]++] = i;
		for (size_t g = ng; g > 0; g--) /* back to each group's start */
			b->gstart[g] = b->gstart[g - 1];
		b->gstart[0] = 0;
		b->stage.len = 0;
		for (size_t g = 0; g < ng; g++) {
			ans = symbolize_group(b, g, flags, &n);
			for (size_t k = 0; k < n; k++) {
				size_t i = b->order[b->gstart[g] + k];

				b->span[2 * i] = b->stage.len;
				format_item(&b->stage, o, b, &b->items[i], &ans[k]);
				b->span[2 * i + 1] = b->stage.len - b->span[2 * i];
			}
		}
		for (size_t i = 0; i < b->n; i++) {
			struct item *it = &b->items[i];

			if (it->dso)
				out_mem(b->out, b->stage.buf + b->span[2 * i], b->span[2 * i + 1]);
			else
				format_item(b->out, o, b, it, NULL);
			status |= tell(o, b, it);
			if (b->out->len >= OUT_FLUSH)
				out_flush(b->out);
		}
	}
	b->n = 0;
	b->used = 0;
	b->bare = false;
	if (!b->exe) /* (-e: said once a run) */
		memset(b->said_nodebug, 0, ng * sizeof(*b->said_nodebug));
	return status;
}

/* addr2line mode: one binary. */
static int run_exe(const struct opts *o, struct ds_store *store, char **addrs, int naddrs,
		   struct out *out)
{
	struct ds_dso *dso = o->kernel ? NULL : ds_store_findnew(store, o->exe, NULL);
	struct reader *rd = calloc(1, sizeof(*rd));
	struct batch b;
	char *line;
	size_t len;
	int status = 0, kind;
	const char *bad;

	/* As addr2line: a file that is missing, a directory or no ELF file
	 * is an error before any address (nothing on stdout, exit 1).
	 * (dsostore addr2line checked it already, in binutils' words.) */
	if (!o->kernel && !o->quiet && (bad = bad_file(o->exe, false))) {
		cli_error("%s: %s", o->exe, bad);
		ds_dso_put(dso);
		free(rd);
		return 1;
	}
	if ((!dso && !o->kernel) || !rd) {
		cli_error("%s: %s", o->exe, ds_strerror(-errno));
		free(rd);
		return 1;
	}
	batch_init(&b, true, EXE_LINES, 1, out);
	b.groups[0] = dso;
	b.ngroups = dso != NULL;
	b.store = store;
	b.binutils = o->binutils;
	b.path = o->exe;
	b.addr_mask = o->addr_width == 8 ? UINT32_MAX : UINT64_MAX;
	b.section = o->section;
	b.sec_vma = o->sec_vma;
	b.sec_size = o->sec_size;
	rd->out = out;
	rd->chunk = o->binutils ? A2L_CHUNK : 0;
	for (int i = 0; i < naddrs; i++) {
		add_exe_line(&b, dso, addrs[i], strlen(addrs[i]), false);
		if (batch_full(&b))
			status |= answer_block(o, &b);
	}
	while (!naddrs && !cli_interrupted) {
		if (take_bare_addrs(rd, &b, dso)) {
			if (batch_full(&b))
				status |= answer_block(o, &b);
			continue;
		}
		if ((kind = next_line(rd, &line, &len, b.n > 0)) == LINE_EOF)
			break;
		if (kind == LINE_WAIT) {
			status |= answer_block(o, &b);
			continue;
		}
		if (kind == LINE_TOO_LONG)
			add_too_long(&b, true, rd->lineno);
		else
			add_exe_line(&b, dso, line, len, true);
		if (batch_full(&b))
			status |= answer_block(o, &b);
	}
	if (b.n)
		status |= answer_block(o, &b);
	batch_release(&b);
	free(rd);
	ds_dso_put(dso);
	a2l_symbols_close();
	a2l_renamed_free();
	return status;
}

/* ------------------------------------------------------------ --pid
 *
 * Bare addresses of one live process: a block of them at a time goes to
 * ds_symbolize_pid(), which normalizes, groups them by DSO and answers in
 * input order with a reason for each. */

/* What stderr says of answer a of address addr, or NULL: nothing wrong. */
static const char *pid_failure(const struct ds_sym_answer *a, uint64_t addr, char *msg,
			       size_t len)
{
	switch (a->reason) {
	case DS_SYM_REASON_NONE:
	case DS_SYM_REASON_NO_SYMBOL:
	case DS_SYM_REASON_JIT:
		return NULL;
	case DS_SYM_REASON_NO_DEBUGINFO:
		if (a->status == DS_SYM_FOUND)
			return NULL; /* named from the binary's symbols */
		if (a->status == DS_SYM_NOT_FOUND) /* nor in those */
			snprintf(msg, len, "0x%" PRIx64 ": no symbol here, and no debuginfo (%s)",
				 addr, ds_strerror(a->debuginfo_error));
		else
			snprintf(msg, len, "0x%" PRIx64 ": no debuginfo or symbols found (%s)",
				 addr, ds_strerror(a->debuginfo_error));
		return msg;
	case DS_SYM_REASON_ERROR:
		snprintf(msg, len, "0x%" PRIx64 ": %s", addr, ds_strerror(a->error));
		return msg;
	default:
		snprintf(msg, len, "0x%" PRIx64 ": %s", addr, ds_sym_reason_name(a->reason));
		return msg;
	}
}

/* The block's addresses (bad[i]: line i was no address) answered in order. */
static int answer_pid_block(const struct opts *o, struct ds_store *store,
			    struct ds_normalizer *norm, struct ds_sym_batch *sym,
			    const uint64_t *addrs, const bool *bad, const size_t *lineno, size_t n,
			    struct out *out)
{
	char pidname[32], msg[256];
	const struct ds_sym_answer *ans;
	const char *said[64]; /* binaries said to lack debuginfo (the batch's strings) */
	size_t na, nsaid = 0;
	int rc, status = 0;

	snprintf(pidname, sizeof(pidname), "pid:%d", o->pid);
	/* (Without a normalizer, ds_symbolize_pid() tries again and
	 * answers every address with the reason it fails.) */
	rc = norm ? ds_normalizer_symbolize(norm, addrs, n, sym_flags(o), sym)
		  : ds_symbolize_pid(store, o->pid, addrs, n, sym_flags(o), sym);
	ans = ds_sym_batch_answers(sym, &na);
	if (na != n) { /* no answers: -ENOMEM, -EINVAL */
		cli_error("%s: %s", pidname, ds_strerror(rc < 0 ? rc : -EINVAL));
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct ds_sym_answer *a = &ans[i];
		const char *module = a->module ? a->module : pidname, *why;
		bool miss;

		if (bad[i]) {
			answer(out, o, "", addrs[i], NULL, "not a hexadecimal address");
			cli_error("line %zu: not a hexadecimal address", lineno[i]);
			status = 1;
			continue;
		}
		why = pid_failure(a, addrs[i], msg, sizeof(msg));
		/* A miss in the binary's own symbols (no debuginfo): the "??"
		 * answer, said on stderr, exit 0 as any miss.  An unmapped
		 * address, anonymous memory, a kernel address, an error: an
		 * error answer, exit 1. */
		miss = a->status == DS_SYM_NOT_FOUND && a->reason == DS_SYM_REASON_NO_DEBUGINFO;
		answer(out, o, module, addrs[i], a, miss ? NULL : why);
		if (why && miss) { /* once per binary and block, as the stream */
			size_t k = 0;

			while (k < nsaid && strcmp(said[k], module))
				k++;
			if (k < nsaid)
				why = NULL;
			else if (nsaid < sizeof(said) / sizeof(said[0]))
				said[nsaid++] = module;
		}
		if (why) {
			cli_error("%s: %s", module, why);
			status |= !miss;
		}
		if (out->len >= OUT_FLUSH)
			out_flush(out);
	}
	return status;
}

/* A block of --pid's addresses, answered when full. */
struct pid_block {
	uint64_t addrs[CHUNK_LINES];
	bool bad[CHUNK_LINES];
	size_t lineno[CHUNK_LINES];
	size_t n;
	struct ds_sym_batch *sym;
	/* The process's, kept from block to block: its maps read once, its
	 * DSOs (and their indexes) held. */
	struct ds_normalizer *norm;
};

static int pid_flush(const struct opts *o, struct ds_store *store, struct pid_block *pb,
		     struct out *out)
{
	int status = pb->n ? answer_pid_block(o, store, pb->norm, pb->sym, pb->addrs, pb->bad,
					      pb->lineno, pb->n, out)
			   : 0;

	pb->n = 0;
	return status;
}

/* One address given or read (kind: next_line()'s) into the block. */
static int pid_add(const struct opts *o, struct ds_store *store, struct pid_block *pb,
		   int kind, const char *line, size_t len, size_t lineno, struct out *out)
{
	size_t i = pb->n++;

	pb->bad[i] = kind != LINE_OK || !parse_addr(line, len, &pb->addrs[i]);
	if (pb->bad[i])
		pb->addrs[i] = 0;
	pb->lineno[i] = lineno;
	return pb->n == CHUNK_LINES ? pid_flush(o, store, pb, out) : 0;
}

static int run_pid(const struct opts *o, struct ds_store *store, char **args, int nargs,
		   struct out *out)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	struct pid_block *pb = calloc(1, sizeof(*pb));
	uint64_t blank;
	char *line;
	size_t len;
	int status = 0, kind;

	if (!rd || !pb || !(pb->sym = ds_sym_batch_new()))
		oom();
	pb->norm = ds_normalizer_new(store, o->pid, NULL);
	rd->out = out;
	for (int i = 0; i < nargs; i++)
		status |= pid_add(o, store, pb, LINE_OK, args[i], strlen(args[i]), (size_t)i + 1,
				  out);
	/* Else stdin's lines, answered before a read that would wait: a
	 * peer waiting for its answers gets them. */
	while (!nargs && (kind = next_line(rd, &line, &len, pb->n > 0)) != LINE_EOF) {
		if (kind == LINE_WAIT)
			status |= pid_flush(o, store, pb, out);
		else if (kind == LINE_TOO_LONG ||
			 ds_sym_parse_line(line, len, NULL, 0, NULL, &blank) != DS_SYM_LINE_EMPTY)
			status |= pid_add(o, store, pb, kind, line, len, rd->lineno, out);
	}
	status |= pid_flush(o, store, pb, out);
	ds_normalizer_free(pb->norm);
	ds_sym_batch_free(pb->sym);
	free(pb);
	free(rd);
	return status;
}

/* ------------------------------------------------------ build-ID mode */

/* Resolves and answers the block's lines, then lets the DSOs of the block
 * before go: those this one shares stay loaded (its set has them too), so a
 * long stream over a few binaries builds each index once. */
static int answer_stream_block(const struct opts *o, struct ds_store *store, struct batch *b)
{
	DS_OPTS(ds_fetch_opts, fo, .progress = cli_want_progress(-1) ? cli_progress : NULL);
	struct dso_set t;
	int status;

	if (b->cur.n)
		ds_store_prefetch(store, &fo);
	status = answer_block(o, b);
	set_clear(&b->prev);
	t = b->prev;
	b->prev = b->cur;
	b->cur = t;
	b->ngroups = 0;
	return status;
}

static int run_stream(const struct opts *o, struct ds_store *store, size_t max_dsos,
		      struct out *out, char **addrs, int naddrs)
{
	struct reader *rd = calloc(1, sizeof(*rd));
	struct batch b;
	char *line;
	size_t len;
	int status = 0, kind;

	if (!rd)
		oom();
	batch_init(&b, false, CHUNK_LINES, max_dsos, out);
	b.store = store;
	rd->out = out;
	for (int i = 0; i < naddrs; i++) { /* --pid's */
		read_one(o, &b, store, LINE_OK, addrs[i], strlen(addrs[i]), (size_t)i + 1);
		if (batch_full(&b))
			status |= answer_stream_block(o, store, &b);
	}
	while (!naddrs && !cli_interrupted && (kind = next_line(rd, &line, &len, false)) != LINE_EOF) {
		read_one(o, &b, store, kind, line, len, rd->lineno);
		if (batch_full(&b))
			status |= answer_stream_block(o, store, &b);
	}
	if (b.n)
		status |= answer_stream_block(o, store, &b);
	batch_release(&b);
	cli_pid_done();
	free(rd);
	return status;
}

static struct ds_store *new_store(const struct cli_common *common, uint64_t budget,
				   unsigned int fd_budget, bool file_offsets)
{
	DS_OPTS(ds_store_opts, so, .mem_budget = budget, .fd_budget = fd_budget,
		.file_offsets = file_offsets);
	struct ds_context *ctx = cli_context(common);
	struct ds_store *store = ds_store_new(ctx, "host", &so);

	ds_context_free(ctx);
	if (!store)
		cli_error("cannot create a store: %s", ds_strerror(-errno));
	return store;
}

int symbolize_addr2line(const struct cli_a2l *a, char **addrs, int naddrs)
{
	struct opts o = { .functions = a->functions, .inlines = a->inlines,
			  .demangle = a->demangle, .addresses = a->addresses,
			  .pretty = a->pretty, .basenames = a->basenames, .binutils = true,
			  .quiet = true, .history = true, .addr_width = a2l_addr_width(a->exe),
			  .section = a->section, .sec_vma = a->sec_vma, .sec_size = a->sec_size,
			  .style = STYLE_GNU, .exe = a->exe };
	struct cli_common common = { 0 };
	struct out out = { 0 };
	struct ds_store *store = new_store(&common, 0, 0, false);
	int status;

	if (!store)
		return 1;
	status = run_exe(&o, store, addrs, naddrs, &out);
	out_flush(&out);
	free(out.buf);
	ds_store_free(store);
	return status;
}

/* A number from 1 to max in v, else 0 (after no message). */
static unsigned long count_arg(const char *v, unsigned long max)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	return errno || end == v || *end || v[0] == '-' || n > max ? 0 : n;
}

/* One of symbolize's options (id, its argument in p->arg): 0, else
 * after saying why, 2. */
static int symbolize_option(struct opts *o, const struct cli_parse *p, int id, size_t *batch,
			    uint64_t *budget, unsigned int *fd_budget)
{
	const char *v = p->arg;
	char *end;
	long pid;

	switch (id) {
	case O_EXE:
		o->exe = v;
		return 0;
	case O_KERNEL:
		o->kernel = true;
		return 0;
	case O_FUNCTIONS:
		o->functions = true;
		return 0;
	case O_INLINES:
		o->inlines = true;
		return 0;
	case O_DEMANGLE:
		o->demangle = true;
		if (v && !a2l_demangle_style(v, &o->demangle)) {
			cli_error("unknown demangling style `%s'", v);
			return 2;
		}
		return 0;
	case O_ADDRESSES:
		o->addresses = true;
		return 0;
	case O_PRETTY:
		o->pretty = true;
		return 0;
	case O_BASENAMES:
		o->basenames = true;
		return 0;
	case O_FILE_OFFSET:
		o->file_offset = true;
		return 0;
	case O_PID:
		pid = strtol(v, &end, 10);
		if (end == v || *end || pid <= 0 || pid > INT32_MAX) {
			cli_error("symbolize: --pid wants a process ID");
			return 2;
		}
		o->pid = (int)pid;
		return 0;
	case O_BATCH:
		*batch = count_arg(v, CHUNK_LINES);
		if (!*batch) {
			cli_error("symbolize: --batch needs a number from 1 to %d, not '%s'",
				  CHUNK_LINES, v);
			return 2;
		}
		return 0;
	case O_MEM_BUDGET:
		if (!cli_parse_size(v, budget) || !*budget) {
			cli_error("symbolize: --mem-budget needs a size in bytes (K, M or G after it "
				  "allowed), not '%s'",
				  v);
			return 2;
		}
		return 0;
	case O_FD_BUDGET:
		*fd_budget = (unsigned int)count_arg(v, 1000000);
		if (!*fd_budget) {
			cli_error("symbolize: --fd-budget needs a number of files from 1 to "
				  "1000000, not '%s'",
				  v);
			return 2;
		}
		return 0;
	case O_OUTPUT_STYLE:
		if (!strcasecmp(v, "GNU"))
			o->style = STYLE_GNU;
		else if (!strcasecmp(v, "LLVM"))
			o->style = STYLE_LLVM;
		else if (!strcasecmp(v, "JSON"))
			o->style = STYLE_JSON;
		else {
			cli_error("unknown output style %s (GNU, LLVM or JSON)", v);
			return 2;
		}
		return 0;
	default:
		return 0; /* binutils' -b TARGET, -r, -R: nothing to do here */
	}
}

static int cmd_symbolize(int argc, char **argv)
{
	struct cli_common common = { 0 };
	struct opts o = { .style = STYLE_GNU };
	struct out out = { 0 };
	struct ds_store *store;
	char **addrs = calloc(argc, sizeof(*addrs));
	size_t batch = CHUNK_DSOS_DEFAULT;
	uint64_t budget = 0;
	unsigned int fd_budget = 0;
	int naddrs = 0, status, id;
	struct cli_parse p;

	cli_parse_init(&p, &cli_cmd_symbolize, &common, argc, argv);
	while ((id = cli_next(&p)) != CLI_END) {
		if (id == CLI_BAD || id == CLI_HELP) {
			free(addrs);
			return id == CLI_HELP ? 0 : 2;
		}
		if (id == CLI_ARG)
			addrs[naddrs++] = (char *)p.arg;
		else if (symbolize_option(&o, &p, id, &batch, &budget, &fd_budget)) {
			free(addrs);
			return 2;
		}
	}
	/* llvm-symbolizer names functions, follows inlines and demangles by
	 * default; its style keeps those defaults. */
	if (o.style != STYLE_GNU) {
		o.functions = true;
		o.inlines = true;
		o.demangle = true;
	}
	o.vmlinux = common.vmlinux;
	if (o.kernel && (o.exe || o.pid)) {
		cli_error("symbolize: --kernel, -e and --pid are one or the other");
		return 2;
	}
	if (!o.exe && !o.kernel && naddrs && !o.pid) {
		cli_error("symbolize: addresses on the command line need -e FILE");
		return 2;
	}
	/* -e in addr2line's style: its protocol, as binutils reads it. */
	o.binutils = o.exe && o.style == STYLE_GNU;
	o.addr_width = o.exe ? a2l_addr_width(o.exe) : 16;
	store = new_store(&common, budget, fd_budget, o.file_offset);
	if (!store) {
		free(addrs);
		return 2;
	}
	status = o.exe || o.kernel ? run_exe(&o, store, addrs, naddrs, &out)
		 : o.pid	   ? run_pid(&o, store, addrs, naddrs, &out)
				   : run_stream(&o, store, batch, &out, addrs, naddrs);
	out_flush(&out);
	free(out.buf);
	ds_store_free(store);
	free(addrs);
	return status;
}

const struct cli_command cli_cmd_symbolize = {
	.name = "symbolize",
	.run = cmd_symbolize,
	.summary = "addresses to functions, file:line and inline frames",
	.usage = "-e FILE [-f] [-i] [-C] [-a] [-p] [OPTIONS] [ADDR...]\n"
		 "[-f] [-i] [-C] [-a] [-p] [OPTIONS] < LINES\n"
		 "--kernel [-k VMLINUX] [OPTIONS] [ADDR...]",
	.about = "With -e, as addr2line: each ADDR (hex, 0x optional; read from stdin when none\n"
		 "is given) of FILE, whose debuginfo may be found by build ID.  In the GNU\n"
		 "style, stdin is read as binutils reads it (perf's srcline protocol): every\n"
		 "line, cut at 99 bytes, is an address as strtoul() reads it (a non-address\n"
		 "such as \",\" is 0), each answer out before a read that would wait.  See\n"
		 "also 'dsostore addr2line'.  Without -e, each\n"
		 "input line is \"BUILD-ID ADDR\" or \"PATH ADDR\": the build IDs are resolved\n"
		 "in parallel (debuginfod included), a batch of them at a time, then the batch's\n"
		 "lines answered in order.  A line over 64 KiB gets the \"??\" answer.\n"
		 "A line \"pid:PID ADDR\" is an absolute address of a live process (see\n"
		 "dsostore normalize); with --pid PID, so is each ADDR given or read alone.\n"
		 "A line \"kernel ADDR\" is an address of the running kernel, as with --kernel.\n",
	.tables = symbolize_tables,
	.flags = CLI_CMD_DASH_HEX,
};
