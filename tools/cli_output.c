/* The files commands write (report --pprof, report --folded -o,
 * flamegraph -o, ...), opened one way for all of them:
 *
 * - An output that is one of the command's inputs is refused before
 *   anything is read or written: the same file (device and inode, so
 *   also through a symlink or another hard link) would be truncated
 *   while it is read, or replaced by what was made of it.
 * - A regular file (or a new name) is written under a temporary name in
 *   its directory and renamed over the name once whole: a run that fails
 *   or is interrupted (SIGINT, SIGTERM) leaves the old file as it was and
 *   no half-written one.  A symlink is followed: the file it names is
 *   replaced, the link stays.
 * - Anything else that exists (a terminal, /dev/null, a FIFO) is written
 *   in place: there is no file to replace.
 * - "-" is stdout; another name starting with "-" is refused: it is an
 *   option the output option took as its file ("--pprof --no-fetch").
 *   "./-name" is a file of that name. */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* "<dir>/.<base>.<6 hex digits>", created (mode 0666 less the umask). */
static int open_tmp(const char *target, char **tmp)
{
	const char *slash = strrchr(target, '/');
	int dirlen = slash ? (int)(slash - target + 1) : 0;
	const char *base = slash ? slash + 1 : target;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	for (unsigned attempt = 0; attempt < 100; attempt++) {
		unsigned r = (unsigned)ts.tv_nsec * 2654435761u ^ (unsigned)getpid() << 12 ^
			     attempt * 0x9e3779b9u;
		int fd;

		if (asprintf(tmp, "%.*s.%s.%06x", dirlen, target, base, r & 0xffffff) < 0) {
			*tmp = NULL;
			return -ENOMEM;
		}
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int cli_output_open(struct cli_output *o, const char *cmd, const char *opt, const char *path,
		    const char *const *inputs, size_t ninputs, const char *note)
{
	struct stat out, in;
	int fd;

	memset(o, 0, sizeof(*o));
	o->name = path && strcmp(path, "-") ? path : "stdout";
	if (!path || !strcmp(path, "-")) {
		o->f = stdout;
		return 0;
	}
	if (!*path) {
		cli_error("%s: %s needs a file name", cmd, opt);
		return 2;
	}
	/* The option took the next word, as perf's parser does: when that
	 * is an option ("--pprof --no-fetch"), the user forgot the file. */
	if (path[0] == '-') {
		cli_error("%s: %s %s: an option where the output file goes (a file of that name: "
			  "./%s)",
			  cmd, opt, path, path);
		return 2;
	}
	if (stat(path, &out) == 0) {
		for (size_t i = 0; i < ninputs; i++) {
			bool is_stdin = inputs[i] && !strcmp(inputs[i], "-");

			/* "-": what stdin reads, "flamegraph - -o F <F" */
			if (!inputs[i] ||
			    (is_stdin ? fstat(STDIN_FILENO, &in) : stat(inputs[i], &in)) ||
			    !S_ISREG(in.st_mode) || in.st_dev != out.st_dev ||
			    in.st_ino != out.st_ino)
				continue;
			if (is_stdin)
				cli_error(
				    "%s: %s %s: that is the file standard input reads: refusing "
				    "to overwrite it",
				    cmd, opt, path);
			else if (!strcmp(inputs[i], path))
				cli_error(
				    "%s: %s %s: that is the input: refusing to overwrite it%s%s",
				    cmd, opt, path, note ? " " : "", note ? note : "");
			else
				cli_error(
				    "%s: %s %s: that is the input %s (the same file): refusing "
				    "to overwrite it%s%s",
				    cmd, opt, path, inputs[i], note ? " " : "", note ? note : "");
			return 2;
		}
		if (!S_ISREG(out.st_mode)) {
			if (S_ISDIR(out.st_mode)) {
				cli_error("%s: %s %s: a directory", cmd, opt, path);
				return 1;
			}
			o->f = fopen(path, "w");
			if (!o->f) {
				cli_error("%s: %s", path, strerror(errno));
				return 1;
			}
			return 0;
		}
		/* Through a symlink: the file it names is the one replaced. */
		o->target = realpath(path, NULL);
		if (!o->target) {
			cli_error("%s: %s", path, strerror(errno));
			return 1;
		}
	} else if (!(o->target = strdup(path))) {
		cli_error("out of memory");
		return 1;
	}
	fd = open_tmp(o->target, &o->tmp);
	if (fd < 0) {
		cli_error("%s: cannot create a file in its directory: %s", path, strerror(-fd));
		free(o->target);
		o->target = NULL;
		return 1;
	}
	/* Replacing a file: as it was, but for what is written. */
	if (stat(o->target, &out) == 0)
		fchmod(fd, out.st_mode & 07777);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		cli_error("%s: %s", path, strerror(errno));
		close(fd);
		unlink(o->tmp);
		free(o->tmp);
		free(o->target);
		o->tmp = o->target = NULL;
		return 1;
	}
	return 0;
}

int cli_output_close(struct cli_output *o, bool ok)
{
	int err = 0;

	if (!o->f)
		return ok ? 0 : 1;
	if (o->f == stdout) {
		if (fflush(stdout) != 0 && ok) {
			cli_error("stdout: %s", strerror(errno));
			ok = false;
		}
		o->f = NULL;
		return ok ? 0 : 1;
	}
	if (fflush(o->f) != 0 || ferror(o->f) || (o->tmp && fsync(fileno(o->f)) != 0))
		err = errno ? errno : EIO;
	if (fclose(o->f) != 0 && !err)
		err = errno;
	o->f = NULL;
	/* SIGINT or SIGTERM came: the command is stopping, the old file stays. */
	if (cli_interrupted)
		ok = false;
	if (ok && err)
		cli_error("%s: %s", o->name, strerror(err));
	if (ok && !err && o->tmp && rename(o->tmp, o->target) != 0) {
		err = errno;
		cli_error("%s: %s", o->name, strerror(err));
	}
	if (o->tmp && (!ok || err))
		unlink(o->tmp);
	free(o->tmp);
	free(o->target);
	o->tmp = o->target = NULL;
	return ok && !err ? 0 : 1;
}
