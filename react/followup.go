package react

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// groundVerdict is what the FOLLOW_UP_UNGROUNDED rules decided.
type groundVerdict uint8

const (
	grounded            groundVerdict = iota // a real question: the run suspends
	groundConfirmsWrite                      // rule 1: asks to confirm a write
	groundEchoesUser                         // rule 2: repeats the user's words
)

// followUpCtx is what the rules need to know about the run.
type followUpCtx struct {
	// writeAtStake: the node can see a write tool, or a write call of the
	// run waits for approval.
	writeAtStake bool
	// writeFailed: the latest executed write of the run FAILED, so asking
	// the user how to go on (retry included) is what NEXT_APPROVED_FAILED
	// asks for.
	writeFailed bool
}

func (r *run) followUpContext(gated bool) followUpCtx {
	return followUpCtx{writeAtStake: r.seesWrite || gated, writeFailed: r.writeFailed}
}

// Confirmation markers: English single words (matched as whole words) and
// phrases (matched as whole-word sequences), Chinese substrings.
var (
	confirmWords   = []string{"confirm", "approve", "proceed"}
	confirmPhrases = [][]string{
		{"are", "you", "sure"}, {"shall", "i"}, {"should", "i"},
		{"do", "you", "want", "me", "to"}, {"would", "you", "like", "me", "to"},
		{"go", "ahead"}, {"ok", "to"}, {"okay", "to"},
		{"is", "that", "ok"}, {"is", "this", "ok"}, {"is", "that", "okay"}, {"is", "this", "okay"},
		{"do", "you", "agree"}, {"your", "approval"}, {"your", "permission"}, {"your", "consent"},
	}
	confirmZH = []string{"确认", "批准", "同意", "允许", "是否继续", "要不要", "是否要", "可以吗", "好吗", "行吗"}

	openWords = []string{"what", "which", "who", "whom", "whose", "where", "when", "how", "why", "or"}
	openZH    = []string{"什么", "哪", "谁", "几", "多少", "怎么", "怎样", "如何", "为什么", "还是"}
)

// echoRatio is the share of the longer text the shorter one must make up
// for a containment to count as an echo (rule 2).
const (
	echoRatio   = 0.8
	echoMinRune = 4
)

// ungrounded applies the FOLLOW_UP_UNGROUNDED rules (see the package
// documentation) to question q.
func ungrounded(q string, userTexts []string, c followUpCtx) groundVerdict {
	if c.writeAtStake && !c.writeFailed && confirms(q) && !asksOpen(q) {
		return groundConfirmsWrite
	}
	if echoes(q, userTexts) {
		return groundEchoesUser
	}
	return grounded
}

// words splits s, lower-cased, into runs of letters and digits. Han
// characters are letters, so a Chinese sentence without spaces is one
// word; Chinese markers are therefore matched as substrings instead.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

func hasWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

func hasPhrase(ws []string, p []string) bool {
	for i := 0; i+len(p) <= len(ws); i++ {
		match := true
		for j, w := range p {
			if ws[i+j] != w {
				match = false
				break
			}
		}
		if match {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// confirms reports whether q contains a confirmation marker.
func confirms(q string) bool {
	ws := words(q)
	for _, w := range confirmWords {
		if hasWord(ws, w) {
			return true
		}
	}
	for _, p := range confirmPhrases {
		if hasPhrase(ws, p) {
			return true
		}
	}
	return containsAny(q, confirmZH)
}

// asksOpen reports whether q contains an open-question or choice marker.
func asksOpen(q string) bool {
	ws := words(q)
	for _, w := range openWords {
		if hasWord(ws, w) {
			return true
		}
	}
	return containsAny(q, openZH)
}

// normalize keeps the letters and digits of s, lower-cased: the form in
// which questions and the user's words are compared.
func normalize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsNumber(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// echoes reports whether q repeats one of the user's texts (rule 2).
func echoes(q string, userTexts []string) bool {
	nq := normalize(q)
	if nq == "" {
		return false
	}
	for _, u := range userTexts {
		nu := normalize(u)
		if nu == "" {
			continue
		}
		if nu == nq {
			return true
		}
		short, long := nq, nu
		if utf8.RuneCountInString(short) > utf8.RuneCountInString(long) {
			short, long = long, short
		}
		ns, nl := utf8.RuneCountInString(short), utf8.RuneCountInString(long)
		if ns >= echoMinRune && float64(ns) >= echoRatio*float64(nl) && strings.Contains(long, short) {
			return true
		}
	}
	return false
}
