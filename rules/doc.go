// Package rules holds the rules panto applies to what extensions and
// prompt files give it, written once so that panto (host/extension, the
// serializers, the CLI) and the SDK's test harness (sdk/sdktest) agree:
// strict {{variable}} rendering, the tool-name rule and the tool-schema
// check, the extension-name rule, the provider-key list (never rendered,
// never handed on) and the levels of a notice. The section rule lives
// with the prompt derivation it completes, in conversation (SectionKey,
// SectionUnchanged, OwnedSections).
//
// It is stdlib-only, below sdk, so that a plugin binary can carry it. What
// does not belong here: anything that does I/O, and anything specific to
// one wire format beyond the limits both share.
package rules
