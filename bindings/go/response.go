package redisatomic

import (
	"encoding/binary"
	"math"
)

// Response is what an idempotent request's executor stores and every duplicate replays: status,
// selected headers and a binary-safe body, or a Reference to a body kept elsewhere. Encoded into
// one byte string the scripts store opaquely (`R1`, status u16, header count u16, per header
// name length u16 + name + value length u32 + value, a body kind byte, the body), the same bytes
// as the Rust library's, so every face replays every other's responses.
type Response struct {
	Status  uint16
	Headers []Header
	Body    []byte
	// Reference, when not "", stands for a body kept elsewhere (Body is then ignored).
	Reference string
}

// Header is one stored response header.
type Header struct {
	Name  string
	Value []byte
}

func (r *Response) encode() ([]byte, error) {
	if len(r.Headers) > math.MaxUint16 {
		return nil, wrap(ErrBadArgument, nil, "response has too many or too large headers")
	}
	out := append([]byte("R1"), 0, 0, 0, 0)
	binary.BigEndian.PutUint16(out[2:], r.Status)
	binary.BigEndian.PutUint16(out[4:], uint16(len(r.Headers)))
	for _, h := range r.Headers {
		if len(h.Name) > math.MaxUint16 || uint64(len(h.Value)) > math.MaxUint32 {
			return nil, wrap(ErrBadArgument, nil, "response has too many or too large headers")
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(h.Name)))
		out = append(out, h.Name...)
		out = binary.BigEndian.AppendUint32(out, uint32(len(h.Value)))
		out = append(out, h.Value...)
	}
	if r.Reference != "" {
		return append(append(out, 1), r.Reference...), nil
	}
	return append(append(out, 0), r.Body...), nil
}

// decodeResponse reads an encoded response (a malformed one is ErrBadReply: nothing a server
// sends may panic).
func decodeResponse(b []byte) (Response, error) {
	bad := func(what string) (Response, error) {
		return Response{}, wrap(ErrBadReply, nil, "idempotency record: stored response: %s", what)
	}
	if len(b) < 7 || string(b[:2]) != "R1" {
		return bad("not an R1 response")
	}
	r := Response{Status: binary.BigEndian.Uint16(b[2:])}
	count, pos := int(binary.BigEndian.Uint16(b[4:])), 6
	for range count {
		if pos+2 > len(b) {
			return bad("truncated")
		}
		n := int(binary.BigEndian.Uint16(b[pos:]))
		if pos+2+n+4 > len(b) {
			return bad("truncated")
		}
		name := string(b[pos+2 : pos+2+n])
		pos += 2 + n
		v := int(binary.BigEndian.Uint32(b[pos:]))
		if v < 0 || pos+4+v > len(b) {
			return bad("truncated")
		}
		r.Headers = append(r.Headers, Header{Name: name, Value: append([]byte(nil), b[pos+4:pos+4+v]...)})
		pos += 4 + v
	}
	if pos >= len(b) {
		return bad("no body kind")
	}
	switch b[pos] {
	case 0:
		r.Body = append([]byte{}, b[pos+1:]...)
	case 1:
		r.Reference = string(b[pos+1:])
		if r.Reference == "" {
			return bad("empty reference")
		}
	default:
		return bad("unknown body kind")
	}
	return r, nil
}
