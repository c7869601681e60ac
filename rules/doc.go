// Package rules holds the rules panto applies to what extensions and
// prompt files give it, written once so that panto (host/extension, the
// serializers, the CLI) and the SDK's test harness (sdk/sdktest) agree:
// strict {{variable}} rendering, the tool-name rule and the tool-schema
// check.
//
// It is stdlib-only, below sdk, so that a plugin binary can carry it. What
// does not belong here: anything that does I/O, and anything specific to
// one wire format beyond the limits both share.
package rules
