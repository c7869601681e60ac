package extension

import (
	"bytes"
	"os"
	"strconv"
)

// descends reports whether process pid was started, directly or not, by
// process ancestor (its parents, read from /proc/PID/stat, lead to it).
func descends(pid, ancestor int) bool {
	for range 64 {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			return false
		}
		f := bytes.Fields(data[i+1:])
		if len(f) < 2 {
			return false
		}
		ppid, err := strconv.Atoi(string(f[1]))
		if err != nil || ppid <= 1 {
			return false
		}
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}
