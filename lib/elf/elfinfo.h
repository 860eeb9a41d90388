/* SPDX-License-Identifier: MIT */
/* The elf layer's offer to the layers above: opening ELF files, build IDs,
 * ELF facts, a candidate file opened and verified, an opened debuginfo,
 * load maps.  Nothing here is exported; the public API is include/dsostore.h. */
#ifndef DS_ELFINFO_H
#define DS_ELFINFO_H

#include "dsostore.h"
#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

/* ---- buildid (buildid.c) */

int ds__elf_build_id(struct Elf *elf, struct ds_build_id *out);

/* ---- elf (elf.c) */

struct ds_elf_info {
	bool has_debug_info; /* .debug_info or .zdebug_info with contents */
	bool has_code; /* an executable PT_LOAD backed by file bytes */
	bool has_debuglink;
	char debuglink[256]; /* the .gnu_debuglink file name */
	uint32_t debuglink_crc;
};

/* Open path read-only for ELF inspection (O_CLOEXEC, regular files only). */
int ds__elf_open_fd(const char *path);
/* Facts about an opened ELF. */
int ds__elf_inspect(struct Elf *elf, struct ds_elf_info *info);
/* A compressed section's header, as readers take it: gABI SHF_COMPRESSED
 * (the header libelf reads; type ELFCOMPRESS_*) or GNU .zdebug_ ("ZLIB",
 * a big-endian size).  src: the compressed bytes (elf_rawdata(), in the
 * map of a mapped file); packed: the section's bytes as the inflate
 * ratio counts them.  false: not compressed, or no header readable. */
struct ds_elf_packed {
	unsigned int type;
	uint64_t size, packed;
	const unsigned char *src;
	size_t src_size;
	const char *how; /* "zlib", "zstd", "zlib-gnu", "unknown" */
};
/* .gnu_debugaltlink: the dwz alt file's name (NUL-terminated, in the
 * section) and build ID.  false: none, or malformed. */
bool ds__elf_altlink(struct Elf *elf, const char **name, struct ds_build_id *bid);
/* The same for the file at path, the name copied into name (len bytes).
 * 0; -ENODATA: none; -ENAMETOOLONG; an open's negative errno. */
int ds__elf_file_altlink(const char *path, char *name, size_t len, struct ds_build_id *bid);
struct Elf_Scn;
bool ds__elf_packed(struct Elf *elf, struct Elf_Scn *scn, const char *name,
		    struct ds_elf_packed *out);
/* A compressed section of packed bytes may claim that many decompressed
 * (the ratio rule of ds__elf_check_compressed()). */
bool ds__elf_inflate_plausible(uint64_t packed, uint64_t claimed);
/* 0 when every compressed DWARF section of elf (SHF_COMPRESSED, or
 * GNU .zdebug_*) claims a size plausible for its compressed bytes; else
 * -EFBIG, with msg naming the first that does not.  Headers only: nothing
 * is decompressed.  Call before dwarf_begin_elf(), which decompresses
 * them all. */
int ds__elf_check_compressed(struct Elf *elf, char *msg, size_t msglen);
/* CRC32 of a whole file the way .gnu_debuglink wants it (zlib's CRC-32). */
int ds__file_crc32(int fd, uint32_t *crc);
/* The end of what an ELF's headers say it holds: its header, program and
 * section header tables, every section with file bytes and (segments)
 * every segment's file bytes, reading at most avail bytes of fd.  0 and
 * *extent; -EAGAIN: *extent bytes are needed to tell; -ENOEXEC with *why:
 * not an ELF, or one that cannot lie in any file. */
int ds__elf_extent(int fd, uint64_t avail, bool segments, uint64_t *extent, const char **why);
/* Bytes past its extent that a whole ELF file may carry (alignment). */
#define DS_ELF_SLACK (64u << 10)
/* A file of size bytes is one whole ELF: its extent lies inside it, and it
 * is not larger than that extent plus DS_ELF_SLACK.  -ENOEXEC and *why. */
int ds__elf_check_whole(int fd, uint64_t size, bool segments, const char **why);
/* What a download or a cache hit of bid must be: for a debuginfo or an
 * executable, an ELF file carrying bid, whole.  NULL if fd (size bytes)
 * is, else why not (in buf). */
const char *ds__elf_artifact_bad(int fd, uint64_t size, const struct ds_build_id *bid,
				 enum ds_artifact what, char *buf, size_t len);
/* The same of the size bytes at p (a download held in memory). */
const char *ds__elf_artifact_bad_mem(const void *p, uint64_t size, const struct ds_build_id *bid,
				     enum ds_artifact what, char *buf, size_t len);
/* ds_elf_section_range(), telling a section that is there without file
 * bytes (SHT_NOBITS: -ENODATA) from one that is not there (-ENOENT), as
 * elfutils' client does when it cuts a section from a cached file. */
int ds__elf_section_find(int fd, const char *name, uint64_t *offset, uint64_t *size);
/* libelf's version handshake, done once per process. */
void ds__elf_init(void);

/* ---- a candidate file (candidate.c) */

/* A found candidate, opened and verified. */
struct ds_found {
	char *path;
	int fd;
	struct Elf *elf;
	enum ds_source source;
	uint64_t size;
};

/* Open one known path and check it is the wanted artifact of bid. */
int ds__open_candidate(const char *path, const struct ds_build_id *bid, enum ds_artifact what,
		       struct ds_found *found, const char **reason);
void ds__found_release(struct ds_found *found);

/* Open path as a split DWARF file (a .dwo or .dwp: an ELF file with no
 * build ID to check) into *found; st (may be NULL) gets its fstat().
 * -ENOENT: none; -ENOEXEC: not a regular ELF file; other open errors. */
int ds__open_split(const char *path, struct ds_found *found, struct stat *st);


/* ---- debuginfo (debuginfo.c) */

/* An opened debuginfo.  The struct is embedded in its DSO and lives as long
 * as the DSO; only the open state (fd, elf) comes and goes, under the
 * store's di_lock.  path is atomic because a re-search after eviction may
 * find the file elsewhere while readers still hold the old string, which
 * stays allocated (retired) until the DSO goes. */
struct ds_debuginfo {
	_Atomic(char *) path;
	const struct ds_build_id *bid; /* the DSO's, set once */
	enum ds_source source;
	int fd;
	struct Elf *elf;
	uint64_t size;
	atomic_bool recent; /* CLOCK reference bit, set by the ready path */
	struct ds_retired *retired;
};

struct ds_retired {
	struct ds_retired *next;
	char *path;
};

void ds__debuginfo_init(struct ds_debuginfo *di, const struct ds_build_id *bid);
/* Take over what locate found; the found struct is emptied. */
void ds__debuginfo_adopt(struct ds_debuginfo *di, struct ds_found *found);
bool ds__debuginfo_is_open(const struct ds_debuginfo *di);
/* Close the file; returns the bytes it held.  Path stays. */
uint64_t ds__debuginfo_close(struct ds_debuginfo *di);
/* Open the remembered path again, checking it is still the same build ID. */
int ds__debuginfo_reopen(struct ds_debuginfo *di);
void ds__debuginfo_release(struct ds_debuginfo *di);

/* ---- loadmap (loadmap.c): an ELF file's loadable segments */

/* The PT_LOAD headers of an executable: what turns a file offset (perf's,
 * /proc/PID/maps') into a virtual address.  A debug file's own are no
 * use for it (objcopy --only-keep-debug and eu-strip -f leave p_filesz 0
 * and rewrite p_offset), so a DSO known by its debuginfo alone keeps
 * these of its executable (store.c). */
struct ds__loadmap {
	size_t n;
	struct ds__loadseg {
		uint64_t offset, filesz, vaddr, memsz;
		uint32_t flags; /* PF_* */
	} seg[];
};

/* The PT_LOAD headers of elf (NULL-safe: -ENOEXEC); -ENODATA: none. */
int ds__loadmap_read(struct Elf *elf, struct ds__loadmap **out);
/* offset as a virtual address: 0, or -ERANGE outside every segment's
 * file bytes. */
int ds__loadmap_vaddr(const struct ds__loadmap *lm, uint64_t offset, uint64_t *vaddr);
/* A debug file whose segments say nothing of the file offsets: its code
 * segment (PF_X) has no file bytes. */
bool ds__loadmap_stripped(struct Elf *elf);

#endif
