# panto — build, test and check. `make` alone builds and tests.
#
#   make build   binaries into bin/ (first-party extensions into bin/extensions/)
#   make install panto into $(PREFIX)/bin, the first-party extensions into
#                $(PANTO_HOME)/agent/extensions (loaded by default)
#   make test    go test -race ./...
#   make lint    gofmt check, go vet, staticcheck (pinned)
#   make bench   the benchmarks (BENCHCOUNT runs each, for medians)
#   make fuzz    a short run of every fuzz target (FUZZTIME each: a count
#                of executions such as 20000x, or a duration such as 30s)
#   make demo    panto's main job, offline (echo provider, no key)
#   make proto   regenerate internal/pb from sdk/extension.proto (needs protoc:
#                apt-get install protobuf-compiler)

GO          ?= go
BIN         := bin
PREFIX      ?= $(HOME)/.local
PANTO_HOME  ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/panto
# First-party extensions that make install puts in the base layer.
EXTENSIONS  := tools env context mcp web
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# A count, not a duration: with a duration Go 1.26's fuzz coordinator can
# fail a clean run with "context deadline exceeded" as the time runs out
# (golang/go#75804, fixed in Go 1.27). A count never arms that deadline.
FUZZTIME    ?= 20000x
BENCHCOUNT  ?= 5
BENCH       ?= .
# What panto version says: the commit (and tag) it was built from, stamped
# into main.version (a plain go build says dev).
VERSION     ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS     := -X main.version=$(VERSION)

.PHONY: all build install test lint bench fuzz demo proto clean

all: build test

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(BIN)/ ./cmd/... ./examples/plugins/...
	@mkdir -p $(BIN)/extensions
	$(GO) build -o $(BIN)/extensions/ ./extensions/...

install: build
	install -d $(PREFIX)/bin $(PANTO_HOME)/agent/extensions
	install -m 0755 $(BIN)/panto $(PREFIX)/bin/panto
	for x in $(EXTENSIONS); do install -m 0755 $(BIN)/extensions/$$x $(PANTO_HOME)/agent/extensions/$$x; done
	@echo "installed $(PREFIX)/bin/panto and $(EXTENSIONS) in $(PANTO_HOME)/agent/extensions"

test:
	$(GO) test -race -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench:
	$(GO) test -run='^$$' -bench='$(BENCH)' -benchmem -count=$(BENCHCOUNT) ./...

# Every Fuzz* function of every package, one after another.
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== fuzz $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg; \
	  done; \
	done

demo: build
	@./scripts/demo.sh

proto:
	$(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
	$(GO) install google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
	PATH="$$($(GO) env GOPATH)/bin:$$PATH" protoc --go_out=. --go_opt=module=github.com/panto-dev/panto \
	  --go-grpc_out=. --go-grpc_opt=module=github.com/panto-dev/panto sdk/extension.proto

clean:
	rm -rf $(BIN)
