package react

import "testing"

// The FOLLOW_UP_UNGROUNDED rules, with the near misses that must not
// trigger them.
func TestUngrounded(t *testing.T) {
	write := followUpCtx{writeAtStake: true}
	readOnly := followUpCtx{}
	failed := followUpCtx{writeAtStake: true, writeFailed: true}
	user := []string{"Create a site called blog in space 7", "the blue theme"}
	tests := []struct {
		name string
		q    string
		c    followUpCtx
		want groundVerdict
		why  string
	}{
		// Rule 1: confirming a write.
		{"shall I", "Shall I create the site blog now?", write, groundConfirmsWrite, "a yes/no question about doing the write"},
		{"please confirm", "Please confirm that I should create the site.", write, groundConfirmsWrite, "confirm as a whole word"},
		{"do you want me to", "Do you want me to go on with the creation?", write, groundConfirmsWrite, "phrase marker"},
		{"approve", "Do you approve creating the site?", write, groundConfirmsWrite, "approve"},
		{"are you sure", "Are you sure?", write, groundConfirmsWrite, "phrase marker"},
		{"chinese confirm", "请确认是否创建站点 blog", write, groundConfirmsWrite, "确认 with no open question"},
		{"chinese ok", "现在创建站点可以吗？", write, groundConfirmsWrite, "可以吗"},
		// Near misses of rule 1.
		{"info question", "Which space should the site go in?", write, grounded, "no confirmation marker that is not part of an open question"},
		{"confirm which", "Can you confirm which space ID you mean?", write, grounded, "an open question word makes it a request for information"},
		{"choice", "Should I use the staging space or production?", write, grounded, "a choice (or) asks for information"},
		{"confirmation number", "What is your booking confirmation number?", write, grounded, "confirmation is not the word confirm, and what is open"},
		{"approver", "Who is the approver for this space?", write, grounded, "approver is not approve"},
		{"how to proceed", "How would you like to proceed?", write, grounded, "how is open"},
		{"read-only node", "Do you want me to proceed?", readOnly, grounded, "no write is at stake"},
		{"after failed write", "Creating the site failed. Do you want me to retry?", failed, grounded, "NEXT_APPROVED_FAILED asks exactly this"},
		{"chinese which", "请问站点放在哪个空间？", write, grounded, "哪 is open"},
		{"chinese choice", "用蓝色还是绿色主题？确认一下", write, grounded, "还是 is a choice"},
		// Rule 2: echoing the user.
		{"echo exact", "Create a site called blog in space 7?", readOnly, groundEchoesUser, "the same words, punctuation aside"},
		{"echo case", "CREATE A SITE CALLED BLOG IN SPACE 7", readOnly, groundEchoesUser, "case ignored"},
		{"echo answer", "The blue theme?", readOnly, groundEchoesUser, "an earlier answer repeated"},
		{"echo wrapped", "So: create a site called blog in space 7?", readOnly, groundEchoesUser, "the user's words make up at least 80%"},
		// Near misses of rule 2.
		{"quotes part", "What domain should the site called blog use?", readOnly, grounded, "repeats a phrase inside a real question"},
		{"short part", "Blue?", readOnly, grounded, "shorter than 80% of the user's text"},
		{"empty after normalization", "???", readOnly, grounded, "nothing to compare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ungrounded(tt.q, user, tt.c); got != tt.want {
				t.Errorf("ungrounded(%q, %+v) = %d; want %d (%s)", tt.q, tt.c, got, tt.want, tt.why)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{
		"Which theme, please?": "whichthemeplease",
		"请确认：创建站点 blog！":       "请确认创建站点blog",
		"  ":                   "",
	} {
		if got := normalize(in); got != want {
			t.Errorf("normalize(%q) = %q; want %q", in, got, want)
		}
	}
}

// A question echoes the user when it is their words, or a part of them of
// at least echoMinRune runes making up at least echoRatio of the longer
// text: both bounds included.
func TestEchoes_Bounds(t *testing.T) {
	tests := []struct {
		q    string
		user string
		want bool
		why  string
	}{
		{"Abcd?", "abcde", true, "4 runes, 4/5 = 0.8 of the user's text: both bounds met exactly"},
		{"abc", "abcd", false, "3 runes: under echoMinRune"},
		{"abcd", "abcdef", false, "4/6 is under echoRatio"},
		{"abcde", "abcd", true, "the user's text inside the question, same bounds"},
		{"bcda", "abcde", false, "not contained"},
		{"ABCDE", "a-b-c-d-e", true, "the same words once normalized"},
	}
	for _, tt := range tests {
		if got := echoes(tt.q, []string{tt.user}); got != tt.want {
			t.Errorf("echoes(%q, %q) = %v; want %v (%s)", tt.q, tt.user, got, tt.want, tt.why)
		}
	}
}
