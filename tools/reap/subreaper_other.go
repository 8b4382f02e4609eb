//go:build !linux

package reap

// BecomeSubreaper is not supported outside Linux.
func BecomeSubreaper() error { return errNotLinux }
