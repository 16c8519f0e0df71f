# Every Go module in the tree: the core, each adapter under adapters/ and each
# store under stores/ (not .mutate/, where make mutate keeps its reports)
MODULES := $(shell find . -name go.mod -not -path './.git/*' -not -path './.mutate/*' -exec dirname {} \; | sort)
GOLANGCI_LINT_VERSION := v2.15.0
GOBIN := $(shell go env GOPATH)/bin

.PHONY: test vet lint bench fuzz generate cover eval mutate mutate-diff gremlins

## test: go vet, race-enabled tests of every module, the generated-docs check,
## and make eval (the evaluation set with its misbehaving variants).
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
	@$(MAKE) --no-print-directory eval

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

## eval: the evaluation set (docs/evaluation.md) with its scripted models and
## its misbehaving variants; fails unless every case passes end to end and every
## variant is flagged exactly with the user protected (executions, statuses).
## Real models: cd adapters/openai && go run ./cmd/rgeval -model openai.
eval:
	@echo "== make eval"
	@out=$$(mktemp); trap 'rm -f $$out' EXIT; \
		go run ./eval/cmd/rgeval -strict -tasks > $$out || { cat $$out; exit 1; }; \
		grep -E '^\| \*\*all\*\*|flagged exactly|task cases passed' $$out

## cover: statement coverage per package of the core module.
cover:
	go test -count=1 -cover ./...

## mutate: mutation testing (gremlins) of whole packages, one at a time; slow
## (minutes to an hour a package on 2 cores), never run by CI. MUTATE_PKGS
## picks the packages; stores/postgres needs REACTGUARD_POSTGRES_DSN or a
## server on 127.0.0.1:5432; the stores' mutants run their tests with -short
## (the fault, failover and load runs skip). Prints killed, lived, not
## covered, timed out, not viable and the efficacy per package; reports and
## logs in .mutate/.
## docs/mutation.md lists the figures and the surviving mutants.
GREMLINS_VERSION := v0.6.0
MUTATE_PKGS ?= ./guard ./react ./evidence ./runstore ./stores/sqlite ./stores/postgres
MUTATE_BASE ?= main
mutate: gremlins
	GREMLINS=$(GOBIN)/gremlins .ci/mutate all $(MUTATE_PKGS)

## mutate-diff: mutation testing of the lines changed since MUTATE_BASE
## (default main) only, in every package they touch (or MUTATE_PKGS when
## set on the command line): the everyday check of a change.
mutate-diff: gremlins
	GREMLINS=$(GOBIN)/gremlins .ci/mutate diff $(MUTATE_BASE) $(if $(filter command line,$(origin MUTATE_PKGS)),$(MUTATE_PKGS))

gremlins:
	@go version -m $(GOBIN)/gremlins 2>/dev/null | grep -q 'mod.*github.com/go-gremlins/gremlins.*$(GREMLINS_VERSION)' || \
		go install github.com/go-gremlins/gremlins/cmd/gremlins@$(GREMLINS_VERSION)
