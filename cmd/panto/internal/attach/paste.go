package attach

import (
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// PastedPath returns the path a paste is, when it is one path and
// nothing else: as a terminal pastes a file dragged onto it or copied
// in a file manager — plain (/home/me/shot.png), quoted ('…' or "…"),
// a file:// URL (percent-escapes decoded), or with its spaces and other
// shell characters escaped by backslashes (/home/me/my\ shot.png). A
// paste of more than one line, or of nothing, is not a path.
func PastedPath(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "\n\r\x00") {
		return "", false
	}
	if len(s) >= 2 && (s[0] == '\'' || s[0] == '"') && s[len(s)-1] == s[0] {
		s = s[1 : len(s)-1]
	} else if strings.HasPrefix(s, "file://") {
		u, err := url.Parse(s)
		if err != nil || (u.Host != "" && u.Host != "localhost") || u.Path == "" {
			return "", false
		}
		s = u.Path
		if runtime.GOOS == "windows" && len(s) > 2 && s[0] == '/' && s[2] == ':' {
			s = s[1:] // file:///C:/x.png
		}
	} else if runtime.GOOS != "windows" && strings.Contains(s, `\`) {
		s = unescape(s)
	}
	if s == "" || strings.ContainsAny(s, "\n\r\x00") {
		return "", false
	}
	return s, true
}

// unescape drops the backslash before each character a shell escapes.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Pasted returns the image a paste names, when the paste is the path of
// an existing image file (PastedPath; relative to dir). ok is false, and
// the paste is text, when it is not a path, or no file is there, or
// the file is not an image; err is set, with ok, when it is an image
// panto refuses (too big).
func Pasted(s, dir string) (im Image, ok bool, err error) {
	p, isPath := PastedPath(s)
	if !isPath {
		return Image{}, false, nil
	}
	full := resolve(dir, p)
	st, err := os.Stat(full)
	if err != nil || !st.Mode().IsRegular() || !looksLikeImage(full) {
		return Image{}, false, nil
	}
	im, err = File(dir, full, filepath.Base(p))
	return im, true, err
}
