// Package wirespec holds the providers' published OpenAPI documents, for
// the serializer tests that check panto's requests against them: the
// gzipped JSON in testdata/ (see testdata/README.md for where and when
// each was taken, and how to refresh it), compiled in with go:embed so
// that no test can fail to find them.
//
// Only tests import it; nothing panto ships does. What does not belong
// here: compiling or adapting a schema (each test package does what its
// validator needs).
package wirespec

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
)

//go:embed testdata/*.json.gz
var files embed.FS

// Anthropic and OpenAI name the two documents.
const (
	Anthropic = "anthropic-openapi.json"
	OpenAI    = "openai-openapi.json"
)

// Docs maps each document's name to the sha256 of its JSON, as
// testdata/README.md records it.
var Docs = map[string]string{
	Anthropic: "b53f82a0caa6daa36dfacb2446bf181b9d1076ae95004a81292a92a52ada1145",
	OpenAI:    "bdc6c6db118f0ece8ecaed2148b736a91a230ca58074c4d9c5787adf5b010f84",
}

// JSON returns the document name (Anthropic or OpenAI) as JSON,
// decompressed and checked against its recorded sha256.
func JSON(name string) ([]byte, error) {
	want, ok := Docs[name]
	if !ok {
		return nil, fmt.Errorf("wire spec %s: not one of the documents in testdata/", name)
	}
	path := "testdata/" + name + ".gz"
	gz, err := files.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("wire spec %s: %w", path, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("wire spec %s: %w", path, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("wire spec %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != want {
		return nil, fmt.Errorf("wire spec %s: sha256 %s, want %s as testdata/README.md records; refresh both together", path, got, want)
	}
	return data, nil
}
