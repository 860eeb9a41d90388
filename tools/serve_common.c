/* What the serve layer's files share: its messages (tools/serve.h). */
#define _GNU_SOURCE
#include "cli.h"
#include "serve.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

void serve_log(struct serve *sv, const char *fmt, ...)
{
	va_list ap;

	(void)sv;
	pthread_mutex_lock(&log_lock);
	fputs("dsostore serve: ", stderr);
	va_start(ap, fmt);
	cli_vwrite(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_lock);
}

struct MHD_Response *serve_error(struct serve *sv, unsigned int status, const char *fmt, ...)
{
	struct MHD_Response *r;
	char msg[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n > sizeof(msg) - 2)
		n = sizeof(msg) - 2;
	if (sv->verbose || status >= 500)
		serve_log(sv, "%u: %s", status, msg);
	msg[n++] = '\n';
	r = MHD_create_response_from_buffer((size_t)n, msg, MHD_RESPMEM_MUST_COPY);
	if (r)
		MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	return r;
}

