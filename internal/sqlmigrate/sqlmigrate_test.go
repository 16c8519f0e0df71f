package sqlmigrate

import (
	"strings"
	"testing"
	"testing/fstest"
)

func TestLoad(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	got := Load(fstest.MapFS{
		"m/0002_more.sql": file("ALTER"),
		"m/0001_init.sql": file("CREATE"),
	}, "m")
	want := []Step{{1, "0001_init.sql", "CREATE"}, {2, "0002_more.sql", "ALTER"}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Load = %+v; want %+v in version order", got, want)
	}

	tests := []struct {
		fs    fstest.MapFS
		panic string
		why   string
	}{
		{fstest.MapFS{"m/init.sql": file("")}, "without a version", "a name without a version"},
		{fstest.MapFS{"m/x_init.sql": file("")}, "without a version", "a version that is no number"},
		{fstest.MapFS{"m/0001_a.sql": file(""), "m/0003_c.sql": file("")}, "want 2", "a gap"},
		{fstest.MapFS{"m/0001_a.sql": file(""), "m/1_b.sql": file("")}, "want 2", "a repeated version"},
		{fstest.MapFS{"m/0002_b.sql": file("")}, "want 1", "not starting at 1"},
		{fstest.MapFS{"m": &fstest.MapFile{Mode: 0o755 | 1<<31}}, "no migration", "an empty directory"},
		{fstest.MapFS{}, "sqlmigrate:", "no directory"},
	}
	for _, tt := range tests {
		func() {
			defer func() {
				p, _ := recover().(string)
				if !strings.Contains(p, tt.panic) {
					t.Errorf("%s: Load panicked with %q; want it to mention %q", tt.why, p, tt.panic)
				}
			}()
			Load(tt.fs, "m")
		}()
	}
}
