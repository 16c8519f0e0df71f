package react

import (
	"strconv"
)

// EventKind says what an [Event] reports. The kinds are one vocabulary
// for everything that happens in a run: an [Observer] receives them, and
// so does the host that iterates over [Loop.RunStream] or
// [Loop.ResumeStream]. The numeric values are not stable across versions;
// the names ([EventKind.String]) are.
type EventKind uint8

// The kinds of [Event], in the order a run produces them. Each names the
// field of Event that carries its details.
const (
	// EventRunStart: a call of Run or Resume starts driving a run
	// (Event.RunStart). It comes before anything else of the call. The
	// context an observer returns for it is the context of the whole
	// call.
	EventRunStart EventKind = iota + 1
	// EventModelStart: a model call is about to be made
	// (Event.ModelStart). The context an observer returns is the context
	// of the model call and of its EventModelEnd.
	EventModelStart
	// EventTextDelta: a fragment of the model's text, in order
	// (Event.Text). A model that does not stream gives its whole text as
	// one delta; a turn without text gives none.
	EventTextDelta
	// EventCallDelta: a fragment of a tool call the model is writing
	// (Event.Call). A fragment is never executed: the loop checks and
	// runs a call only once the model's turn is complete. A model that
	// does not stream gives each call as one delta.
	EventCallDelta
	// EventModelEnd: the model call returned (Event.ModelEnd), with its
	// assembled response or its error.
	EventModelEnd
	// EventToolStart: a tool call is about to be checked and dispatched
	// (Event.ToolStart): the call started. The context an observer
	// returns is the context of the guard chain and the tool, and of its
	// EventToolEnd. The calls of a batch of parallel reads
	// (Node.ParallelReads) start and end on the goroutines that run them,
	// concurrently; a stream receives their events in call order once
	// the batch returned.
	EventToolStart
	// EventToolEnd: the call's verdict is known, or the call was
	// interrupted (Event.ToolEnd).
	EventToolEnd
	// EventToolInvoked: the verdict of one tool call, built-in calls
	// included (Event.Tool): outcome, code and the three layers, in call
	// order.
	EventToolInvoked
	// EventToolSkipped: a call that was not run, or whose result was
	// discarded, because an earlier call of its turn did not succeed
	// (REASON_SKIPPED) or exited the node (REASON_SKIPPED_EXITED)
	// (Event.Tool, without a verdict).
	EventToolSkipped
	// EventNoToolCalls: a model turn without a tool call.
	EventNoToolCalls
	// EventStall: one no-progress counted (Event.Stall).
	EventStall
	// EventStallReset: the no-progress counter went back to 0 after a
	// SUCCESS, when it was above 0 (Event.Stall).
	EventStallReset
	// EventRoundEnd: every call of the round's turn was answered (or the
	// turn had none); the next event is the next round's EventModelStart
	// or the end of the run. A round that suspends ends on resume.
	EventRoundEnd
	// EventSuspended: the run suspends for approval or a follow-up
	// (Event.Suspend: what the person must decide).
	EventSuspended
	// EventFinished: the run finished (Event.End).
	EventFinished
	// EventFailed: the run failed (Event.End, with its Failure).
	EventFailed
	// EventRunEnd: the call of Run or Resume returns (Event.RunEnd, with
	// its Result and error). It is the last event of a call.
	EventRunEnd

	minEventKind = EventRunStart
	maxEventKind = EventRunEnd
)

var eventKindNames = [...]string{
	EventRunStart:    "run_start",
	EventModelStart:  "model_start",
	EventTextDelta:   "text_delta",
	EventCallDelta:   "call_delta",
	EventModelEnd:    "model_end",
	EventToolStart:   "tool_start",
	EventToolEnd:     "tool_end",
	EventToolInvoked: "tool_invoked",
	EventToolSkipped: "tool_skipped",
	EventNoToolCalls: "no_tool_calls",
	EventStall:       "stall",
	EventStallReset:  "stall_reset",
	EventRoundEnd:    "round_end",
	EventSuspended:   "suspended",
	EventFinished:    "finished",
	EventFailed:      "failed",
	EventRunEnd:      "run_end",
}

// String returns the kind's stable name ("text_delta"), or "EventKind(n)"
// for a value outside the defined set.
func (k EventKind) String() string {
	if k < minEventKind || k > maxEventKind {
		return "EventKind(" + strconv.Itoa(int(k)) + ")"
	}
	return eventKindNames[k]
}

// starts reports the kinds whose observer may return the context of the
// work they start.
func (k EventKind) starts() bool {
	return k == EventRunStart || k == EventModelStart || k == EventToolStart
}

// ends reports the kinds that end what a starting kind started: observers
// receive them in reverse order (see [Observers]).
func (k EventKind) ends() bool {
	return k == EventRunEnd || k == EventModelEnd || k == EventToolEnd
}

// EventSet is a set of [EventKind]s. The zero value is empty.
type EventSet uint32

// AllEvents holds every kind.
const AllEvents EventSet = (1<<(maxEventKind+1) - 1) &^ 1

// Events returns the set of kinds.
func Events(kinds ...EventKind) EventSet {
	var s EventSet
	for _, k := range kinds {
		if k >= minEventKind && k <= maxEventKind {
			s |= 1 << k
		}
	}
	return s
}

// Has reports whether k is in s.
func (s EventSet) Has(k EventKind) bool { return k <= maxEventKind && s&(1<<k) != 0 }

// Event is one thing that happened in a run: its Kind, where it happened
// (Run, Node, Round) and the details of its kind, in the one field the
// kind names (every other pointer is nil). An Event is a value: copying
// it is cheap, and a text delta carries no pointer. The details are
// shared by every observer and the stream: never change them (a few
// fields say they must not be kept either, such as
// [ModelStartEvent].Request).
//
// Round is the round the event belongs to: for the events of a model
// call (EventModelStart, the deltas, EventModelEnd), the round its answer
// opens.
type Event struct {
	// Kind says what happened and which field below holds the details.
	Kind EventKind
	RoundEvent

	// Text is the text fragment of an EventTextDelta.
	Text string
	// Call is the tool-call fragment of an EventCallDelta.
	Call *CallDelta

	// RunStart details EventRunStart.
	RunStart *RunStartEvent
	// ModelStart details EventModelStart.
	ModelStart *ModelStartEvent
	// ModelEnd details EventModelEnd.
	ModelEnd *ModelEndEvent
	// ToolStart details EventToolStart.
	ToolStart *ToolStartEvent
	// ToolEnd details EventToolEnd.
	ToolEnd *ToolEndEvent
	// Tool details EventToolInvoked and EventToolSkipped.
	Tool *ToolEvent
	// Stall details EventStall and EventStallReset.
	Stall *StallEvent
	// Suspend details EventSuspended.
	Suspend *SuspendEvent
	// End details EventFinished and EventFailed.
	End *EndEvent
	// RunEnd details EventRunEnd.
	RunEnd *RunEndEvent
}

// CallDelta is a fragment of a tool call while the model writes it (see
// [EventCallDelta] and [Chunk]).
type CallDelta struct {
	// Index is the call's position in the turn, from 0.
	Index int
	// ID and Name are the call's id and tool name; the model may send
	// them with the first fragment only ("" in the later ones).
	ID   string
	Name string
	// Args is the fragment of the arguments' JSON text: the call's
	// arguments are the concatenation of its fragments, in order.
	Args string
}
