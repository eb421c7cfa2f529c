/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * user/elf/debuglink — where a binary's separate debug file is, found as
 * gdb finds it: by build id, DEBUG_DIR/.build-id/xx/yyyy.debug, else by
 * .gnu_debuglink (its file name, CRC-checked) beside the binary, in its
 * .debug/ subdirectory, and under DEBUG_DIR + the binary's directory.
 *
 * DEBUG_DIR is /usr/lib/debug (--debug-dir replaces it). A binary reached
 * through /proc/PID/root (a process in a container, whose files are not
 * the host's) has its debug files in its own file system first: the
 * container's /usr/lib/debug is searched before the host's DEBUG_DIR, and
 * a file found there is accepted only if it resolves inside that root (a
 * symbolic link planted in the container cannot make cabbpf read a host
 * file as the container's debug file).
 *
 * Threads: debuglink__set_dir from the main thread before any load; the
 * rest from any thread.
 */
#ifndef USER_ELF_DEBUGLINK_H
#define USER_ELF_DEBUGLINK_H

#include <stdbool.h>
#include <stddef.h>
#include <libelf.h>

/* DEBUG_DIR instead of /usr/lib/debug (--debug-dir). */
void debuglink__set_dir(const char *dir);

/*
 * The GNU build id of elf (its NT_GNU_BUILD_ID note) as lowercase hex
 * into hex (size len, at least 129 for the longest id). Returns true when
 * the binary has one.
 */
bool debuglink__build_id(Elf *elf, char *hex, size_t len);

/*
 * The separate debug file of the binary at path (elf open on it), in the
 * order above. Writes its path into out (size len). Returns true when one
 * exists; false otherwise (out is then undefined).
 */
bool debuglink__find(Elf *elf, const char *path, char *out, size_t len);

/*
 * The root of the file system path lives in when it is reached through
 * /proc/PID/root/... or /proc/PID/exe: "/proc/PID/root" into root (size
 * len), and returns the length of the prefix of path that names it (0
 * for an ordinary path: then root is ""). Any thread.
 */
size_t debuglink__proc_root(const char *path, char *root, size_t len);

#endif /* USER_ELF_DEBUGLINK_H */
