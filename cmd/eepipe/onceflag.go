package main

import (
	"fmt"

	"github.com/spf13/pflag"
)

// onceString is a string flag that may be given once: a second value is a
// usage error instead of silently replacing the first (a user who gives
// --report twice would otherwise get only the last file, without a word).
type onceString struct {
	p   *string
	set bool
}

// onceStringVar defines a string flag on fs that refuses a second value.
func onceStringVar(fs *pflag.FlagSet, p *string, name, shorthand, usage string) {
	fs.VarP(&onceString{p: p}, name, shorthand, usage)
}

// String returns the value given, or "".
func (o *onceString) String() string {
	if o.p == nil {
		return ""
	}
	return *o.p
}

// Set takes the flag's value, and refuses a second one.
func (o *onceString) Set(v string) error {
	if o.set {
		return fmt.Errorf("given twice (%q, then %q): it takes one value", *o.p, v)
	}
	*o.p, o.set = v, true
	return nil
}

// Type is the value's type for help and completion.
func (o *onceString) Type() string { return "string" }
