package keys

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// scrub overwrites, with NULs, the records of the keys in the process's
// environment block: the memory the kernel shows as /proc/self/environ
// (from env_start to env_end of /proc/self/stat), which Go copied at
// start and never reads again. It is cheaper than a re-execution and
// leaves the process as it was; it fails (and panto re-executes
// instead) where /proc/self/mem cannot be written.
func scrub() error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return fmt.Errorf("scrub the environment block: %w", err)
	}
	start, end, err := envRange(stat)
	if err != nil {
		return fmt.Errorf("scrub the environment block: %w", err)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("scrub the environment block: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return fmt.Errorf("scrub the environment block: read: %w", err)
	}
	off := 0
	for rec := range bytes.SplitSeq(block, []byte{0}) {
		name, _, ok := bytes.Cut(rec, []byte("="))
		if ok && IsKey(string(name)) {
			if _, err := mem.WriteAt(make([]byte, len(rec)), int64(start)+int64(off)); err != nil {
				return fmt.Errorf("scrub the environment block: write: %w", err)
			}
		}
		off += len(rec) + 1
	}
	// What any reader of /proc/PID/environ now sees.
	env, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("scrub the environment block: check: %w", err)
	}
	for rec := range bytes.SplitSeq(env, []byte{0}) {
		if name, _, ok := bytes.Cut(rec, []byte("=")); ok && IsKey(string(name)) {
			return errors.New("scrub the environment block: a key is still there")
		}
	}
	return nil
}

// envRange reads env_start and env_end, fields 50 and 51 of
// /proc/self/stat (proc(5)).
func envRange(stat []byte) (start, end uint64, err error) {
	s := string(stat)
	i := strings.LastIndexByte(s, ')') // the command name may hold anything
	if i < 0 {
		return 0, 0, errors.New("unexpected /proc/self/stat")
	}
	fields := strings.Fields(s[i+1:]) // from field 3, the state
	const envStart = 50 - 3
	if len(fields) <= envStart+1 {
		return 0, 0, errors.New("/proc/self/stat has no env_start (Linux before 3.5)")
	}
	if start, err = strconv.ParseUint(fields[envStart], 10, 64); err == nil {
		end, err = strconv.ParseUint(fields[envStart+1], 10, 64)
	}
	if err != nil || end < start || end-start > 64<<20 {
		return 0, 0, fmt.Errorf("unexpected env_start/env_end in /proc/self/stat: %q %q", fields[envStart], fields[envStart+1])
	}
	return start, end, nil
}
