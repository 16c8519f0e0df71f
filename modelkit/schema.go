package modelkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/fnv"
	"strconv"
)

// SchemaObject splits a tool's JSON Schema into its top-level members,
// each kept as raw JSON so that numbers and key order inside survive
// exactly. An empty schema (only spaces) gives nil, nil: a tool without
// parameters. A schema that does not parse, is not an object, or has
// data after the object is an error.
func SchemaObject(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var members map[string]json.RawMessage
	if err := dec.Decode(&members); err != nil {
		return nil, err
	}
	if members == nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	return members, nil
}

// emptyObject stands in for arguments that are not a JSON object.
var emptyObject = json.RawMessage(`{}`)

// ObjectArgs returns a call's arguments for an API that takes them back
// as a JSON object (Anthropic, Gemini, Bedrock): the arguments, trimmed,
// when they are one, else {}. Those APIs produce only objects, so
// anything else came from elsewhere (a cut-off turn, a history recorded
// with another model), and the tool result paired with the call already
// says what went wrong.
func ObjectArgs(args json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(args)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return emptyObject
	}
	return trimmed
}

// CallIDs gives every call of a turn an id: a call without one, or with
// an id already used in the turn, gets "call_<base>_<i>" (i its index;
// "_<n>" added until unused), so that its result can be paired with it.
// base should identify the response (its id, or [HashID] of its body).
// ids is modified in place; the ids the API sent are kept otherwise.
func CallIDs(ids []string, base string) {
	seen := make(map[string]bool, len(ids))
	for i, id := range ids {
		if id == "" || seen[id] {
			b := "call_" + base + "_" + strconv.Itoa(i)
			id = b
			for n := 1; seen[id]; n++ {
				id = b + "_" + strconv.Itoa(n)
			}
			ids[i] = id
		}
		seen[id] = true
	}
}

// HashID is a short deterministic id of body, for [CallIDs] when the
// response has no id of its own.
func HashID(body []byte) string {
	h := fnv.New64a()
	h.Write(body)
	return strconv.FormatUint(h.Sum64(), 36)
}
