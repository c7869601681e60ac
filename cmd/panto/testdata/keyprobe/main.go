// Command keyprobe is what a hostile command run by the model's bash
// would try, to find a provider key: every process's
// /proc/PID/environ, cmdline and memory. It takes the key reversed (so
// that neither its command line nor its parents' hold the key itself)
// and prints, as JSON, what it could read and where it found the key.
// For the e2e tests of internal/keys only; Linux only.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Proc is what the probe saw of one process.
type Proc struct {
	PID  int    `json:"pid"`
	Comm string `json:"comm"`
	// Each route: "key" (the key was there), "clean" (readable, no
	// key), or "unreadable: …".
	Environ string `json:"environ"`
	Cmdline string `json:"cmdline"`
	Mem     string `json:"mem"`
}

type report struct {
	// Ancestors are the probe's parents up to panto, nearest first.
	Ancestors []Proc `json:"ancestors"`
	// Found lists every process and route where the key was found.
	Found []string `json:"found"`
	// Self is the probe's own environment: what bash handed it.
	SelfEnviron string `json:"self_environ"`
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: keyprobe REVERSED-KEY")
		os.Exit(2)
	}
	key := []byte(reverse(os.Args[1]))
	self := os.Getpid()
	var r report
	seen := map[int]bool{}
	for pid := os.Getppid(); pid > 1 && !seen[pid]; pid = ppid(pid) {
		seen[pid] = true
		p := probe(pid, key)
		r.Ancestors = append(r.Ancestors, p)
		if p.Comm == "panto" {
			break
		}
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		p := probe(pid, key)
		for route, v := range map[string]string{"environ": p.Environ, "cmdline": p.Cmdline, "mem": p.Mem} {
			if v == "key" {
				r.Found = append(r.Found, fmt.Sprintf("%d(%s)/%s", pid, p.Comm, route))
			}
		}
	}
	slices.Sort(r.Found)
	if bytes.Contains([]byte(strings.Join(os.Environ(), "\n")), key) {
		r.SelfEnviron = "key"
	} else {
		r.SelfEnviron = "clean"
	}
	json.NewEncoder(os.Stdout).Encode(r)
}

func probe(pid int, key []byte) Proc {
	dir := "/proc/" + strconv.Itoa(pid)
	comm, _ := os.ReadFile(dir + "/comm")
	p := Proc{PID: pid, Comm: strings.TrimSpace(string(comm))}
	p.Environ = search(dir+"/environ", key)
	p.Cmdline = search(dir+"/cmdline", key)
	p.Mem = searchMem(dir, key)
	return p
}

func search(path string, key []byte) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	if bytes.Contains(data, key) {
		return "key"
	}
	return "clean"
}

// searchMem reads every readable mapping of the process through
// /proc/PID/mem.
func searchMem(dir string, key []byte) string {
	maps, err := os.Open(dir + "/maps")
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer maps.Close()
	mem, err := os.Open(dir + "/mem")
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer mem.Close()
	read := 0
	sc := bufio.NewScanner(maps)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 || f[1][0] != 'r' || strings.HasSuffix(sc.Text(), "[vvar]") || strings.HasSuffix(sc.Text(), "[vsyscall]") {
			continue
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		const chunk = 1 << 20
		buf := make([]byte, chunk+len(key))
		for off := start; off < end; off += chunk {
			n := min(uint64(len(buf)), end-off)
			got, err := mem.ReadAt(buf[:n], int64(off))
			if got > 0 {
				read += got
				if bytes.Contains(buf[:got], key) {
					return "key"
				}
			}
			if err != nil {
				break
			}
		}
	}
	if read == 0 {
		return "unreadable: no mapping could be read"
	}
	return "clean"
}

func ppid(pid int) int {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "PPid:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}
