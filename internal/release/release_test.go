package release_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// core is the module path of the repository's root module.
const core = "github.com/reactguard/reactguard"

// semver matches a release version a go.mod may require.
var semver = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$`)

// goMod is what the tests read from a go.mod file.
type goMod struct {
	dir      string            // the directory, relative to the repository root ("." for the root)
	module   string            // the module path
	requires map[string]string // module path → version
	replaces map[string]string // module path → replacement (path, or "path version")
}

// parseGoMod reads the module, require and replace directives of a go.mod,
// single-line and block forms.
func parseGoMod(dir string, b []byte) (goMod, error) {
	m := goMod{dir: dir, requires: map[string]string{}, replaces: map[string]string{}}
	block := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if block != "" {
			if f[0] == ")" {
				block = ""
				continue
			}
			f = append([]string{block}, f...)
		} else if len(f) == 2 && f[1] == "(" {
			block = f[0]
			continue
		}
		switch f[0] {
		case "module":
			if len(f) != 2 {
				return m, fmt.Errorf("%s/go.mod:%d: malformed module", dir, n)
			}
			m.module = strings.Trim(f[1], `"`)
		case "require":
			if len(f) != 3 {
				return m, fmt.Errorf("%s/go.mod:%d: malformed require", dir, n)
			}
			m.requires[f[1]] = f[2]
		case "replace":
			i := slices.Index(f, "=>")
			if i < 2 || i == len(f)-1 {
				return m, fmt.Errorf("%s/go.mod:%d: malformed replace", dir, n)
			}
			m.replaces[f[1]] = strings.Join(f[i+1:], " ")
		}
	}
	return m, sc.Err()
}

// repoRoot returns the repository root (this package is internal/release).
func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// modules returns every go.mod of the repository, the root's first.
func modules(t *testing.T, root string) []goMod {
	t.Helper()
	var out []goMod
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.Name() != "go.mod" || d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		m, err := parseGoMod(filepath.ToSlash(rel), b)
		if err != nil {
			return err
		}
		out = append(out, m)
		return nil
	})
	require.NoError(t, err)
	slices.SortFunc(out, func(a, b goMod) int { return strings.Compare(a.dir, b.dir) })
	require.NotEmpty(t, out)
	require.Equal(t, ".", out[0].dir, "the root go.mod")
	return out
}

// TestNestedModulesRequireAReleasedCore checks the layout RELEASING.md
// depends on: each nested module's path is the core's plus its directory
// (so that the tag <dir>/vX.Y.Z versions it), it requires the core at a
// released version — never v0.0.0, which no proxy can serve — and the same
// one as every other nested module, and its only replace points the core
// at the repository root, for local development (users of the module
// never see it).
func TestNestedModulesRequireAReleasedCore(t *testing.T) {
	root := repoRoot(t)
	mods := modules(t, root)
	require.Equal(t, core, mods[0].module, "the root module's path")
	require.Greater(t, len(mods), 1, "the repository has nested modules")
	releasing, err := os.ReadFile(filepath.Join(root, "RELEASING.md"))
	require.NoError(t, err, "RELEASING.md documents the release of the modules")

	versions := map[string][]string{}
	for _, m := range mods[1:] {
		t.Run(m.dir, func(t *testing.T) {
			assert.Equalf(t, core+"/"+m.dir, m.module, "%s/go.mod: module %s; want the core's path plus the directory, so that tags %s/vX.Y.Z version it", m.dir, m.module, m.dir)
			v, ok := m.requires[core]
			if !assert.Truef(t, ok, "%s/go.mod does not require %s", m.dir, core) {
				return
			}
			assert.NotEqualf(t, "v0.0.0", v, "%s/go.mod requires %s v0.0.0, which no module proxy can serve: require the released core version", m.dir, core)
			assert.Regexpf(t, semver, v, "%s/go.mod requires %s %s; want a release version vX.Y.Z", m.dir, core, v)
			versions[v] = append(versions[v], m.dir)

			rel, err := filepath.Rel(filepath.Join(root, m.dir), root)
			require.NoError(t, err)
			want := map[string]string{core: filepath.ToSlash(rel)}
			assert.Equalf(t, want, m.replaces, "%s/go.mod replaces %v; want only %s => %s (a replace of anything else would make this repository's tests use what users never get)", m.dir, m.replaces, core, want[core])
			assert.Truef(t, strings.Contains(string(releasing), "`"+m.dir+"/vX.Y.Z`"), "RELEASING.md does not name the tag `%s/vX.Y.Z` of %s", m.dir, m.module)
		})
	}
	assert.Lenf(t, versions, 1, "nested modules require different core versions: %v; release them against one", versions)
	for v := range versions {
		assert.Truef(t, strings.Contains(string(releasing), v), "RELEASING.md does not name the core version %s the nested modules require", v)
	}
}

// TestParseGoMod: the parser reads both forms of every directive the
// layout test relies on, and ignores comments.
func TestParseGoMod(t *testing.T) {
	m, err := parseGoMod("a", []byte(`module example.com/a // the module

go 1.26.0

require example.com/b v1.2.3
require (
	example.com/c v0.1.0 // indirect
	example.com/d v0.0.0-20250101000000-abcdefabcdef
)

replace example.com/b => ../b
replace (
	example.com/c v0.1.0 => example.com/c2 v0.2.0
)
`))
	require.NoError(t, err)
	assert.Equal(t, "example.com/a", m.module)
	assert.Equal(t, map[string]string{"example.com/b": "v1.2.3", "example.com/c": "v0.1.0", "example.com/d": "v0.0.0-20250101000000-abcdefabcdef"}, m.requires)
	assert.Equal(t, map[string]string{"example.com/b": "../b", "example.com/c": "example.com/c2 v0.2.0"}, m.replaces)
	for _, bad := range []string{"module", "require x", "replace x =>"} {
		_, err := parseGoMod("a", []byte(bad))
		assert.Errorf(t, err, "parseGoMod(%q) = nil error; want malformed", bad)
	}
}

// TestFetchableOutsideTheRepo publishes the working tree as the release
// RELEASING.md describes — the core at the version the nested modules
// require, each nested module at the same version under its directory's
// tag — in a file-based module proxy, and has a fresh user module outside
// the repository `go get` each nested module and load every package it
// imports. Dependencies come from the local module cache (used as a second
// proxy), so the test runs offline; a private module cache keeps the
// published test versions out of the real one.
func TestFetchableOutsideTheRepo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	root := repoRoot(t)
	mods := modules(t, root)
	version := mods[1].requires[core]
	require.Regexp(t, semver, version)

	cacheOut, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	modcache := strings.TrimSpace(string(cacheOut))
	for _, m := range mods[1:] {
		// The user modules resolve the adapters' dependencies from the
		// module cache only; fill it the ordinary way (a no-op when the
		// adapters' tests ran).
		cmd := exec.Command(goBin, "mod", "download")
		cmd.Dir = filepath.Join(root, filepath.FromSlash(m.dir))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Skipf("the dependencies of %s cannot be downloaded here: %v\n%s", m.dir, err, out)
		}
	}

	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	nested := make([]string, 0, len(mods)-1)
	for _, m := range mods[1:] {
		nested = append(nested, m.dir)
	}
	for _, m := range mods {
		publish(t, proxy, root, m, version, nested)
	}

	env := append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(proxy)+",file://"+filepath.ToSlash(filepath.Join(modcache, "cache", "download")),
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOFLAGS=-mod=mod -modcacherw",
		"GOSUMDB=off", "GONOSUMDB=", "GOPRIVATE=", "GONOPROXY=",
		"GOWORK=off", "GOTOOLCHAIN=local",
	)
	for _, m := range mods[1:] {
		t.Run(m.dir, func(t *testing.T) {
			user := filepath.Join(tmp, "user-"+strings.ReplaceAll(m.dir, "/", "-"))
			require.NoError(t, os.MkdirAll(user, 0o755))
			pkg := path.Base(m.dir)
			src := fmt.Sprintf("package main\n\nimport (\n\t_ %q\n\t_ %q\n)\n\nfunc main() {}\n", m.module, core+"/react")
			require.NoError(t, os.WriteFile(filepath.Join(user, "go.mod"), []byte("module example.com/user"+pkg+"\n\ngo 1.26.0\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(user, "main.go"), []byte(src), 0o644))
			run := func(args ...string) string {
				cmd := exec.Command(goBin, args...)
				cmd.Dir, cmd.Env = user, env
				out, err := cmd.CombinedOutput()
				require.NoErrorf(t, err, "go %s in a user module:\n%s", strings.Join(args, " "), out)
				return string(out)
			}
			run("get", m.module+"@"+version)
			got := run("list", "-m", core, m.module)
			assert.Equalf(t, core+" "+version+"\n"+m.module+" "+version+"\n", got, "the user module resolved %q", got)
			run("list", "-deps", "./...")
		})
	}
}

// publish writes module m of the working tree at root into the file proxy
// as version: its list, info, go.mod and zip, the zip holding the module's
// files without the nested modules' directories (as a module zip does).
func publish(t *testing.T, proxy, root string, m goMod, version string, nested []string) {
	t.Helper()
	dir := filepath.Join(proxy, filepath.FromSlash(m.module), "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(name string, b []byte) { require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o644)) }
	write("list", []byte(version+"\n"))
	write(version+".info", fmt.Appendf(nil, `{"Version":%q,"Time":"2026-01-01T00:00:00Z"}`, version))
	mod, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(m.dir), "go.mod"))
	require.NoError(t, err)
	write(version+".mod", mod)

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	base := filepath.Join(root, filepath.FromSlash(m.dir))
	err = filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == ".git" || (p != base && slices.ContainsFunc(nested, func(n string) bool { return n == rel && n != m.dir })) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		inMod, err := filepath.Rel(base, p)
		if err != nil {
			return err
		}
		w, err := zw.Create(m.module + "@" + version + "/" + filepath.ToSlash(inMod))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	write(version+".zip", buf.Bytes())
}
