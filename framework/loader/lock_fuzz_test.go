package loader

import (
	"encoding/hex"
	"path/filepath"
	"testing"
)

// FuzzParseLock: a lock file from anywhere is parsed without panicking, and
// what it accepts is usable: absolute paths and 32-byte checksums.
func FuzzParseLock(f *testing.F) {
	sum := "ab" + "cd" + "ef" + "01" + "23" + "45" + "67" + "89"
	sum += sum + sum + sum
	f.Add([]byte(`{"format":1,"comment":"x","binaries":[{"path":"/p/tickemu-plugin-a","sha256":"` + sum + `","serves":["clockevent/a"]}]}`))
	f.Add([]byte(`{"format":1,"binaries":[]}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":1,"binaries":[{"path":"rel","sha256":"00"}]}`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseLock(data, "fuzz.lock")
		if err != nil {
			return
		}
		for _, b := range l.Binaries {
			raw, herr := hex.DecodeString(b.SHA256)
			if herr != nil || len(raw) != 32 || !filepath.IsAbs(b.Path) {
				t.Fatalf("accepted entry %+v", b)
			}
			if _, err := l.secure(b.Path); err != nil {
				t.Fatalf("secure(%q) of a listed path = %v", b.Path, err)
			}
		}
	})
}
