/* Fault rules of dsserver.  A rule is (key, kind, argument, times,
 * artifact): key is a build ID or "*" for every build ID.  Rules fall in
 * three classes — latency, bandwidth, outcome — and a request gets at most
 * one rule of each: the most specific one (build ID over "*", a named
 * artifact over any).  Adding a rule replaces the rule of the same key,
 * class and artifact, so a test can change a behaviour without a reset. */
#define _GNU_SOURCE
#include "dsserver.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RULES 1024
/* Largest byte count a fault takes: sizes stay far from overflowing when a
 * file size is added, and no test needs an exabyte. */
#define MAX_BYTES (1ull << 60)

struct rule {
	char key[BID_HEX_MAX + 1]; /* build ID or "*" */
	char artifact[16];	   /* "" for any */
	long times;		   /* requests left; -1 unlimited */
	struct fault f;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct rule rules[MAX_RULES];
static size_t nrules;

static const char *const kind_names[] = {
    [F_NONE] = "none",
    [F_LATENCY] = "latency",
    [F_BANDWIDTH] = "bandwidth",
    [F_OK] = "ok",
    [F_STATUS] = "status",
    [F_HANG] = "hang",
    [F_RESET] = "reset",
    [F_TRUNCATE] = "truncate",
    [F_STALL] = "stall",
    [F_WRONGFILE] = "wrongfile",
    [F_REDIRECT] = "redirect",
    [F_GZIP] = "gzip",
    [F_ECHO] = "echo",
    [F_SHORT] = "short",
    [F_PAD] = "pad",
    [F_GZIPBOMB] = "gzipbomb",
    [F_GZIPBOMB_NOSIZE] = "gzipbomb-nosize",
    [F_DEFLATEBOMB] = "deflatebomb",
    [F_DEFLATEBOMB_NOSIZE] = "deflatebomb-nosize",
    [F_BIGHEADERS] = "bigheaders",
};

static int class_of(enum fault_kind k)
{
	return k == F_LATENCY ? 0 : k == F_BANDWIDTH ? 1 : 2;
}

bool bid_valid(const char *s, size_t len)
{
	if (len < 2 || len % 2 || len > BID_HEX_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return !errno && !*end;
}

/* Checks kind and argument and fills f; NULL on success, else why not. */
static const char *parse_fault(const char *kind, const char *arg, struct fault *f)
{
	bool num_arg = false, num_required = false, str_required = false, bytes = false;

	memset(f, 0, sizeof(*f));
	for (size_t k = F_LATENCY; k < sizeof(kind_names) / sizeof(*kind_names); k++)
		if (!strcmp(kind, kind_names[k]))
			f->kind = k;
	switch (f->kind) {
	case F_NONE:
		return "unknown fault kind";
	case F_PAD:
	case F_GZIPBOMB:
	case F_GZIPBOMB_NOSIZE:
	case F_DEFLATEBOMB:
	case F_DEFLATEBOMB_NOSIZE:
	case F_BIGHEADERS:
		bytes = true;
		/* fall through */
	case F_LATENCY:
	case F_BANDWIDTH:
	case F_STATUS:
		num_arg = num_required = true;
		break;
	case F_RESET:
	case F_TRUNCATE:
	case F_STALL:
	case F_SHORT:
		num_arg = true;
		break;
	case F_WRONGFILE:
	case F_REDIRECT:
		str_required = true;
		break;
	case F_OK:
	case F_HANG:
	case F_GZIP:
	case F_ECHO:
		break;
	}
	if (arg && !*arg)
		arg = NULL;
	if ((num_required || str_required) && !arg)
		return "this fault kind needs an argument";
	if (!num_arg && !str_required && arg)
		return "this fault kind takes no argument";
	if (num_arg && arg) {
		if (!parse_u64(arg, &f->num))
			return "argument must be a non-negative integer";
		f->has_num = true;
	}
	if (f->kind == F_STATUS && (f->num < 200 || f->num > 599))
		return "status must be 200..599";
	if (f->kind == F_BANDWIDTH && !f->num)
		return "bandwidth must be > 0";
	if (bytes && f->num > MAX_BYTES)
		return "byte count too large (max 2^60)";
	if (str_required) {
		if (strlen(arg) >= sizeof(f->str))
			return "argument too long";
		strcpy(f->str, arg);
	}
	if (f->kind == F_WRONGFILE && f->str[0] != '/' && !bid_valid(f->str, strlen(f->str)))
		return "wrongfile needs a lowercase hex build ID or an absolute path";
	return NULL;
}

static const char *check_key(const char *key, const char *artifact)
{
	static const char *const arts[] = {"", "debuginfo", "executable", "source", "section"};

	if (strcmp(key, "*") && !bid_valid(key, strlen(key)))
		return "key must be '*' or a lowercase hex build ID";
	for (size_t i = 0; i < sizeof(arts) / sizeof(*arts); i++)
		if (!strcmp(artifact, arts[i]))
			return NULL;
	return "artifact must be debuginfo, executable, source or section";
}

static void remove_at(size_t i)
{
	memmove(&rules[i], &rules[i + 1], (nrules - i - 1) * sizeof(*rules));
	nrules--;
}

/* kind "clear" removes every rule of key; otherwise adds or replaces. */
int fault_add(const char *key, const char *kind, const char *arg, const char *times,
	      const char *artifact, const char **err)
{
	struct rule r = {.times = -1};
	uint64_t t;

	if (!artifact)
		artifact = "";
	if (!key || !*key)
		key = "*";
	if ((*err = check_key(key, artifact)))
		return -1;
	if (!kind || !*kind) {
		*err = "missing fault kind";
		return -1;
	}
	pthread_mutex_lock(&lock);
	if (!strcmp(kind, "clear")) {
		for (size_t i = nrules; i-- > 0;)
			if (!strcmp(rules[i].key, key))
				remove_at(i);
		pthread_mutex_unlock(&lock);
		return 0;
	}
	pthread_mutex_unlock(&lock);
	if ((*err = parse_fault(kind, arg, &r.f)))
		return -1;
	if (times && *times) {
		if (!parse_u64(times, &t) || t == 0 || t > 1000000000) {
			*err = "times must be 1..1000000000";
			return -1;
		}
		r.times = (long)t;
	}
	strcpy(r.key, key);
	strcpy(r.artifact, artifact);

	pthread_mutex_lock(&lock);
	for (size_t i = nrules; i-- > 0;)
		if (!strcmp(rules[i].key, key) && !strcmp(rules[i].artifact, artifact) &&
		    class_of(rules[i].f.kind) == class_of(r.f.kind))
			remove_at(i);
	if (nrules == MAX_RULES) {
		pthread_mutex_unlock(&lock);
		*err = "too many rules";
		return -1;
	}
	rules[nrules++] = r;
	pthread_mutex_unlock(&lock);
	return 0;
}

/* Takes ",times=N" and ",artifact=NAME" off the end of spec (in place). */
static void split_modifiers(char *spec, const char **times, const char **artifact)
{
	char *comma;

	while ((comma = strrchr(spec, ','))) {
		if (!strncmp(comma + 1, "times=", 6) && !*times)
			*times = comma + 7;
		else if (!strncmp(comma + 1, "artifact=", 9) && !*artifact)
			*artifact = comma + 10;
		else
			return;
		*comma = 0;
	}
}

int fault_add_spec(const char *spec, const char **err)
{
	char *copy = strdup(spec), *colon, *kind, *eq;
	const char *times = NULL, *artifact = NULL, *arg = NULL;
	int rc;

	if (!copy) {
		*err = "out of memory";
		return -1;
	}
	colon = strchr(copy, ':');
	if (!colon) {
		free(copy);
		*err = "expected KEY:KIND[=ARG][,times=N][,artifact=NAME]";
		return -1;
	}
	*colon = 0;
	kind = colon + 1;
	split_modifiers(kind, &times, &artifact);
	eq = strchr(kind, '=');
	if (eq) {
		*eq = 0;
		arg = eq + 1;
	}
	rc = fault_add(copy, kind, arg, times, artifact, err);
	free(copy);
	return rc;
}

void fault_reset(void)
{
	pthread_mutex_lock(&lock);
	nrules = 0;
	pthread_mutex_unlock(&lock);
}

/* Rank of a rule for a request, 0 when it does not apply. */
static int rank(const struct rule *r, const char *bid, const char *artifact)
{
	bool by_key = strcmp(r->key, "*") != 0;

	if (by_key && strcmp(r->key, bid))
		return 0;
	if (r->artifact[0] && strcmp(r->artifact, artifact))
		return 0;
	return 1 + 2 * by_key + !!r->artifact[0];
}

static void name_append(char *buf, size_t size, const struct fault *f)
{
	size_t len = strlen(buf);

	if (f->kind == F_NONE)
		return;
	if (f->has_num)
		snprintf(buf + len, size - len, "%s%s=%llu", len ? "+" : "", kind_names[f->kind],
			 (unsigned long long)f->num);
	else
		snprintf(buf + len, size - len, "%s%s", len ? "+" : "", kind_names[f->kind]);
}

/* Chooses the rules for one request and uses up one of their times. */
void fault_plan(const char *bid, const char *artifact, struct fault_plan *plan)
{
	struct fault *slot[3] = {&plan->latency, &plan->bandwidth, &plan->outcome};
	size_t best[3] = {0, 0, 0};
	int best_rank[3] = {0, 0, 0};

	memset(plan, 0, sizeof(*plan));
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrules; i++) {
		int c = class_of(rules[i].f.kind), rk = rank(&rules[i], bid, artifact);

		if (rk > best_rank[c]) {
			best_rank[c] = rk;
			best[c] = i;
		}
	}
	for (int c = 0; c < 3; c++)
		if (best_rank[c])
			*slot[c] = rules[best[c]].f;
	/* Remove used-up rules from the highest index down so that the
	 * remaining indexes in best[] stay valid. */
	for (int pass = 0; pass < 3; pass++) {
		int c = -1;

		for (int k = 0; k < 3; k++)
			if (best_rank[k] && (c < 0 || best[k] > best[c]))
				c = k;
		if (c < 0)
			break;
		if (rules[best[c]].times > 0 && --rules[best[c]].times == 0)
			remove_at(best[c]);
		best_rank[c] = 0;
	}
	pthread_mutex_unlock(&lock);
	for (int c = 0; c < 3; c++)
		name_append(plan->names, sizeof(plan->names), slot[c]);
	if (!plan->names[0])
		strcpy(plan->names, "-");
}

char *fault_list(void)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	pthread_mutex_lock(&lock);
	for (size_t i = 0; i < nrules; i++) {
		const struct rule *r = &rules[i];

		fprintf(f, "%s:%s", r->key, kind_names[r->f.kind]);
		if (r->f.has_num)
			fprintf(f, "=%llu", (unsigned long long)r->f.num);
		else if (r->f.str[0])
			fprintf(f, "=%s", r->f.str);
		if (r->times >= 0)
			fprintf(f, ",times=%ld", r->times);
		if (r->artifact[0])
			fprintf(f, ",artifact=%s", r->artifact);
		fputc('\n', f);
	}
	pthread_mutex_unlock(&lock);
	fclose(f);
	return buf;
}
