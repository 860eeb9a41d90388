/* The core-file API on a core of this test itself: a child forked here
 * faults at a known address in a known function, the kernel writes its
 * core (core_pattern a plain file name; else skipped), and what the
 * library reads is checked against what the parent knows independently:
 * the child's pid, SIGSEGV with si_code SEGV_MAPERR and the address it
 * touched, this executable's path and build ID (eu-readelf's, via the
 * shell) among the modules, and, unwound with libdwfl through
 * ds_core_backtrace(), the faulting function in the innermost frame with
 * its caller after it. */
#define _GNU_SOURCE
#include "testutil.h"

#include <dsostore.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define FAULT_ADDR 0x1238

__attribute__((noinline)) int crash_here(volatile int *p)
{
	return *p + 1;
}

__attribute__((noinline)) int call_crash(void)
{
	return crash_here((volatile int *)(uintptr_t)FAULT_ADDR) + 2;
}

struct seen {
	int threads;
	bool crashed_first;
	bool innermost_crash_here, caller_next;
	int first_tid;
};

static int on_thread(void *user, const struct ds_stack_thread *t)
{
	struct seen *s = user;

	if (!s->threads++) {
		s->crashed_first = t->crashed;
		s->first_tid = t->tid;
		if (t->nframes >= 2 && t->frames[0].nframes && t->frames[0].frames[0].function) {
			s->innermost_crash_here = !strcmp(t->frames[0].frames[0].function, "crash_here");
			s->innermost_crash_here &= t->frames[0].activation;
			s->caller_next = t->frames[1].nframes && t->frames[1].frames[0].function &&
					 !strcmp(t->frames[1].frames[0].function, "call_crash") &&
					 !t->frames[1].activation &&
					 t->frames[1].addr == t->frames[1].pc - 1;
		}
	}
	return 0;
}

int main(void)
{
	char pattern[256] = "", self[PATH_MAX], hex[2 * DS_BUILD_ID_MAX + 1] = "", err[256];
	const char *dir = t_tmpdir();
	const struct ds_core_module *mods;
	struct ds_build_id self_bid;
	struct ds_core_info info;
	struct ds_context *ctx;
	struct ds_store *store;
	struct ds_core *core;
	struct seen seen = { 0 };
	bool found_self = false;
	char *path;
	FILE *f;
	pid_t child;
	int status, rc;
	size_t n;
	ssize_t len;

	f = fopen("/proc/sys/kernel/core_pattern", "r");
	if (!f || !fgets(pattern, sizeof(pattern), f) || pattern[0] == '|' || strchr(pattern, '/')) {
		fprintf(stderr, "SKIP: core_pattern '%s' does not write into the working directory\n",
			pattern);
		return 77;
	}
	fclose(f);
	pattern[strcspn(pattern, "\n")] = 0;
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	CHECK(len > 0);
	self[len > 0 ? len : 0] = 0;
	/* This executable's build ID, as eu-readelf reads it. */
	f = t_popen("eu-readelf -n '%s' | awk '/Build ID:/ {print $3; exit}'", self);
	if (!fgets(hex, sizeof(hex), f))
		hex[0] = 0;
	pclose(f);
	hex[strcspn(hex, "\n")] = 0;
	if (!hex[0]) {
		fprintf(stderr, "SKIP: no eu-readelf, or no build ID in %s\n", self);
		return 77;
	}
	t_hex_to_bid(hex, &self_bid);

	child = fork();
	if (child == 0) {
		struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

		if (chdir(dir) || setrlimit(RLIMIT_CORE, &rl))
			_exit(3);
		signal(SIGSEGV, SIG_DFL);
		_exit(call_crash());
	}
	CHECK(waitpid(child, &status, 0) == child);
	if (!WIFSIGNALED(status) || !WCOREDUMP(status)) {
		fprintf(stderr, "SKIP: the child wrote no core (status %#x; RLIMIT_CORE hard limit?)\n",
			status);
		return 77;
	}
	/* "core", or "core.PID" with core_uses_pid. */
	path = t_path("core.%d", (int)child);
	if (access(path, R_OK)) {
		free(path);
		path = t_path("%s", pattern);
	}
	rc = ds_core_open(path, &core, err, sizeof(err));
	CHECK_EQ_INT(rc, 0);
	if (rc) {
		fprintf(stderr, "%s: %s\n", path, err);
		return 1;
	}
	ds_core_info(core, &info);
	CHECK_EQ_INT(info.pid, child);
	CHECK_EQ_INT(info.crash_tid, child);
	CHECK_EQ_INT(info.signo, SIGSEGV);
	CHECK_EQ_INT(info.si_code, SEGV_MAPERR);
	CHECK(info.has_fault_addr);
	CHECK_EQ_INT(info.fault_addr, FAULT_ADDR);
	/* One thread, and under TSan its runtime's own, started in the child. */
	CHECK(info.nthreads >= 1 && info.nthreads <= 2);
	CHECK_EQ_INT(info.missing_bytes, 0);
	CHECK(info.fname && !strncmp(info.fname, "test_core", 9));

	n = ds_core_modules(core, &mods);
	for (size_t i = 0; i < n; i++) {
		if (i)
			CHECK(mods[i - 1].start <= mods[i].start);
		if (!strcmp(mods[i].path, self)) {
			found_self = true;
			CHECK(t_same_bid(&mods[i].build_id, &self_bid));
			CHECK(mods[i].start <= (uintptr_t)&crash_here && (uintptr_t)&crash_here < mods[i].end);
		}
	}
	CHECK(found_self);

	ctx = ds_context_new(NULL);
	CHECK(ctx != NULL);
	store = t_store_new(ctx, 0);
	rc = ds_core_find_files(core, store, NULL);
	CHECK(rc >= 0);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(mods[i].path, self)) {
			CHECK_EQ_INT(mods[i].file_state, DS_CORE_FILE_AT_PATH);
			CHECK(mods[i].debuginfo && !strcmp(mods[i].debuginfo, self));
		}
	rc = ds_core_backtrace(core, store, NULL, on_thread, &seen, err, sizeof(err));
	CHECK_EQ_INT(rc, 0);
	CHECK_EQ_INT(seen.threads, info.nthreads);
	CHECK(seen.crashed_first);
	CHECK_EQ_INT(seen.first_tid, child);
	CHECK(seen.innermost_crash_here);
	CHECK(seen.caller_next);

	ds_core_close(core);
	ds_store_free(store);
	ds_context_free(ctx);
	free(path);
	if (t_failures)
		fprintf(stderr, "test_core: %d failure(s)\n", t_failures);
	return t_failures != 0;
}
