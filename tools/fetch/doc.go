// Package fetch is the agent's fetch tool: a URL in, the page's readable
// text out, under the same network policy as the agent's commands.
//
// What it guards, in the order a fetch meets it:
//
//   - the policy: with the commands' network off fetch is off; with an
//     allow-list ("host:port" entries) only those hosts are reached; a
//     deny list refuses hosts and their subdomains (Settings);
//   - every connection, the first and each redirect hop's, resolves the
//     host once and refuses loopback, private, link-local, shared,
//     reserved and metadata addresses unless the user named that host
//     (Settings.Private, or the network allow-list); the checked address
//     is the one dialled, so there is no DNS-rebinding window (guard.go);
//   - redirects are followed only within the same host, a few hops; one
//     to another host is reported to the model, which may fetch it (and
//     be asked for it) in a call of its own;
//   - no proxy from the environment, no cookies, no credentials, no
//     API keys: the request carries only a User-Agent and Accept headers,
//     and conditional headers from the cache;
//   - a wall-clock timeout and a byte cap on what is downloaded and on the
//     text returned; the result says the final URL, the status, the
//     type and whether it was cut;
//   - the text is handed to the model wrapped and labelled as untrusted
//     web content (Wrap): it may carry instructions the model must not
//     follow. No second model call summarises it.
//
// HTML becomes Markdown (github.com/JohannesKaufmann/html-to-markdown),
// PDF becomes text (github.com/ledongthuc/pdf); text types pass as they
// are; other binaries are refused with their type and size (convert.go).
// A disk cache keyed by URL revalidates with ETag and Last-Modified
// (cache.go). Search (search.go) queries an endpoint the user runs or
// pays for, and returns titles, URLs and snippets only.
//
// Whether a call may run at all (tools.fetch = allow | ask | deny, and
// the "always allow this host" rules) is decided by the caller before
// Run, like a command's approval; Host names what a call would reach.
package fetch
