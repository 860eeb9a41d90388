/* What every command uses: messages, the context made from the shared
 * options, progress bars, JSON strings. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void cli_vwrite(FILE *f, const char *fmt, va_list ap)
{
	char small[512], *msg = small;
	va_list again;
	int n;

	va_copy(again, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n < 0)
		n = 0, small[0] = 0;
	if ((size_t)n >= sizeof(small)) {
		msg = malloc((size_t)n + 1);
		if (msg) {
			vsnprintf(msg, (size_t)n + 1, fmt, again);
		} else {
			msg = small;
			n = sizeof(small) - 1;
		}
	}
	va_end(again);
	ds_term_write(f, msg, (size_t)n);
	if (msg != small)
		free(msg);
}

volatile sig_atomic_t cli_interrupted;

/* A progress line drawn and not ended (cli_progress()). */
static bool progress_open;

static void on_signal(int signo)
{
	cli_interrupted = signo;
}

void cli_signals_install(void)
{
	/* No SA_RESTART: a read of stdin or a wait returns (EINTR) and the
	 * command sees the flag.  SA_RESETHAND: a second Ctrl-C kills at
	 * once, as the user asks then. */
	struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESETHAND}, old;
	const int sigs[] = {SIGINT, SIGTERM};

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* Ignored when we started (a shell's background job without
		 * job control, nohup): ignored still, as the shell meant. */
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(sigs[i], &sa, NULL);
	}
}

void cli_progress_end(void)
{
	if (progress_open) {
		fputc('\n', stderr);
		progress_open = false;
	}
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	cli_progress_end();
	fputs("dsostore: ", stderr);
	va_start(ap, fmt);
	cli_vwrite(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *cli_t(const char *s)
{
	static _Thread_local struct {
		char *buf;
		size_t cap;
	} slot[CLI_T_SLOTS];
	static _Thread_local unsigned next;
	size_t len, n;

	if (!s)
		return NULL;
	len = strlen(s);
	n = ds_term_escape(NULL, 0, s, len);
	if (n == len)
		return s; /* nothing to escape (every escape is longer) */
	next = (next + 1) % CLI_T_SLOTS;
	if (slot[next].cap < n + 1) {
		char *b = realloc(slot[next].buf, n + 1);

		if (!b) {
			fputs("dsostore: out of memory\n", stderr);
			exit(2);
		}
		slot[next].buf = b;
		slot[next].cap = n + 1;
	}
	ds_term_escape(slot[next].buf, n + 1, s, len);
	return slot[next].buf;
}

void cli_human(double bytes, char *buf, size_t len)
{
	const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", bytes, unit[u]);
}

int cli_progress(void *user, const struct ds_fetch_progress *p)
{
	char bytes[32], rate[32];

	(void)user;
	cli_human((double)p->bytes, bytes, sizeof(bytes));
	cli_human(p->elapsed_s > 0 ? p->bytes / p->elapsed_s : 0, rate, sizeof(rate));
	if (cli_interrupted) {
		/* no more drawing: the batch is stopping */
		cli_progress_end();
		return 1;
	}
	fprintf(stderr, "\r[%zu/%zu] %s, %s/s, %zu failed, %.1f s  ", p->done, p->total, bytes,
		rate, p->failed, p->elapsed_s);
	progress_open = true;
	if (p->done == p->total)
		cli_progress_end();
	return 0;
}

void cli_json_string(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

bool cli_want_progress(int option)
{
	return option >= 0 ? option : isatty(2) || getenv("DEBUGINFOD_PROGRESS");
}

static void log_stderr(void *user, enum ds_log_level level, const char *msg)
{
	(void)user;
	(void)level;
	cli_progress_end();
	fputs("dsostore: ", stderr);
	ds_term_puts(stderr, msg);
	fputc('\n', stderr);
}

struct ds_context *cli_context(const struct cli_common *c)
{
	DS_OPTS(ds_context_opts, opts, .debug_dirs = c->n_debug_dirs ? c->debug_dirs : NULL,
		.perf_buildid_dir = c->perf_buildid_dir, .log_fn = log_stderr,
		.kallsyms = c->kallsyms, .kernel_root = c->kernel_root,
		.log_level = c->verbose ? DS_LOG_DEBUG : DS_LOG_WARN, .cancel = &cli_interrupted);
	struct ds_context *ctx = ds_context_new(&opts);

	if (!ctx) {
		cli_error("cannot create a context: %s", ds_strerror(-errno));
		exit(2);
	}
	return ctx;
}

bool cli_parse_size(const char *v, uint64_t *out)
{
	unsigned shift = 0;
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno || end == v || v[0] == '-')
		return false;
	if (*end) {
		const char *units = "KMG", *u = strchr(units, *end);

		if (!u || end[1])
			return false;
		shift = 10 * (unsigned)(u - units + 1);
	}
	if (shift && n > UINT64_MAX >> shift)
		return false;
	*out = (uint64_t)n << shift;
	return true;
}

bool cli_parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v <= 0 || v > INT32_MAX)
		return false;
	*pid = (int)v;
	return true;
}

void cli_advise_pages(void *p, size_t len, size_t page, int advice)
{
	uintptr_t from = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1),
		  end = ((uintptr_t)p + len) & ~(uintptr_t)(page - 1);

	if (end > from)
		(void)madvise((void *)from, end - from, advice);
}
