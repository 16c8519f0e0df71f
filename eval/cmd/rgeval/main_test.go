package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestCommand(t *testing.T) {
	var out, errb bytes.Buffer
	code := command().Run(context.Background(), []string{"-strict", "-category", "normal_success"}, &out, &errb)
	assert.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "| **all** | 7 | 7/7 (100.0%)")
	assert.Contains(t, out.String(), "## Misbehaving variants", "the scripted command runs the misbehaving variants too")

	out.Reset()
	errb.Reset()
	code = command().Run(context.Background(), []string{"-model", "openai"}, &out, &errb)
	assert.Equal(t, 3, code)
	assert.Contains(t, errb.String(), "cd adapters/openai && go run ./cmd/rgeval -model openai", "the core command says where real models run")
}
