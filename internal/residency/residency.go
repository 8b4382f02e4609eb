// Package residency gives back the memory a long-lived process holds only
// because it was started: the pages of its own executable the kernel
// mapped while the runtime and every package's initialisation ran. On
// Linux a large Go binary is nearly all mapped at start (the kernel maps
// whole large folios of the page cache), which shows as tens of MiB of
// resident memory in a process that then runs a small part of its code.
// ReleaseImage unmaps those read-only pages; the kernel maps back, from
// the page cache, whatever the process runs again.
package residency
