// Package keys keeps the provider API keys out of reach of every process
// panto starts.
//
// An extension's environment is scrubbed of the keys, but that is not
// enough: bash, started by the tools extension, runs as the same user as
// panto and can read /proc/<panto's pid>/environ — the environment panto
// was started with, whatever panto did to its own copy since — and
// /proc/<pid>/mem. So, first thing in main, Protect
//
//   - makes the process undumpable (Linux: prctl PR_SET_DUMPABLE 0): its
//     /proc entries then belong to root, and no process of the same user
//     can read its environ, cmdline, mem or fds, or ptrace it;
//   - when a key is in the environment, takes it out of the environment
//     block the kernel shows in /proc/<pid>/environ, for root too: on
//     Linux by overwriting the key's record in that memory (through
//     /proc/self/mem: Go copied the environment at start and never reads
//     the block again); elsewhere, or where that fails, by re-executing
//     panto with the keys out of the environment and handed over a pipe
//     instead, read and closed before anything is started.
//
// The keys live on in panto's memory only, where Getenv finds them and
// Environ adds them back for the code that decides, per extension,
// whether it may have them (config's extension_api_keys).
//
// What this cannot do: a key exported in the user's shell is in that
// shell's own /proc/<pid>/environ, out of panto's reach (an OS sandbox
// for the tools is the answer to that); and root can read any process's
// memory.
package keys

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/panto-dev/panto/rules"
)

// Names are the environment variables that hold provider credentials:
// rules.ProviderKeys, the list the SDK's test harness uses too.
var Names = rules.ProviderKeys()

// IsKey reports whether name is one of Names.
func IsKey(name string) bool { return rules.IsProviderKey(name) }

// fdEnv names the pipe a re-executed panto reads its keys from.
const fdEnv = "PANTO_KEYS_FD"

// maxPayload bounds what goes through the pipe: far more than any key,
// far less than a pipe's buffer, so writing it never blocks.
const maxPayload = 32 << 10

// Keys are the provider keys panto holds in memory.
type Keys struct {
	m map[string]string
}

// Lookup returns the key in the variable name.
func (k *Keys) Lookup(name string) (string, bool) {
	if k == nil {
		return "", false
	}
	v, ok := k.m[name]
	return v, ok
}

// Getenv is os.Getenv, with the keys panto holds.
func (k *Keys) Getenv(name string) string {
	if v, ok := k.Lookup(name); ok {
		return v
	}
	return os.Getenv(name)
}

// Environ is os.Environ with the keys panto holds added back, for the
// code that decides which extension may have them.
func (k *Keys) Environ() []string {
	env := os.Environ()
	if k == nil {
		return env
	}
	for _, name := range Names {
		if v, ok := k.m[name]; ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// take removes the keys from the process environment (Go's copy, which
// children inherit) and returns them.
func take() *Keys {
	k := &Keys{m: map[string]string{}}
	for _, name := range Names {
		if v, ok := os.LookupEnv(name); ok {
			k.m[name] = v
			os.Unsetenv(name)
		}
	}
	return k
}

// encode writes the keys as NAME=VALUE records, each ended by a NUL (a
// value cannot hold one: it came from the environment).
func encode(k *Keys) []byte {
	var b bytes.Buffer
	for _, name := range Names {
		if v, ok := k.m[name]; ok {
			b.WriteString(name + "=" + v + "\x00")
		}
	}
	return b.Bytes()
}

// decode reads what encode wrote; only Names are taken.
func decode(data []byte) (*Keys, error) {
	k := &Keys{m: map[string]string{}}
	for rec := range strings.SplitSeq(string(data), "\x00") {
		if rec == "" {
			continue
		}
		name, v, ok := strings.Cut(rec, "=")
		if !ok || !IsKey(name) {
			return nil, fmt.Errorf("read the keys handed over by %s: unexpected record %q", fdEnv, name)
		}
		k.m[name] = v
	}
	return k, nil
}

// withoutKeys is env less the keys and fdEnv.
func withoutKeys(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !IsKey(name) && name != fdEnv {
			out = append(out, kv)
		}
	}
	return out
}
