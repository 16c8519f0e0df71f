# Every Go module in the tree: the core, each adapter under adapters/ and each
# store under stores/
MODULES := $(shell find . -name go.mod -not -path './.git/*' -exec dirname {} \; | sort)
GOLANGCI_LINT_VERSION := v2.15.0
GOBIN := $(shell go env GOPATH)/bin

.PHONY: test vet lint bench fuzz generate cover eval

## test: go vet, race-enabled tests of every module, and the generated-docs check.
## The stores/postgres tests need a server: REACTGUARD_POSTGRES_DSN, or one on
## 127.0.0.1:5432 (.ci/run starts one); without either they skip, and say so.
## The inbox/browser tests need Debian's chromium (.ci/run installs it); without
## it they skip with one line, and with CI=true they fail.
test: vet
	@if [ -z "$$REACTGUARD_POSTGRES_DSN" ] && ! bash -c 'exec 3<>/dev/tcp/127.0.0.1/5432' 2>/dev/null; then \
		echo "stores/postgres: tests skipped: no REACTGUARD_POSTGRES_DSN and no server on 127.0.0.1:5432 (run .ci/run, or set REACTGUARD_POSTGRES_DSN=postgres://user:pass@host:5432/db)"; \
	fi
	@if [ -z "$$CHROME_PATH" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1 && ! command -v google-chrome-stable >/dev/null 2>&1; then \
		if [ "$$CI" = true ]; then echo "inbox/browser: no Chromium, and CI=true requires the browser tests: they will fail (.ci/run installs it)"; \
		else echo "inbox/browser: browser tests skipped: no Chromium on this machine (apt-get install chromium, or set CHROME_PATH)"; fi; \
	fi
	@set -e; for m in $(MODULES); do \
		echo "== go test -race $$m"; \
		(cd $$m && go test -race -count=1 ./...); \
	done

vet:
	@set -e; for m in $(MODULES); do (cd $$m && go vet ./...); done

## generate: regenerate docs/errcodes.md and other generated files.
generate:
	go generate ./...

## lint: golangci-lint at a pinned version, installed from the Go module proxy.
lint:
	@test -x $(GOBIN)/golangci-lint && $(GOBIN)/golangci-lint version 2>/dev/null | grep -q $(GOLANGCI_LINT_VERSION:v%=%) || \
		go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	@set -e; for m in $(MODULES); do (cd $$m && $(GOBIN)/golangci-lint run ./...); done

## bench: every benchmark with allocation counts.
bench:
	go test -run '^$$' -bench . -benchmem ./...

## fuzz: each fuzz target for FUZZTIME (default 10s).
FUZZTIME ?= 10s
fuzz:
	@set -e; for pkg in $$(go list ./...); do \
		for f in $$(go test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; go test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

## eval: the evaluation set of seed 003 with its scripted models; fails unless every case passes end to end.
## Real models: cd adapters/openai && go run ./cmd/rgeval -model openai (see docs/evaluation.md).
eval:
	go run ./eval/cmd/rgeval -strict -tasks

## cover: statement coverage per package of the core module.
cover:
	go test -count=1 -cover ./...
