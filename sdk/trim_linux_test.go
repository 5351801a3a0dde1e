package sdk

import (
	"fmt"
	"slices"
	"testing"
)

const smapsSample = `00400000-00a00000 r-xp 00000000 fd:01 4242                               /plugin
Size:               6144 kB
Anonymous:             0 kB
00a00000-01000000 r--p 00600000 fd:01 4242                               /plugin
Size:               6144 kB
Anonymous:             0 kB
01000000-01100000 rw-p 00c00000 fd:01 4242                               /plugin
Anonymous:           100 kB
01100000-01200000 r--p 00d00000 fd:01 4242                               /plugin
Anonymous:             4 kB
01200000-01300000 r--p 00000000 fd:01 777                                /other
Anonymous:             0 kB
c000000000-c000400000 rw-p 00000000 00:00 0
Anonymous:          4096 kB
7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
Anonymous:             0 kB
`

func TestParseSmaps(t *testing.T) {
	t.Parallel()
	got := parseSmaps([]byte(smapsSample), 4242)
	want := []mapping{{0x400000, 0xa00000}, {0xa00000, 0x1000000}}
	if !slices.Equal(got, want) {
		t.Errorf("parseSmaps = %x, want %x (writable, copy-on-written and foreign mappings must be kept)", got, want)
	}
}

func TestTrimMemoryKeepsProcessWorking(t *testing.T) {
	t.Parallel()
	trimMemory()
	// Still running code and reading data that came from the executable.
	if !validToolName("still_alive") || fmt.Sprint(42) != "42" {
		t.Fatal("regexp from rodata broken after trim")
	}
}

func FuzzParseSmaps(f *testing.F) {
	f.Add([]byte(smapsSample), uint64(4242))
	f.Add([]byte("x-y r--p 0 0 1\n"), uint64(1))
	f.Fuzz(func(t *testing.T, b []byte, ino uint64) {
		for _, m := range parseSmaps(b, ino) {
			if m.end <= m.start {
				t.Fatalf("empty or inverted mapping %x", m)
			}
		}
	})
}
