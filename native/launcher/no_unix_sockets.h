// Refusing new Unix sockets to the command and everything it starts. A Unix socket reaches a
// process outside the sandbox through the file system (connecting needs no write permission, so
// a read-only mount does not stop it), and many such processes act for the user: an SSH or GPG
// agent, the user's systemd or D-Bus (which start any command outside the sandbox), tmux,
// screen, an editor's server, X11. Masking every such path cannot be complete, so the launcher can
// make socket(AF_UNIX, …) fail instead, with a seccomp filter the command cannot remove.
#pragma once

namespace pinnedfs::launcher {

// Installs, for this process and all it executes, a filter that fails socket(AF_UNIX, …) with
// EPERM, io_uring_setup with ENOSYS (io_uring can open sockets without the socket system call),
// and every system call of another ABI than this binary's (a 32-bit or x32 call would go around
// the first rule) with ENOSYS. Sets no_new_privs, which an unprivileged filter needs. Answers 0 or
// the errno of the step that failed (ENOSYS on a system without seccomp filters, or an
// architecture this file has no filter for).
int refuse_unix_sockets();

}  // namespace pinnedfs::launcher
