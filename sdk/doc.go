// Package sdk is the only package an extension author imports: the
// interfaces an extension implements, the request and response structs of
// each hook, the Host an extension calls back, and Serve. It carries the
// published gRPC protocol (.proto) so extensions can be written in any
// language.
//
// It never imports host, sessionlog or serializers, so a plugin binary
// carries only what it needs.
package sdk
