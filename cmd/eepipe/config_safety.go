package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/eepipe/eepipe/pipeline"
)

// configFileWarnings are the warnings about who else can change the
// configuration file: whoever can write it can point base_url or
// lookup.url at their own server and collect the API key, the request
// signatures and the lookup's Basic-auth password, whatever secret
// mechanism the file uses. namesSecretFile adds the read permission to the
// concerns (the file then tells where secrets lie).
func configFileWarnings(path string, namesSecretFile bool) []string {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	var out []string
	perm := st.Mode().Perm()
	if perm&0o022 != 0 {
		out = append(out, fmt.Sprintf("the configuration file %s is %s (mode %04o): whoever can write it can point base_url or lookup.url at their own server "+
			"and collect the API key and the lookup password; run chmod go-w %s", path, describeAccess(perm&0o022), perm, path))
	}
	if namesSecretFile && perm&0o044 != 0 {
		out = append(out, fmt.Sprintf("the configuration file %s is %s (mode %04o) and names secret files; run chmod 600 %s",
			path, describeAccess(perm&0o044), perm, path))
	}
	if uid, ok := fileOwner(st); ok && uid != os.Geteuid() && uid != 0 {
		out = append(out, fmt.Sprintf("the configuration file %s belongs to another user (uid %d), who can change where eepipe sends the keys and passwords; "+
			"use a configuration file of your own", path, uid))
	}
	dir := filepath.Dir(path)
	if dst, err := os.Stat(dir); err == nil && dst.Mode().Perm()&0o002 != 0 && dst.Mode()&os.ModeSticky == 0 {
		out = append(out, fmt.Sprintf("the configuration file %s is in a folder anyone can write (%s, mode %04o): anyone can replace the file; "+
			"keep it in a folder of your own", path, dir, dst.Mode().Perm()))
	}
	return out
}

// describeAccess says in words who may do what by the group and other
// bits of perm: "readable by group", "writable by others" (a write-only
// mode is not called readable), "readable and writable by group and
// others".
func describeAccess(perm os.FileMode) string {
	who := func(r, w bool) string {
		switch {
		case r && w:
			return "readable and writable"
		case r:
			return "readable"
		case w:
			return "writable"
		}
		return ""
	}
	g := who(perm&0o040 != 0, perm&0o020 != 0)
	o := who(perm&0o004 != 0, perm&0o002 != 0)
	switch {
	case g != "" && g == o:
		return g + " by group and others"
	case g != "" && o != "":
		return g + " by group and " + o + " by others"
	case g != "":
		return g + " by group"
	case o != "":
		return o + " by others"
	}
	return "private"
}

// clearTextWarnings warns of http:// service and lookup URLs to hosts other
// than this machine: the API key, the request signatures and the lookup's
// Basic-auth password would travel unencrypted.
func clearTextWarnings(cfg *Config) []string {
	var out []string
	for _, u := range []struct{ what, url, carries string }{
		{"the service URL", cfg.BaseURL, "the API key and every plan"},
		{"the company lookup URL", cfg.Lookup.URL, "the lookup's username and password (Basic auth)"},
	} {
		if u.url == "" || !clearTextRemote(u.url) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s is not encrypted (http://) and not on this machine: %s would travel in clear text; use https://",
			u.what, u.url, u.carries))
	}
	return out
}

// clearTextRemote reports whether raw is an http:// URL to a host that is
// not a loopback address.
func clearTextRemote(raw string) bool {
	p, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !strings.EqualFold(p.Scheme, "http") {
		return false
	}
	return !loopbackHost(p.Hostname())
}

// loopbackHost reports whether host (a URL's host name, without its port)
// is this machine: localhost or a loopback address.
func loopbackHost(host string) bool {
	host = strings.ToLower(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// maskKey shows enough of an API key (not a secret, but not for logs in
// full) to tell two keys apart: "mpk_…x_acme".
func maskKey(k string) string {
	if len(k) <= 12 {
		return k
	}
	return k[:4] + "…" + k[len(k)-6:]
}

// maxConfigFile bounds a configuration file or a secret file: both are a
// few lines.
const maxConfigFile = 1 << 20

// readSmallRegularFile reads a configuration or secret file: only a
// regular file (a named pipe would block the run before it started, a
// device never end), of at most maxConfigFile bytes.
func readSmallRegularFile(path string) ([]byte, error) {
	// Stat before opening: opening a named pipe blocks until a writer
	// comes.
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, pipeline.FileKind(st.Mode()))
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfigFile {
		return nil, fmt.Errorf("%s is larger than %d KiB, more than a configuration or secret file holds", path, maxConfigFile>>10)
	}
	return b, nil
}
