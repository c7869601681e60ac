package main

import (
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// oTmpfile is O_TMPFILE: __O_TMPFILE (the same bit on every architecture
// Go runs Linux on) with O_DIRECTORY. The syscall package lacks it.
const oTmpfile = 0x400000 | syscall.O_DIRECTORY

// atSymlinkFollow is AT_SYMLINK_FOLLOW.
const atSymlinkFollow = 0x400

// openUnnamed creates an unnamed regular file in dir (O_TMPFILE): it has
// no name until linkUnnamed gives it one, and the system frees it when it
// is closed, the process ending by any signal included. It fails where
// the kernel or the file system has no O_TMPFILE.
func openUnnamed(dir string, perm fs.FileMode) (*os.File, error) {
	fd, err := syscall.Open(dir, oTmpfile|syscall.O_RDWR|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	// A kernel older than O_TMPFILE ignores the bit and opens dir itself
	// (O_RDWR then fails with EISDIR, but check what was opened anyway).
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Nlink != 0 {
		syscall.Close(fd)
		return nil, errNoTmpfile
	}
	return os.NewFile(uintptr(fd), dir+"/(unnamed)"), nil
}

// linkUnnamed gives the unnamed file f the name name, which must not
// exist. linkat(2) of /proc/self/fd/N with AT_SYMLINK_FOLLOW needs no
// privilege (AT_EMPTY_PATH would need CAP_DAC_READ_SEARCH).
func linkUnnamed(f *os.File, name string) error {
	from, err := syscall.BytePtrFromString("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil {
		return err
	}
	to, err := syscall.BytePtrFromString(name)
	if err != nil {
		return err
	}
	fdcwd := -100 // AT_FDCWD
	atFDCWDArg := uintptr(fdcwd)
	_, _, errno := syscall.Syscall6(syscall.SYS_LINKAT, atFDCWDArg, uintptr(unsafe.Pointer(from)),
		atFDCWDArg, uintptr(unsafe.Pointer(to)), atSymlinkFollow, 0)
	if errno != 0 {
		return fmt.Errorf("linkat %s: %w", name, errno) // EEXIST is fs.ErrExist
	}
	return nil
}
