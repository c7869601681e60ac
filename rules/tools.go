package rules

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MaxToolName is the longest tool name panto accepts: the most both wire
// formats take (the Anthropic API allows 128 characters, OpenAI's 64).
const MaxToolName = 64

// ValidToolName reports whether name is 1 to max ASCII letters, digits,
// '_' or '-': the tool-name pattern the wire formats publish, each with its
// own max. Checked by hand: a regexp costs start-up time.
func ValidToolName(name string, max int) bool {
	if len(name) == 0 || len(name) > max {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// CheckTool checks one tool as an extension declares it, so that a tool a
// provider would refuse fails the extension's start instead of every
// request of the session: its name is 1 to MaxToolName letters, digits,
// _ or -, and its parameters, when set, are a JSON object schema with
// "type": "object" (which the Anthropic API requires; empty parameters
// mean {"type":"object"}).
func CheckTool(name string, parameters json.RawMessage) error {
	if !ValidToolName(name, MaxToolName) {
		return fmt.Errorf("the name must be 1 to %d letters, digits, _ or -", MaxToolName)
	}
	if len(parameters) == 0 {
		return nil
	}
	if !json.Valid(parameters) {
		return errors.New("the parameters are not valid JSON")
	}
	var schema map[string]json.RawMessage
	if err := json.Unmarshal(parameters, &schema); err != nil || !opensObject(parameters) {
		return errors.New(`the parameters are not a JSON object schema (want {"type":"object",...})`)
	}
	typ, ok := schema["type"]
	if !ok {
		return errors.New(`the parameters have no "type"; a tool's input schema must have "type": "object"`)
	}
	var s string
	if err := json.Unmarshal(typ, &s); err != nil || s != "object" {
		return fmt.Errorf(`the parameters have "type": %s; a tool's input schema must have "type": "object"`, typ)
	}
	return nil
}

// opensObject reports whether raw's first non-space byte opens a JSON
// object (null decodes into a map too).
func opensObject(raw []byte) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{':
			return true
		default:
			return false
		}
	}
	return false
}
