package protocol

import (
	"context"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/panto-dev/panto/conversation"
)

// Every string of the protocol is valid UTF-8: proto3 refuses to marshal
// one that is not, and the call then fails as if the other end had
// broken. Text is made valid where bytes become text (the tools make
// their output valid, panto refuses prompt files that are not UTF-8 and
// repairs what it reads from stdin); as the last line, both ends repair
// every string field of every message they send, replacing each invalid
// byte sequence with U+FFFD, so that no text can make a call fail.

// repairUTF8 replaces invalid UTF-8 in every string field of m, nested
// messages, lists and maps included. It reports whether it changed
// anything.
func repairUTF8(m protoreflect.Message) bool {
	changed := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap():
			if repairMap(fd, v.Map()) {
				changed = true
			}
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				switch fd.Kind() {
				case protoreflect.StringKind:
					if s := l.Get(i).String(); !utf8.ValidString(s) {
						l.Set(i, protoreflect.ValueOfString(conversation.ValidText(s)))
						changed = true
					}
				case protoreflect.MessageKind, protoreflect.GroupKind:
					if repairUTF8(l.Get(i).Message()) {
						changed = true
					}
				}
			}
		case fd.Kind() == protoreflect.StringKind:
			if s := v.String(); !utf8.ValidString(s) {
				m.Set(fd, protoreflect.ValueOfString(conversation.ValidText(s)))
				changed = true
			}
		case fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind:
			if repairUTF8(v.Message()) {
				changed = true
			}
		}
		return true
	})
	return changed
}

func repairMap(fd protoreflect.FieldDescriptor, mp protoreflect.Map) bool {
	changed := false
	stringKeys := fd.MapKey().Kind() == protoreflect.StringKind
	val := fd.MapValue().Kind()
	type fix struct {
		old protoreflect.MapKey
		key string
		v   protoreflect.Value
	}
	var fixes []fix
	mp.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		badKey := stringKeys && !utf8.ValidString(k.String())
		switch {
		case val == protoreflect.StringKind && !utf8.ValidString(v.String()):
			v = protoreflect.ValueOfString(conversation.ValidText(v.String()))
			if !badKey {
				mp.Set(k, v)
			}
			changed = true
		case val == protoreflect.MessageKind:
			if repairUTF8(v.Message()) {
				changed = true
			}
		}
		if badKey {
			fixes = append(fixes, fix{k, conversation.ValidText(k.String()), v})
		}
		return true
	})
	for _, f := range fixes {
		mp.Clear(f.old)
		mp.Set(protoreflect.ValueOfString(f.key).MapKey(), f.v)
		changed = true
	}
	return changed
}

// repair makes v's strings valid if v is a protobuf message.
func repair(v any) {
	if m, ok := v.(proto.Message); ok && m != nil {
		repairUTF8(m.ProtoReflect())
	}
}

// repairClient repairs each request before it is marshalled.
func repairClient(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	repair(req)
	return invoker(ctx, method, req, reply, cc, opts...)
}

// repairServer repairs each response before it is marshalled.
func repairServer(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if err == nil {
		repair(resp)
	}
	return resp, err
}
