//go:build unix

package keys

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Protect keeps the provider keys out of reach of the processes panto
// starts (see the package comment) and returns them. Call it first thing
// in main, before any goroutine of panto's own runs. When a key is in
// the environment it overwrites the key's record in the environment
// block (Linux); where that cannot be done it does not return but
// re-executes panto, whose Protect then returns the keys. An error says the keys could not be
// moved out of the environment; they are returned anyway, and panto
// works as before.
func Protect() (*Keys, error) { return protect(scrub) }

func protect(scrub func() error) (*Keys, error) {
	// Undumpable last: it makes /proc/self/mem root's, which scrub
	// writes through.
	defer undumpable()
	if v, ok := os.LookupEnv(fdEnv); ok {
		os.Unsetenv(fdEnv)
		return receive(v)
	}
	k := take()
	if len(k.m) == 0 {
		return k, nil
	}
	if scrub() == nil {
		return k, nil
	}
	return k, reexec(k)
}

// receive reads the keys from the pipe whose descriptor is v, and closes
// it.
func receive(v string) (*Keys, error) {
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return take(), fmt.Errorf("%s=%q: not a descriptor panto opened", fdEnv, v)
	}
	unix.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "keys")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPayload+1))
	if err != nil {
		return take(), fmt.Errorf("read the keys handed over by %s: %w", fdEnv, err)
	}
	if len(data) > maxPayload {
		return take(), fmt.Errorf("read the keys handed over by %s: more than %d bytes", fdEnv, maxPayload)
	}
	k, err := decode(data)
	if err != nil {
		return take(), err
	}
	// A key set again by whoever ran panto with the descriptor wins
	// nothing: the environment keeps no key either way.
	for name, v := range take().m {
		if _, ok := k.m[name]; !ok {
			k.m[name] = v
		}
	}
	return k, nil
}

// reexec runs panto again, with the keys in a pipe rather than the
// environment. It returns only on failure.
func reexec(k *Keys) error {
	payload := encode(k)
	if len(payload) > maxPayload {
		return fmt.Errorf("provider keys larger than %d bytes: left in the environment block", maxPayload)
	}
	exe, err := executable()
	if err != nil {
		return err
	}
	r, w, err := os.Pipe() // close-on-exec, both ends
	if err != nil {
		return fmt.Errorf("hand the keys over: pipe: %w", err)
	}
	_, err = w.Write(payload)
	w.Close()
	if err != nil {
		r.Close()
		return fmt.Errorf("hand the keys over: %w", err)
	}
	// A copy at 3 or above, so that a closed stdin, stdout or stderr
	// stays closed, and without close-on-exec, so the exec inherits it.
	fd, err := unix.FcntlInt(r.Fd(), unix.F_DUPFD, 3)
	r.Close()
	if err != nil {
		return fmt.Errorf("hand the keys over: %w", err)
	}
	env := append(withoutKeys(os.Environ()), fdEnv+"="+strconv.Itoa(fd))
	err = unix.Exec(exe, os.Args, env)
	unix.Close(fd)
	return fmt.Errorf("re-execute %s without the keys in its environment: %w", exe, err)
}

// executable is the binary to re-execute: the one running, by its path
// (so the process keeps its name), or where that file was replaced or
// removed since, /proc/self/exe.
func executable() (string, error) {
	exe, err := os.Executable()
	if err == nil && exe != "" {
		if _, err := os.Stat(exe); err == nil {
			return exe, nil
		}
	}
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	if err == nil {
		err = errors.New("unknown")
	}
	return "", fmt.Errorf("find panto's executable: %w", err)
}
