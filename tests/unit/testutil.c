#define _GNU_SOURCE
#include "testutil.h"

#include "dsostore.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

int t_failures;
static char tmpdir[256];

static void rm_tmpdir(void)
{
	char cmd[300];

	if (tmpdir[0] && !getenv("DS_KEEP_TMP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
}

const char *t_tmpdir(void)
{
	if (!tmpdir[0]) {
		const char *base = getenv("TMPDIR");

		snprintf(tmpdir, sizeof(tmpdir), "%s/dstest.XXXXXX", base ? base : "/tmp");
		if (!mkdtemp(tmpdir)) {
			perror("mkdtemp");
			exit(2);
		}
		atexit(rm_tmpdir);
	}
	return tmpdir;
}

char *t_path(const char *fmt, ...)
{
	char rel[512], *out;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	if (asprintf(&out, "%s/%s", t_tmpdir(), rel) < 0)
		exit(2);
	return out;
}

void t_hex_to_bid(const char *hex, struct ds_build_id *out)
{
	size_t n = strlen(hex);

	memset(out, 0, sizeof(*out));
	if (n < 2 || n % 2 || n / 2 > DS_BUILD_ID_MAX) {
		fprintf(stderr, "bad build ID '%s'\n", hex);
		exit(1);
	}
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int byte;

		if (sscanf(hex + 2 * i, "%2x", &byte) != 1) {
			fprintf(stderr, "bad build ID '%s'\n", hex);
			exit(1);
		}
		out->data[i] = (uint8_t)byte;
	}
	out->size = (uint8_t)(n / 2);
}

bool t_same_bid(const struct ds_build_id *a, const struct ds_build_id *b)
{
	return a && b && a->size && a->size == b->size && !memcmp(a->data, b->data, a->size);
}

void t_mkdir_parents(const char *path)
{
	char *dir = strdup(path);

	for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			perror(dir);
			exit(1);
		}
		*p = '/';
	}
	free(dir);
}

void *t_read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(buf = malloc(n)) || fread(buf, 1, n, f) != (size_t)n) {
		perror(path);
		exit(1);
	}
	fclose(f);
	*len = n;
	return buf;
}

void t_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

int t_sh(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (rc < 0)
		exit(2);
	rc = system(cmd);
	free(cmd);
	if (rc == -1 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

void t_compile(const char *cc, const char *flags, const char *source, const char *out)
{
	char *src;

	if (t_sh("command -v %s >/dev/null", cc) != 0) {
		fprintf(stderr, "SKIP: %s is not installed\n", cc);
		exit(77);
	}
	src = t_path("src-%d-%ld.c", getpid(), random());
	t_write_file(src, source);
	if (t_sh("%s %s -o '%s' '%s'", cc, flags, out, src) != 0) {
		fprintf(stderr, "compiling %s with %s %s failed\n", out, cc, flags);
		exit(1);
	}
	free(src);
}

FILE *t_popen(const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	FILE *p;
	int rc;

	va_start(ap, fmt);
	rc = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (rc < 0)
		exit(2);
	p = popen(cmd, "r");
	if (!p) {
		perror(cmd);
		exit(2);
	}
	free(cmd);
	return p;
}

struct ds_store_stats t_stats(struct ds_store *s)
{
	struct ds_store_stats st;

	ds_store_stats(s, &st);
	return st;
}

struct ds_store *t_store_new(struct ds_context *ctx, uint64_t budget)
{
	DS_OPTS(ds_store_opts, o, .mem_budget = budget);
	struct ds_store *s = ds_store_new(ctx, "host", &o);

	if (!s) {
		perror("ds_store_new");
		exit(1);
	}
	return s;
}

const char *t_readelf_build_id(const char *path)
{
	static char hex[256];
	FILE *p;

	hex[0] = 0;
	p = t_popen("eu-readelf -n '%s' 2>/dev/null | awk '/Build ID:/ {print $3; exit}'", path);
	if (!fgets(hex, sizeof(hex), p))
		hex[0] = 0;
	pclose(p);
	hex[strcspn(hex, "\n")] = 0;
	return hex;
}

void t_symbol_range(const char *file, const char *name, uint64_t *lo, uint64_t *hi)
{
	FILE *f = t_popen("nm -S '%s' | awk '$4 == \"%s\" { print $1, $2 }'", file, name);
	unsigned long long a = 0, n = 0;

	if (fscanf(f, "%llx %llx", &a, &n) != 2 || !n) {
		fprintf(stderr, "no symbol %s in %s\n", name, file);
		exit(1);
	}
	pclose(f);
	*lo = a;
	*hi = a + n;
}

int t_done(const char *name)
{
	if (t_failures) {
		fprintf(stderr, "%s: %d check(s) failed\n", name, t_failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

/* A result as addr2line -f prints it: "??"/"??:0" when nothing is
 * known, "FILE:?" for an unknown line; like binutils, the innermost row's
 * discriminator goes on every frame. */
char *t_format_a2l(const struct ds_sym_result *r)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	if (!r->nframes)
		fputs("??\n??:0\n", f);
	for (size_t i = 0; i < r->nframes; i++) {
		const struct ds_frame *fr = &r->frames[i];

		fprintf(f, "%s\n%s:", fr->function ? fr->function : "??",
			fr->file ? fr->file : "??");
		if (fr->line)
			fprintf(f, "%u", fr->line);
		else
			fputc('?', f);
		if (r->frames[0].discriminator)
			fprintf(f, " (discriminator %u)", r->frames[0].discriminator);
		fputc('\n', f);
	}
	fclose(f);
	return s;
}
