package fsm

import "time"

// retryDelay computes the delay before retry number attempt (from 1) of
// request: RetryBase doubled per retry, capped at RetryMax, shortened by a
// deterministic jitter, and never below the server's retryAfter.
func retryDelay(cfg Config, attempt int, request uint64, retryAfter time.Duration) time.Duration {
	d := cfg.RetryBase
	for i := 1; i < attempt && d < cfg.RetryMax; i++ {
		d *= 2
	}
	if d > cfg.RetryMax {
		d = cfg.RetryMax
	}
	if cfg.Jitter > 0 {
		r := splitmix64(cfg.JitterSeed ^ (request<<8 | uint64(attempt)))
		frac := float64(r>>11) / float64(1<<53)
		d -= time.Duration(float64(d) * cfg.Jitter * frac)
	}
	if d < retryAfter {
		d = retryAfter
	}
	return d
}

// splitmix64 is a small, well-mixed hash used as a seeded random source.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
