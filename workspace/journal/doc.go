// Package journal is the conversation journal's codec and listing: the
// JSONL format of a folder's conversation (a header, then one record a
// line: a machine configuration, an fsm event, an auto-commit's start and
// end, a revert's planned restores and their end), the File that appends
// records (codec.go, file.go: text deltas coalesced, every record one
// write(2), fsynced at turn boundaries), the reading and replaying of a
// journal through a fresh fsm.Machine (read.go, decode.go), the records
// of the change verbs (records.go), the per-journal lock against other
// processes (lock.go) and what the conversation lists read (list.go:
// header, meta file, title).
//
// Secrets: a File masks each line with the secret.Redactor it is given,
// and seals the keys in what the model wrote (Redactor.Seal); reading
// with ReadUnsealed/ReplayUnsealed gives them back (Redactor.Unseal).
// The redactor itself belongs to package secret.
//
// The package knows nothing of the workspace that journals: package
// workspace imports it, never the other way.
package journal
