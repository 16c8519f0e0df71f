package prompt

import (
	"fmt"
	"strconv"
)

// Lang selects a catalog. The zero value is invalid; [For] maps it to
// [English].
type Lang uint8

// The languages with a catalog.
const (
	English Lang = 1 // the default
	Chinese Lang = 2 // the specification's wording

	minLang = English
	maxLang = Chinese
)

// String returns the BCP 47 tag: en or zh.
func (l Lang) String() string {
	switch l {
	case English:
		return "en"
	case Chinese:
		return "zh"
	}
	return "lang(" + strconv.Itoa(int(l)) + ")"
}

// IsValid reports whether l has a catalog.
func (l Lang) IsValid() bool { return l >= minLang && l <= maxLang }

// MarshalText implements [encoding.TextMarshaler].
func (l Lang) MarshalText() ([]byte, error) {
	if !l.IsValid() {
		return nil, fmt.Errorf("prompt: cannot marshal invalid language %d", uint8(l))
	}
	return []byte(l.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]: en or zh; anything
// else is an error and l is left unchanged.
func (l *Lang) UnmarshalText(text []byte) error {
	switch string(text) {
	case "en":
		*l = English
	case "zh":
		*l = Chinese
	default:
		return fmt.Errorf("prompt: unknown language %q (want en or zh)", text)
	}
	return nil
}
