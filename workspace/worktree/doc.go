// Package worktree is the only code that writes, restores or deletes a
// user's file. Every verb that changes the worktree (a tool's write, a
// review decision, discarding a command's changes, an undo, a rewind and
// its redo) hands a [Change] to a [Writer]; none opens a user's file for
// writing itself.
//
// A write keeps these rules, whoever asks for it:
//
//   - It stays beneath the folder and follows no symbolic link: the
//     parent directory is opened from the folder with openat2(2)
//     RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS on Linux, else (older kernels,
//     a seccomp filter, darwin) one component at a time with O_NOFOLLOW,
//     and every later step (read, temporary file, rename, unlink) is
//     relative to that directory's descriptor. A symbolic link where a
//     directory or the file was expected is refused with its path
//     ([ErrSymlink]); the folder itself may be reached through one.
//   - It refuses protected names ([Refused]): loom's and the editors'
//     configuration (config.CheckProtected) and anything in a .git
//     directory, in any letter case.
//   - It compares the file with the content the caller expects just
//     before it renames: the new text goes to a temporary file beside the
//     target, which is then exchanged with the target atomically
//     (renameat2 RENAME_EXCHANGE, renameatx_np RENAME_SWAP on darwin) and
//     the replaced content checked; a file that differs is swapped back
//     and left alone, and the error ([ErrChanged]) names it. Creating
//     uses RENAME_NOREPLACE/RENAME_EXCL, so a file that appeared
//     meanwhile is never overwritten. Where the file system cannot
//     exchange, the comparison is repeated right before the rename.
//   - It keeps the file's mode (a new file gets the mode asked for) and
//     writes the bytes it is given exactly: line endings and a BOM are
//     the caller's text's (package tools computes an edit's text with
//     them; a restore puts back an earlier version byte for byte).
//   - It tells its Record function about each write just before the
//     rename, so that the watcher's echo of loom's own write is not
//     reported as a change on disk.
package worktree
