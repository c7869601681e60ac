package wirespec_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/panto-dev/panto/serializers/internal/wirespec"
)

// Both documents are there, whole (their recorded sha256), and are the
// OpenAPI 3.1 documents whose request schemas the serializer tests
// compile.
func TestDocumentsArePresentAndWhole(t *testing.T) {
	t.Parallel()
	for name, schema := range map[string]string{
		wirespec.Anthropic: "CreateMessageParams",
		wirespec.OpenAI:    "CreateChatCompletionRequest",
	} {
		data, err := wirespec.JSON(name)
		require.NoError(t, err, name)
		var doc struct {
			OpenAPI    string `json:"openapi"`
			Components struct {
				Schemas map[string]json.RawMessage `json:"schemas"`
			} `json:"components"`
		}
		require.NoError(t, json.Unmarshal(data, &doc), name)
		require.Equal(t, "3.1.0", doc.OpenAPI, name)
		require.Contains(t, doc.Components.Schemas, schema, name)
	}
	_, err := wirespec.JSON("gemini-openapi.json")
	require.ErrorContains(t, err, "not one of the documents")
}
