/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include "fuzzfile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int fuzz_private_dir(const char *name, char *dir, size_t len)
{
	const char *tmp = getenv("TMPDIR");

	if ((size_t)snprintf(dir, len, "%s/fuzz_%s.XXXXXX", tmp && *tmp ? tmp : "/tmp", name) >=
		    len ||
	    !mkdtemp(dir)) {
		dir[0] = 0;
		return -1;
	}
	return 0;
}

int fuzz_write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	size_t done = 0;

	if (fd < 0)
		return -1;
	while (done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return close(fd);
}
