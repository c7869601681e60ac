// Package pb is the generated code of the extension protocol,
// sdk/extension.proto (make proto regenerates it). Only sdk and
// host/extension, through internal/protocol, use it; what an extension
// author sees is the sdk package, or the .proto itself from another
// language.
package pb
