// Command demo is the README's first command, `go run ./cmd/demo`: it
// builds loom-lsp, saying so while it compiles (the first build of a
// fresh clone compiles some 300 packages — minutes on a small machine),
// then runs `loom-lsp demo` with the arguments it was given. It uses the
// standard library only, so that it starts compiling loom-lsp, and
// telling you, within seconds.
package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// firstBuild is said once the build turns out to compile loom-lsp's own
// packages, not just reuse the build cache.
const firstBuild = "demo: compiling loom-lsp before it runs (a fresh clone's first build: about 3 minutes of CPU and up to 2.8 GB of memory, two thirds of it for openai-go; then it is cached)\n"

func main() {
	bin, err := build()
	if err != nil {
		os.Stderr.WriteString("demo: " + err.Error() + "\n")
		os.Exit(1)
	}
	args := append([]string{bin, "demo"}, os.Args[1:]...)
	err = syscall.Exec(bin, args, os.Environ())
	// Exec returns only on failure (or where it is not supported).
	cmd := exec.Command(bin, args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if runErr := cmd.Run(); runErr != nil {
		if ee, ok := runErr.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		os.Stderr.WriteString("demo: " + err.Error() + "; " + runErr.Error() + "\n")
		os.Exit(1)
	}
}

// build builds ./cmd/loom-lsp of the module the demo runs in into the
// user's cache directory, telling what it compiles, and returns the
// binary's path.
func build() (string, error) {
	root, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	dir := filepath.Dir(strings.TrimSpace(string(root)))
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	bin := filepath.Join(cache, "loom-lsp", "demo", "loom-lsp")
	cmd := exec.Command("go", "build", "-v", "-o", bin, "./cmd/loom-lsp")
	cmd.Dir = dir
	cmd.Stdout = os.Stderr
	out, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return "", err
	}
	tty := isTerminal(os.Stderr)
	said, n := false, 0
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "go: ") || strings.Contains(line, " ") {
			os.Stderr.WriteString(line + "\n") // downloads, errors
			continue
		}
		// go build -v names each package as it starts compiling it.
		n++
		if !said {
			os.Stderr.WriteString(firstBuild)
			said = true
		}
		progress := "demo: [" + strconv.Itoa(n) + "] " + line
		if line == "github.com/openai/openai-go/v3" {
			progress += " (the largest: most of the wait)"
		}
		if tty {
			os.Stderr.WriteString("\r\033[K" + progress)
		} else if n%25 == 1 || strings.HasPrefix(line, "github.com/openai/openai-go/v3") && !strings.Contains(line[len("github.com/openai/openai-go/v3"):], "/") {
			os.Stderr.WriteString(progress + "\n")
		}
	}
	err = cmd.Wait()
	if said {
		if tty {
			os.Stderr.WriteString("\r\033[K")
		}
		os.Stderr.WriteString("demo: compiled " + strconv.Itoa(n) + " package(s) and linked in " + time.Since(start).Round(time.Second).String() + "\n")
	}
	if err != nil {
		return "", err
	}
	return bin, nil
}

// isTerminal reports whether f is a character device (a terminal).
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
